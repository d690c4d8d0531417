"""The schedule in the canonical IR: `schedule.phases` as a field value, the summaries derived from
it (`schedule.warmup_steps`, `decay_steps`, `min_lr`), what `--set` of a summary or of `optim.lr`
does to the phases, how two configs' schedules are compared, and a cache of renderings.

Names no framework: each format's schedule formula reads and renders through its own scheduler
module (translator/formats/<fmt>/scheduler.py) and calls these; what such a module returns (Reading,
Rendering) and the small checks they share are here too.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, Callable, Hashable, Iterable, NamedTuple, TypeVar

from ..core.errors import UsageError
from ..core.ir import IR, Origin, Value, keep
from .compare import Difference, Fit, closest, features, max_difference, peak
from .model import Phase, Schedule, ScheduleError, phase
from .simple import DECAYS, simple

PHASES = "schedule.phases"
SUMMARIES = ("schedule.warmup_steps", "schedule.decay_steps", "schedule.min_lr")
LR = "optim.lr"
STEPS = "train.steps"

_PARSED: dict[str, Schedule] = {}
# the schedules of the last few files: one file parses, summarises, renders and compares the same
# phases several times; files of a migration are not copies of each other, so no more is kept
# (a larger bound only helps a batch of copies, and grows memory with the number of files)
_BOUND = 64


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def parse(value: Any) -> Schedule:
    """The Schedule of a phases value (validated; parsed once per distinct value)."""
    if isinstance(value, Schedule):
        return value
    key = _text(value)
    found = _PARSED.get(key)
    if found is None:
        found = keep(_PARSED, key, Schedule.from_json(value), _BOUND)
    return found


def check_phases(value: Any) -> list[dict[str, Any]]:
    """The catalogue's check of a phases value: the validated JSON form, or ValueError."""
    try:
        return parse(value).to_json()
    except ScheduleError as exc:
        raise ValueError(f"not a schedule: {exc}") from None


def finite(value: Any) -> float | None:
    """A config's lr setting as a float (None stays None): a number past the float range or not
    finite is refused, as the catalogue refuses it (OverflowError: the engine blames the largest)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"expected a number, got {value!r}")
    if isinstance(value, int) and abs(value) > sys.float_info.max:
        raise OverflowError(f"a number of {len(str(abs(value)))} digits is past the float range (about 1.8e308)")
    if not math.isfinite(value):
        raise OverflowError(f"expected a finite number, got {value}")
    return float(value)


def horizon(s: Schedule, steps: Any = None) -> int:
    """The run a schedule is compared over: its step count, else its phases and one step more."""
    return int(steps) if isinstance(steps, int) and not isinstance(steps, bool) and steps > 0 else s.total_length + 1


def summaries(s: Schedule, steps: Any = None) -> dict[str, Any]:
    """warmup_steps: the first step at the peak (0 when the run starts there); decay_steps: the
    step from which the lr stays at its final value; min_lr: that value (None when the lr never
    falls below its peak: no decay)."""
    # over the run and one step past it (and past the phases): a decay that ends with the run has ended
    run = int(steps) if isinstance(steps, int) and not isinstance(steps, bool) and steps > 0 else 0
    f = features(s, max(run, s.total_length) + 1)
    decays = f.final < f.peak
    return {
        "schedule.warmup_steps": float(f.peak_at),
        "schedule.decay_steps": f.decay_end if decays and f.decay_end > f.peak_at else None,
        "schedule.min_lr": f.final if decays else None,
    }


def peak_lr(s: Schedule, steps: Any = None) -> float:
    return peak(s, horizon(s, steps)).value


def compare(a: Any, b: Any, steps: Any = None) -> tuple[Difference, float]:
    """(the largest lr difference of two phases values over the run, the larger peak); worked out
    once per distinct pair and step count (a batch checks each output's schedule against its source's)."""
    if isinstance(a, Schedule) or isinstance(b, Schedule) or type(steps) not in _STEP_TYPES:
        return _compare(a, b, steps)
    slot = (_text(a), _text(b), type(steps), steps)
    found = _COMPARED.get(slot)
    if found is None:
        found = keep(_COMPARED, slot, _compare(a, b, steps), _BOUND)
    return found


_STEP_TYPES = frozenset({int, float, bool, str, type(None)})  # a step count as a key: its type kept apart
_COMPARED: dict[tuple[Any, ...], tuple[Difference, float]] = {}
_SUMMARISED: dict[tuple[Any, ...], dict[str, Any]] = {}


def _compare(a: Any, b: Any, steps: Any) -> tuple[Difference, float]:
    sa, sb = parse(a), parse(b)
    h = max(horizon(sa, steps), horizon(sb, steps)) if steps is None else horizon(sa, steps)
    top = max(peak(sa, h).value, peak(sb, h).value)
    return max_difference(sa, sb, h), top


def same(a: Any, b: Any, steps: Any, rtol: float) -> bool:
    """Two schedules mean the same run: every lr within rtol of the larger peak."""
    diff, top = compare(a, b, steps)
    return diff.value <= rtol * top


def scaled(s: Schedule, factor: float) -> Schedule:
    """Every lr of a schedule times factor (an optimizer lr given with --set)."""
    out = []
    for item in s.to_json():
        if item["kind"] == "custom":
            raise ScheduleError("a custom phase cannot be rescaled: give the whole schedule with --set schedule.phases")
        for key in ("start", "end", "high"):
            if key in item:
                item[key] = item[key] * factor
        out.append(item)
    return Schedule.from_json(out)


def main_decay(s: Schedule) -> str | None:
    """The kind of the longest falling phase, when simple() can build it."""
    falling = [p for p in s.phases if p.kind != "constant" and p.end < p.start]
    if not falling:
        return None
    kind = max(falling, key=lambda p: p.length).kind
    return kind if kind in DECAYS else "linear"


def rebuilt(current: Schedule | None, lr: float | None, given: dict[str, Any], steps: Any = None) -> Schedule | None:
    """The schedule after --set of optim.lr and/or summaries: optim.lr alone rescales the phases;
    a summary rebuilds them as a linear warmup (from the schedule's first lr) and the schedule's
    main decay shape (linear when it has none) ending where the summaries say."""
    if current is not None and set(given) <= {LR}:
        top = peak_lr(current, steps)
        if lr is None or top == lr:
            return current
        if top <= 0:
            raise ScheduleError("the schedule's peak is 0: give the whole schedule with --set schedule.phases")
        return scaled(current, lr / top)
    base = summaries(current, steps) if current is not None else {}
    if lr is None and current is None:
        return None
    top = lr if lr is not None else peak_lr(current, steps)  # type: ignore[arg-type]
    pick = {name: given[name] if name in given else base.get(name) for name in SUMMARIES}
    warm = int(round(pick["schedule.warmup_steps"] or 0))
    end = pick["schedule.decay_steps"]
    decay = (main_decay(current) if current is not None else None) or "linear"
    floor = pick["schedule.min_lr"] or 0.0
    start = current.value(0) if current is not None and warm and current.value(0) < top else 0.0
    if end is None and "schedule.min_lr" not in given:
        return simple(top, warm, "constant", warmup_start=start)
    if end is None:
        raise ScheduleError("a min_lr needs the step the decay reaches it: give --set schedule.decay_steps=N too")
    return simple(top, warm, decay, int(end), floor, start)


R = TypeVar("R")
_RENDERED: dict[tuple[Hashable, ...], Any] = {}


def rendered(framework: str, render: Callable[[Schedule], R], phases: Any, *key: Hashable) -> R:
    """render(schedule) once per (framework, phases, key...): a batch's files share schedules."""
    slot = (framework, _text(phases), *key)
    found = _RENDERED.get(slot)
    if found is None:
        found = keep(_RENDERED, slot, render(parse(phases)), _BOUND)
    return found  # type: ignore[no-any-return]


def settle(ir: IR) -> None:
    """After a file is read: apply --set of optim.lr or of a summary to the phases, then derive the
    summaries from the phases (a summary given with --set stays as given)."""
    fields = ir.fields
    given = {
        name: fields[name].value for name in (LR, *SUMMARIES) if name in fields and fields[name].origin is Origin.USER
    }
    known = fields.get(PHASES)
    steps = ir.get(STEPS)
    if given and not (known is not None and known.origin is Origin.USER):
        current = parse(known.value) if known is not None and known.value is not None else None
        try:
            new = rebuilt(current, ir.get(LR), given, steps)
        except ScheduleError as exc:
            raise UsageError(f"--set {', '.join(given)}: {exc}") from None
        if new is not None and new is not current:
            keys = tuple(f"--set {name}" for name in given)
            known = Value(
                new.to_json(),
                Origin.DERIVED,
                keys + (known.source_keys if known else ()),
                known.file if known else None,
            )
            fields[PHASES] = known
    if known is None or known.value is None:
        return
    for name, value in _summaries_of(known.value, steps).items():
        if name in given:
            continue
        if value is None:
            fields.pop(name, None)
        else:
            fields[name] = Value(
                value,
                Origin.DERIVED if known.origin is not Origin.DEFAULT else Origin.DEFAULT,
                known.source_keys,
                known.file,
            )


def _summaries_of(phases: Any, steps: Any) -> dict[str, Any]:
    """summaries() of a phases value, once per distinct value and step count."""
    if isinstance(phases, Schedule) or type(steps) not in _STEP_TYPES:
        return summaries(parse(phases), steps)
    slot = (_text(phases), type(steps), steps)
    found = _SUMMARISED.get(slot)
    if found is None:
        found = keep(_SUMMARISED, slot, summaries(parse(phases), steps), _BOUND)
    return found


class Reading(NamedTuple):
    schedule: Schedule
    notes: tuple[str, ...] = ()  # what the framework does that its config does not say (traps)


class Rendering(NamedTuple):
    """A framework config for a canonical schedule. exact: the framework's own scheduler gives
    the same lr at every step of the run; otherwise `difference` is the largest lr difference
    and the first step where it occurs (the report's lossy entry)."""

    config: Any
    schedule: Schedule  # what the framework will run (the config read back)
    exact: bool
    difference: Difference
    notes: tuple[str, ...] = ()

    def detail(self, source: Schedule, framework: str) -> str:
        """The report's words for a closest form: the largest lr difference, where, both lrs."""
        if self.exact:
            return ""
        t = self.difference.step
        ours, theirs = _apart(self.schedule.value(t), source.value(t))
        return (
            f"{framework} has no exact form of this schedule: the closest differs by at most "
            f"{self.difference.value:.4g} (step {t}: {ours} instead of {theirs})"
        )


def _apart(a: float, b: float) -> tuple[str, str]:
    """Two lrs with just enough digits to tell them apart (4 at least)."""
    for digits in range(4, 17):
        x, y = f"{a:.{digits}g}", f"{b:.{digits}g}"
        if x != y:
            return x, y
    return repr(a), repr(b)


def number(value: Any, what: str, *, minimum: float | None = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ScheduleError(f"{what} must be a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ScheduleError(f"{what} must be a finite number, got {value!r}")
    if minimum is not None and x < minimum:
        raise ScheduleError(f"{what} must be at least {minimum:g}, got {value!r}")
    return x


def whole(value: Any, what: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
        raise ScheduleError(f"{what} must be a whole number, got {value!r}")
    n = int(value)
    if n < minimum:
        raise ScheduleError(f"{what} must be at least {minimum}, got {value!r}")
    return n


def choose(
    source: Schedule,
    configs: Iterable[Any],
    read: Callable[[Any], Schedule],
    horizon: int,
    notes: tuple[str, ...] = (),
) -> Rendering:
    """The config (read back with `read`) closest to source; configs the reader refuses are skipped."""

    def candidates() -> Iterable[tuple[Any, Schedule]]:
        seen: set[str] = set()
        for config in configs:
            key = json.dumps(config, sort_keys=True, default=str)
            if key in seen:
                continue
            seen.add(key)
            try:
                yield config, read(config)
            except ScheduleError:
                continue

    fit: Fit | None = closest(source, candidates(), horizon)
    if fit is None:
        raise ScheduleError("no config of this framework can hold this schedule")
    return Rendering(fit.config, fit.schedule, fit.exact, fit.difference, notes)


def horizon_of(schedule: Schedule, steps: int | None) -> int:
    """The run to compare over: its step count, else the schedule's phases and one step more."""
    return steps if steps is not None and steps > 0 else schedule.total_length + 1


def anneals(kind: str, marks: list[tuple[float, float, float]]) -> list[Phase]:
    """Phases ending (inclusive) at the given fractional steps, each annealing from its start lr at
    its previous end to its end lr: torch's and Cerebras' one-cycle."""
    phases: list[Phase] = []
    begin, t = 0.0, 0  # the previous end step (real) and the first integer step not yet covered
    for i, (stop, a, b) in enumerate(marks):
        last = i == len(marks) - 1
        n = (math.floor(stop) + 1 - t) if not last else max(1, math.floor(stop) + 1 - t)
        span = stop - begin
        if n > 0 and span > 0:
            extra = {"cycle": "mirror"} if kind == "cosine" and last else {}
            phases.append(
                phase(kind, n, a, b, span=span, shift=t - begin, beyond="continue" if last else "hold", **extra)
            )
            t += n
        begin = stop
    return phases
