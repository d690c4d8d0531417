#!/usr/bin/env python3
"""Generate schemas/hftrainer.schema.json: the keys of a Hugging Face `TrainingArguments` train file.

Reads only facts in this repository: the fields of TrainingArguments at every release and the dialects'
own keys (schemas/history/hftrainer.json, written by tools/gen_hftrainer_history.py) and the DeepSpeed
config keys (schemas/deepspeed.schema.json), which a train file nests under `deepspeed` when the DeepSpeed
config is read with it (`--with ds_config.json`, or a `deepspeed:` mapping written inline). Every key gets an
`x-group` (why it is dropped when no rule reads it: mappings/hftrainer.yaml `extension_reasons`).

Usage:
    python tools/gen_hftrainer_schema.py [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from history_common import HISTORY_DIR, REPO_ROOT, write_or_check

OUTPUT = REPO_ROOT / "schemas" / "hftrainer.schema.json"
HISTORY = HISTORY_DIR / "hftrainer.json"
DEEPSPEED = REPO_ROOT / "schemas" / "deepspeed.schema.json"

# TrainingArguments fields by what they are about (first pattern that matches the name); the rest: "runtime"
GROUPS = (
    (
        "evaluation",
        r"^(eval|evaluation|per_device_eval|per_gpu_eval|prediction|metric_for|greater_is|load_best|include_for_metrics|include_inputs_for|batch_eval|fp16_full_eval|bf16_full_eval|label_names|eval_)",
    ),
    (
        "checkpointing",
        r"^(save_|output_dir|overwrite_output|resume_from|hub_|push_to_hub|restore_callback|load_best|ignore_data_skip)",
    ),
    (
        "logging",
        r"^(logging_|log_|report_to|run_name|disable_tqdm|project|trackio|include_num_input|include_tokens|skip_memory|average_tokens|debug)",
    ),
    (
        "data",
        r"^(dataloader_|remove_unused|group_by_length|length_column|train_sampling|past_index|label_smoothing|data_seed)",
    ),
    (
        "distributed",
        r"^(ddp_|fsdp|local_rank|tpu_|parallelism|accelerator_config|deepspeed|sharded_ddp|parallel_mode|n_gpu|world_size|use_cpu|no_cuda|use_mps|xpu|use_ipex|jit_mode|ray_scope|split_batches|dispatch_batches|save_on_each_node|torchdynamo|torch_compile|use_legacy_prediction)",
    ),
    (
        "optimizer",
        r"^(optim|adafactor|adam_|weight_decay|lr_scheduler|learning_rate|warmup|max_grad_norm|neftune|use_liger|liger|layerwise)",
    ),
    ("precision", r"^(fp16|bf16|tf32|half_precision|fp8|mixed_precision|torch_empty_cache)"),
    (
        "batch",
        r"^(per_device_train|per_gpu_train|gradient_accumulation|auto_find_batch|max_steps|num_train_epochs|gradient_checkpointing)",
    ),
)
# a key several tools declare is named by the library the others build on (TRL) first, then by the tools
DIALECT_ORDER = ("trl", "llamafactory", "axolotl", "open-r1", "alignment-handbook")
# tools whose classes copy an earlier tool's (alignment-handbook's ModelArguments are TRL's ModelConfig): a key
# another tool declares too keeps that tool's group; they name only the keys that are theirs alone
FOLLOWERS = ("alignment-handbook ",)
# a dialect class -> its group (mappings/hftrainer.yaml extension_reasons says what each is)
DIALECT_GROUPS = (
    ("llamafactory", r"Model|Quantization|Export|Processor|Vllm|SGLang|KTransformers|Fp8", "llamafactory_model"),
    ("llamafactory", r"Data", "llamafactory_data"),
    (
        "llamafactory",
        r"Lora|OFT|Freeze|Galore|Apollo|BAdam|RLHF|Finetuning|SwanLab|Ray|Profiler|Training",
        "llamafactory_finetuning",
    ),
    ("llamafactory", r"Generating|Evaluation", "llamafactory_generating"),
    ("trl", r"^(SFT|_Base)", "trl_sft"),
    ("trl", r"DPO|KTO|Reward|ORPO|CPO|BCO|PRM|NashMD|XPO", "trl_dpo"),
    ("trl", r"GRPO|RLOO|PPO|DDPO|AlignProp|GKD|Distillation", "trl_rl"),
    ("trl", r"ModelConfig", "trl_model"),
    ("trl", r"Script|Dataset", "trl_data"),
    ("open-r1", r"Script|Dataset", "openr1_data"),
    ("open-r1", r"", "openr1_run"),
    ("alignment-handbook", r"Model", "handbook_model"),
    ("alignment-handbook", r"Data|Script", "handbook_data"),
    ("alignment-handbook", r"", "handbook_run"),
    ("axolotl", r"^(model|multimodal|quantization)\.", "axolotl_model"),
    ("axolotl", r"^datasets\.", "axolotl_data"),
    ("axolotl", r"^peft\.", "axolotl_peft"),
    ("axolotl", r"^(trl|vllm)\.", "axolotl_rl"),
    ("axolotl", r"^(integrations|fsdp|fp8|dynamic_checkpoint|training|deprecated)\.", "axolotl_training"),
    ("axolotl", r"", "axolotl_config"),
)


def json_type(annotation: str | None, default: Any) -> list[str]:
    """JSON types a field takes: from its annotation text (or its default)."""
    text = annotation or type(default).__name__
    found: list[str] = []
    for word, kinds in (
        ("bool", ["boolean"]),
        ("int", ["integer"]),
        ("float", ["number", "integer"]),
        ("str", ["string"]),
        ("dict", ["object", "string"]),
        ("Dict", ["object", "string"]),
        ("list", ["array", "string"]),
        ("List", ["array", "string"]),
        ("Enum", ["string"]),
        ("Names", ["string"]),
        ("Strategy", ["string"]),
        ("Type", ["string"]),
        ("Option", ["string"]),
        ("Mode", ["string"]),
        ("Any", ["string", "number", "boolean", "object", "array", "integer"]),
    ):
        if re.search(rf"\b{word}|{word}\b", text):
            found += [k for k in kinds if k not in found]
    if "Optional" in text or "None" in text or default is None:
        found.append("null")
    return found or ["string", "number", "integer", "boolean", "object", "array", "null"]


def _auto_allowed(node: Any) -> Any:
    """A DeepSpeed key as the Trainer reads it: any value may be "auto" (HfTrainerDeepSpeedConfig fills it)."""
    if not isinstance(node, dict):
        return node
    out = {
        k: ({n: _auto_allowed(v) for n, v in node["properties"].items()} if k == "properties" else v)
        for k, v in node.items()
    }
    kind = out.get("type")
    if isinstance(kind, str) and kind not in ("object", "string"):
        out["type"] = [kind, "string"]
    elif isinstance(kind, list) and "string" not in kind and "object" not in kind:
        out["type"] = [*kind, "string"]
    return out


def shared_group(groups: list[str]) -> str:
    """The group of a key several tools declare: theirs when they agree, the shared model or data group when each
    calls it that (model_name_or_path: LLaMA-Factory's and TRL's model arguments), else the first tool's (DIALECT_ORDER)."""
    kinds = {g.rsplit("_", 1)[-1] for g in groups}
    if len(set(groups)) > 1 and len(kinds) == 1 and kinds <= {"model", "data"}:
        return f"tools_{kinds.pop()}"
    return groups[0]


def group_of(name: str) -> str:
    return next((group for group, pattern in GROUPS if re.search(pattern, name)), "runtime")


def build() -> str:
    history = json.loads(HISTORY.read_text(encoding="utf-8"))
    labels = [r["label"] for r in history["releases"]]
    properties: dict[str, Any] = {}
    for name, record in history["keys"].items():
        last_type = record.get("type", [[labels[0], None]])[-1][-1] if record.get("type") else None
        last_default = record["default"][-1][1] if len(record["default"][-1]) == 2 else None
        node: dict[str, Any] = {"type": json_type(last_type, last_default), "x-group": group_of(name)}
        if len(record["default"][-1]) == 2 and not isinstance(last_default, dict):
            node["default"] = last_default
        node["x-releases"] = [f"{a}..{b}" if a != b else a for a, b in record["in"]]
        properties[name] = node
    ds = json.loads(DEEPSPEED.read_text(encoding="utf-8"))
    properties["deepspeed"] = {
        "type": ["string", "object", "null"],
        "x-group": "deepspeed_file",
        "additionalProperties": True,
        "properties": {k: _auto_allowed(v) for k, v in ds["properties"].items()},
    }
    declared: dict[str, list[tuple[str, str]]] = {}  # key -> (group, where) of every tool that declares it
    for dialect, info in sorted(history["dialects"].items(), key=lambda item: DIALECT_ORDER.index(item[0])):
        for cls, names in info["classes"].items():
            group = next(g for d, pattern, g in DIALECT_GROUPS if d == dialect and re.search(pattern, cls))
            for name in names:
                declared.setdefault(name, []).append((group, f"{dialect} {info['version']} {cls}"))
    for name, found in declared.items():
        if name not in properties:
            own = [g for g, w in found if not w.startswith(FOLLOWERS)] or [g for g, _ in found]
            properties[name] = {
                "x-group": shared_group(own),
                "x-dialect": "; ".join(w for _, w in found),
            }
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Hugging Face TrainingArguments (a train file: YAML or JSON)",
        "type": "object",
        "additionalProperties": True,
        "x-generated-by": "tools/gen_hftrainer_schema.py",
        "x-versions": list(reversed(labels)),
        "properties": dict(sorted(properties.items())),
    }
    return json.dumps(schema, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 when the output is not what would be written")
    args = parser.parse_args(argv)
    return write_or_check(build(), args.output, args.check, "gen_hftrainer_schema.py")


if __name__ == "__main__":
    sys.exit(main())
