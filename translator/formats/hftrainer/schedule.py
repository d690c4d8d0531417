"""The Trainer's learning rate and schedule (learning_rate, lr_scheduler_type, warmup_steps / warmup_ratio,
lr_scheduler_kwargs), or the DeepSpeed config's own scheduler and optimizer lr when the config read with the
train file has them (transformers' deepspeed_optim_sched: a `scheduler` block replaces the Trainer's
schedule), <-> optim.lr and schedule.phases."""

from __future__ import annotations

import json
from typing import Any

from ...core.errors import InputError
from ...knowledge.formula import Approx, formula
from ...knowledge.formula import as_written, lr_only, read_phases
from ...schedule.fields import rendered
from ...schedule.model import NotRepresentable, ScheduleError
from ..deepspeed import scheduler as ds_scheduler
from . import scheduler
from .auto import fill_scheduler

TITLE = "the HF Trainer"
DEFAULT_LR = 5e-5  # TrainingArguments.learning_rate in every release read
# how a user gives the run's length of an epoch-based run (the reader's, the formulas' and the schedule's hints)
BY_SAMPLES = (
    "give --set train.epoch_samples=S (the samples of one epoch: the Trainer logs them as 'Num examples') "
    "with --world-size N"
)
STEPS_GIVEN = f"{BY_SAMPLES}, or --set train.steps=N"
STEPS_HINT = (
    "the Trainer's total steps are max_steps, or num_train_epochs x the update steps of an epoch, which "
    f"the dataset's size decides: {STEPS_GIVEN}"
)


def kwargs_of(value: Any) -> dict[str, Any]:
    """lr_scheduler_kwargs: a mapping, or its JSON text (TrainingArguments parses a str with json.loads)."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError(
                f"lr_scheduler_kwargs {value!r} is no JSON object (TrainingArguments runs json.loads on it)"
            ) from None
    if not isinstance(value, dict):
        raise ValueError(f"lr_scheduler_kwargs must be a mapping, got {value!r}")
    return dict(value)


@formula("hftrainer.lr_schedule")
class TrainerLrSchedule:
    """The lr every optimizer step gets, as get_scheduler (or DeepSpeed's scheduler) computes it."""

    @staticmethod
    def read(
        learning_rate: Any,
        lr_scheduler_type: Any,
        warmup_steps: Any,
        warmup_ratio: Any,
        lr_scheduler_kwargs: Any,
        deepspeed_scheduler_type: Any,
        deepspeed_scheduler_params: Any,
        deepspeed_optimizer_params_lr: Any,
        steps: int | None,
        version: str,
    ) -> Any:
        lr = float(DEFAULT_LR if learning_rate is None else learning_rate)
        kind = "linear" if lr_scheduler_type is None else str(lr_scheduler_type)
        try:
            warm = scheduler.warmup_steps(warmup_steps, warmup_ratio, steps, version)
        except ScheduleError as exc:
            raise ValueError(str(exc)) from None
        if deepspeed_scheduler_type is not None:
            return _deepspeed(
                lr,
                deepspeed_scheduler_type,
                deepspeed_scheduler_params,
                deepspeed_optimizer_params_lr,
                warm,
                steps,
                version,
            )
        kwargs = kwargs_of(lr_scheduler_kwargs)
        if warm is None or (steps is None and kind in scheduler.NEED_STEPS + ("warmup_stable_decay",)):
            try:  # a schedule that needs the steps: refuse what transformers refuses first
                scheduler.read(kind, lr, warm or 0, 10**9, kwargs, version)
            except NotRepresentable:
                pass
            except ScheduleError as exc:
                raise ValueError(str(exc)) from None
            return {
                "lr": lr,
                "phases": Approx(
                    None,
                    f"{kind} with {'a warmup_ratio' if warm is None else 'a decay'} "
                    f"needs the run's length: {STEPS_HINT}",
                ),
            }
        try:
            reading = scheduler.read(kind, lr, warm, steps, kwargs, version)
        except NotRepresentable as exc:
            return {"lr": lr, "phases": Approx(None, f"{exc}: no canonical schedule")}
        except ScheduleError as exc:
            raise ValueError(str(exc)) from None
        return {"lr": lr, "phases": read_phases(reading)}

    @staticmethod
    def write(lr: float | None, phases: Any, steps: int | None, version: str | None = None) -> Any:
        if phases is None:
            return lr_only({"learning_rate": lr, "lr_scheduler_type": "constant"}, lr, TITLE)
        try:
            rendering = rendered("hftrainer", lambda s: scheduler.render(s, steps, version), phases, steps, version)
        except ScheduleError as exc:
            raise InputError(f"{TITLE} cannot run this learning-rate schedule: {exc}") from None
        cfg = rendering.config
        out: dict[str, Any] = {
            "learning_rate": cfg["lr"],
            "lr_scheduler_type": cfg["kind"],
            "warmup_steps": cfg["warmup"],
        }
        if cfg["kwargs"]:
            out["lr_scheduler_kwargs"] = cfg["kwargs"]
        return as_written(out, rendering, phases, TITLE)


def _deepspeed(
    lr: float, kind: Any, params: Any, optimizer_lr: Any, warm: int | None, steps: int | None, version: str
) -> Any:
    """The DeepSpeed config's scheduler, its "auto" values filled as trainer_config_process/_finalize fill them."""
    if params is not None and not isinstance(params, dict):
        raise ValueError(f"deepspeed.scheduler.params must be a mapping, got {params!r}")
    block = {"type": kind, "params": fill_scheduler(dict(params or {}), lr, warm, steps, version)}
    block["params"].pop("last_batch_iteration", None)
    unknown = [k for k, v in block["params"].items() if v == "auto"]
    if unknown:
        return {
            "lr": lr,
            "phases": Approx(
                None,
                f'the DeepSpeed scheduler\'s {", ".join(unknown)} is "auto", which '
                f"transformers fills from the run's length: {STEPS_HINT}",
            ),
        }
    opt_lr = lr if optimizer_lr in (None, "auto") else float(optimizer_lr)
    try:
        reading = ds_scheduler.read(block, opt_lr, ds_scheduler.LATEST)
    except NotRepresentable as exc:
        return {"lr": lr, "phases": Approx(None, f"{exc}: no canonical schedule")}
    except ScheduleError as exc:
        raise ValueError(f"the DeepSpeed config's scheduler: {exc}") from None
    return {"lr": lr, "phases": read_phases(reading)}
