"""Issue 16: keys the target's own validation requires are written when derivable, else reported
`missing` with the exact --set that gives them (Model Zoo's optimizer_type, data_processor and
data_dir; VeOmni's data.train_path)."""

from __future__ import annotations

from typing import Any

import pytest

from translator import translate
from translator.report import Status

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
