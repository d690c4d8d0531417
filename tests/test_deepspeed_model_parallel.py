"""A DeepSpeed JSON written from a model-parallel source: its batch holds at the data-parallel size
DeepSpeed sees only with the engine's model-parallel unit (deepspeedai/DeepSpeed runtime/config.py
DeepSpeedConfig: world_size = mpu.get_data_parallel_world_size() when an mpu is given, else every GPU;
_batch_assertion: train_batch_size == micro x accumulation x world_size). The report says so."""

from __future__ import annotations

import json
from pathlib import Path

from neoconv import Status, translate

NEOX = """\
num_layers: 2
hidden_size: 64
num_attention_heads: 4
seq_length: 128
max_position_embeddings: 128
train_batch_size: 32
train_micro_batch_size_per_gpu: 4
gradient_accumulation_steps: 4
train_iters: 100
"""


def _entry(result, key: str):  # type: ignore[no-untyped-def]
    return next(e for e in result.report.entries if e.target_key and key in e.target_key.split(", "))


def test_model_parallel_batch_names_the_engine_it_needs(tmp_path: Path) -> None:
    source = tmp_path / "mp.yml"
    source.write_text(NEOX + "model_parallel_size: 2\npipe_parallel_size: 2\n")
    result = translate(source, "neox", "deepspeed", world_size=8)
    written = json.loads(result.dump())
    assert (
        written["train_batch_size"],
        written["train_micro_batch_size_per_gpu"],
        written["gradient_accumulation_steps"],
    ) == (32, 4, 4)  # 4 x 4 x dp 2 (8 / tensor 2 / pipeline 2)
    entry = _entry(result, "train_batch_size")
    assert entry.status is Status.LOSSY
    assert "data-parallel size 2" in entry.detail and "mpu" in entry.detail


def test_data_parallel_only_batch_is_not_flagged(tmp_path: Path) -> None:
    source = tmp_path / "dp.yml"
    source.write_text(NEOX.replace("train_batch_size: 32", "train_batch_size: 128"))
    result = translate(source, "neox", "deepspeed", world_size=8)
    assert json.loads(result.dump())["train_batch_size"] == 128  # 4 x 4 x 8
    entry = _entry(result, "train_batch_size")
    assert "mpu" not in entry.detail  # every GPU is data-parallel: the JSON alone runs as it is
