"""A DeepSpeed config full of "auto" (the HF Trainer's placeholders) is probed the way transformers fills
it: neoconv's hftrainer format fills the values (formats/hftrainer/auto.py: the TrainingArguments the
stated values imply, else their defaults; the run's length from the other file), the DeepSpeed probe
puts them in before DeepSpeed reads the config, and the certificate says which values came from the
fill. The real DeepSpeed run on such a file is in the oracle tier (tests/test_prove_oracle.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from neoconv.prove.certificate import Certificate, Side
from neoconv.prove.hints import hints
from neoconv.prove.runner import ProbeAnswer

AUTO_CONFIG = {
    "train_batch_size": "auto",
    "train_micro_batch_size_per_gpu": "auto",
    "gradient_accumulation_steps": "auto",
    "gradient_clipping": "auto",
    "fp16": {"enabled": "auto"},
    "optimizer": {"type": "AdamW", "params": {"lr": "auto", "weight_decay": "auto"}},
    "scheduler": {
        "type": "WarmupDecayLR",
        "params": {
            "warmup_min_lr": "auto",
            "warmup_max_lr": 3e-4,
            "warmup_num_steps": "auto",
            "total_num_steps": "auto",
        },
    },
    "zero_optimization": {"stage": 2, "reduce_bucket_size": "auto"},
}


def jobs(tmp_path: Path, config: dict[str, Any], steps: int | None = 100) -> dict[str, Any]:
    ds = tmp_path / "ds.json"
    ds.write_text(json.dumps(config))
    other = tmp_path / "run.yml"
    other.write_text(f'{{"train_iters": {steps}}}\n' if steps else "{}\n")
    job, _ = hints([str(ds)], "deepspeed", [str(other)], "neox", 8)
    return job


def test_every_auto_is_filled_as_transformers_fills_it(tmp_path: Path) -> None:
    job = jobs(tmp_path, AUTO_CONFIG)
    assert job["fill"] == {
        "train_micro_batch_size_per_gpu": 8,  # TrainingArguments defaults
        "gradient_accumulation_steps": 1,
        "gradient_clipping": 1.0,
        "optimizer.params.lr": 3e-4,  # the learning rate the stated warmup_max_lr implies (transformers checks both)
        "optimizer.params.weight_decay": 0.0,
        "scheduler.params.warmup_min_lr": 0,
        "fp16.enabled": False,
        "train_batch_size": 8 * 8 * 1,  # world size x micro batch x accumulation
        "scheduler.params.total_num_steps": 100,  # the other file's run length
        "scheduler.params.warmup_num_steps": 1,  # max(1, no warmup)
        "zero_optimization.reduce_bucket_size": None,  # the model's size decides it: DeepSpeed's default stands in
    }
    why = job["fill_why"]
    assert set(why) == set(job["fill"])
    assert (
        "the value the config states" in why["optimizer.params.lr"]
        and "default" in why["train_micro_batch_size_per_gpu"]
    )


def test_a_stated_value_is_the_training_argument_filling_the_others(tmp_path: Path) -> None:
    config = {**AUTO_CONFIG, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 16}
    job = jobs(tmp_path, config)
    assert job["fill"]["train_batch_size"] == 8 * 4 * 16
    assert "train_micro_batch_size_per_gpu" not in job["fill"]


def test_without_a_run_length_the_scheduler_keeps_its_auto(tmp_path: Path) -> None:
    job = jobs(tmp_path, AUTO_CONFIG, steps=None)
    assert "scheduler.params.total_num_steps" not in job["fill"] and job["fill"]["train_batch_size"] == 64


def test_a_config_without_auto_or_one_transformers_refuses_is_probed_as_it_is(tmp_path: Path) -> None:
    assert "fill" not in jobs(tmp_path, {"train_batch_size": 64, "train_micro_batch_size_per_gpu": 8})
    # two stated learning rates: no TrainingArguments hold both (transformers refuses the pair)
    refused = {**AUTO_CONFIG, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "weight_decay": "auto"}}}
    assert "fill" not in jobs(tmp_path, refused)


def test_the_certificate_says_which_values_came_from_the_fill() -> None:
    filled = {
        "train_micro_batch_size_per_gpu": {"value": 8, "from": "TrainingArguments per_device_train_batch_size"},
        "zero_optimization.reduce_bucket_size": {"value": None, "from": "the model's size"},
    }
    a = {"probe": "deepspeed", "accepted": True, "filled": filled, "stubs": [], "notes": []}
    b = {"probe": "neox", "accepted": True, "stubs": [], "notes": []}
    cert = Certificate(
        Side("ds.json", "deepspeed", ProbeAnswer("deepspeed", a)), Side("o.yml", "neox", ProbeAnswer("neox", b)), 8
    )
    lines = [line for line in cert.render().splitlines() if line.startswith('"auto" filled A')]
    assert lines == [
        '"auto" filled A as transformers fills it (TrainingArguments implied or default): '
        "train_micro_batch_size_per_gpu=8, zero_optimization.reduce_bucket_size=None"
    ]
    assert cert.to_json()["a"]["result"]["filled"] == filled
