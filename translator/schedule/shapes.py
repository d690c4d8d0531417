"""The closed form of every phase kind: its value at local time s, its slope, and where it bends.

A shape is a function of the phase's local time s (steps, s = t - offset + shift). Besides its
value, each shape tells the comparison code (compare.py) where it may stop being monotone or where
its slope may stop being monotone (`breaks`): between two breaks the value is monotone and, for
smooth shapes, so are the slope and the curvature. That is what lets two schedules be compared
exactly without evaluating every step. A shape that cannot promise this is `structured = False`
and is evaluated step by step. Two more promises keep long runs cheap: `repeats` (the value repeats
from some step on) and `monotone` (a staircase with too many stairs to list is one monotone piece).
The decays that multiply or divide an lr are in decays.py.
"""

from __future__ import annotations

import math
from typing import Any

# More breaks than one per this many steps: evaluating every step is as cheap.
_DENSE = 4.0
# More breaks than this in one range: the range is taken whole (compare.py: by its period, as one
# monotone piece, or cycle by cycle) instead of listing them; a staircase lists more stairs.
MAX_BREAKS = 4096
MAX_STAIRS = 1024
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
    monotone = False  # True: monotone for every s >= 0 (a staircase): breaks only mark its stairs

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
        """d value / d s at s (from the right at a break); 0.0 where the value is piecewise
        constant; None when not smooth."""
        return 0.0

    def curve(self, s: float) -> float | None:
        """d2 value / d s2 at s, monotone between breaks like the slope; None when not known."""
        return 0.0

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        """Points b in (lo, hi] where a new monotone piece starts at the first integer step >= b;
        None when there are too many to list (more than MAX_BREAKS, or one every few steps)."""
        return []

    def repeats(self) -> tuple[float, float] | None:
        """(s0, P): value(x + P) == value(x) for every x >= s0 (None: not known to repeat)."""
        return None

    def bounds(self) -> tuple[float, float] | None:
        """The lowest and highest value over s >= 0 of a shape that keeps turning (tail 0)."""
        return None

    def tail(self) -> int:
        """Direction of the value after its last break when continued forever: +1 never falls,
        -1 never rises, 0 keeps turning (periodic)."""
        return 0


def floor_(x: float) -> int:
    """floor, but a value within float noise of an integer is that integer: a step size or period
    computed as 1000.0000000002 breaks at 1000, as compare.piece_starts assumes."""
    n = round(x)
    return n if abs(x - n) <= 1e-12 * max(1.0, abs(x)) else math.floor(x)


def multiples(period: float, lo: float, hi: float, first: float = 0.0, most: int = MAX_BREAKS) -> list[float] | None:
    """first + k * period in (lo, hi], k >= 0 (None when too dense or more than `most`)."""
    if hi <= lo:
        return []
    count = (hi - lo) / period
    if count > (hi - lo) / _DENSE + 2 or count > most:
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
    monotone = True

    def __init__(self, v: float) -> None:
        self.v = v

    def value(self, s: float) -> float:
        return self.v

    def repeats(self) -> tuple[float, float] | None:
        return (-INF, 1.0)

    def tail(self) -> int:
        return 1


class Linear(Shape):
    monotone = True

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
            return multiples(step, lo, hi, most=MAX_STAIRS)
        # falling stairs round up (ceil): a level starts just after each multiple, not at it, so a
        # multiple at lo itself starts a new level inside the range too
        out = multiples(step, lo - step, hi, most=MAX_STAIRS)
        return None if out is None else [_after(b) for b in out]

    def tail(self) -> int:
        return 1 if self.rising else -1


class LogWarmup(Shape):
    monotone = True

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
        self.monotone = cycle == "hold"

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
        return multiples(self.span / 2.0, lo, hi)

    def repeats(self) -> tuple[float, float] | None:
        if self.cycle == "hold":
            return (self.span, 1.0)
        return (0.0, self.span if self.cycle == "restart" else 2.0 * self.span)

    def bounds(self) -> tuple[float, float] | None:
        return (min(self.start, self.end), max(self.start, self.end))

    def tail(self) -> int:
        if self.cycle == "hold":
            return 1
        return 0


class Polynomial(Shape):
    monotone = True

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

    def repeats(self) -> tuple[float, float] | None:
        return (self.span, 1.0)

    def tail(self) -> int:
        return 1


class Cyclic(Shape):
    """A triangular wave from `start` up to `high` over `up` steps and back over `down` steps;
    triangular2 halves the height every cycle, exp_range scales it by gamma^s."""

    def __init__(self, start: float, high: float, up: float, down: float, mode: str, gamma: float) -> None:
        self.start, self.high, self.up, self.down, self.mode, self.gamma = start, high, up, down, mode, gamma
        self.total = up + down
        self.ratio = up / self.total
        self.structured = mode != "exp_range"
        # triangular2 halves the wave each cycle: from this cycle on it adds nothing to start
        self.flat = _flat_cycle(start, high - start) if mode == "triangular2" else INF

    def _scale(self, s: float) -> tuple[float, float]:
        cycle = floor_(1.0 + s / self.total)
        x = 1.0 + s / self.total - cycle
        scale = x / self.ratio if x <= self.ratio else (x - 1.0) / (self.ratio - 1.0)
        return cycle, scale

    def _mult(self, cycle: float, s: float) -> float:
        if self.mode == "triangular2":
            return 0.5 ** (cycle - 1.0)  # (1 / 2.0 ** k overflows far out)
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
        per = self.up if x < self.ratio else -self.down  # at the turn: the leg that starts there
        return (self.high - self.start) * self._mult(cycle, s) / per if per else 0.0

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        hi = min(hi, (self.flat - 1.0) * self.total)
        ups = multiples(self.total, lo, hi, first=self.up)
        restarts = multiples(self.total, lo, hi)
        if ups is None or restarts is None:
            return None
        return sorted(set(ups + restarts))  # continuous at both turns: either side may take them

    def repeats(self) -> tuple[float, float] | None:
        if self.mode == "triangular":
            return (0.0, self.total)
        return ((self.flat - 1.0) * self.total, 1.0) if self.mode == "triangular2" else None

    def bounds(self) -> tuple[float, float] | None:
        return (min(self.start, self.high), max(self.start, self.high))


def _flat_cycle(base: float, height: float) -> float:
    """The first cycle k whose wave, height / 2^(k - 1), adds nothing to base in floats."""
    if height == 0.0:
        return 1.0
    # below a quarter of base's last digit (or below the smallest float when base is 0) it rounds away
    tiny = math.log2(math.ulp(base)) - 2.0 if base != 0.0 else -1076.0  # log2 of the amount
    return float(max(1, math.ceil(math.log2(abs(height)) - tiny) + 2))
