"""GPT-NeoX formulas: optimizer, schedule, batch, precision and checkpoint settings."""

from __future__ import annotations

import math
from typing import Any

from ...formula import Approx, Extension, Unexpressible, formula
from ...formulas_common import first_step_gap


@formula("neox.grad_clip")
class NeoxGradClip:
    """NeoX forwards gradient_clipping to DeepSpeed only when it differs from NeoX's default 1.0."""

    TRAP = (
        "NeoX only passes gradient_clipping to DeepSpeed when it is not 1.0; its pinned DeeperSpeed "
        "then defaults to 0.0, so the NeoX run had no clipping at all. Kept 1.0 as written; "
        "give --set optim.grad_clip=0 to reproduce the run exactly"
    )

    @staticmethod
    def read(gradient_clipping: float | None, deepspeed_extra_args_gradient_clipping: float | None = None) -> Any:
        if deepspeed_extra_args_gradient_clipping is not None:  # merged last: DeepSpeed gets exactly this
            return float(deepspeed_extra_args_gradient_clipping)
        if gradient_clipping is None:
            return None
        if float(gradient_clipping) == 1.0:
            return Approx(float(gradient_clipping), NeoxGradClip.TRAP)
        return float(gradient_clipping)

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        if float(value) == 1.0:  # the only place NeoX forwards a clip of 1.0 from
            return {"deepspeed_extra_args_gradient_clipping": 1.0}
        return {"gradient_clipping": float(value)}


@formula("neox.schedule_steps")
class NeoxScheduleSteps:
    """N = lr_decay_iters, else floor(train_iters*lr_decay_fraction), else train_iters; warmup = warmup*N."""

    @staticmethod
    def read(
        warmup: float | None, lr_decay_iters: int | None, lr_decay_fraction: float | None, steps: int | None,
        decay_style: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        if lr_decay_iters is not None:
            decay = int(lr_decay_iters)
        elif lr_decay_fraction is not None and steps is not None:
            decay = math.floor(steps * lr_decay_fraction)
        elif steps is not None:
            decay = steps
        else:
            return {"warmup_steps": 0.0} if not warmup else {}
        decay = max(1, decay)
        if decay_style == "constant":  # the decay span only measures the warmup: no decay to end
            return {"warmup_steps": (warmup or 0.0) * decay}
        return {"warmup_steps": (warmup or 0.0) * decay, "decay_steps": decay}

    @staticmethod
    def write(warmup_steps: float | None, decay_steps: int | None, steps: int | None) -> Any:
        if not decay_steps:
            # no decay span (a constant lr): NeoX measures warmup against train_iters, and its
            # default warmup is 0.01, so even no warmup is stated
            if warmup_steps is None:
                return {}
            if not warmup_steps:
                return {"warmup": 0.0}
            if steps:
                return {"warmup": warmup_steps / steps}
            return Approx({}, f"a warmup of {warmup_steps:g} steps needs train_iters in NeoX: give --set train.steps=N")
        out: dict[str, Any] = {"lr_decay_iters": decay_steps}
        if warmup_steps is not None:
            out["warmup"] = warmup_steps / decay_steps
        return out


@formula("neox.min_lr")
class NeoxMinLr:
    """min_lr: the floor AnnealingLR clamps a decay at; with lr_decay_style constant the lr never
    goes below the peak, so it has no effect (and no canonical value)."""

    @staticmethod
    def read(min_lr: float | None, decay_style: str | None) -> Any:
        if decay_style == "constant":
            return Extension(f"min_lr {min_lr or 0.0:g} has no effect: the lr is constant after the warmup (lr_decay_style constant)")
        return min_lr

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        return {"min_lr": value}


@formula("neox.pipeline_size")
class NeoxPipelineSize:
    """pipe_parallel_size: 0 (the default, no PipelineModule) and 1 (a PipelineModule of one stage)
    both run the model in one stage: canonical 1. More stages are written as given."""

    @staticmethod
    def read(pipe_parallel_size: int | None) -> int | None:
        return None if pipe_parallel_size is None else max(1, pipe_parallel_size)

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"pipe_parallel_size": value} if value > 1 else {}


@formula("neox.global_batch")
class NeoxGlobalBatch:
    """train_batch_size, else micro x grad_accum x data-parallel size (needs the world size)."""

    @staticmethod
    def read(
        train_batch_size: int | None, micro: int | None, grad_accum: int | None, data_parallel_size: int | None
    ) -> int | None:
        if train_batch_size is not None:
            if micro and data_parallel_size and train_batch_size != micro * (grad_accum or 1) * data_parallel_size:
                raise ValueError(
                    f"train_batch_size {train_batch_size} != micro {micro} x grad_accum {grad_accum or 1} "
                    f"x data-parallel size {data_parallel_size}"
                )
            return int(train_batch_size)
        if micro and data_parallel_size:
            return micro * (grad_accum or 1) * data_parallel_size
        return None

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"train_batch_size": value}


@formula("neox.precision")
class NeoxPrecision:
    """What NeoX trains in: `precision`, else the fp16/bf16 blocks; fp16.type=bfloat16 is DeeperSpeed bf16."""

    NAMES = {"fp16": "fp16", "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "bf16": "bf16", "fp32": "fp32"}

    @staticmethod
    def read(
        precision: str | None,
        fp16_enabled: Any,
        fp16_type: str | None,
        fp16_fp16: Any,
        bf16_enabled: Any,
    ) -> Any:
        if precision is not None:
            name = NeoxPrecision.NAMES.get(str(precision).lower())
            if name is None:
                raise ValueError(f"unknown precision {precision!r}; expected fp16, bfloat16 or fp32")
            return name
        if fp16_enabled is True or (fp16_enabled is None and fp16_fp16 is True):
            if fp16_type is not None and str(fp16_type).lower() in ("bfloat16", "bf16"):
                return Approx(
                    "bf16",
                    "fp16.type=bfloat16 is a DeeperSpeed (2021) extension: that run trained in bf16, "
                    "but current NeoX/DeepSpeed ignore `type` and would train in fp16",
                )
            return "fp16"
        if bf16_enabled is True:
            return "bf16"
        return "fp32"

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        if value == "fp16":
            return {"precision": "fp16", "fp16_enabled": True}
        if value in ("bf16", "cbf16"):
            out: dict[str, Any] = {"precision": "bfloat16", "bf16_enabled": True}
            if value == "cbf16":
                out["bf16_enabled"] = Approx(True, "Cerebras cbfloat16 has no GPU counterpart; wrote bf16")
            return out
        return {"precision": "fp32"}


@formula("neox.save")
class NeoxSave:
    """NeoX `save` needs a checkpoint interval (validate_values refuses save without checkpoint_factor)."""

    @staticmethod
    def read(save: str | None) -> str | None:
        return save

    @staticmethod
    def write(value: str, interval: int | None) -> Any:
        if interval == 0:  # no periodic checkpoints: a NeoX run without `save` saves none either (the rule's note)
            return {}
        if interval is None:
            return Approx({}, f"save: {value} not written: NeoX refuses `save` without checkpoint_factor; "
                              "give --set checkpoint.interval=N")  # fmt: skip
        return {"save": value}


@formula("neox.checkpoint_factor")
class NeoxCheckpointFactor:
    """checkpoint_factor (linear checkpoint_scale: every N steps). 0 (no periodic checkpoints) is no
    checkpoint_factor in NeoX: its save_iters would be range(0, train_iters, 0)."""

    @staticmethod
    def read(checkpoint_factor: int | None) -> int | None:
        return checkpoint_factor

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {} if value == 0 else {"checkpoint_factor": value}


@formula("neox.optimizer_type")
class NeoxOptimizerType:
    """NeoX optimizer.type (a case-insensitive Literal, neox_args.py) <-> canonical optimizer.

    NeoX's "Adam" is FusedAdam with adam_w_mode=True (decoupled weight decay). NeoX has no coupled
    Adam and no AdaFactor/Lamb/...: they become "Adam" so the config loads (NeoX exits without an
    optimizer), reported lossy; coupled Adam without weight decay is the same algorithm.
    """

    NAMES = {"adam": "adamw", "cpu_adam": "adamw", "cpu_torch_adam": "adamw", "onebitadam": "onebitadam", "sgd": "sgd",
             "lion": "lion", "sm3": "sm3", "madgrad_wd": "madgrad_wd"}  # fmt: skip
    WRITE = {"adamw": "Adam", "onebitadam": "onebitadam", "sgd": "sgd", "lion": "lion"}

    @staticmethod
    def read(optimizer_type: str | None) -> Any:
        if optimizer_type is None:
            return None
        name = NeoxOptimizerType.NAMES.get(str(optimizer_type).lower())
        if name is None:
            raise ValueError(f"unknown optimizer type {optimizer_type!r}; NeoX accepts {', '.join(NeoxOptimizerType.NAMES)}")
        if name in ("sm3", "madgrad_wd"):
            return Extension(f"NeoX optimizer {optimizer_type} has no counterpart elsewhere")
        return name

    @staticmethod
    def write(value: str, weight_decay: float | None) -> Any:
        if value in NeoxOptimizerType.WRITE:
            return {"optimizer_type": NeoxOptimizerType.WRITE[value]}
        if value == "adam" and not weight_decay:
            return {"optimizer_type": "Adam"}  # without weight decay Adam and AdamW are one algorithm
        why = ("adds weight decay to the gradient (L2); NeoX's Adam decouples it (AdamW)" if value == "adam"
               else "is not a NeoX optimizer")  # fmt: skip
        return {"optimizer_type": Approx("Adam", f"{value} {why}: wrote NeoX's Adam so the config loads; choose a NeoX optimizer")}


def unclamped_warmup_loss(start: float | None, lr: float | None, warmup_steps: float | None) -> str:
    return (f"GPT-NeoX gives the first warmup step {first_step_gap(lr, warmup_steps)}, not the source's "
            f"warmup start {start or 0.0:g} (lr x max(1, t) / W; the other steps agree)")  # fmt: skip


@formula("neox.warmup_type")
class NeoxWarmupType:
    """NeoX's AnnealingLR warms up as peak * max(1, t) / W (learning_rates.py): linear_clamped."""

    @staticmethod
    def read(warmup_steps: float | None) -> str | None:
        return "linear_clamped" if warmup_steps else None

    @staticmethod
    def write(value: str, warmup_steps: float | None, lr: float | None, warmup_start_lr: float | None) -> Any:
        if value == "linear":
            return Approx({}, unclamped_warmup_loss(warmup_start_lr, lr, warmup_steps), ("schedule.warmup_type",))
        if value != "linear_clamped":
            raise Unexpressible(f"a {value} warmup: GPT-NeoX only warms up linearly")
        return {}


@formula("neox.warmup_from_zero")
class WarmupFromZero:
    """NeoX's warmup starts at (about) zero: lr * max(1, n) / warmup_iters."""

    @staticmethod
    def read() -> float:
        return 0.0

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        if value:
            raise Unexpressible(f"a warmup starting at {value:g}: NeoX's warmup starts at lr / warmup_iters")
        return {}
