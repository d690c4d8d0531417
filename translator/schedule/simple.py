"""A schedule from the handful of numbers people say ("2000 warmup steps, cosine to 3e-5 at step
100000"): for --set, tests, and today's scalar schedule.* fields. Neutral semantics: a linear
warmup from warmup_start (lr(0) = warmup_start) reaching lr at step warmup_steps, then the decay
from lr at warmup_steps to min_lr at decay_end, then min_lr held."""

from __future__ import annotations

from .model import Phase, Schedule, ScheduleError, phase
from .ops import constant, finish

DECAYS = ("constant", "linear", "cosine", "exponential", "inverse_sqrt")


def simple(
    lr: float,
    warmup_steps: int = 0,
    decay: str = "constant",
    decay_end: int | None = None,
    min_lr: float = 0.0,
    warmup_start: float = 0.0,
) -> Schedule:
    if decay not in DECAYS:
        raise ScheduleError(f"decay must be one of {', '.join(DECAYS)}, got {decay!r}")
    phases: list[Phase] = []
    if warmup_steps > 0:
        phases.append(phase("linear", warmup_steps, warmup_start, lr))
    if decay == "constant":
        return Schedule(finish(phases + [constant(lr, 1)]))
    if decay == "inverse_sqrt":  # lr held through the warmup's length, then lr * sqrt(W / t)
        hold = float(max(1, warmup_steps))
        return Schedule(
            finish(phases + [phase("inverse_sqrt", 1, lr, hold=hold, shift=hold, beyond="continue")], "continue")
        )
    if decay_end is None or decay_end <= warmup_steps:
        raise ScheduleError(f"a {decay} decay needs its end step after the warmup ({warmup_steps}), got {decay_end!r}")
    span = decay_end - warmup_steps
    if decay == "exponential":
        if not 0 < min_lr < lr:
            raise ScheduleError("an exponential decay needs 0 < min_lr < lr (the lr it reaches at the end)")
        phases.append(phase("exponential", span, lr, rate=min_lr / lr, period=float(span)))
    else:
        phases.append(phase(decay, span, lr, min_lr))
    return Schedule(finish(phases + [constant(min_lr, 1)]))


def describe(s: Schedule) -> str:
    """One line for a report or `explain`: the phases and their lrs."""
    parts = []
    for p in s.phases:
        lrs = f"{p.start:g}" if p.kind == "constant" else f"{p.start:g} -> {p.end:g}"
        steps = f"{p.length} step{'s' if p.length != 1 else ''}"
        if p.span is not None and p.width != p.length:  # a piece of a longer shape
            steps += f" of {p.width:g}"
        parts.append(f"{p.kind} {lrs} ({steps})")
    return "; ".join(parts) + ("" if s.phases[-1].beyond == "hold" else ", and on")
