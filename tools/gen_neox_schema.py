#!/usr/bin/env python3
"""Generate schemas/neox.schema.json, the JSON Schema of GPT-NeoX YAML configs.

Inputs are the facts tools/extract_neox_facts.py read from the two reference documents, committed
in --facts (tools/facts/):
  * neox-arguments.json      (gpt-neox-arguments.md)      -> version "current" (typed argument list)
  * neox-configs-readme.json (gpt-neox-configs-readme.md) -> version "configs-readme" (older table)

The output is deterministic (sorted keys, fixed indentation, trailing newline)
so a test can regenerate it and compare byte for byte (see --check).

Usage:
  python tools/gen_neox_schema.py [--facts DIR] [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from facts_file import FACTS_DIR, load  # tools/ is on sys.path when run as a script
from schema_output import render, write_or_check

JSON = Any  # a value that json.dumps accepts

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT: Final = REPO_ROOT / "schemas" / "neox.schema.json"

CURRENT: Final = "current"
OLD: Final = "configs-readme"
VERSION_ORDER: Final = (OLD, CURRENT)  # oldest first

ARGS_FILE: Final = "gpt-neox-arguments.md"  # the documents the facts were read from
ARGS_FACTS: Final = "neox-arguments.json"
README_FACTS: Final = "neox-configs-readme.json"

# Sentinel for "no default stated": None already means JSON null.
NO_DEFAULT: Final = object()


@dataclass
class Arg:
    """One argument as the facts give it (read from a reference document; name already underscored)."""

    name: str
    type_text: str | None  # Python type annotation text, current list only
    default_text: str | None  # raw default text; None when the doc states none
    group: str | None = None  # NeoXArgs section (current list only)
    origin: str | None = None  # DSL/DSC/Meg/NeoX column (old README only)


# --------------------------------------------------------------------------
# Reading the committed facts (tools/extract_neox_facts.py writes them)
# --------------------------------------------------------------------------


def read_current(path: Path) -> list[Arg]:
    return [Arg(r["name"], r["type"], r.get("default"), group=r["group"]) for r in load(path)["args"]]


def read_readme(path: Path) -> list[Arg]:
    return [Arg(r["name"], None, r.get("default"), origin=r["origin"]) for r in load(path)["rows"]]


# --------------------------------------------------------------------------
# Python type annotation -> JSON Schema
# --------------------------------------------------------------------------

_SIMPLE_TYPES: Final = {
    "int": "integer",
    "float": "number",  # "number" also admits integers, as NeoX does for floats
    "bool": "boolean",
    "str": "string",
    "list": "array",
    "List": "array",
    "tuple": "array",
    "Tuple": "array",
    "dict": "object",
    "Dict": "object",
    "None": "null",
    "NoneType": "null",
}
_TYPE_ORDER: Final = ("boolean", "integer", "number", "string", "array", "object", "null")


def _dotted_name(node: ast.expr) -> str:
    """'typing.List' -> 'List'; the module prefix does not change the meaning."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and node.value is None:
        return "None"
    raise ValueError(f"unsupported type node {ast.dump(node)}")


def _subscript_args(node: ast.Subscript) -> list[ast.expr]:
    sl = node.slice
    return list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]


def _merge_union(members: list[dict[str, JSON]]) -> dict[str, JSON]:
    """Union of schemas: a type list when all are plain types, else anyOf."""
    if any(not m for m in members):
        return {}  # one member accepts anything, so the union does too
    if all(set(m) == {"type"} for m in members):
        types: list[str] = []
        for m in members:
            for t in m["type"] if isinstance(m["type"], list) else [m["type"]]:
                if t not in types:
                    types.append(t)
        return {"type": _type_value(types)}
    return {"anyOf": members}


def _type_value(types: list[str]) -> str | list[str]:
    ordered = sorted(set(types), key=_TYPE_ORDER.index)
    return ordered[0] if len(ordered) == 1 else ordered


def _schema_from_node(node: ast.expr) -> dict[str, JSON]:
    if isinstance(node, ast.Subscript):
        head = _dotted_name(node.value)
        inner = _subscript_args(node)
        if head == "Literal":
            return {"enum": [ast.literal_eval(v) for v in inner]}
        if head in ("Union", "Optional"):
            members = [_schema_from_node(n) for n in inner]
            if head == "Optional":
                members.append({"type": "null"})
            return _merge_union(members)
        if head in ("List", "list"):
            return {"type": "array", "items": _schema_from_node(inner[0])}
        if head in _SIMPLE_TYPES:
            return {"type": _SIMPLE_TYPES[head]}
        raise ValueError(f"unsupported generic {head}")
    head = _dotted_name(node)
    if head in _SIMPLE_TYPES:
        return {"type": _SIMPLE_TYPES[head]}
    if head in ("Any", "Optional"):
        # A bare "Optional" (how the doc prints comet_*) names no inner type.
        return {}
    raise ValueError(f"unsupported type {head}")


def schema_from_type(type_text: str) -> dict[str, JSON]:
    # Older renderings print "<class 'int'>"; accept both spellings.
    m = re.fullmatch(r"<class '([\w.]+)'>", type_text)
    if m:
        type_text = m.group(1)
    try:
        return _schema_from_node(ast.parse(type_text, mode="eval").body)
    except (SyntaxError, ValueError) as exc:
        raise SystemExit(f"cannot read type {type_text!r}: {exc}") from exc


def add_null(schema: dict[str, JSON]) -> None:
    """A None default means null is a legal value."""
    if not schema:
        return
    if "enum" in schema:
        if None not in schema["enum"]:
            schema["enum"].append(None)
    elif "anyOf" in schema:
        if {"type": "null"} not in schema["anyOf"]:
            schema["anyOf"].append({"type": "null"})
    elif "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        schema["type"] = _type_value([*types, "null"])


# --------------------------------------------------------------------------
# Default text -> JSON value
# --------------------------------------------------------------------------


def json_type_of(value: JSON) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(type(value))


def accepted_types(schema: dict[str, JSON]) -> set[str] | None:
    """JSON types a schema admits at top level; None means unconstrained."""
    if "enum" in schema:
        return {json_type_of(v) for v in schema["enum"]}
    if "anyOf" in schema:
        out: set[str] = set()
        for member in schema["anyOf"]:
            sub = accepted_types(member)
            if sub is None:
                return None
            out |= sub
        return out
    if "type" in schema:
        t = schema["type"]
        return set(t) if isinstance(t, list) else {t}
    return None


def _fits(value: JSON, allowed: set[str] | None) -> bool:
    if allowed is None:
        return True
    kind = json_type_of(value)
    return kind in allowed or (kind == "integer" and "number" in allowed)


def _to_json(value: Any) -> JSON:
    if isinstance(value, (tuple, list)):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset, bytes, complex)):
        raise ValueError("not JSON")
    return value


# The old README writes booleans in YAML spelling; "none" is left alone because
# there it is a real string value (e.g. sparsity: none).
_YAML_BOOLS: Final = {"true": "True", "false": "False"}


def parse_default(text: str, schema: dict[str, JSON]) -> JSON:
    if text.strip() == "None":
        return None
    allowed = accepted_types(schema)
    # For string-typed keys the text is the value, even if it looks like a
    # tuple ("969, 30, 1") or a number; only None was special above.
    if allowed is not None and allowed <= {"string", "null"}:
        return text
    source = _YAML_BOOLS.get(text.strip(), text.strip())
    try:
        value = _to_json(ast.literal_eval(source))
    except (ValueError, SyntaxError, TypeError):
        return text
    return value if _fits(value, allowed) else text


def schema_from_default(value: JSON) -> dict[str, JSON]:
    """Type of a key known only from the old README, guessed from its default."""
    kind = json_type_of(value)
    if kind == "integer":
        return {"type": "integer"}
    if kind == "number":
        return {"type": "number"}
    if kind == "null":
        return {}
    return {"type": kind}


def same_default(a: JSON, b: JSON) -> bool:
    """Equality where 1 == 1.0 but True != 1 (bool is an int subclass in Python)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_default(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_default(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


# --------------------------------------------------------------------------
# Facts not in the reference documents
# --------------------------------------------------------------------------

# TransformerEngine switches present in upstream neox_args.py (NeoXArgsModel,
# added Dec 2024) and used by configs/1-3B-transformer-engine.yml, but absent
# from the generated arguments list, which was not regenerated after that.
# Values: (python type, default as a Python literal string).
SOURCE_ONLY_ARGS: Final[dict[str, tuple[str, str]]] = {
    "te_columnparallel": ("bool", "False"),
    "te_rowparallel": ("bool", "False"),
    "te_layernorm_mlp": ("bool", "False"),
    "te_mha": ("bool", "False"),
    "te_fp8_format": ("typing.Literal['e4m3', 'hybrid']", "hybrid"),
    "te_fp8_wgrad": ("bool", "True"),
    "te_fp8_amax_history_len": ("int", "1"),
    "te_fp8_amax_compute_algo": ("str", "most_recent"),
    "te_fp8_margin": ("int", "0"),
    "te_fp8_mha": ("bool", "False"),
}
SOURCE_ONLY_GROUP: Final = "NeoXArgsModel"
# Keys NeoX derives when they are null (NeoXArgs.calculate_batch_parameters takes grad_acc=None and
# works it out from the global and micro batch; validate_types lets None through): null is a value.
DERIVED_WHEN_NULL: Final = ("gradient_accumulation_steps",)
SOURCE_ONLY_NOTE: Final = "upstream gpt-neox neox_args.py; missing from the reference arguments list"

# Short labels of our own for the keys a translation touches most.
TITLES: Final[dict[str, str]] = {
    "num_layers": "Transformer layer count",
    "hidden_size": "Model width",
    "intermediate_size": "MLP inner width",
    "num_attention_heads": "Attention head count",
    "num_kv_heads": "Key/value head count (GQA)",
    "seq_length": "Training sequence length",
    "max_position_embeddings": "Largest supported position",
    "norm": "Normalisation layer kind",
    "layernorm_epsilon": "LayerNorm epsilon",
    "rms_norm_epsilon": "RMSNorm epsilon",
    "pos_emb": "Position embedding kind",
    "rotary_pct": "Share of head dims rotated",
    "rotary_emb_base": "Rotary frequency base",
    "no_weight_tying": "Untie input and output embeddings",
    "activation": "MLP activation function",
    "attention_config": "Per-layer attention kinds",
    "init_method": "Weight init scheme",
    "init_method_std": "Init standard deviation",
    "precision": "Training numeric precision",
    "lr": "Peak learning rate",
    "min_lr": "Learning-rate floor",
    "lr_decay_style": "Learning-rate decay shape",
    "lr_decay_iters": "Steps over which LR decays",
    "warmup": "Warmup share of training steps",
    "weight_decay": "Weight decay coefficient",
    "attention_dropout": "Dropout on attention probabilities",
    "hidden_dropout": "Dropout on hidden states",
    "gradient_clipping": "Gradient norm clip",
    "train_iters": "Total optimiser steps",
    "train_batch_size": "Global batch size",
    "train_micro_batch_size_per_gpu": "Per-GPU micro batch",
    "gradient_accumulation_steps": "Micro batches per step",
    "model_parallel_size": "Tensor parallel degree",
    "pipe_parallel_size": "Pipeline parallel degree",
    "optimizer": "DeepSpeed optimizer block",
    "scheduler": "DeepSpeed LR scheduler block",
    "zero_optimization": "DeepSpeed ZeRO settings",
    "fp16": "DeepSpeed fp16 settings",
    "bf16": "DeepSpeed bf16 settings",
    "tokenizer_type": "Tokenizer implementation",
    "seed": "Random seed",
}


# DeepSpeed sub-keys. Facts (names, types, defaults) come from DeepSpeed's
# runtime constants, ZeRO/offload configs, monitor/comm/profiler configs, the
# optimizer classes and lr_schedules, cross-checked against EleutherAI's
# DeeperSpeed fork that NeoX runs on. Entries are (json type(s), default);
# NO_DEFAULT where DeepSpeed has none (required, or left to the library).


def _prop(types: str | list[str], default: JSON = NO_DEFAULT, **extra: JSON) -> dict[str, JSON]:
    out: dict[str, JSON] = {"type": types}
    if default is not NO_DEFAULT:
        out["default"] = default
    out.update(extra)
    return out


def _block(props: dict[str, dict[str, JSON]], nullable: bool = False) -> dict[str, JSON]:
    return {
        "type": ["object", "null"] if nullable else "object",
        "properties": props,
        "additionalProperties": True,  # DeepSpeed grows keys faster than we track them
    }


def _offload(buffer_count: int, extra: dict[str, dict[str, JSON]]) -> dict[str, JSON]:
    props = {
        "device": {"enum": ["none", "cpu", "nvme"], "default": "none"},
        "nvme_path": _prop(["string", "null"], None),
        "buffer_count": _prop("integer", buffer_count, minimum=0),
        "pin_memory": _prop("boolean", False),
        **extra,
    }
    return _block(props, nullable=True)


def deepspeed_blocks() -> dict[str, dict[str, JSON]]:
    int_ge0 = {"minimum": 0}
    optimizer_params = {
        # Adam family (FusedAdam / DeepSpeedCPUAdam) defaults
        "lr": _prop("number", 0.001),
        "betas": _prop("array", [0.9, 0.999], items={"type": "number"}, minItems=2, maxItems=2),
        "eps": _prop("number", 1e-08),
        "weight_decay": _prop("number", 0.0),
        "bias_correction": _prop("boolean", True),
        "amsgrad": _prop("boolean", False),
        "adam_w_mode": _prop("boolean", True),
        "torch_adam": _prop("boolean", False),
        # SGD (torch.optim.SGD) default
        "momentum": _prop("number", 0.0),
        # 1-bit Adam / 1-bit LAMB / 0/1 Adam
        "freeze_step": _prop("integer", 100000),
        "cuda_aware": _prop("boolean", False),
        "comm_backend_name": _prop("string", "nccl"),
        "eps_inside_sqrt": _prop("boolean", False),
        "max_grad_norm": _prop("number", 0.0),
        "var_freeze_step": _prop("integer", 100000),
        "var_update_scaler": _prop("integer", 16),
        "local_step_scaler": _prop("integer", 32678),
        "local_step_clipper": _prop("integer", 16),
        # LAMB / 1-bit LAMB trust-ratio bounds
        "max_coeff": _prop("number", 10.0),
        "min_coeff": _prop("number", 0.01),
        "coeff_beta": _prop("number", 0.9),
        "factor_max": _prop("number", 4.0),
        "factor_min": _prop("number", 0.5),
        "factor_threshold": _prop("number", 0.1),
    }
    optimizer = _block(
        {
            # NeoX lower-cases this and also accepts its own names (cpu_adam, sm3, ...)
            "type": _prop("string", examples=["Adam", "AdamW", "Lamb", "OneBitAdam", "OneBitLamb", "Lion"]),
            "params": _block(optimizer_params),
            "legacy_fusion": _prop("boolean", False),
        },
        nullable=True,
    )
    scheduler_params = {
        # WarmupLR / WarmupDecayLR
        "warmup_min_lr": _prop("number", 0.0),
        "warmup_max_lr": _prop("number", 0.001),
        "warmup_num_steps": _prop("integer", 1000),
        "warmup_type": {"enum": ["log", "linear"], "default": "log"},
        "total_num_steps": _prop("integer"),  # required by the decaying schedules
        # WarmupCosineLR
        "warmup_min_ratio": _prop("number", 0.0),
        "cos_min_ratio": _prop("number", 0.0001),
        # OneCycle
        "cycle_min_lr": _prop("number"),
        "cycle_max_lr": _prop("number"),
        "decay_lr_rate": _prop("number", 0.0),
        "cycle_first_step_size": _prop("integer", 2000),
        "cycle_second_step_size": _prop(["integer", "null"], None),
        "cycle_first_stair_count": _prop("integer", 0),
        "cycle_second_stair_count": _prop(["integer", "null"], None),
        "decay_step_size": _prop("integer", 0),
        "cycle_momentum": _prop("boolean", True),
        "cycle_min_mom": _prop("number", 0.8),
        "cycle_max_mom": _prop("number", 0.9),
        "decay_mom_rate": _prop("number", 0.0),
        # LRRangeTest
        "lr_range_test_min_lr": _prop("number", 0.001),
        "lr_range_test_step_size": _prop("integer", 2000),
        "lr_range_test_step_rate": _prop("number", 1.0),
        "lr_range_test_staircase": _prop("boolean", False),
        "last_batch_iteration": _prop("integer", -1),
    }
    scheduler = _block(
        {
            "type": _prop(
                "string",
                examples=["WarmupLR", "WarmupDecayLR", "WarmupCosineLR", "OneCycle", "LRRangeTest"],
            ),
            "params": _block(scheduler_params),
        },
        nullable=True,
    )
    fp16 = _block(
        {
            "enabled": _prop("boolean", False),
            # DeeperSpeed/NeoX extension: "fp16" or "bfloat16" (Pythia configs)
            "type": _prop("string", examples=["fp16", "bfloat16"]),
            # Duplicate switch found in Pythia-era configs; DeepSpeed ignores it
            "fp16": _prop("boolean"),
            "auto_cast": _prop("boolean", False),
            "loss_scale": _prop("number", 0, minimum=0),  # 0 selects dynamic scaling
            "initial_scale_power": _prop("integer", 16),
            "loss_scale_window": _prop("integer", 1000),
            "hysteresis": _prop("integer", 2),
            "consecutive_hysteresis": _prop("boolean", False),
            "min_loss_scale": _prop("number", 1),
            "fp16_master_weights_and_grads": _prop("boolean", False),
        },
        nullable=True,
    )
    bf16 = _block(
        {
            "enabled": _prop("boolean", False),
            "immediate_grad_update": _prop("boolean", False),
        },
        nullable=True,
    )
    amp = _block(
        {
            "enabled": _prop("boolean", False),
            # Everything else is handed to apex amp.initialize unchanged
            "opt_level": _prop("string", examples=["O0", "O1", "O2", "O3"]),
        },
        nullable=True,
    )
    zero_stage = {"enum": [0, 1, 2, 3]}
    zero = _block(
        {
            # NeoX autotuning also accepts a list of stages or "all"
            "stage": {
                "anyOf": [zero_stage, {"type": "array", "items": zero_stage}, {"enum": ["all"]}],
                "default": 0,
            },
            "allgather_partitions": _prop("boolean", True),
            "allgather_bucket_size": _prop("integer", 500000000, **int_ge0),
            # None means "true for stage 3, false otherwise" in current DeepSpeed
            "overlap_comm": _prop(["boolean", "null"], None),
            "reduce_scatter": _prop("boolean", True),
            "reduce_bucket_size": _prop("integer", 500000000, **int_ge0),
            "contiguous_gradients": _prop("boolean", True),
            "use_multi_rank_bucket_allreduce": _prop("boolean", True),
            "load_from_fp32_weights": _prop("boolean", True),
            "elastic_checkpoint": _prop("boolean", False),
            "ignore_unused_parameters": _prop("boolean", True),
            "legacy_stage1": _prop("boolean", False),
            "round_robin_gradients": _prop("boolean", False),
            "sub_group_size": _prop("integer", 1000000000, **int_ge0),
            # Deprecated booleans, superseded by offload_optimizer / offload_param
            "cpu_offload": _prop(["boolean", "null"], None),
            "cpu_offload_param": _prop(["boolean", "null"], None),
            "cpu_offload_use_pin_memory": _prop(["boolean", "null"], None),
            "offload_optimizer": _offload(
                4,
                {
                    "pipeline_read": _prop("boolean", False),
                    "pipeline_write": _prop("boolean", False),
                    "fast_init": _prop("boolean", False),
                    "ratio": _prop("number", 1.0, minimum=0.0, maximum=1.0),
                },
            ),
            "offload_param": _offload(
                5,
                {
                    "buffer_size": _prop("integer", 100000000, **int_ge0),
                    "max_in_cpu": _prop("integer", 1000000000, **int_ge0),
                },
            ),
            "stage3_prefetch_bucket_size": _prop("integer", 50000000, **int_ge0),
            "stage3_param_persistence_threshold": _prop("integer", 100000, **int_ge0),
            # sys.maxsize on 64-bit hosts; spelled out so output does not vary by host
            "stage3_model_persistence_threshold": _prop("integer", 9223372036854775807, **int_ge0),
            "stage3_max_live_parameters": _prop("integer", 1000000000, **int_ge0),
            "stage3_max_reuse_distance": _prop("integer", 1000000000, **int_ge0),
            "stage3_gather_16bit_weights_on_model_save": _prop("boolean", False),
            "stage3_gather_fp16_weights_on_model_save": _prop("boolean", False),
            "stage3_module_granularity_threshold": _prop("integer", 0),
            "stage3_use_all_reduce_for_fetch_params": _prop("boolean", False),
            "zero_hpz_partition_size": _prop("integer", 1, **int_ge0),
            "zero_quantized_weights": _prop("boolean", False),
            "zero_quantized_nontrainable_weights": _prop("boolean", False),
            "zero_quantized_gradients": _prop("boolean", False),
            "zeropp_loco_param": _prop(["object", "null"], None),
            "mics_shard_size": _prop("integer", -1),
            "mics_hierarchical_params_gather": _prop("boolean", False),
            "memory_efficient_linear": _prop("boolean", True),
            "pipeline_loading_checkpoint": _prop("boolean", False),
            "override_module_apply": _prop("boolean", True),
            "log_trace_cache_warnings": _prop("boolean", False),
        },
        nullable=True,
    )
    data_types = _block(
        # DeepSpeed takes several spellings (fp32, float32, bf16, ...), so no enum
        {"grad_accum_dtype": _prop(["string", "null"], None, examples=["fp32", "fp16", "bf16"])},
        nullable=True,
    )
    flops_profiler = _block(
        {
            "enabled": _prop("boolean", False),
            "recompute_fwd_factor": _prop("number", 0.0),
            "profile_step": _prop("integer", 1),
            "module_depth": _prop("integer", -1),
            "top_modules": _prop("integer", 1),
            "detailed": _prop("boolean", True),
            "output_file": _prop(["string", "null"], None),
        },
        nullable=True,
    )
    activation_checkpointing = _block(
        {
            "partition_activations": _prop("boolean", False),
            "number_checkpoints": _prop(["integer", "null"], None),
            "contiguous_memory_optimization": _prop("boolean", False),
            "synchronize_checkpoint_boundary": _prop("boolean", False),
            "profile": _prop("boolean", False),
            "cpu_checkpointing": _prop("boolean", False),
        },
        nullable=True,
    )

    def file_monitor() -> dict[str, JSON]:
        return _block(
            {
                "enabled": _prop("boolean", False),
                "output_path": _prop("string", ""),
                "job_name": _prop("string", "DeepSpeedJobName"),
            },
            nullable=True,
        )

    wandb = _block(
        {
            "enabled": _prop("boolean", False),
            "group": _prop(["string", "null"], None),
            "team": _prop(["string", "null"], None),
            "project": _prop("string", "deepspeed"),
        },
        nullable=True,
    )
    comms_logger = _block(
        {
            "enabled": _prop("boolean", False),
            "verbose": _prop("boolean", False),
            "prof_all": _prop("boolean", True),
            "prof_ops": _prop("array", [], items={"type": "string"}),
            "debug": _prop("boolean", False),
        },
        nullable=True,
    )
    sparse_attention = _block(
        {
            "mode": {"enum": ["dense", "fixed", "variable", "bigbird", "bslongformer"], "default": "fixed"},
            "block": _prop("integer", 16),
            "different_layout_per_head": _prop("boolean", False),
            "num_local_blocks": _prop("integer", 4),
            "num_global_blocks": _prop("integer", 1),
            "attention": {"enum": ["unidirectional", "bidirectional"], "default": "bidirectional"},
            "horizontal_global_attention": _prop("boolean", False),
            "num_different_global_patterns": _prop("integer", 1),
            "num_random_blocks": _prop("integer", 0),
            "local_window_blocks": _prop("array", [4], items={"type": "integer"}),
            "global_block_indices": _prop("array", [0], items={"type": "integer"}),
            "global_block_end_indices": _prop(["array", "null"], None, items={"type": "integer"}),
            "num_sliding_window_blocks": _prop("integer", 3),
        },
        nullable=True,
    )
    checkpoint = _block(
        {
            # Compared case-insensitively by DeepSpeed (WARN / IGNORE / FAIL)
            "tag_validation": _prop("string", "WARN", examples=["WARN", "IGNORE", "FAIL"]),
            "load_universal": _prop("boolean", False),
            "use_node_local_storage": _prop("boolean", False),
            "parallel_write": _block({"pipeline_stage": _prop("boolean", False)}),
        },
        nullable=True,
    )
    return {
        "optimizer": optimizer,
        "scheduler": scheduler,
        "fp16": fp16,
        "bf16": bf16,
        "amp": amp,
        "zero_optimization": zero,
        "data_types": data_types,
        "flops_profiler": flops_profiler,
        "activation_checkpointing": activation_checkpointing,
        "tensorboard": file_monitor(),
        "wandb": wandb,
        "csv_monitor": file_monitor(),
        "comms_logger": comms_logger,
        "sparse_attention": sparse_attention,
        "checkpoint": checkpoint,
    }


# --------------------------------------------------------------------------
# Assembling the schema
# --------------------------------------------------------------------------


def build_property(arg: Arg) -> dict[str, JSON]:
    assert arg.type_text is not None
    prop = schema_from_type(arg.type_text)
    if arg.default_text is not None:
        default = parse_default(arg.default_text, prop)
        if default is None:
            add_null(prop)
        prop["default"] = default
    return prop


def build_schema(facts: Path) -> dict[str, JSON]:
    current = read_current(facts / ARGS_FACTS)
    old = read_readme(facts / README_FACTS)

    props: dict[str, dict[str, JSON]] = {}
    versions: dict[str, set[str]] = {}

    for arg in current:
        if arg.name in props:
            raise SystemExit(f"duplicate argument {arg.name} in {ARGS_FILE}")
        prop = build_property(arg)
        prop["x-group"] = arg.group
        props[arg.name] = prop
        versions[arg.name] = {CURRENT}

    for name, (type_text, default_text) in SOURCE_ONLY_ARGS.items():
        if name in props:
            continue  # the reference list caught up; it wins
        prop = build_property(Arg(name, type_text, default_text))
        prop["x-group"] = SOURCE_ONLY_GROUP
        prop["x-source"] = SOURCE_ONLY_NOTE
        props[name] = prop
        versions[name] = {CURRENT}

    for name in DERIVED_WHEN_NULL:
        add_null(props[name])

    for arg in old:
        # The old table lists fp32_allreduce twice (Meg and DSC); first one wins.
        if OLD in versions.get(arg.name, set()):
            continue
        if arg.name in props:
            prop = props[arg.name]
            if arg.default_text is not None:
                type_only = {k: v for k, v in prop.items() if k in ("type", "enum", "anyOf", "items")}
                old_default = parse_default(arg.default_text, type_only)
                if "default" not in prop or not same_default(old_default, prop["default"]):
                    prop.setdefault("x-defaults", {})[OLD] = old_default
        else:
            prop = {}
            if arg.default_text is not None:
                old_default = parse_default(arg.default_text, {})
                prop = schema_from_default(old_default)
                prop["default"] = old_default
            props[arg.name] = prop
        prop["x-origin"] = arg.origin
        versions.setdefault(arg.name, set()).add(OLD)

    for name, block in deepspeed_blocks().items():
        if name not in props:
            continue  # only refine keys the documents know
        prop = props[name]
        prop["properties"] = block["properties"]
        prop["additionalProperties"] = True
    # deepspeed_extra_args is merged into the DeepSpeed config verbatim, so the
    # same blocks can appear inside it (e.g. comms_logger in real configs).
    if "deepspeed_extra_args" in props:
        props["deepspeed_extra_args"]["properties"] = deepspeed_blocks()
        props["deepspeed_extra_args"]["additionalProperties"] = True
        # the one way to hand DeepSpeed a clip of 1.0: NeoX drops gradient_clipping when it equals
        # its own default 1.0, and its pinned DeeperSpeed (91d1c55, constants.py) then uses 0.0
        props["deepspeed_extra_args"]["properties"]["gradient_clipping"] = {
            "type": "number",
            "default": 0.0,
            "x-note": "merged into the DeepSpeed config after NeoX's own keys: it wins",
        }

    for name, prop in props.items():
        prop["x-versions"] = [v for v in VERSION_ORDER if v in versions[name]]
        if name in TITLES:
            prop["title"] = TITLES[name]

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "GPT-NeoX training configuration",
        "type": "object",
        # Unknown keys are reported by neoconv, not rejected here.
        "additionalProperties": True,
        "x-versions": list(VERSION_ORDER),
        "x-generated-by": "tools/gen_neox_schema.py",
        "properties": props,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--facts", type=Path, default=FACTS_DIR, help="folder holding the NeoX facts files (default: %(default)s)"
    )
    parser.add_argument(
        "--output", type=Path, default=DEFAULT_OUTPUT, help="schema file to write (default: %(default)s)"
    )
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the output file is out of date")
    opts = parser.parse_args(argv)

    return write_or_check(render(build_schema(opts.facts)), opts.output, opts.check, "gen_neox_schema.py")


if __name__ == "__main__":
    sys.exit(main())
