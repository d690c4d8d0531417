"""What every format's scheduler module (translator/formats/<fmt>/scheduler.py) returns, and the small checks they share."""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Iterable, NamedTuple

from .compare import Difference
from .fit import Fit, closest
from .model import Phase, Schedule, ScheduleError, phase


class Reading(NamedTuple):
    schedule: Schedule
    notes: tuple[str, ...] = ()  # what the framework does that its config does not say (traps)


class Rendering(NamedTuple):
    """A framework config for a canonical schedule. exact: the framework's own scheduler gives
    the same lr at every step of the run; otherwise `difference` is the largest lr difference
    and the first step where it occurs (the report's lossy entry)."""

    config: Any
    schedule: Schedule  # what the framework will run (the config read back)
    exact: bool
    difference: Difference
    notes: tuple[str, ...] = ()

    def detail(self, source: Schedule, framework: str) -> str:
        """The report's words for a closest form: the largest lr difference, where, both lrs."""
        if self.exact:
            return ""
        t = self.difference.step
        ours, theirs = _apart(self.schedule.value(t), source.value(t))
        return (f"{framework} has no exact form of this schedule: the closest differs by at most "
                f"{self.difference.value:.4g} (step {t}: {ours} instead of {theirs})")


def _apart(a: float, b: float) -> tuple[str, str]:
    """Two lrs with just enough digits to tell them apart (4 at least)."""
    for digits in range(4, 17):
        x, y = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if x != y:
            return x, y
    return repr(a), repr(b)


def number(value: Any, what: str, *, minimum: float | None = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ScheduleError(f"{what} must be a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ScheduleError(f"{what} must be a finite number, got {value!r}")
    if minimum is not None and x < minimum:
        raise ScheduleError(f"{what} must be at least {minimum:g}, got {value!r}")
    return x


def whole(value: Any, what: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
        raise ScheduleError(f"{what} must be a whole number, got {value!r}")
    n = int(value)
    if n < minimum:
        raise ScheduleError(f"{what} must be at least {minimum}, got {value!r}")
    return n


def choose(
    source: Schedule,
    configs: Iterable[Any],
    read: Callable[[Any], Schedule],
    horizon: int,
    notes: tuple[str, ...] = (),
) -> Rendering:
    """The config (read back with `read`) closest to source; configs the reader refuses are skipped."""

    def candidates() -> Iterable[tuple[Any, Schedule]]:
        seen: set[str] = set()
        for config in configs:
            key = json.dumps(config, sort_keys=True, default=str)
            if key in seen:
                continue
            seen.add(key)
            try:
                yield config, read(config)
            except ScheduleError:
                continue

    fit: Fit | None = closest(source, candidates(), horizon)
    if fit is None:
        raise ScheduleError("no config of this framework can hold this schedule")
    return Rendering(fit.config, fit.schedule, fit.exact, fit.difference, notes)


def horizon_of(schedule: Schedule, steps: int | None) -> int:
    """The run to compare over: its step count, else the schedule's phases and one step more."""
    return steps if steps is not None and steps > 0 else schedule.total_length + 1


def anneals(kind: str, marks: list[tuple[float, float, float]]) -> list[Phase]:
    """Phases ending (inclusive) at the given fractional steps, each annealing from its start lr at
    its previous end to its end lr: torch's and Cerebras' one-cycle."""
    phases: list[Phase] = []
    begin, t = 0.0, 0  # the previous end step (real) and the first integer step not yet covered
    for i, (stop, a, b) in enumerate(marks):
        last = i == len(marks) - 1
        n = (math.floor(stop) + 1 - t) if not last else max(1, math.floor(stop) + 1 - t)
        span = stop - begin
        if n > 0 and span > 0:
            extra = {"cycle": "mirror"} if kind == "cosine" and last else {}
            phases.append(phase(kind, n, a, b, span=span, shift=t - begin, beyond="continue" if last else "hold", **extra))
            t += n
        begin = stop
    return phases
