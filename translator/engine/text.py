"""How values and reasons read in messages."""

from __future__ import annotations

from typing import Any


def short(value: Any) -> str:
    """A value as a message shows it: strings quoted, anything past 60 characters cut."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def join(*parts: str) -> str:
    """Reasons joined with '; ', empty ones left out."""
    return "; ".join(p for p in parts if p)
