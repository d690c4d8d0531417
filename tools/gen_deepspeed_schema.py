#!/usr/bin/env python3
"""Generate schemas/deepspeed.schema.json, the JSON Schema of DeepSpeed JSON configs.

The DeepSpeed sub-blocks (optimizer, scheduler, fp16, bf16, amp, zero_optimization, monitors, ...)
are the ones tools/gen_neox_schema.py researched for the DeepSpeed part of NeoX configs; this
tool adds the top-level keys NeoX does not list and the blocks it leaves out (aio, pipeline,
compile, torch_autocast, ...). Facts (names, types, defaults) come from DeepSpeed's
deepspeed/runtime/constants.py, config.py, precision_config.py, swap_tensor/aio_config.py,
compile/config.py and the monitor/elasticity/autotuning configs at deepspeedai/DeepSpeed edaa722.

Every top-level key carries an `x-group`; mappings/deepspeed.yaml says per group why a key that
has no canonical field is not carried to another framework. Defaults that differ between
DeepSpeed releases are in `x-defaults` (version -> default), the version names being those of
mappings/deepspeed.yaml.

The output is deterministic (sorted keys, fixed indentation, trailing newline) so a test can
regenerate it and compare byte for byte (see --check). It reads nothing outside the repository:
the facts live in this file and in tools/gen_neox_schema.py.

Usage:
  python tools/gen_deepspeed_schema.py [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, Final

from schema_output import render, write_or_check  # tools/ is on sys.path when run as a script

JSON = Any  # a value that json.dumps accepts

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT: Final = REPO_ROOT / "schemas" / "deepspeed.schema.json"
VERSIONS: Final = ("current", "0.19.2", "0.17.1")  # as in mappings/deepspeed.yaml, newest first


def _neox_generator() -> Any:
    """tools/gen_neox_schema.py as a module: its deepspeed_blocks() are shared, not copied."""
    path = Path(__file__).resolve().parent / "gen_neox_schema.py"
    spec = importlib.util.spec_from_file_location("gen_neox_schema", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_neox_schema", module)
    spec.loader.exec_module(module)
    return module


NEOX = _neox_generator()
_prop, _block = NEOX._prop, NEOX._block


def _open(title: str) -> dict[str, JSON]:
    """A block whose inside we do not list: any key below it is known (DeepSpeed validates it)."""
    return {"type": ["object", "null"], "additionalProperties": True, "title": title}


def extra_blocks() -> dict[str, dict[str, JSON]]:
    """Blocks NeoX's schema does not describe."""
    return {
        "aio": _block(
            {
                "block_size": _prop("integer", 1048576, minimum=0),
                "queue_depth": _prop("integer", 8, minimum=0),
                "intra_op_parallelism": _prop("integer", 1, minimum=1),
                "thread_count": _prop("integer", 1, minimum=1),  # older name of intra_op_parallelism
                "single_submit": _prop("boolean", False),
                "overlap_events": _prop("boolean", True),
                "use_gds": _prop("boolean", False),
            },
            nullable=True,
        ),
        "pipeline": _block(
            {
                "stages": _prop(["integer", "string"], "auto"),
                "partition": _prop("string", "best"),
                "seed_layers": _prop("boolean", False),
                "activation_checkpoint_interval": _prop("integer", 0),
                "pipe_partitioned": _prop("boolean", True),
                "grad_partitioned": _prop("boolean", True),
            },
            nullable=True,
        ),
        "compile": _block(
            {
                "deepcompile": _prop("boolean", False),
                "free_activation": _prop("boolean", False),
                "offload_activation": _prop("boolean", False),
                "offload_opt_states": _prop("boolean", False),
                "offload_parameters": _prop("boolean", False),
                "double_buffer": _prop("boolean", True),
                "symmetric_memory": _prop("boolean", False),
                "debug_log": _prop("boolean", False),
                "passes": _prop(["array", "null"], None),
            },
            nullable=True,
        ),
        "torch_autocast": _block(
            {
                "enabled": _prop("boolean", False),
                "dtype": _prop(["string", "null"], None, examples=["bfloat16", "float16"]),
                "lower_precision_safe_modules": _prop(["array", "null"], None, items={"type": "string"}),
            },
            nullable=True,
        ),
        "progressive_layer_drop": _block(
            {"enabled": _prop("boolean", False), "theta": _prop("number", 1.0), "gamma": _prop("number", 0.001)},
            nullable=True,
        ),
        "eigenvalue": _block(
            {
                "enabled": _prop("boolean", False),
                "verbose": _prop("boolean", False),
                "max_iter": _prop("integer", 100),
                "tol": _prop("number", 0.01),
                "stability": _prop("number", 1e-06),
                "gas_boundary_resolution": _prop("integer", 1),
                "layer_name": _prop("string", "bert.encoder.layer"),
                "layer_num": _prop("integer", 0),
            },
            nullable=True,
        ),
        "comet": _open("Comet ML monitor"),
        "elasticity": _open("elastic training: batch sizes valid across GPU counts"),
        "autotuning": _open("DeepSpeed autotuner settings"),
        "compression_training": _open("quantisation/pruning-aware training"),
        "quantize_training": _open("Mixture-of-Quantization (MoQ)"),
        "data_efficiency": _open("data sampling and routing (curriculum, random-LTD)"),
        "curriculum_learning": _open("legacy curriculum learning"),
        "hybrid_engine": _open("RLHF hybrid inference/training engine"),
        "weight_quantization": _open("inference weight quantisation"),
        "nebula": _open("Azure Nebula checkpoint service"),
        "datastates": _open("DataStates asynchronous checkpointing"),
        "tensor_parallel": _open("automatic tensor parallelism (AutoTP)"),
        "expert_parallel": _open("automatic expert parallelism"),
        "timers": _open("engine timers"),
    }


# Top-level scalars: (json type(s), default, group). NO_DEFAULT where DeepSpeed has none.
NO = NEOX.NO_DEFAULT
SCALARS: Final[dict[str, tuple[JSON, JSON, str]]] = {
    "train_batch_size": ("integer", NO, "batch"),
    "train_micro_batch_size_per_gpu": ("integer", NO, "batch"),
    "gradient_accumulation_steps": ("integer", NO, "batch"),
    "managed_gradient_accumulation": ("boolean", True, "batch"),
    "dataloader_drop_last": ("boolean", False, "batch"),
    "sequence_parallel_size": ("integer", NO, "parallelism"),
    "use_data_before_expert_parallelism": ("boolean", False, "parallelism"),
    "gradient_clipping": ("number", 1.0, "gradients"),
    "prescale_gradients": ("boolean", False, "gradients"),
    "gradient_predivide_factor": ("number", 1.0, "gradients"),
    "gradient_allreduce_op": ("string", "mean", "gradients"),
    "sparse_gradients": ("boolean", False, "removed"),
    "disable_allgather": ("boolean", False, "gradients"),
    "fp32_allreduce": ("boolean", False, "gradients"),  # DeeperSpeed (NeoX) only
    "communication_data_type": (["string", "null"], None, "precision"),
    "seq_parallel_communication_data_type": ("string", "fp32", "precision"),
    "zero_allow_untested_optimizer": ("boolean", False, "optimizer"),
    "zero_force_ds_cpu_optimizer": ("boolean", True, "optimizer"),
    "steps_per_print": (["integer", "null"], None, "monitoring"),
    "wall_clock_breakdown": ("boolean", False, "monitoring"),
    "memory_breakdown": ("boolean", False, "monitoring"),
    "dump_state": ("boolean", False, "monitoring"),
    "log_level": (["string", "null"], None, "monitoring"),
    "graph_harvesting": ("boolean", False, "removed"),
    "vocabulary_size": (["integer", "null"], None, "features"),
}

GROUPS: Final[dict[str, str]] = {
    "optimizer": "optimizer",
    "scheduler": "scheduler",
    "fp16": "precision",
    "bf16": "precision",
    "bfloat16": "precision",
    "amp": "removed",
    "torch_autocast": "precision",
    "data_types": "precision",
    "zero_optimization": "zero",
    "aio": "zero",
    "activation_checkpointing": "memory",
    "compile": "kernels",
    "sparse_attention": "removed",
    "progressive_layer_drop": "removed",
    "eigenvalue": "removed",
    "compression_training": "removed",
    "quantize_training": "removed",
    "data_efficiency": "features",
    "curriculum_learning": "removed",
    "hybrid_engine": "features",
    "weight_quantization": "features",
    "elasticity": "removed",
    "autotuning": "features",
    "pipeline": "parallelism",
    "tensor_parallel": "parallelism",
    "expert_parallel": "parallelism",
    "checkpoint": "checkpointing",
    "nebula": "removed",
    "datastates": "checkpointing",
    "flops_profiler": "monitoring",
    "tensorboard": "monitoring",
    "wandb": "monitoring",
    "csv_monitor": "monitoring",
    "comet": "monitoring",
    "comms_logger": "monitoring",
    "timers": "monitoring",
}

# Group "removed": features DeepSpeed 0.19.8 refuses (runtime/config.py _REMOVED_TOP_LEVEL_CONFIG_KEYS,
# deepspeedai/DeepSpeed#8489); older releases and DeeperSpeed still run them.

# Defaults that changed between releases: key path -> {version: default}.
VERSION_DEFAULTS: Final[dict[str, dict[str, JSON]]] = {
    # deepspeedai/DeepSpeed#8068, first released in 0.19.3
    "gradient_clipping": {"0.19.2": 0.0, "0.17.1": 0.0},
    # deepspeedai/DeepSpeed#7360 (0.17.2): WarmupLR's warmup_max_lr became the optimizer's lr
    "scheduler.params.warmup_max_lr": {"0.17.1": 0.001},
}


def build_schema() -> dict[str, JSON]:
    blocks = {**NEOX.deepspeed_blocks(), **extra_blocks()}
    # current DeepSpeed's bf16 block (precision_config.py); the old top-level name is `bfloat16`
    bf16 = blocks["bf16"]["properties"]
    bf16["immediate_grad_update"] = _prop("boolean", False)
    bf16["check_grad_overflow"] = _prop("boolean", True)
    bf16["bf16_master_weights_and_grads"] = _prop("boolean", False)
    bf16["bf16_optimizer_states"] = _prop("boolean", False)
    blocks["bfloat16"] = json.loads(json.dumps(blocks["bf16"]))
    blocks["data_types"]["properties"]["param_dtype"] = _prop(["string", "null"], None)
    blocks["data_types"]["properties"]["buffer_dtype"] = _prop(["string", "null"], None)
    # WarmupLR's peak defaults to the optimizer's lr (null here); WarmupDecayLR's to 0.001
    sched = blocks["scheduler"]["properties"]["params"]["properties"]
    sched["warmup_max_lr"] = _prop(["number", "null"], None)
    # torch.optim.lr_scheduler classes DeepSpeed builds by name (a decay without warmup)
    sched["T_max"] = _prop("integer")
    sched["eta_min"] = _prop("number", 0.0)
    sched["start_factor"] = _prop("number", 1.0 / 3)
    sched["end_factor"] = _prop("number", 1.0)
    sched["total_iters"] = _prop("integer", 5)

    props: dict[str, dict[str, JSON]] = {}
    for name, (types, default, group) in SCALARS.items():
        props[name] = _prop(types, default)
        props[name]["x-group"] = group
    for name, block in blocks.items():
        props[name] = block
        block["x-group"] = GROUPS[name]
    for path, per_version in VERSION_DEFAULTS.items():
        node: dict[str, JSON] = {"properties": props}
        for part in path.split("."):
            node = node["properties"][part]
        node["x-defaults"] = per_version
    missing = sorted(name for name in props if "x-group" not in props[name])
    if missing:
        raise SystemExit(f"keys without a group: {missing}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "DeepSpeed configuration (ds_config.json)",
        "type": "object",
        # Unknown keys are reported by neoconv (with the closest known key), not rejected here.
        "additionalProperties": True,
        "x-versions": list(VERSIONS),
        "x-generated-by": "tools/gen_deepspeed_schema.py",
        "properties": props,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--output", type=Path, default=DEFAULT_OUTPUT, help="schema file to write (default: %(default)s)"
    )
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the output file is out of date")
    opts = parser.parse_args(argv)

    return write_or_check(render(build_schema()), opts.output, opts.check, "gen_deepspeed_schema.py")


if __name__ == "__main__":
    sys.exit(main())
