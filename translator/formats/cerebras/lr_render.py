"""The canonical schedule -> Cerebras trainer schedulers (cstorch 2.10 classes, read back by
scheduler.py to choose among them), the legacy learning_rate for them, and the formula:
Cerebras' `learning_rate` (a number, one scheduler, or a list of them: the legacy view of a trainer's
`init.schedulers`) <-> the canonical schedule."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from ...core.errors import InputError
from ...knowledge.formula import Approx, as_written, formula, lr_only, read_phases
from ...schedule.compare import max_difference
from ...schedule.fields import Rendering, choose, horizon_of, peak_lr, rendered
from ...schedule.model import NotRepresentable, Phase, Schedule, ScheduleError
from .restarts import RESTARTS
from .scheduler import read_legacy, read_trainer


def render(schedule: Schedule, steps: int | None = None) -> Rendering:
    """trainer.init.schedulers for a schedule: one class per phase in a SequentialLR, exact for every
    kind cstorch has (shifted shapes re-anchored where that is exact), or one class for a whole
    schedule of its shape (OneCycleLR); a phase no class holds is the closer of LinearLR and
    CosineDecayLR between its first and next lr."""
    horizon = horizon_of(schedule, steps)
    configs = [_per_phase(schedule, horizon), *_whole(schedule)]
    return choose(schedule, configs, lambda c: read_trainer(c).schedule, horizon)


def _per_phase(schedule: Schedule, horizon: int) -> list[dict[str, Any]]:
    phases = list(schedule.phases)
    specs: list[dict[str, Any]] = []
    for i, p in enumerate(phases):
        n = p.length
        if i == len(phases) - 1 and p.beyond == "continue" and not _runs_on(p):
            n = max(n, horizon - schedule.offsets[i])  # to the end of the run: cstorch's own tail differs
            p = _extended(p, n)
        specs.extend(_classes(p, n))
    last = phases[-1]
    if last.beyond == "hold" and not _holds_end(specs[-1], last):
        specs.append({"ConstantLR": {"learning_rate": last.end}})
    specs = [_tidy_spec(_strip_last_total(s) if k == len(specs) - 1 else s) for k, s in enumerate(specs)]
    return specs if len(specs) == 1 else [{"SequentialLR": {"schedulers": specs}}]


_COUNTS = frozenset({"total_iters", "T_max", "T_0", "step_size", "total_steps", "warmup_steps"})


def _tidy_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Numbers as a person writes them: 4e-07 (not 4.0000000000000003e-07, within 1e-15 of it), whole
    step counts as ints (T_max 49000, not 49000.0)."""
    ((name, args),) = spec.items()
    out = {}
    for key, value in args.items():
        if isinstance(value, float):
            value = float(f"{value:.15g}")
            if key in _COUNTS and value.is_integer():
                value = int(value)
        out[key] = value
    return {name: out}


def _whole(s: Schedule) -> list[list[dict[str, Any]]]:
    """One class for the whole schedule: a one-cycle (two or three anneals, the last running on)."""
    ps = list(s.phases)
    kinds = {p.kind for p in ps}
    if (
        len(ps) not in (2, 3)
        or len(kinds) != 1
        or kinds - {"cosine", "linear"}
        or ps[0].shift
        or ps[-1].beyond != "continue"
    ):
        return []
    e1 = ps[0].width
    total = e1 + sum(p.width for p in ps[1:]) + 1
    if not float(total).is_integer() or ps[-1].end <= 0:
        return []
    spec = {
        "initial_learning_rate": ps[0].start,
        "max_lr": ps[0].end,
        "total_steps": int(total),
        "pct_start": (e1 + 1) / total,
        "final_div_factor": ps[0].start / ps[-1].end,
        "three_phase": len(ps) == 3,
        "anneal_strategy": "cos" if "cosine" in kinds else "linear",
    }
    return [[{"OneCycleLR": spec}]]


def _runs_on(p: Phase) -> bool:
    """Whether the class written for p continues the shape past its length as p does."""
    if p.shift != 0 and p.kind not in ("exponential", "constant"):
        return False
    if p.kind == "cosine":
        return p.param("cycle") == "mirror"
    if p.kind == "custom":
        return p.param("form") == RESTARTS
    return p.kind in ("constant", "exponential", "inverse_sqrt", "inverse_time", "step", "cyclic")


def _extended(p: Phase, n: int) -> Phase:
    return Phase(p.kind, n, p.start, p.end, None if p.width == n else p.width, p.shift, p.params)


def _strip_last_total(spec: dict[str, Any]) -> dict[str, Any]:
    name = next(iter(spec))
    if name == "ConstantLR":
        return {name: {k: v for k, v in spec[name].items() if k != "total_iters"}}
    return spec


def _holds_end(spec: dict[str, Any], p: Phase) -> bool:
    name, args = next(iter(spec.items()))
    if name == "ConstantLR":
        return bool(args["learning_rate"] == p.end)
    if name in ("LinearLR", "CosineDecayLR", "PolynomialLR"):
        return bool(args["end_learning_rate"] == p.end)
    return False


def _classes(p: Phase, n: int) -> list[dict[str, Any]]:
    shape = p.shape()
    first, nxt = _tidy(shape.value(p.shift), p.start), _tidy(shape.value(p.shift + n), p.end)
    k, get, at_zero = p.kind, p.param, p.shift == 0
    if k == "constant":
        return [{"ConstantLR": {"learning_rate": p.start, "total_iters": n}}]
    if k == "linear" and not get("stairs") and nxt < 0 <= first:  # a line cut where it reaches 0 (NeoX's)
        return _to_zero(first, nxt, n)
    if k == "linear" and not get("stairs"):
        return [{"LinearLR": {"initial_learning_rate": first, "end_learning_rate": nxt, "total_iters": n}}]
    if k == "linear" and n // max(1, int(p.width / get("stairs"))) <= 1000:
        return _stairs(p, n)
    if k == "cosine" and at_zero and p.width == n and get("cycle") == "hold":
        return [{"CosineDecayLR": {"initial_learning_rate": p.start, "end_learning_rate": p.end, "total_iters": n}}]
    if k == "cosine" and at_zero and get("cycle") == "mirror":
        return [{"CosineAnnealingLR": {"initial_learning_rate": p.start, "T_max": p.width, "eta_min": p.end}}]
    if k == "polynomial" and at_zero and p.width == n:
        return [
            {
                "PolynomialLR": {
                    "initial_learning_rate": p.start,
                    "end_learning_rate": p.end,
                    "total_iters": n,
                    "power": get("power"),
                }
            }
        ]
    if k == "exponential" and not get("staircase"):  # shift-invariant: re-anchor at the first step
        return [
            {
                "ExponentialLR": {
                    "initial_learning_rate": first,
                    "total_iters": 1,
                    "decay_rate": get("rate") ** (1.0 / get("period")),
                    "staircase": False,
                }
            }
        ]
    if k == "exponential" and (p.shift / get("period")).is_integer() and float(get("period")).is_integer():
        return [
            {
                "ExponentialLR": {
                    "initial_learning_rate": first,
                    "total_iters": int(get("period")),
                    "decay_rate": get("rate"),
                    "staircase": True,
                }
            }
        ]
    return (_anchored_classes(p) if at_zero else []) or [_closest_class(p, n, first, nxt)]


def _anchored_classes(p: Phase) -> list[dict[str, Any]]:
    """The classes that hold a phase starting at its own step 0 exactly (none: [])."""
    k, get = p.kind, p.param
    if k == "inverse_sqrt":
        return [
            {
                "InverseSquareRootDecayLR": {
                    "initial_learning_rate": p.start * math.sqrt(get("hold")),
                    "scale": 1.0,
                    "warmup_steps": get("hold"),
                }
            }
        ]
    if k == "inverse_time" and get("staircase") and float(get("period")).is_integer():
        return [
            {
                "InverseExponentialTimeDecayLR": {
                    "initial_learning_rate": p.start,
                    "step_exponent": get("power"),
                    "total_iters": int(get("period")),
                    "decay_rate": get("rate"),
                    "staircase": True,
                }
            }
        ]
    if k == "inverse_time" and not get("staircase"):
        return [
            {
                "InverseExponentialTimeDecayLR": {
                    "initial_learning_rate": p.start,
                    "step_exponent": get("power"),
                    "total_iters": 1,
                    "decay_rate": get("rate") / get("period"),
                    "staircase": False,
                }
            }
        ]
    if k == "step" and get("step_size") is not None:
        return [{"StepLR": {"initial_learning_rate": p.start, "step_size": get("step_size"), "gamma": get("gamma")}}]
    if k == "step":
        return [
            {
                "MultiStepLR": {
                    "initial_learning_rate": p.start,
                    "gamma": get("gamma"),
                    "milestones": list(get("milestones")),
                }
            }
        ]
    if k == "cyclic":
        return [
            {
                "CyclicLR": {
                    "base_lr": p.start,
                    "max_lr": get("high"),
                    "step_size_up": get("up"),
                    "step_size_down": get("down"),
                    "mode": get("mode"),
                    "gamma": get("gamma"),
                }
            }
        ]
    if k == "custom" and get("form") == RESTARTS:
        args = get("args")
        return [
            {
                "CosineAnnealingWarmRestarts": {
                    "initial_learning_rate": args["initial"],
                    "T_0": args["T_0"],
                    "eta_min": args["eta_min"],
                }
            }
        ]
    return []


def _to_zero(first: float, nxt: float, n: int) -> list[dict[str, Any]]:
    """A falling line over n steps that would end below 0 (its last steps are cut at 0 by the next
    phase): LinearLR to 0 over the steps to its zero crossing, then 0."""
    k = max(1, round(n * first / (first - nxt)))
    head = [{"LinearLR": {"initial_learning_rate": first, "end_learning_rate": 0.0, "total_iters": k}}]
    return head + ([{"ConstantLR": {"learning_rate": 0.0, "total_iters": n - k}}] if n > k else [])


def _tidy(x: float, anchor: float) -> float:
    """The phase's own start or end where the shape evaluates to it up to float noise (1e-4, not
    1.0000000000000005e-4)."""
    return anchor if abs(x - anchor) <= 1e-12 * max(abs(x), abs(anchor)) else x


def _stairs(p: Phase, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    shape = p.shape()
    u = 0

    def at(t: int) -> float:
        return float(f"{shape.value(p.shift + t):.15g}")  # 0.0006, not 0.0006000000000000001

    while u < n:
        v = at(u)
        # the stairs are monotone: the steps at v come first; the first one past them by bisection
        # (a stair of 10^9 steps was walked step by step)
        if at(n - 1) == v:
            w = n
        else:
            lo, w = u, n - 1  # at(lo) == v != at(w)
            while w - lo > 1:
                mid = (lo + w) // 2
                lo, w = (mid, w) if at(mid) == v else (lo, mid)
        out.append({"ConstantLR": {"learning_rate": v, "total_iters": w - u}})
        u = w
    return out


def _closest_class(p: Phase, n: int, first: float, nxt: float) -> dict[str, Any]:
    target = Schedule([_extended(p, n)])
    options = [
        {"LinearLR": {"initial_learning_rate": first, "end_learning_rate": nxt, "total_iters": n}},
        {"CosineDecayLR": {"initial_learning_rate": first, "end_learning_rate": nxt, "total_iters": n}},
    ]
    # the option of the phase's own shape first: the other's search then stops as soon as it is
    # worse (a search under its cutoff is the whole search, so the choice and its ties are the same)
    order = (1, 0) if p.kind == "cosine" else (0, 1)
    best: tuple[float, int] | None = None
    for k in order:
        cutoff = best[0] if best is not None else math.inf
        score = (max_difference(target, read_trainer([options[k]]).schedule, n, cutoff).value, k)
        if best is None or score < best:
            best = score
    assert best is not None
    return options[best[1]]


def to_legacy(schedulers: Sequence[Mapping[str, Any]]) -> Any:
    """The legacy optimizer.learning_rate for a trainer schedulers list this module wrote."""
    ((name, args),) = schedulers[0].items()
    if name == "SequentialLR":
        return [{"scheduler": next(iter(s)).removesuffix("LR"), **next(iter(s.values()))} for s in args["schedulers"]]
    if name == "ConstantLR" and set(args) <= {"learning_rate"}:
        return args["learning_rate"]
    return [{"scheduler": name.removesuffix("LR"), **args}]


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
            reading = read_legacy(optimizer_learning_rate)
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
