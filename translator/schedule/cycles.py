"""Long runs of a periodic shape, compared without visiting every cycle.

A shape that repeats with period P from some step on, over a run of many cycles, is cut into
jobs the comparison (compare.py) searches as usual, each with few monotone pieces:

- a whole period P: on a range where the other schedule is monotone, the steps t = j mod P all
  share one lr of the periodic shape, and |v_j - b(t)| over them is largest at the first or the last
  of them (b monotone, |v - y| convex in y). So the largest difference over the range is found in
  its first and its last P steps; the peak and the first step reaching a level in its first P.
- a period that is no whole number of steps: read the run every M = round(n * P) steps (a residue
  class r, steps t = l + r + q * M). As nP is a period, the periodic shape at those steps is the
  shape at x_r + q * (M - nP): the same closed form with a slow drift, which turns only a few times
  over the run (the choice of n keeps it so), while the other schedule stays monotone in q. Each
  class is then one comparison of two smooth shapes with few pieces; M classes in all.

Where neither holds (a period of more than CLASSES_UP_TO steps that no small multiple makes whole,
the other schedule turning often too) `plan` returns None and the comparison halves the range.
The values are the shape's own at those steps, up to the float noise of evaluating it far out
(the shape computes s / P at large s; here the same phase is reached with a smaller argument).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from .model import ScheduleError, Segment
from .shapes import Shape, _after

CLASSES_UP_TO = 1024  # residue classes searched for a period that is no whole number of steps
_TURNS = 16  # periods the drift of one class may cross: its pieces stay few
_CUTS = 64  # monotone pieces of the other schedule over the range: more and the range is halved


class TooManyCycles(ScheduleError):
    """A comparison over more cycles than it can search exactly in bounded time."""


def too_many(seg: Segment, lo: int, hi: int) -> TooManyCycles:
    found = period(seg)
    size = f"{found[1]:.10g} steps" if found is not None else "a few steps"
    count = f"{(hi - lo + 1) / found[1]:.4g}" if found is not None else "many"
    return TooManyCycles(
        f"a schedule of {count} cycles of {size}: more cycles than neoconv compares exactly"
        " (give the cycles a whole number of steps, or fewer cycles)"
    )


class Sampled(Shape):
    """base read at x + scale * q: a shape read every M steps of a run (q counts the reads)."""

    def __init__(self, base: Shape, x: float, scale: float, period: float = math.inf) -> None:
        self.base, self.x, self.scale, self.period = base, x, scale, period
        self.structured = base.structured
        self.monotone = base.monotone
        self.moves = base.moves and scale != 0.0

    def same(self, other: Shape, s_lo: float, s_hi: float) -> bool:
        return False  # two reads are compared by their values

    def value(self, s: float) -> float:
        return self.base.value(self.x + self.scale * s)

    def slope(self, s: float) -> float | None:
        g = self.base.slope(self.x + self.scale * s)
        return None if g is None else self.scale * g

    def curve(self, s: float) -> float | None:
        c = self.base.curve(self.x + self.scale * s)
        return None if c is None else self.scale * self.scale * c

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        if self.scale == 0.0:
            return []
        a, b = self.x + self.scale * lo, self.x + self.scale * hi
        if self.scale > 0.0:
            found = self._breaks(a, b)
            return None if found is None else [(p - self.x) / self.scale for p in found]
        found = self._breaks(b - abs(self.scale), a)
        if found is None:
            return None
        # read backwards, a turn's own step belongs to the piece before it (a restart's top)
        return [_after((p - self.x) / self.scale) for p in found]

    def _breaks(self, a: float, b: float) -> list[float] | None:
        """The base's breaks in (a, b]: a turn every few units of its time is dense there, not
        here (a read every M steps moves it by M - nP), so they are asked for a quarter period at
        a time."""
        found = self.base.breaks(a, b)
        if found is not None or not self.period < math.inf:
            return found
        width = self.period / 4.0
        count = math.ceil((b - a) / width)
        if count > 16 * _TURNS:
            return None
        out: list[float] = []
        for k in range(count):
            part = self.base.breaks(a + k * width, min(b, a + (k + 1) * width))
            if part is None:
                return None
            out.extend(part)
        return out


class Job(NamedTuple):
    """Search a against b (b may be None) over lo <= q <= hi; q stands for step start + stride * q."""

    a: Segment
    b: Segment | None
    lo: int
    hi: int
    start: int
    stride: int


def period(seg: Segment) -> tuple[float, float] | None:
    """(t0, P): seg's values repeat with period P from its step t0 on (None: not known to)."""
    found = seg.shape.repeats()
    if found is None:
        return None
    s0, p = found
    if not (0.0 < p < math.inf and math.isfinite(s0)):
        return None
    return s0 - (seg.s0 - seg.lo), p


def plan(sp: Segment, so: Segment | None, lo: int, hi: int, starts: list[int] | None) -> list[Job] | None:
    """Jobs covering lo <= t <= hi for the periodic sp against so (monotone between `starts`,
    its piece starts in the range; so None: sp alone); None when the range is to be halved."""
    found = period(sp)
    if found is None or found[0] > lo:
        return None
    t0, p = found
    if so is not None and (starts is None or len(starts) > _CUTS):
        # both keep turning: read every M steps, M near a multiple of both periods (both drift)
        other = period(so)
        if other is None or other[0] > lo:
            return None
        return _part(sp, so, lo, hi, t0, p, other)
    cuts = [lo, *(starts or ()), hi + 1]
    jobs: list[Job] = []
    for k in range(len(cuts) - 1):
        part = _part(sp, so, cuts[k], cuts[k + 1] - 1, t0, p)
        if part is None:
            return None
        jobs.extend(part)
    return jobs


def _part(
    sp: Segment, so: Segment | None, l: int, h: int, t0: float, p: float, other: tuple[float, float] | None = None
) -> list[Job] | None:
    """Jobs for l..h, where so is monotone (or repeats: other = (t0, P) of so)."""
    if float(p).is_integer() and other is None:
        whole = int(p)
        if h - l + 1 <= 2 * whole:
            return [Job(sp, so, l, h, 0, 1)]
        last = [Job(sp, so, h - whole + 1, h, 0, 1)] if so is not None else []
        return [Job(sp, so, l, l + whole - 1, 0, 1), *last]
    periods = (p,) if other is None else (p, other[1])
    m = _stride(periods, h - l)
    if m is None:
        return None
    jobs = []
    for r in range(min(m, h - l + 1)):
        t = l + r
        count = (h - t) // m
        a = Segment(0, count + 1, _read(sp, t, m, p, t0, count), 0.0)
        b = None
        if so is not None:
            shape = (
                Sampled(so.shape, t + (so.s0 - so.lo), m)
                if other is None
                else _read(so, t, m, other[1], other[0], count)
            )
            b = Segment(0, count + 1, shape, 0.0)
        jobs.append(Job(a, b, 0, count, t, m))
    return jobs


def _read(seg: Segment, t: int, m: int, p: float, t0: float, count: int) -> Sampled:
    """seg at steps t + q * m (0 <= q <= count), as its shape drifting by m - nP a read (nP a
    period near m), from where it repeats."""
    n = round(m / p)
    drift = m - n * p
    x = t + (seg.s0 - seg.lo)
    start = t0 + (seg.s0 - seg.lo)  # where the shape starts repeating, in its own time
    lowest = x + min(0.0, drift * count)
    if lowest < start:  # a backward drift: start whole periods later, where the shape repeats
        x += math.ceil((start - lowest) / (n * p)) * (n * p)
    return Sampled(seg.shape, x, drift, p)


def _stride(periods: tuple[float, ...], steps: int) -> int | None:
    """The fewest classes M whose drift against each period (M - nP, nP the nearest multiple)
    crosses at most _TURNS periods over `steps`."""
    for m in range(1, CLASSES_UP_TO + 1):
        if all(abs(m - round(m / p) * p) * (steps // m + 1) <= _TURNS * p for p in periods):
            return m
    return None


class Reads:
    """compare.Best seen through a job: its q stands for the step start + stride * q, where
    sa and sb are evaluated again (the number returned is a difference at a real step)."""

    __slots__ = ("best", "sa", "sb", "start", "stride")

    def __init__(self, best: Any, job: Job, sa: Segment, sb: Segment) -> None:
        self.best, self.start, self.stride, self.sa, self.sb = best, job.start, job.stride, sa, sb

    @property
    def value(self) -> float:
        return self.best.value

    def see(self, q: int, va: float, vb: float) -> float:
        t = self.start + self.stride * q
        return self.best.see(t, self.sa.at(t), self.sb.at(t))

    def limit(self) -> float:
        return self.best.limit()
