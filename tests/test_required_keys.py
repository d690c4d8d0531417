"""Issue 16: keys the target's own validation requires are written when derivable, else reported
`missing` with the exact --set that gives them (Model Zoo's optimizer_type, data_processor and
data_dir; VeOmni's data.train_path)."""

from __future__ import annotations

from typing import Any

import pytest

from neoconv import translate
from neoconv.core.report import Status

BATCH = {"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4}


def _missing(done: Any) -> dict[str, str]:
    return {e.target_key: e.detail for e in done.report.entries if e.status is Status.MISSING}


@pytest.mark.parametrize("optimizer", [None, {"type": "OneBitAdam", "params": {"lr": 1e-3}}])
def test_a_deepspeed_source_without_a_cerebras_optimizer_says_optimizer_type_is_missing(optimizer: Any) -> None:
    # Model Zoo's legacy -> trainer converter reads optimizer["optimizer_type"]: KeyError without it
    source = {**BATCH, **({"optimizer": optimizer} if optimizer else {})}
    done = translate(source, "deepspeed", "cerebras")
    assert "optimizer_type" not in done.config["optimizer"]
    assert "--set optim.type=adamw" in _missing(done)["optimizer.optimizer_type"]
    given = translate(source, "deepspeed", "cerebras", set_values={"optim.type": "adamw"})
    assert given.config["optimizer"]["optimizer_type"] == "AdamW"
    assert "optimizer.optimizer_type" not in _missing(given)
    trainer = translate(source, "deepspeed", "cerebras", layout="trainer")  # named at its trainer path
    assert "--set optim.type=adamw" in _missing(trainer)["trainer.init.optimizer.optimizer_type"]


def test_model_zoo_data_keys_and_veomni_train_path_are_missing_and_can_be_given() -> None:
    source = {**BATCH, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}
    missing = _missing(translate(source, "deepspeed", "cerebras"))
    assert {"train_input.data_processor", "train_input.data_dir"} <= set(missing)
    trainer = _missing(translate(source, "deepspeed", "cerebras", layout="trainer"))
    assert {"trainer.fit.train_dataloader.data_processor", "trainer.fit.train_dataloader.data_dir"} <= set(trainer)
    veomni = translate(source, "deepspeed", "veomni", world_size=8)
    assert "data.train_path" in _missing(veomni)
    given = translate(source, "deepspeed", "veomni", world_size=8, target_values={"data.train_path": "/data/train"})
    assert given.config["data"]["train_path"] == "/data/train" and "data.train_path" not in _missing(given)


# ---- the model name: Model Zoo 2.4+ validate.py raises KeyError "Model configuration must have a
# 'name' key"; its legacy converter carries a legacy file's model.* (name included) to trainer.init.model


def test_a_legacy_output_names_its_model_from_model_zoo_2_4_on() -> None:
    neox = {
        **BATCH,
        "num_layers": 2,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "pos_emb": "rotary",
        "norm": "rmsnorm",
        "activation": "swiglu",
        "gpt_j_residual": False,
    }
    done = translate(neox, "neox", "cerebras")
    assert done.config["model"]["name"] == "llama"
    old = translate(neox, "neox", "cerebras", target_version="2.3.1")  # before 2.4 the run.py was the model
    assert "name" not in old.config["model"]
    assert "model.name" not in _missing(old)


def test_a_trainer_file_keeps_its_model_name_in_the_legacy_layout() -> None:
    trainer = {
        "trainer": {
            "init": {
                "model": {"name": "bert", "vocab_size": 30522, "hidden_size": 768},
                "optimizer": {"AdamW": {"learning_rate": 1e-4}},
            },
            "fit": {
                "train_dataloader": {
                    "data_processor": "BertCSVDynamicMaskDataProcessor",
                    "data_dir": "./d",
                    "batch_size": 256,
                }
            },
        }
    }
    done = translate(trainer, "cerebras", "cerebras", layout="legacy")
    assert done.config["model"]["name"] == "bert"
    assert not any(e.source_key == "trainer.init.model.name" for e in done.report.entries if e.status is Status.DROPPED)
    old = translate(trainer, "cerebras", "cerebras", layout="legacy", target_version="2.3.1")
    assert "name" not in old.config["model"]
    dropped = [e for e in old.report.entries if e.source_key == "trainer.init.model.name"]
    assert dropped and dropped[0].status is Status.DROPPED and "before Model Zoo 2.4.0" in dropped[0].detail


@pytest.mark.parametrize(("layout", "key"), [("legacy", "model.name"), ("trainer", "trainer.init.model.name")])
def test_a_source_that_names_no_model_says_the_name_is_missing(layout: str, key: str) -> None:
    source = {**BATCH, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}  # a DeepSpeed JSON: no model
    missing = _missing(translate(source, "deepspeed", "cerebras", layout=layout))
    assert "give --set model.family=NAME" in missing[key]
    given = translate(source, "deepspeed", "cerebras", layout=layout, set_values={"model.family": "llama"})
    model = given.config["model"] if layout == "legacy" else given.config["trainer"]["init"]["model"]
    assert model["name"] == "llama" and key not in _missing(given)
    old = translate(source, "deepspeed", "cerebras", layout=layout, target_version="2.3.1")
    assert key not in _missing(old)


# ---- a global batch below the world size (Model Zoo's mistral 7B: batch_size 4) has no micro batch


@pytest.mark.parametrize("target", ["deepspeed", "neox"])
def test_a_global_batch_below_the_world_size_is_missing_with_its_remedy(target: str) -> None:
    source = {
        "train_input": {"batch_size": 4, "data_processor": "GptHDF5MapDataProcessor", "data_dir": "./d"},
        "model": {"hidden_size": 64, "num_hidden_layers": 2, "num_heads": 4},
        "optimizer": {"optimizer_type": "AdamW", "learning_rate": 3e-4},
    }
    done = translate(source, "cerebras", target, world_size=8)
    assert "train_batch_size" not in done.config and "train_micro_batch_size_per_gpu" not in done.config
    why = _missing(done)["train_batch_size"]
    assert "the global batch 4 does not split over 8 data-parallel ranks (world 8)" in why
    assert "--set batch.global=8" in why and "--world-size N" in why
    fits = translate(source, "cerebras", target, world_size=4)  # the remedy: a run it splits over
    assert (fits.config["train_batch_size"], fits.config["train_micro_batch_size_per_gpu"]) == (4, 1)
    assert fits.config.get("gradient_accumulation_steps", 1) == 1 and "train_batch_size" not in _missing(fits)
