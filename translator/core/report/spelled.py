"""Values as report messages show them: in the config files' spelling (true, false, null; strings
quoted), anything past 60 characters cut."""

from __future__ import annotations

from typing import Any


def _spelled(value: Any) -> str:
    """A value as the config files spell it (YAML and JSON both: true, false, null), not Python's."""
    if value is True or value is False or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_spelled(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_spelled(v)}" for k, v in value.items()) + "}"
    return str(value)


def short(value: Any) -> str:
    """A value as a message shows it: in the files' spelling, strings quoted, anything past 60
    characters cut."""
    text = _spelled(value)
    return text if len(text) <= 60 else text[:57] + "..."


def short_repr(value: Any) -> str:
    """A value as a read-back message shows it (repr, cut at 60)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["short", "short_repr"]
