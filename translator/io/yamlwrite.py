"""YAML text for plain config data, byte for byte what PyYAML's block style writes, but faster.

PyYAML represents every value through Python-level node objects before its (C) emitter runs; for
the small, simple documents neoconv writes that costs more than reading them. `dump` writes the
common shapes directly (mappings, sequences, numbers, booleans, null, short identifier-like
strings) and returns None for anything else, so the caller can hand the whole document to
PyYAML: output never differs between the two paths (tests/test_yamlwrite.py checks this).
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..core.ir import keep
from .yamlread import MAX_DEPTH, RESOLVERS

WIDTH = 100  # line width for PyYAML too (io.dump_yaml): a plain scalar past it is folded
# Text PyYAML writes plain or in plain single quotes, in block context: no indicators, no escapes.
_SIMPLE = re.compile(r"(?!\.\.\.)[A-Za-z0-9_/.~<=][A-Za-z0-9_./+@~<= -]*\Z")


class _Unsure(Exception):
    """A value whose spelling PyYAML decides by rules not copied here."""


def dump(data: dict[str, Any]) -> str | None:
    """The block-style YAML PyYAML would write for `data`, or None when PyYAML should write it."""
    if not data:
        return "{}\n"
    out: list[str] = []
    try:
        _mapping(data, 0, out, inline=False, depth=0)
    except _Unsure:
        return None
    return "".join(out)


def _mapping(data: dict[Any, Any], indent: int, out: list[str], inline: bool, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _Unsure
    pad = " " * indent
    for key, value in data.items():
        if not isinstance(key, str):
            raise _Unsure
        key_text = _text(key, indent + len(key))
        _entry(value, f"{'' if inline else pad}{key_text}:", indent, out, depth, indent + len(key_text) + 2, item=False)
        inline = False


def _sequence(items: list[Any], indent: int, out: list[str], inline: bool, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise _Unsure
    pad = " " * indent
    for item in items:
        _entry(item, f"{'' if inline else pad}-", indent, out, depth, indent + 2, item=True)
        inline = False


def _entry(value: Any, head: str, indent: int, out: list[str], depth: int, column: int, *, item: bool) -> None:
    """One mapping entry (`head` is "key:") or list item ("-"): a block goes on the next lines,
    except in a list item, where it starts on the item's line; PyYAML indents no list in a mapping."""
    if isinstance(value, dict) and value:
        out.append(head + (" " if item else "\n"))
        _mapping(value, indent + 2, out, item, depth + 1)
    elif isinstance(value, list) and value:
        out.append(head + (" " if item else "\n"))
        _sequence(value, indent + 2 if item else indent, out, item, depth + 1)
    else:
        out.append(f"{head} {_scalar(value, column)}\n")


def _scalar(value: Any, column: int) -> str:
    if value is None:
        return "null"
    kind = type(value)
    if kind is str:
        return _text(value, column)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value).lower()
        return text.replace("e", ".0e", 1) if "." not in text and "e" in text else text
    if kind is dict and not value:
        return "{}"
    if kind is list and not value:
        return "[]"
    raise _Unsure


_SPELLED: dict[str, str] = {}  # text without spaces -> its spelling: keys recur in every file


def _text(value: str, column: int) -> str:
    """A string as PyYAML spells it: plain, or in single quotes when YAML would read it as
    something else (yes, 1.0, null, 2024-01-01); anything harder is left to PyYAML."""
    spelled = _SPELLED.get(value)
    if spelled is not None:
        return spelled
    if not _SIMPLE.match(value):
        raise _Unsure  # empty, leading indicator, quotes, colons, escapes, non-ASCII, ...
    if " " in value and (value.endswith(" ") or column + len(value) > WIDTH):
        raise _Unsure  # PyYAML quotes trailing spaces and folds long lines at spaces
    spelled = value
    for _, pattern in RESOLVERS.get(value[0], ()):
        if pattern.match(value):
            spelled = f"'{value}'"
            break
    if " " not in value and len(value) <= 64:  # a spelling that depends on nothing but the text
        keep(_SPELLED, value, spelled, 1_000)
    return spelled
