"""VeOmni's build_lr_scheduler (veomni/optim/lr_scheduler.py, called by trainer/base.py
_build_lr_scheduler) as a canonical schedule, and back.

A torch LambdaLR, stepped after each optimizer step: lr(t) = lr * lambda(t), with S the run's
steps (train_steps * num_train_epochs, known only once the dataset is built) and
W = int(S * lr_warmup_ratio):
  warmup (every style), t < W: lr_start + (lr - lr_start) * t / max(1, W)
  constant   lr
  linear     lr * max(1e-7 / lr, (S - t) / max(1, S - W))   (to 0 at S, floored at an absolute
             1e-7; lr_min and lr_decay_ratio are not passed to it)
  cosine     D = int(S * lr_decay_ratio); t > D: lr_min; else with p = (t - W) / max(1, D - W):
             lr_min + (lr - lr_min) * (1 + cos(pi p)) / 2
  lr == 0 divides by zero in every lambda.
Config keys (train.optimizer.*): lr (5e-5), lr_min (1e-7), lr_start (0.0), lr_warmup_ratio (0.0),
lr_decay_style ("constant"), lr_decay_ratio (1.0).
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Mapping

from ...schedule.compare import decay_ends, features, tops
from ...schedule.model import Phase, Schedule, ScheduleError, phase
from ...schedule.ops import constant, finish, floor_at
from ...schedule.fields import Reading, Rendering, choose, horizon_of, number, whole

DEFAULTS: dict[str, Any] = {
    "lr": 5e-5,
    "lr_min": 1e-7,
    "lr_start": 0.0,
    "lr_warmup_ratio": 0.0,
    "lr_decay_style": "constant",
    "lr_decay_ratio": 1.0,
}
LINEAR_FLOOR = 1e-7  # get_linear_schedule_with_warmup's min_lr default, never overridden


def read(cfg: Mapping[str, Any], train_steps: int) -> Reading:
    get = lambda k: cfg.get(k) if cfg.get(k) is not None else DEFAULTS[k]  # noqa: E731
    peak, low, start = number(get("lr"), "lr"), number(get("lr_min"), "lr_min"), number(get("lr_start"), "lr_start")
    ratio, decay_ratio = (
        number(get("lr_warmup_ratio"), "lr_warmup_ratio"),
        number(get("lr_decay_ratio"), "lr_decay_ratio"),
    )
    style = get("lr_decay_style")
    total = whole(train_steps, "train steps", minimum=1)
    if peak == 0:
        raise ScheduleError("lr 0: VeOmni's lr lambdas divide by the lr (ZeroDivisionError)")
    if style not in ("constant", "linear", "cosine"):
        raise ScheduleError(
            f"unknown lr_decay_style {style!r}: VeOmni's build_lr_scheduler raises (constant, linear or cosine)"
        )
    w = int(total * ratio)
    phases: list[Phase] = []
    if w > 0:
        phases.append(phase("linear", w, start, peak))
    if style == "constant":
        phases.append(constant(peak, 1))
        return Reading(Schedule(finish(phases)))
    if style == "linear":
        return Reading(_linear(phases, peak, total, w))
    decay = int(total * decay_ratio)
    if decay >= w:
        phases.append(phase("cosine", max(1, decay - w), peak, low))
    phases.append(constant(low, 1))
    return Reading(Schedule(finish(phases)))


def _linear(warm: list[Phase], peak: float, total: int, w: int) -> Schedule:
    """lr * max(1e-7 / lr, (S - t) / max(1, S - W)) for t >= W: the line to 0 at S, 1e-7 under it.
    Only the decay is floored (a warmup from lr_start 0 starts below 1e-7)."""
    line = [phase("linear", total - w, peak, 0.0)] if total > w else []
    decay = floor_at(Schedule(finish(line + [constant(0.0, 1)])), LINEAR_FLOOR)
    return Schedule(finish(warm + list(decay.phases)))


# ---- canonical -> VeOmni -------------------------------------------------------------------------
def ratio_for(steps: int, total: int) -> float:
    """A ratio r with int(total * r) == steps (VeOmni truncates; steps / total can land one below)."""
    r = (steps + 0.5) / total
    if int(total * r) != steps:
        r = steps / total
    return r


def render(schedule: Schedule, train_steps: int | None) -> Rendering:
    """VeOmni optimizer settings: exact when one of its three styles runs the schedule, else the
    closest (same peak, warmup length and decay end). VeOmni counts warmup and decay as fractions
    of the run, so the run's step count is needed; without it the schedule's own length is used."""
    notes: tuple[str, ...] = ()
    if train_steps is None:
        train_steps = schedule.total_length + 1
        notes = (f"the run's step count is unknown: ratios computed for {train_steps} steps",)
    horizon = horizon_of(schedule, train_steps)
    return choose(
        schedule, _candidates(schedule, horizon, train_steps), lambda c: read(c, train_steps).schedule, horizon, notes
    )


def _candidates(s: Schedule, horizon: int, total: int) -> Iterator[dict[str, Any]]:
    f = features(s, horizon)
    ends = decay_ends(s, f)
    warmups = [f.peak_at] + [
        s.offsets[i + 1] for i, p in enumerate(s.phases) if p.kind == "linear" and p.end > p.start
    ][:1]
    for top in tops(s, f):
        for w in dict.fromkeys(warmups):
            if w > total:
                continue
            warm = {"lr": top, "lr_start": f.first if w else 0.0, "lr_warmup_ratio": ratio_for(w, total)}
            yield {**warm, "lr_decay_style": "constant"}
            for end, low in dict.fromkeys(ends):
                if w <= end <= total:
                    yield {
                        **warm,
                        "lr_decay_style": "cosine",
                        "lr_min": low,
                        "lr_decay_ratio": ratio_for(int(end), total),
                    }
            yield {**warm, "lr_decay_style": "linear"}
