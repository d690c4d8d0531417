"""GPT-NeoX formulas: the batch (the lr schedule: schedule.py; gradient clipping and the precision are
rules of mappings/neox.yaml)."""

from __future__ import annotations

from typing import Any

from ...knowledge.batch_split import ranks, split, written
from ...knowledge.formula import Approx, formula
from ..deepspeed.formulas import DEEPSPEED_BATCH_KEYS


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
