"""Cerebras Model Zoo 2.10 schedulers (cerebras.pytorch 2.10 optim/lr_scheduler.py and scheduler.py;
the trainer's `init.schedulers` list, and the legacy `optimizer.learning_rate` converted by
trainer/utils.py convert_lr_scheduler) as a canonical schedule (the way back: lr_render.py).

cstorch schedulers are stepped once in their constructor, so the t-th update uses the closed form
at last_epoch = t. SequentialLR runs sub-scheduler k on its own clock from milestone k, which
Model Zoo computes as the running sum of total_iters of all but the last sub-scheduler; the last
runs on with its own closed form. Each class in the canonical terms:
  ConstantLR(learning_rate)                      constant
  LinearLR(initial, end, total_iters)            linear, then end held (PolynomialLR: power)
  CosineDecayLR(initial, end, total_iters)       cosine, then end held
  CosineAnnealingLR(initial, T_max, eta_min)     cosine that rises again (mirror)
  ExponentialLR(initial, total_iters, decay_rate, staircase)   exponential, never clamped
  InverseExponentialTimeDecayLR(initial, step_exponent, total_iters, decay_rate, staircase) inverse_time
  InverseSquareRootDecayLR(initial=1, scale=1, warmup_steps=1): initial * scale / sqrt(max(warmup, t)),
      a hold at initial * scale / sqrt(warmup) (not a ramp), then ~ 1 / sqrt(t)
  StepLR, MultiStepLR, PiecewiseConstantLR, MultiplicativeLR (initial * coefficient^t), CyclicLR,
  OneCycleLR (its last anneal is not clamped after total_steps - 1)
  CosineAnnealingWarmRestarts: a cosine over T_0, then (a cstorch 2.10 slip: T_cur is
      floor(t / T_0) * T_0 - T_0) whole periods alternating initial / eta_min: a custom form
  ScalePerParamLR(scheduler): the inner schedule (per-group muP factors are not the schedule)
Legacy names: `scheduler: Linear` (or LinearLR, any case), a plain number for a constant lr, a list
for SequentialLR (ChainedScheduler with main_scheduler: chained). Release <= 2.1 spellings are read
too (steps/decay_steps, learning_rate/base_lr, values, boundaries, t_max, t_0, t_mult, gamma for
decay_rate); Model Zoo 2.10 itself rejects them, which the notes say.
cstorch computes in float32 where its code makes tensors: its lrs differ from these in the 7th digit.

Writing (the canonical schedule -> cstorch classes) and the `cerebras.lr_schedule` formula: lr_render.py.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Mapping

from ...knowledge.formula import UnknownValue
from ...schedule.fields import Reading, anneals, number, whole
from ...schedule.model import NotRepresentable, Schedule, ScheduleError, phase
from ...schedule.ops import constant, finish, sequence
from .layout import tf_cosine
from .restarts import RESTARTS

# class -> parameter -> default (REQ: required)
REQ: Any = object()
CLASSES: dict[str, dict[str, Any]] = {
    "ConstantLR": {"learning_rate": REQ, "total_iters": None},
    "PolynomialLR": {
        "initial_learning_rate": REQ,
        "end_learning_rate": REQ,
        "total_iters": REQ,
        "power": 1.0,
        "cycle": False,
    },
    "LinearLR": {"initial_learning_rate": REQ, "end_learning_rate": REQ, "total_iters": REQ, "cycle": False},
    "ExponentialLR": {"initial_learning_rate": REQ, "total_iters": REQ, "decay_rate": REQ, "staircase": False},
    "InverseExponentialTimeDecayLR": {
        "initial_learning_rate": REQ,
        "step_exponent": REQ,
        "total_iters": REQ,
        "decay_rate": REQ,
        "staircase": False,
    },
    "InverseSquareRootDecayLR": {"initial_learning_rate": 1.0, "scale": 1.0, "warmup_steps": 1.0},
    "CosineDecayLR": {"initial_learning_rate": REQ, "end_learning_rate": REQ, "total_iters": REQ},
    "SequentialLR": {"schedulers": REQ, "milestones": None},
    "PiecewiseConstantLR": {"learning_rates": REQ, "milestones": REQ},
    "MultiStepLR": {"initial_learning_rate": REQ, "gamma": REQ, "milestones": REQ},
    "StepLR": {"initial_learning_rate": REQ, "step_size": REQ, "gamma": REQ},
    "CosineAnnealingLR": {"initial_learning_rate": REQ, "T_max": REQ, "eta_min": 0.0},
    "LambdaLR": {"initial_learning_rate": REQ},
    "CosineAnnealingWarmRestarts": {"initial_learning_rate": REQ, "T_0": REQ, "T_mult": 1, "eta_min": 0.0},
    "MultiplicativeLR": {"initial_learning_rate": REQ, "coefficient": REQ},
    "ChainedLR": {"schedulers": REQ},
    "CyclicLR": {
        "base_lr": REQ,
        "max_lr": REQ,
        "step_size_up": 2000,
        "step_size_down": None,
        "mode": "triangular",
        "gamma": 1.0,
        "scale_mode": "cycle",
    },
    "OneCycleLR": {
        "initial_learning_rate": REQ,
        "max_lr": REQ,
        "total_steps": 1000,
        "pct_start": 0.3,
        "final_div_factor": 1e4,
        "three_phase": False,
        "anneal_strategy": "cos",
    },
    "ScalePerParamLR": {"scheduler": REQ},
}
_BY_LOWER = {name.lower(): name for name in CLASSES} | {
    "chainedscheduler": "ChainedLR",
    "sequentialscheduler": "SequentialLR",
}
# release <= 2.1 spellings (Model Zoo's cs-2.1 -> cs-2.2 converter, base_converter._apply_lrs_transforms)
ALIASES = {
    "total_iters": ("steps", "decay_steps"),
    "initial_learning_rate": ("learning_rate", "base_lr"),
    "base_lr": ("learning_rate", "initial_learning_rate"),
    "learning_rates": ("values",),
    "milestones": ("boundaries",),
    "T_max": ("t_max",),
    "T_0": ("t_0",),
    "T_mult": ("t_mult",),
    "decay_rate": ("gamma",),
}


def class_name(name: Any) -> str | None:
    """A scheduler name as Model Zoo matches it: any case, with or without the LR suffix."""
    if not isinstance(name, str):
        return None
    low = name.lower()
    return _BY_LOWER.get(low) or _BY_LOWER.get(low + "lr")


# ---- reading -------------------------------------------------------------------------------------
def read_trainer(schedulers: Any, release: str | None = None) -> Reading:
    """trainer.init.schedulers: a list of {ClassName: kwargs} (or one such mapping). Weight-decay
    schedulers in the list are not the lr schedule and are left out."""
    items = schedulers if isinstance(schedulers, list) else [schedulers]
    notes: list[str] = []
    found = []
    for item in items:
        name = _single_key(item)
        if class_name(name) is not None:
            found.append(item)
        else:
            notes.append(f"{name} is not an lr scheduler: not part of the lr schedule")
    if not found:
        raise ScheduleError("no lr scheduler in the schedulers list: the optimizer's lr is used throughout")
    if len(found) > 1:
        raise NotRepresentable(f"{len(found)} lr schedulers set the same lr one after another; only one is modelled")
    return Reading(_build(found[0], notes, release), tuple(notes))


def legacy_to_trainer(learning_rate: Any, adjust_learning_rate: Any = None) -> list[dict[str, Any]]:
    """Model Zoo's own conversion of the legacy optimizer.learning_rate to trainer schedulers."""
    if isinstance(learning_rate, (int, float)) and not isinstance(learning_rate, bool):
        spec: dict[str, Any] = {"ConstantLR": {"learning_rate": float(learning_rate)}}
    else:
        spec = _legacy(learning_rate)
    if adjust_learning_rate:
        spec = {"ScalePerParamLR": {"scheduler": spec}}
    return [spec]


def _legacy(params: Any) -> dict[str, Any]:
    if isinstance(params, (list, tuple)):
        subs, mains = [], set()
        for sub in params:
            if not isinstance(sub, Mapping):
                raise ScheduleError(f"a learning_rate phase must be a mapping with a scheduler, got {sub!r}")
            sub = dict(sub)
            if sub.get("main_scheduler"):
                mains.add(str(sub.pop("main_scheduler")))
            sub.pop("main_scheduler", None)
            subs.append(_legacy(sub))
        if len(mains) > 1:
            raise ScheduleError(f"conflicting main_scheduler values: {sorted(mains)}")
        main = next(iter(mains), None)
        key = "ChainedLR" if main is not None and main.lower() in ("chained", "chainedlr") else "SequentialLR"
        if len(subs) == 1 and key == "SequentialLR":
            return subs[0]
        return {key: {"schedulers": subs}}
    if not isinstance(params, Mapping) or "scheduler" not in params:
        raise ScheduleError(f"learning_rate must be a number, a scheduler mapping or a list of them, got {params!r}")
    kwargs = dict(params)
    name = kwargs.pop("scheduler")
    if name == "Cosine":  # TensorFlow Model Zoo 1.6-1.8 (Trainer.py): tf cosine_decay, held at alpha x initial lr
        name, kwargs = "CosineDecay", tf_cosine(kwargs)
    cls = class_name(name)
    if cls is None:
        raise UnknownValue(name, ["Cosine", *CLASSES], "optimizer.learning_rate")  # a fork's scheduler: the one rule
    return {cls: kwargs}


def read_legacy(learning_rate: Any, adjust_learning_rate: Any = None, release: str | None = None) -> Reading:
    """The legacy layout's optimizer.learning_rate (+ optimizer.adjust_learning_rate)."""
    return read_trainer(legacy_to_trainer(learning_rate, adjust_learning_rate), release)


def _single_key(item: Any) -> str:
    if not isinstance(item, (dict, Mapping)) or len(item) != 1:
        raise ScheduleError(f"a scheduler is a mapping with one class name, got {item!r}")
    return str(next(iter(item)))


def _kwargs(cls: str, given: Any, notes: list[str], release: str | None) -> dict[str, Any]:
    if given is None:
        given = {}
    if not isinstance(given, (dict, Mapping)):
        raise ScheduleError(f"{cls} takes a mapping of arguments, got {given!r}")
    spec = CLASSES[cls]
    out = dict(given)
    for new, olds in ALIASES.items():
        if new not in spec:
            continue
        for old in olds:
            if old in out and old not in spec and new not in out:
                out[new] = out.pop(old)
                if not _old_release(release):
                    notes.append(f"{cls} {old}: a release 2.1 spelling of {new} (Model Zoo 2.10 rejects it)")
    out.pop("param_group_tags", None)
    unknown = sorted(set(out) - set(spec))
    if unknown:  # Model Zoo 2.10 rejects them; the releases that ran the file ignored them (gpt2 small's alpha)
        notes.append(f"{cls} takes no {', '.join(unknown)}: left out (Model Zoo 2.10 rejects it as an extra key)")
        out = {k: v for k, v in out.items() if k in spec}
    missing = [k for k, v in spec.items() if v is REQ and out.get(k) is None]
    if missing:
        raise ScheduleError(f"{cls} needs {', '.join(missing)}")
    return {**spec, **out}


def _old_release(release: str | None) -> bool:
    try:
        return release is not None and tuple(int(x) for x in release.split(".")[:2]) < (2, 2)
    except ValueError:
        return False


def _lr(value: Any, what: str) -> float:
    if isinstance(value, str):  # YAML 1.1 reads 6e-06 as a string; pydantic's float accepts it
        try:
            value = float(value)
        except ValueError:
            raise ScheduleError(f"{what} must be a number, got {value!r}") from None
    return number(value, what, minimum=None)


def _build(item: Any, notes: list[str], release: str | None) -> Schedule:
    name = _single_key(item)
    cls = class_name(name)
    if cls is None:
        raise UnknownValue(name, list(CLASSES), "trainer.init.schedulers")  # a fork's scheduler: the one rule
    p = _kwargs(cls, item[name], notes, release)
    return BUILDERS[cls](p, notes, release)


def _n(value: Any, what: str) -> int:
    return whole(_lr(value, what), what)


def _sequential(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    subs = p["schedulers"]
    if not isinstance(subs, list) or not subs:
        raise ScheduleError("SequentialLR needs a list of schedulers")
    lengths = []
    for sub in subs[:-1]:
        name = _single_key(sub)
        args = sub[name] or {}
        total = args.get("total_iters", next((args[a] for a in ALIASES["total_iters"] if a in args), None))
        if total is None:
            raise ScheduleError(
                f"SequentialLR: {name} before the last needs total_iters (Model Zoo sums them into milestones)"
            )
        lengths.append(_n(total, f"{name} total_iters"))
    marks = list(itertools.accumulate(lengths))
    if p.get("milestones") is not None and list(p["milestones"]) != marks:
        raise ScheduleError(
            f"SequentialLR milestones {list(p['milestones'])} differ from the sums of total_iters {marks} (Model Zoo raises)"
        )
    parts: list[tuple[Schedule, int | None]] = []
    for k, sub in enumerate(subs):
        sched = _build(sub, notes, release)
        parts.append((sched, lengths[k] if k < len(lengths) else None))
    parts = [(s, n) for s, n in parts if n is None or n > 0]
    return sequence(parts)


def _constant(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    return Schedule([constant(_lr(p["learning_rate"], "learning_rate"), 1)])


def _polynomial(p: dict[str, Any], notes: list[str], release: str | None, power: float | None = None) -> Schedule:
    a, b = _lr(p["initial_learning_rate"], "initial_learning_rate"), _lr(p["end_learning_rate"], "end_learning_rate")
    n = _n(p["total_iters"], "total_iters")
    pw = 1.0 if power is None else power
    if n <= 0:
        return Schedule([constant(b, 1)])
    if p.get("cycle"):
        notes.append("cycle: true changes nothing in cstorch 2.10 (the end lr is returned from total_iters on)")
    if pw == 1.0:
        return Schedule([phase("linear", n, a, b)])
    return Schedule([phase("polynomial", n, a, b, power=pw)])


def _poly(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    return _polynomial(p, notes, release, number(_lr(p["power"], "power"), "power"))


def _exponential(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    a, n = _lr(p["initial_learning_rate"], "initial_learning_rate"), _lr(p["total_iters"], "total_iters")
    return Schedule(
        [
            phase(
                "exponential",
                max(1, int(n)),
                a,
                rate=_lr(p["decay_rate"], "decay_rate"),
                period=n,
                staircase=bool(p["staircase"]),
                beyond="continue",
            )
        ]
    )


def _inverse_time(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    a, n = _lr(p["initial_learning_rate"], "initial_learning_rate"), _lr(p["total_iters"], "total_iters")
    return Schedule(
        [
            phase(
                "inverse_time",
                max(1, int(n)),
                a,
                rate=_lr(p["decay_rate"], "decay_rate"),
                period=n,
                power=_lr(p["step_exponent"], "step_exponent"),
                staircase=bool(p["staircase"]),
                beyond="continue",
            )
        ]
    )


def _inverse_sqrt(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    a, scale = _lr(p["initial_learning_rate"], "initial_learning_rate"), _lr(p["scale"], "scale")
    hold = _lr(p["warmup_steps"], "warmup_steps")
    if hold <= 0:
        raise ScheduleError(f"warmup_steps {hold:g}: the lr at step 0 would be initial * scale / sqrt(0)")
    return Schedule(
        [phase("inverse_sqrt", max(1, math.ceil(hold)), a * scale / math.sqrt(hold), hold=hold, beyond="continue")]
    )


def _cosine_decay(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    a, b = _lr(p["initial_learning_rate"], "initial_learning_rate"), _lr(p["end_learning_rate"], "end_learning_rate")
    n = _n(p["total_iters"], "total_iters")
    if n <= 0:
        raise ScheduleError("CosineDecayLR total_iters 0 divides by zero")
    return Schedule([phase("cosine", n, a, b)])


def _cosine_annealing(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    a, n = _lr(p["initial_learning_rate"], "initial_learning_rate"), _lr(p["T_max"], "T_max")
    return Schedule(
        [
            phase(
                "cosine",
                max(1, int(n)),
                a,
                _lr(p["eta_min"], "eta_min"),
                span=None if float(n).is_integer() else n,
                cycle="mirror",
                beyond="continue",
            )
        ]
    )


def _restarts(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    if _lr(p["T_mult"], "T_mult") != 1:
        raise ScheduleError("CosineAnnealingWarmRestarts: cstorch 2.10 supports only T_mult 1 (it raises)")
    a, t0, eta = (
        _lr(p["initial_learning_rate"], "initial_learning_rate"),
        _n(p["T_0"], "T_0"),
        _lr(p["eta_min"], "eta_min"),
    )
    notes.append(
        "cstorch 2.10's CosineAnnealingWarmRestarts is a cosine only over the first T_0 steps; then it "
        "alternates initial and eta_min for whole periods"
    )
    args = {"initial": a, "T_0": t0, "eta_min": eta}
    return Schedule([phase("custom", 2 * t0, a, form=RESTARTS, args=args, beyond="continue")])


def _step(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    size = _lr(p["step_size"], "step_size")
    return Schedule(
        [
            phase(
                "step",
                max(1, int(size)),
                _lr(p["initial_learning_rate"], "initial_learning_rate"),
                gamma=_lr(p["gamma"], "gamma"),
                step_size=size,
                beyond="continue",
            )
        ]
    )


def _multistep(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    marks = [_n(m, "milestones") for m in p["milestones"]]
    return Schedule(
        [
            phase(
                "step",
                max(marks + [1]),
                _lr(p["initial_learning_rate"], "initial_learning_rate"),
                gamma=_lr(p["gamma"], "gamma"),
                milestones=marks,
                beyond="continue",
            )
        ]
    )


def _piecewise(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    lrs = [_lr(v, "learning_rates") for v in p["learning_rates"]]
    marks = [_n(m, "milestones") for m in p["milestones"]]
    if len(lrs) != len(marks) + 1:
        raise ScheduleError(
            f"PiecewiseConstantLR needs one more learning rate than milestones, got {len(lrs)} and {len(marks)}"
        )
    bounds = [0, *marks]
    phases = [constant(v, b - a) for v, a, b in zip(lrs, bounds[:-1], bounds[1:]) if b > a]
    return Schedule(finish(phases + [constant(lrs[-1], 1)]))


def _multiplicative(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    return Schedule(
        [
            phase(
                "exponential",
                1,
                _lr(p["initial_learning_rate"], "initial_learning_rate"),
                rate=_lr(p["coefficient"], "coefficient"),
                period=1.0,
                beyond="continue",
            )
        ]
    )


def _cyclic(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    up = _lr(p["step_size_up"], "step_size_up")
    down = up if p["step_size_down"] is None else _lr(p["step_size_down"], "step_size_down")
    if p["mode"] not in ("triangular", "triangular2", "exp_range"):
        raise ScheduleError(f"CyclicLR mode must be triangular, triangular2 or exp_range, got {p['mode']!r}")
    return Schedule(
        [
            phase(
                "cyclic",
                max(1, int(up + down)),
                _lr(p["base_lr"], "base_lr"),
                high=_lr(p["max_lr"], "max_lr"),
                up=up,
                down=down,
                mode=p["mode"],
                gamma=_lr(p["gamma"], "gamma"),
                beyond="continue",
            )
        ]
    )


def _one_cycle(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    a, top = _lr(p["initial_learning_rate"], "initial_learning_rate"), _lr(p["max_lr"], "max_lr")
    total, pct = _lr(p["total_steps"], "total_steps"), _lr(p["pct_start"], "pct_start")
    low = a / _lr(p["final_div_factor"], "final_div_factor")
    kind = "cosine" if p["anneal_strategy"] == "cos" else "linear"
    if p["three_phase"]:
        marks = [(pct * total - 1, a, top), (2 * pct * total - 2, top, a), (total - 1, a, low)]
    else:
        marks = [(pct * total - 1, a, top), (total - 1, top, low)]
    return Schedule(finish(anneals(kind, marks), "continue"))


def _lambda(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    raise NotRepresentable(
        "cstorch LambdaLR runs fixed demo lambdas (initial^2 * t/30 * 0.95^t): not a usable schedule"
    )


def _chained(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    raise NotRepresentable("ChainedLR multiplies several schedules: no piecewise canonical form")


def _scaled(p: dict[str, Any], notes: list[str], release: str | None) -> Schedule:
    notes.append("ScalePerParamLR: each parameter group's lr is this schedule times its adjust_learning_rate (muP)")
    return _build(p["scheduler"], notes, release)


BUILDERS: dict[str, Callable[[dict[str, Any], list[str], str | None], Schedule]] = {
    "ConstantLR": _constant,
    "LinearLR": _polynomial,
    "PolynomialLR": _poly,
    "ExponentialLR": _exponential,
    "InverseExponentialTimeDecayLR": _inverse_time,
    "InverseSquareRootDecayLR": _inverse_sqrt,
    "CosineDecayLR": _cosine_decay,
    "SequentialLR": _sequential,
    "PiecewiseConstantLR": _piecewise,
    "MultiStepLR": _multistep,
    "StepLR": _step,
    "CosineAnnealingLR": _cosine_annealing,
    "LambdaLR": _lambda,
    "CosineAnnealingWarmRestarts": _restarts,
    "MultiplicativeLR": _multiplicative,
    "ChainedLR": _chained,
    "CyclicLR": _cyclic,
    "OneCycleLR": _one_cycle,
    "ScalePerParamLR": _scaled,
}
