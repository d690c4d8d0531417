"""Building schedules out of others: a window of steps, a sequence of schedules, a floor.

These are what framework readers compose their schedules from: a sequence of sub-schedulers each
evaluated on its own clock (`window`, `sequence`), and `max(lr, floor)` clamps (`floor_at`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Iterable

from .compare import piece_starts
from .model import NotRepresentable, Phase, Schedule, Segment, phase


def constant(value: float, length: int, beyond: str = "hold") -> Phase:
    return Phase("constant", length, float(value), float(value), beyond=beyond)


def window(s: Schedule, start: int, length: int) -> list[Phase]:
    """Phases whose step u gives s.value(start + u), for 0 <= u < length."""
    if length < 1:
        return []
    out: list[Phase] = []
    end = start + length
    last = len(s.phases) - 1
    for i, p in enumerate(s.phases):
        a = s.offsets[i]
        b: float = s.offsets[i + 1] if (i < last or p.beyond != "continue") else math.inf
        lo, hi = max(a, start), min(b, end)
        if lo < hi:
            out.append(_sub(p, lo - a, int(hi - lo)))
    if s.phases[-1].beyond == "hold" and end > s.total_length:
        n = end - max(start, s.total_length)
        out.append(constant(s.phases[-1].end, n))
    return merge(out)


def _sub(p: Phase, skip: int, length: int) -> Phase:
    if p.kind == "constant":
        return replace(p, length=length, beyond="hold")
    return p.sub(skip, length)


def merge(phases: Iterable[Phase]) -> list[Phase]:
    """Neighbouring pieces of one shape (constants at the same lr, consecutive windows) become one."""
    out: list[Phase] = []
    for p in phases:
        q = out[-1] if out else None
        if q is not None and p.kind == "constant" and q.kind == "constant" and q.start == p.start:
            out[-1] = replace(q, length=q.length + p.length, beyond=p.beyond)
        elif (
            q is not None
            and (p.kind, p.start, p.end, p.params, p.width) == (q.kind, q.start, q.end, q.params, q.width)
            and p.shift == q.shift + q.length
        ):
            n = q.length + p.length
            out[-1] = replace(q, length=n, span=None if q.width == n else q.width, beyond=p.beyond)
        else:
            out.append(p)
    return out


def sequence(parts: list[tuple[Schedule, int | None]]) -> Schedule:
    """Schedules run one after the other, each from its own step 0 for the given number of steps
    (None for the last, which runs on with its own beyond)."""
    phases: list[Phase] = []
    for k, (s, length) in enumerate(parts):
        if length is None:
            if k != len(parts) - 1:
                raise ValueError("only the last schedule of a sequence runs on")
            phases.extend(s.phases)
        else:
            phases.extend(window(s, 0, length))
    return Schedule(finish(phases, phases[-1].beyond))


def finish(phases: list[Phase], beyond: str = "hold") -> list[Phase]:
    """Merged phases with `beyond` on the last one (and only there)."""
    out = merge(replace(p, beyond="hold") for p in phases)
    out[-1] = replace(out[-1], beyond=beyond)
    return out


def _runs(seg: Segment, n: int, floor: float) -> list[tuple[int, int, bool]]:
    """(u0, u1, above) runs over local steps 0 <= u < n: above = lr >= floor."""
    starts = piece_starts(seg, seg.lo, seg.lo + n)
    if starts is None and seg.shape.monotone:  # a staircase with too many stairs to list: monotone
        starts = []
    cuts = [seg.lo, *(starts or []), seg.lo + n] if starts is not None else list(range(seg.lo, seg.lo + n + 1))
    runs: list[tuple[int, int, bool]] = []

    def add(u0: int, u1: int, above: bool) -> None:
        if u1 <= u0:
            return
        if runs and runs[-1][2] == above and runs[-1][1] == u0:
            runs[-1] = (runs[-1][0], u1, above)
        else:
            runs.append((u0, u1, above))

    for k in range(len(cuts) - 1):
        lo, hi = cuts[k], cuts[k + 1] - 1  # a monotone piece, inclusive
        a_lo, a_hi = seg.at(lo) >= floor, seg.at(hi) >= floor
        if a_lo == a_hi:
            add(lo - seg.lo, hi + 1 - seg.lo, a_lo)
            continue
        l, h = lo, hi  # the side changes once on a monotone piece: find where
        while h - l > 1:
            m = (l + h) // 2
            if (seg.at(m) >= floor) == a_lo:
                l = m
            else:
                h = m
        add(lo - seg.lo, h - seg.lo, a_lo)
        add(h - seg.lo, hi + 1 - seg.lo, a_hi)
    return runs


def floor_at(s: Schedule, floor: float) -> Schedule:
    """The schedule max(lr(t), floor), exactly (a NeoX min_lr, VeOmni's 1e-7)."""
    out: list[Phase] = []
    segs = s.segments()
    above = True  # whether the last step of the phases is above the floor
    for i, p in enumerate(s.phases):
        for u0, u1, above in _runs(segs[i], p.length, floor):
            out.append(_sub(p, u0, u1 - u0) if above else constant(floor, u1 - u0))
    last = s.phases[-1]
    if last.beyond == "hold":
        held = max(last.end, floor)
        if held != (last.end if above else floor):
            out.append(constant(held, 1))
        return Schedule(finish(out))
    return Schedule(_continue_above(out, s, floor, above))


def _safe(seg: Segment, t: int) -> float:
    try:
        return seg.at(t)
    except OverflowError:  # a growing shape far out: past any floor
        return math.inf


def _continue_above(out: list[Phase], s: Schedule, floor: float, above: bool) -> list[Phase]:
    """The last phase runs on: where does it cross the floor after the phases end?"""
    last, off = s.phases[-1], s.offsets[-2]
    seg, t0 = s.segments()[-1], s.total_length

    def going_on(length: int = 1) -> list[Phase]:  # the last phase run on from t0
        return [] if above else [_sub(last, t0 - off, length)]

    direction = seg.shape.tail()
    if direction == 0:
        low = min(last.start, last.param("high")) if last.kind == "cyclic" else min(last.start, last.end)
        if last.kind == "custom" or low < floor:
            raise NotRepresentable(
                f"a {last.kind} phase that keeps cycling below the floor {floor:g} has no piecewise form"
            )
        return finish(out + going_on(), "continue")
    above_now = seg.at(t0) >= floor
    if direction < 0 and not above_now:
        return finish(out + ([] if not above else [constant(floor, 1)]))
    if direction > 0 and above_now:
        return finish(out + going_on(), "continue")
    # it crosses once: find the first step on the other side (exponential then binary search)
    step = 1
    while (_safe(seg, t0 + step) >= floor) == above_now:
        step *= 2
        if step > 2**62:  # never crosses: it stays on its side
            if above_now:
                return finish(out + going_on(), "continue")
            return finish(out + ([constant(floor, 1)] if above else []))
    lo, hi = t0 + step // 2, t0 + step
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if (_safe(seg, mid) >= floor) == above_now:
            lo = mid
        else:
            hi = mid
    n = hi - t0
    if above_now:  # falls below: the shape until hi, then the floor held
        return finish(out + [_sub(last, t0 - off, n), constant(floor, 1)])
    return finish(out + [constant(floor, n), _sub(last, hi - off, 1)], "continue")


def ramp(start: float, end: float, length: int, **extra: object) -> Phase:
    """A linear phase from start (first step) to end (where the next phase starts)."""
    return phase("linear", length, start, end, **extra)  # type: ignore[arg-type]
