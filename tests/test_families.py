"""Model families the canonical fields do not cover (mappings/cerebras.yaml `families:`): one `dropped`
entry for the architecture block, no default standing in for it, and the right trainer model name."""

from __future__ import annotations

from pathlib import Path

import re

import pytest

from neoconv import translate
from neoconv.cli import main
from neoconv.core.errors import UnsupportedFamily

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


# a GPT-2 config of the same release (1.x optimizer spelling, no precision key)
GPT = (
    T5.split("model:")[0].replace("T5DynamicDataProcessor", "GptHDF5DataProcessor")
    + "model:\n  hidden_size: 64\n  num_hidden_layers: 2\n  num_heads: 4\n  vocab_size: 1000\n"
    "  max_position_embeddings: 128\n  mixed_precision: true\noptimizer:" + T5.split("optimizer:")[1]
)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("dst", ["neox", "veomni", "hf", "megatron"])
def test_an_encoder_decoder_is_refused_for_every_format_with_an_architecture(tmp_path: Path, dst: str) -> None:
    """Issue 16: a family the target cannot hold is refused (exit 2 on the command line), never
    turned into a decoder LM of the target."""
    with pytest.raises(
        UnsupportedFamily, match=r"a T5 \(encoder-decoder\) config: .* holds decoder-only transformer language models"
    ):
        translate(_write(tmp_path, T5), "cerebras", dst)


def test_a_refused_family_exits_2_and_writes_nothing(runner, tmp_path: Path) -> None:
    out = tmp_path / "out.yml"
    result = runner.invoke(main, ["cerebras2neox", str(_write(tmp_path, T5)), "-o", str(out)])
    assert result.exit_code == 2 and "T5 (encoder-decoder)" in result.stderr and not out.exists()
    assert len(result.stderr.strip().splitlines()) == 1


def test_batch_skip_unsupported_lists_the_family_and_translates_the_rest(runner, tmp_path: Path) -> None:
    tree = tmp_path / "src"
    tree.mkdir()
    _write(tree, T5).rename(tree / "t5.yaml")
    (tree / "gpt.yaml").write_text(GPT)
    failed = runner.invoke(main, ["batch", "cerebras2neox", str(tree), "-o", str(tmp_path / "a")])
    assert failed.exit_code == 1 and "failed   t5.yaml" in failed.stderr
    skipped = runner.invoke(
        main, ["batch", "cerebras2neox", str(tree), "-o", str(tmp_path / "b"), "--skip-unsupported"]
    )
    assert skipped.exit_code == 0 and "skipped  t5.yaml: a T5 (encoder-decoder) config" in skipped.stderr
    assert (tmp_path / "b" / "gpt.yml").exists() and not (tmp_path / "b" / "t5.yml").exists()


def test_into_deepspeed_the_architecture_is_one_entry_and_the_run_carries(tmp_path: Path) -> None:
    """DeepSpeed JSON holds no architecture: a T5's training settings carry, its model block is named
    once as a family not supported (issue 15), not key by key."""
    result = translate(_write(tmp_path, T5), "cerebras", "deepspeed")
    block = [e for e in result.report.entries if e.source_key == "model"]
    assert len(block) == 1 and block[0].status.value == "dropped"
    assert block[0].detail.startswith("family not supported: T5 (encoder-decoder)")
    assert not [
        e
        for e in result.report.entries
        if (e.source_key or "").startswith("model.")
        and e.source_key not in ("model.mixed_precision", "model.use_bfloat16")
    ]
    assert result.config["optimizer"]["params"]["weight_decay"] == 0.01


def test_an_encoder_decoder_migrated_is_named_as_such_not_key_by_key(tmp_path: Path) -> None:
    result = translate(_write(tmp_path, T5), "cerebras", "cerebras", layout="trainer")
    assert result.report.source["unsupported_family"] == "t5"
    assert not [e for e in result.report.entries if e.status.value == "unknown"]
    text = result.dump()
    assert "weight_decay: 0.01" in text and "max_steps: 1000" in text  # the rest of the run carries


def test_a_legacy_t5_migrated_to_the_trainer_layout_is_named_t5(tmp_path: Path) -> None:
    result = translate(_write(tmp_path, T5), "cerebras", "cerebras", layout="trainer")
    text = result.dump()
    assert "name: t5\n" in text and "gpt2" not in text
    assert "encoder_num_hidden_layers: 12" in text  # the block is carried as written within the format


def test_a_family_without_a_trainer_model_says_it_cannot_name_it(tmp_path: Path) -> None:
    result = translate(_write(tmp_path, UNET), "cerebras", "cerebras", layout="trainer")
    assert result.report.source["unsupported_family"] == "unet"
    missing = [e for e in result.report.entries if e.status.value == "missing"]
    assert [(e.target_key, e.detail.split(":")[0]) for e in missing] == [
        ("trainer.init.model.name", "cannot tell the model name")
    ]
    assert "gpt2" not in result.dump()


def test_a_gpt_file_is_no_unsupported_family(tmp_path: Path) -> None:
    text = T5.replace('"T5DynamicDataProcessor"', '"GptHDF5DataProcessor"')
    gpt = (
        text.split("model:")[0] + "model:\n  hidden_size: 768\n  num_hidden_layers: 12\n  num_heads: 12\n"
        "  vocab_size: 50257\n  max_position_embeddings: 1024\n  mixed_precision: true\n"
        + "optimizer:"
        + text.split("optimizer:")[1]
    )
    result = translate(_write(tmp_path, gpt), "cerebras", "neox")
    assert "unsupported_family" not in result.report.source
    assert "num_layers: 12" in result.dump()


def test_an_unsupported_family_keeps_its_own_precision_default(tmp_path: Path) -> None:
    # the runner's use_bfloat16 defaults to False (Cerebras/modelzoo@R_1.7.1:modelzoo/common/pytorch/
    # pytorch_base_runner.py:1052); only the GPT families' set_defaults turn it on
    result = translate(_write(tmp_path, T5), "cerebras", "cerebras", layout="trainer")
    # Model Zoo 2.10 refuses use_bfloat16 (retired after 2.3.1): float16 is said as fp16_type (issue #28)
    assert result.config["trainer"]["init"]["precision"] == {"enabled": True, "fp16_type": "float16"}
    assert "use_bfloat16" not in result.dump()
    assert "model.use_bfloat16=False (t5)" in result.report.source["version_detail"]
    note = result.report.by_source()["model.use_bfloat16"]
    assert "not in the file: T5 (encoder-decoder) code defaults it to False at 1.9.1" in note.detail
    # a GPT-family file of the same release without the key trains in bfloat16
    assert "precision: bfloat16" in translate(_write(tmp_path, GPT), "cerebras", "neox").dump()


@pytest.mark.parametrize("kind, what", [("mamba", "Mamba (state-space model)"), ("rwkv", "RWKV (recurrent model)")])
def test_a_neox_model_without_attention_is_refused_where_an_architecture_is_written(
    tmp_path: Path, kind: str, what: str
) -> None:
    """NeoX's all-Mamba and all-RWKV models read as a Llama-shaped block: another format would build
    a transformer from them (transformers refused the Mamba configs' heads), so they are refused."""
    source = tmp_path / "m.yml"
    source.write_text(
        f"num_layers: 4\nhidden_size: 1024\nnum_attention_heads: 12\nseq_length: 2048\n"
        f'max_position_embeddings: 2048\nattention_config: [[["{kind}"], 4]]\ntrain_micro_batch_size_per_gpu: 4\n'
    )
    for dst in ("hf", "cerebras", "veomni", "megatron"):
        with pytest.raises(UnsupportedFamily, match=re.escape(f"a {what} config")):
            translate(source, "neox", dst)
    # no architecture there: the run carries (its batch)
    assert translate(source, "neox", "deepspeed").config["train_micro_batch_size_per_gpu"] == 4
    assert translate(source, "neox", "neox").config["attention_config"] == [[[kind], 4]]


@pytest.mark.parametrize(
    ("processor", "name"),
    [
        ("MNLIDataProcessor", "bert/classifier"),
        ("SST2DataProcessor", "bert/classifier"),
        ("BertSumCSVDataProcessor", "bert/extractive_summarization"),
        ("BertTokenClassifierDataProcessor", "bert/token_classifier"),
        ("BertCSVDynamicMaskDataProcessor", "bert"),
    ],
)
def test_a_bert_fine_tuning_file_is_named_by_the_model_that_takes_its_processor(processor: str, name: str) -> None:
    # Model Zoo 2.10 registry.yaml: bert/classifier takes MNLI/SST2 processors, bert only the pretraining ones
    legacy = {
        "train_input": {"data_processor": processor, "data_dir": "./d", "batch_size": 32},
        "model": {"vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12, "num_heads": 12},
        "optimizer": {"optimizer_type": "AdamW", "learning_rate": 1e-5},
    }
    done = translate(legacy, "cerebras", "cerebras", layout="trainer")
    assert done.config["trainer"]["init"]["model"]["name"] == name
