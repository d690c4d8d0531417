"""DeepSpeed's own code on a DeepSpeed JSON config (run by an interpreter with torch and deepspeed;
`DS_BUILD_OPS=0` is enough: no compiled op is loaded).

* Accepts: the file read as DeepSpeed reads a config path (hjson, duplicate keys refused), then
  `DeepSpeedConfig(config)` (the batch identity at the job's world size, every sub-config's checks).
* Run: train_batch_size, micro batch, accumulation and the data-parallel size DeepSpeedConfig
  settled on, ZeRO stage, precision, optimizer.
* Learning rate: the scheduler `DeepSpeedEngine._scheduler_from_config` builds from the file (its
  own method), on an optimizer with the file's lr, stepped once per optimizer step as the engine
  steps it; without a scheduler block, the optimizer's lr is constant. A DeepSpeed JSON holds no
  run length: the scheduler is stepped over the other file's (`steps_hint`), else its own
  `total_num_steps`. Without an optimizer block the training script's lr is unknown: the curve is
  in factors of it (`relative`).
* Parameters: a DeepSpeed config holds no architecture.

Stand-ins: `deepspeed.comm.get_rank` answers 0 and `get_world_size` the job's world size (no
process group can exist without starting that many processes; DeepSpeedConfig asks only these two
numbers: the rank for logging, the world size for the batch identity).
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

from _probe import STUBS, CannotRun, LrCurve, Result, describe, framework, main, package_version, plain, steps_to_run

PROBE = {
    "framework": "DeepSpeed",
    "checkout": None,  # an installed package
    "imports": ["torch", "deepspeed", "hjson"],
    "install": "torch (CPU wheel) and deepspeed at the release your runs use (DS_BUILD_OPS=0: no op is compiled)",
    "source": None,
}
WORLD = {"size": 8}


def load(job: dict[str, Any]) -> dict[str, Any]:
    try:
        import deepspeed
        import deepspeed.runtime.config as ds_config
    except ImportError as exc:
        raise CannotRun(f"DeepSpeed does not import with this interpreter: {describe(exc)}") from exc
    ds_config.dist.get_rank = STUBS.wrap(
        "deepspeed.comm.get_rank", "answers 0 (no process group is started)", lambda *a, **k: 0
    )
    ds_config.dist.get_world_size = STUBS.wrap(
        "deepspeed.comm.get_world_size",
        "answers the world size (--world-size): no process group is started",
        lambda *a, **k: WORLD["size"],
    )
    return {"name": "DeepSpeed", "version": deepspeed.__version__, "torch": package_version("torch")}


def probe(job: dict[str, Any], result: Result) -> None:
    import deepspeed.runtime.config as ds_config
    import hjson
    import torch

    world = WORLD["size"] = int(job.get("world_size") or 8)
    (path,) = job["files"]
    with framework(), open(path) as handle:
        document = hjson.load(handle, object_pairs_hook=ds_config.dict_raise_error_on_duplicate_keys)
    with framework():
        cfg = ds_config.DeepSpeedConfig(document)
    precision = "bf16" if cfg.bfloat16_config.enabled else "fp16" if cfg.float16_config.enabled else "fp32"
    lr = (cfg.optimizer_params or {}).get("lr")
    result["run"] = {
        "world_size": world,
        "data_parallel": plain(cfg.world_size),
        "global_batch": cfg.train_batch_size,
        "micro_batch": cfg.train_micro_batch_size_per_gpu,
        "accumulation": cfg.gradient_accumulation_steps,
        "steps": None,
        "seq_length": None,
        "tokens_per_step": None,
        "precision": precision,
        "zero_stage": plain(cfg.zero_optimization_stage),
        "tensor_parallel": None,
        "pipeline_parallel": None,
        "optimizer": cfg.optimizer_name,
    }
    result.note("a DeepSpeed config holds no run length, sequence length or architecture")
    _lr(cfg, lr, job, result, torch)


def _lr(cfg: Any, lr: Any, job: dict[str, Any], result: Result, torch: Any) -> None:
    from deepspeed.runtime.engine import DeepSpeedEngine

    params = plain(cfg.scheduler_params) or {}
    own = next(
        (params[k] for k in ("total_num_steps", "cycle_first_step_size") if isinstance(params.get(k), int)), None
    )
    if cfg.scheduler_name is None and lr is None:
        result.note("no learning rate: the file has neither an optimizer nor a scheduler block")
        return
    if job.get("steps_hint"):
        result.note(
            f"stepped over {job['steps_hint']} steps, the other file's run length (a DeepSpeed config has none)"
        )
    elif own:
        result.note(f"stepped over the scheduler's own {own} steps (a DeepSpeed config holds no run length)")
    total = steps_to_run(job.get("steps_hint") or own, {}, result, "")
    if total is None:
        result.note("no learning rate curve: no run length (neither the other file nor the scheduler gives one)")
        return
    relative = lr is None
    if relative:
        result.note("no optimizer block: the training script's lr is unknown, the curve is in factors of it")
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0 if relative else float(lr))
    scheduler = None
    if cfg.scheduler_name is not None:
        view = SimpleNamespace(scheduler_name=lambda: cfg.scheduler_name, scheduler_params=lambda: cfg.scheduler_params)
        with framework():
            scheduler = DeepSpeedEngine._scheduler_from_config(view, optimizer)
    curve = LrCurve(total, job)
    with framework():
        for step in range(total):
            curve.record(step, optimizer.param_groups[0]["lr"])  # the rate optimizer step `step` uses
            if scheduler is not None:
                scheduler.step()  # the engine, after each optimizer step
    name = f"DeepSpeed {cfg.scheduler_name}" if cfg.scheduler_name else "none (the optimizer's lr)"
    result["lr"] = curve.result(name, relative=relative)


if __name__ == "__main__":
    sys.exit(main("deepspeed", load, probe))
