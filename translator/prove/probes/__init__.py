"""The probes: one file per format, `<format>_probe.py`, run as a script by the framework's own
interpreter (so they import only the standard library, `_probe.py` beside them, and the framework).
This module finds them and reads what each says of itself (its `PROBE` literal) without importing
it: adding a format's probe is adding its file.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SUFFIX = "_probe.py"


@dataclass(frozen=True)
class ProbeSpec:
    format: str
    path: Path
    framework: str  # the framework's name, as users know it
    checkout: str | None  # a path inside the framework's source tree, when it is used from one (--src)
    installed: str | None  # the package to import when it may be installed instead of checked out
    imports: tuple[str, ...]  # what the interpreter must be able to import
    install: str  # how to get the environment (packages and versions)
    source: str | None  # where the source tree comes from
    hints: tuple[tuple[str, str], ...] = ()  # job key -> canonical field of neoconv's reading the probe may use

    @property
    def needs_checkout(self) -> bool:
        """Only usable from a source tree (no installed package stands for it)."""
        return self.checkout is not None and self.installed is None


def _literal(path: Path) -> dict[str, Any]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "PROBE" for t in node.targets):
            value = ast.literal_eval(node.value)
            if isinstance(value, dict):
                return value
    raise ValueError(f"{path} defines no PROBE literal")


@lru_cache(maxsize=None)
def probes() -> dict[str, ProbeSpec]:
    """Every probe shipped, by format."""
    out = {}
    for path in sorted(p for p in HERE.glob(f"*{SUFFIX}") if not p.name.startswith("_")):
        fmt = path.name[: -len(SUFFIX)]
        meta = _literal(path)
        out[fmt] = ProbeSpec(
            fmt,
            path,
            meta["framework"],
            meta.get("checkout"),
            meta.get("installed"),
            tuple(meta.get("imports", ())),
            meta.get("install", ""),
            meta.get("source"),
            tuple(sorted(meta.get("hints", {}).items())),
        )
    return out
