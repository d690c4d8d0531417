"""GPT-NeoX's learning rate <-> the canonical schedule (AnnealingLR through scheduler.py; with
OneBitAdam, the DeepSpeed WarmupDecayLR NeoX builds instead)."""

from __future__ import annotations

from typing import Any, Iterator

from ...core.errors import InputError
from ...knowledge.formula import Approx, formula
from ...schedule.fields import finite, parse, rendered
from ...knowledge.formulas_common import as_written, lr_only, read_phases
from ...schedule.fit import decay_ends, features
from ...schedule.framework import choose
from ...schedule.model import Schedule
from ...schedule.model import ScheduleError
from ..deepspeed import scheduler as deepspeed_scheduler
from . import scheduler

TITLE = "GPT-NeoX"
# NeoX's pinned DeeperSpeed: the DeepSpeed release whose schedulers it runs (mappings/deepspeed.yaml)
DEEPERSPEED = "0.17.1"
STYLES = ("constant", "linear", "cosine", "exponential")  # lr_decay_style's Literal (neox_args.py)


def _onebitadam(lr: float, warmup: Any, lr_decay_iters: Any, steps: Any) -> Any:
    """NeoX with OneBitAdam builds no AnnealingLR: DeepSpeed's WarmupDecayLR from 0 to lr over
    int(train_iters * warmup) steps, down to 0 at lr_decay_iters or train_iters (arguments.py)."""
    if steps is None:
        return Approx(None, "NeoX's OneBitAdam needs train_iters (it asserts): its lr schedule is unknown; "
                            "give --set train.steps=N")  # fmt: skip
    # no warmup_type: DeepSpeed's default, log; DeepSpeed warms up over max(2, n) steps (0 and 1 alike)
    warm = max(1, int(steps * (0.01 if warmup is None else warmup)))
    block = {"type": "WarmupDecayLR", "params": {"warmup_min_lr": 0.0, "warmup_max_lr": lr, "warmup_num_steps": warm,
                                                 "total_num_steps": lr_decay_iters or steps}}  # fmt: skip
    return deepspeed_scheduler.read(block, lr, DEEPERSPEED).schedule.to_json()


@formula("neox.lr_schedule")
class NeoxLrSchedule:
    """optimizer.params.lr and AnnealingLR's settings <-> optim.lr and schedule.phases.

    NeoX builds its scheduler from train_iters (or lr_decay_iters): without either its lr schedule
    is unknown (the phases are left unset, and the leaves say why). What NeoX does that the config
    does not say (a `Cosine` that trains a constant lr) is said as a loss of the face value."""

    @staticmethod
    def read(optimizer_params_lr: Any, lr_decay_style: Any, min_lr: Any, warmup: Any, lr_decay_iters: Any,
             lr_decay_fraction: Any, optimizer_type: Any, steps: int | None) -> Any:  # fmt: skip
        lr = finite(optimizer_params_lr)
        lr = 0.001 if lr is None else lr
        warmup, min_lr = finite(warmup), finite(min_lr)
        if lr_decay_style is not None and str(lr_decay_style).lower() not in STYLES:  # NeoX's Literal check
            raise ValueError(f"unknown value {lr_decay_style!r}; expected one of {', '.join(STYLES)}")
        if isinstance(optimizer_type, str) and optimizer_type.lower() == "onebitadam":
            return {"lr": lr, "phases": _onebitadam(lr, warmup, lr_decay_iters, steps)}
        cfg = {"lr": lr, "lr_decay_style": lr_decay_style, "min_lr": min_lr, "warmup": warmup,
               "lr_decay_iters": lr_decay_iters, "lr_decay_fraction": lr_decay_fraction, "train_iters": steps}  # fmt: skip
        try:
            reading = scheduler.read(cfg)
        except OverflowError:
            raise OverflowError(f"warmup {warmup} of the decay steps is not a finite number of steps") from None
        except ScheduleError as exc:
            if steps is None and lr_decay_iters is None:  # NeoX cannot build its scheduler yet
                return {"lr": lr, "phases": Approx(None, f"{exc}: the lr schedule is unknown; give --set train.steps=N")}
            raise ValueError(str(exc)) from None
        return {"lr": lr, "phases": read_phases(reading)}

    @staticmethod
    def write(lr: float | None, phases: Any, steps: int | None, optimizer: str | None = None) -> Any:
        if phases is None:
            return lr_only({"optimizer_params_lr": lr}, lr, TITLE)
        if optimizer == "onebitadam":
            return _write_onebitadam(lr, phases, steps)
        try:
            rendering = rendered("neox", lambda s: scheduler.render(s, steps), phases, steps)
        except ScheduleError as exc:
            raise InputError(f"{TITLE} cannot run this learning-rate schedule: {exc}") from None
        cfg = rendering.config
        out: dict[str, Any] = {"optimizer_params_lr": cfg["lr"], "lr_decay_style": cfg["lr_decay_style"],
                               "warmup": float(cfg.get("warmup", 0.0)), "min_lr": float(cfg.get("min_lr", 0.0))}  # fmt: skip
        # lr_decay_iters always: then train_iters (the step count rule's) does not move the schedule
        out["lr_decay_iters"] = cfg.get("lr_decay_iters", cfg.get("train_iters"))
        return as_written(out, rendering, phases, TITLE)


def _write_onebitadam(lr: float | None, phases: Any, steps: int | None) -> Any:
    """With OneBitAdam NeoX runs DeepSpeed's WarmupDecayLR (from 0 to lr over int(train_iters x warmup)
    steps, log-shaped, back to 0 at lr_decay_iters or train_iters): the closest of those."""
    if steps is None:
        return Approx({"optimizer_params_lr": lr} if lr is not None else {},
                      "NeoX's OneBitAdam runs DeepSpeed's WarmupDecayLR over train_iters, which is not known: "
                      "give --set train.steps=N", ("schedule.phases",))  # fmt: skip

    def candidates(s: Schedule) -> Iterator[dict[str, Any]]:
        f = features(s, steps)
        for w in dict.fromkeys((f.peak_at, max(1, f.peak_at - 1), 0)):
            # the longest decay first: ties (a first step no WarmupDecayLR can give) keep the lr up longest
            for end in sorted({int(e) for e, _ in decay_ends(s, f)} | {steps}, reverse=True):
                yield {"lr": f.peak, "warmup": (w + 0.5) / steps if w else 0.0, "lr_decay_iters": max(1, int(end))}

    def back(c: dict[str, Any]) -> Schedule:
        return Schedule.from_json(_onebitadam(c["lr"], c["warmup"], c["lr_decay_iters"], steps))

    source = parse(phases)
    rendering = choose(source, candidates(source), back, steps)
    cfg = rendering.config
    out = {"optimizer_params_lr": cfg["lr"], "warmup": cfg["warmup"], "lr_decay_iters": cfg["lr_decay_iters"]}
    return as_written(out, rendering, phases, f"{TITLE} with OneBitAdam (DeepSpeed's WarmupDecayLR)")
