"""GPT-NeoX's AnnealingLR (megatron/learning_rates.py; built by megatron/training.py
get_learning_rate_scheduler) as a canonical schedule, and back.

NeoX's own arithmetic, at step t (AnnealingLR is built at iteration 0 and stepped after each
optimizer step, so lr(t) is its value at iteration t):
  N = lr_decay_iters, else floor(train_iters * lr_decay_fraction), else train_iters; N = max(1, N)
  W = warmup * N (a float: a fraction of N, not of train_iters)
  warmup, while W > 0 and t <= W: L * max(1, t) / W  (t = 0 and t = 1 both get L / W)
  then, with u = t - W and E = N - W:
    linear       L * (E - u) / E      (to 0 at t = N, then negative: only the clamp stops it)
    cosine       m + (L - m) * (1 + cos(pi u / E)) / 2   (not clamped: rises again after N)
    exponential  L * exp(-0.693 u / E)   (L/2 at N, whatever m is)
    other        L   (also "Cosine" & co: the config check ignores case, AnnealingLR does not)
  and max(lr, m) after the warmup (the warmup returns before the clamp: a warmup step below min_lr
  stays below it; measured).
Config keys (NeoX argument names): lr (= optimizer.params.lr, which NeoX copies over any
top-level lr; default 0.001), min_lr (0.0), warmup (0.01), lr_decay_style ("linear"),
lr_decay_iters, lr_decay_fraction, train_iters.

schedule: GPT-NeoX's learning rate <-> the canonical schedule (the formula: AnnealingLR as above; with
OneBitAdam, the DeepSpeed WarmupDecayLR NeoX builds instead).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Iterator, Mapping

from ...core.errors import InputError
from ...knowledge.formula import Approx, Foreign, formula
from ...knowledge.formula import as_written, lr_only, read_phases
from ...schedule.fields import finite, parse, rendered
from ...schedule.compare import Features, decay_ends, features, tops, warmup_ends
from ...schedule.fields import Reading, Rendering, choose, horizon_of, number, whole
from ...schedule.model import Phase, Schedule, ScheduleError, phase
from ...schedule.ops import constant, finish, floor_at
from ..deepspeed import scheduler as deepspeed_scheduler

DEFAULTS: dict[str, Any] = {"lr": 0.001, "min_lr": 0.0, "warmup": 0.01, "lr_decay_style": "linear"}
STYLES = ("linear", "cosine", "exponential")
EXP = -0.693  # NeoX's exp(-0.693) = 1/2 (to 4 digits)


def decay_steps(cfg: Mapping[str, Any]) -> int:
    """N, as get_learning_rate_scheduler computes it."""
    if cfg.get("lr_decay_iters") is not None:
        n = whole(cfg["lr_decay_iters"], "lr_decay_iters")
    elif cfg.get("lr_decay_fraction") is not None:
        if cfg.get("train_iters") is None:
            raise ScheduleError(
                "lr_decay_fraction needs train_iters (NeoX computes floor(train_iters * lr_decay_fraction))"
            )
        n = math.floor(whole(cfg["train_iters"], "train_iters") * number(cfg["lr_decay_fraction"], "lr_decay_fraction"))
    elif cfg.get("train_iters") is not None:
        n = whole(cfg["train_iters"], "train_iters")
    else:
        raise ScheduleError("NeoX needs train_iters or lr_decay_iters to build its lr scheduler (max(1, None) fails)")
    return max(1, n)


def read(cfg: Mapping[str, Any]) -> Reading:
    get = lambda k: cfg.get(k) if cfg.get(k) is not None else DEFAULTS.get(k)  # noqa: E731
    peak, floor = number(get("lr"), "lr"), number(get("min_lr"), "min_lr")
    warmup = number(get("warmup"), "warmup")
    style = get("lr_decay_style")
    if not isinstance(style, str):
        raise ScheduleError(f"lr_decay_style must be a string, got {style!r}")
    if floor > peak:
        raise ScheduleError(f"min_lr {floor:g} is above lr {peak:g} (NeoX refuses: min_lr <= lr)")
    notes: list[str] = []
    if style not in STYLES and style != "constant":
        if style.lower() in STYLES:
            notes.append(
                f"lr_decay_style {style!r} passes NeoX's case-insensitive check but AnnealingLR compares "
                f"exactly: the lr stays constant after the warmup, no {style.lower()} decay"
            )
        style = "constant"
    n = decay_steps(cfg) if style != "constant" or warmup > 0 else 1
    w = warmup * n
    phases: list[Phase] = []
    t0 = 0
    if w > 0:
        t0 = math.ceil(w)  # the first step past the warmup (an integral W: its value L is the decay's first)
        phases.append(constant(peak / w, 1))
        if t0 > 1:
            phases.append(phase("linear", t0 - 1, peak / w, peak * t0 / w))
    tail = _decay(style, peak, floor, w, n, shift=t0 - w)
    decay = Schedule(finish(tail, tail[-1].beyond))
    decay = floor_at(decay, floor) if floor > 0 else decay  # the clamp: after the warmup only
    return Reading(Schedule(finish(phases + list(decay.phases), decay.phases[-1].beyond)), tuple(notes))


def _decay(style: str, peak: float, floor: float, w: float, n: int, shift: float) -> list[Phase]:
    if style == "constant":
        return [constant(peak, 1)]
    span = n - w
    if span <= 0:
        raise ScheduleError(f"warmup {w / n:g} of {n} decay steps leaves nothing to decay over (NeoX divides by zero)")
    if style == "cosine":
        return [phase("cosine", 1, peak, floor, span=span, shift=shift, cycle="mirror", beyond="continue")]
    if style == "linear":
        value = lambda u: peak * (span - (u + shift)) / span  # noqa: E731
    else:
        value = lambda u: peak * math.exp(EXP * (u + shift) / span)  # noqa: E731
    # the first step the clamp takes over (the line goes on below 0, the exponential towards 0)
    cut = _first_below(value, floor, strict=style == "exponential" or floor > 0)
    if style == "linear":
        return (
            [phase("linear", cut, peak, 0.0, span=span, shift=shift), constant(floor, 1)]
            if cut
            else [constant(floor, 1)]
        )
    exp = phase("exponential", max(cut or 1, 1), peak, rate=math.exp(EXP), period=span, shift=shift)
    if cut is None:
        return [replace(exp, beyond="continue")]
    return [exp, constant(floor, 1)] if cut else [constant(floor, 1)]


def _first_below(value: Any, floor: float, strict: bool) -> int | None:
    """The first local step u >= 0 with value(u) < floor (or < 0 for a line reaching 0); None: never."""
    level = floor if strict else 0.0
    if value(0) < level:
        return 0
    hi = 1
    while value(hi) >= level:
        hi *= 2
        if hi > 2**62:
            return None
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if value(mid) >= level:
            lo = mid
        else:
            hi = mid
    return hi


# ---- canonical -> NeoX ---------------------------------------------------------------------------
def render(schedule: Schedule, steps: int | None = None) -> Rendering:
    """NeoX settings for a schedule: exact when AnnealingLR can run it, else the closest of its four
    styles (keeping the peak, the warmup length and the step where the decay ends)."""
    horizon = horizon_of(schedule, steps)
    return choose(schedule, _candidates(schedule, horizon, steps), lambda c: read(c).schedule, horizon)


def _candidates(s: Schedule, horizon: int, steps: int | None) -> Iterator[dict[str, Any]]:
    f = features(s, horizon)
    for peak in tops(s, f):
        yield from _candidates_at(s, f, peak, horizon, steps)


def _candidates_at(s: Schedule, f: Features, peak: float, horizon: int, steps: int | None) -> Iterator[dict[str, Any]]:
    base = {"lr": peak} if steps is None else {"lr": peak, "train_iters": steps}
    warmups: list[float] = list(warmup_ends(s, f))
    if f.first > 0 and f.first != peak:
        warmups.append(peak / f.first)  # NeoX's first step is L / W
    first = next((p for p in s.phases if p.kind != "constant"), None)
    if first is not None and first.kind == "linear" and first.end > first.start:
        warmups.append(peak / ((first.end - first.start) / first.width))  # NeoX's own W: slope L / W
    # where decays end: where the lr settles, and where each decaying shape reaches its end
    ends = decay_ends(s, f)
    if f.peak_at == 0 and s.phases[0].kind == "constant" and len(s.phases) == 1:
        yield {**base, "lr_decay_style": "constant", "warmup": 0.0}
    for w in dict.fromkeys(warmups):
        for end, low in dict.fromkeys(ends):
            low = min(low, peak)
            for style, n in _spans(w, end, peak, low):
                if n < 1 or n <= w:
                    continue
                for floor in dict.fromkeys((low, 0.0)):
                    yield {**base, "lr_decay_style": style, "warmup": w / n, "lr_decay_iters": n, "min_lr": floor}
        yield {
            **base,
            "lr_decay_style": "constant",
            "warmup": w / max(1, steps or horizon),
            "train_iters": max(1, steps or horizon),
        }


def _spans(w: float, end: float, peak: float, low: float) -> Iterator[tuple[str, int]]:
    """(style, lr_decay_iters) that make each style reach `low` at step `end`."""
    for n in _whole(end):
        yield "cosine", n
    if low < peak:  # the line to 0 meets min_lr at W + E (1 - m/L)
        for n in _whole(w + (end - w) * peak / (peak - low)):
            yield "linear", n
    for n in _whole(end):
        yield "linear", n
    if 0 < low < peak:  # L exp(-0.693 (end - W) / E) = m
        for n in _whole(w + EXP * (end - w) / math.log(low / peak)):
            yield "exponential", n
    for n in _whole(end):
        yield "exponential", n


def _whole(x: float) -> list[int]:
    if not math.isfinite(x):
        return []
    return list(dict.fromkeys((round(x), math.floor(x), math.ceil(x))))


TITLE = "GPT-NeoX"
# NeoX's pinned DeeperSpeed: the DeepSpeed release whose schedulers it runs (mappings/deepspeed.yaml)
DEEPERSPEED = "0.17.1"
DECAY_STYLES = ("constant", "linear", "cosine", "exponential")  # lr_decay_style's Literal (neox_args.py)


def _onebitadam(lr: float, warmup: Any, lr_decay_iters: Any, steps: Any) -> Any:
    """NeoX with OneBitAdam builds no AnnealingLR: DeepSpeed's WarmupDecayLR from 0 to lr over
    int(train_iters * warmup) steps, down to 0 at lr_decay_iters or train_iters (arguments.py)."""
    if steps is None:
        return Approx(
            None,
            "NeoX's OneBitAdam needs train_iters (it asserts): its lr schedule is unknown; give --set train.steps=N",
        )
    # no warmup_type: DeepSpeed's default, log; DeepSpeed warms up over max(2, n) steps (0 and 1 alike)
    warm = max(1, int(steps * (0.01 if warmup is None else warmup)))
    block = {
        "type": "WarmupDecayLR",
        "params": {
            "warmup_min_lr": 0.0,
            "warmup_max_lr": lr,
            "warmup_num_steps": warm,
            "total_num_steps": lr_decay_iters or steps,
        },
    }
    return deepspeed_scheduler.read(block, lr, DEEPERSPEED).schedule.to_json()


@formula("neox.lr_schedule")
class NeoxLrSchedule:
    """optimizer.params.lr and AnnealingLR's settings <-> optim.lr and schedule.phases.

    NeoX builds its scheduler from train_iters (or lr_decay_iters): without either its lr schedule
    is unknown (the phases are left unset, and the leaves say why). What NeoX does that the config
    does not say (a `Cosine` that trains a constant lr) is said as a loss of the face value."""

    @staticmethod
    def read(
        optimizer_params_lr: Any,
        lr_decay_style: Any,
        min_lr: Any,
        warmup: Any,
        lr_decay_iters: Any,
        lr_decay_fraction: Any,
        optimizer_type: Any,
        steps: int | None,
    ) -> Any:
        lr = finite(optimizer_params_lr)
        lr = 0.001 if lr is None else lr
        warmup, min_lr = finite(warmup), finite(min_lr)
        if lr_decay_style is not None and str(lr_decay_style).lower() not in DECAY_STYLES:  # NeoX's Literal check
            # a fork's decay (infinite_cosine): the schedule is unknown, the peak lr is not
            return {"lr": lr, "phases": Foreign(lr_decay_style, DECAY_STYLES, "lr_decay_style")}
        if isinstance(optimizer_type, str) and optimizer_type.lower() == "onebitadam":
            return {"lr": lr, "phases": _onebitadam(lr, warmup, lr_decay_iters, steps)}
        cfg = {
            "lr": lr,
            "lr_decay_style": lr_decay_style,
            "min_lr": min_lr,
            "warmup": warmup,
            "lr_decay_iters": lr_decay_iters,
            "lr_decay_fraction": lr_decay_fraction,
            "train_iters": steps,
        }
        try:
            reading = read(cfg)
        except OverflowError:
            raise OverflowError(f"warmup {warmup} of the decay steps is not a finite number of steps") from None
        except ScheduleError as exc:
            if steps is None and lr_decay_iters is None:  # NeoX cannot build its scheduler yet
                return {
                    "lr": lr,
                    "phases": Approx(None, f"{exc}: the lr schedule is unknown; give --set train.steps=N"),
                }
            raise ValueError(str(exc)) from None
        return {"lr": lr, "phases": read_phases(reading)}

    @staticmethod
    def write(lr: float | None, phases: Any, steps: int | None, optimizer: str | None = None) -> Any:
        if phases is None:
            return lr_only({"optimizer_params_lr": lr}, lr, TITLE)
        if optimizer == "onebitadam":
            return _write_onebitadam(lr, phases, steps)
        try:
            rendering = rendered("neox", lambda s: render(s, steps), phases, steps)
        except ScheduleError as exc:
            raise InputError(f"{TITLE} cannot run this learning-rate schedule: {exc}") from None
        cfg = rendering.config
        out: dict[str, Any] = {
            "optimizer_params_lr": cfg["lr"],
            "lr_decay_style": cfg["lr_decay_style"],
            "warmup": float(cfg.get("warmup", 0.0)),
            "min_lr": float(cfg.get("min_lr", 0.0)),
        }
        # lr_decay_iters always: then train_iters (the step count rule's) does not move the schedule
        out["lr_decay_iters"] = cfg.get("lr_decay_iters", cfg.get("train_iters"))
        return as_written(out, rendering, phases, TITLE)


def _write_onebitadam(lr: float | None, phases: Any, steps: int | None) -> Any:
    """With OneBitAdam NeoX runs DeepSpeed's WarmupDecayLR (from 0 to lr over int(train_iters x warmup)
    steps, log-shaped, back to 0 at lr_decay_iters or train_iters): the closest of those."""
    if steps is None:
        return Approx(
            {"optimizer_params_lr": lr} if lr is not None else {},
            "NeoX's OneBitAdam runs DeepSpeed's WarmupDecayLR over train_iters, which is not known: "
            "give --set train.steps=N",
            ("schedule.phases",),
        )

    def candidates(s: Schedule) -> Iterator[dict[str, Any]]:
        f = features(s, steps)
        for w in dict.fromkeys((f.peak_at, max(1, f.peak_at - 1), 0)):
            # the longest decay first: ties (a first step no WarmupDecayLR can give) keep the lr up longest
            for end in sorted({int(e) for e, _ in decay_ends(s, f)} | {steps}, reverse=True):
                yield {"lr": f.peak, "warmup": (w + 0.5) / steps if w else 0.0, "lr_decay_iters": max(1, int(end))}

    def back(c: dict[str, Any]) -> Schedule:
        return Schedule.from_json(_onebitadam(c["lr"], c["warmup"], c["lr_decay_iters"], steps))

    source = parse(phases)
    rendering = choose(source, candidates(source), back, steps)
    cfg = rendering.config
    out = {"optimizer_params_lr": cfg["lr"], "warmup": cfg["warmup"], "lr_decay_iters": cfg["lr_decay_iters"]}
    return as_written(out, rendering, phases, f"{TITLE} with OneBitAdam (DeepSpeed's WarmupDecayLR)")
