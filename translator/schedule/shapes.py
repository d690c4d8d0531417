"""The closed form of every phase kind: its value at local time s, its slope, and where it bends.

A shape is a function of the phase's local time s (steps, s = t - offset + shift). Besides its
value, each shape tells the comparison code (compare.py) where it may stop being monotone or where
its slope may stop being monotone (`breaks`): between two breaks the value is monotone and, for
smooth shapes, so is the slope. That is what lets two schedules be compared exactly without
evaluating every step. A shape that cannot promise this is `structured = False` and is evaluated
step by step.
"""

from __future__ import annotations

import math
from typing import Any

# More breaks than one per this many steps: evaluating every step is as cheap.
_DENSE = 4.0
INF = math.inf


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= 1e-12 * max(abs(a), abs(b))
    return bool(a == b)


def _after(b: float) -> float:
    """A point just past b: the first integer step >= it is the first one strictly after b."""
    return b + max(1e-9, abs(b) * 1e-9)


class Shape:
    structured = True
    moves = True  # False: the value does not depend on s

    def same(self, other: "Shape", s_lo: float, s_hi: float) -> bool:
        """The same function of s on [s_lo, s_hi] (parameters equal to 1e-12)."""
        if type(other) is not type(self):
            return False
        mine, theirs = vars(self), vars(other)
        return all(_close(mine[k], theirs.get(k)) for k in mine if k not in self.ignore(s_lo, s_hi))

    def ignore(self, s_lo: float, s_hi: float) -> tuple[str, ...]:
        """Parameters that do not matter on [s_lo, s_hi]."""
        return ()

    def value(self, s: float) -> float:
        raise NotImplementedError

    def slope(self, s: float) -> float | None:
        """d value / d s at s; 0.0 where the value is piecewise constant; None when not smooth."""
        return 0.0

    def curve(self, s: float) -> float | None:
        """d2 value / d s2 at s, monotone between breaks like the slope; None when not known."""
        return 0.0

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        """Points b in (lo, hi] where a new monotone piece starts at the first integer step >= b;
        None when there are too many to be worth it (evaluate every step instead)."""
        return []

    def tail(self) -> int:
        """Direction of the value after its last break when continued forever: +1 never falls,
        -1 never rises, 0 keeps turning (periodic)."""
        return 0


def _floor(x: float) -> int:
    """floor, but a value within float noise of an integer is that integer: a step size or period
    computed as 1000.0000000002 breaks at 1000, as compare.piece_starts assumes."""
    n = round(x)
    return n if abs(x - n) <= 1e-12 * max(1.0, abs(x)) else math.floor(x)


def _multiples(period: float, lo: float, hi: float, first: float = 0.0) -> list[float] | None:
    """first + k * period in (lo, hi], k >= 0 (None when too dense)."""
    if hi <= lo:
        return []
    if (hi - lo) / period > (hi - lo) / _DENSE + 2:
        return None
    k = max(0, math.floor((lo - first) / period) + 1)
    out: list[float] = []
    while True:
        b = first + k * period
        if b > hi:
            return out
        if b > lo:
            out.append(b)
        k += 1


class Constant(Shape):
    moves = False

    def __init__(self, v: float) -> None:
        self.v = v

    def value(self, s: float) -> float:
        return self.v

    def tail(self) -> int:
        return 1


class Linear(Shape):
    def __init__(self, start: float, end: float, span: float, stairs: int | None) -> None:
        self.start, self.end, self.span, self.stairs = start, end, span, stairs
        self.rising = end >= start

    def value(self, s: float) -> float:
        if self.stairs:
            q = s * self.stairs / self.span
            # the value is rounded towards the lower of start and end: DeepSpeed's stair counts
            j = math.floor(q) if self.rising else math.ceil(q)
            return self.start + (self.end - self.start) * j / self.stairs
        return self.start + (self.end - self.start) * s / self.span

    def slope(self, s: float) -> float | None:
        return 0.0 if self.stairs else (self.end - self.start) / self.span

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        if not self.stairs:
            return []
        step = self.span / self.stairs
        if self.rising:
            return _multiples(step, lo, hi)
        # falling stairs round up (ceil): a level starts just after each multiple, not at it, so a
        # multiple at lo itself starts a new level inside the range too
        out = _multiples(step, lo - step, hi)
        return None if out is None else [_after(b) for b in out]

    def tail(self) -> int:
        return 1 if self.rising else -1


class LogWarmup(Shape):
    def __init__(self, start: float, end: float, span: float) -> None:
        self.start, self.end = start, end
        self.scale = (end - start) / math.log(span)

    def value(self, s: float) -> float:
        return self.start + self.scale * math.log(s + 1.0)

    def slope(self, s: float) -> float | None:
        return self.scale / (s + 1.0)

    def curve(self, s: float) -> float | None:
        return -self.scale / (s + 1.0) ** 2

    def tail(self) -> int:
        return 1 if self.scale >= 0 else -1


class Cosine(Shape):
    def __init__(self, start: float, end: float, span: float, cycle: str) -> None:
        self.start, self.end, self.span, self.cycle = start, end, span, cycle

    def ignore(self, s_lo: float, s_hi: float) -> tuple[str, ...]:
        return ("cycle",) if 0 <= s_lo and s_hi <= self.span else ()

    def _c(self, s: float) -> float:
        c = s / self.span
        if self.cycle == "hold":
            return min(c, 1.0)
        if self.cycle == "restart":
            return c - math.floor(c)
        return c

    def value(self, s: float) -> float:
        return self.end + (self.start - self.end) * (1.0 + math.cos(math.pi * self._c(s))) / 2.0

    def slope(self, s: float) -> float | None:
        if self.cycle == "hold" and s >= self.span:
            return 0.0
        return -(self.start - self.end) * math.pi / (2.0 * self.span) * math.sin(math.pi * self._c(s))

    def curve(self, s: float) -> float | None:
        if self.cycle == "hold" and s >= self.span:
            return 0.0
        return -(self.start - self.end) * (math.pi / self.span) ** 2 / 2.0 * math.cos(math.pi * self._c(s))

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        if self.cycle == "hold":
            return [b for b in (self.span / 2.0, self.span) if lo < b <= hi]
        # turns at every multiple of span (a restart jumps back there), bends half-way
        return _multiples(self.span / 2.0, lo, hi)

    def tail(self) -> int:
        if self.cycle == "hold":
            return 1
        return 0


class Exponential(Shape):
    def __init__(self, start: float, rate: float, period: float, staircase: bool) -> None:
        self.start, self.rate, self.period, self.staircase = start, rate, period, staircase
        self.log_rate = math.log(rate)

    def _e(self, s: float) -> float:
        e = s / self.period
        return _floor(e) if self.staircase else e

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
        return _multiples(self.period, lo, hi) if self.staircase else []

    def tail(self) -> int:
        return 1 if self.rate >= 1.0 else -1


class InverseSqrt(Shape):
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
    def __init__(self, start: float, rate: float, period: float, power: float, staircase: bool) -> None:
        self.start, self.rate, self.period, self.power, self.staircase = start, rate, period, power, staircase

    def _a(self, s: float) -> float:
        a = s**self.power / self.period
        return _floor(a) if self.staircase else a

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
            if a_hi - a_lo > (hi - lo) / _DENSE + 2:
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


class Polynomial(Shape):
    def __init__(self, start: float, end: float, span: float, power: float) -> None:
        self.start, self.end, self.span, self.power = start, end, span, power

    def value(self, s: float) -> float:
        if s >= self.span:
            return self.end
        return self.end + (self.start - self.end) * (1.0 - s / self.span) ** self.power

    def slope(self, s: float) -> float | None:
        if s >= self.span:
            return 0.0
        rest = 1.0 - s / self.span
        if rest == 0.0 and self.power < 1.0:
            return math.copysign(INF, self.end - self.start)
        return -(self.start - self.end) * self.power / self.span * rest ** (self.power - 1.0)

    def curve(self, s: float) -> float | None:
        if s >= self.span:
            return 0.0
        rest = 1.0 - s / self.span
        if rest == 0.0 and self.power < 2.0:
            return None
        return (self.start - self.end) * self.power * (self.power - 1.0) / self.span**2 * rest ** (self.power - 2.0)

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        return [self.span] if lo < self.span <= hi else []

    def tail(self) -> int:
        return 1


class Step(Shape):
    def __init__(self, start: float, gamma: float, step_size: float | None, milestones: tuple[int, ...]) -> None:
        self.start, self.gamma, self.step_size, self.milestones = start, gamma, step_size, milestones

    def value(self, s: float) -> float:
        if self.step_size is not None:
            k = _floor(s / self.step_size)
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
            return _multiples(self.step_size, lo, hi)
        return [float(m) for m in sorted(set(self.milestones)) if lo < m <= hi]

    def tail(self) -> int:
        return 1 if self.gamma >= 1.0 else -1


class Cyclic(Shape):
    """A triangular wave from `start` up to `high` over `up` steps and back over `down` steps;
    triangular2 halves the height every cycle, exp_range scales it by gamma^s."""

    def __init__(self, start: float, high: float, up: float, down: float, mode: str, gamma: float) -> None:
        self.start, self.high, self.up, self.down, self.mode, self.gamma = start, high, up, down, mode, gamma
        self.total = up + down
        self.ratio = up / self.total
        self.structured = mode != "exp_range"

    def _scale(self, s: float) -> tuple[float, float]:
        cycle = _floor(1.0 + s / self.total)
        x = 1.0 + s / self.total - cycle
        scale = x / self.ratio if x <= self.ratio else (x - 1.0) / (self.ratio - 1.0)
        return cycle, scale

    def _mult(self, cycle: float, s: float) -> float:
        if self.mode == "triangular2":
            return 1.0 / 2.0 ** (cycle - 1.0)
        if self.mode == "exp_range":
            return self.gamma**s
        return 1.0

    def value(self, s: float) -> float:
        cycle, scale = self._scale(s)
        return self.start + (self.high - self.start) * scale * self._mult(cycle, s)

    def slope(self, s: float) -> float | None:
        if not self.structured:
            return None
        cycle, scale = self._scale(s)
        x = 1.0 + s / self.total - cycle
        per = self.up if x <= self.ratio else -self.down
        return (self.high - self.start) * self._mult(cycle, s) / per if per else 0.0

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        ups = _multiples(self.total, lo, hi, first=self.up)
        restarts = _multiples(self.total, lo, hi)
        if ups is None or restarts is None:
            return None
        return sorted(set(ups + restarts))  # continuous at both turns: either side may take them
