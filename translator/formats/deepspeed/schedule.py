"""DeepSpeed's LR schedulers (deepspeed/runtime/lr_schedules.py) <-> the canonical schedule."""

from __future__ import annotations

from typing import Any

from ...history import older
from ...formula import Approx, Extension, Unexpressible, approx_of, formula
from ...formulas_common import clamped_warmup_loss, lag_loss


_REQUIRED = object()
# Each scheduler's parameters and defaults: DeepSpeed's own (the constructors in lr_schedules.py)
# and the two torch.optim.lr_scheduler classes that express a decay without warmup exactly
# (DeepSpeed builds any torch scheduler named in `type` with `params` as keyword arguments).
# WarmupLR's warmup_max_lr default became the optimizer's lr in 0.17.2 (#7360); it was 0.001.
_SCHEDULERS: dict[str, dict[str, Any]] = {
    "WarmupLR": {"warmup_min_lr": 0.0, "warmup_max_lr": None, "warmup_num_steps": 1000, "warmup_type": "log"},
    "WarmupDecayLR": {"total_num_steps": _REQUIRED, "warmup_min_lr": 0.0, "warmup_max_lr": 0.001,
                      "warmup_num_steps": 1000, "warmup_type": "log"},
    "WarmupCosineLR": {"total_num_steps": _REQUIRED, "warmup_min_ratio": 0.0, "warmup_num_steps": 1000,
                       "cos_min_ratio": 0.0001, "warmup_type": "log"},
    "CosineAnnealingLR": {"T_max": _REQUIRED, "eta_min": 0.0},
    "LinearLR": {"start_factor": 1.0 / 3, "end_factor": 1.0, "total_iters": 5},
}  # fmt: skip
# Schedules with no canonical form: DeepSpeed's cyclic ones, and the other torch schedulers.
_DS_CYCLIC = ("OneCycle", "LRRangeTest")
_TORCH_SCHEDULERS = frozenset({
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "ExponentialLR",
    "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts",
    "OneCycleLR", "PolynomialLR",
})  # fmt: skip
_NEW_WARMUP_MAX = "0.17.2"  # first release in which WarmupLR's peak is the optimizer's lr (0.001 before)


def _whole(value: float, what: str) -> Any:
    """An int for DeepSpeed's integer step counts; Approx when the canonical value was fractional."""
    n = int(round(value))
    return n if n == value else Approx(n, f"{what} {value:g} rounded to {n}")


def _linear_zero_crossing(warm: int, total: int, peak: float | None, floor: float) -> Any:
    """Where the canonical linear decay (to 0, clamped at min_lr) must end to hit `floor` at `total`."""
    if peak is None or floor == 0 or floor >= peak:
        return total
    return _whole(warm + (total - warm) * peak / (peak - floor), "the decay's zero crossing at step")


def _read_torch_schedule(kind: str, p: dict[str, Any], lr: float | None) -> Any:
    if lr is None:
        return {}  # factors of an optimizer lr this file does not hold
    # torch's schedulers evaluate t = 0 when built and DeepSpeed steps them after each optimizer
    # step: step k gets t = k - 1, on time (lag 0)
    if kind == "CosineAnnealingLR":  # eta_min + (lr - eta_min)(1 + cos(pi t / T_max)) / 2
        return {"lr": lr, "decay_style": "cosine", "warmup_steps": 0.0, "decay_steps": int(p["T_max"]),
                "min_lr": float(p["eta_min"]), "lag_steps": 0}  # fmt: skip
    start, end, span = float(p["start_factor"]), float(p["end_factor"]), int(p["total_iters"])
    if start == 1.0 and end <= 1.0:  # a linear decay to end_factor x lr at total_iters, then held
        if end == 1.0:
            return {"lr": lr, "decay_style": "constant", "warmup_steps": 0.0}
        return {"lr": lr, "decay_style": "linear", "warmup_steps": 0.0, "lag_steps": 0,
                "decay_steps": _linear_zero_crossing(0, span, lr, end * lr), "min_lr": end * lr}  # fmt: skip
    if end == 1.0 and start < 1.0:  # a linear warmup from start_factor x lr, then constant
        return {"lr": lr, "decay_style": "constant", "warmup_steps": float(span), "warmup_type": "linear",
                "warmup_start_lr": start * lr, "lag_steps": 0}  # fmt: skip
    return Extension(f"torch LinearLR from {start:g} to {end:g} x lr has no canonical form")


@formula("deepspeed.lr_schedule")
class DeepspeedLrSchedule:
    """DeepSpeed's scheduler block <-> peak lr, warmup and decay (deepspeed/runtime/lr_schedules.py).

    With t = the scheduler's step and W = max(2, warmup_num_steps) (DeepSpeed never warms up for
    fewer than 2 steps; a 1 is read as written and reported):
    * warmup (all three): lr = start + (peak - start) * g, g = t/W ("linear") or log(t+1)/log(W)
      ("log", DeepSpeed's default: no other framework has it, so it is schedule.warmup_type);
    * WarmupLR: peak after warmup (decay_style constant);
    * WarmupDecayLR: linearly down to warmup_min_lr at total_num_steps T, then held. The
      canonical linear decay (NeoX's) heads for 0 at decay_steps D and is clamped at min_lr, so
      D = W + (T - W) * peak / (peak - min) and T = W + (D - W) * (1 - min/peak);
    * WarmupCosineLR: ratios of the optimizer's lr: warmup from warmup_min_ratio, cosine down to
      cos_min_ratio at T (min_lr = cos_min_ratio * lr). Releases before 0.19.3 do not clamp the
      cosine after T (it rises again, as NeoX's does); 0.19.3 and later hold the floor.
    A decay without warmup has no exact DeepSpeed scheduler (they warm up for 2 steps at least):
    it is written as torch's CosineAnnealingLR or LinearLR, which DeepSpeed builds by name.
    One-step offsets between frameworks' scheduler counters are not modelled.
    """

    @staticmethod
    def read(
        scheduler_type: Any,
        scheduler_params_warmup_min_lr: Any,
        scheduler_params_warmup_max_lr: Any,
        scheduler_params_warmup_num_steps: Any,
        scheduler_params_warmup_type: Any,
        scheduler_params_total_num_steps: Any,
        scheduler_params_warmup_min_ratio: Any,
        scheduler_params_cos_min_ratio: Any,
        scheduler_params_T_max: Any,
        scheduler_params_eta_min: Any,
        scheduler_params_start_factor: Any,
        scheduler_params_end_factor: Any,
        scheduler_params_total_iters: Any,
        optimizer_lr: float | None,
        version: str,
    ) -> Any:
        given = {
            "warmup_min_lr": scheduler_params_warmup_min_lr, "warmup_max_lr": scheduler_params_warmup_max_lr,
            "warmup_num_steps": scheduler_params_warmup_num_steps, "warmup_type": scheduler_params_warmup_type,
            "total_num_steps": scheduler_params_total_num_steps, "warmup_min_ratio": scheduler_params_warmup_min_ratio,
            "cos_min_ratio": scheduler_params_cos_min_ratio, "T_max": scheduler_params_T_max,
            "eta_min": scheduler_params_eta_min, "start_factor": scheduler_params_start_factor,
            "end_factor": scheduler_params_end_factor, "total_iters": scheduler_params_total_iters,
        }  # fmt: skip
        given = {k: v for k, v in given.items() if v is not None}
        if scheduler_type is None:
            if given:
                return Extension("scheduler params without a scheduler type: DeepSpeed builds no scheduler")
            # no scheduler: DeepSpeed keeps the optimizer's lr (a client scheduler may replace it)
            return {"decay_style": "constant", "warmup_steps": 0.0} if optimizer_lr is not None else {}
        if scheduler_type in _DS_CYCLIC:
            return Extension(f"DeepSpeed's {scheduler_type} schedule (cyclic lr) has no canonical form")
        if scheduler_type in _TORCH_SCHEDULERS:
            return Extension(f"torch.optim.lr_scheduler.{scheduler_type} has no canonical form")
        if scheduler_type not in _SCHEDULERS:
            known = ", ".join([*_SCHEDULERS, *_DS_CYCLIC])
            raise ValueError(f"DeepSpeed does not recognize LR scheduler {scheduler_type!r}: {known} or a torch.optim.lr_scheduler class")
        spec = _SCHEDULERS[scheduler_type]
        foreign = sorted(set(given) - set(spec))
        if foreign:
            raise ValueError(f"{scheduler_type} takes no {', '.join(foreign)} (DeepSpeed fails with an unexpected keyword)")
        p = {**spec, **given}
        for name, value in p.items():
            if value is _REQUIRED:
                raise ValueError(f"{scheduler_type} needs {name}")
        if "warmup_num_steps" not in spec:
            return _read_torch_schedule(scheduler_type, p, optimizer_lr)
        steps = p["warmup_num_steps"]
        if isinstance(steps, bool) or not isinstance(steps, int) or steps <= 0:
            raise ValueError(f"warmup_num_steps must be a positive integer, got {steps!r}")
        warm = max(2, steps)  # what DeepSpeed runs
        out: dict[str, Any] = {"warmup_steps": float(steps), "lag_steps": 1}  # one step late (see above)
        if steps < 2:
            out["warmup_steps"] = Approx(float(steps), f"DeepSpeed warms up over {warm} steps, not {steps}")
        kind = p["warmup_type"]
        if kind in ("log", "linear"):
            out["warmup_type"] = kind
        else:
            out["warmup_type"] = Approx("log", f"unknown warmup_type {kind!r}: DeepSpeed falls back to log")
        if scheduler_type == "WarmupCosineLR":
            if optimizer_lr is None:
                return out  # the ratios apply to the lr of an optimizer this file does not hold
            out.update(lr=optimizer_lr, decay_style="cosine", decay_steps=int(p["total_num_steps"]),
                       min_lr=float(p["cos_min_ratio"]) * optimizer_lr,
                       warmup_start_lr=float(p["warmup_min_ratio"]) * optimizer_lr)  # fmt: skip
            return out
        peak = p["warmup_max_lr"]
        if peak is None:  # WarmupLR: the optimizer's lr since 0.17.2, 0.001 before
            peak = 0.001 if older("deepspeed", version, _NEW_WARMUP_MAX) else optimizer_lr
        floor = float(p["warmup_min_lr"])
        if peak is not None:
            out["lr"] = float(peak)
        out["warmup_start_lr"] = floor
        if scheduler_type == "WarmupLR":
            out["decay_style"] = "constant"
            return out
        out.update(decay_style="linear", min_lr=floor)
        out["decay_steps"] = _linear_zero_crossing(warm, int(p["total_num_steps"]), peak, floor)
        return out

    @staticmethod
    def write(
        lr: float | None,
        decay_style: str | None,
        warmup_steps: float | None,
        decay_steps: int | None,
        min_lr: float | None,
        warmup_type: str | None,
        warmup_start_lr: float | None,
        lag_steps: int | None,
        steps: int | None,
    ) -> Any:
        if lr is None:
            return {}
        style = decay_style or "constant"
        start = warmup_start_lr or 0.0
        floor = min_lr or 0.0
        lossy: list[tuple[str, tuple[str, ...]]] = []  # (why, the fields it concerns)
        warm = warmup_steps or 0.0
        warm_i = int(round(warm))
        if warm_i != warm:
            lossy.append((f"warmup of {warm:g} steps rounded to {warm_i}", ("schedule.warmup_steps",)))
        end = decay_steps if decay_steps is not None else steps
        out: dict[str, Any] = {}
        if style == "constant" and warm_i == 0:
            return {}  # no scheduler: DeepSpeed keeps the optimizer's lr
        if warm_i == 0 and end is None:
            return Approx({}, f"a {style} decay without a decay length (no step count): no scheduler written, the lr "
                              "stays constant", ("schedule.decay_style", "schedule.min_lr", "schedule.lag_steps"))  # fmt: skip
        if warm_i == 0 and end is not None and style == "cosine":
            out.update(scheduler_type="CosineAnnealingLR", scheduler_params_T_max=end, scheduler_params_eta_min=floor)
        elif warm_i == 0 and end is not None and style == "linear":
            ratio = min(floor, lr) / lr if lr else 0.0
            out.update(scheduler_type="LinearLR", scheduler_params_start_factor=1.0, scheduler_params_end_factor=ratio,
                       scheduler_params_total_iters=_whole(end * (1.0 - ratio), "the step the decay reaches min_lr"))  # fmt: skip
        else:
            if warm_i == 1:
                lossy.append(("DeepSpeed warms up over at least 2 steps, not 1", ("schedule.warmup_steps",)))
            out.update(scheduler_params_warmup_num_steps=max(1, warm_i),
                       scheduler_params_warmup_type="linear" if warmup_type in (None, "linear_clamped") else warmup_type)  # fmt: skip
            if warmup_type == "linear_clamped":
                lossy.append((clamped_warmup_loss(start, lr, warm), ("schedule.warmup_type",)))
            if style in ("constant", "exponential") or end is None:
                if style != "constant":
                    what = "exponential decay" if style == "exponential" else f"{style} decay without a decay length"
                    lossy.append((f"DeepSpeed has no {what}: the lr stays at the peak after warmup",
                                  ("schedule.decay_style", "schedule.decay_steps", "schedule.min_lr")))  # fmt: skip
                out.update(scheduler_type="WarmupLR", scheduler_params_warmup_min_lr=start, scheduler_params_warmup_max_lr=lr)
            elif style == "linear":
                total: Any = end
                if 0 < floor < lr:  # the canonical line heads for 0 at `end`; DeepSpeed's ends at the floor
                    total = _whole(warm_i + (end - warm_i) * (1.0 - floor / lr), "the step the decay reaches min_lr")
                if start != floor:
                    lossy.append((f"DeepSpeed's WarmupDecayLR starts its warmup at warmup_min_lr {floor:g}, not {start:g}",
                                  ("schedule.warmup_start_lr",)))  # fmt: skip
                out.update(scheduler_type="WarmupDecayLR", scheduler_params_warmup_min_lr=floor,
                           scheduler_params_warmup_max_lr=lr, scheduler_params_total_num_steps=total)  # fmt: skip
            elif style == "cosine":
                out.update(scheduler_type="WarmupCosineLR", scheduler_params_total_num_steps=end,
                           scheduler_params_warmup_min_ratio=start / lr if lr else 0.0,
                           scheduler_params_cos_min_ratio=floor / lr if lr else 0.0)  # fmt: skip
            else:
                raise Unexpressible(f"DeepSpeed has no {style} schedule")
            if lag_steps != 1:
                lossy.append((lag_loss(None, lr, warm, out["scheduler_type"]), ("schedule.lag_steps",)))
        if lag_steps and out["scheduler_type"] in _TORCH_SCHEDULERS | {"CosineAnnealingLR", "LinearLR"}:
            lossy.append((lag_loss(lag_steps, lr, warm), ("schedule.lag_steps",)))
        kind = out.pop("scheduler_type")
        return {"scheduler_type": approx_of(kind, lossy), **out}  # type first
