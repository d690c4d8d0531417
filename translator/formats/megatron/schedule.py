"""Megatron-LM's learning-rate schedule <-> the canonical one.

Megatron (v2.0+, megatron/core/optimizer_param_scheduler.py get_lr; training.py
get_optimizer_param_scheduler) counts samples: with G the global batch, the decay ends at
D = (--lr-decay-iters or --train-iters) x G (or --lr-decay-samples / --train-samples), the warmup lasts
W = --lr-warmup-fraction x D, or --lr-warmup-iters x G (--lr-warmup-samples). With n samples seen
(0 at the first step: the scheduler is stepped after each optimizer step), warmup is
init + (peak - init) n / W (linear from --lr-warmup-init at t = 0, on time); then with r = (n-W)/(D-W):
linear min + (peak - min)(1 - r), cosine min + (peak - min)(cos(pi r) + 1)/2, constant peak; after D
every style holds --min-lr. In steps (a constant batch) these are canonical phases (scheduler.py), and so are
inverse-square-root and WSD with linear or cosine annealing; WSD's exponential and minus_sqrt
annealing have no canonical shape. v1.0's AnnealingLR (warmup = --warmup x N iterations; linear
P(N - n')/N, cosine P/2 (cos(pi n'/N)+1) with n' = min(n, N - W) - W) is read as v2.0's, approximately
when it warms up.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import InputError
from ...knowledge.formula import Approx, Extension, formula
from ...schedule.fields import finite, rendered
from ...knowledge.formula import as_written, lr_only
from ...schedule.model import NotRepresentable, ScheduleError
from . import scheduler

TITLE = "Megatron-LM"


def _spans(
    iters: dict[str, Any], samples: dict[str, Any], steps: int | None, global_: int | None
) -> tuple[float | None, float | None, float | None, Any]:
    """(decay end, warmup, WSD annealing) in steps, or why they are not known."""
    fraction = iters["fraction"]
    # Megatron asserts one kind only when --train-iters (or --train-samples) is given (arguments.py
    # validate_args, `if args.train_iters:`); a script that gives neither (Retro's: its project dir
    # gives the run's length) and --lr-*-samples schedules in samples
    by_samples = (
        not steps
        and not any(iters[k] for k in ("decay", "warmup", "wsd"))
        and any(samples[k] for k in ("decay", "warmup", "wsd"))
    )
    if samples["train"] is not None or by_samples:
        if any(iters[k] for k in ("decay", "warmup", "wsd")):
            raise ValueError("--*-iters schedule options with --train-samples: Megatron takes samples or iterations")
        if not global_:
            return (
                None,
                None,
                None,
                "a sample-based schedule needs the global batch: give --world-size N or --set batch.global",
            )
        end = samples["decay"] or samples["train"]
        if end is None:
            return (
                None,
                None,
                None,
                "the decay lasts --train-samples, which the file does not give: give --lr-decay-samples",
            )
        warm = fraction * end if fraction is not None else samples["warmup"] or 0
        return end / global_, warm / global_, (samples["wsd"] or 0) / global_, None
    if samples["decay"] or samples["warmup"]:
        raise ValueError("--lr-*-samples options with --train-iters: Megatron takes samples or iterations")
    end = iters["decay"] or steps
    if fraction is not None:
        if iters["warmup"]:
            raise ValueError("--lr-warmup-fraction and --lr-warmup-iters: Megatron takes one")
        return end, (fraction * end if end is not None else None), iters["wsd"], None
    return end, float(iters["warmup"] or 0), iters["wsd"], None


@formula("megatron.lr_schedule")
class LrSchedule:
    """--lr and the scheduler's settings <-> optim.lr and schedule.phases (OptimizerParamScheduler
    through scheduler.py); written in iterations."""

    @staticmethod
    def read(
        lr: Any,
        lr_decay_style: str | None,
        lr_decay_iters: int | None,
        lr_decay_samples: int | None,
        lr_warmup_iters: int | None,
        lr_warmup_fraction: float | None,
        lr_warmup_samples: int | None,
        min_lr: Any,
        lr_warmup_init: Any,
        lr_wsd_decay_style: str | None,
        lr_wsd_decay_iters: int | None,
        lr_wsd_decay_samples: int | None,
        warmup: float | None,
        train_samples: int | None,
        steps: int | None,
        global_: int | None,
        version: str,
    ) -> Any:
        peak = finite(lr)
        style = lr_decay_style or "linear"
        if style == "exponential" and version != "v1":
            raise ValueError("--lr-decay-style exponential exists in v1.0 only (read it with --from-version v1)")
        if peak is None:
            return {}
        iters = {
            "decay": lr_decay_iters,
            "warmup": lr_warmup_iters,
            "fraction": lr_warmup_fraction,
            "wsd": lr_wsd_decay_iters,
        }
        samples = {
            "train": train_samples,
            "decay": lr_decay_samples,
            "warmup": lr_warmup_samples,
            "wsd": lr_wsd_decay_samples,
        }
        if warmup is not None:  # v1.0: a fraction of the decay span (an int since v2.0, then refused)
            iters["fraction"] = float(warmup)
        end, warm, wsd, unknown = _spans(iters, samples, steps, global_)
        if unknown:
            return {"lr": peak, "phases": Approx(None, unknown)}
        if end is None and style != "constant":
            return {
                "lr": peak,
                "phases": Approx(
                    None,
                    "Megatron decays over --train-iters (or --lr-decay-iters): the lr "
                    "schedule is unknown; give --set train.steps=N",
                ),
            }
        cfg = {
            "lr": peak,
            "min_lr": finite(min_lr) or 0.0,
            "lr_warmup_init": finite(lr_warmup_init) or 0.0,
            "lr_decay_style": style,
            "warmup": warm,
            "decay": end,
            "wsd": wsd,
            "lr_wsd_decay_style": lr_wsd_decay_style,
        }
        if version == "v1" and style not in ("constant", "linear", "cosine"):
            return Extension(f"Megatron-LM v1.0's {style} decay has no canonical form")
        try:
            reading = scheduler.read(cfg, global_ or 1)
        except NotRepresentable as exc:  # the lr stays known; the schedule is said unknown (writers: lr only)
            return {"lr": peak, "phases": Approx(None, f"{exc}: the lr schedule is not carried")}
        except ScheduleError as exc:
            raise ValueError(str(exc)) from None
        phases: Any = reading.schedule.to_json()
        if version == "v1" and (warm or style != "linear"):
            phases = Approx(
                phases,
                "Megatron-LM v1.0's AnnealingLR decays over N iterations counted after the warmup "
                "(n' = min(n, N - W) - W): read as v2.0's scheduler, approximately",
                ("schedule.phases",),
            )
        return {"lr": peak, "phases": phases}

    @staticmethod
    def write(lr: float | None, phases: Any, steps: int | None) -> Any:
        if phases is None:
            return lr_only({"lr": lr}, lr, TITLE)
        try:
            rendering = rendered("megatron", lambda s: scheduler.render(s, steps), phases, steps)
        except ScheduleError as exc:
            raise InputError(f"{TITLE} cannot run this learning-rate schedule: {exc}") from None
        cfg = rendering.config
        style = cfg["lr_decay_style"]
        out: dict[str, Any] = {"lr": cfg["lr"], "lr_decay_style": style, "lr_warmup_iters": int(cfg["warmup"])}
        if cfg.get("lr_warmup_init"):
            out["lr_warmup_init"] = cfg["lr_warmup_init"]
        if style != "constant":
            out["min_lr"] = float(cfg.get("min_lr", 0.0))
            out["lr_decay_iters"] = int(cfg["decay"])
        return as_written(out, rendering, phases, TITLE)
