"""The largest |a(t) - b(t)| over the integer steps of one piece, found from the extrema of a - b.

On a piece (pieces.py) both shapes are monotone and, when smooth, so are their slopes and
curvatures. The difference d = a - b takes its largest |d| over the integers of a range at an end
of the range or at the two integers either side of a stationary point of d, where d' = a' - b'
changes sign (d rises then falls there, or the reverse). So the work is finding where d' changes
sign, by bisection on the slopes: O(log steps) evaluations for each, whatever the piece's length.

Where d' is monotone (one slope is constant, the two slopes move in opposite directions, or the
curvatures give d'' one sign over the piece) it changes sign at most once, and that is exact.
Otherwise (two shapes curving alike, a cosine against another cosine) the piece is cut into a few
cells and each cell searched for a change of sign of d' at its ends, or of d'' (then d' may turn
and change sign twice, either side of where d'' does): for these closed forms d' has at most a
couple of sign changes on a piece, so a handful of cells separates them.
"""

from __future__ import annotations

from typing import Callable

from .model import Segment

BRUTE_BELOW = 12  # ranges this short are evaluated step by step
REL_TOL = 1e-10  # of the largest lr seen: the slack of a bound (float noise is ~1e-16)
_CELLS = 4  # cells a piece is cut into when d' may turn on it
_CLIMB = 64  # steps walked from a stationary point found by bisection, past float noise in the slopes
# evaluations spent on a piece known by its values only (a staircase of more than shapes.MAX_STAIRS
# stairs): past this the best found so far stands (their many equal teeth defeat the bounds)
VALUES_BUDGET = 8192


class Best:
    """The largest |a - b| evaluated so far and the first step where it occurs."""

    __slots__ = ("value", "step", "scale", "slack")

    def __init__(self, slack: float = 0.0) -> None:
        self.value, self.step, self.scale, self.slack = -1.0, -1, 0.0, slack

    def see(self, t: int, va: float, vb: float) -> float:
        d = abs(va - vb)
        if abs(va) > self.scale or abs(vb) > self.scale:
            self.scale = max(abs(va), abs(vb))
        if d > self.value or (d == self.value and t < self.step):
            self.value, self.step = d, t
        return d

    def limit(self) -> float:
        """A range whose |d| is provably at most this cannot change the answer."""
        return self.value + max(REL_TOL * self.scale, self.slack)


def spread(a_lo: float, a_hi: float, b_lo: float, b_hi: float) -> tuple[float, float]:
    """The range of x - y for x between a_lo and a_hi, y between b_lo and b_hi."""
    return min(a_lo, a_hi) - max(b_lo, b_hi), max(a_lo, a_hi) - min(b_lo, b_hi)


def _one_sign(low: float, high: float) -> bool:
    return low >= 0.0 or high <= 0.0


class _Difference:
    """d = a - b of two segments, by step: values (seen into best), slope and curvature."""

    __slots__ = ("best", "fa", "fb", "ga", "gb", "ca", "cb", "oa", "ob")

    def __init__(self, sa: Segment, sb: Segment, best: Best) -> None:
        self.best = best
        self.fa, self.fb, self.ga, self.gb = sa.shape.value, sb.shape.value, sa.shape.slope, sb.shape.slope
        self.ca, self.cb = sa.shape.curve, sb.shape.curve
        self.oa, self.ob = sa.s0 - sa.lo, sb.s0 - sb.lo

    def see(self, t: int) -> float:
        return self.best.see(t, self.fa(t + self.oa), self.fb(t + self.ob))

    def slope(self, t: int) -> float:
        return self.ga(t + self.oa) - self.gb(t + self.ob)  # type: ignore[no-any-return, operator]

    def curve(self, t: int) -> float | None:
        x, y = self.ca(t + self.oa), self.cb(t + self.ob)
        return None if x is None or y is None else x - y


def solve(sa: Segment, sb: Segment, lo: int, hi: int, best: Best, cutoff: float) -> None:
    """See the largest |a - b| over lo <= t <= hi (a piece: both monotone there) into best."""
    fa, fb, oa, ob = sa.shape.value, sb.shape.value, sa.s0 - sa.lo, sb.s0 - sb.lo
    al, bl, ah, bh = fa(lo + oa), fb(lo + ob), fa(hi + oa), fb(hi + ob)
    best.see(lo, al, bl)
    best.see(hi, ah, bh)
    if hi - lo < 2:
        return
    ga, gb = sa.shape.slope, sb.shape.slope
    pl, ql, ph, qh = ga(lo + oa), gb(lo + ob), ga(hi + oa), gb(hi + ob)
    if pl is None or ql is None or ph is None or qh is None:
        by_values(sa, sb, lo, hi, best, cutoff)
        return
    # the values are monotone: |d| is at most the widest gap between their ranges
    low, high = spread(al, ah, bl, bh)
    if max(high, -low) <= best.limit():
        return
    d = _Difference(sa, sb, best)
    if hi - lo <= BRUTE_BELOW:
        for t in range(lo + 1, hi):
            d.see(t)
        return
    # the slopes are monotone: d' of one sign over the piece makes d monotone, its ends its extremes
    if _one_sign(*spread(pl, ph, ql, qh)):
        return
    dl, dh = pl - ql, ph - qh
    monotone = ph == pl or qh == ql or (ph > pl) != (qh > ql)  # the slopes move apart: d' monotone
    if not monotone:
        ra, rb, sa_h, sb_h = sa.shape.curve(lo + oa), sb.shape.curve(lo + ob), sa.shape.curve(hi + oa), sb.shape.curve(hi + ob)
        monotone = None not in (ra, rb, sa_h, sb_h) and _one_sign(*spread(ra, sa_h, rb, sb_h))  # type: ignore[arg-type]
    if monotone:
        if dl != 0.0 and dh != 0.0 and (dl > 0.0) != (dh > 0.0):
            _stationary(d, lo, hi, dl > 0.0)
        return
    _cells(d, lo, hi, min(_CELLS, (hi - lo) // BRUTE_BELOW), cutoff)


def _cells(d: _Difference, lo: int, hi: int, n: int, cutoff: float) -> None:
    """d' may turn on lo..hi: look for its changes of sign cell by cell."""
    points = [lo + (hi - lo) * i // n for i in range(n + 1)]
    slopes = [d.slope(t) for t in points]
    curves = [d.curve(t) for t in points]
    for i in range(n):
        if d.best.value > cutoff:
            return
        l, h, sl, sh = points[i], points[i + 1], slopes[i], slopes[i + 1]
        if sl == 0.0 or sh == 0.0:
            d.see(l if sl == 0.0 else h)
        if sl != 0.0 and sh != 0.0 and (sl > 0.0) != (sh > 0.0):
            _stationary(d, l, h, sl > 0.0)
            continue
        cl, ch = curves[i], curves[i + 1]
        if cl is None or ch is None or cl == 0.0 or ch == 0.0 or (cl > 0.0) == (ch > 0.0) or sl == 0.0:
            continue
        # d' turns inside the cell: where d'' changes sign, d' may have crossed 0 and come back
        z = _sign_change(d.curve, l, h, cl > 0.0)  # type: ignore[arg-type]
        sz = d.slope(z)
        if sz == 0.0:
            d.see(z)
        elif (sz > 0.0) != (sl > 0.0):
            _stationary(d, l, z, sl > 0.0)
            _stationary(d, z, h, sz > 0.0)


def _sign_change(f: Callable[[int], float], x: int, y: int, positive: bool) -> int:
    """An integer z in [x, y) where f goes from the sign it has at x (> 0 when positive) to the
    other one at z + 1, by bisection (f changes sign on [x, y])."""
    while y - x > 1:
        m = (x + y) // 2
        v = f(m)
        if v == 0.0:
            return m
        if (v > 0.0) == positive:
            x = m
        else:
            y = m
    return x


def _stationary(d: _Difference, l: int, h: int, rising: bool) -> None:
    """d' changes sign once on [l, h] (> 0 at l when rising): the integers either side of where,
    and from there uphill while |d| grows (the slopes' float noise can misplace a flat top)."""
    x = _sign_change(d.slope, l, h, rising)
    found = {t: d.see(t) for t in {x, min(x + 1, h)}}
    t = max(found, key=lambda k: (found[k], -k))
    for direction in (-1, 1):
        here, value = t, found[t]
        for _ in range(_CLIMB):
            nxt = here + direction
            if not l <= nxt <= h:
                break
            v = d.see(nxt)
            if v <= value:
                break
            here, value = nxt, v


def by_values(sa: Segment, sb: Segment, lo: int, hi: int, best: Best, cutoff: float) -> None:
    """A piece without slopes (monotone values only): split until a range's value bound cannot win
    (or VALUES_BUDGET evaluations are spent)."""
    fa, fb = sa.shape.value, sb.shape.value
    oa, ob = sa.s0 - sa.lo, sb.s0 - sb.lo
    stack = [(lo, hi, fa(lo + oa), fb(lo + ob), fa(hi + oa), fb(hi + ob))]
    best.see(lo, stack[0][2], stack[0][3])
    best.see(hi, stack[0][4], stack[0][5])
    spent = 0
    while stack:
        if best.value > cutoff or spent > VALUES_BUDGET:
            return
        l, h, al, bl, ah, bh = stack.pop()
        if h - l <= BRUTE_BELOW:
            for t in range(l + 1, h):
                best.see(t, fa(t + oa), fb(t + ob))
            spent += h - l
            continue
        spent += 1
        low, high = spread(al, ah, bl, bh)
        if max(high, -low) <= best.limit():
            continue
        m = (l + h) // 2
        am, bm = fa(m + oa), fb(m + ob)
        best.see(m, am, bm)
        stack.append((m, h, am, bm, ah, bh))
        stack.append((l, m, al, bl, am, bm))
