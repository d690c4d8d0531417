"""How a layer below the formats reaches a format's code without importing it: the format registry
(knowledge/registry.py) sets `module_of` when it is first imported, and a caller imports the module it
names (a schedule phase `<format>.<form>` is evaluated by that format's `scheduler` module). Until
the registry is imported no format is known."""

from __future__ import annotations

from typing import Callable


def _none(namespace: str, role: str) -> str | None:
    return None


# (format name, role such as "formulas" or "scheduler") -> the module playing it, or None
module_of: Callable[[str, str], str | None] = _none
