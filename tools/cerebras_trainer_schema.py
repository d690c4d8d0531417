"""Build `schemas/cerebras-trainer.schema.json` (Cerebras Model Zoo 2.3+ trainer layout).

Called by gen_cerebras_schema.py, which writes (or --check's) it next to the legacy schema. Each
trainer place of mappings/cerebras-layouts.yaml gets the legacy schema of the key it holds
(`trainer.init.loop.max_steps` is `runconfig.max_steps`), so the two schemas never disagree on a
key's type; the trainer-only shapes come from Model Zoo 2.10 (trainer/utils.py, validate.py):
the optimizer is `{Class: {...}}`, schedulers and callbacks are lists of `{Class: {...}}`, and
`init.model.name` is required (validate.py: "Model configuration must have a 'name' key") unless
`model_name` stands for it (validate.py reads it as `name`).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
LAYOUTS = REPO_ROOT / "mappings" / "cerebras-layouts.yaml"
OUTPUT = REPO_ROOT / "schemas" / "cerebras-trainer.schema.json"

# cstorch.optim.Optimizer subclasses (cerebras-pytorch 2.10); matched case-insensitively by Cerebras
OPTIMIZERS = [
    "SGD",
    "Adam",
    "AdamW",
    "Adamax",
    "Adadelta",
    "Adafactor",
    "Adagrad",
    "ASGD",
    "Lamb",
    "Lion",
    "Muon",
    "NAdam",
    "RAdam",
    "RMSprop",
    "Rprop",
]
# legacy optimizer keys that live elsewhere in the trainer layout (precision, loop, schedulers)
MOVED = [
    "optimizer_type",
    "learning_rate",
    "loss_scaling_factor",
    "initial_loss_scale",
    "steps_per_increase",
    "min_loss_scale",
    "max_loss_scale",
    "max_gradient_norm",
    "max_gradient_value",
    "log_summaries",
    "grad_accum_steps",
]


def _legacy_node(sections: dict[str, Any], path: str) -> dict[str, Any] | None:
    node: dict[str, Any] = {"properties": sections}
    for part in path.split("."):
        found = (node.get("properties") or {}).get(part)
        if found is None:
            return None
        node = found
    return node


def _put(root: dict[str, Any], path: list[str], node: dict[str, Any]) -> None:
    level = root
    for part in path[:-1]:
        holder = level.setdefault(part, {"type": "object", "additionalProperties": True})
        level = holder.setdefault("properties", {})
    current = level.get(path[-1])
    if current and "properties" in current and "properties" in node:
        merged = copy.deepcopy(node)
        merged["properties"] = {**node["properties"], **current["properties"]}
        level[path[-1]] = merged
    elif current and "properties" in current:
        current.setdefault("x-legacy", node.get("x-legacy"))
    else:
        level[path[-1]] = node


def _one_class(names: list[str], body: dict[str, Any]) -> dict[str, Any]:
    """`{Class: {...}}`: one key, a class name."""
    return {
        "type": "object",
        "minProperties": 1,
        "maxProperties": 1,
        "additionalProperties": body,
        "x-known-values": names,
    }


def build_trainer_schema(legacy: dict[str, Any]) -> dict[str, Any]:
    layouts = yaml.safe_load(LAYOUTS.read_text(encoding="utf-8"))
    sections = legacy["properties"]
    props: dict[str, Any] = {}
    for trainer_path, legacy_path in layouts["paths"]:
        source = legacy_path.removesuffix(".*")
        # a whole legacy section named as a value (init.sparsity.sparsity <- sparsity: 0.75) is no object
        found = _legacy_node(sections, source) if "." in source or legacy_path.endswith(".*") else None
        node = (
            copy.deepcopy(found)
            if found
            else ({"type": "object", "additionalProperties": True} if legacy_path.endswith(".*") else {})
        )
        node["x-legacy"] = legacy_path
        _put(props, trainer_path.removesuffix(".*").split("."), node)
    optimizer = copy.deepcopy(sections["optimizer"])
    optimizer["properties"] = {k: v for k, v in optimizer.get("properties", {}).items() if k not in MOVED}
    optimizer["type"] = ["object", "null"]
    init = props["init"]["properties"]
    init["optimizer"] = {**_one_class(OPTIMIZERS, optimizer), "x-legacy": "optimizer.* (optimizer_type is the class)"}
    scheduler = _one_class(layouts["schedulers"], {"type": "object", "additionalProperties": True})
    init["schedulers"] = {"type": "array", "items": scheduler, "x-legacy": "optimizer.learning_rate"}
    for section in ("callbacks", "loggers"):
        classes = list(dict.fromkeys(cls for cls, _, _ in layouts[section]))
        init[section] = {"type": "array", "items": _one_class(classes, {"type": ["object", "null"]})}
    init["device"] = {"type": "string", "x-note": "the backend type (CSX, CPU, GPU) when backend has none"}
    model = init["model"]
    # validate.py reads model_name (the key 2.2/2.3 named the model by) as name when name is absent
    model["anyOf"] = [{"required": ["name"]}, {"required": ["model_name"]}]
    props["validate_all"]["properties"]["val_dataloaders"] = {
        "anyOf": [
            props["validate_all"]["properties"]["val_dataloaders"],
            {"type": "array", "items": {"type": "object"}},
        ]
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": (
            "Generated by tools/gen_cerebras_schema.py (tools/cerebras_trainer_schema.py) from the legacy schema "
            "and mappings/cerebras-layouts.yaml; do not edit."
        ),
        "type": "object",
        "required": ["trainer"],
        "properties": {
            "trainer": {
                "type": "object",
                "required": ["init"],
                "properties": props,
                "additionalProperties": True,
                "x-note": "Model Zoo also takes a list of trainer configs (multi-phase); neoconv reads one at a time",
            }
        },
        "additionalProperties": False,
        "$defs": legacy.get("$defs", {}),
        "x-layout": "trainer",
        "x-generated-by": "tools/gen_cerebras_schema.py",
    }
