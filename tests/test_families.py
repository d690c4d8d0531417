"""Model families the canonical fields do not cover (mappings/cerebras.yaml `families:`): one `dropped`
entry for the architecture block, no default standing in for it, and the right trainer model name."""

from __future__ import annotations

from pathlib import Path

from translator import translate

# a T5 config in the style of Cerebras/modelzoo@R_1.7.1:modelzoo/transformers/pytorch/t5/configs/t5_base.yaml
T5 = """\
train_input:
  data_processor: "T5DynamicDataProcessor"
  src_data_dir: "./t5/c4/en/train"
  batch_size: 216
model:
  src_vocab_size: 32001
  encoder_num_hidden_layers: 12
  decoder_num_hidden_layers: 12
  d_model: 768
  d_ff: 3072
  num_heads: 12
  dropout_rate: 0.1
  mixed_precision: true
optimizer:
  optimizer_type: "AdamW"
  weight_decay_rate: 0.01
  learning_rate: 0.0001
runconfig:
  max_steps: 1000
  checkpoint_steps: 500
"""

# a U-Net config in the style of Cerebras/modelzoo@R_1.7.1:modelzoo/vision/pytorch/unet/configs (no model name)
UNET = """\
train_input:
  data_processor: "InriaAerialDataProcessor"
  batch_size: 8
  image_shape: [512, 512, 3]
model:
  encoder_filters: [64, 128, 256, 512]
  decoder_filters: [512, 256, 128, 64]
  convs_per_block: ["3x3_conv", "3x3_conv"]
  mixed_precision: true
optimizer:
  optimizer_type: "Adam"
  learning_rate: 0.0001
runconfig:
  max_steps: 100
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(text)
    return path


def test_an_encoder_decoder_is_named_as_such_not_key_by_key(tmp_path: Path) -> None:
    result = translate(_write(tmp_path, T5), "cerebras", "neox")
    entries = result.report.entries
    block = [e for e in entries if e.source_key == "model"]
    assert len(block) == 1 and block[0].status.value == "dropped"
    assert block[0].detail.startswith("family not supported: T5 (encoder-decoder)")
    precision = ("model.mixed_precision", "model.use_bfloat16")  # kept: the run's precision (the latter: T5's default)
    assert not [e for e in entries if (e.source_key or "").startswith("model.") and e.source_key not in precision]
    assert not [e for e in entries if e.status.value == "unknown"]
    assert result.report.source["unsupported_family"] == "t5"
    # no GPT default stands in for the T5's architecture: the sizes are asked for, not invented
    missing = " ".join(e.detail for e in entries if e.status.value == "missing")
    assert "model.num_layers" in missing and "model.hidden_size" in missing
    # the rest of the run still carries: optimizer, steps, the 1.x weight_decay_rate
    by_source = result.report.by_source()
    assert by_source["optimizer.weight_decay_rate"].status.value == "converted"
    assert "weight_decay: 0.01" in result.dump() and "train_iters: 1000" in result.dump()


def test_a_legacy_t5_migrated_to_the_trainer_layout_is_named_t5(tmp_path: Path) -> None:
    result = translate(_write(tmp_path, T5), "cerebras", "cerebras", layout="trainer")
    text = result.dump()
    assert "name: t5\n" in text and "gpt2" not in text
    assert "encoder_num_hidden_layers: 12" in text  # the block is carried as written within the format


def test_a_family_without_a_trainer_model_says_it_cannot_name_it(tmp_path: Path) -> None:
    result = translate(_write(tmp_path, UNET), "cerebras", "cerebras", layout="trainer")
    assert result.report.source["unsupported_family"] == "unet"
    missing = [e for e in result.report.entries if e.status.value == "missing"]
    assert [(e.target_key, e.detail.split(":")[0]) for e in missing] == [("trainer.init.model.name", "cannot tell the model name")]
    assert "gpt2" not in result.dump()


def test_a_gpt_file_is_no_unsupported_family(tmp_path: Path) -> None:
    text = T5.replace('"T5DynamicDataProcessor"', '"GptHDF5DataProcessor"')
    gpt = text.split("model:")[0] + "model:\n  hidden_size: 768\n  num_hidden_layers: 12\n  num_heads: 12\n" \
        "  vocab_size: 50257\n  max_position_embeddings: 1024\n  mixed_precision: true\n" + "optimizer:" + text.split("optimizer:")[1]
    result = translate(_write(tmp_path, gpt), "cerebras", "neox")
    assert "unsupported_family" not in result.report.source
    assert "num_layers: 12" in result.dump()


def test_an_unsupported_family_keeps_its_own_precision_default(tmp_path: Path) -> None:
    # the runner's use_bfloat16 defaults to False (Cerebras/modelzoo@R_1.7.1:modelzoo/common/pytorch/
    # pytorch_base_runner.py:1052); only the GPT families' set_defaults turn it on
    result = translate(_write(tmp_path, T5), "cerebras", "neox")
    assert "precision: fp16" in result.dump() and "bf16" not in result.dump().split("fp16:")[0]
    assert "model.use_bfloat16=False (t5)" in result.report.source["version_detail"]
    note = result.report.by_source()["model.use_bfloat16"]
    assert "not in the file: T5 (encoder-decoder) code defaults it to False at 1.9.1" in note.detail
    # a GPT-family file of the same release without the key trains in bfloat16
    gpt = T5.split("model:")[0].replace("T5DynamicDataProcessor", "GptHDF5DataProcessor") + \
        "model:\n  hidden_size: 64\n  num_hidden_layers: 2\n  num_heads: 4\n  vocab_size: 1000\n" \
        "  max_position_embeddings: 128\n  mixed_precision: true\noptimizer:" + T5.split("optimizer:")[1]
    assert "precision: bfloat16" in translate(_write(tmp_path, gpt), "cerebras", "neox").dump()
