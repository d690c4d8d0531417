"""Every format neoconv knows, in one explicit table. The CLI pair commands are generated from it."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from .errors import UsageError


@dataclass(frozen=True)
class FormatSpec:
    name: str
    title: str
    module: str  # imported lazily: start-up must not pay for formats it does not use
    layouts: tuple[str, ...] = ()
    default_layout: str | None = None
    suffix: str = ".yml"
    can_write: bool = True

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


FORMATS: dict[str, FormatSpec] = {
    "neox": FormatSpec("neox", "GPT-NeoX YAML", "translator.formats.neox", suffix=".yml"),
    "deepspeed": FormatSpec("deepspeed", "DeepSpeed JSON", "translator.formats.deepspeed", suffix=".json"),
    "cerebras": FormatSpec(
        "cerebras", "Cerebras Model Zoo YAML", "translator.formats.cerebras",
        # legacy stays the default: the layout of Model Zoo 2.0-2.2 and of the reference docs, and the
        # one earlier neoconv output has; `--layout trainer` writes what Model Zoo 2.3+ reads natively
        layouts=("legacy", "trainer"), default_layout="legacy", suffix=".yaml",
    ),  # fmt: skip
    "veomni": FormatSpec(
        "veomni", "VeOmni YAML", "translator.formats.veomni",
        # nested is VeOmni since PR #538 (2026-03); flat is the seed docs' layout; `veomni2veomni
        # --layout nested` migrates a flat file. Writing into VeOmni also writes config.json beside it.
        layouts=("nested", "flat"), default_layout="nested", suffix=".yaml",
    ),  # fmt: skip
}


def get_format(name: str) -> FormatSpec:
    spec = FORMATS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise UsageError(f"unknown format {name!r}; known: {', '.join(FORMATS)}")
    return spec


def pairs() -> list[tuple[str, str]]:
    return [(a, b) for a in FORMATS for b in FORMATS if FORMATS[b].can_write]


def companion_format(path: str, main_format: str) -> str:
    """Format of a --with file: a .json beside a NeoX config is its DeepSpeed config."""
    if str(path).endswith(".json") and "deepspeed" in FORMATS and main_format != "deepspeed":
        return "deepspeed"
    if main_format == "deepspeed" and not str(path).endswith(".json") and "neox" in FORMATS:
        return "neox"
    return main_format
