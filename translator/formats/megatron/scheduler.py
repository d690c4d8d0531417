"""Megatron-LM's OptimizerParamScheduler (megatron/core/optimizer_param_scheduler.py get_lr, v2.0+)
as a canonical schedule, and back.

Megatron counts samples; with a constant global batch G, step t has seen n = t x G samples (the
scheduler is stepped after each optimizer step). In steps, with w = warmup / G and d = decay end / G:
  t <= w (w > 0)   init + (peak - init) t / w
  constant         peak
  t > d            min_lr
  inverse-sqrt     max(min_lr, peak sqrt(max(w, 1/G) / max(t, 1/G)))
  else, r = (t - w) / (d - w):  linear  min + (peak - min)(1 - r);  cosine  min + (peak - min)(1 + cos(pi r)) / 2
  WSD              peak until d - wsd, then linear or cosine to min_lr over wsd (exponential and
                   minus_sqrt annealing have no canonical shape)
Config (in steps; the formula turns samples into steps): lr, min_lr, lr_warmup_init, warmup (w),
decay (d), lr_decay_style, wsd (steps), lr_wsd_decay_style.
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Mapping

from ...schedule.compare import Features, decay_ends, features, tops, warmup_ends
from ...schedule.fields import Reading, Rendering, choose, horizon_of, number
from ...schedule.model import NotRepresentable, Phase, Schedule, ScheduleError, phase
from ...schedule.ops import constant, finish, floor_at

STYLES = ("constant", "linear", "cosine", "inverse-square-root", "WSD")


def read(cfg: Mapping[str, Any], batch: int = 1) -> Reading:
    """The schedule of a config in steps (cfg["warmup"], cfg["decay"] in steps; batch: G, for the
    inverse square root's max(n, 1) in samples)."""
    peak = number(cfg["lr"], "lr")
    floor = number(cfg.get("min_lr") or 0.0, "min_lr")
    init = number(cfg.get("lr_warmup_init") or 0.0, "lr_warmup_init")
    style = cfg.get("lr_decay_style") or "linear"
    w = number(cfg.get("warmup") or 0.0, "warmup")
    if style not in STYLES:
        raise ScheduleError(f"{style!r} decay style is not supported (Megatron raises)")
    phases: list[Phase] = []
    t0 = 0
    if w > 0:
        t0 = math.floor(w) + 1  # the first step past the warmup
        phases.append(phase("linear", t0, init, peak, span=w))
    if style == "constant":
        return Reading(Schedule(finish(phases + [constant(peak, 1)])))
    if cfg.get("decay") is None:
        raise ScheduleError("Megatron needs --lr-decay-iters or --train-iters (or their samples) to decay")
    d = number(cfg["decay"], "decay")
    if d <= w and style != "inverse-square-root":
        raise ScheduleError(f"the decay ends at step {d:g}, within the warmup of {w:g} steps")
    last = math.floor(d)  # the last step of the decay (t <= d)
    if last < t0:
        return Reading(Schedule(finish(phases + [constant(floor, 1)])))
    n = last - t0 + 1
    if style == "inverse-square-root":
        hold = max(w, 1.0 / batch)
        start = max(t0, 1)  # t = 0 (no warmup): max(n, 1) is one sample, the peak
        body: list[Phase] = [constant(peak, 1)] if t0 == 0 else []
        if last >= start:
            body.append(phase("inverse_sqrt", last - start + 1, peak, hold=hold, shift=start))
        decay = floor_at(Schedule(finish(body)), floor) if floor > 0 else Schedule(finish(body))
        return Reading(Schedule(finish(phases + list(decay.phases) + [constant(floor, 1)])))
    if style == "WSD":
        wsd = number(cfg.get("wsd") or 0.0, "lr_wsd_decay_iters")
        kind = cfg.get("lr_wsd_decay_style") or "exponential"
        if kind not in ("linear", "cosine"):
            raise NotRepresentable(f"Megatron's WSD annealing {kind!r} has no canonical shape")
        if wsd <= 0:
            raise ScheduleError("WSD needs --lr-wsd-decay-iters (or samples) above 0")
        anneal = d - wsd  # the lr holds the peak while t <= anneal
        stable = max(0, min(last, math.floor(anneal)) - t0 + 1)
        body = [constant(peak, stable)] if stable else []
        rest = n - stable
        if rest > 0:
            body.append(phase(kind, rest, peak, floor, span=wsd, shift=t0 + stable - anneal))
        return Reading(Schedule(finish(phases + body + [constant(floor, 1)])))
    span = d - w
    body = [phase(style, n, peak, floor, span=span, shift=t0 - w)]
    return Reading(Schedule(finish(phases + body + [constant(floor, 1)])))


# ---- canonical -> Megatron ------------------------------------------------------------------------
def render(schedule: Schedule, steps: int | None = None) -> Rendering:
    """Megatron settings (in iterations) for a schedule: exact where its scheduler can run it, else
    the closest of its styles (keeping the peak, the warmup and where the decay ends)."""
    horizon = horizon_of(schedule, steps)
    return choose(schedule, _candidates(schedule, horizon, steps), lambda c: read(c).schedule, horizon)


def _candidates(s: Schedule, horizon: int, steps: int | None) -> Iterator[dict[str, Any]]:
    f = features(s, horizon)
    for peak in tops(s, f):
        yield from _candidates_at(s, f, peak, horizon)


def _candidates_at(s: Schedule, f: Features, peak: float, horizon: int) -> Iterator[dict[str, Any]]:
    first = s.value(0)
    inits = dict.fromkeys((min(first, peak), 0.0))
    ends = decay_ends(s, f)
    for w in dict.fromkeys([*warmup_ends(s, f), 0, *_holds(s)]):
        for init in inits if w else (0.0,):
            base = {"lr": peak, "lr_warmup_init": init, "warmup": w}
            yield {**base, "lr_decay_style": "constant"}
            if w in _holds(s):  # an inverse square root held at the peak: Megatron's warmup from the peak to itself
                for stop in dict.fromkeys((int(end) for end, _ in ends)):
                    if stop > w:
                        yield {
                            **base,
                            "lr_warmup_init": peak,
                            "lr_decay_style": "inverse-square-root",
                            "decay": stop,
                            "min_lr": 0.0,
                        }
                yield {
                    **base,
                    "lr_warmup_init": peak,
                    "lr_decay_style": "inverse-square-root",
                    "decay": max(horizon, w + 1),
                    "min_lr": 0.0,
                }
            for end, low in dict.fromkeys(ends):
                low = min(low, peak)
                for style in ("linear", "cosine"):
                    for floor in dict.fromkeys((low, 0.0)):
                        if end > w:
                            yield {**base, "lr_decay_style": style, "decay": int(end), "min_lr": floor}
                for floor in dict.fromkeys((low, 0.0)):  # the floor comes after the last decay step
                    for stop in dict.fromkeys((int(end) - 1, int(end), horizon)):
                        if stop > w:
                            yield {**base, "lr_decay_style": "inverse-square-root", "decay": stop, "min_lr": floor}


def _holds(s: Schedule) -> list[int]:
    """The steps where an inverse square root's hold ends (Megatron holds it through a warmup that
    starts at the peak)."""
    out, offset = [], 0
    for p in s.phases:
        if p.kind == "inverse_sqrt":
            end = offset + float(p.param("hold")) - p.shift
            if end > 0 and float(end).is_integer():
                out.append(int(end))
        offset += p.length
    return out
