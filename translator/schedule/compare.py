"""Exact comparisons over a run: the largest lr difference of two schedules, a schedule's peak and
where a schedule settles.

Nothing here walks the steps: the run is cut into pieces on which both schedules are monotone
(below) and each piece is searched from the extrema of the difference (below), so the cost
follows the number of pieces, not of steps. A shape that keeps turning, over more turns than are
worth listing, is searched in halves: a half is dropped when the bounds of both schedules over it
cannot beat what was already evaluated. The number returned is always a difference evaluated at a
real step, within 1e-10 of the lrs involved of the true maximum (evaluating a shape has float
noise of about 1e-16).

Pieces. The steps of a run cut into pieces on which two schedules are both monotone.

A piece comes with how it may be searched (`Mode`): SMOOTH (both monotone, with monotone slopes
and curvatures: extrema.solve), VALUES (both monotone, a staircase among them with too many stairs
to list: bounds from the values only), STEPS (every step: a shape with no structure, over a short
range) or CYCLES (a shape that keeps turning, with too many turns to list: searched by its period
or by residue classes of steps, cycles.py; failing that, in halves, below). Where both schedules
repeat from some step on with a whole joint period, a range is cut to its first period: every later step repeats the lrs of one in it, so
the largest difference and the peak are found there, at their first step.

Extrema. The largest |a(t) - b(t)| over the integer steps of one piece, found from the extrema of a - b.

On a piece (above) both shapes are monotone and, when smooth, so are their slopes and
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

Closest forms (the end of this module): what a schedule looks like in a few numbers, and the best of several candidates.

A writer whose framework cannot hold a schedule exactly proposes candidate configs (keeping the
peak, the warmup length and the step where the decay ends, and trying each decay shape it has),
reads each back with its own reader, and keeps the one with the smallest largest difference
(compare.max_difference over the run). That difference is what the report gives.
"""

from __future__ import annotations

import enum
import heapq
import math
from typing import Any, Callable, Iterable, Iterator, NamedTuple

from ..core.ir import keep
from . import cycles
from .model import Schedule, Segment
from .shapes import MAX_BREAKS


class Mode(enum.Enum):
    SMOOTH = "smooth"
    VALUES = "values"
    STEPS = "steps"
    CYCLES = "cycles"


Piece = tuple[int, int, Segment, Segment, Mode]  # lo <= t <= hi inclusive
HALVES_UP_TO = 8_000  # halves searched in a range of many cycles: past this it is refused (TooManyCycles)
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


def backwards(
    s: Schedule, horizon: int, skip: Callable[[Segment, int, int], bool] | None = None
) -> Iterator[tuple[int, int, Segment, Mode]]:
    """The pieces of one schedule over 0 <= t < horizon from the last one back, each listed when
    reached (a window at the end of a segment, doubled until it holds a piece's start); a segment's
    range lo..hi for which skip says so is passed over whole."""
    for lo, hi, seg in reversed(ranges(s, 0, horizon)):
        if skip is not None and skip(seg, lo, hi - 1):
            continue
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
    # A turn within float noise of a step is cut at that step (piece_starts), which may leave the end
    # step itself on the other side of the turn (inverse_sqrt held up to 1.0000000000000002): the
    # ends are seen; the slopes are read between them, where both shapes are one smooth piece.
    lo, hi = lo + 1, hi - 1
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
        ra, rb, sa_h, sb_h = (
            sa.shape.curve(lo + oa),
            sb.shape.curve(lo + ob),
            sa.shape.curve(hi + oa),
            sb.shape.curve(hi + ob),
        )
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
    # a turning shape that does not turn (or turns a few times) on lo..hi is bounded by its values at
    # the ends and the turns: a range's bound then shrinks with the range, so halving can prune it
    # (the whole shape's bounds would keep every half of a long run: work linear in its steps)
    starts = piece_starts(seg, lo, hi + 1)
    if starts is not None and len(starts) <= _CELLS:
        values = [seg.at(t) for t in (lo, *starts, *(t - 1 for t in starts), hi)]
        return min(values), max(values)
    return seg.shape.bounds()


def _halves(
    sa: Segment,
    sb: Segment,
    lo: int,
    hi: int,
    visit: Callable[[int, int, Mode], bool],
    bound: Callable[[int, int], float],
    limit: Callable[[], float],
    leftmost: bool = False,
) -> bool:
    """Visit lo..hi by its pieces, halving it while it has too many to list: the half whose bound
    on what it can give is highest first (the first half first when `leftmost`); a half whose bound
    is at most limit() (below it when leftmost) cannot change the result. True when a visit says stop."""
    queue = [(-bound(lo, hi), lo, hi)]
    for _ in range(HALVES_UP_TO):
        if not queue:
            return False
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
        for a, b in ((m + 1, h), (l, m)):
            if leftmost:
                queue.append((-bound(a, b), a, b))
                continue
            # a half of a few pieces (a turn or two of a long cycle) is searched at once: where a
            # cycle's peak falls between steps, the halves still holding a cycle are bounded by its
            # peak, above any step's value, and would all be halved down to STEPS_UP_TO first
            found = list(split(sa, sb, a, b + 1))
            if len(found) <= _CELLS and all(mode is not Mode.CYCLES for *_, mode in found):
                if any(visit(p_lo, p_hi, mode) for p_lo, p_hi, _, _, mode in found):
                    return True
                continue
            heapq.heappush(queue, (-bound(a, b), a, b))
    raise cycles.too_many(sa if sa.shape.repeats() else sb, lo, hi)


def max_difference(
    a: Schedule, b: Schedule, horizon: int, cutoff: float = math.inf, start: int = 0, slack: float = 0.0
) -> Difference:
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
    elif not _by_cycles(sa, sb, lo, hi, best, cutoff):

        def bound(l: int, h: int) -> float:
            ra, rb = _range(sa, l, h), _range(sb, l, h)
            m = (l + h) // 2
            best.see(m, sa.at(m), sb.at(m))
            return math.inf if ra is None or rb is None else max(ra[1] - rb[0], rb[1] - ra[0])

        _halves(
            sa,
            sb,
            lo,
            hi,
            lambda l, h, m: _search(sa, sb, l, h, m, best, cutoff),
            bound,
            lambda: best.limit() if best.value <= cutoff else math.inf,
        )
    return best.value > cutoff


def _cycle_jobs(sa: Segment, sb: Segment | None, lo: int, hi: int) -> list[cycles.Job] | None:
    """cycles.plan for whichever of the two segments repeats (sb None: sa alone)."""
    pairs: list[tuple[Segment, Segment | None]] = [(sa, sb)] if sb is None else [(sa, sb), (sb, sa)]
    for sp, so in pairs:
        starts = None if so is None else piece_starts(so, lo, hi + 1)
        if so is not None and starts is None and so.shape.monotone:
            starts = []
        jobs = cycles.plan(sp, so, lo, hi, starts)
        if jobs is not None:
            return jobs
    return None


def _by_cycles(sa: Segment, sb: Segment, lo: int, hi: int, best: Best, cutoff: float) -> bool:
    """Search a range of many cycles by cycles.plan's jobs; False when it has none."""
    jobs = _cycle_jobs(sa, sb, lo, hi)
    if jobs is None:
        return False
    for job in jobs:
        reads = cycles.Reads(best, job, sa, sb)
        for p_lo, p_hi, ja, jb, mode in split(job.a, job.b, job.lo, job.hi + 1):  # type: ignore[arg-type]
            if _search(ja, jb, p_lo, p_hi, mode, reads, cutoff):  # type: ignore[arg-type]
                return True
    return True


def _reads(seg: Segment, lo: int, hi: int) -> list[tuple[cycles.Job, list[Piece]]] | None:
    """A range of many cycles of one segment as cycles.plan's jobs and their pieces (None: none)."""
    jobs = _cycle_jobs(seg, None, lo, hi)
    if jobs is None:
        return None
    out = [(job, list(split(job.a, job.a, job.lo, job.hi + 1))) for job in jobs]
    return None if any(mode is Mode.CYCLES for _, found in out for *_, mode in found) else out


def _highest(s: Schedule, horizon: int) -> float:
    top = -math.inf
    for lo, hi, seg, _, mode in pieces(s, s, horizon):
        if mode is Mode.CYCLES:
            jobs = _reads(seg, lo, hi)
            if jobs is not None:
                for job, found in jobs:
                    for l, h, _, _, m in found:
                        steps = range(l, h + 1) if m is Mode.STEPS else (l, h)
                        top = max(top, *(seg.at(job.start + job.stride * q) for q in steps))
                continue

            def visit(l: int, h: int, m: Mode) -> bool:
                nonlocal top
                steps = range(l, h + 1) if m is Mode.STEPS else (l, h)
                top = max(top, *(seg.at(t) for t in steps))
                return False

            def bound(l: int, h: int) -> float:
                r = _range(seg, l, h)
                return math.inf if r is None else r[1]

            # a half that cannot beat top by more than the tolerance is not searched: a cycle of a
            # fractional period peaks at no whole step, and only ever nearer, over every later cycle
            _halves(seg, seg, lo, hi, visit, bound, lambda: top + REL_TOL * abs(top))
        else:
            steps = range(lo, hi + 1) if mode is Mode.STEPS else (lo, hi)
            top = max(top, *(seg.at(t) for t in steps))
    return top


def _first_in(seg: Segment, lo: int, hi: int, mode: Mode, level: float) -> int:
    """The first step of a piece whose lr is at least level, or -1."""
    if mode is Mode.STEPS:
        return next((t for t in range(lo, hi + 1) if seg.at(t) >= level), -1)
    if seg.at(lo) >= level:
        return lo
    if seg.at(hi) < level:
        return -1
    l, h = lo, hi  # monotone and rising: the first step at or above level
    while h - l > 1:
        m = (l + h) // 2
        if seg.at(m) >= level:
            h = m
        else:
            l = m
    return h


def _first_of_reads(jobs: list[tuple[cycles.Job, list[Piece]]], level: float) -> int:
    """The first step at or above level over cycles.plan's jobs (classes of steps), or -1."""
    first = -1
    for job, found in jobs:
        for l, h, ja, _, m in found:
            q = _first_in(ja, l, h, m, level)
            if q >= 0:
                t = job.start + job.stride * q
                first = t if first < 0 else min(first, t)
                break
    return first


def _first_at_least(s: Schedule, horizon: int, level: float) -> int:
    """The first step whose lr is at least level (one is: level is at most the peak)."""
    found = -1

    def visit(seg: Segment, lo: int, hi: int, mode: Mode) -> bool:
        nonlocal found
        found = _first_in(seg, lo, hi, mode, level)
        return found >= 0

    for lo, hi, seg, _, mode in pieces(s, s, horizon):
        if mode is not Mode.CYCLES:
            if visit(seg, lo, hi, mode):
                return found
            continue
        jobs = _reads(seg, lo, hi)
        if jobs is not None:
            found = _first_of_reads(jobs, level)
            if found >= 0:
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

    def near(seg: Segment, lo: int, hi: int) -> bool:
        """Many cycles of a periodic shape, each of its steps' lrs within tol of last: settled."""
        many = hi - lo > STEPS_UP_TO and not seg.shape.monotone and piece_starts(seg, lo, hi + 1) is None
        jobs = _reads(seg, lo, hi) if many else None
        return jobs is not None and all(
            abs(seg.at(job.start + job.stride * q) - last) <= tol
            for job, found in jobs
            for l, h, _, _, m in found
            for q in (range(l, h + 1) if m is Mode.STEPS else (l, h))
        )

    for lo, hi, seg, mode in backwards(s, horizon, near):
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


# Closest forms: the features of a schedule a writer keeps, and the best of its candidates

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
