"""The HF Trainer's formulas (registered as `hftrainer.*`): the batch (here) and the learning-rate schedule
(schedule.py)."""

from __future__ import annotations

import math
from typing import Any

from ...knowledge.formula import ranks, split, written
from ...knowledge.formula import Approx, Extension, Missing, Unrunnable, formula
from .schedule import STEPS_GIVEN  # (and registers hftrainer.lr_schedule)
from .scheduler import version_tuple

DEFAULT_MICRO, DEFAULT_ACCUM = 8, 1  # TrainingArguments' per_device_train_batch_size, gradient_accumulation_steps
CEIL_UPDATES = (4, 57)  # a partial last accumulation counts as an update of the epoch (4.51.3 floors, 4.57.1 ceils)


@formula("hftrainer.batch")
class TrainerBatch:
    """per_device_train_batch_size x gradient_accumulation_steps x world size = the global batch
    (trainer_config_process's train_batch_size; the DeepSpeed config's three batch keys hold the same values,
    "auto" or checked equal by the reader). Without a world size, a DeepSpeed train_batch_size stated as a
    number is the global batch."""

    @staticmethod
    def read(
        per_device_train_batch_size: Any,
        gradient_accumulation_steps: Any,
        deepspeed_train_batch_size: Any,
        deepspeed_train_micro_batch_size_per_gpu: Any,
        deepspeed_gradient_accumulation_steps: Any,
        world: int | None,
    ) -> dict[str, Any]:
        micro = DEFAULT_MICRO if per_device_train_batch_size is None else int(per_device_train_batch_size)
        accum = DEFAULT_ACCUM if gradient_accumulation_steps is None else int(gradient_accumulation_steps)
        for arg, value, given in (
            ("per_device_train_batch_size", micro, per_device_train_batch_size),
            ("gradient_accumulation_steps", accum, gradient_accumulation_steps),
        ):
            if value < 1:  # the Trainer's dataloader and step count need both at least 1
                raise Unrunnable(f"must be at least 1, got {given!r} (fix the value)", arg=arg)
        total = micro * accum * world if world else None
        stated = deepspeed_train_batch_size if isinstance(deepspeed_train_batch_size, int) else None
        if stated is not None and total is not None and stated != total:
            raise ValueError(
                f"the DeepSpeed config's train_batch_size {stated} is not world {world} x "
                f"per_device_train_batch_size {micro} x gradient_accumulation_steps {accum} = {total}: "
                "transformers refuses the mismatch"
            )
        if stated is not None and total is None:
            if stated % (micro * accum):
                raise ValueError(
                    f"the DeepSpeed config's train_batch_size {stated} is not a multiple of "
                    f"per_device_train_batch_size {micro} x gradient_accumulation_steps {accum}"
                )
            total = stated
        return {"global": total, "micro": micro, "grad_accum": accum}

    @staticmethod
    def write(value: int | None, micro: int | None, grad_accum: int | None, world: int | None) -> Any:
        dp, where = ranks(world, [])
        done = split(value, micro, grad_accum, dp, where)
        if not isinstance(done, str) and done.micro is None:  # TrainingArguments would default it to 8 silently
            return {
                "per_device_train_batch_size": Missing(
                    "the micro batch per GPU: give --set batch.micro=N, or --world-size so the global batch splits"
                )
            }
        keys = _twins(
            written(done, ("deepspeed_train_batch_size", "per_device_train_batch_size", "gradient_accumulation_steps"))
        )
        inner = keys.value if isinstance(keys, Approx) else keys
        total, accum = inner.get("deepspeed_train_batch_size"), inner.get("gradient_accumulation_steps")
        if dp is None and isinstance(total, int) and accum is None and done.micro != total:  # type: ignore[union-attr]
            # without the world size the accumulation is unknown, and the Trainer's default 1 would hold only on
            # total / micro GPUs (trainer_config_process checks train_batch_size = world x micro x accumulation)
            inner["gradient_accumulation_steps"] = Missing(
                f"the Trainer's global batch is world size x per_device_train_batch_size x gradient_accumulation_steps: "
                f"give --world-size N (the GPUs it runs on) to derive the accumulation for the global batch {total}, "
                f"or --set batch.grad_accum=N"
            )
        return keys


def _twins(keys: Any) -> Any:
    """The DeepSpeed config states what the Trainer does (concrete values: the Trainer checks them)."""
    inner = keys.value if isinstance(keys, Approx) else keys
    if "per_device_train_batch_size" in inner:
        inner["deepspeed_train_micro_batch_size_per_gpu"] = inner["per_device_train_batch_size"]
        inner["deepspeed_gradient_accumulation_steps"] = inner["gradient_accumulation_steps"]
    if inner.get("deepspeed_train_batch_size") is None:
        inner.pop("deepspeed_train_batch_size", None)  # unknown world size: DeepSpeed derives it
    return keys


@formula("hftrainer.twin")
class TrainerTwin:
    """A TrainingArguments field and the DeepSpeed key transformers fills from it (or checks against it): one value
    (the reader filled an "auto" and refused a mismatch), written to both."""

    @staticmethod
    def read(max_grad_norm: Any, deepspeed_gradient_clipping: Any) -> Any:
        return 1.0 if max_grad_norm is None else float(max_grad_norm)

    @staticmethod
    def write(value: Any) -> dict[str, Any]:
        return {"max_grad_norm": value, "deepspeed_gradient_clipping": value}


def _one(field: str, value: Any, stated: Any, default: Any) -> Any:
    """A TrainingArguments field the DeepSpeed optimizer block states too (filled from it, or checked equal)."""
    return default if value is None else value


@formula("hftrainer.eps")
class TrainerEps:
    """adam_epsilon, and the DeepSpeed optimizer's eps filled from it; written to the TrainingArguments only (the
    Trainer's optimizer runs when the DeepSpeed config written has no optimizer block)."""

    @staticmethod
    def read(adam_epsilon: Any, deepspeed_optimizer_params_eps: Any) -> Any:
        return _one("adam_epsilon", adam_epsilon, deepspeed_optimizer_params_eps, 1e-8)

    @staticmethod
    def write(value: Any) -> dict[str, Any]:
        return {"adam_epsilon": value}


@formula("hftrainer.weight_decay")
class TrainerWeightDecay:
    """weight_decay, and the DeepSpeed optimizer's weight_decay filled from it (see hftrainer.eps)."""

    @staticmethod
    def read(weight_decay: Any, deepspeed_optimizer_params_weight_decay: Any) -> Any:
        return _one("weight_decay", weight_decay, deepspeed_optimizer_params_weight_decay, 0.0)

    @staticmethod
    def write(value: Any) -> dict[str, Any]:
        return {"weight_decay": value}


@formula("hftrainer.betas")
class TrainerBetas:
    """adam_beta1 and adam_beta2, and the DeepSpeed optimizer's betas filled from them (see hftrainer.eps)."""

    @staticmethod
    def read(adam_beta1: Any, adam_beta2: Any, deepspeed_optimizer_params_betas: Any) -> Any:
        return [0.9 if adam_beta1 is None else adam_beta1, 0.999 if adam_beta2 is None else adam_beta2]

    @staticmethod
    def write(value: Any) -> dict[str, Any]:
        return {"adam_beta1": value[0], "adam_beta2": value[1]}


@formula("hftrainer.steps")
class TrainerSteps:
    """The run's optimizer steps: max_steps when above 0; else num_train_epochs (default 3) x the update steps of
    an epoch, which the dataset's size gives (train.epoch_samples, the world size and the batch), as
    Trainer.set_initial_training_values computes them: accelerate shards the dataloader's batches over the
    processes (BatchSamplerShard, even_batches: ceil(batches / world), or floor with dataloader_drop_last), an
    epoch has max(batches // accumulation, 1) updates (4.57 on: a partial last accumulation counts, ceil), and
    max_steps = ceil(num_train_epochs x updates)."""

    @staticmethod
    def read(
        max_steps: Any,
        num_train_epochs: Any,
        dataloader_drop_last: Any,
        samples: int | None,
        world: int | None,
        micro: int | None,
        accum: int | None,
        version: str | None = None,
    ) -> Any:
        if max_steps is not None and not (isinstance(max_steps, (int, float)) and not isinstance(max_steps, bool)):
            raise ValueError(f"max_steps must be a whole number of steps, got {max_steps!r}")
        if max_steps is not None and max_steps > 0:
            if not float(max_steps).is_integer():
                raise ValueError(f"max_steps {max_steps!r} is not a whole number of steps")
            return int(max_steps)
        if samples is None or world is None:
            return None  # the reader names the --set that gives them (source meta "unsupplied")
        epochs = 3.0 if num_train_epochs is None else float(num_train_epochs)
        if epochs <= 0:
            return None
        return epoch_steps(
            samples,
            world,
            DEFAULT_MICRO if micro is None else micro,
            DEFAULT_ACCUM if accum is None else accum,
            epochs,
            bool(dataloader_drop_last),
            version,
        )

    @staticmethod
    def write(value: Any) -> dict[str, Any]:
        return {"max_steps": value}


def epoch_steps(
    samples: int, world: int, micro: int, accum: int, epochs: float, drop_last: bool, version: str | None
) -> int:
    """Trainer.set_initial_training_values' max_steps for an epoch-based run (see hftrainer.steps)."""
    batches = samples // micro if drop_last else -(-samples // micro)
    per_rank = batches // world if drop_last or batches % world == 0 else batches // world + 1
    updates = per_rank // accum + (int(per_rank % accum > 0) if version_tuple(version) >= CEIL_UPDATES else 0)
    return math.ceil(epochs * max(updates, 1))


@formula("hftrainer.epochs")
class TrainerEpochs:
    """num_train_epochs: the run's length when max_steps is not above 0 and the dataset's size is not known (with it,
    or with train.steps given, the epochs are counted in train.steps: hftrainer.steps)."""

    @staticmethod
    def read(num_train_epochs: Any, max_steps: Any, steps: int | None) -> Any:
        if num_train_epochs is None or (isinstance(max_steps, (int, float)) and max_steps > 0):
            return None  # max_steps > 0: the Trainer ignores num_train_epochs (the reader's note says so)
        value = float(num_train_epochs)
        if steps is not None:
            return Extension(
                f"num_train_epochs {value:g} is counted in the run's {steps} steps (train.steps: the "
                "Trainer's num_train_epochs x the update steps of an epoch)"
            )
        if value.is_integer():
            return int(value)
        return Extension(
            f"num_train_epochs {value:g} is a fraction of an epoch: the Trainer runs ceil({value:g} x the "
            f"update steps of an epoch), which the dataset's size decides ({STEPS_GIVEN})"
        )

    @staticmethod
    def write(value: Any) -> dict[str, Any]:
        return {"num_train_epochs": value}


def _interval(key: str, value: Any, steps: int | None) -> Any:
    """logging_steps / save_steps / eval_steps: below 1 a ratio of the run's steps, ceil(max_steps x ratio)
    (Trainer._inner_training_loop), whole steps otherwise."""
    if value is None or value >= 1 or value == 0:
        return value
    if steps is None:
        return Extension(
            f"{key} {value:g} is a ratio of the run's steps (the Trainer runs ceil(total steps x {value:g})): "
            f"{STEPS_GIVEN} to carry it"
        )
    return math.ceil(steps * value)


@formula("hftrainer.logging_steps")
class TrainerLoggingSteps:
    @staticmethod
    def read(logging_steps: Any, steps: int | None) -> Any:
        return _interval("logging_steps", logging_steps, steps)

    @staticmethod
    def write(value: Any) -> dict[str, Any]:
        return {"logging_steps": value}


@formula("hftrainer.save_steps")
class TrainerSaveSteps:
    @staticmethod
    def read(save_steps: Any, steps: int | None) -> Any:
        return _interval("save_steps", save_steps, steps)

    @staticmethod
    def write(value: Any) -> dict[str, Any]:
        return {"save_steps": value}


@formula("hftrainer.eval_steps")
class TrainerEvalSteps:
    @staticmethod
    def read(eval_steps: Any, steps: int | None) -> Any:
        return _interval("eval_steps", eval_steps, steps)

    @staticmethod
    def write(value: Any) -> dict[str, Any]:
        return {"eval_steps": value}
