"""Long runs of a periodic schedule against another: compared by period or by residue classes
(schedule/cycles.py), exact against the step-by-step maximum, and bounded however many cycles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli_runner
from hypothesis import given, settings
from hypothesis import strategies as st

from neoconv.cli import main
from neoconv.schedule import Schedule, ScheduleError, cycles, max_difference, peak, phase, shapes
from neoconv.schedule import compare
from neoconv.schedule.compare import settles

L, M = 1e-3, 1e-4
lrs = st.floats(1e-5, 1e-2)


def brute_max(a: Schedule, b: Schedule, horizon: int) -> tuple[float, int]:
    best, at = -1.0, -1
    for t in range(horizon):
        d = abs(a.value(t) - b.value(t))
        if d > best:
            best, at = d, t
    return best, at


def brute_peak(s: Schedule, horizon: int) -> tuple[float, int]:
    values = s.values(range(horizon))
    top = max(values)
    return top, next(t for t, v in enumerate(values) if v >= top - 1e-10 * abs(top))


# periods of a few steps (dense turns: more than compare lists), whole or not
spans = st.one_of(st.integers(2, 9).map(float), st.floats(1.6, 9.0))


def periodic(length: int) -> st.SearchStrategy:
    return st.one_of(
        st.builds(
            lambda a, b, span, cycle: phase("cosine", length, a, b, span=span, cycle=cycle, beyond="continue"),
            lrs,
            lrs,
            spans,
            st.sampled_from(["restart", "mirror"]),
        ),
        st.builds(
            lambda a, b, up, down: phase("cyclic", length, a, high=b, up=up, down=down, beyond="continue"),
            lrs,
            lrs,
            st.floats(1.0, 5.0),
            st.floats(1.0, 5.0),
        ),
    )


def monotone(length: int) -> st.SearchStrategy:
    return st.one_of(
        st.builds(lambda a: phase("constant", length, a), lrs),
        st.builds(lambda a, b: phase("linear", length, a, b), lrs, lrs),
        st.builds(lambda a, b: phase("cosine", length, a, b), lrs, lrs),
        st.builds(lambda a, b, p: phase("polynomial", length, a, b, power=p), lrs, lrs, st.floats(0.5, 3.0)),
    )


@st.composite
def pairs(draw: st.DrawFn) -> tuple[Schedule, Schedule, int]:
    horizon = draw(st.integers(5000, 9000))
    warmup = draw(st.integers(0, 40))
    head = [phase("linear", warmup, 0.0, L)] if warmup else []
    a = Schedule([*head, draw(periodic(horizon - warmup))])
    other = draw(st.one_of(monotone(horizon - warmup), periodic(horizon - warmup)))
    b = Schedule([*head, other])
    return (a, b, horizon) if draw(st.booleans()) else (b, a, horizon)


@settings(max_examples=25, deadline=None)
@given(pairs())
def test_many_cycles_equal_the_step_by_step_maximum(case: tuple[Schedule, Schedule, int]) -> None:
    a, b, horizon = case
    got = max_difference(a, b, horizon)
    want, _ = brute_max(a, b, horizon)
    assert got.value == pytest.approx(want, rel=1e-9, abs=1e-18)
    assert abs(a.value(got.step) - b.value(got.step)) == got.value


@settings(max_examples=25, deadline=None)
@given(st.integers(5000, 9000).flatmap(lambda n: st.tuples(periodic(n), st.just(n))))
def test_peak_of_many_cycles_equals_the_step_by_step_one(case: tuple[object, int]) -> None:
    p, horizon = case
    s = Schedule([p])  # type: ignore[list-item]
    assert tuple(peak(s, horizon)) == pytest.approx(brute_peak(s, horizon), rel=1e-12)


class Counted:
    """Counts the evaluations of every shape: the work a comparison did."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        for cls in (shapes.Cosine, shapes.Polynomial, shapes.Linear, shapes.Cyclic):
            monkeypatch.setattr(cls, "value", self._counting(cls.value))

    def _counting(self, value):  # type: ignore[no-untyped-def]
        def counted(shape, s):  # type: ignore[no-untyped-def]
            self.count += 1
            return value(shape, s)

        return counted


@pytest.mark.parametrize("span", [12.000000048, 3.000000003, 64.0, 100000.0, 7.5, 128.00000001])
@pytest.mark.parametrize("cycle", ["restart", "mirror"])
def test_a_billion_steps_of_short_cycles_take_few_evaluations(
    monkeypatch: pytest.MonkeyPatch, span: float, cycle: str
) -> None:
    """HF's cosine_with_restarts with num_cycles 83333333 over 10^9 steps (a period of 12.000000048
    steps): compared with a cosine decay over the run, peak and largest difference, in a few
    thousand evaluations (it walked every cycle: minutes)."""
    n = 10**9
    a = Schedule([phase("cosine", n, 3e-4, 0.0, span=span, cycle=cycle, beyond="continue")])
    b = Schedule([phase("cosine", n, 3e-4, 0.0)])
    counted = Counted(monkeypatch)
    diff = max_difference(a, b, n)
    top = peak(a, n)
    assert counted.count < 200_000
    # the decay is near 0 at the end and the cycles reach their top there: the largest difference is
    # the cycle top against the decay's bottom, found at a real step whose difference it is
    assert diff.value == abs(a.value(diff.step) - b.value(diff.step))
    assert diff.value == pytest.approx(3e-4, rel=1e-6)
    assert top.value == pytest.approx(3e-4, rel=1e-12) and top.step == 0


@pytest.mark.parametrize(
    "n, span_a, span_b", [(10**15, 10**15 / 3.3e14, 3.0), (10**9, 12.000000048, 7.0000001), (10**12, 3.5, 2.25)]
)
def test_two_turning_schedules_of_unrelated_periods_are_compared_by_classes(
    monkeypatch: pytest.MonkeyPatch, n: int, span_a: float, span_b: float
) -> None:
    """A restart every 3.0303 steps against a mirror cosine of period 6 over 10^15 steps (and other
    periods that are no whole number of steps)."""
    a = Schedule([phase("cosine", n, 3e-4, 0.0, span=span_a, cycle="restart", beyond="continue")])
    b = Schedule([phase("cosine", n, 2e-4, 1e-5, span=span_b, cycle="mirror", beyond="continue")])
    counted = Counted(monkeypatch)
    diff = max_difference(a, b, n)
    assert counted.count < 200_000
    assert diff.value == abs(a.value(diff.step) - b.value(diff.step))
    small = 30_000  # the same pair over a run short enough to walk: the long run holds its maximum
    assert diff.value >= brute_max(a, b, small)[0] * (1 - 1e-9)


@pytest.mark.parametrize(
    "p",
    [
        phase("cosine", 10**9, 3e-4, 3e-4, span=3.5, cycle="restart", beyond="continue"),
        phase("cyclic", 10**9, 3e-4, high=3e-4, up=2.0, down=1.5, beyond="continue"),
        phase("cosine", 10**9, 3e-4, 3e-4, span=12.0, cycle="mirror", beyond="continue"),
    ],
)
def test_a_run_of_flat_cycles_settles_where_they_begin(monkeypatch: pytest.MonkeyPatch, p: object) -> None:
    """Cycles whose lrs never move (start = end, high = start): settled from their first step, found
    without walking them (it walked every step)."""
    s = Schedule([phase("linear", 10, 0.0, 3e-4), p])  # type: ignore[list-item]
    counted = Counted(monkeypatch)
    assert settles(s, 10**9, s.value(10**9 - 1)) == 10
    assert counted.count < 100_000
    last, t = s.value(19_999), 20_000  # the same, step by step over a short run
    while t > 0 and abs(s.value(t - 1) - last) <= 1e-12 * last:
        t -= 1
    assert t == 10


HP12 = {
    "output_dir": "o",
    "per_device_train_batch_size": 16,
    "learning_rate": 0.0003,
    "lr_scheduler_type": "cosine_with_restarts",
    "lr_scheduler_kwargs": {"num_cycles": 83333333},
    "warmup_steps": 0,
    "max_steps": 1000000000,
}


@pytest.mark.parametrize("target", ["neox", "megatron", "deepspeed", "cerebras", "veomni"])
@pytest.mark.parametrize(
    "kind, cycles", [("cosine_with_restarts", 83333333), ("cosine", 333333333), ("cosine_with_restarts", 15625000)]
)
def test_translating_a_billion_steps_of_short_cycles_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, kind: str, cycles: int
) -> None:
    src = tmp_path / "args.json"
    src.write_text(json.dumps({**HP12, "lr_scheduler_type": kind, "lr_scheduler_kwargs": {"num_cycles": cycles}}))
    counted = Counted(monkeypatch)
    result = cli_runner().invoke(main, [f"hftrainer2{target}", str(src), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 0, result.stderr
    assert counted.count < 1_000_000


def test_cycles_no_bounded_search_can_take_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two waves of 100000.3 and 199999.4 steps over 10^15 steps: no residue class of at most
    cycles.CLASSES_UP_TO steps drifts slowly against both, and halving cannot prune them: refused with
    the reason (a ScheduleError, which each writer turns into one line), in bounded work."""
    n = 10**15
    a = Schedule([phase("cosine", n, 3e-4, 0.0, span=100000.3, cycle="restart", beyond="continue")])
    b = Schedule([phase("cosine", n, 2e-4, 1e-5, span=99999.7, cycle="mirror", beyond="continue")])
    monkeypatch.setattr(compare, "HALVES_UP_TO", 500)  # the same refusal, sooner
    counted = Counted(monkeypatch)
    with pytest.raises(cycles.TooManyCycles, match=r"cycles of 100000\.3 steps: more cycles than neoconv compares"):
        max_difference(a, b, n)
    assert isinstance(cycles.TooManyCycles("x"), ScheduleError)
    assert counted.count < 500_000
