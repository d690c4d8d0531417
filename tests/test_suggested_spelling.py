"""A key nobody knows is answered with the nearest known key spelled as the file writes keys (issue 27):
`num_experts_per_tok` in a config.json, not the reader's `hf.num_experts_per_tok`; VeOmni's
`config.json:` prefix; Megatron's `--num-layers`; the Cerebras trainer layout's full path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neoconv.api import translate
from neoconv.services.validate_file import validate_file

from conftest import FIXTURES

INPUTS = FIXTURES / "inputs"
MIXTRAL = {
    "model_type": "mixtral",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 100,
    "num_experts_per_toks": 2,
}


def _only(problems: list) -> str:
    assert len(problems) == 1, problems
    return str(problems[0].message)


def test_validate_suggests_a_config_json_key_as_the_file_writes_it(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(MIXTRAL))
    assert (
        _only(validate_file(str(path)).problems) == "not a HF config.json parameter; did you mean num_experts_per_tok?"
    )


def test_the_report_suggests_it_the_same_way(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(MIXTRAL))
    entry = translate([str(path)], "hf", "megatron").report.by_source()["num_experts_per_toks"]
    assert entry.status.value == "unknown" and entry.detail.endswith("did you mean num_experts_per_tok?")


def test_veomni_s_config_json_keeps_its_prefix(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    config = json.loads((INPUTS / "veomni" / "tinyllama" / "config.json").read_text())
    config["num_hidden_layerz"] = 3
    (tmp_path / "model" / "config.json").write_text(json.dumps(config))
    run = tmp_path / "run.yaml"
    run.write_text("model:\n  config_path: model\ndata:\n  train_path: x\ntrain:\n  global_batch_size: 8\n")
    assert _only(validate_file(str(run)).problems).endswith("did you mean config.json:num_hidden_layers?")


def test_a_megatron_option_is_suggested_as_an_option(tmp_path: Path) -> None:
    path = tmp_path / "run.args"
    path.write_text("--num-layerz 2\n--hidden-size 64\n")
    assert _only(validate_file(str(path), fmt="megatron").problems).endswith("did you mean --num-layers?")


def test_the_cerebras_trainer_layout_is_suggested_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(
        (INPUTS / "cerebras" / "llama-1b-trainer.yaml").read_text().replace("hidden_size:", "hidden_sise:", 1)
    )
    # (hidden_size then has its default, whose head size a rotary_dim of 64 exceeds: a second, true problem)
    problems = [p for p in validate_file(str(path)).problems if p.key == "trainer.init.model.hidden_sise"]
    assert _only(problems).endswith("did you mean trainer.init.model.hidden_size?")


@pytest.mark.parametrize("text", ["num_layerz: 2\n", "num-layerz: 2\n"])
def test_a_neox_key_keeps_the_reader_s_spelling_both_spellings_load(text: str, tmp_path: Path) -> None:
    path = tmp_path / "model.yml"
    path.write_text("hidden_size: 64\nnum_attention_heads: 4\n" + text)
    assert _only(validate_file(str(path), fmt="neox").problems).endswith("did you mean num_layers?")
