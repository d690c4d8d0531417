"""The settings of a VeOmni YAML file (keys nested or dotted), and their merge with option files:
VeOmni's parse_args loads one YAML file and deep-merges `--a.b.c value` options over it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from ...core.errors import InputError, NeoconvError
from ...io.yamlread import load as load_yaml
from .fields import fields


@dataclass
class Setting:
    path: tuple[str, ...]
    value: Any
    spelled: str  # the key as written: "train.lr" (dotted or nested), "--train.lr"
    file: str
    line: int | None
    dotted: bool = False
    written: tuple[str, ...] = ()  # the YAML keys as written, for messages ("train: seed" vs "train.seed")

    @property
    def shown(self) -> str:
        return ": ".join(self.written) if self.written else self.spelled


def yaml_key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Line of every mapping key as written (unsplit), for a tree handed in with its text."""
    lines: dict[tuple[str, ...], int] = {}
    try:
        load_yaml(text, key_lines=lines)
    except (yaml.YAMLError, NeoconvError):
        pass  # lines up to the problem are kept; the tree itself was given
    return lines


def yaml_settings(data: dict[str, Any], lines: dict[tuple[str, ...], int], name: str) -> list[Setting]:
    """Every leaf of a YAML file with its field path (dotted keys split outside free-form blocks);
    `lines`: the line of each key as written (yamlread's key_lines)."""
    spec = fields()
    out: list[Setting] = []

    def walk(node: dict[str, Any], path: tuple[str, ...], written: tuple[str, ...], dotted: bool) -> None:
        for key, value in node.items():
            if not isinstance(key, str):
                raise InputError(f"key {key!r} is not a name", file=name, line=lines.get(written))
            here_written = written + (key,)
            # keys inside a Dict-typed field (model_config, lora_config, mm_configs) are data, not fields
            free = bool(path) and spec.open_block(".".join(path) + ".*") is not None
            parts = (key,) if free or "." not in key else tuple(key.split("."))
            if any(not p for p in parts):
                raise InputError(f"key {key!r} has an empty part", file=name, line=lines.get(here_written))
            here = path + parts
            is_dotted = dotted or len(parts) > 1
            if isinstance(value, dict) and value:
                walk(value, here, here_written, is_dotted)
            else:
                out.append(
                    Setting(here, value, ".".join(here_written), name, lines.get(here_written), is_dotted, here_written)
                )

    walk(data, (), (), False)
    return out


def _place(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> Any:
    """Set a value; returns what was there (a value, or a block)."""
    node = tree
    for i, part in enumerate(path[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            return ("value", ".".join(path[: i + 1]))
        node = child
    previous = node.get(path[-1], _NOTHING)
    if isinstance(previous, dict) and previous:
        return ("block", ".".join(path))
    node[path[-1]] = value
    return previous


_NOTHING = object()


def merge_settings(settings: list[Setting]) -> tuple[dict[str, Any], dict[str, Setting], dict[str, str]]:
    """Settings in order -> (tree, leaf -> the setting it came from, leaf -> note).

    In one YAML file a field given twice (nested and dotted) must agree; an option file overrides
    the YAML, as VeOmni's _deep_update does.
    """
    tree: dict[str, Any] = {}
    origin: dict[str, Setting] = {}
    notes: dict[str, str] = {}
    for s in settings:
        leaf = ".".join(s.path)
        first = origin.get(leaf)
        previous = _place(tree, s.path, s.value)
        if isinstance(previous, tuple):
            where = previous[1]
            other: Setting | None = origin.get(where) or next(
                (o for k, o in origin.items() if k.startswith(where + ".")), None
            )
            shown = f"{other.shown} ({other.file}:{other.line})" if other else where
            raise InputError(
                f"{s.shown} and {shown} make {where} both a value and a block: keep one",
                file=s.file,
                line=s.line,
            )
        if first is not None:
            if s.spelled.startswith("--"):  # VeOmni: options deep-update the YAML; argparse keeps the last
                notes[leaf] = (
                    f"{s.spelled} ({s.file}:{s.line}) overrides {first.value!r} from {first.file}:{first.line}"
                )
            elif s.value != first.value or type(s.value) is not type(first.value):
                raise InputError(
                    f"{first.shown} (line {first.line}) and {s.shown} (line {s.line}) both set {leaf}, to "
                    f"{first.value!r} and {s.value!r}: keep one",
                    file=s.file,
                    line=s.line,
                    key=leaf,
                )
            else:
                notes[leaf] = (
                    f"given twice with the same value: as {first.shown} (line {first.line}) and {s.shown} (line {s.line})"
                )
        if first is None or s.spelled.startswith("--"):
            origin[leaf] = s  # the setting that decides the value (the first spelling of a duplicate)
    return tree, origin, notes
