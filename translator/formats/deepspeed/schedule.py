"""DeepSpeed's optimizer lr and `scheduler` block <-> the canonical schedule (scheduler.py:
lr_schedules.py's schedulers and torch's by name)."""

from __future__ import annotations

from typing import Any

from ...core.errors import InputError
from ...knowledge.formula import Approx, Foreign, formula
from ...schedule.fields import rendered
from ...knowledge.formula import as_written, lr_only, read_phases
from ...schedule.model import NotRepresentable, ScheduleError
from . import scheduler

TITLE = "DeepSpeed"
# the table's versions (mappings/deepspeed.yaml) -> a DeepSpeed release whose schedulers behave so
RELEASES = {"current": scheduler.LATEST}


def release(version: str | None) -> str:
    return RELEASES.get(version or "current", version or scheduler.LATEST)


def _needs_optimizer_lr(block: dict[str, Any], version: str) -> bool:
    """A schedule that only scales the optimizer's lr (which the training script then sets)."""
    try:
        scheduler.read(block, 1.0, version)
    except ScheduleError:
        return False
    return True


@formula("deepspeed.lr_schedule")
class DeepspeedLrSchedule:
    """optimizer.params.lr + the scheduler block <-> optim.lr and schedule.phases.

    No scheduler: the optimizer's lr throughout. A scheduler with no canonical form (it needs a
    function, scheduler objects or a metric), or one that scales an optimizer lr this file does
    not hold, leaves the phases unset and says why; a block DeepSpeed itself refuses is an error."""

    @staticmethod
    def read(optimizer_params_lr: Any, scheduler_type: Any, scheduler_params: Any, version: str) -> Any:
        lr = None if optimizer_params_lr is None else float(optimizer_params_lr)
        if scheduler_type is None:
            if scheduler_params is not None:
                return {
                    "lr": lr,
                    "phases": Approx(None, "scheduler params without a scheduler type: DeepSpeed builds no scheduler"),
                }
            return {} if lr is None else {"lr": lr, "phases": scheduler.read(None, lr).schedule.to_json()}
        params = dict(scheduler_params) if isinstance(scheduler_params, dict) else {}
        if scheduler_params is not None and not isinstance(scheduler_params, dict):
            raise ValueError(f"scheduler.params must be a mapping, got {scheduler_params!r}")
        params.pop("last_batch_iteration", None)  # where a resumed run starts, not the schedule
        if scheduler_type not in scheduler.PARAMS and scheduler_type not in scheduler.UNBUILDABLE:
            # a name DeepSpeed and torch lack (a fork's scheduler): the schedule is unknown, the lr is not
            return {"lr": lr, "phases": Foreign(scheduler_type, [*scheduler.PARAMS], "scheduler.type")}
        block = {"type": scheduler_type, "params": params}
        ver = release(version)
        try:
            reading = scheduler.read(block, lr, ver)
        except NotRepresentable as exc:
            return {"lr": lr, "phases": Approx(None, f"{exc}: no canonical schedule")}
        except ScheduleError as exc:
            if lr is None and _needs_optimizer_lr(block, ver):
                return {
                    "phases": Approx(
                        None,
                        f"{scheduler_type} scales the optimizer's lr, which the training script "
                        "sets (this config has no optimizer lr): the schedule is unknown",
                    )
                }
            raise ValueError(str(exc)) from None
        return {"lr": lr, "phases": read_phases(reading)}

    @staticmethod
    def write(lr: float | None, phases: Any, steps: int | None, version: str | None = None) -> Any:
        if phases is None:
            return lr_only({"optimizer_params_lr": lr}, lr, TITLE)
        ver = release(version)
        try:
            rendering = rendered("deepspeed", lambda s: scheduler.render(s, steps, ver), phases, steps, ver)
        except ScheduleError as exc:
            raise InputError(f"{TITLE} cannot run this learning-rate schedule: {exc}") from None
        cfg = rendering.config
        out: dict[str, Any] = {"optimizer_params_lr": cfg["optimizer_lr"]}
        if cfg["scheduler"] is not None:
            out["scheduler_type"] = cfg["scheduler"]["type"]
            out["scheduler_params"] = cfg["scheduler"]["params"]
        return as_written(out, rendering, phases, TITLE)
