"""Exact comparisons over a run: the largest lr difference of two schedules, and a schedule's peak.

Nothing here samples: the steps are split into pieces on which each schedule is monotone (and, for
smooth shapes, has a monotone slope), see shapes.Shape.breaks. On a piece the largest |difference|
is found by branch and bound: a sub-range is dropped when a bound on |a - b| over it (from the
monotone values, and from the slopes) cannot beat the best difference already evaluated by more than
1e-12 of the lrs involved; short ranges are evaluated step by step. The number returned is always
an evaluated difference at a real step, within that tolerance of the true maximum.
"""

from __future__ import annotations

import math
from typing import Iterator, NamedTuple

from .model import Schedule, Segment

_BRUTE_BELOW = 12  # ranges this short are evaluated step by step
_REL_TOL = 1e-10  # of the largest lr seen: the bound's slack (float noise is ~1e-16)


class Difference(NamedTuple):
    value: float  # max |lr_a(t) - lr_b(t)|
    step: int  # the first step where it occurs (-1 for an empty run)


def _ranges(s: Schedule, lo: int, hi: int) -> list[tuple[int, int, Segment]]:
    out = []
    for seg in s.segments():
        a, b = max(lo, seg.lo), min(hi, seg.hi)
        if a < b:
            out.append((a, int(b), seg))
    return out


def piece_starts(seg: Segment, lo: int, hi: int) -> list[int] | None:
    """Integer steps in (lo, hi) where a new monotone piece of seg begins; None = step by step."""
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


def pieces(a: Schedule, b: Schedule, horizon: int, start: int = 0) -> Iterator[tuple[int, int, Segment, Segment, bool]]:
    """(lo, hi, seg_a, seg_b, structured) with lo <= t <= hi inclusive, covering start <= t < horizon."""
    ra, rb = _ranges(a, start, horizon), _ranges(b, start, horizon)
    i = j = 0
    while i < len(ra) and j < len(rb):
        lo = max(ra[i][0], rb[j][0])
        hi = min(ra[i][1], rb[j][1])
        sa, sb = ra[i][2], rb[j][2]
        if lo < hi:
            ca, cb = piece_starts(sa, lo, hi), piece_starts(sb, lo, hi)
            if ca is None or cb is None:
                yield lo, hi - 1, sa, sb, False
            else:
                cuts = [lo, *sorted(set(ca) | set(cb)), hi]
                for k in range(len(cuts) - 1):
                    yield cuts[k], cuts[k + 1] - 1, sa, sb, True
        if ra[i][1] == hi:
            i += 1
        if rb[j][1] == hi:
            j += 1


class _Best:
    __slots__ = ("value", "step", "scale", "slack")

    def __init__(self) -> None:
        self.value, self.step, self.scale, self.slack = -1.0, -1, 0.0, 0.0

    def see(self, t: int, va: float, vb: float) -> float:
        d = abs(va - vb)
        self.scale = max(self.scale, abs(va), abs(vb))
        if d > self.value or (d == self.value and t < self.step):
            self.value, self.step = d, t
        return d


def _slope(seg: Segment, t: int) -> float | None:
    return seg.shape.slope(t - seg.lo + seg.s0)


def _curve(seg: Segment, t: int) -> float | None:
    return seg.shape.curve(t - seg.lo + seg.s0)


def _spread(a_lo: float | None, a_hi: float | None, b_lo: float | None, b_hi: float | None) -> float:
    """max |x - y| for x between a_lo and a_hi, y between b_lo and b_hi (inf when one is unknown)."""
    if a_lo is None or a_hi is None or b_lo is None or b_hi is None:
        return math.inf
    return max(max(a_lo, a_hi) - min(b_lo, b_hi), max(b_lo, b_hi) - min(a_lo, a_hi))


def _piece(sa: Segment, sb: Segment, lo: int, hi: int, best: _Best, cutoff: float) -> None:
    va_lo, vb_lo, va_hi, vb_hi = sa.at(lo), sb.at(lo), sa.at(hi), sb.at(hi)
    best.see(lo, va_lo, vb_lo)
    best.see(hi, va_hi, vb_hi)
    stack = [(lo, hi, va_lo, vb_lo, va_hi, vb_hi)]
    while stack:
        if best.value > cutoff:
            return
        l, h, al, bl, ah, bh = stack.pop()
        if h - l <= _BRUTE_BELOW:
            for t in range(l + 1, h):
                best.see(t, sa.at(t), sb.at(t))
            continue
        tol = max(_REL_TOL * best.scale, best.slack)
        # both are monotone on [l, h]: a in [min(al, ah), max(al, ah)], b likewise
        bound = max(max(al, ah) - min(bl, bh), max(bl, bh) - min(al, ah))
        if bound > best.value + tol:
            # |d'| <= steep from the monotone slopes: |d| <= (|d(l)| + |d(h)| + steep (h - l)) / 2
            steep = _spread(_slope(sa, l), _slope(sa, h), _slope(sb, l), _slope(sb, h))
            if math.isfinite(steep):
                bound = min(bound, (abs(al - bl) + abs(ah - bh) + steep * (h - l)) / 2.0)
        if bound > best.value + tol:
            # |d''| <= bend from the monotone curvatures: d is its chord within bend (h - l)^2 / 8
            bend = _spread(_curve(sa, l), _curve(sa, h), _curve(sb, l), _curve(sb, h))
            if math.isfinite(bend):
                bound = min(bound, max(abs(al - bl), abs(ah - bh)) + bend * (h - l) ** 2 / 8.0)
        if bound <= best.value + tol:
            continue
        m = (l + h) // 2
        am, bm = sa.at(m), sb.at(m)
        best.see(m, am, bm)
        stack.append((m, h, am, bm, ah, bh))
        stack.append((l, m, al, bl, am, bm))


def _same(sa: Segment, sb: Segment, lo: int, hi: int) -> bool:
    """The two segments are one function of t on lo..hi (a round trip's usual case)."""
    shift = sa.s0 - sa.lo
    if sa.shape.moves and abs(shift - (sb.s0 - sb.lo)) > 1e-9 * max(1.0, abs(shift)):
        return False
    return sa.shape.same(sb.shape, lo + shift, hi + shift)


def max_difference(a: Schedule, b: Schedule, horizon: int, cutoff: float = math.inf, start: int = 0,
                   slack: float = 0.0) -> Difference:
    """max over start <= t < horizon of |a.value(t) - b.value(t)|, and the first step where it occurs.

    With a cutoff, the search stops as soon as a difference above it is found (the value returned
    is then only a lower bound): enough to rule out a candidate that is already worse. `slack`
    (an lr) loosens the tolerance of the search where that precision is not needed."""
    best = _Best()
    best.slack = slack
    for lo, hi, sa, sb, structured in pieces(a, b, horizon, start):
        if _same(sa, sb, lo, hi):
            best.see(lo, sa.at(lo), sb.at(lo))
        elif structured:
            _piece(sa, sb, lo, hi, best, cutoff)
        else:
            for t in range(lo, hi + 1):
                best.see(t, sa.at(t), sb.at(t))
                if best.value > cutoff:
                    break
        if best.value > cutoff:
            break
    return Difference(max(best.value, 0.0), best.step)


class Extreme(NamedTuple):
    value: float
    step: int  # first step where it is reached


def skeleton(s: Schedule, horizon: int) -> list[tuple[int, float]]:
    """(t, lr) at both ends of every monotone piece over 0 <= t < horizon (every step of a piece
    that is not monotone): enough to find any extreme or plateau of the schedule."""
    out: list[tuple[int, float]] = []
    for lo, hi, seg, _, structured in pieces(s, s, horizon):
        steps = range(lo, hi + 1) if not structured else ((lo, hi) if hi > lo else (lo,))
        for t in steps:
            out.append((t, seg.at(t)))
    return out


def peak(s: Schedule, horizon: int | None = None) -> Extreme:
    """The largest lr over 0 <= t < horizon (default: the phases and one step after them) and the
    first step that reaches it (within 1e-12 of it)."""
    if horizon is None:
        horizon = s.total_length + 1
    points = skeleton(s, horizon)
    top = max(v for _, v in points)
    tol = _REL_TOL * abs(top)
    # the first point within tol of the top, then the first step before it on its rising piece
    t_first = min(t for t, v in points if v >= top - tol)
    return Extreme(top, _first_reaching(s, t_first, top - tol))


def _first_reaching(s: Schedule, t: int, level: float) -> int:
    """Step back from t while the lr stays at or above level (a plateau reached earlier)."""
    while t > 0 and s.value(t - 1) >= level:
        # plateaus are constant phases: jump to their start instead of walking them
        i = max(k for k, off in enumerate(s.offsets) if off <= t - 1)
        if i < len(s.phases) and s.phases[i].kind == "constant" and s.value(s.offsets[i]) >= level:
            t = s.offsets[i]
        else:
            t -= 1
    return t
