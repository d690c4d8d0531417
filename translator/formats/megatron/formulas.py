"""Megatron-LM's formulas (registered as `megatron.*`): the model (model.py, moe.py), the run (training.py)
and the learning-rate schedule (schedule.py)."""

from __future__ import annotations

from . import model, moe, nope, schedule, training, window  # noqa: F401  (each registers its formulas)
