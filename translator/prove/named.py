"""Which of a source's keys its release may have refused it for while the translation's report names
them: a refused source is probed again without these (translator/prove/__init__.py), so that a refusal
the report names is never an unnamed difference."""

from __future__ import annotations

import re
from typing import Any


def _keys(entry: dict[str, Any]) -> list[str]:
    key = entry.get("source_key")
    return [k.strip() for k in key.split(",") if k.strip()] if isinstance(key, str) else []


def named_keys(report: dict[str, Any] | None, message: str = "") -> list[str]:
    """The source keys the report names `unknown` (a fork's values, not the release's), and those it
    names `dropped` with no meaning carried (a key the release no longer reads, e.g. NeoX's output-only
    `gas`) that the release's refusal `message` names."""
    keys: list[str] = []
    for entry in (report or {}).get("entries") or ():
        if not isinstance(entry, dict):
            continue
        if entry.get("status") == "unknown":
            keys += _keys(entry)
        elif entry.get("status") == "dropped" and not entry.get("fields"):
            keys += [k for k in _keys(entry) if re.search(rf"\b{re.escape(k.rsplit('.', 1)[-1])}\b", message)]
    return list(dict.fromkeys(keys))
