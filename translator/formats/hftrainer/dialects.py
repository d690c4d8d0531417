"""Which tool's train file this is (axolotl, LLaMA-Factory, alignment-handbook, TRL, or plain TrainingArguments),
the keys the tool hands to TrainingArguments under another name (mappings/hftrainer-dialects.yaml), and the keys
neither TrainingArguments nor any tool declares, named as unknown to that tool (a fork's: SimPO's recipes)."""

from __future__ import annotations

import json
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


@lru_cache(maxsize=1)
def _declared() -> tuple[frozenset[str], dict[str, str]]:
    """(every top-level key a TrainingArguments release or a tool declares, tool -> the versions read): the
    generated schema and key history (tools/gen_hftrainer_history.py, gen_hftrainer_schema.py)."""
    schema = json.loads((data_dir("schemas") / "hftrainer.schema.json").read_text(encoding="utf-8"))
    history = json.loads((data_dir("schemas") / "history" / "hftrainer.json").read_text(encoding="utf-8"))
    read = {name: str(info["version"]) for name, info in history.get("dialects", {}).items()}
    return frozenset(schema["properties"]), read


def undeclared(tree: dict[str, Any], dialect: str | None, as_written: dict[str, Any]) -> dict[str, str]:
    """Key -> why, for a dialect's file (`tree` under TrainingArguments' names, `as_written` the file's): the
    keys no TrainingArguments release nor any tool's classes declare, named as keys the file's own tool does
    not know (its versions read), so the loss says whose file it is."""
    if dialect is None:
        return {}
    known, read = _declared()
    marker = next(k for k in dialects()[dialect]["markers"] if k in as_written)  # (a renamed one too)
    told = f" (told by {marker})"
    versions = f" {read[dialect]}" if dialect in read else ""
    why = (
        f"the file is {dialect}'s{told}; no argument class of {dialect}{versions} nor TrainingArguments "
        "declares it: a fork's key?"
    )
    return {key: why for key in tree if key not in known}


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


def read_as(dialect: str | None, tree: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    """Keys whose value is one the tool takes where TrainingArguments' type has none (axolotl's
    gradient_checkpointing: offload): key -> (the value it is read as, what else the tool does with it)."""
    if dialect is None:
        return {}
    out: dict[str, tuple[Any, str]] = {}
    for key, meanings in (dialects()[dialect].get("values") or {}).items():
        value = tree.get(key)
        if isinstance(value, str) and value in meanings:
            out[key] = (meanings[value]["as"], str(meanings[value]["why"]))
    return out
