"""Which tool's train file this is (axolotl, LLaMA-Factory, TRL, or plain TrainingArguments), and the keys the
tool hands to TrainingArguments under another name (mappings/hftrainer-dialects.yaml)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ...core.errors import InputError
from ...core.resources import data_dir
from ...io.yamlread import load as load_yaml


@lru_cache(maxsize=1)
def dialects() -> dict[str, dict[str, Any]]:
    raw = load_yaml((data_dir("mappings") / "hftrainer-dialects.yaml").read_text(encoding="utf-8"))
    return dict(raw["dialects"])


def dialect_of(tree: dict[str, Any]) -> str | None:
    """The first dialect with a marker key in the file (None: plain TrainingArguments)."""
    for name, info in dialects().items():
        if set(info["markers"]) & set(tree):
            return name
    return None


def renamed(tree: dict[str, Any], dialect: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    """The tree with the dialect's keys under their TrainingArguments names, and name -> as written."""
    if dialect is None:
        return tree, {}
    out: dict[str, Any] = {}
    written: dict[str, str] = {}
    renames = dialects()[dialect]["renames"]
    for key, value in tree.items():
        target = renames.get(key, key)
        if target != key and target in tree:
            raise InputError(
                f"{key} and {target} both given: {dialect} hands {key} to TrainingArguments as {target}", key=key
            )
        out[target] = value
        if target != key:
            written[target] = key
    return out, written


def runtime(dialect: str | None, tree: dict[str, Any]) -> dict[str, str]:
    """Leaves whose value the tool decides at launch ("auto"), with why."""
    if dialect is None:
        return {}
    return {k: why for k, why in dialects()[dialect]["runtime"].items() if tree.get(k) == "auto"}
