"""The closed forms of the decays that multiply or divide an lr: exponential, inverse square root,
inverse time and step (the contract every shape keeps is in shapes.py).

A staircase that multiplies its lr by the same factor at every stair (step, exponential with
`staircase`) stops changing once the lr has underflowed to 0 or overflowed to infinity: its stairs
end there, and from there it repeats with any period (so a run of 10^15 steps lists at most the
few thousand stairs a float can tell apart)."""

from __future__ import annotations

import math

from .shapes import _DENSE, INF, MAX_STAIRS, Shape, floor_, multiples


def _level(start: float, rate: float, k: int) -> float:
    try:
        return start * rate**k
    except OverflowError:
        return INF


def _last_stair(start: float, rate: float) -> int:
    """The first k from which start * rate**k no longer changes (0 or infinity reached)."""
    if start == 0.0 or rate == 1.0:
        return 0
    end = 0.0 if rate < 1.0 else INF
    # rate**k passes the float range within this many stairs (a margin past the estimate)
    hi = math.ceil(1100.0 / abs(math.log(rate))) + 2
    if _level(start, rate, hi) != end:
        return hi
    lo = 0
    while hi - lo > 1:  # _level is monotone in k: the first k where it has reached its end
        m = (lo + hi) // 2
        if _level(start, rate, m) == end:
            hi = m
        else:
            lo = m
    return hi


class Exponential(Shape):
    monotone = True

    def __init__(self, start: float, rate: float, period: float, staircase: bool) -> None:
        self.start, self.rate, self.period, self.staircase = start, rate, period, staircase
        self.log_rate = math.log(rate)
        self.settles = _last_stair(start, rate) * period if staircase else INF

    def _e(self, s: float) -> float:
        e = s / self.period
        return floor_(e) if self.staircase else e

    def value(self, s: float) -> float:
        if self.start == 0.0:
            return 0.0
        try:
            return self.start * self.rate ** self._e(s)
        except OverflowError:  # a growing exponential far out
            return INF

    def slope(self, s: float) -> float | None:
        if self.staircase:
            return 0.0
        return self.value(s) * self.log_rate / self.period

    def curve(self, s: float) -> float | None:
        if self.staircase:
            return 0.0
        return self.value(s) * (self.log_rate / self.period) ** 2

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        return multiples(self.period, lo, min(hi, self.settles), most=MAX_STAIRS) if self.staircase else []

    def repeats(self) -> tuple[float, float] | None:
        return (self.settles, 1.0) if self.staircase else None

    def tail(self) -> int:
        return 1 if self.rate >= 1.0 else -1


class InverseSqrt(Shape):
    monotone = True

    def __init__(self, start: float, hold: float) -> None:
        self.start, self.hold = start, hold

    def value(self, s: float) -> float:
        return self.start * math.sqrt(self.hold / max(self.hold, s))

    def slope(self, s: float) -> float | None:
        if s < self.hold:
            return 0.0
        return -0.5 * self.start * math.sqrt(self.hold) * s**-1.5

    def curve(self, s: float) -> float | None:
        if s < self.hold:
            return 0.0
        return 0.75 * self.start * math.sqrt(self.hold) * s**-2.5

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        return [self.hold] if lo < self.hold <= hi else []

    def tail(self) -> int:
        return -1


class InverseTime(Shape):
    monotone = True

    def __init__(self, start: float, rate: float, period: float, power: float, staircase: bool) -> None:
        self.start, self.rate, self.period, self.power, self.staircase = start, rate, period, power, staircase

    def _a(self, s: float) -> float:
        a = s**self.power / self.period
        return floor_(a) if self.staircase else a

    def value(self, s: float) -> float:
        return self.start / (1.0 + self.rate * self._a(s))

    def slope(self, s: float) -> float | None:
        if self.staircase or self.rate == 0.0:
            return 0.0
        p = self.power
        if s == 0.0 and p < 1.0:
            return -INF if self.start > 0 else 0.0
        x = self.rate * s**p / self.period
        return -self.start * self.rate * p * s ** (p - 1.0) / self.period / (1.0 + x) ** 2

    def curve(self, s: float) -> float | None:
        if self.staircase or self.rate == 0.0:
            return 0.0
        if self.power != 1.0:
            return None
        c = self.rate / self.period
        return 2.0 * self.start * c * c / (1.0 + c * s) ** 3

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        if self.rate == 0.0:
            return []
        p = self.power
        if self.staircase:
            a_lo, a_hi = max(lo, 0.0) ** p / self.period, max(hi, 0.0) ** p / self.period
            if a_hi - a_lo > min((hi - lo) / _DENSE + 2, MAX_STAIRS):
                return None
            return [(k * self.period) ** (1.0 / p) for k in range(math.floor(a_lo) + 1, math.floor(a_hi) + 1)]
        c = self.rate / self.period
        if p > 1.0 and c > 0:  # the slope turns where s^p = (p - 1) / (c (p + 1))
            try:
                bend = ((p - 1.0) / (c * (p + 1.0))) ** (1.0 / p)
            except (OverflowError, ZeroDivisionError):
                return []
            return [bend] if lo < bend <= hi else []
        return []

    def tail(self) -> int:
        return -1


class Step(Shape):
    monotone = True

    def __init__(self, start: float, gamma: float, step_size: float | None, milestones: tuple[int, ...]) -> None:
        self.start, self.gamma, self.step_size, self.milestones = start, gamma, step_size, milestones
        if step_size is not None:
            self.settles = _last_stair(start, gamma) * step_size
        else:
            self.settles = float(max(milestones, default=0))

    def value(self, s: float) -> float:
        if self.step_size is not None:
            k = floor_(s / self.step_size)
        else:
            k = sum(1 for m in self.milestones if m <= s)
        if self.start == 0.0:
            return 0.0
        try:
            return self.start * self.gamma**k
        except OverflowError:
            return INF

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        if self.step_size is not None:
            return multiples(self.step_size, lo, min(hi, self.settles), most=MAX_STAIRS)
        return [float(m) for m in sorted(set(self.milestones)) if lo < m <= hi]

    def repeats(self) -> tuple[float, float] | None:
        return (self.settles, 1.0)

    def tail(self) -> int:
        return 1 if self.gamma >= 1.0 else -1
