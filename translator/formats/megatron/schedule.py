"""Megatron-LM's learning-rate schedule <-> the canonical one.

Megatron (v2.0+, megatron/core/optimizer_param_scheduler.py get_lr; training.py
get_optimizer_param_scheduler) counts samples: with G the global batch, the decay ends at
D = (--lr-decay-iters or --train-iters) x G (or --lr-decay-samples / --train-samples), the warmup lasts
W = --lr-warmup-fraction x D, or --lr-warmup-iters x G (--lr-warmup-samples). With n samples seen
(0 at the first step: the scheduler is stepped after each optimizer step), warmup is
init + (peak - init) n / W (linear from --lr-warmup-init at t = 0, on time); then with r = (n-W)/(D-W):
linear min + (peak - min)(1 - r), cosine min + (peak - min)(cos(pi r) + 1)/2, constant peak; after D
every style holds --min-lr. In steps (a constant batch) these are the canonical shapes, except:

* linear: the canonical line (GPT-NeoX's) heads for 0 at decay_steps and is clamped at min_lr, so
  decay_steps = W + (D - W) x peak / (peak - min), and D = W + (decay_steps - W)(1 - min/peak);
* cosine: the canonical cosine (GPT-NeoX's) rises again after decay_steps; Megatron holds the floor;
* inverse-square-root and WSD (warmup, stable, decay over the last --lr-wsd-decay-*) have no canonical
  form;
* v1.0's AnnealingLR (warmup = --warmup x N iterations; linear P(N - n')/N, cosine P/2 (cos(pi n'/N)+1)
  with n' = min(n, N - W) - W) matches only without warmup.
"""

from __future__ import annotations

from typing import Any

from ...formula import Approx, Extension, approx_of, formula

STYLES = ("constant", "linear", "cosine")


def _whole(value: float, what: str) -> Any:
    n = int(round(value))
    return n if abs(n - value) < 1e-9 else Approx(n, f"{what} {value:g} rounded to {n}")


def _spans(
    iters: dict[str, Any], samples: dict[str, Any], steps: int | None, global_: int | None
) -> tuple[float | None, float | None, Any]:
    """(decay end, warmup) in steps, or why they are not known."""
    fraction = iters["fraction"]
    if samples["train"] is not None:
        if any(iters[k] for k in ("decay", "warmup", "wsd")):
            raise ValueError("--*-iters schedule options with --train-samples: Megatron takes samples or iterations")
        if not global_:
            return None, None, "a sample-based schedule needs the global batch: give --world-size N or --set batch.global"
        end = samples["decay"] or samples["train"]
        warm = fraction * end if fraction is not None else samples["warmup"] or 0
        return end / global_, warm / global_, None
    if samples["decay"] or samples["warmup"]:
        raise ValueError("--lr-*-samples options with --train-iters: Megatron takes samples or iterations")
    end = iters["decay"] or steps
    if fraction is not None:
        if iters["warmup"]:
            raise ValueError("--lr-warmup-fraction and --lr-warmup-iters: Megatron takes one")
        return end, (fraction * end if end is not None else None), None
    return end, float(iters["warmup"] or 0), None


@formula("megatron.lr_schedule")
class LrSchedule:
    @staticmethod
    def read(
        lr_decay_style: str | None, lr_decay_iters: int | None, lr_decay_samples: int | None,
        lr_warmup_iters: int | None, lr_warmup_fraction: float | None, lr_warmup_samples: int | None,
        min_lr: float | None, lr_wsd_decay_iters: int | None, lr_wsd_decay_samples: int | None, warmup: float | None,
        train_samples: int | None, lr: float | None, steps: int | None, global_: int | None, version: str,
    ) -> Any:  # fmt: skip
        style = lr_decay_style or "linear"
        floor = 0.0 if min_lr is None else float(min_lr)
        if style in ("inverse-square-root", "WSD"):
            what = "inverse-square-root decay" if style != "WSD" else "WSD (warmup, stable, then decay)"
            return Extension(f"Megatron's {what} schedule has no canonical form")
        if style == "exponential" and version != "v1":
            raise ValueError("--lr-decay-style exponential exists in v1.0 only (read it with --from-version v1)")
        iters = {"decay": lr_decay_iters, "warmup": lr_warmup_iters, "fraction": lr_warmup_fraction, "wsd": lr_wsd_decay_iters}
        samples = {"train": train_samples, "decay": lr_decay_samples, "warmup": lr_warmup_samples}
        if warmup is not None:  # v1.0: a fraction of the decay span (an int since v2.0, then refused)
            iters["fraction"] = float(warmup)
        end, warm, unknown = _spans(iters, samples, steps, global_)
        out: dict[str, Any] = {"decay_style": style}
        if style != "constant":  # a constant lr never goes below the peak: --min-lr has no effect
            out["min_lr"] = floor
        if unknown:
            out["warmup_steps"] = Approx(None, unknown)
            return out
        if warm is not None:
            out["warmup_steps"] = float(warm)
        if end is None or style == "constant":
            return out
        losses: list[tuple[str, tuple[str, ...]]] = []
        if version == "v1" and (warm or style != "linear"):
            losses.append(("Megatron-LM v1.0's AnnealingLR decays over N iterations counted after the warmup "
                           "(n' = min(n, N - W) - W): the canonical decay approximates it", ("schedule.decay_style",)))
        decay: Any = end
        start = warm or 0.0
        if style == "linear" and lr and 0 < floor < lr and version != "v1":
            decay = start + (end - start) * lr / (lr - floor)  # where the canonical line reaches 0
        if style == "cosine" and steps is not None and steps > end:
            losses.append((f"the canonical cosine (GPT-NeoX's) rises again after step {end:g}; Megatron holds "
                           f"--min-lr {floor:g}", ("schedule.decay_style",)))  # fmt: skip
        out["decay_steps"] = _whole(decay, "decay end (step)")
        out["decay_style"] = approx_of(style, losses)
        return out

    @staticmethod
    def write(
        decay_style: str | None, warmup_steps: float | None, decay_steps: int | None, min_lr: float | None,
        lr: float | None, steps: int | None,
    ) -> Any:  # fmt: skip
        if decay_style is None and warmup_steps is None:
            return {}
        style = decay_style or "constant"
        losses: list[tuple[str, tuple[str, ...]]] = []
        if style not in STYLES:
            losses.append((f"Megatron (v2.0+) has no {style} decay: the lr stays at the peak after warmup",
                           ("schedule.decay_style", "schedule.decay_steps", "schedule.min_lr")))  # fmt: skip
            style = "constant"
        floor = min_lr or 0.0
        warm = warmup_steps or 0.0
        out: dict[str, Any] = {"lr_decay_style": style, "min_lr": floor if style != "constant" else None}
        end: Any = decay_steps if decay_steps is not None else steps
        if style == "linear" and end is not None and lr and 0 < floor < lr:
            end = _whole(warm + (end - warm) * (1.0 - floor / lr), "the step the decay reaches min_lr")
        if style == "cosine" and decay_steps is not None and steps is not None and steps > decay_steps:
            losses.append((f"the canonical cosine (GPT-NeoX's) rises again after step {decay_steps}; Megatron holds "
                           f"--min-lr {floor:g}", ("schedule.decay_style",)))  # fmt: skip
        if style != "constant" and end is not None:
            out["lr_decay_iters"] = end
        span = end.value if isinstance(end, Approx) else end if style != "constant" else steps
        if float(warm).is_integer():
            out["lr_warmup_iters"] = int(warm)
        elif span:
            out["lr_warmup_fraction"] = warm / span  # of the decay span: both count samples, so exact
        else:
            out["lr_warmup_iters"] = _whole(warm, "warmup of")
        if losses:
            out["lr_decay_style"] = approx_of(style, losses)
        return out
