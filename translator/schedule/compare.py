"""Exact comparisons over a run: the largest lr difference of two schedules, a schedule's peak and
where a schedule settles.

Nothing here walks the steps: the run is cut into pieces on which both schedules are monotone
(pieces.py) and each piece is searched from the extrema of the difference (extrema.py), so the cost
follows the number of pieces, not of steps. A shape that keeps turning, over more turns than are
worth listing, is searched in halves: a half is dropped when the bounds of both schedules over it
cannot beat what was already evaluated. The number returned is always a difference evaluated at a
real step, within 1e-10 of the lrs involved of the true maximum (evaluating a shape has float
noise of about 1e-16).
"""

from __future__ import annotations

import heapq
import math
from typing import Callable, NamedTuple

from ..core.bounded import keep
from .extrema import REL_TOL, Best, by_values, solve
from .model import Schedule, Segment
from .pieces import STEPS_UP_TO, Mode, backwards, pieces, piece_starts, split

__all__ = ["Difference", "Extreme", "max_difference", "peak", "piece_starts", "settles"]


class Difference(NamedTuple):
    value: float  # max |lr_a(t) - lr_b(t)|
    step: int  # the first step where it occurs (-1 for an empty run)


class Extreme(NamedTuple):
    value: float
    step: int  # first step where it is reached


def _same(sa: Segment, sb: Segment, lo: int, hi: int) -> bool:
    """The two segments are one function of t on lo..hi (a round trip's usual case)."""
    shift = sa.s0 - sa.lo
    if sa.shape.moves and abs(shift - (sb.s0 - sb.lo)) > 1e-9 * max(1.0, abs(shift)):
        return False
    return sa.shape.same(sb.shape, lo + shift, hi + shift)


def _range(seg: Segment, lo: int, hi: int) -> tuple[float, float] | None:
    """Bounds on seg's values over lo..hi, when cheap to know."""
    if seg.shape.monotone:
        a, b = seg.at(lo), seg.at(hi)
        return (a, b) if a <= b else (b, a)
    return seg.shape.bounds()


def _halves(sa: Segment, sb: Segment, lo: int, hi: int, visit: Callable[[int, int, Mode], bool],
            bound: Callable[[int, int], float], limit: Callable[[], float], leftmost: bool = False) -> bool:  # fmt: skip
    """Visit lo..hi by its pieces, halving it while it has too many to list: the half whose bound
    on what it can give is highest first (the first half first when `leftmost`); a half whose bound
    is at most limit() (below it when leftmost) cannot change the result. True when a visit says stop."""
    queue = [(-bound(lo, hi), lo, hi)]
    while queue:
        top, l, h = heapq.heappop(queue) if not leftmost else queue.pop()
        if -top < limit() if leftmost else -top <= limit():
            if leftmost:
                continue
            return False  # the highest bound left cannot win: nor can any other
        if h - l < STEPS_UP_TO:
            if any(visit(p_lo, p_hi, mode) for p_lo, p_hi, _, _, mode in split(sa, sb, l, h + 1)):
                return True
            continue
        m = (l + h) // 2
        halves = [(-bound(m + 1, h), m + 1, h), (-bound(l, m), l, m)]
        for half in halves:
            if leftmost:
                queue.append(half)
            else:
                heapq.heappush(queue, half)
    return False


def max_difference(a: Schedule, b: Schedule, horizon: int, cutoff: float = math.inf, start: int = 0,
                   slack: float = 0.0) -> Difference:
    """max over start <= t < horizon of |a.value(t) - b.value(t)|, and the first step where it occurs.

    With a cutoff, the search stops as soon as a difference above it is found (the value returned
    is then only a lower bound): enough to rule out a candidate that is already worse. `slack`
    (an lr) loosens the tolerance of the search where that precision is not needed."""
    slot = (a.key, b.key, horizon, start, slack)
    found = _RECENT.get(slot)
    if found is not None:
        return found  # a whole search: right for any cutoff
    best = Best(slack)
    for lo, hi, sa, sb, mode in pieces(a, b, horizon, start):
        if _search(sa, sb, lo, hi, mode, best, cutoff):
            break
    found = Difference(max(best.value, 0.0), best.step)
    return keep(_RECENT, slot, found, 256) if best.value <= cutoff else found


# the comparisons of one file: a writer's choice of a closest form, then its read-back's check
_RECENT: dict[tuple[object, ...], Difference] = {}


def _search(sa: Segment, sb: Segment, lo: int, hi: int, mode: Mode, best: Best, cutoff: float) -> bool:
    """See the largest |a - b| over lo..hi into best; True once it is above cutoff."""
    if _same(sa, sb, lo, hi):
        best.see(lo, sa.at(lo), sb.at(lo))
    elif mode is Mode.SMOOTH:
        solve(sa, sb, lo, hi, best, cutoff)
    elif mode is Mode.VALUES:
        by_values(sa, sb, lo, hi, best, cutoff)
    elif mode is Mode.STEPS:
        for t in range(lo, hi + 1):
            best.see(t, sa.at(t), sb.at(t))
            if best.value > cutoff:
                break
    else:

        def bound(l: int, h: int) -> float:
            ra, rb = _range(sa, l, h), _range(sb, l, h)
            m = (l + h) // 2
            best.see(m, sa.at(m), sb.at(m))
            return math.inf if ra is None or rb is None else max(ra[1] - rb[0], rb[1] - ra[0])

        _halves(sa, sb, lo, hi, lambda l, h, m: _search(sa, sb, l, h, m, best, cutoff), bound,
                lambda: best.limit() if best.value <= cutoff else math.inf)
    return best.value > cutoff


def _highest(s: Schedule, horizon: int) -> float:
    top = -math.inf
    for lo, hi, seg, _, mode in pieces(s, s, horizon):
        if mode is Mode.CYCLES:

            def visit(l: int, h: int, m: Mode) -> bool:
                nonlocal top
                steps = range(l, h + 1) if m is Mode.STEPS else (l, h)
                top = max(top, *(seg.at(t) for t in steps))
                return False

            def bound(l: int, h: int) -> float:
                r = _range(seg, l, h)
                return math.inf if r is None else r[1]

            _halves(seg, seg, lo, hi, visit, bound, lambda: top)
        else:
            steps = range(lo, hi + 1) if mode is Mode.STEPS else (lo, hi)
            top = max(top, *(seg.at(t) for t in steps))
    return top


def _first_at_least(s: Schedule, horizon: int, level: float) -> int:
    """The first step whose lr is at least level (one is: level is at most the peak)."""
    found = -1

    def visit(seg: Segment, lo: int, hi: int, mode: Mode) -> bool:
        nonlocal found
        if mode is Mode.STEPS:
            found = next((t for t in range(lo, hi + 1) if seg.at(t) >= level), -1)
        elif seg.at(lo) >= level:
            found = lo
        elif seg.at(hi) >= level:  # monotone and rising: the first step at or above level
            l, h = lo, hi
            while h - l > 1:
                m = (l + h) // 2
                if seg.at(m) >= level:
                    h = m
                else:
                    l = m
            found = h
        return found >= 0

    for lo, hi, seg, _, mode in pieces(s, s, horizon):
        if mode is not Mode.CYCLES:
            if visit(seg, lo, hi, mode):
                return found
            continue

        def bound(l: int, h: int, seg: Segment = seg) -> float:
            r = _range(seg, l, h)
            return math.inf if r is None else r[1]

        if _halves(seg, seg, lo, hi, lambda l, h, m, seg=seg: visit(seg, l, h, m), bound, lambda: level, leftmost=True):  # type: ignore[misc]
            return found
    return max(found, 0)


def peak(s: Schedule, horizon: int | None = None) -> Extreme:
    """The largest lr over 0 <= t < horizon (default: the phases and one step after them) and the
    first step that reaches it (within 1e-10 of it)."""
    if horizon is None:
        horizon = s.total_length + 1
    slot = (s.key, horizon)
    found = _PEAKS.get(slot)
    if found is None:
        top = _highest(s, horizon)
        found = keep(_PEAKS, slot, Extreme(top, _first_at_least(s, horizon, top - REL_TOL * abs(top))), 256)
    return found


_PEAKS: dict[tuple[object, ...], Extreme] = {}


def settles(s: Schedule, horizon: int, last: float, rel: float = 1e-12) -> int:
    """The first step t such that the lr stays within rel of `last` over t <= u < horizon."""
    tol = rel * max(abs(last), 1e-300)
    for lo, hi, seg, mode in backwards(s, horizon):
        if mode is Mode.STEPS:
            if abs(seg.at(lo) - last) > tol:
                return lo + 1
            continue
        if abs(seg.at(hi) - last) > tol:
            return hi + 1
        if abs(seg.at(lo) - last) <= tol:
            continue  # monotone between two lrs at `last`: all of it is
        l, h = lo, hi  # lr(l) is not at `last`, lr(h) is: the first that is, monotone between
        while h - l > 1:
            m = (l + h) // 2
            if abs(seg.at(m) - last) <= tol:
                h = m
            else:
                l = m
        return h
    return 0
