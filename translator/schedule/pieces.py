"""The steps of a run cut into pieces on which two schedules are both monotone.

A piece comes with how it may be searched (`Mode`): SMOOTH (both monotone, with monotone slopes
and curvatures: extrema.solve), VALUES (both monotone, a staircase among them with too many stairs
to list: bounds from the values only), STEPS (every step: a shape with no structure, over a short
range) or CYCLES (a shape that keeps turning, with too many turns to list: compare.py takes it
cycle block by cycle block). Where both schedules repeat from some step on with a whole joint
period, a range is cut to its first period: every later step repeats the lrs of one in it, so
the largest difference and the peak are found there, at their first step.
"""

from __future__ import annotations

import enum
import math
from typing import Iterator

from .model import Schedule, Segment
from .shapes import MAX_BREAKS


class Mode(enum.Enum):
    SMOOTH = "smooth"
    VALUES = "values"
    STEPS = "steps"
    CYCLES = "cycles"


Piece = tuple[int, int, Segment, Segment, Mode]  # lo <= t <= hi inclusive
STEPS_UP_TO = MAX_BREAKS  # a range of a shape with no listed turns this short is evaluated step by step


def ranges(s: Schedule, lo: int, hi: int) -> list[tuple[int, int, Segment]]:
    """(a, b, segment): the segments of s over lo <= t < hi, b exclusive."""
    out = []
    for seg in s.segments():
        a, b = max(lo, seg.lo), min(hi, seg.hi)
        if a < b:
            out.append((a, int(b), seg))
    return out


def piece_starts(seg: Segment, lo: int, hi: int) -> list[int] | None:
    """Integer steps in (lo, hi) where a new monotone piece of seg begins; None when the shape
    cannot list them (no structure, or too many)."""
    if not seg.shape.structured:
        return None
    off = seg.s0 - seg.lo
    found = seg.shape.breaks(lo + off, hi - 1 + off)
    if found is None:
        return None
    out = set()
    for b in found:
        x = b - off
        n = round(x)
        t = n if abs(x - n) <= 1e-12 * max(1.0, abs(x)) else math.ceil(x)  # float noise is no break
        if lo < t < hi:
            out.add(t)
    return sorted(out)


def pieces(a: Schedule, b: Schedule, horizon: int, start: int = 0) -> Iterator[Piece]:
    """The pieces covering start <= t < horizon, in order (a range both schedules repeat over: its
    first period only)."""
    ra, rb = ranges(a, start, horizon), ranges(b, start, horizon)
    i = j = 0
    while i < len(ra) and j < len(rb):
        lo, hi = max(ra[i][0], rb[j][0]), min(ra[i][1], rb[j][1])
        sa, sb = ra[i][2], rb[j][2]
        if lo < hi:
            yield from split(sa, sb, lo, first_period(sa, sb, lo, hi))
        if ra[i][1] == hi:
            i += 1
        if rb[j][1] == hi:
            j += 1


def first_period(sa: Segment, sb: Segment, lo: int, hi: int) -> int:
    """hi, or an earlier end when both segments repeat with a whole joint period P from some step
    on and the range holds more than P steps past it: the steps after repeat those before."""
    ea, eb = sa.shape.repeats(), sb.shape.repeats()
    if ea is None or eb is None or not (float(ea[1]).is_integer() and float(eb[1]).is_integer()):
        return hi
    period = math.lcm(int(ea[1]), int(eb[1]))
    begin = lo
    for (s0, _), seg in ((ea, sa), (eb, sb)):
        t0 = s0 - (seg.s0 - seg.lo)
        if t0 > begin:
            if not math.isfinite(t0):
                return hi
            begin = math.ceil(t0)
    return begin + period if begin + period < hi else hi


def split(sa: Segment, sb: Segment, lo: int, hi: int) -> Iterator[Piece]:
    """The pieces of lo <= t < hi, where the two segments hold."""
    ca, cb = piece_starts(sa, lo, hi), piece_starts(sb, lo, hi)
    if (ca is None and not sa.shape.monotone) or (cb is None and not sb.shape.monotone):
        yield lo, hi - 1, sa, sb, Mode.STEPS if hi - lo <= STEPS_UP_TO else Mode.CYCLES
        return
    mode = Mode.SMOOTH if ca is not None and cb is not None else Mode.VALUES
    cuts = [lo, *sorted(set(ca or ()) | set(cb or ())), hi]
    for k in range(len(cuts) - 1):
        yield cuts[k], cuts[k + 1] - 1, sa, sb, mode


def backwards(s: Schedule, horizon: int) -> Iterator[tuple[int, int, Segment, Mode]]:
    """The pieces of one schedule over 0 <= t < horizon from the last one back, each listed when
    reached (a window at the end of a segment, doubled until it holds a piece's start)."""
    for lo, hi, seg in reversed(ranges(s, 0, horizon)):
        end, width = hi, 64
        while end > lo:
            begin = max(lo, end - width)
            starts = piece_starts(seg, begin, end)
            mode = Mode.SMOOTH
            if starts is None:
                if seg.shape.monotone:  # a staircase: monotone over the whole window
                    starts, mode = [], Mode.VALUES
                else:
                    for t in range(end - 1, begin - 1, -1):
                        yield t, t, seg, Mode.STEPS
                    end = begin
                    continue
            if not starts and begin > lo:
                width *= 4
                continue
            cuts = [begin, *starts, end] if begin == lo else [*starts, end]
            for k in range(len(cuts) - 2, -1, -1):
                yield cuts[k], cuts[k + 1] - 1, seg, mode
            end = cuts[0]
