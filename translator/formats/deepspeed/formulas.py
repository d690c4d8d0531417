"""DeepSpeed formulas (deepspeed/runtime/config.py, engine.py and lr_schedules.py at
deepspeedai/DeepSpeed edaa722; version boundaries from the release tags that first contain each
change): the batch and the data-parallel size. The optimizer, the fp16 and zero_optimization
blocks (DeepSpeed's also in a GPT-NeoX config) are rules of mappings/deepspeed.yaml and neox.yaml.
The LR scheduler is in schedule.py.
"""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Approx, Missing, ranks, split, written
from ...knowledge.formula import formula
from ...knowledge.formula import ranks_differ
from . import schedule  # noqa: F401  (registers deepspeed.lr_schedule)

# the config's batch keys (NeoX hands them to DeepSpeed as they are)
DEEPSPEED_BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")


def deepspeed_batch(
    tb: int | None, mb: int | None, ga: int | None, dp: int | None
) -> tuple[int | None, int | None, int | None]:
    """DeepSpeedConfig._set_batch_related_parameters, then its _batch_assertion when dp is known.

    dp is the data-parallel size (DeepSpeed's `world_size`); None when unknown, in which case only
    what needs no dp is resolved (train_batch_size or micro batch alone means GA 1).
    """
    if tb is None and mb is None:
        return None, None, ga  # DeepSpeed alone refuses this; a NeoX file beside it may hold the batch
    if tb is not None and mb is not None and ga is not None:
        pass
    elif tb is not None and mb is not None:
        ga = tb // mb // dp if dp else None
    elif tb is not None and ga is not None:
        mb = tb // dp // ga if dp else None
    elif mb is not None and ga is not None:
        tb = mb * ga * dp if dp else None
    elif tb is not None:
        ga, mb = 1, (tb // dp if dp else None)
    else:
        assert mb is not None
        ga, tb = 1, (mb * dp if dp else None)
    if not dp and tb is not None:
        _runs_at_some_world_size(tb, mb, ga)
    if dp and tb is not None and mb is not None and ga is not None:
        for name, n in (
            ("train_batch_size", tb),
            ("train_micro_batch_size_per_gpu", mb),
            ("gradient_accumulation_steps", ga),
        ):
            if n <= 0:
                raise ValueError(f"{name} resolves to {n} at data-parallel size {dp}; DeepSpeed needs it > 0")
        if tb != mb * ga * dp:
            raise ValueError(
                f"train_batch_size {tb} != micro batch {mb} x gradient_accumulation_steps {ga} x data-parallel "
                f"size {dp}: DeepSpeed's batch assertion fails at this world size"
            )
    return tb, mb, ga


def _runs_at_some_world_size(tb: int, mb: int | None, ga: int | None) -> None:
    """With no world size, _batch_assertion (tb == mb x ga x dp, after _set_batch_related_parameters'
    floor divisions) still fails at every dp unless tb is a positive multiple of the given factors:
    at dp 1 it then holds, so only a file no world size runs is refused."""
    factor = (mb or 1) * (ga or 1)
    if tb > 0 and factor > 0 and tb % factor == 0:
        return
    given = " x ".join(
        f"{name} {n}" for name, n in (("micro batch", mb), ("gradient_accumulation_steps", ga)) if n is not None
    )
    raise ValueError(
        f"train_batch_size {tb} is not a positive multiple of {given or 1}: DeepSpeed's batch assertion "
        "(train_batch_size = micro x accumulation x data-parallel size) fails at every world size"
    )


@formula("deepspeed.batch")
class DeepspeedBatch:
    """train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps as DeepSpeedConfig
    resolves them at its data-parallel size (deepspeed_batch); written at the target's own dp (world /
    tensor / pipeline / sequence) for the same global batch (knowledge/formula.py, the batch identities)."""

    @staticmethod
    def read(
        train_batch_size: int | None,
        train_micro_batch_size_per_gpu: int | None,
        gradient_accumulation_steps: int | None,
        data_parallel_size: int | None,
    ) -> dict[str, Any]:
        tb, mb, ga = deepspeed_batch(
            train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps, data_parallel_size
        )
        return {"global": tb, "micro": mb, "grad_accum": ga}

    @staticmethod
    def write(
        value: int | None,
        micro: int | None,
        grad_accum: int | None,
        world: int | None,
        tensor: int | None,
        pipeline: int | None,
        sequence: int | None,
    ) -> Any:
        dp, where = ranks(world, [("tensor", tensor), ("pipeline", pipeline), ("sequence", sequence)])
        out = written(split(value, micro, grad_accum, dp, where), DEEPSPEED_BATCH_KEYS)
        model_parallel = (tensor or 1) * (pipeline or 1)
        if model_parallel == 1 or not isinstance(out, (dict, Approx)):
            return out
        keys = out.value if isinstance(out, Approx) else out
        if keys.get("train_batch_size") is None or isinstance(keys["train_batch_size"], Missing):
            return out
        at = f"{dp} ({where})" if dp else f"world size / {model_parallel}"
        why = (
            f"train_batch_size {keys['train_batch_size']} holds at data-parallel size {at}: DeepSpeed divides "
            f"by the tensor x pipeline size {model_parallel} only when the engine hands it the model-parallel "
            "unit (deepspeed.initialize(mpu=...), as model-parallel training code does); this JSON has no model "
            "parallelism, so read alone DeepSpeed takes every GPU as data-parallel and its batch assertion fails"
        )
        if isinstance(out, Approx):
            return Approx(out.value, f"{out.detail}; {why}", tuple(dict.fromkeys((*out.fields, "batch.global"))))
        return Approx(out, why, ("batch.global",))


@formula("deepspeed.data_parallel")
class DeepspeedDataParallel:
    """DeepSpeed's world_size for the batch: the GPUs / (tensor x pipeline) of the model code's mpu, and /
    sequence_parallel_size (Ulysses) when the config gives it."""

    @staticmethod
    def read(
        world_size: int | None, tensor_size: int | None, pipeline_size: int | None, sequence_size: int | None
    ) -> int | None:
        dp, where = ranks(
            world_size, [("tensor", tensor_size), ("pipeline", pipeline_size), ("sequence", sequence_size)]
        )
        if world_size and dp is None:
            raise ValueError(f"the world size is not a multiple of the model-parallel sizes ({where})")
        return dp

    @staticmethod
    def write(
        value: int,
        world_size: int | None,
        tensor_size: int | None,
        pipeline_size: int | None,
        sequence_size: int | None,
    ) -> Any:
        return ranks_differ(
            value,
            *ranks(world_size, [("tensor", tensor_size), ("pipeline", pipeline_size), ("sequence", sequence_size)]),
        )
