"""Cerebras' `learning_rate` (a number, one scheduler phase, or a list of phases) <-> the
canonical schedule."""

from __future__ import annotations

import math
from typing import Any

from ...formula import Approx, approx_of, formula
from ...formulas_common import EXP_DECAY_RATE, clamped_warmup_loss, lag_loss, schedule_varies


def _scheduler_name(phase: dict[str, Any]) -> str:
    name = str(phase.get("scheduler", "")).lower()
    return name[:-2] if name.endswith("lr") and name not in ("lr",) else name


# Model Zoo before 2.0 (PyTorch and TensorFlow) named a phase's settings differently; Cerebras' own 2.0 ->
# 2.1 converter (base_converter.py, _apply_lrs_transforms) maps them: total_iters <- steps / decay_steps,
# initial_learning_rate <- learning_rate / base_lr, learning_rates <- values, milestones <- boundaries
_OLD_PHASE_NAMES = (("steps", "total_iters"), ("decay_steps", "total_iters"), ("base_lr", "initial_learning_rate"),
                    ("values", "learning_rates"), ("boundaries", "milestones"), ("t_max", "T_max"))  # fmt: skip


def _modern(phase: dict[str, Any]) -> dict[str, Any]:
    """A phase in today's names (a phase already in them is returned as it is)."""
    if not any(old in phase for old, _ in _OLD_PHASE_NAMES) and "alpha" not in phase and "power" not in phase:
        return phase
    out = dict(phase)
    for old, new in _OLD_PHASE_NAMES:
        if old in out and new not in out:
            out[new] = out.pop(old)
    name = _scheduler_name(out)
    if name not in ("constant",) and "initial_learning_rate" not in out and "learning_rate" in out:
        out["initial_learning_rate"] = out.pop("learning_rate")
    if name == "cosine" and "alpha" in out and "end_learning_rate" not in out:
        # TensorFlow's Cosine (tf.compat.v1.train.cosine_decay) ends at alpha x the initial lr
        out["end_learning_rate"] = float(out.pop("alpha")) * float(out.get("initial_learning_rate", 0.0))
    if name == "polynomial" and float(out.get("power", 1.0)) == 1.0:
        out["scheduler"] = "Linear"  # a polynomial decay of power 1 is the linear one
        out.pop("power", None)
    return out


@formula("cerebras.lr_schedule")
class CerebrasLrSchedule:
    """Peak lr + warmup + decay <-> Cerebras `learning_rate`: a number, one phase, or a list of phases.

    Cerebras phases hold their end value after total_iters (LinearLR, CosineDecayLR); the last
    phase runs for the rest of training.
    """

    @staticmethod
    def write(
        lr: float | None,
        decay_style: str | None,
        warmup_steps: float | None,
        decay_steps: int | None,
        min_lr: float | None,
        steps: int | None,
        warmup_start_lr: float | None = None,
        warmup_type: str | None = None,
        lag_steps: int | None = None,
    ) -> dict[str, Any]:
        if lr is None:
            return {}
        style = decay_style or "constant"
        floor = min_lr or 0.0
        lossy: list[tuple[str, tuple[str, ...]]] = []  # (why, the fields it concerns)
        phases: list[dict[str, Any]] = []
        warm = warmup_steps or 0.0
        warm_i = int(round(warm))
        if warm_i != warm:
            lossy.append((f"warmup of {warm:g} steps rounded to {warm_i}", ("schedule.warmup_steps",)))
        if warm_i > 0:
            start = warmup_start_lr or 0.0
            if warmup_type == "linear_clamped":
                lossy.append((clamped_warmup_loss(start, lr, warm), ("schedule.warmup_type",)))
            elif warmup_type not in (None, "linear"):
                lossy.append((f"{warmup_type} warmup (schedule.warmup_type) written as Cerebras' linear warmup",
                              ("schedule.warmup_type",)))  # fmt: skip
            phases.append({"scheduler": "Linear", "initial_learning_rate": start, "end_learning_rate": lr, "total_iters": warm_i})
        end = decay_steps if decay_steps is not None else steps
        span = (end - warm_i) if end is not None else None
        if style == "constant" or span is None or span <= 0:
            if style != "constant":
                lossy.append((f"{style} decay without a decay length; kept the lr constant",
                              ("schedule.decay_style", "schedule.decay_steps", "schedule.lag_steps")))  # fmt: skip
            phases.append({"scheduler": "Constant", "learning_rate": lr})
        elif style == "cosine":
            phases.append({"scheduler": "CosineDecay", "initial_learning_rate": lr, "end_learning_rate": floor, "total_iters": span})
            if steps is not None and end is not None and steps > end:
                lossy.append((f"NeoX cosine rises again after step {end} (no clamp); Cerebras holds {floor:g}",
                              ("schedule.decay_style",)))  # fmt: skip
        elif style == "linear":
            if floor == 0 or floor >= lr:
                phases.append({"scheduler": "Linear", "initial_learning_rate": lr, "end_learning_rate": min(floor, lr), "total_iters": span})
            else:
                # NeoX decays towards 0 and clamps at min_lr: it reaches the floor early.
                hit = span * (1.0 - floor / lr)
                hit_i = max(1, int(round(hit)))
                if hit_i != hit:
                    lossy.append((f"the decay reaches min_lr after {hit:g} steps, rounded to {hit_i}", ("schedule.decay_steps",)))
                phases.append({"scheduler": "Linear", "initial_learning_rate": lr, "end_learning_rate": floor, "total_iters": hit_i})
                phases.append({"scheduler": "Constant", "learning_rate": floor})
        elif style == "exponential":
            phases.append({"scheduler": "Exponential", "initial_learning_rate": lr, "decay_rate": EXP_DECAY_RATE, "total_iters": span})
            if floor > 0:
                lossy.append((f"Cerebras ExponentialLR has no floor; NeoX clamps at min_lr {floor:g}", ("schedule.min_lr",)))
        value: Any = phases[0] if len(phases) == 1 else phases
        if len(phases) == 1 and phases[0]["scheduler"] == "Constant":
            value = lr
        elif lag_steps:
            lossy.append((lag_loss(lag_steps, lr, warm), ("schedule.lag_steps",)))
        return {"optimizer_learning_rate": approx_of(value, lossy)}

    @staticmethod
    def read(optimizer_learning_rate: Any, steps: int | None) -> dict[str, Any]:
        spec = optimizer_learning_rate
        if spec is None:
            return {}
        if isinstance(spec, bool) or not isinstance(spec, (int, float, dict, list)):
            raise ValueError(f"learning_rate must be a number, a scheduler or a list of schedulers, got {spec!r}")
        if isinstance(spec, (int, float)):
            return {"lr": float(spec), "decay_style": "constant", "warmup_steps": 0.0}
        phases = [spec] if isinstance(spec, dict) else list(spec)
        if not phases or not all(isinstance(p, dict) for p in phases):
            raise ValueError("every learning_rate phase must be a mapping with a `scheduler`")
        phases = [_modern(p) for p in phases]
        names = [_scheduler_name(p) for p in phases]
        out: dict[str, Any] = {"warmup_steps": 0.0}
        i = 0
        first = phases[0]
        # a rising first Linear phase is the warmup (alone, it holds the peak afterwards: constant)
        if names[0] == "linear" and float(first.get("initial_learning_rate", 0.0)) < float(first.get("end_learning_rate", 0.0)):
            out["warmup_steps"] = float(first.get("total_iters", 0))
            out["lr"] = float(first["end_learning_rate"])
            out["warmup_start_lr"] = float(first.get("initial_learning_rate", 0.0))
            out["warmup_type"] = "linear"
            i = 1
        warm = int(out["warmup_steps"])
        rest = phases[i:]
        kinds = names[i:]
        unsupported = Approx(None, f"schedule {' -> '.join(names)} has no canonical form")
        if not rest:
            out.update(decay_style="constant")
            if out["warmup_steps"]:
                out["lag_steps"] = 0
            return out
        phase = rest[0]
        peak = float(phase.get("initial_learning_rate", phase.get("learning_rate", out.get("lr", 0.0))))
        out.setdefault("lr", peak)
        tail_ok = all(k == "constant" for k in kinds[1:]) and len(kinds) <= 2
        if kinds[0] == "constant" and len(kinds) == 1:
            out["decay_style"] = "constant"
        elif kinds[0] in ("cosinedecay", "cosine") and tail_ok:
            out.update(decay_style="cosine", min_lr=float(phase.get("end_learning_rate", 0.0)))
            out["decay_steps"] = warm + int(phase.get("total_iters", 0))
        elif kinds[0] == "linear" and tail_ok:
            floor = float(phase.get("end_learning_rate", 0.0))
            span = int(phase.get("total_iters", 0))
            out.update(decay_style="linear", min_lr=floor)
            if floor > 0 and floor < peak:
                full = span / (1.0 - floor / peak)
                out["decay_steps"] = Approx(warm + int(round(full)), "") if not float(full).is_integer() else warm + int(full)
                if isinstance(out["decay_steps"], Approx):
                    out["decay_steps"] = Approx(out["decay_steps"].value, f"linear decay span {full:g} rounded")
            else:
                out["decay_steps"] = warm + span
        elif kinds[0] == "exponential" and tail_ok:
            out.update(decay_style="exponential", decay_steps=warm + int(phase.get("total_iters", 0)))
            rate = float(phase.get("decay_rate", 0.5))
            if not math.isclose(rate, EXP_DECAY_RATE, rel_tol=1e-6):
                out["decay_style"] = Approx("exponential", f"decay_rate {rate} per span is not NeoX's exp(-0.693)")
        else:
            out["decay_style"] = unsupported
        if schedule_varies(out["warmup_steps"], out["decay_style"] if isinstance(out["decay_style"], str) else None):
            out["lag_steps"] = 0
        return out
