"""YAML text for the values a rewrite writes fresh, in the indentation the file already uses."""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from ..yamlread import RESOLVERS

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./+-]*\Z")  # text PyYAML writes plain (or in plain quotes)
_SPELLED: dict[str, str] = {}


def scalar(value: Any, quote: str | None = None) -> str:
    """One line of YAML that yaml.safe_load reads back as `value` (a scalar, [] or {}).
    `quote`: the quoting the old value had, kept for a new text value when it can say it."""
    kind = type(value)
    if kind is str and quote not in ('"', "'") and _PLAIN.match(value):
        spelled = _SPELLED.get(value)
        if spelled is None:
            # PyYAML's spelling: plain, or single quotes when YAML would read it as something else
            read_as_other = any(p.match(value) for _, p in RESOLVERS.get(value[0], ()))
            spelled = f"'{value}'" if read_as_other else value
            if len(_SPELLED) < 10_000:
                _SPELLED[value] = spelled
        return spelled
    if kind is int:
        return str(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if kind is float and math.isfinite(value):
        text = repr(value).lower()
        return text.replace("e", ".0e", 1) if "." not in text and "e" in text else text
    if isinstance(value, str):
        style = quote if quote in ('"', "'") else None
        if "\n" in value or not value.isprintable():
            style = '"'  # escapes keep it on one line
        text = _dump(value, style)
        if "\n" in text and style != '"':
            text = _dump(value, '"')
        return text
    return _dump(value, None)


def flow(value: Any) -> str:
    """A list or mapping on one line ([a, b], {k: v})."""
    text: str = yaml.dump(
        value, Dumper=_Dumper, default_flow_style=True, width=1 << 30, allow_unicode=True, sort_keys=False
    )
    return text.rstrip("\n").removesuffix("\n...")


def _dump(value: Any, style: str | None) -> str:
    text: str = yaml.dump(
        value, Dumper=_Dumper, default_style=style, default_flow_style=True, width=1 << 30, allow_unicode=True
    )
    text = text.rstrip("\n")
    return text[: -len("\n...")] if text.endswith("\n...") else text


def entry(key: str, value: Any, col: int, indent: int, dash: int) -> list[str]:
    """`key: value` at column `col` (`key` as it is to be written); a non-empty list or mapping
    goes on the lines below."""
    head = " " * col + key + ":"
    if isinstance(value, (dict, list)) and value:
        return [head] + block(value, col, indent, dash)
    return [head + " " + scalar(value)]


def block(value: dict[Any, Any] | list[Any], col: int, indent: int, dash: int) -> list[str]:
    """The lines of a non-empty list or mapping that belongs to a key at column `col`."""
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            lines += entry(scalar(key), item, col + indent, indent, dash)
        return lines
    at = col + dash
    for item in value:
        if isinstance(item, dict) and item:
            inner = [line for key, v in item.items() for line in entry(scalar(key), v, at + 2, indent, dash)]
            inner[0] = " " * at + "- " + inner[0][at + 2 :]
            lines += inner
        elif isinstance(item, list) and item:
            lines.append(" " * at + "- " + flow(item))
        else:
            lines.append(" " * at + "- " + scalar(item))
    return lines
