"""GPT-NeoX formulas: gradient clipping and batch (the lr schedule: schedule.py; the precision is a
`cases` rule of mappings/neox.yaml)."""

from __future__ import annotations

from typing import Any

from ...batch_split import ranks, split, written
from ...formula import Approx, formula
from ..deepspeed.formulas import DEEPSPEED_BATCH_KEYS


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


@formula("neox.batch")
class NeoxBatch:
    """train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps (default 1, not
    None: NeoX's trap) at dp = global_num_gpus / (pipe x model parallel), checked as NeoX checks them;
    written at NeoX's own dp for the same global batch (batch_split.py)."""

    @staticmethod
    def read(train_batch_size: int | None, train_micro_batch_size_per_gpu: int | None,
             gradient_accumulation_steps: int | None, data_parallel_size: int | None) -> dict[str, Any]:  # fmt: skip
        tb, mb, ga, dp = train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps, data_parallel_size
        if tb is None and mb is None:  # NeoX refuses it alone; the file that holds the batch is merged with it
            return {}
        # calculate_batch_parameters: the one missing value derived (accumulation only when written null)
        if ga is None and tb and mb and dp:
            ga = tb // mb // dp
        if tb is not None and mb is None and dp:
            mb = tb // dp // (ga or 1)
        if tb is None and mb and dp and ga is not None:
            tb = mb * ga * dp
        # check_batch_parameters: NeoX asserts the identity
        if tb is not None and mb and dp and ga is not None and tb != mb * ga * dp:
            raise ValueError(f"train_batch_size {tb} != micro {mb} x grad_accum {ga} x data-parallel size {dp}")
        return {"global": tb, "micro": mb, "grad_accum": ga}

    @staticmethod
    def write(value: int | None, micro: int | None, grad_accum: int | None, world: int | None, tensor: int | None,
              pipeline: int | None) -> Any:  # fmt: skip
        dp, where = ranks(world, [("model parallel", tensor), ("pipe parallel", pipeline)])
        return written(split(value, micro, grad_accum, dp, where), DEEPSPEED_BATCH_KEYS)
