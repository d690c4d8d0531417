"""A file's release is told by its values too: a name only some releases of the keys' range take narrows
the range to those (knowledge/versions.py detect). VeOmni's nested layout took fsdp_mode fsdp1 until #756
dropped FSDP1 (ByteDance-Seed/VeOmni@54ec9e60), so a May 2026 file with fsdp1 and keys of #651..#1021
(VeOmni@46640268 configs/dit/wan2.1_I2V_1.3B_lora.yaml) is a #651..#744 file, where fsdp1 runs FSDP1's
full shard, not a newer one where fsdp1 is unknown."""

from __future__ import annotations

import json
from pathlib import Path

from neoconv import Status, translate
from neoconv.knowledge.schema import load_history
from neoconv.knowledge.versions import detect

NESTED_FSDP1 = """\
model:
  model_path: Qwen/Qwen2.5-0.5B
  ops_implementation:
    rotary_pos_emb_implementation: eager
data:
  train_path: data
train:
  global_batch_size: 8
  micro_batch_size: 1
  init_device: cuda
  accelerator:
    ulysses_size: 1
    fsdp_config:
      fsdp_mode: fsdp1
  optimizer:
    lr: 1.0e-4
"""


def test_a_name_a_later_release_dropped_pins_the_releases_that_take_it(tmp_path: Path) -> None:
    src = tmp_path / "lora.yaml"
    src.write_text(NESTED_FSDP1)
    model = tmp_path / "config.json"
    model.write_text(
        json.dumps(
            {
                "model_type": "qwen2",
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "num_key_value_heads": 2,
                "vocab_size": 128,
                "intermediate_size": 128,
            }
        )
    )
    result = translate(src, "veomni", "neox", model_config=str(model))
    assert result.report.source["version"] == "#744"
    assert result.report.source["version_range"] == ["#651", "#744"]
    assert "fsdp_mode: fsdp1" in result.report.source["version_detail"]
    zero = result.report.by_source()["train.accelerator.fsdp_config.fsdp_mode"]
    assert zero.status is not Status.UNKNOWN and result.ir.get("parallel.zero_stage") == 3


def test_a_name_no_release_of_the_range_takes_leaves_the_range() -> None:
    history = load_history("veomni")
    assert history is not None
    key = "train.accelerator.fsdp_config.fsdp_mode"
    plain = detect(history, [key])
    assert detect(history, [key], named=((key, "fsdp3"),)).label == plain.label  # a fork's name: unknown later
    assert detect(history, [key], named=((key, "fsdp1"),)).label == "#744"
    assert detect(history, [key], named=((key, "fsdp2"),)).label == plain.label
