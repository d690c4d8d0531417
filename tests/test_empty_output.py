"""An output that would hold nothing of its source is refused (issue 28): a shared-settings fragment
(paths, logging, the launcher) translated alone would be written as the target's defaults only, a
default GPT-2 config.json the source never described. Exit 2, one line naming the file and why,
nothing written; an output that carries even one value of the source is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neoconv.api import translate
from neoconv.cli import main
from neoconv.core.errors import NothingToWrite

# small fragments of each source format that describe no model and no training run
LOCAL_SETUP = """\
data_path: data/enwik8/enwik8_text_document
vocab_file: data/gpt2-vocab.json
merge_file: data/gpt2-merges.txt
save: checkpoints
load: checkpoints
tensorboard_dir: tensorboard
log_dir: logs
use_wandb: true
wandb_project: neox
launcher: pdsh
"""
MODEL = """\
num_layers: 2
hidden_size: 64
num_attention_heads: 4
seq_length: 128
max_position_embeddings: 128
pos_emb: rotary
"""
DS_LOGGING = {"steps_per_print": 10, "wall_clock_breakdown": False}
CEREBRAS_RUNCONFIG = "runconfig:\n  model_dir: ./model_dir\n  checkpoint_steps: 1000\n  log_steps: 10\n"
VEOMNI_PATHS = "data:\n  train_path: data/train.jsonl\ntrain:\n  output_dir: out\n  wandb_project: proj\n"
MEGATRON_PATHS = "--save ckpt --load ckpt --tensorboard-dir tb --log-interval 10\n"
TRAINER_LOGGING = {"output_dir": "out", "logging_steps": 10, "report_to": "wandb"}


def _file(tmp_path: Path, name: str, content: str | dict) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_a_neox_fragment_alone_into_a_config_json_is_refused(runner, tmp_path: Path) -> None:
    frag = _file(tmp_path, "local_setup.yml", LOCAL_SETUP)
    out = tmp_path / "out"
    out.mkdir()
    result = runner.invoke(main, ["neox2hf", str(frag), "-o", str(out / "config.json")])
    assert result.exit_code == 2
    assert list(out.iterdir()) == []
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    line = result.stderr
    assert "local_setup.yml" in line and "only defaults and stand-ins" in line
    assert "--with" in line and "model.num_layers" in line  # how to give what it lacks


# every target, from a fragment of each source format that holds nothing of that target's
EMPTY = [
    ("deepspeed", DS_LOGGING, "ds.json", "neox", None),
    ("deepspeed", DS_LOGGING, "ds.json", "cerebras", "legacy"),
    ("deepspeed", DS_LOGGING, "ds.json", "cerebras", "trainer"),
    ("deepspeed", DS_LOGGING, "ds.json", "veomni", None),
    ("deepspeed", DS_LOGGING, "ds.json", "megatron", None),
    ("deepspeed", DS_LOGGING, "ds.json", "hftrainer", None),
    ("neox", LOCAL_SETUP, "local_setup.yml", "hf", None),
    ("neox", LOCAL_SETUP, "local_setup.yml", "deepspeed", None),
    ("cerebras", CEREBRAS_RUNCONFIG, "params.yaml", "deepspeed", None),
    ("cerebras", CEREBRAS_RUNCONFIG, "params.yaml", "hf", None),
    ("veomni", VEOMNI_PATHS, "train.yaml", "megatron", None),
    ("veomni", VEOMNI_PATHS, "train.yaml", "deepspeed", None),
    ("megatron", MEGATRON_PATHS, "run.args", "hf", None),
    ("megatron", MEGATRON_PATHS, "run.args", "deepspeed", None),
    ("hftrainer", TRAINER_LOGGING, "args.json", "deepspeed", None),
    ("hftrainer", TRAINER_LOGGING, "args.json", "hf", None),
]


@pytest.mark.parametrize("src, content, name, dst, layout", EMPTY)
def test_a_fragment_that_gives_the_target_nothing_is_refused(
    tmp_path: Path, src: str, content: str | dict, name: str, dst: str, layout: str | None
) -> None:
    frag = _file(tmp_path, name, content)
    options = {"layout": layout} if layout else {}
    with pytest.raises(NothingToWrite) as refused:
        translate([str(frag)], src, dst, **options)
    assert refused.value.file == str(frag)
    assert "would hold no setting of the source" in str(refused.value)


def test_a_deepspeed_zero_stage_alone_into_neox_is_written(tmp_path: Path) -> None:
    # one value of the source carried is an output, however few: not refused
    frag = _file(tmp_path, "ds.json", {"zero_optimization": {"stage": 2}})
    result = translate([str(frag)], "deepspeed", "neox")
    assert result.config["zero_optimization"]["stage"] == 2


def test_a_fragment_with_one_value_the_target_holds_is_written(tmp_path: Path) -> None:
    # NeoX's save is Model Zoo's model_dir: the rest of the file is defaults and stand-ins, but not all of it
    frag = _file(tmp_path, "local_setup.yml", LOCAL_SETUP)
    result = translate([str(frag)], "neox", "cerebras", layout="legacy")
    assert result.config["runconfig"]["model_dir"] == "checkpoints"


def test_values_given_with_set_make_the_output(tmp_path: Path) -> None:
    frag = _file(tmp_path, "local_setup.yml", LOCAL_SETUP)
    given = {"model.num_layers": 2, "model.hidden_size": 64, "model.num_heads": 4, "model.vocab_size": 512}
    result = translate([str(frag)], "neox", "hf", set_values=given)
    assert (result.config["n_layer"], result.config["n_embd"], result.config["n_head"]) == (2, 64, 4)


def test_the_fragment_beside_the_file_with_the_model_is_written(runner, tmp_path: Path) -> None:
    frag = _file(tmp_path, "local_setup.yml", LOCAL_SETUP)
    model = _file(tmp_path, "model.yml", MODEL)
    out = tmp_path / "config.json"
    args = ["neox2hf", str(model), "--with", str(frag), "-o", str(out), "--set", "model.vocab_size=512"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.stderr
    written = json.loads(out.read_text())
    assert (written["num_hidden_layers"], written["hidden_size"]) == (2, 64)
