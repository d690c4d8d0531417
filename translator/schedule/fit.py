"""Closest forms: what a schedule looks like in a few numbers, and the best of several candidates.

A writer whose framework cannot hold a schedule exactly proposes candidate configs (keeping the
peak, the warmup length and the step where the decay ends, and trying each decay shape it has),
reads each back with its own reader, and keeps the one with the smallest largest difference
(compare.max_difference over the run). That difference is what the report gives.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, NamedTuple

from .compare import Difference, max_difference, peak, settles
from .model import Schedule

REL_EXACT = 1e-9  # differences below this fraction of the peak are float noise: exact


class Features(NamedTuple):
    peak: float
    peak_at: int  # first step at the peak
    first: float  # lr(0)
    final: float  # lr at the last step of the run
    decay_end: int  # first step from which the lr stays at `final` to the end of the run
    horizon: int


def features(s: Schedule, horizon: int) -> Features:
    top = peak(s, horizon)
    last = s.value(horizon - 1)
    return Features(top.value, top.step, s.value(0), last, settles(s, horizon, last), horizon)


def tops(s: Schedule, f: Features, most: int = 3) -> list[float]:
    """Peak lrs worth trying: the one reached, and the ones the shapes aim at (a warmup that ends a
    step before its top, a decay already one step in, a floor above the configured lr)."""
    aims = [max(p.start, p.end) for p in s.phases if p.kind != "constant" and max(p.start, p.end) > 0]
    # the peak as the phases state it, not its float noise from evaluating a shape (1.4999999999999974e-4)
    top = next((v for v in aims if abs(v - f.peak) <= 1e-12 * abs(f.peak)), f.peak)
    unique = list(dict.fromkeys([top, *aims]))
    return sorted(unique, key=lambda v: (v != top, abs(v - top)))[:most]


def warmup_ends(s: Schedule, f: Features) -> list[int]:
    """Steps where a warmup may end: where the peak is first reached, and where the first rising
    phase ends (a warmup that stops just short of its top, a peak only reached again much later)."""
    out = [f.peak_at]
    for i, p in enumerate(s.phases):
        if p.kind != "constant" and p.end > p.start:
            out.append(s.offsets[i + 1])
            break
    return list(dict.fromkeys(out))


def decay_ends(s: Schedule, f: Features) -> list[tuple[int, float]]:
    """(step, lr) where a decay may end: where the lr settles, and where the first, the longest and
    the last falling shape (or shape after the peak) reaches its end value."""
    falling = [
        i for i, p in enumerate(s.phases) if p.kind != "constant" and (p.end < p.start or s.offsets[i] >= f.peak_at)
    ]
    picks = [falling[0], max(falling, key=lambda i: s.phases[i].length), falling[-1]] if falling else []
    out = [(f.decay_end, f.final)]
    for i in picks:
        p = s.phases[i]
        out.append((round(s.offsets[i] - p.shift + p.width), p.end))
    return list(dict.fromkeys(out))


class Fit(NamedTuple):
    config: Any
    schedule: Schedule
    difference: Difference
    exact: bool


def is_exact(diff: Difference, scale: float) -> bool:
    return diff.value <= REL_EXACT * max(scale, 1e-300)


def closest(source: Schedule, candidates: Iterable[tuple[Any, Schedule]], horizon: int) -> Fit | None:
    """The candidate whose schedule differs least from source over 0 <= t < horizon (the first
    exact one as soon as it is found). Equal largest differences (often the first warmup step,
    which no candidate can change) are decided by the largest difference after the warmup.
    Candidates with a peak of 0 are never chosen for a source whose peak is above 0."""
    top = peak(source, horizon)
    best: Fit | None = None
    after: float | None = None  # the best candidate's largest difference from the source's peak on

    def later(schedule: Schedule, cutoff: float = math.inf) -> float:
        return max_difference(source, schedule, horizon, cutoff, start=top.step, slack=REL_EXACT * top.value).value

    for config, schedule in candidates:
        if top.value > 0 and peak(schedule, horizon).value <= 0:
            continue
        cutoff = best.difference.value * (1 + 1e-12) if best is not None else math.inf
        diff = max_difference(source, schedule, horizon, cutoff)
        if best is not None and diff.value > cutoff:
            continue
        if best is not None and diff.value >= best.difference.value * (1 - 1e-12):  # a tie
            if after is None:
                after = later(best.schedule)
            challenger = later(schedule, after)
            if challenger >= after:
                continue
            after = challenger
        else:
            after = None  # worked out when a tie needs it
        best = Fit(config, schedule, diff, is_exact(diff, top.value))
        if best.exact:
            return best
    return best
