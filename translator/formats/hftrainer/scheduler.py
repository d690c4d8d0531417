"""The Hugging Face Trainer's learning-rate schedules (transformers/optimization.py `get_scheduler` and its
schedule functions; `TrainingArguments.get_warmup_steps`) as canonical phases, and back.

Every schedule but reduce_lr_on_plateau and greedy is a torch LambdaLR: built at last_epoch -1 (which sets
lr = L * f(0) at once) and stepped after each optimizer step (Trainer, or DeepSpeed's engine), so the t-th
update (t = 0 first) uses L * f(t): no lag. With W warmup steps and N total steps (f, from 5.23.0; 4.x alike
unless said):
  linear                t / max(1, W) for t < W, then max(0, (N - t) / max(1, N - W))
  cosine                warmup, then max(0, (1 + cos(2 pi c p)) / 2), p = (t - W) / max(1, N - W), c = num_cycles 0.5
                        (not clamped at p = 1: past N it rises again)
  cosine_with_restarts  warmup, then 0 for p >= 1, else max(0, (1 + cos(pi ((c p) mod 1))) / 2), c = 1
  polynomial            warmup, then lr_end + (L - lr_end) (1 - (t - W) / (N - W)) ** power for t <= N, lr_end after
                        (lr_end 1e-7, power 1; ValueError unless L > lr_end)
  constant              1;  constant_with_warmup: warmup, then 1
  inverse_sqrt          warmup, then 1 / sqrt((t + s - W) / s), s = timescale (default W, or 10000 without warmup)
  cosine_with_min_lr    cosine's factor * (1 - r) + r, r = min_lr_rate or min_lr / L (exactly one given); 4.41+
  cosine_warmup_with_min_lr (4.57+)  warmup (t + 1) / max(1, W) (or r0 + (1 - r0) t / max(1, W - 1) with
                        warmup_lr_rate r0), then the same with p = (t - W + 1) / max(1, N - W)
  warmup_stable_decay   4.41-4.46: warmup, 1 for num_stable_steps, cosine to min_lr_ratio over num_decay_steps, then
                        min_lr_ratio; later: warmup and decay linear / cosine / 1-sqrt, from and to min_lr_ratio, the stable
                        part N - W - D when num_stable_steps is not given
  reduce_lr_on_plateau, greedy: decided by a metric at every step (no canonical form)
Warmup steps: 4.x: warmup_steps if > 0, else ceil(N * warmup_ratio); 5.x: int(warmup_steps) if >= 1, else
ceil(N * warmup_steps) (5.0-5.10 take a warmup_ratio given as warmup_steps, which wins over warmup_steps).
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Mapping

from ...schedule.compare import piece_starts
from ...schedule.compare import decay_ends, features, tops, warmup_ends
from ...schedule.fields import Reading, Rendering, choose, horizon_of, number, whole
from ...schedule.model import NotRepresentable, Phase, Schedule, ScheduleError, phase
from ...schedule.ops import constant, finish

LATEST = "5.23.0"
KINDS = (
    "linear",
    "cosine",
    "cosine_with_restarts",
    "polynomial",
    "constant",
    "constant_with_warmup",
    "inverse_sqrt",
    "reduce_lr_on_plateau",
    "cosine_with_min_lr",
    "cosine_warmup_with_min_lr",
    "warmup_stable_decay",
    "greedy",
)
SINCE = {
    "cosine_with_min_lr": (4, 38),
    "warmup_stable_decay": (4, 38),
    "cosine_warmup_with_min_lr": (4, 57),
    "greedy": (5, 10),
}
NEED_STEPS = (
    "linear",
    "cosine",
    "cosine_with_restarts",
    "polynomial",
    "cosine_with_min_lr",
    "cosine_warmup_with_min_lr",
)
# each schedule function's keyword arguments (lr_scheduler_kwargs) and defaults; another is a TypeError there
KWARGS: dict[str, dict[str, Any]] = {
    "linear": {},
    "constant": {},
    "constant_with_warmup": {},
    "cosine": {"num_cycles": 0.5},
    "cosine_with_restarts": {"num_cycles": 1},
    "polynomial": {"lr_end": 1e-7, "power": 1.0},
    "inverse_sqrt": {"timescale": None},
    "cosine_with_min_lr": {"num_cycles": 0.5, "min_lr": None, "min_lr_rate": None},
    "cosine_warmup_with_min_lr": {"num_cycles": 0.5, "min_lr": None, "min_lr_rate": None, "warmup_lr_rate": None},
    "warmup_stable_decay": {
        "num_stable_steps": None,
        "num_decay_steps": None,
        "warmup_type": "linear",
        "decay_type": "cosine",
        "min_lr_ratio": 0.0,
        "num_cycles": 0.5,
    },
}
OLD_WSD = {"num_stable_steps", "num_decay_steps", "min_lr_ratio", "num_cycles"}  # get_wsd_schedule before 4.51


def version_tuple(version: str | None) -> tuple[int, ...]:
    text = LATEST if version in (None, "current") else str(version)
    try:
        return tuple(int(x) for x in text.split(".")[:3])
    except ValueError:
        return tuple(int(x) for x in LATEST.split("."))


def warmup_steps(steps: Any, ratio: Any, total: int | None, version: str | None) -> int | None:
    """TrainingArguments.get_warmup_steps (None: it needs the total steps, which are unknown)."""
    ver = version_tuple(version)
    if ver >= (5, 0) and ratio is not None and ver < (5, 11):
        steps = ratio  # 5.0-5.10: __post_init__ sets warmup_steps = warmup_ratio
        ratio = None
    steps = 0 if steps is None else number(steps, "warmup_steps")
    if ver < (5, 0):
        if steps > 0:
            return whole(steps, "warmup_steps")
        share = number(ratio or 0.0, "warmup_ratio")
        if share < 0 or share > 1:
            raise ScheduleError(f"warmup_ratio must lie in range [0,1], got {share:g}")
        return 0 if share == 0 else (None if total is None else math.ceil(total * share))
    if steps >= 1:
        return int(steps)
    return 0 if steps == 0 else (None if total is None else math.ceil(total * steps))


def read(
    kind: str, lr: float, warmup: int, total: int | None, kwargs: Mapping[str, Any] | None, version: str | None = None
) -> Reading:
    """The schedule get_scheduler builds (W = warmup, N = total)."""
    ver = version_tuple(version)
    if kind in ("reduce_lr_on_plateau", "greedy"):
        raise NotRepresentable(f"{kind} lowers the lr when a metric stops improving: no closed form")
    if kind not in KWARGS:
        raise ScheduleError(f"{kind!r} is not a SchedulerType ({', '.join(KINDS)})")
    if kind in SINCE and ver < SINCE[kind]:
        raise ScheduleError(f"{kind} is not a SchedulerType of transformers {'.'.join(map(str, ver))}")
    given = dict(kwargs or {})
    known = OLD_WSD if kind == "warmup_stable_decay" and ver < (4, 51) else set(KWARGS[kind])
    if kind != "constant" and set(given) - known:  # get_scheduler passes no kwargs to constant
        raise ScheduleError(f"{kind} takes no {', '.join(sorted(set(given) - known))} (TypeError in get_scheduler)")
    p = {**KWARGS[kind], **given} if kind != "constant" else {}
    lr = number(lr, "learning_rate")
    if kind in NEED_STEPS and total is None:
        raise ScheduleError(f"{kind} needs the run's total steps")
    if kind == "constant":
        return Reading(Schedule([constant(lr, 1)]))
    head = _warmup(lr, warmup, kind, p)
    n = total if total is not None else 0
    decay = max(1, n - warmup)
    if kind == "constant_with_warmup":
        return Reading(Schedule(finish(head + [constant(lr, 1)])))
    if kind == "linear":
        tail = [phase("linear", n - warmup, lr, 0.0)] if n > warmup else []
        return Reading(Schedule(finish(head + tail + [constant(0.0, 1)])))
    if kind in ("cosine", "cosine_with_min_lr", "cosine_warmup_with_min_lr"):
        low = _min_lr(p, lr) if kind != "cosine" else 0.0
        return Reading(
            Schedule(
                finish(
                    head
                    + [_cosine(lr, low, decay, p["num_cycles"], 1.0 if kind == "cosine_warmup_with_min_lr" else 0.0)],
                    "continue",
                )
            )
        )
    if kind == "cosine_with_restarts":
        cycles = number(p["num_cycles"], "num_cycles")
        if cycles <= 0:
            raise ScheduleError(f"num_cycles {cycles:g}: not modelled (the lr would be the peak throughout)")
        tail = [phase("cosine", n - warmup, lr, 0.0, span=decay / cycles, cycle="restart")] if n > warmup else []
        return Reading(Schedule(finish(head + tail + [constant(0.0, 1)])))
    if kind == "polynomial":
        end, power = number(p["lr_end"], "lr_end"), number(p["power"], "power")
        if not lr > end:
            raise ScheduleError(f"lr_end ({end:g}) must be smaller than initial lr ({lr:g})")
        if n <= warmup:
            raise ScheduleError("polynomial with no decay steps divides by zero at the end of the warmup")
        return Reading(Schedule(finish(head + [phase("polynomial", n - warmup, lr, end, power=power)])))
    if kind == "inverse_sqrt":
        scale = p["timescale"] if p["timescale"] is not None else (warmup or 10_000)
        scale = number(scale, "timescale")
        return Reading(Schedule(finish(head + [phase("inverse_sqrt", 1, lr, shift=scale, hold=scale)], "continue")))
    return Reading(_wsd(lr, warmup, total, p, ver))


def _warmup(lr: float, w: int, kind: str, p: Mapping[str, Any]) -> list[Phase]:
    if w <= 0:
        return []
    if kind == "cosine_warmup_with_min_lr":
        if p["warmup_lr_rate"] is None:  # (t + 1) / max(1, W)
            return [phase("linear", w, lr / w, lr * (w + 1) / w, span=float(w))]
        r0 = number(p["warmup_lr_rate"], "warmup_lr_rate", minimum=None)
        return [phase("linear", w, r0 * lr, lr, span=float(max(1, w - 1)))]
    if kind == "warmup_stable_decay":
        return []  # its own warmup (_wsd)
    return [phase("linear", w, 0.0, lr)]


def _min_lr(p: Mapping[str, Any], lr: float) -> float:
    if p["min_lr"] is not None and p["min_lr_rate"] is not None:
        raise ScheduleError("Only one of min_lr or min_lr_rate should be set")
    if p["min_lr"] is not None:
        return number(p["min_lr"], "min_lr")
    if p["min_lr_rate"] is None:
        raise ScheduleError("One of min_lr or min_lr_rate should be set through the `lr_scheduler_kwargs`")
    return number(p["min_lr_rate"], "min_lr_rate") * lr


def _cosine(high: float, low: float, decay: int, cycles: Any, shift: float) -> Phase:
    """(1 + cos(2 pi c p)) / 2 between high and low, p = (s + shift) / decay, run on past the decay."""
    c = number(cycles, "num_cycles")
    if c <= 0:
        raise ScheduleError(f"num_cycles {c:g}: not modelled (the lr would be the peak throughout)")
    return phase("cosine", decay, high, low, span=decay / (2 * c), shift=shift, cycle="mirror", beyond="continue")


def _wsd(lr: float, w: int, total: int | None, p: Mapping[str, Any], ver: tuple[int, ...]) -> Schedule:
    if p["num_decay_steps"] is None:
        raise ScheduleError("warmup_stable_decay needs num_decay_steps (lr_scheduler_kwargs)")
    d = whole(p["num_decay_steps"], "num_decay_steps")
    ratio = number(p["min_lr_ratio"], "min_lr_ratio")
    old = ver < (4, 51)
    if p["num_stable_steps"] is not None:
        s = whole(p["num_stable_steps"], "num_stable_steps", minimum=-(10**9))
    elif old or total is None:
        raise ScheduleError("warmup_stable_decay needs num_stable_steps, or the total steps")
    else:
        s = total - w - d
    start = 0.0 if old else ratio * lr
    kinds = ("linear", "cosine") if old else (p["warmup_type"], p["decay_type"])
    for k in kinds:
        if k == "1-sqrt":
            raise NotRepresentable("a 1-sqrt warmup or decay has no canonical phase")
        if k not in ("linear", "cosine"):
            raise ScheduleError(f"Unknown warmup or decay type: {k}, expected 'linear', 'cosine' or '1-sqrt'")
    out: list[Phase] = []
    if w > 0:
        out.append(phase(kinds[0], w, start, lr) if kinds[0] == "linear" else phase("cosine", w, start, lr))
    if s > 0:
        out.append(constant(lr, s))
    skip = max(0, -s)  # a negative stable part starts the decay part-way in
    if d > skip:
        low = ratio * lr
        if kinds[1] == "linear":
            out.append(
                phase("linear", d - skip, lr, low, span=float(max(1, d)) if d > 1 or skip else None, shift=float(skip))
            )
        else:
            c = number(p["num_cycles"], "num_cycles")
            out.append(phase("cosine", d - skip, lr, low, span=max(1, d) / (2 * c), shift=float(skip), cycle="mirror"))
    out.append(constant(ratio * lr, 1))
    return Schedule(finish(out))


# ---- canonical -> TrainingArguments ------------------------------------------------------------------
def render(schedule: Schedule, steps: int | None = None, version: str | None = None) -> Rendering:
    """{"kind", "lr", "warmup", "kwargs"}: exact when one of the Trainer's schedules runs it, else the closest."""
    horizon = horizon_of(schedule, steps)

    def back(config: dict[str, Any]) -> Schedule:
        return read(config["kind"], config["lr"], config["warmup"], steps, config["kwargs"], version).schedule

    return choose(schedule, _candidates(schedule, horizon, steps, version), back, horizon)


def _candidates(s: Schedule, horizon: int, steps: int | None, version: str | None) -> Iterator[dict[str, Any]]:
    f = features(s, horizon)
    ver = version_tuple(version)
    yield {"kind": "constant", "lr": f.peak, "warmup": 0, "kwargs": {}}
    for top in tops(s, f):
        warm = sorted({max(0, w + d) for w in warmup_ends(s, f) for d in (-1, 0, 1)} | {0})
        ends = decay_ends(s, f)
        for w in warm:
            yield {"kind": "constant_with_warmup", "lr": top, "warmup": w, "kwargs": {}}
            if steps is None:
                continue
            yield {"kind": "linear", "lr": top, "warmup": w, "kwargs": {}}
            yield {"kind": "cosine", "lr": top, "warmup": w, "kwargs": {}}
            for _, low in dict.fromkeys(ends):
                if 0 < low < top and ver >= (4, 38):
                    yield {"kind": "cosine_with_min_lr", "lr": top, "warmup": w, "kwargs": {"min_lr_rate": low / top}}
                if 0 <= low < top:
                    yield {"kind": "polynomial", "lr": top, "warmup": w, "kwargs": {"lr_end": low, "power": 1.0}}
            if ver >= (4, 38):
                for end, low in dict.fromkeys(ends):
                    if end > w and 0 <= low < top:
                        for kind in ("linear", "cosine"):
                            kw: dict[str, Any] = {
                                "num_decay_steps": max(1, min(end, steps) - _stable_start(s, f, w)),
                                "min_lr_ratio": low / top if top else 0.0,
                            }
                            kw["num_stable_steps"] = _stable_start(s, f, w) - w
                            if ver >= (4, 51):
                                kw.update(warmup_type="linear", decay_type=kind)
                            elif kind == "linear":
                                continue
                            yield {"kind": "warmup_stable_decay", "lr": top, "warmup": w, "kwargs": kw}


def _stable_start(s: Schedule, f: Any, w: int) -> int:
    """Where the lr leaves its peak after the warmup (the start of a decay)."""
    t = max(w, int(f.peak_at))
    end = s.total_length

    def at_top(u: int) -> bool:
        return math.isclose(s.value(u), f.peak, rel_tol=1e-12)

    # piece by monotone piece, not step by step (a stable phase of 10^9 steps is one piece): on a
    # monotone piece that starts at the peak the steps still at it come first, found by bisection
    while t < end and at_top(t):
        seg = next(g for g in s.segments() if g.lo <= t < g.hi)
        starts = [] if seg.shape.monotone else piece_starts(seg, t, min(end, int(min(seg.hi, end))))
        if starts is None:  # turns too many to list: step by step
            t += 1
            continue
        last = min(end, int(min(seg.hi, end)), *starts) - 1  # the piece's last step
        if at_top(last):
            t = last + 1
            continue
        while last - t > 1:  # at_top(t), not at_top(last)
            mid = (t + last) // 2
            t, last = (mid, last) if at_top(mid) else (t, mid)
        return last
    return t
