"""DeepSpeed's `scheduler` block (deepspeed/runtime/lr_schedules.py, and any torch.optim.lr_scheduler
class the engine builds by name: engine.py _scheduler_from_config) as a canonical schedule, and back.

DeepSpeed's own schedulers are built with last_batch_iteration = -1 and stepped after each applied
optimizer step, so the t-th update uses their formula at iteration t - 1: they run one step late.
What the first update gets: since 0.15.3 the constructor writes the value at iteration -1 (WarmupLR
and WarmupDecayLR: warmup_min_lr; WarmupCosineLR: 0); before, nothing was written and the first
update used the optimizer's own lr. With W = max(2, warmup_num_steps), T = total_num_steps and
i = t - 1 (version differences noted):
  WarmupLR        warmup_min_lr + (max - min) * g(i) for i < W, then max; g = ln(i + 1) / ln(W)
                  ("log", the default; unknown types fall back to it) or i / W ("linear");
                  warmup_max_lr defaults to the optimizer's lr from 0.17.2 (0.001 before)
  WarmupDecayLR   the same warmup (warmup_max_lr default 0.001), then
                  min + (max - min) * max(0, (T - i) / max(1, T - W)): back to warmup_min_lr at t = T + 1
  WarmupCosineLR  ratios of the optimizer's lr L: warmup from warmup_min_ratio, then
                  cos_min_ratio + (1 - cos_min_ratio) * (1 + cos(pi p)) / 2, p = (i - W + 1) / max(1, T - W),
                  p clamped to 1 from 0.19.3 (before, the cosine rises again after T)
  OneCycle        no lag (the value at t uses t): min -> max over cycle_first_step_size, back over
                  cycle_second_step_size, then min / (1 + decay_lr_rate * (t - T) / decay_step_size)
                  (min held with a 0 rate or size); stair counts hold the lr on that many levels
                  per half from 0.19.4 (ignored before)
  LRRangeTest     min * (1 + rate * t / step_size) (floor(t / step_size) with staircase), no lag
torch schedulers follow torch's convention, lr(t) = f(t), and scale the optimizer's lr.
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Mapping

from ...schedule.compare import decay_ends, features, tops, warmup_ends
from ...schedule.model import NotRepresentable, Phase, Schedule, ScheduleError, phase
from ...schedule.ops import constant, finish
from ...schedule.fields import Reading, Rendering, anneals, choose, horizon_of, number, whole

LATEST = "0.19.8"
DS_SCHEDULERS = ("LRRangeTest", "OneCycle", "WarmupLR", "WarmupDecayLR", "WarmupCosineLR")
# constructor parameters and defaults, DeepSpeed's and torch's (an unknown one is a TypeError there)
PARAMS: dict[str, dict[str, Any]] = {
    "LRRangeTest": {
        "lr_range_test_min_lr": 1e-3,
        "lr_range_test_step_size": 2000,
        "lr_range_test_step_rate": 1.0,
        "lr_range_test_staircase": False,
    },
    "OneCycle": {
        "cycle_min_lr": None,
        "cycle_max_lr": None,
        "decay_lr_rate": 0.0,
        "cycle_first_step_size": 2000,
        "cycle_second_step_size": None,
        "cycle_first_stair_count": 0,
        "cycle_second_stair_count": None,
        "decay_step_size": 0,
        "cycle_momentum": True,
        "cycle_min_mom": 0.8,
        "cycle_max_mom": 0.9,
        "decay_mom_rate": 0.0,
    },
    "WarmupLR": {"warmup_min_lr": 0.0, "warmup_max_lr": None, "warmup_num_steps": 1000, "warmup_type": "log"},
    "WarmupDecayLR": {
        "total_num_steps": None,
        "warmup_min_lr": 0.0,
        "warmup_max_lr": 0.001,
        "warmup_num_steps": 1000,
        "warmup_type": "log",
    },
    "WarmupCosineLR": {
        "total_num_steps": None,
        "warmup_min_ratio": 0.0,
        "warmup_num_steps": 1000,
        "cos_min_ratio": 0.0001,
        "warmup_type": "log",
    },
    "LinearLR": {"start_factor": 1.0 / 3, "end_factor": 1.0, "total_iters": 5},
    "ConstantLR": {"factor": 1.0 / 3, "total_iters": 5},
    "ExponentialLR": {"gamma": None},
    "StepLR": {"step_size": None, "gamma": 0.1},
    "MultiStepLR": {"milestones": None, "gamma": 0.1},
    "PolynomialLR": {"total_iters": 5, "power": 1.0},
    "CosineAnnealingLR": {"T_max": None, "eta_min": 0.0},
    "CosineAnnealingWarmRestarts": {"T_0": None, "T_mult": 1, "eta_min": 0.0},
    "CyclicLR": {
        "base_lr": None,
        "max_lr": None,
        "step_size_up": 2000,
        "step_size_down": None,
        "mode": "triangular",
        "gamma": 1.0,
        "scale_fn": None,
        "scale_mode": "cycle",
        "cycle_momentum": True,
        "base_momentum": 0.8,
        "max_momentum": 0.9,
    },
    "OneCycleLR": {
        "max_lr": None,
        "total_steps": None,
        "epochs": None,
        "steps_per_epoch": None,
        "pct_start": 0.3,
        "anneal_strategy": "cos",
        "cycle_momentum": True,
        "base_momentum": 0.85,
        "max_momentum": 0.95,
        "div_factor": 25.0,
        "final_div_factor": 1e4,
        "three_phase": False,
    },
}
REQUIRED = {
    "OneCycle": ("cycle_min_lr", "cycle_max_lr"),
    "WarmupDecayLR": ("total_num_steps",),
    "WarmupCosineLR": ("total_num_steps",),
    "ExponentialLR": ("gamma",),
    "StepLR": ("step_size",),
    "MultiStepLR": ("milestones",),
    "CosineAnnealingLR": ("T_max",),
    "CosineAnnealingWarmRestarts": ("T_0",),
    "CyclicLR": ("base_lr", "max_lr"),
    "OneCycleLR": ("max_lr",),
}
# torch schedulers DeepSpeed can name but not build from JSON (they need callables, objects, a metric)
UNBUILDABLE = {
    "LambdaLR": "a function",
    "MultiplicativeLR": "a function",
    "SequentialLR": "scheduler objects",
    "ChainedScheduler": "scheduler objects",
    "ReduceLROnPlateau": "a metric at every step",
    "LRScheduler": "a subclass",
}


def version_tuple(version: str | None) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in (version or LATEST).split(".")[:3])
    except ValueError:
        return tuple(int(x) for x in LATEST.split("."))


def read(scheduler: Mapping[str, Any] | None, optimizer_lr: float | None = None, version: str | None = None) -> Reading:
    """The schedule DeepSpeed runs for its `scheduler` block (None: the optimizer's lr throughout)."""
    ver = version_tuple(version)
    if not scheduler:
        if optimizer_lr is None:
            raise ScheduleError("no scheduler and no optimizer lr: nothing says what the lr is")
        return Reading(Schedule([constant(number(optimizer_lr, "optimizer lr"), 1)]))
    kind = scheduler.get("type")
    given = dict(scheduler.get("params") or {})
    if kind in UNBUILDABLE:
        raise NotRepresentable(f"torch {kind} needs {UNBUILDABLE[kind]}: DeepSpeed cannot build it from the config")
    if kind not in PARAMS:
        raise ScheduleError(
            f"DeepSpeed does not recognize LR scheduler {kind!r} (names are case-sensitive: "
            f"{', '.join(DS_SCHEDULERS)} or a torch.optim.lr_scheduler class)"
        )
    unknown = sorted(set(given) - set(PARAMS[kind]))
    if unknown:
        raise ScheduleError(f"{kind} takes no {', '.join(unknown)} (the constructor raises TypeError)")
    missing = [k for k in REQUIRED.get(kind, ()) if given.get(k) is None]
    if missing:
        raise ScheduleError(f"{kind} needs {', '.join(missing)}")
    p = {**PARAMS[kind], **given}
    notes: list[str] = []
    if kind == "WarmupCosineLR" and ver < (0, 12, 3):
        raise ScheduleError(f"DeepSpeed {'.'.join(map(str, ver))} has no WarmupCosineLR (added in 0.12.3)")
    if kind in ("WarmupLR", "WarmupDecayLR", "WarmupCosineLR"):
        return Reading(_warmup_family(kind, p, optimizer_lr, ver, notes), tuple(notes))
    if kind == "OneCycle":
        return Reading(_one_cycle(p, ver, notes), tuple(notes))
    if kind == "LRRangeTest":
        return Reading(_range_test(p))
    if optimizer_lr is None:
        raise ScheduleError(f"torch {kind} scales the optimizer's lr, which this config does not give")
    return Reading(_torch(kind, p, number(optimizer_lr, "optimizer lr"), notes), tuple(notes))


def _warmup_type(p: dict[str, Any], notes: list[str]) -> str:
    kind = p["warmup_type"]
    if kind not in ("log", "linear"):
        notes.append(f"unknown warmup_type {kind!r}: DeepSpeed warns and uses log")
        return "log"
    return str(kind)


def _warmup_family(
    kind: str, p: dict[str, Any], optimizer_lr: float | None, ver: tuple[int, ...], notes: list[str]
) -> Schedule:
    steps = whole(p["warmup_num_steps"], "warmup_num_steps", minimum=1)
    w = max(2, steps)
    shape = _warmup_type(p, notes)
    if kind == "WarmupCosineLR":
        if optimizer_lr is None:
            raise ScheduleError("WarmupCosineLR scales the optimizer's lr, which this config does not give")
        peak = number(optimizer_lr, "optimizer lr")
        low, high, before = number(p["warmup_min_ratio"], "warmup_min_ratio") * peak, peak, 0.0
    else:
        top = p["warmup_max_lr"]
        if top is None:  # WarmupLR only: the optimizer's lr from 0.17.2, 0.001 before
            top = optimizer_lr if ver >= (0, 17, 2) else 0.001
            if top is None:
                raise ScheduleError(
                    "WarmupLR without warmup_max_lr takes the optimizer's lr, which this config does not give"
                )
        low, high = number(p["warmup_min_lr"], "warmup_min_lr"), number(top, "warmup_max_lr")
        before = low
    if ver < (0, 15, 3):  # no initial step: the first update uses the optimizer's own lr
        if optimizer_lr is None:
            raise ScheduleError(
                f"DeepSpeed {'.'.join(map(str, ver))} leaves the optimizer's lr for the first step: it is not given"
            )
        before = number(optimizer_lr, "optimizer lr")
    phases: list[Phase] = [constant(before, 1)]
    if shape == "linear":
        phases.append(phase("linear", w, low, high))
    else:
        phases.append(phase("log_warmup", w, low, high))
    if kind == "WarmupLR":
        phases.append(constant(high, 1))
        return Schedule(finish(phases))
    total = whole(p["total_num_steps"], "total_num_steps")
    if kind == "WarmupDecayLR":
        span = max(1, total - w)
        if total > w:  # from t = W + 1: max at i = W, down to min at i = T
            phases.append(phase("linear", total - w, high, low))
        phases.append(constant(low, 1))
        return Schedule(finish(phases))
    ratio = number(p["cos_min_ratio"], "cos_min_ratio", minimum=None)
    if ratio < 0:
        raise ScheduleError(f"cos_min_ratio {ratio:g} below 0 (DeepSpeed clamps the ratio at 0: not modelled)")
    low_end = ratio * high
    span = max(1, total - w) if ver >= (0, 19, 3) else total - w
    if span <= 0:
        raise ScheduleError(
            f"total_num_steps {total} <= warmup steps {w}: DeepSpeed before 0.19.3 divides by zero or runs backwards"
        )
    # the first decay step is already one step into the cosine (p = (i - W + 1) / span)
    if ver >= (0, 19, 3):
        if span > 1:
            phases.append(phase("cosine", span - 1, high, low_end, span=float(span), shift=1.0))
        phases.append(constant(low_end, 1))
        return Schedule(finish(phases))
    phases.append(phase("cosine", 1, high, low_end, span=float(span), shift=1.0, cycle="mirror", beyond="continue"))
    return Schedule(finish(phases, "continue"))


def _one_cycle(p: dict[str, Any], ver: tuple[int, ...], notes: list[str]) -> Schedule:
    low, high = number(p["cycle_min_lr"], "cycle_min_lr"), number(p["cycle_max_lr"], "cycle_max_lr")
    first = number(p["cycle_first_step_size"], "cycle_first_step_size")
    second = (
        first if p["cycle_second_step_size"] is None else number(p["cycle_second_step_size"], "cycle_second_step_size")
    )
    if first <= 0 or not first.is_integer() or not second.is_integer():
        raise ScheduleError(
            f"OneCycle step sizes {first:g} and {second:g}: whole numbers (first above 0) are supported"
        )
    up, down = int(first), int(second)
    stairs_up = whole(p["cycle_first_stair_count"], "cycle_first_stair_count")
    stairs_down = (
        stairs_up
        if p["cycle_second_stair_count"] is None
        else whole(p["cycle_second_stair_count"], "cycle_second_stair_count")
    )
    if ver < (0, 19, 4):
        if stairs_up or stairs_down:
            notes.append("stair counts are ignored before DeepSpeed 0.19.4 (the lr moves every step)")
        stairs_up = stairs_down = 0
    phases = [phase("linear", up, low, high, stairs=stairs_up or None)]
    if down:
        phases.append(phase("linear", down, high, low, stairs=stairs_down or None))
    rate, size = (
        number(p["decay_lr_rate"], "decay_lr_rate", minimum=None),
        number(p["decay_step_size"], "decay_step_size"),
    )
    if math.isclose(rate, 0.0) or math.isclose(size, 0.0):  # DeepSpeed's own test: exactly 0
        phases.append(constant(low, 1))
        return Schedule(finish(phases))
    if rate < 0:
        raise ScheduleError(f"decay_lr_rate {rate:g} below 0 makes the lr grow without bound")
    phases.append(phase("inverse_time", 1, low, rate=rate, period=size, beyond="continue"))
    return Schedule(finish(phases, "continue"))


def _range_test(p: dict[str, Any]) -> Schedule:
    low = number(p["lr_range_test_min_lr"], "lr_range_test_min_lr")
    size = whole(p["lr_range_test_step_size"], "lr_range_test_step_size", minimum=1)
    rate = number(p["lr_range_test_step_rate"], "lr_range_test_step_rate")
    stairs = 1 if p["lr_range_test_staircase"] else None
    return Schedule([phase("linear", size, low, low * (1.0 + rate), stairs=stairs, beyond="continue")])


def _torch(kind: str, p: dict[str, Any], lr: float, notes: list[str]) -> Schedule:
    if kind == "LinearLR":
        a, b = number(p["start_factor"], "start_factor"), number(p["end_factor"], "end_factor")
        if not (0 < a <= 1 and 0 <= b <= 1):
            raise ScheduleError(
                f"torch LinearLR needs 0 < start_factor <= 1 and 0 <= end_factor <= 1, got {a:g} and {b:g}"
            )
        n = whole(p["total_iters"], "total_iters", minimum=1)
        return Schedule([phase("linear", n, a * lr, b * lr), constant(b * lr, 1)])
    if kind == "ConstantLR":
        n = whole(p["total_iters"], "total_iters")
        if not 0 <= number(p["factor"], "factor") <= 1:
            raise ScheduleError(f"torch ConstantLR needs 0 <= factor <= 1, got {p['factor']!r}")
        head = [constant(number(p["factor"], "factor") * lr, n)] if n else []
        return Schedule(finish(head + [constant(lr, 1)]))
    if kind == "ExponentialLR":
        return Schedule([phase("exponential", 1, lr, rate=number(p["gamma"], "gamma"), period=1.0, beyond="continue")])
    if kind == "StepLR":
        size = whole(p["step_size"], "step_size", minimum=1)
        return Schedule(
            [phase("step", size, lr, gamma=number(p["gamma"], "gamma"), step_size=float(size), beyond="continue")]
        )
    if kind == "MultiStepLR":
        marks = sorted(whole(m, "milestones", minimum=0) for m in p["milestones"])
        return Schedule(
            [
                phase(
                    "step", max(marks + [1]), lr, gamma=number(p["gamma"], "gamma"), milestones=marks, beyond="continue"
                )
            ]
        )
    if kind == "PolynomialLR":
        n = whole(p["total_iters"], "total_iters", minimum=1)
        return Schedule([phase("polynomial", n, lr, 0.0, power=number(p["power"], "power"))])
    if kind == "CosineAnnealingLR":
        t_max = number(p["T_max"], "T_max")
        return Schedule(
            [
                phase(
                    "cosine",
                    max(1, int(t_max)),
                    lr,
                    number(p["eta_min"], "eta_min"),
                    span=t_max,
                    cycle="mirror",
                    beyond="continue",
                )
            ]
        )
    if kind == "CosineAnnealingWarmRestarts":
        if p["T_mult"] != 1:
            raise NotRepresentable(
                f"CosineAnnealingWarmRestarts with T_mult {p['T_mult']!r} (periods that grow) has no canonical form"
            )
        n = whole(p["T_0"], "T_0", minimum=1)
        return Schedule([phase("cosine", n, lr, number(p["eta_min"], "eta_min"), cycle="restart", beyond="continue")])
    if kind == "CyclicLR":
        if p["scale_fn"] is not None:
            raise NotRepresentable("CyclicLR with a scale_fn needs a function")
        up = number(p["step_size_up"], "step_size_up")
        down = up if p["step_size_down"] is None else number(p["step_size_down"], "step_size_down")
        notes.append(
            "CyclicLR replaces the optimizer's lr with base_lr; it cycles momentum too unless cycle_momentum is false"
        )
        return Schedule(
            [
                phase(
                    "cyclic",
                    max(1, int(up + down)),
                    number(p["base_lr"], "base_lr"),
                    high=number(p["max_lr"], "max_lr"),
                    up=up,
                    down=down,
                    mode=p["mode"],
                    gamma=number(p["gamma"], "gamma"),
                    beyond="continue",
                )
            ]
        )
    return _torch_one_cycle(p, notes)


def _torch_one_cycle(p: dict[str, Any], notes: list[str]) -> Schedule:
    if p["total_steps"] is not None:
        total = whole(p["total_steps"], "total_steps", minimum=1)
    elif p["epochs"] is not None and p["steps_per_epoch"] is not None:
        total = whole(p["epochs"], "epochs", minimum=1) * whole(p["steps_per_epoch"], "steps_per_epoch", minimum=1)
    else:
        raise ScheduleError("OneCycleLR needs total_steps, or epochs and steps_per_epoch")
    top = number(p["max_lr"], "max_lr")
    initial = top / number(p["div_factor"], "div_factor")
    low = initial / number(p["final_div_factor"], "final_div_factor")
    pct = number(p["pct_start"], "pct_start")
    kind = {"cos": "cosine", "linear": "linear"}.get(p["anneal_strategy"])
    if kind is None:
        raise ScheduleError(f"anneal_strategy must be cos or linear, got {p['anneal_strategy']!r}")
    if p["three_phase"]:
        marks = [(pct * total - 1, initial, top), (2 * pct * total - 2, top, initial), (total - 1, initial, low)]
    else:
        marks = [(pct * total - 1, initial, top), (total - 1, top, low)]
    notes.append(f"torch's OneCycleLR raises after {total} steps (total_steps)")
    return Schedule(finish(anneals(kind, marks), "continue"))


# ---- canonical -> DeepSpeed ----------------------------------------------------------------------
def render(schedule: Schedule, steps: int | None = None, version: str | None = None) -> Rendering:
    """A DeepSpeed config: {"scheduler": {...} or None, "optimizer_lr": L}. Exact when one of its
    schedulers (or torch's, by name) runs the schedule; else the closest."""
    horizon = horizon_of(schedule, steps)

    def back(config: dict[str, Any]) -> Schedule:
        return read(config["scheduler"], config["optimizer_lr"], version).schedule

    return choose(schedule, _candidates(schedule, horizon, version), back, horizon)


def _candidates(s: Schedule, horizon: int, version: str | None) -> Iterator[dict[str, Any]]:
    f = features(s, horizon)
    yield {"scheduler": None, "optimizer_lr": f.peak}
    yield from _direct(s, f.peak)
    ends = decay_ends(s, f)
    # the warmup's start: lr(0), or lr(1) where lr(0) is the optimizer's own (DeepSpeed before 0.15.3)
    starts = list(dict.fromkeys((f.first, s.value(1))))
    early = version_tuple(version) < (0, 15, 3)  # the optimizer's own lr is the first step's
    for top in tops(s, f):
        lrs = list(dict.fromkeys((top, f.first) if early else (top,)))
        warm = sorted({w + d for w in warmup_ends(s, f) for d in (-1, 0, 1) if w + d >= 1})
        for shape in ("linear", "log"):
            for w in warm:
                yield from _warmup_candidates(top, shape, w, starts, ends, lrs)


def _warmup_candidates(
    top: float, shape: str, w: int, starts: list[float], ends: list[tuple[int, float]], lrs: list[float]
) -> Iterator[dict[str, Any]]:
    base = {"warmup_num_steps": w, "warmup_type": shape}
    for first in starts:
        for lr in lrs:
            yield {
                "scheduler": {"type": "WarmupLR", "params": {**base, "warmup_min_lr": first, "warmup_max_lr": top}},
                "optimizer_lr": lr,
            }
    for end, low in dict.fromkeys(ends):
        for total in (end, end - 1):
            if total < 1:
                continue
            for first in starts:
                yield {
                    "scheduler": {
                        "type": "WarmupCosineLR",
                        "params": {
                            **base,
                            "total_num_steps": total,
                            "warmup_min_ratio": first / top if top else 0.0,
                            "cos_min_ratio": low / top if top else 0.0,
                        },
                    },
                    "optimizer_lr": top,
                }
            for start in dict.fromkeys((low, *starts)):
                for lr in lrs:
                    yield {
                        "scheduler": {
                            "type": "WarmupDecayLR",
                            "params": {**base, "total_num_steps": total, "warmup_min_lr": start, "warmup_max_lr": top},
                        },
                        "optimizer_lr": lr,
                    }


def _direct(s: Schedule, top: float) -> Iterator[dict[str, Any]]:
    """torch schedulers that hold a one-shape schedule exactly (no lag)."""
    ps = [p for p in s.phases]
    head = ps[0]
    if top <= 0:
        return
    if (
        len(ps) <= 2
        and head.kind == "linear"
        and head.shift == 0
        and head.span is None
        and 0 < head.start <= top
        and (len(ps) == 1 or ps[1].kind == "constant")
    ):
        yield {
            "scheduler": {
                "type": "LinearLR",
                "params": {"start_factor": head.start / top, "end_factor": head.end / top, "total_iters": head.length},
            },
            "optimizer_lr": top,
        }
    if len(ps) == 2 and all(p.kind == "constant" for p in ps) and ps[0].start <= ps[1].start:
        yield {
            "scheduler": {
                "type": "ConstantLR",
                "params": {"factor": ps[0].start / ps[1].start, "total_iters": ps[0].length},
            },
            "optimizer_lr": ps[1].start,
        }
    if len(ps) == 1 and head.shift == 0:
        yield from _one_phase(head)
    yield from _one_cycle_candidates(s)


def _one_phase(p: Phase) -> Iterator[dict[str, Any]]:
    """torch schedulers that hold a schedule of one unshifted phase exactly."""
    if p.kind == "cosine" and p.param("cycle") in ("mirror", "hold"):
        yield {
            "scheduler": {"type": "CosineAnnealingLR", "params": {"T_max": p.width, "eta_min": p.end}},
            "optimizer_lr": p.start,
        }
    if p.kind == "cosine" and p.param("cycle") == "restart" and float(p.width).is_integer():
        yield {
            "scheduler": {"type": "CosineAnnealingWarmRestarts", "params": {"T_0": int(p.width), "eta_min": p.end}},
            "optimizer_lr": p.start,
        }
    if p.kind == "exponential" and not p.param("staircase"):
        yield {
            "scheduler": {
                "type": "ExponentialLR",
                "params": {"gamma": p.param("rate") ** (1.0 / p.param("period"))},
            },
            "optimizer_lr": p.start,
        }
    if p.kind == "step" and p.param("step_size") is not None and float(p.param("step_size")).is_integer():
        yield {
            "scheduler": {
                "type": "StepLR",
                "params": {"step_size": int(p.param("step_size")), "gamma": p.param("gamma")},
            },
            "optimizer_lr": p.start,
        }
    if p.kind == "step" and p.param("milestones") is not None:
        yield {
            "scheduler": {
                "type": "MultiStepLR",
                "params": {"milestones": list(p.param("milestones")), "gamma": p.param("gamma")},
            },
            "optimizer_lr": p.start,
        }
    if p.kind == "polynomial" and p.end == 0.0 and float(p.width).is_integer():
        yield {
            "scheduler": {
                "type": "PolynomialLR",
                "params": {"total_iters": int(p.width), "power": p.param("power")},
            },
            "optimizer_lr": p.start,
        }
    if p.kind == "cyclic":
        yield {
            "scheduler": {
                "type": "CyclicLR",
                "params": {
                    "base_lr": p.start,
                    "max_lr": p.param("high"),
                    "step_size_up": p.param("up"),
                    "step_size_down": p.param("down"),
                    "mode": p.param("mode"),
                    "gamma": p.param("gamma"),
                    "cycle_momentum": False,
                },
            },
            "optimizer_lr": p.start,
        }
    if p.kind == "linear" and p.beyond == "continue" and p.end >= p.start and p.start > 0:
        yield {
            "scheduler": {
                "type": "LRRangeTest",
                "params": {
                    "lr_range_test_min_lr": p.start,
                    "lr_range_test_step_size": p.length,
                    "lr_range_test_step_rate": (p.end - p.start) / p.start * p.length / p.width,
                    "lr_range_test_staircase": bool(p.param("stairs")),
                },
            },
            "optimizer_lr": p.start,
        }


def _one_cycle_candidates(s: Schedule) -> Iterator[dict[str, Any]]:
    ps = list(s.phases)
    if len(ps) < 2 or ps[0].kind != "linear" or ps[0].shift or ps[0].span is not None:
        return
    up = ps[0]
    down = ps[1] if ps[1].kind == "linear" and not ps[1].shift and ps[1].span is None else None
    params: dict[str, Any] = {
        "cycle_min_lr": up.start,
        "cycle_max_lr": up.end,
        "cycle_first_step_size": up.length,
        "cycle_second_step_size": down.length if down else 0,
        "cycle_momentum": False,
    }
    params["cycle_first_stair_count"] = up.param("stairs") or 0
    params["cycle_second_stair_count"] = (down.param("stairs") if down else None) or 0
    tail = ps[2 if down else 1] if len(ps) > (2 if down else 1) else None
    if tail is not None and tail.kind == "inverse_time":
        params.update(decay_lr_rate=tail.param("rate"), decay_step_size=tail.param("period"))
    yield {"scheduler": {"type": "OneCycle", "params": params}, "optimizer_lr": up.end}
