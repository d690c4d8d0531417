"""VeOmni's schedule ratios and step counts <-> canonical steps (build_lr_scheduler,
VeOmniArguments.compute_train_steps)."""

from __future__ import annotations

import math
from typing import Any

from ...history import older
from ...formula import Approx, Extension, Unexpressible, formula, is_close

VEOMNI_LINEAR_FLOOR = 1e-7  # get_linear_schedule_with_warmup is called without lr_min: its default floor
VEOMNI_MAX_SEQ_LEN = 2048  # DataArguments.max_seq_len's default (mappings/veomni.yaml)


def veomni_ratio(count: float, total: int) -> float:
    """The shortest ratio r with int(total * r) == count (VeOmni multiplies and truncates)."""
    target = int(count)
    for digits in range(1, 18):
        ratio = round(target / total, digits)
        if int(total * ratio) == target:
            return ratio
    ratio = target / total
    while int(total * ratio) < target:
        ratio = math.nextafter(ratio, math.inf)
    return ratio


@formula("veomni.schedule")
class VeomniSchedule:
    """lr_warmup_ratio / lr_decay_ratio <-> warmup and decay steps (build_lr_scheduler).

    S = steps; warmup W = int(S x lr_warmup_ratio). cosine decays to lr_min at D = int(S x
    lr_decay_ratio) and holds it; linear always reaches its floor at S (lr_decay_ratio is not passed);
    constant has no decay.
    """

    @staticmethod
    def read(train_optimizer_lr_warmup_ratio: float | None, train_optimizer_lr_decay_ratio: float | None,
             steps: int | None, decay_style: str | None) -> Any:  # fmt: skip
        warmup_ratio = float(train_optimizer_lr_warmup_ratio or 0.0)
        if steps is None:  # ratios of an unknown step count; no warmup is no warmup whatever the count
            return {} if warmup_ratio else {"warmup_steps": 0.0}
        decay_ratio = 1.0 if train_optimizer_lr_decay_ratio is None else float(train_optimizer_lr_decay_ratio)
        out: dict[str, Any] = {"warmup_steps": float(int(steps * warmup_ratio))}
        if decay_style == "cosine":
            out["decay_steps"] = int(steps * decay_ratio)
        elif decay_style == "linear":  # constant has no decay to end
            out["decay_steps"] = steps
            if decay_ratio != 1.0:
                out["decay_steps"] = Approx(steps, f"lr_decay_ratio {decay_ratio} has no effect: VeOmni uses it for cosine only")
        return out

    @staticmethod
    def write(warmup_steps: float | None, decay_steps: int | None, steps: int | None, decay_style: str | None) -> Any:
        if not steps:
            raise Unexpressible("VeOmni gives warmup and decay as ratios of the total steps: give --set train.steps=N")
        out: dict[str, Any] = {}
        notes: list[str] = []
        if warmup_steps is not None:
            whole = int(round(warmup_steps))
            if whole != warmup_steps:
                notes.append(f"warmup of {warmup_steps:g} steps rounded to {whole}")
            out["train_optimizer_lr_warmup_ratio"] = veomni_ratio(whole, steps) if whole else 0.0
        if decay_style == "cosine" and decay_steps is not None:
            out["train_optimizer_lr_decay_ratio"] = veomni_ratio(decay_steps, steps)
        elif decay_style == "linear" and decay_steps is not None and decay_steps != steps:
            notes.append(f"VeOmni's linear schedule always reaches its floor at the last step ({steps}), "
                         f"not at step {decay_steps} (lr_decay_ratio is used for cosine only)")  # fmt: skip
        return Approx(out, "; ".join(notes)) if notes else out


@formula("veomni.min_lr")
class VeomniMinLr:
    """lr_min: the floor of cosine; linear ignores it (its floor is 1e-7); constant has none."""

    @staticmethod
    def read(train_optimizer_lr_min: float | None, decay_style: str | None) -> Any:
        floor = 1e-7 if train_optimizer_lr_min is None else float(train_optimizer_lr_min)
        if decay_style == "linear":
            if not is_close(floor, VEOMNI_LINEAR_FLOOR):
                return Approx(VEOMNI_LINEAR_FLOOR, f"lr_min {floor:g} is ignored by VeOmni's linear schedule (floor 1e-7)")
            return VEOMNI_LINEAR_FLOOR
        if decay_style in (None, "constant"):
            return Extension(f"lr_min {floor:g} has no effect: the lr is constant after the warmup (lr_decay_style constant)")
        return floor

    @staticmethod
    def write(value: float, decay_style: str | None) -> Any:
        if decay_style == "cosine":
            return {"train_optimizer_lr_min": value}
        if decay_style == "linear" and not is_close(value, VEOMNI_LINEAR_FLOOR):
            return Approx({}, f"VeOmni's linear schedule ignores lr_min: its floor is 1e-7, not {value:g}")
        return {}


def veomni_tokens_for(steps: int, batch_tokens: int, warmup_ratio: float) -> int:
    """The roundest data.train_size (tokens) for which VeOmni computes exactly `steps` per epoch:
    ceil(int(T * (1 + bsz_warmup_ratio / 2)) / (global_batch_size * max_seq_len)) == steps."""
    factor = 1 + warmup_ratio / 2

    def count(tokens: int) -> int:
        return math.ceil(int(tokens * factor) / batch_tokens)

    hi = int(steps * batch_tokens / factor) + 2
    while count(hi) > steps:
        hi -= 1
    lo = hi
    step = 1
    while lo - step >= 0 and count(lo - step) == steps:  # walk down to the lowest T that still gives `steps`
        lo -= step
        step *= 2
    while step > 1:
        step //= 2
        if lo - step >= 0 and count(lo - step) == steps:
            lo -= step
    for power in range(len(str(hi)), -1, -1):
        unit = 10**power
        candidate = hi // unit * unit
        if candidate >= lo and count(candidate) == steps:
            return candidate
    return hi


@formula("veomni.train_steps")
class VeomniTrainSteps:
    """Total optimizer steps (VeOmniArguments.compute_train_steps x num_train_epochs).

    dyn_bsz: per epoch ceil(int(train_size x (1 + bsz_warmup_ratio / 2)) / (global_batch_size x
    max_seq_len)), train_size counting tokens; without dyn_bsz an iterable dataset gives
    ceil(train_sample / (global_batch_size / dp)) and a mapping dataset its length (not in the
    config). max_steps caps the steps per epoch.
    """

    @staticmethod
    def read(
        data_train_size: int | None,
        train_max_steps: int | None,
        data_train_sample: int | None,
        data_datasets_type: str | None,
        global_batch: int | None,
        seq_length: int | None,
        warmup_ratio: float | None,
        epochs: int | None,
        packed: bool | None,
        data_parallel_size: int | None,
        train_dyn_bsz_margin: int | None = None,
        train_micro_batch_size: Any = None,
        version: str = "",
    ) -> int | None:
        if not global_batch:
            return None
        if packed is False and older("veomni", version, "#458"):
            return train_max_steps * (epochs or 1) if train_max_steps else None  # else the dataset's length decides
        if packed is False:
            if (data_datasets_type or "mapping") != "iterable" or not data_parallel_size:
                return None  # the dataset length (or the world size) decides
            per_epoch = math.ceil((data_train_sample or 10_000) / (global_batch // data_parallel_size))
        else:
            if not seq_length:
                return None
            tokens = 10_000_000 if data_train_size is None else data_train_size
            tokens = int(tokens * (1 + (warmup_ratio or 0.0) / 2))
            if train_dyn_bsz_margin:  # before #458: eff = (micro x max_seq_len - margin) / (micro x max_seq_len)
                micro = (train_micro_batch_size if isinstance(train_micro_batch_size, int) else 1) * seq_length
                per_epoch = math.ceil(tokens / (global_batch * seq_length * (micro - train_dyn_bsz_margin) / micro))
            else:
                per_epoch = math.ceil(tokens / (global_batch * seq_length))
        if train_max_steps is not None and per_epoch >= train_max_steps:
            per_epoch = train_max_steps
        return per_epoch * (epochs or 1)

    @staticmethod
    def write(value: int, global_batch: int | None, seq_length: int | None, warmup_ratio: float | None,
              epochs: int | None, packed: bool | None) -> Any:  # fmt: skip
        if not global_batch:
            raise Unexpressible("VeOmni counts steps from data.train_size tokens / (global_batch_size x max_seq_len): "
                                "give the global batch")  # fmt: skip
        # without a sequence length (reported missing) the output runs with VeOmni's default max_seq_len:
        # train_size is sized for that, so VeOmni's own step count is still the source's
        per_epoch, rest = divmod(value, epochs or 1)
        tokens = veomni_tokens_for(per_epoch, global_batch * (seq_length or VEOMNI_MAX_SEQ_LEN), warmup_ratio or 0.0)
        out = {"data_train_size": tokens}
        if rest:
            return Approx(out, f"{value} steps are not a whole number of steps per epoch over {epochs} epochs")
        if packed is False:
            return Approx(out, "without dyn_bsz VeOmni counts steps from the dataset, not from train_size")
        return out


@formula("veomni.save_steps")
class VeomniSaveSteps:
    """save_steps / eval_steps: 0 turns it off."""

    @staticmethod
    def read(train_checkpoint_save_steps: int | None) -> int | None:
        return train_checkpoint_save_steps or None

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"train_checkpoint_save_steps": value}


@formula("veomni.eval_steps")
class VeomniEvalSteps:
    """eval_steps: 0 turns it off."""

    @staticmethod
    def read(train_eval_steps: int | None) -> int | None:
        return train_eval_steps or None

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"train_eval_steps": value}
