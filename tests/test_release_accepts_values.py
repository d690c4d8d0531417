"""A file's release is the newest of those its keys fit that ACCEPTS its values (knowledge/accepting.py, the
tables' `checks:`); a release refusing one of its values is the guess only when every candidate refuses it,
and then the refusal is named. ru-gpts' DeepSpeed file (dynamic loss scaling with `min_loss_scale: 0`) fits
0.2.0..0.19.5 by its keys, and 0.19.3+ refuses the floor 0 (DeepSpeedFP16Config
._validate_dynamic_loss_scale_params): it is a 0.19.2 file."""

from __future__ import annotations

import json
from pathlib import Path

from neoconv import translate

DYNAMIC_FLOOR_0 = {
    "train_batch_size": 32,
    "train_micro_batch_size_per_gpu": 4,
    "fp16": {"enabled": True, "loss_scale": 0, "min_loss_scale": 0, "loss_scale_window": 1000},
    "zero_optimization": {"stage": 1},
}


def _source(tmp_path: Path, config: dict, fmt: str = "deepspeed", to: str = "deepspeed") -> dict:
    src = tmp_path / "ds_config.json"
    src.write_text(json.dumps(config))
    return translate(src, fmt, to).report.source


def test_deepspeed_reads_as_the_newest_release_taking_min_loss_scale_0(tmp_path: Path) -> None:
    told = _source(tmp_path, DYNAMIC_FLOOR_0)
    assert told["version"] == "0.19.2"
    assert told["version_range"] == ["0.2.0", "0.19.2"]
    assert "0.19.3..0.19.5 refuse fp16.min_loss_scale=0" in told["version_detail"]


def test_a_value_every_release_takes_leaves_the_newest(tmp_path: Path) -> None:
    config = json.loads(json.dumps(DYNAMIC_FLOOR_0))
    config["fp16"]["min_loss_scale"] = 1
    assert _source(tmp_path, config)["version"] == "0.19.5"
    config["fp16"]["min_loss_scale"] = 0
    config["fp16"]["loss_scale"] = 128  # a static scale: the floor is not checked
    assert _source(tmp_path, config)["version"] == "0.19.5"


def test_when_every_release_the_keys_fit_refuses_the_refusal_is_named(tmp_path: Path) -> None:
    config = {**DYNAMIC_FLOOR_0, "log_level": "info"}  # log_level: 0.19.3+ only
    told = _source(tmp_path, config)
    assert told["version"] == "0.19.5"
    assert told["version_range"] == ["0.19.3", "0.19.5"]
    assert "every release its keys fit refuses a value: fp16.min_loss_scale=0" in told["version_detail"]


LEGACY_GPT2_BERT_DATA = """\
train_input:
  data_processor: BertCSVDataProcessor
  data_dir: ./data
  batch_size: 8
  max_sequence_length: 128
model:
  name: gpt2
  hidden_size: 256
  num_hidden_layers: 2
  num_heads: 4
  vocab_size: 1000
  max_position_embeddings: 128
optimizer:
  optimizer_type: Adam
  learning_rate: 0.0001
runconfig:
  max_steps: 10
"""


def test_model_zoo_reads_as_the_newest_release_taking_its_data_processor(tmp_path: Path) -> None:
    # Model Zoo 2.4+'s registry gives a decoder the GPT data processors only; 2.3 checked no pairing
    src = tmp_path / "params.yaml"
    src.write_text(LEGACY_GPT2_BERT_DATA)
    told = translate(src, "cerebras", "cerebras").report.source
    assert told["version"] == "2.3.1"
    assert told["version_range"][1] == "2.3.1"
    assert "2.4.0..2.10.0 refuse train_input.data_processor='BertCSVDataProcessor'" in told["version_detail"]
    src.write_text(LEGACY_GPT2_BERT_DATA.replace("BertCSVDataProcessor", "GptHDF5DataProcessor"))
    assert translate(src, "cerebras", "cerebras").report.source["version"] == "2.10.0"
