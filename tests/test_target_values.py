"""`--set DST:KEY=VALUE` for keys only the target has, and `# MISSING:` lines for what is left
(issue 18)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from neoconv import translate
from neoconv.cli import main
from neoconv.core.errors import UsageError

from conftest import FIXTURES

TINY = "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\n"


def test_a_target_key_is_written_and_its_missing_entry_goes(runner, pythia160m: Path, tmp_path: Path) -> None:
    out, report = tmp_path / "out.yaml", tmp_path / "r.json"
    result = runner.invoke(
        main,
        [
            "neox2cerebras",
            str(pythia160m),
            "--world-size",
            "8",
            "-o",
            str(out),
            "--report",
            str(report),
            "--set",
            "cerebras:train_input.data_dir=./data",
            "--set",
            "model.vocab_size=50304",
        ],
    )
    assert result.exit_code == 0, result.stderr
    config = yaml.safe_load(out.read_text())
    assert config["train_input"]["data_dir"] == "./data" and config["model"]["vocab_size"] == 50304
    entries = json.loads(report.read_text())["entries"]
    missing = [e["target_key"] for e in entries if e["status"] == "missing"]
    assert missing == ["train_input.data_processor"]  # data_dir given, vocab_size given
    given = [e for e in entries if e["source_key"] == "--set cerebras:train_input.data_dir"]
    assert given and given[0]["status"] == "exact" and given[0]["target_key"] == "train_input.data_dir"


def test_trainer_layout_and_veomni_keys(pythia160m: Path) -> None:
    result = translate(
        pythia160m, "neox", "cerebras", layout="trainer", target_values={"trainer.fit.train_dataloader.data_dir": "./d"}
    )
    assert result.config["trainer"]["fit"]["train_dataloader"]["data_dir"] == "./d"
    assert "trainer.fit.train_dataloader.data_dir" not in [
        e.target_key for e in result.report.entries if e.status.value == "missing"
    ]
    result = translate(pythia160m, "neox", "veomni", target_values={"data.train_path": "/data/train"})
    assert result.config["data"]["train_path"] == "/data/train"


def test_trainer_layout_names_its_own_paths_for_what_is_missing(runner, tmp_path: Path) -> None:
    """A key neoconv could not write is named where the trainer layout keeps it, never by its legacy
    path (which the user never wrote), in the report and in the file's MISSING lines."""
    source = tmp_path / "tiny.yml"
    source.write_text(TINY + "optimizer:\n  type: Adam\n  params:\n    lr: 0.0006\n")
    result = translate(source, "neox", "cerebras", layout="trainer")
    missing = sorted(e.target_key for e in result.report.entries if e.status.value == "missing")
    assert missing == [
        "trainer.fit.train_dataloader.batch_size",
        "trainer.fit.train_dataloader.data_dir",
        "trainer.fit.train_dataloader.data_processor",
        "trainer.init.loop.max_steps",
        "trainer.init.model.max_position_embeddings",
        "trainer.init.model.vocab_size",
    ]
    seed = next(e for e in result.report.entries if e.status.value == "defaulted" and "train.seed" in e.fields)
    assert seed.target_key == "trainer.init.seed" and seed.detail.endswith("wrote trainer.init.seed=1234")
    out = tmp_path / "out.yaml"
    assert runner.invoke(main, ["neox2cerebras", str(source), "--layout", "trainer", "-o", str(out)]).exit_code == 0
    marks = [line.strip() for line in out.read_text().splitlines() if "MISSING" in line]
    assert "# MISSING: data_dir — give --set cerebras:trainer.fit.train_dataloader.data_dir=VALUE" in marks
    assert not [m for m in marks if "train_input" in m]


@pytest.mark.parametrize(
    "value, message",
    [
        ("veomni:data.train_path=x", "this translation writes cerebras: give cerebras:KEY=VALUE"),
        (
            "cerebras:train_input.data_dri=x",
            "not a Cerebras Model Zoo YAML key (legacy layout); did you mean train_input.data_dir?",
        ),
        (
            "cerebras:model.hidden_size=5",
            "written from canonical field model.hidden_size: give --set model.hidden_size=VALUE",
        ),
        ("cerebras:train_input.shuffle=maybe", "expected boolean, got string"),
        ("cerebras:train_input.data_dir=", "no value after '='"),
        ("cerebras:=5", "expected cerebras:KEY=VALUE"),
    ],
)
def test_a_bad_target_key_is_a_usage_error_before_anything_is_read(
    runner, tmp_path: Path, value: str, message: str
) -> None:
    result = runner.invoke(main, ["neox2cerebras", str(tmp_path / "absent.yml"), "--set", value])
    assert result.exit_code == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_missing_values_are_marked_in_a_yaml_output_where_they_belong(pythia160m: Path) -> None:
    result = translate(pythia160m, "neox", "cerebras", world_size=8)
    text = result.dump()
    assert yaml.safe_load(text) == result.config  # comments only
    lines = text.splitlines()
    data = lines.index("  # MISSING: data_dir — give --set cerebras:train_input.data_dir=VALUE")
    assert lines[data - 2 : data] == [
        "train_input:",
        "  # MISSING: data_processor — give --set cerebras:train_input.data_processor=VALUE",
    ]
    assert lines[lines.index("model:") + 1] == "  # MISSING: vocab_size — give --set model.vocab_size=N"
    assert result.report.target["missing_marked"] is True


def test_json_outputs_cannot_hold_comments_and_the_report_says_so(tmp_path: Path) -> None:
    tiny = tmp_path / "t.yml"
    tiny.write_text(
        TINY + "optimizer:\n  type: Adam\n  params:\n    lr: 0.0006\n"
    )  # a model alone gives DeepSpeed nothing (issue 28)
    result = translate(tiny, "neox", "deepspeed")
    assert [e.target_key for e in result.report.entries if e.status.value == "missing"] == ["train_batch_size"]
    assert "MISSING" not in result.dump() and json.loads(result.dump()) == result.config
    assert result.report.target["missing_marked"] is False


def test_nothing_missing_nothing_marked() -> None:
    result = translate(FIXTURES / "inputs" / "cerebras" / "gpt2-small-legacy.yaml", "cerebras", "cerebras")
    assert "missing_marked" not in result.report.target and "# MISSING" not in result.dump()


def test_library_target_values_are_checked(pythia160m: Path) -> None:
    with pytest.raises(UsageError, match="not a Cerebras"):
        translate(pythia160m, "neox", "cerebras", target_values={"nope.nope": 1})


def test_flat_veomni_names_its_own_path_for_a_missing_output_dir() -> None:
    """The oracle's 52 flat-layout rejections: the missing output folder was named at its nested path
    (train.checkpoint.output_dir), which the flat layout's parser refuses."""
    source = FIXTURES / "inputs" / "deepspeed" / "warmup-lr-zero0.json"
    result = translate(source, "deepspeed", "veomni", layout="flat")
    missing = [e.target_key for e in result.report.entries if e.status.value == "missing"]
    assert "train.output_dir" in missing and not [k for k in missing if k and k.startswith("train.checkpoint.")]
    given = translate(source, "deepspeed", "veomni", layout="flat", set_values={"checkpoint.save_dir": "/ckpt"})
    assert given.config["train"]["output_dir"] == "/ckpt" and "checkpoint" not in given.config["train"]


def test_architecture_set_for_a_deepspeed_source_asks_for_the_family_first() -> None:
    """Issue 16: deepspeed2veomni --set model.* dropped the values as 'no counterpart'. VeOmni's
    config.json needs its HF class: without a family the values wait for it and the report says so;
    with it, config.json is written with them."""
    source = FIXTURES / "inputs" / "deepspeed" / "warmup-lr-zero0.json"
    sizes = {"model.hidden_size": 64, "model.num_layers": 2, "model.num_heads": 4, "model.vocab_size": 128}
    waiting = translate(source, "deepspeed", "veomni", set_values=sizes)
    dropped = {e.source_key: e.detail for e in waiting.report.entries if e.status.value == "dropped"}
    assert dropped["--set model.hidden_size"].startswith("VeOmni writes model.hidden_size only with model.family")
    assert not [d for d in dropped.values() if "no counterpart for model." in d]
    family = [
        e for e in waiting.report.entries if e.status.value == "missing" and e.target_key == "config.json:model_type"
    ]
    assert family and "--set model.family=" in family[0].detail
    done = translate(source, "deepspeed", "veomni", set_values={**sizes, "model.family": "llama"})
    config = json.loads(done.side_files["config.json"])
    assert (config["model_type"], config["hidden_size"], config["num_hidden_layers"]) == ("llama", 64, 2)
