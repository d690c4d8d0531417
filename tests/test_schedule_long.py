"""Schedules over long runs: the comparison's answers against a step-by-step evaluation (long
phases, near-identical curves, staircases, periods), and its cost following the phases, not the
steps (a run of 10^15 steps is compared with about as many evaluations as one of 10^4)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neoconv.schedule import Schedule, ScheduleError, max_difference, peak, phase
from neoconv.schedule import decays, shapes
from neoconv.schedule.compare import settles
from neoconv.schedule.compare import features

L, M = 1e-3, 1e-4


def brute_max(a: Schedule, b: Schedule, horizon: int, start: int = 0) -> tuple[float, int]:
    best, at = -1.0, -1
    for t in range(start, horizon):
        d = abs(a.value(t) - b.value(t))
        if d > best:
            best, at = d, t
    return best, at


def brute_peak(s: Schedule, horizon: int) -> tuple[float, int]:
    values = s.values(range(horizon))
    top = max(values)
    return top, next(t for t, v in enumerate(values) if v >= top - 1e-10 * abs(top))


def brute_settles(s: Schedule, horizon: int, last: float) -> int:
    tol = 1e-12 * max(abs(last), 1e-300)
    t = horizon
    while t > 0 and abs(s.value(t - 1) - last) <= tol:
        t -= 1
    return t


lrs = st.floats(1e-6, 1e-2)
lengths = st.integers(1, 3000)


def _phases() -> st.SearchStrategy:
    return st.one_of(
        st.builds(lambda k, a: phase("constant", k, a), lengths, lrs),
        st.builds(
            lambda k, a, b, s: phase("linear", k, a, b, stairs=s), lengths, lrs, lrs, st.sampled_from([None, None, 7])
        ),
        st.builds(
            lambda k, a, b, c: phase("cosine", k, a, b, cycle=c),
            lengths,
            lrs,
            lrs,
            st.sampled_from(["hold", "mirror", "restart"]),
        ),
        st.builds(lambda k, a, b: phase("log_warmup", k + 1, a, b), lengths, lrs, lrs),
        st.builds(
            lambda k, a, r, p, sc: phase("exponential", k, a, rate=r, period=p, staircase=sc),
            lengths,
            lrs,
            st.floats(0.2, 0.99),
            st.floats(50, 900),
            st.booleans(),
        ),
        st.builds(lambda k, a, h: phase("inverse_sqrt", k, a, hold=h), lengths, lrs, st.floats(1, 500)),
        st.builds(lambda k, a, b, pw: phase("polynomial", k, a, b, power=pw), lengths, lrs, lrs, st.floats(0.5, 4)),
        st.builds(
            lambda k, a, g, s: phase("step", k, a, gamma=g, step_size=s),
            lengths,
            lrs,
            st.floats(0.3, 0.95),
            st.floats(40, 400),
        ),
        st.builds(
            lambda k, a, b, u, d, m: phase("cyclic", k, a, high=b, up=u, down=d, mode=m),
            lengths,
            lrs,
            lrs,
            st.floats(20, 300),
            st.floats(20, 300),
            st.sampled_from(["triangular", "triangular2"]),
        ),
    )


@st.composite
def long_schedules(draw: st.DrawFn) -> Schedule:
    phases = draw(st.lists(_phases(), min_size=1, max_size=3))
    if draw(st.booleans()) and phases[-1].kind not in ("linear", "log_warmup", "polynomial"):
        phases[-1] = replace(phases[-1], beyond="continue")
    try:
        return Schedule(phases)
    except ScheduleError:
        return Schedule([phase("cosine", 2000, L, M)])


@st.composite
def nearly(draw: st.DrawFn, s: Schedule) -> Schedule:
    """The same schedule with its numbers moved a little: the hard case, two curves almost alike."""
    out = []
    for p in s.phases:
        scale = 1.0 + draw(st.floats(-1e-4, 1e-4))
        span = (
            None
            if p.kind not in ("cosine", "linear", "polynomial", "log_warmup")
            else p.width + draw(st.floats(-0.5, 0.5))
        )
        try:
            out.append(
                replace(
                    p,
                    start=p.start * scale,
                    end=p.end * scale if p.kind in ("linear", "cosine", "polynomial", "log_warmup") else p.end,
                    span=span if span is None or span > 1.0 else None,
                )
            )
        except ScheduleError:
            out.append(p)
    try:
        return Schedule(out)
    except ScheduleError:
        return s


@settings(max_examples=60, deadline=None)
@given(long_schedules(), long_schedules(), st.integers(1, 9000))
def test_long_phases_equal_the_step_by_step_maximum(a: Schedule, b: Schedule, horizon: int) -> None:
    got = max_difference(a, b, horizon)
    want, _ = brute_max(a, b, horizon)
    assert got.value == pytest.approx(want, rel=1e-9, abs=1e-18)
    assert abs(a.value(got.step) - b.value(got.step)) == got.value


@settings(max_examples=60, deadline=None)
@given(st.data(), long_schedules(), st.integers(1, 9000))
def test_nearly_equal_curves_equal_the_step_by_step_maximum(data: st.DataObject, a: Schedule, horizon: int) -> None:
    b = data.draw(nearly(a))
    got = max_difference(a, b, horizon)
    want, _ = brute_max(a, b, horizon)
    # float noise in evaluating the shapes (1e-16 of the lrs) may decide between steps of a flat top;
    # shapes whose numbers agree to 1e-12 are one function (compare._same): 1e-12 of the lrs apart
    assert got.value == pytest.approx(want, rel=1e-9, abs=2e-12 * max(L, a.value(0), b.value(0)))
    assert abs(a.value(got.step) - b.value(got.step)) == got.value


@settings(max_examples=60, deadline=None)
@given(long_schedules(), st.integers(1, 9000))
def test_peak_and_settling_equal_the_step_by_step_ones(s: Schedule, horizon: int) -> None:
    assert tuple(peak(s, horizon)) == pytest.approx(brute_peak(s, horizon), rel=1e-12)
    last = s.value(horizon - 1)
    assert settles(s, horizon, last) == brute_settles(s, horizon, last)


def test_a_largest_difference_found_is_the_true_one_not_one_near_it() -> None:
    """Two cosines of almost the same span (a framework's whole-step total_iters against 141577.92):
    the old search stopped within 1e-10 of the largest difference, at step 50151; the largest is at
    step 50150 (3.1926633128681256e-09, evaluated step by step)."""
    a = Schedule([phase("cosine", 141577, 6e-4, 6e-5, span=141577.92, shift=0.92)])
    b = Schedule([phase("cosine", 141577, 5.999999999437376e-4, 6e-5)])
    assert max_difference(a, b, 141577) == (brute_max(a, b, 141577)[0], 50150)


# ---- the cost follows the phases, not the steps ---------------------------------------------------
SHAPES = [
    shapes.Constant,
    shapes.Linear,
    shapes.LogWarmup,
    shapes.Cosine,
    shapes.Polynomial,
    shapes.Cyclic,
    decays.Exponential,
    decays.InverseSqrt,
    decays.InverseTime,
    decays.Step,
]


@pytest.fixture
def evaluations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A counter of every shape evaluation (value, slope, curvature) from here on."""
    count = [0]
    for cls in SHAPES:
        for name in ("value", "slope", "curve"):
            original = getattr(cls, name)

            def counted(self, s, _original=original):  # type: ignore[no-untyped-def]
                count[0] += 1
                return _original(self, s)

            monkeypatch.setattr(cls, name, counted)
    return count


def _runs(n: int) -> list[Schedule]:
    """Every kind of schedule a framework writes, over a run of n steps."""
    w = n // 100
    return [
        Schedule([phase("linear", w, 0.0, L), phase("cosine", n - w, L, M), phase("constant", 1, M)]),
        Schedule([phase("linear", w, 0.0, L), phase("cosine", n - w, L, M, span=n - w + 0.92, shift=0.92)]),
        Schedule([phase("linear", w, 0.0, L), phase("linear", n - w, L, M)]),
        Schedule([phase("log_warmup", w, 0.0, L), phase("exponential", n - w, L, rate=M / L, period=float(n - w))]),
        Schedule(
            [phase("linear", w, 0.0, L), phase("inverse_sqrt", 1, L, hold=float(w), shift=float(w), beyond="continue")]
        ),
        Schedule([phase("polynomial", n, L, 0.0, power=2.0)]),
        Schedule([phase("linear", n // 2, M, L, stairs=50), phase("linear", n - n // 2, L, M, stairs=50)]),
        Schedule([phase("cosine", 1000, L, M, cycle="restart", beyond="continue")]),
        Schedule([phase("step", 1000, L, gamma=0.9, step_size=1000.0, beyond="continue")]),
        Schedule([phase("cyclic", 2000, M, high=L, up=700.0, down=1300.0, mode="triangular2", beyond="continue")]),
        Schedule([phase("inverse_time", 1, L, rate=0.5, period=float(w), beyond="continue")]),
    ]


def _work(n: int, evaluations: list[int]) -> int:
    runs = _runs(n)
    evaluations[0] = 0
    for a in runs:
        peak(a, n)
        features(a, n)
        for b in runs:
            max_difference(a, b, n)
    return evaluations[0]


def test_a_run_of_10_to_the_15_steps_costs_what_a_short_one_does(evaluations: list[int]) -> None:
    short, long = _work(10**4, evaluations), _work(10**15, evaluations)
    # log2(10^15 / 10^4) = 37 more bisection steps for each stationary point: a small factor
    assert long < 4 * short, (short, long)
    assert long < 200_000


@pytest.mark.parametrize("kind", ["restart", "step", "triangular2"])
def test_a_shape_that_keeps_turning_is_compared_over_one_period(kind: str, evaluations: list[int]) -> None:
    tail = {
        "restart": phase("cosine", 1000, L, M, cycle="restart", beyond="continue"),
        "step": phase("step", 1000, L, gamma=0.5, step_size=1000.0, beyond="continue"),
        "triangular2": phase("cyclic", 2000, M, high=L, up=700.0, down=1300.0, mode="triangular2", beyond="continue"),
    }[kind]
    s = Schedule([phase("linear", 500, 0.0, L), tail])
    held = Schedule([phase("linear", 500, 0.0, L), phase("constant", 1, M)])
    evaluations[0] = 0
    long = max_difference(s, held, 10**15)
    assert evaluations[0] < 20_000
    # the first step of the largest difference is in the first period: the same over 50,000 steps
    assert long == max_difference(s, held, 50_000) == brute_max(s, held, 50_000)


def test_a_staircase_with_too_many_stairs_to_list_is_one_monotone_piece() -> None:
    stairs = Schedule([phase("linear", 10**12, M, L, stairs=10**9), phase("constant", 1, L)])
    line = Schedule([phase("linear", 10**12, M, L), phase("constant", 1, L)])
    got = max_difference(stairs, line, 10**12 + 1)
    # each stair is (L - M) / 10^9 high: the largest gap is within the last step of a stair
    assert got.value == pytest.approx((L - M) / 1e9, rel=1e-3)
    assert abs(stairs.value(got.step) - line.value(got.step)) == got.value
    assert math.isfinite(peak(stairs, 10**12 + 1).value)


def test_a_turn_within_float_noise_of_a_step_is_not_a_kink_the_slopes_read() -> None:
    # inverse_sqrt is held up to 1.0000000000000002: the turn is cut at step 1, which is still held
    # (slope 0), while d = a - b falls to its lowest at step 6 and rises again to step 14
    a = Schedule.from_json(
        [
            {
                "kind": "inverse_sqrt",
                "length": 15,
                "start": 0.0078125,
                "end": 0.0020171788261496965,
                "hold": 1.0000000000000002,
            }
        ]
    )
    b = Schedule.from_json([{"kind": "linear", "length": 15, "start": 0.0078125, "end": 0.00390625}])
    want, step = brute_max(a, b, 15)
    got = max_difference(a, b, 15)
    assert (got.value, got.step) == (want, step) and step == 6
