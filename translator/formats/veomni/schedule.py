"""VeOmni's lr settings <-> the canonical schedule (build_lr_scheduler, through scheduler.py), and
its step count (VeOmniArguments.compute_train_steps)."""

from __future__ import annotations

import math
from typing import Any

from ...core.errors import InputError
from ...knowledge.schema import older
from ...knowledge.formula import Approx, Unexpressible, formula
from ...schedule.fields import parse, rendered
from ...knowledge.formula import as_written, lr_only, read_phases
from ...schedule.model import ScheduleError
from . import scheduler

TITLE = "VeOmni"
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


RATIOS = ("lr_warmup_ratio", "lr_decay_ratio")


@formula("veomni.lr_schedule")
class VeomniLrSchedule:
    """train.optimizer.{lr, lr_min, lr_start, lr_warmup_ratio, lr_decay_style, lr_decay_ratio} <->
    optim.lr and schedule.phases (build_lr_scheduler, through scheduler.py).

    The warmup and decay are ratios of the run's steps, which VeOmni counts from the dataset:
    without train.steps a schedule that uses them is unknown (the phases are left unset and the
    leaves say so). The muon optimizer runs the same schedule for each of its parts."""

    @staticmethod
    def read(
        train_optimizer_lr: Any,
        train_optimizer_lr_min: Any,
        train_optimizer_lr_start: Any,
        train_optimizer_lr_warmup_ratio: Any,
        train_optimizer_lr_decay_style: Any,
        train_optimizer_lr_decay_ratio: Any,
        steps: int | None,
    ) -> Any:
        cfg = {
            "lr": train_optimizer_lr,
            "lr_min": train_optimizer_lr_min,
            "lr_start": train_optimizer_lr_start,
            "lr_warmup_ratio": train_optimizer_lr_warmup_ratio,
            "lr_decay_style": train_optimizer_lr_decay_style,
            "lr_decay_ratio": train_optimizer_lr_decay_ratio,
        }
        lr = 5e-5 if train_optimizer_lr is None else float(train_optimizer_lr)
        varies = bool(train_optimizer_lr_warmup_ratio) or (train_optimizer_lr_decay_style or "constant") != "constant"
        if steps is None and varies:
            return {
                "lr": lr,
                "phases": Approx(
                    None,
                    "VeOmni's warmup and decay are ratios of the run's steps, which "
                    "it counts from the dataset: the schedule is unknown; give --set "
                    "train.steps=N",
                ),
            }
        try:
            reading = scheduler.read(cfg, steps or 1)
        except ScheduleError as exc:
            raise ValueError(str(exc)) from None
        return {"lr": lr, "phases": read_phases(reading)}

    @staticmethod
    def write(lr: float | None, phases: Any, steps: int | None) -> Any:
        if phases is None:
            return lr_only({"train_optimizer_lr": lr}, lr, TITLE)
        try:
            rendering = rendered("veomni", lambda s: scheduler.render(s, steps), phases, steps)
        except ScheduleError as exc:
            raise InputError(f"{TITLE} cannot run this learning-rate schedule: {exc}") from None
        cfg = dict(rendering.config)
        total = steps or parse(phases).total_length + 1  # what the rendering's ratios are of
        for name in RATIOS:  # the shortest ratio VeOmni truncates to the same step
            if name in cfg:
                cfg[name] = veomni_ratio(int(total * cfg[name]), total)
        for name in ("lr", "lr_start", "lr_min"):  # 1e-05, not 1.0000001446932737e-05 (within 1e-12 of it)
            if isinstance(cfg.get(name), float):
                cfg[name] = float(f"{cfg[name]:.12g}")
        out = {f"train_optimizer_{k}": v for k, v in cfg.items()}
        return as_written(out, rendering, phases, TITLE)


def veomni_tokens_for(steps: int, batch_tokens: int, warmup_ratio: float) -> int:
    """The roundest data.train_size (tokens) for which VeOmni computes exactly `steps` per epoch:
    ceil(int(T * (1 + bsz_warmup_ratio / 2)) / (global_batch_size * max_seq_len)) == steps."""
    factor = 1 + warmup_ratio / 2
    if steps * batch_tokens > 2**53 / factor:  # VeOmni multiplies T by a float: past 2**53 T is not exact
        raise InputError(
            f"{steps} steps of {batch_tokens} tokens make a data.train_size VeOmni cannot count exactly "
            f"(it computes in floats, exact up to 2**53): give a smaller batch, sequence or step count"
        )

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
    def write(
        value: int,
        global_batch: int | None,
        seq_length: int | None,
        warmup_ratio: float | None,
        epochs: int | None,
        packed: bool | None,
        version: str = "",
    ) -> Any:
        if not global_batch:
            raise Unexpressible(
                "VeOmni counts steps from data.train_size tokens / (global_batch_size x max_seq_len): "
                "give the global batch"
            )
        # without a sequence length (reported missing) the output runs with VeOmni's default max_seq_len:
        # train_size is sized for that, so VeOmni's own step count is still the source's
        per_epoch, rest = divmod(value, epochs or 1)
        tokens = veomni_tokens_for(per_epoch, global_batch * (seq_length or VEOMNI_MAX_SEQ_LEN), warmup_ratio or 0.0)
        out: dict[str, Any] = {"data_train_size": tokens}
        if packed is not False and older("veomni", version, "#458"):
            out["train_dyn_bsz_margin"] = 0  # before #458 the margin shrinks each batch: train_size is sized for none
        if rest:
            return Approx(out, f"{value} steps are not a whole number of steps per epoch over {epochs} epochs")
        if packed is False:
            return Approx(out, "without dyn_bsz VeOmni counts steps from the dataset, not from train_size")
        return out
