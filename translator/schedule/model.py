"""The canonical learning-rate schedule: an ordered list of phases, each a piece of a closed form.

Step convention (the one used everywhere in this package): **lr(t) is the learning rate used by the
t-th optimizer update, t = 0 for the first.** Updates a framework skips (an fp16 overflow) do not
count: no framework advances its scheduler on them. A framework whose scheduler runs one step late,
or sets the first lr in its constructor, is read with that made explicit in the phases.

Phase k covers the steps offset_k <= t < offset_k + length_k (offset_k = the sum of the lengths
before it). Inside it the lr is the phase's shape evaluated at the local time
s = t - offset_k + shift: `shift` lets a phase start part-way into its shape (a framework whose
decay begins at a fractional step, or a phase cut where a floor clamps it). Every phase has
`start` and `end`: the shape's value at s = 0 and at s = span (span defaults to the length), so
for the usual phase (shift 0, span = length) `start` is its first lr and `end` the lr the next
phase starts from. The shapes, in local time s:

  constant     start (= end)
  linear       start + (end - start) * s / span; `stairs: k` rounds the progress to k levels,
               towards the lower of start and end (floor rising, ceil falling)
  log_warmup   start + (end - start) * ln(s + 1) / ln(span)   (reaches end at s = span - 1)
  cosine       end + (start - end) * (1 + cos(pi * c)) / 2 with c = s / span clamped to 1
               (`cycle: hold`), left to run on (`mirror`: rises again after span) or wrapped
               (`restart`: back to start every span)
  exponential  start * rate ** (s / period)   (floor of the exponent with `staircase`)
  inverse_sqrt start * sqrt(hold / max(hold, s))
  inverse_time start / (1 + rate * a), a = s ** power / period (floor of a with `staircase`)
  polynomial   end + (start - end) * (1 - min(s, span) / span) ** power
  step         start * gamma ** k, k = floor(s / step_size) or the number of milestones <= s
  cyclic       a triangular wave from start to `high` in `up` steps and back in `down` steps
               (`mode`: triangular, triangular2 halves the height each cycle, exp_range * gamma^s)
  custom       a named closed form (`form`, `args`) registered by the module that reads it
For the kinds whose end follows from the other values (constant, exponential, inverse_sqrt,
inverse_time, step, cyclic, custom) `end` is stored too, and must agree.

After the last phase the lr follows its `beyond`: `hold` (the default) keeps `end`; `continue`
evaluates the same shape on (s keeps growing).

The JSON form (the IR field value) is the list of phase dicts: kind, length, start, end, then
span / shift when they differ from the defaults, the kind's parameters, and beyond on the last.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Iterator, Mapping, NamedTuple, Sequence

from . import custom, decays, shapes


# Past 2**53 steps float64 (in which every framework computes its lr, and this model too) cannot
# tell one step from the next: a phase, a span or a run that long is refused, not searched.
MAX_STEPS = 2**53


class ScheduleError(ValueError):
    """A schedule (or a framework's schedule config) that is malformed or cannot be evaluated."""


class NotRepresentable(ScheduleError):
    """A framework schedule with no canonical form (it needs a callable, an object, a metric)."""


_REQUIRED = object()
# kind -> parameter -> (type, default); the per-kind checks are in _check_params
KINDS: dict[str, dict[str, tuple[type, Any]]] = {
    "constant": {},
    "linear": {"stairs": (int, None)},
    "log_warmup": {},
    "cosine": {"cycle": (str, "hold")},
    "exponential": {"rate": (float, _REQUIRED), "period": (float, _REQUIRED), "staircase": (bool, False)},
    "inverse_sqrt": {"hold": (float, _REQUIRED)},
    "inverse_time": {
        "rate": (float, _REQUIRED),
        "period": (float, _REQUIRED),
        "power": (float, 1.0),
        "staircase": (bool, False),
    },
    "polynomial": {"power": (float, _REQUIRED)},
    "step": {"gamma": (float, _REQUIRED), "step_size": (float, None), "milestones": (list, None)},
    "cyclic": {
        "high": (float, _REQUIRED),
        "up": (float, _REQUIRED),
        "down": (float, _REQUIRED),
        "mode": (str, "triangular"),
        "gamma": (float, 1.0),
    },
    "custom": {"form": (str, _REQUIRED), "args": (dict, None)},
}
# kinds whose end is a free shape parameter; for the others it is derived from the rest
_FREE_END = frozenset({"linear", "log_warmup", "cosine", "polynomial"})
CYCLES = ("hold", "mirror", "restart")
CYCLIC_MODES = ("triangular", "triangular2", "exp_range")
BEYOND = ("hold", "continue")
_KEY_ORDER = ("kind", "length", "start", "end", "span", "shift")


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ScheduleError(f"{what} must be a number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ScheduleError(f"{what} must be a finite number, got {value!r}")
    return x


@dataclass(frozen=True, eq=True)
class Phase:
    kind: str
    length: int
    start: float
    end: float
    span: float | None = None  # None: the length
    shift: float = 0.0
    params: Mapping[str, Any] = field(default_factory=dict)
    beyond: str = "hold"  # only meaningful on the last phase

    @property
    def width(self) -> float:
        return float(self.length) if self.span is None else self.span

    def param(self, name: str) -> Any:
        spec = KINDS[self.kind][name]
        return self.params.get(name, None if spec[1] is _REQUIRED else spec[1])

    def shape(self) -> shapes.Shape:
        k, p = self.kind, self.param
        if k == "constant":
            return shapes.Constant(self.start)
        if k == "linear":
            return shapes.Linear(self.start, self.end, self.width, p("stairs"))
        if k == "log_warmup":
            return shapes.LogWarmup(self.start, self.end, self.width)
        if k == "cosine":
            return shapes.Cosine(self.start, self.end, self.width, p("cycle"))
        if k == "exponential":
            return decays.Exponential(self.start, p("rate"), p("period"), p("staircase"))
        if k == "inverse_sqrt":
            return decays.InverseSqrt(self.start, p("hold"))
        if k == "inverse_time":
            return decays.InverseTime(self.start, p("rate"), p("period"), p("power"), p("staircase"))
        if k == "polynomial":
            return shapes.Polynomial(self.start, self.end, self.width, p("power"))
        if k == "step":
            return decays.Step(self.start, p("gamma"), p("step_size"), tuple(p("milestones") or ()))
        if k == "cyclic":
            return shapes.Cyclic(self.start, p("high"), p("up"), p("down"), p("mode"), p("gamma"))
        return custom.Custom(p("form"), p("args") or {})

    def sub(self, skip: int, length: int) -> "Phase":
        """The same shape over `length` steps, starting `skip` steps into this phase."""
        span = None if self.width == length else self.width  # the shape, and so its end, stay the same
        return replace(self, shift=self.shift + skip, length=length, span=span, beyond="hold")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "length": self.length, "start": self.start, "end": self.end}
        if self.span is not None:
            out["span"] = self.span
        if self.shift:
            out["shift"] = self.shift
        for name in KINDS[self.kind]:
            if name in self.params:
                value = self.params[name]
                out[name] = list(value) if isinstance(value, tuple) else value
        return out


def phase(
    kind: str,
    length: int,
    start: float,
    end: float | None = None,
    *,
    span: float | None = None,
    shift: float = 0.0,
    beyond: str = "hold",
    **params: Any,
) -> Phase:
    """A checked phase; `end` may be left out for the kinds that derive it."""
    params = {k: (tuple(v) if isinstance(v, list) else v) for k, v in params.items() if v is not None}
    draft = Phase(kind, length, float(start), float(start if end is None else end), span, shift, params, beyond)
    _check(draft, last=True)
    if end is None and kind not in _FREE_END and kind != "constant":
        draft = replace(draft, end=_derived_end(draft))
    elif end is None and kind in _FREE_END:
        raise ScheduleError(f"a {kind} phase needs its end")
    _check_end(draft)
    return draft


def _derived_end(p: Phase) -> float:
    return p.shape().value(p.width)


def _check_params(p: Phase) -> None:
    spec = KINDS[p.kind]
    unknown = sorted(set(p.params) - set(spec))
    if unknown:
        raise ScheduleError(f"a {p.kind} phase has no parameter {', '.join(unknown)}")
    for name, (typ, default) in spec.items():
        if default is _REQUIRED and name not in p.params:
            raise ScheduleError(f"a {p.kind} phase needs {name}")
        if name not in p.params:
            continue
        value = p.params[name]
        if typ is float:
            _number(value, f"{p.kind} {name}")
        elif typ is int:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ScheduleError(f"{p.kind} {name} must be a whole number of at least 1, got {value!r}")
        elif typ is bool:
            if not isinstance(value, bool):
                raise ScheduleError(f"{p.kind} {name} must be true or false, got {value!r}")
        elif typ is str:
            if not isinstance(value, str):
                raise ScheduleError(f"{p.kind} {name} must be a string, got {value!r}")
        elif typ is list:
            if not isinstance(value, (list, tuple)) or not all(
                isinstance(m, int) and not isinstance(m, bool) and m >= 0 for m in value
            ):
                raise ScheduleError(f"{p.kind} {name} must be a list of whole numbers >= 0, got {value!r}")
            if list(value) != sorted(value):
                raise ScheduleError(f"{p.kind} {name} must be in increasing order, got {list(value)!r}")
        elif typ is dict and not isinstance(value, Mapping):
            raise ScheduleError(f"{p.kind} {name} must be a mapping, got {value!r}")
    k, get = p.kind, p.param
    positive = {
        "exponential": ("rate", "period"),
        "inverse_sqrt": ("hold",),
        "inverse_time": ("period", "power"),
        "polynomial": ("power",),
        "step": ("gamma",),
        "cyclic": ("up",),
    }.get(k, ())
    for name in positive:
        if get(name) <= 0:
            raise ScheduleError(f"{k} {name} must be above 0, got {get(name)!r}")
    if k == "inverse_time" and get("rate") < 0:
        raise ScheduleError(f"inverse_time rate must be at least 0, got {get('rate')!r}")
    if k == "cosine" and get("cycle") not in CYCLES:
        raise ScheduleError(f"cosine cycle must be one of {', '.join(CYCLES)}, got {get('cycle')!r}")
    if k == "log_warmup" and p.width <= 1.0:
        raise ScheduleError(f"a log_warmup phase needs a span above 1 step, got {p.width!r}")
    if k == "step" and (get("step_size") is None) == (get("milestones") is None):
        raise ScheduleError("a step phase needs exactly one of step_size and milestones")
    if k == "step" and get("step_size") is not None and get("step_size") <= 0:
        raise ScheduleError(f"step step_size must be above 0, got {get('step_size')!r}")
    if k == "cyclic":
        if get("down") < 0 or get("high") < 0:
            raise ScheduleError("cyclic down and high must be at least 0")
        if get("mode") not in CYCLIC_MODES:
            raise ScheduleError(f"cyclic mode must be one of {', '.join(CYCLIC_MODES)}, got {get('mode')!r}")
    if k == "custom" and not custom.known(get("form")):
        raise ScheduleError(f"no closed form named {get('form')!r} is registered")


def _check(p: Phase, *, last: bool) -> None:
    if p.kind not in KINDS:
        raise ScheduleError(f"unknown phase kind {p.kind!r}: one of {', '.join(KINDS)}")
    if isinstance(p.length, bool) or not isinstance(p.length, int) or p.length < 1:
        raise ScheduleError(f"a {p.kind} phase must last a whole number of steps, at least 1; got {p.length!r}")
    for name in ("start", "end"):
        value = _number(getattr(p, name), f"{p.kind} {name}")
        if value < 0:
            raise ScheduleError(f"a {p.kind} phase's {name} lr must be at least 0, got {value!r}")
    for name, steps in (("length", p.length), ("span", p.span), ("shift", p.shift)):
        if isinstance(steps, (int, float)) and not isinstance(steps, bool) and abs(steps) > MAX_STEPS:
            raise ScheduleError(
                f"a {p.kind} phase's {name} of {steps:.4g} steps is past 2**53 (9.0e15): a schedule "
                f"in floating point cannot tell its steps apart; give a step count a run could reach"
            )
    if p.span is not None and _number(p.span, f"{p.kind} span") <= 0:
        raise ScheduleError(f"a {p.kind} phase's span must be above 0, got {p.span!r}")
    if _number(p.shift, f"{p.kind} shift") < 0:
        raise ScheduleError(f"a {p.kind} phase's shift must be at least 0, got {p.shift!r}")
    if p.beyond not in BEYOND:
        raise ScheduleError(f"beyond must be one of {', '.join(BEYOND)}, got {p.beyond!r}")
    if p.beyond != "hold" and not last:
        raise ScheduleError("only the last phase says what happens after it (beyond)")
    _check_params(p)
    if p.kind == "constant" and p.start != p.end:
        raise ScheduleError(f"a constant phase starts and ends at the same lr, got {p.start!r} and {p.end!r}")


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + 1e-300


def _check_end(p: Phase) -> None:
    shape = p.shape()
    if p.kind not in _FREE_END and not _close(p.end, shape.value(p.width)):
        raise ScheduleError(
            f"a {p.kind} phase's end must be its value at s = span ({shape.value(p.width)!r}), got {p.end!r}"
        )
    first, last = shape.value(p.shift), shape.value(p.shift + p.length - 1)
    for what, v in (("first", first), ("last", last)):
        if not math.isfinite(v) or v < -1e-12 * max(p.start, p.end, 1e-300):
            raise ScheduleError(f"a {p.kind} phase's {what} lr is {v!r}: a learning rate is a finite number >= 0")


class Segment(NamedTuple):
    """Steps lo <= t < hi (hi may be math.inf) evaluated as shape(t - lo + s0)."""

    lo: int
    hi: float
    shape: shapes.Shape
    s0: float

    def at(self, t: int) -> float:
        return self.shape.value(t - self.lo + self.s0)


class Schedule:
    """An immutable, validated list of phases with exact per-step evaluation."""

    __slots__ = ("phases", "offsets", "_segments", "_key")

    def __init__(self, phases: Iterable[Phase]) -> None:
        self.phases: tuple[Phase, ...] = tuple(phases)
        if not self.phases:
            raise ScheduleError("a schedule needs at least one phase")
        n = len(self.phases)
        for i, p in enumerate(self.phases):
            _check(p, last=i == n - 1)
            _check_end(p)
        offsets = [0]
        for p in self.phases:
            offsets.append(offsets[-1] + p.length)
        self.offsets: tuple[int, ...] = tuple(offsets)
        if offsets[-1] > MAX_STEPS:
            raise ScheduleError(
                f"the phases last {offsets[-1]:.4g} steps, past 2**53 (9.0e15): a schedule in floating "
                f"point cannot tell its steps apart; give a step count a run could reach"
            )
        segs = [Segment(self.offsets[i], self.offsets[i + 1], p.shape(), p.shift) for i, p in enumerate(self.phases)]
        last = self.phases[-1]
        if last.beyond == "continue":
            segs[-1] = segs[-1]._replace(hi=math.inf)
        else:
            segs.append(Segment(self.offsets[-1], math.inf, shapes.Constant(last.end), 0.0))
        self._segments: tuple[Segment, ...] = tuple(segs)

    # ---- evaluation -------------------------------------------------------------------------
    @property
    def total_length(self) -> int:
        """Steps the phases cover (what comes after is the last phase's `beyond`)."""
        return self.offsets[-1]

    def segments(self) -> tuple[Segment, ...]:
        return self._segments

    def value(self, t: int) -> float:
        """lr(t): the learning rate of the t-th optimizer update (t = 0 is the first)."""
        if t < 0:
            raise ScheduleError(f"step {t} is before the first step (0)")
        i = bisect.bisect_right(self.offsets, t) - 1
        return self._segments[min(i, len(self._segments) - 1)].at(t)

    def values(self, steps: Iterable[int]) -> list[float]:
        return [self.value(t) for t in steps]

    def __iter__(self) -> Iterator[Phase]:
        return iter(self.phases)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schedule) and self.phases == other.phases

    @property
    def key(self) -> tuple[Any, ...]:
        """The phases as a hashable value: equal keys, the same schedule."""
        try:
            return self._key
        except AttributeError:
            self._key: tuple[Any, ...] = tuple(
                (p.kind, p.length, p.start, p.end, p.span, p.shift, p.beyond, _frozen(p.params)) for p in self.phases
            )
            return self._key

    def __repr__(self) -> str:
        return f"Schedule({self.to_json()!r})"

    # ---- JSON (the IR field value) --------------------------------------------------------
    def to_json(self) -> list[dict[str, Any]]:
        out = [p.to_json() for p in self.phases]
        if self.phases[-1].beyond != "hold":
            out[-1]["beyond"] = self.phases[-1].beyond
        return out

    @classmethod
    def from_json(cls, data: Any) -> "Schedule":
        """Validate and load the JSON form; ScheduleError says which phase and what is wrong."""
        if not isinstance(data, Sequence) or isinstance(data, (str, bytes)) or not data:
            raise ScheduleError("a schedule is a non-empty list of phases")
        phases = []
        for i, item in enumerate(data):
            if not isinstance(item, (dict, Mapping)):
                raise ScheduleError(f"phase {i + 1}: a phase is a mapping, got {item!r}")
            try:
                phases.append(_phase_from_json(item))
            except ScheduleError as e:
                raise ScheduleError(f"phase {i + 1}: {e}") from None
        try:
            return cls(phases)
        except ScheduleError as e:
            raise ScheduleError(f"schedule: {e}") from None


def _frozen(value: Any) -> Any:
    if isinstance(value, (dict, Mapping)):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _phase_from_json(item: Mapping[str, Any]) -> Phase:
    missing = [k for k in ("kind", "length", "start", "end") if k not in item]
    if missing:
        raise ScheduleError(f"missing {', '.join(missing)}")
    kind = item["kind"]
    if kind not in KINDS:
        raise ScheduleError(f"unknown phase kind {kind!r}: one of {', '.join(KINDS)}")
    known = set(_KEY_ORDER) | set(KINDS[kind]) | {"beyond"}
    unknown = sorted(str(k) for k in set(item) - known)
    if unknown:
        raise ScheduleError(f"a {kind} phase has no key {', '.join(unknown)}")
    params = {k: (tuple(v) if isinstance(v, list) else v) for k, v in item.items() if k in KINDS[kind]}
    span = item.get("span")
    return Phase(
        kind=kind,
        length=item["length"],
        start=_number(item["start"], "start"),
        end=_number(item["end"], "end"),
        span=None if span is None else _number(span, "span"),
        shift=_number(item.get("shift", 0.0), "shift"),
        params=params,
        beyond=item.get("beyond", "hold"),
    )
