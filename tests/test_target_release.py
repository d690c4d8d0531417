"""Issue #28 (NeoX, DeepSpeed and Model Zoo outputs): a value the target release refuses is never
`exact`/`converted`: it is written in the release's spelling, or named lossy/dropped with the reason.
Each case is the real construct, in a small file written here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from neoconv.api import translate
from neoconv.core.report import Status

NEOX_V1 = """\
{
  "pipe-parallel-size": 1,
  "model-parallel-size": 1,
  "num-layers": 12,
  "hidden-size": 768,
  "num-attention-heads": 12,
  "seq-length": 2048,
  "max-position-embeddings": 2048,
  "pos-emb": "rotary",
  "optimizer": {"type": "Adam", "params": {"lr": 0.0006, "betas": [0.9, 0.95], "eps": 1.0e-8}},
  "train_micro_batch_size_per_gpu": 8,
  "gas": 4,
  "train-iters": 1000,
  "fp16": {"enabled": true, "loss_scale": 0, "loss_scale_window": 1000, "hysteresis": 2, "min_loss_scale": 1.0e-10},
}
"""


def _entry(result: Any, key: str) -> Any:
    return next(e for e in result.report.entries if e.source_key == key)


def test_neox2neox_leaves_out_v1s_gas(tmp_path: Path) -> None:
    """v1.0's `gas` (an output-only duplicate until 2024-01-26): today's NeoXArgs(**config) refuses it."""
    path = tmp_path / "v1.yml"
    path.write_text(NEOX_V1)
    done = translate(str(path), "neox", "neox")
    assert '"gas"' not in done.dump() and "gas:" not in done.dump()
    gas = _entry(done, "gas")
    assert gas.status is Status.DROPPED and "GPT-NeoX 2026-05-19 does not read gas" in gas.detail
    # migrated to a release that still reads it, it stays
    kept = translate(str(path), "neox", "neox", target_version="2023-06-01")
    assert _entry(kept, "gas").status is Status.EXACT and kept.config["gas"] == 4


def test_neox2deepspeed_does_not_carry_a_fractional_min_loss_scale(tmp_path: Path) -> None:
    """DeepSpeed's fp16.min_loss_scale is an int (precision_config.py, pydantic): 1e-10 is refused."""
    path = tmp_path / "v1.yml"
    path.write_text(NEOX_V1)
    done = translate(str(path), "neox", "deepspeed", world_size=8)
    assert "min_loss_scale" not in json.loads(done.dump())["fp16"]
    entry = _entry(done, "fp16.min_loss_scale")
    assert entry.status in (Status.DROPPED, Status.LOSSY) and "takes a whole number" in entry.detail
    # a whole number is written as it is
    whole = tmp_path / "whole.yml"
    whole.write_text(NEOX_V1.replace("1.0e-10", "4"))
    assert json.loads(translate(str(whole), "neox", "deepspeed", world_size=8).dump())["fp16"]["min_loss_scale"] == 4


MODEL_ZOO_1X = """\
train_input: {data_processor: GptTfRecordsProcessor, data_dir: ./train, batch_size: 512, max_sequence_length: 2048}
model:
  hidden_size: 2048
  num_hidden_layers: 24
  num_heads: 16
  filter_size: 8192
  vocab_size: 50257
  max_position_embeddings: 2048
  use_position_embedding: true
  position_embedding_type: learned
optimizer:
  optimizer_type: adamw
  weight_decay_rate: 0.1
  learning_rate:
    - {scheduler: Linear, initial_learning_rate: 0.0, end_learning_rate: 2.0e-4, steps: 346}
    - {scheduler: Cosine, initial_learning_rate: 2.0e-4, alpha: 0.1, decay_steps: 23988}
runconfig: {max_steps: 24334}
"""


def test_model_zoo_1x_schedulers_in_the_spellings_2x_reads(tmp_path: Path) -> None:
    """1.x's steps/decay_steps (Model Zoo 2.10's trainer: KeyError: 'total_iters') and the TensorFlow
    trainer's Cosine become total_iters and CosineDecay with its end lr (alpha x initial), as Model
    Zoo's cs-2.1 -> cs-2.2 converter renames them; the entry says so."""
    path = tmp_path / "params_gpt3_xl.yaml"
    path.write_text(MODEL_ZOO_1X)
    trainer = translate(str(path), "cerebras", "cerebras", layout="trainer")
    phases = trainer.config["trainer"]["init"]["schedulers"][0]["SequentialLR"]["schedulers"]
    assert phases == [
        {"LinearLR": {"initial_learning_rate": 0.0, "end_learning_rate": 2.0e-4, "total_iters": 346}},
        {"CosineDecayLR": {"initial_learning_rate": 2.0e-4, "end_learning_rate": 2.0e-5, "total_iters": 23988}},
    ]
    entry = _entry(trainer, "optimizer.learning_rate")
    assert (
        entry.status is Status.CONVERTED
        and "steps -> total_iters" in entry.detail
        and "Cosine -> CosineDecay" in entry.detail
    )
    legacy = translate(str(path), "cerebras", "cerebras")
    schedule = yaml.safe_load(legacy.dump())["optimizer"]["learning_rate"]
    assert [p.get("total_iters") for p in schedule] == [346, 23988] and "steps" not in schedule[0]
    # for a release that read them, they stay
    old = translate(str(path), "cerebras", "cerebras", target_version="1.9.1")
    assert yaml.safe_load(old.dump())["optimizer"]["learning_rate"][0]["steps"] == 346


REPEATED = """\
train_input: {data_processor: GptHDF5MapDataProcessor, data_dir: ./train, batch_size: 64}
model:
    name: gpt2
    vocab_size: 50257
    hidden_size: 768
    num_hidden_layers: 12
    num_heads: 12
    filter_size: 3072
    max_position_embeddings: 1024
    dropout_rate: 0.0
    dropout_rate: 0.0
optimizer: {optimizer_type: AdamW, learning_rate: 0.0001}
runconfig: {max_steps: 100}
"""


def test_a_repeated_key_is_written_once_for_a_release_that_refuses_repeats(tmp_path: Path) -> None:
    """Model Zoo 2.5+ loads params with UniqueKeyLoader: the same value twice is written once (and said);
    two values are refused for such a release, kept for an earlier one."""
    from neoconv.core.errors import InputError
    from neoconv.services.output_text import output_text

    path = tmp_path / "params.yaml"
    path.write_text(REPEATED)
    done = translate(str(path), "cerebras", "cerebras")
    assert done.report.target["written_once"] == ["model.dropout_rate"]
    text = output_text(done, str(path))
    assert text.count("dropout_rate") == 1 and done.report.target["formatting"]["kept"] is False
    assert "written once" in _entry(done, "model.dropout_rate").detail
    two = tmp_path / "two.yaml"
    two.write_text(REPEATED.replace("    dropout_rate: 0.0\n", "    dropout_rate: 0.1\n", 1))
    try:
        translate(str(two), "cerebras", "cerebras")
        raise AssertionError("two values for a release that refuses repeats must be refused")
    except InputError as exc:
        assert exc.line == 11 and "given twice with different values" in exc.message
    older = translate(str(two), "cerebras", "cerebras", target_version="2.4.3")
    assert "written_once" not in older.report.target and yaml.safe_load(older.dump())["model"]["dropout_rate"] == 0.0


def test_tensorflow_dynamic_loss_scaling_is_dynamic(tmp_path: Path) -> None:
    """Model Zoo 1.x's loss_scaling_factor "tf_dynamic" (TF's DynamicLossScale) is dynamic loss scaling:
    DeepSpeed gets loss_scale 0 (not the string), Model Zoo 2.x "dynamic"; approximately (no min/max bounds)."""
    path = tmp_path / "params.yaml"
    path.write_text(
        MODEL_ZOO_1X.replace(
            "  weight_decay_rate: 0.1\n", "  weight_decay_rate: 0.1\n  loss_scaling_factor: tf_dynamic\n"
        ).replace(
            "  position_embedding_type: learned\n",
            "  position_embedding_type: learned\n  mixed_precision: true\n  use_bfloat16: false\n",
        )
    )
    ds = translate(str(path), "cerebras", "deepspeed", world_size=8)
    assert json.loads(ds.dump())["fp16"]["loss_scale"] == 0
    entry = _entry(ds, "optimizer.loss_scaling_factor")
    assert entry.status is Status.LOSSY and "DynamicLossScale" in entry.detail
    same = translate(str(path), "cerebras", "cerebras")
    assert yaml.safe_load(same.dump())["optimizer"]["loss_scaling_factor"] == "dynamic"
    assert _entry(same, "optimizer.loss_scaling_factor").status is Status.LOSSY
    old = translate(str(path), "cerebras", "cerebras", target_version="1.9.1")
    assert yaml.safe_load(old.dump())["optimizer"]["loss_scaling_factor"] == "tf_dynamic"


def test_a_1x_tensorflow_fp16_run_stays_fp16_in_the_trainer_layout(tmp_path: Path) -> None:
    """1.x's TensorFlow models ran mixed precision in float16 (Keras' mixed_float16): the trainer layout
    (2.4+: bfloat16 unless fp16_type says otherwise) gets fp16_type float16, said converted."""
    path = tmp_path / "params.yaml"
    path.write_text(
        MODEL_ZOO_1X.replace(
            "  position_embedding_type: learned\n", "  position_embedding_type: learned\n  mixed_precision: true\n"
        )
    )
    done = translate(str(path), "cerebras", "cerebras", layout="trainer")
    assert done.ir.get("precision.dtype") == "fp16"
    assert done.config["trainer"]["init"]["precision"] == {"enabled": True, "fp16_type": "float16"}
    assert _entry(done, "model.mixed_precision").status is Status.CONVERTED


def test_a_list_of_val_dataloaders_in_the_legacy_layout(tmp_path: Path) -> None:
    """The legacy layout's eval_input is one mapping: the first val_dataloader is written, the rest said lost."""
    path = tmp_path / "trainer.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "trainer": {
                    "init": {
                        "model": {
                            "name": "gpt2",
                            "vocab_size": 50257,
                            "hidden_size": 768,
                            "num_hidden_layers": 12,
                            "num_heads": 12,
                            "filter_size": 3072,
                            "max_position_embeddings": 1024,
                        },
                        "optimizer": {"AdamW": {"learning_rate": 1e-4}},
                        "loop": {"max_steps": 100, "eval_frequency": 50},
                    },
                    "fit": {
                        "train_dataloader": {
                            "data_processor": "GptHDF5MapDataProcessor",
                            "data_dir": "./train",
                            "batch_size": 64,
                        },
                        "val_dataloader": [
                            {"data_processor": "GptHDF5MapDataProcessor", "data_dir": "./val1", "batch_size": 64},
                            {"data_processor": "GptHDF5MapDataProcessor", "data_dir": "./val2", "batch_size": 64},
                        ],
                    },
                }
            }
        )
    )
    done = translate(str(path), "cerebras", "cerebras", layout="legacy")
    assert yaml.safe_load(done.dump())["eval_input"]["data_dir"] == "./val1"
    entry = _entry(done, "trainer.fit.val_dataloader")
    assert entry.status is Status.LOSSY and "./val2" in entry.detail
    assert done.report.target["verified"] is True


def test_model_keys_model_zoo_2x_no_longer_reads_are_left_out_of_a_migration(tmp_path: Path) -> None:
    """From 2.4 the models' pydantic configs refuse keys they do not declare: a 1.x GPT-2's
    use_position_embedding and allow_multireplica (read until 2.0.3 and 1.9.1) are left out of a
    migration to 2.10 and named; its optimizer keys (cerebras.pytorch's, outside the key history) stay."""
    path = tmp_path / "params.yaml"
    path.write_text(
        MODEL_ZOO_1X.replace(
            "  use_position_embedding: true\n", "  use_position_embedding: true\n  allow_multireplica: false\n"
        )
    )
    done = translate(str(path), "cerebras", "cerebras", layout="trainer")
    model = done.config["trainer"]["init"]["model"]
    assert "use_position_embedding" not in model and "allow_multireplica" not in model
    for key in ("model.use_position_embedding", "model.allow_multireplica"):
        entry = _entry(done, key)
        assert entry.status is Status.DROPPED and "Cerebras Model Zoo 2.10.0 does not read" in entry.detail
    assert done.config["trainer"]["init"]["optimizer"]["adamw"]["weight_decay"] == 0.1
    kept = translate(str(path), "cerebras", "cerebras", target_version="2.0.2")
    assert yaml.safe_load(kept.dump())["model"]["use_position_embedding"] is True
