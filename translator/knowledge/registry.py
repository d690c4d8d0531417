"""Every format neoconv knows (the packages under translator/formats that declare one). The CLI pair
commands are generated from it."""

from __future__ import annotations

from ..core.errors import UsageError
from ..formats import discover
from ..formats.spec import FormatSpec

FORMATS: dict[str, FormatSpec] = discover()


def get_format(name: str) -> FormatSpec:
    spec = FORMATS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise UsageError(f"unknown format {name!r}; known: {', '.join(FORMATS)}")
    return spec


def pairs() -> list[tuple[str, str]]:
    return [(a, b) for a in FORMATS for b in FORMATS if FORMATS[b].can_write]


def companion_format(path: str, main_format: str) -> str:
    """Format of a file given with --with beside a file of `main_format` (the main format's spec
    says: a .json beside a NeoX config is its DeepSpeed config); a format no package provides is
    read as the main one."""
    fmt = get_format(main_format).companion(path)
    return fmt if fmt in FORMATS else main_format
