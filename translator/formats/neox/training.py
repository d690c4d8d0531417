"""GPT-NeoX formulas: batch and precision (the lr schedule: schedule.py)."""

from __future__ import annotations

from typing import Any

from ...batch_split import ranks, split, written
from ...formula import Approx, formula
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
