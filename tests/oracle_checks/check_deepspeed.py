"""DeepSpeed's own config code on DeepSpeed JSON files: `DeepSpeedConfig`, then the LR scheduler the
engine would build from it (`DeepSpeedEngine._scheduler_from_config`, DeepSpeed's own method).

Run with an interpreter that has torch (CPU) and deepspeed (`DS_BUILD_OPS=0`). Job keys:
* `files`: one JSON file, read as DeepSpeed reads a config path (hjson, duplicate keys refused).
* `world`: the number of processes. `sequence_parallel_size` in the file divides it, as DeepSpeed
  does when no mpu is given.
* `dp`: when the run has tensor/pipeline parallelism the JSON cannot state, the data-parallel size
  a Megatron-style mpu would report (DeepSpeedConfig then takes it from the mpu).
* `set`: dotted keys -> values edited into the JSON before loading (supplying `missing` values).
* `lr_steps`: build the scheduler and step it that many times; `lr_max` is the largest learning rate
  an optimizer step used, `lr_at` the rate at the steps listed in `lr_at` (`lr_relative`: the file
  has no optimizer lr, the training script's is unknown, so these are factors of it).

What is replaced, and why it cannot change a verdict: `deepspeed.comm.get_rank` answers 0 and
`get_world_size` answers `world`. No process group can exist without starting `world` processes;
DeepSpeedConfig asks only these two numbers of it (the rank for logging, the world size for the
batch identity), and the answer is exactly what a launcher would give.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

from _protocol import framework, plain, serve, set_dotted


class DataParallelMPU:  # what Megatron's mpu answers DeepSpeedConfig
    def __init__(self, size: int) -> None:
        self.size = size

    def get_data_parallel_world_size(self) -> int:
        return self.size


def main() -> int:
    import deepspeed
    import deepspeed.runtime.config as ds_config
    import hjson
    import torch
    from deepspeed.runtime.engine import DeepSpeedEngine

    world = {"size": 8}
    ds_config.dist.get_rank = lambda *a, **k: 0
    ds_config.dist.get_world_size = lambda *a, **k: world["size"]

    def check(job: dict[str, Any]) -> dict[str, Any]:
        (path,) = job["files"]
        world["size"] = job.get("world", 8)
        with (
            framework(),
            open(path) as handle,
        ):  # as DeepSpeedConfig reads a path; a dict lets sequence_parallel_size count
            document = hjson.load(handle, object_pairs_hook=ds_config.dict_raise_error_on_duplicate_keys)
        for key, value in job.get("set", {}).items():
            set_dotted(document, key, value)
        mpu = DataParallelMPU(job["dp"]) if job.get("dp") else None
        with framework():
            cfg = ds_config.DeepSpeedConfig(document, mpu=mpu)
        values: dict[str, Any] = {
            "deepspeed": deepspeed.__version__,
            "train_batch_size": cfg.train_batch_size,
            "train_micro_batch_size_per_gpu": cfg.train_micro_batch_size_per_gpu,
            "gradient_accumulation_steps": cfg.gradient_accumulation_steps,
            "dp": cfg.world_size,
            "zero_stage": cfg.zero_optimization_stage,
            "fp16": cfg.float16_config.enabled,
            "bf16": cfg.bfloat16_config.enabled,
            "gradient_clipping": cfg.gradient_clipping,
            "optimizer": cfg.optimizer_name,
            "lr": (cfg.optimizer_params or {}).get("lr"),
            "scheduler": cfg.scheduler_name,
            "scheduler_params": plain(cfg.scheduler_params),
        }
        if cfg.scheduler_name is not None:
            # no optimizer block: the training script brings one, its lr unknown here (1.0 shows the factors)
            lr = values["lr"] if values["lr"] is not None else 1.0
            optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)
            view = SimpleNamespace(
                scheduler_name=lambda: cfg.scheduler_name, scheduler_params=lambda: cfg.scheduler_params
            )
            with framework():
                scheduler = DeepSpeedEngine._scheduler_from_config(view, optimizer)
            wanted = set(job.get("lr_at", []))
            rates: dict[str, float] = {}
            top = 0.0
            for step in range(max(job.get("lr_steps", 0), max(wanted, default=-1) + 1)):
                rate = float(optimizer.param_groups[0]["lr"])  # what optimizer step `step` uses
                top = max(top, rate)
                if step in wanted:
                    rates[str(step)] = rate
                optimizer.step()
                with framework():
                    scheduler.step()
            values["lr_max"] = top if job.get("lr_steps") else None
            values["lr_at"] = rates
            values["lr_relative"] = values["lr"] is None
        return values

    return serve(check)


if __name__ == "__main__":
    sys.exit(main())
