"""DeepSpeed formulas (deepspeed/runtime/config.py, engine.py and lr_schedules.py at
deepspeedai/DeepSpeed edaa722; version boundaries from the release tags that first contain each
change): the batch, the data-parallel size and the optimizer. The fp16 and zero_optimization
blocks, DeepSpeed's also in a GPT-NeoX config, are rules of mappings/deepspeed.yaml and neox.yaml.
The LR scheduler is in schedule.py.
"""

from __future__ import annotations

from typing import Any

from ...batch_split import ranks, split, written
from ...formula import Approx, Extension, Unexpressible, formula
from ...formulas_common import ranks_differ
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
    if dp and tb is not None and mb is not None and ga is not None:
        for name, n in (("train_batch_size", tb), ("train_micro_batch_size_per_gpu", mb), ("gradient_accumulation_steps", ga)):
            if n <= 0:
                raise ValueError(f"{name} resolves to {n} at data-parallel size {dp}; DeepSpeed needs it > 0")
        if tb != mb * ga * dp:
            raise ValueError(
                f"train_batch_size {tb} != micro batch {mb} x gradient_accumulation_steps {ga} x data-parallel "
                f"size {dp}: DeepSpeed's batch assertion fails at this world size"
            )
    return tb, mb, ga


@formula("deepspeed.batch")
class DeepspeedBatch:
    """train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps as DeepSpeedConfig
    resolves them at its data-parallel size (deepspeed_batch); written at the target's own dp (world /
    tensor / pipeline / sequence) for the same global batch (batch_split.py)."""

    @staticmethod
    def read(train_batch_size: int | None, train_micro_batch_size_per_gpu: int | None,
             gradient_accumulation_steps: int | None, data_parallel_size: int | None) -> dict[str, Any]:  # fmt: skip
        tb, mb, ga = deepspeed_batch(train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps,
                                     data_parallel_size)  # fmt: skip
        return {"global": tb, "micro": mb, "grad_accum": ga}

    @staticmethod
    def write(value: int | None, micro: int | None, grad_accum: int | None, world: int | None, tensor: int | None,
              pipeline: int | None, sequence: int | None) -> Any:  # fmt: skip
        dp, where = ranks(world, [("tensor", tensor), ("pipeline", pipeline), ("sequence", sequence)])
        return written(split(value, micro, grad_accum, dp, where), DEEPSPEED_BATCH_KEYS)


@formula("deepspeed.data_parallel")
class DeepspeedDataParallel:
    """DeepSpeed's world_size for the batch: the GPUs / (tensor x pipeline) of the model code's mpu, and /
    sequence_parallel_size (Ulysses) when the config gives it."""

    @staticmethod
    def read(world_size: int | None, tensor_size: int | None, pipeline_size: int | None, sequence_size: int | None) -> int | None:
        dp, where = ranks(world_size, [("tensor", tensor_size), ("pipeline", pipeline_size), ("sequence", sequence_size)])
        if world_size and dp is None:
            raise ValueError(f"the world size is not a multiple of the model-parallel sizes ({where})")
        return dp

    @staticmethod
    def write(value: int, world_size: int | None, tensor_size: int | None, pipeline_size: int | None,
              sequence_size: int | None) -> Any:  # fmt: skip
        return ranks_differ(value, *ranks(world_size, [("tensor", tensor_size), ("pipeline", pipeline_size),
                                                      ("sequence", sequence_size)]))  # fmt: skip


# DeepSpeed's own optimizers, compared lower-case (config.py DEEPSPEED_OPTIMIZERS); "adam" is decoupled
# (AdamW) unless params.adam_w_mode is false (engine._configure_basic_optimizer, ADAM_W_MODE_DEFAULT).
_DS_OPTIMIZERS = {
    "adamw": "adamw", "onebitadam": "onebitadam", "zerooneadam": "zerooneadam", "lamb": "lamb",
    "onebitlamb": "onebitlamb", "lion": "lion", "adagrad": "adagrad", "muon": "muon",
}  # fmt: skip
_DS_MUP = {"muadam": "adam", "muadamw": "adamw", "musgd": "sgd"}  # mup wraps torch Adam / AdamW / SGD
# Any other name is getattr(torch.optim, name): case-sensitive. None: no canonical optimizer.
_TORCH_OPTIMIZERS: dict[str, str | None] = {
    "SGD": "sgd", "Adafactor": "adafactor", "ASGD": None, "Adadelta": None, "Adamax": None, "LBFGS": None,
    "NAdam": None, "RAdam": None, "RMSprop": None, "Rprop": None, "SparseAdam": None,
}  # fmt: skip
_DS_OPTIMIZER_NAMES = {
    "adamw": "AdamW", "sgd": "SGD", "lamb": "Lamb", "lion": "Lion", "onebitadam": "OneBitAdam",
    "zerooneadam": "ZeroOneAdam", "onebitlamb": "OneBitLamb", "adagrad": "Adagrad", "adafactor": "Adafactor",
    "muon": "Muon",
}  # fmt: skip


@formula("deepspeed.optimizer")
class DeepspeedOptimizer:
    """optimizer.type (+ params.adam_w_mode) <-> canonical optimizer; DeepSpeed "Adam" is AdamW by default."""

    @staticmethod
    def read(optimizer_type: Any, optimizer_params_adam_w_mode: Any, optimizer_params_weight_decay: Any = None) -> Any:
        if optimizer_type is None:
            return None
        if not isinstance(optimizer_type, str):
            raise ValueError(f"optimizer.type must be a name, got {optimizer_type!r}")
        low = optimizer_type.lower()
        if low == "adam":  # coupled Adam without weight decay is AdamW (FusedAdam's default is 0)
            coupled = optimizer_params_adam_w_mode is False and bool(optimizer_params_weight_decay)
            return "adam" if coupled else "adamw"
        if low in _DS_OPTIMIZERS:
            return _DS_OPTIMIZERS[low]
        if low in _DS_MUP:
            return Approx(_DS_MUP[low], f"{optimizer_type} is muP's {_DS_MUP[low]}: its per-layer lr scaling is not carried")
        if optimizer_type in _TORCH_OPTIMIZERS:
            canonical = _TORCH_OPTIMIZERS[optimizer_type]
            return canonical or Extension(f"torch.optim.{optimizer_type} has no canonical optimizer")
        raise ValueError(
            f"unknown optimizer type {optimizer_type!r}: DeepSpeed takes Adam, AdamW, Lamb, Lion, OneBitAdam, "
            "ZeroOneAdam, OneBitLamb, Adagrad, Muon (any case) or a torch.optim class name (exact case)"
        )

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        if value == "adam":  # coupled L2 weight decay: DeepSpeed's Adam with AdamW mode off
            return {"optimizer_type": "Adam", "optimizer_params_adam_w_mode": False}
        if value not in _DS_OPTIMIZER_NAMES:
            raise Unexpressible(f"optimizer {value!r} has no DeepSpeed counterpart")
        return {"optimizer_type": _DS_OPTIMIZER_NAMES[value]}
