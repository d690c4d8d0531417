"""Cerebras' `learning_rate` (a number, one scheduler, or a list of them: the legacy view of a
trainer's `init.schedulers`) <-> the canonical schedule (scheduler.py, scheduler_render.py)."""

from __future__ import annotations

from typing import Any

from ...core.errors import InputError
from ...knowledge.formula import Approx, formula
from ...schedule.fields import peak_lr, rendered
from ...knowledge.formulas_common import as_written, lr_only, read_phases
from ...schedule.model import NotRepresentable, ScheduleError
from . import scheduler
from .scheduler_render import render, to_legacy

TITLE = "Cerebras Model Zoo"


@formula("cerebras.lr_schedule")
class CerebrasLrSchedule:
    """optimizer.learning_rate <-> schedule.phases; Cerebras' optimizer has no lr of its own beside
    its schedulers: optim.lr is the schedule's peak."""

    @staticmethod
    def read(optimizer_learning_rate: Any) -> Any:
        if optimizer_learning_rate is None:
            return {}
        try:
            reading = scheduler.read_legacy(optimizer_learning_rate)
        except NotRepresentable as exc:
            return {"phases": Approx(None, f"{exc}: no canonical schedule")}
        except ScheduleError as exc:
            raise ValueError(str(exc)) from None
        return {"lr": peak_lr(reading.schedule), "phases": read_phases(reading)}

    @staticmethod
    def write(lr: float | None, phases: Any, steps: int | None) -> Any:
        if phases is None:
            return lr_only({"optimizer_learning_rate": lr}, lr, TITLE)
        try:
            rendering = rendered("cerebras", lambda s: render(s, steps), phases, steps)
        except ScheduleError as exc:
            raise InputError(f"{TITLE} cannot run this learning-rate schedule: {exc}") from None
        out = {"optimizer_learning_rate": to_legacy(rendering.config)}
        return as_written(out, rendering, phases, TITLE)
