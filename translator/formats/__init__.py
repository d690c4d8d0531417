"""Every format is a package here that declares `FORMAT` (a spec.FormatSpec): found, not listed, so
adding a framework touches nothing outside its package, its table, its schema and its tests.
A package without FORMAT (hf: the HF config.json tables VeOmni uses) is a helper of other formats."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from .spec import FormatSpec


@lru_cache(maxsize=None)
def discover() -> dict[str, FormatSpec]:
    """name -> spec of every format package, sorted by name (importing a package reads its spec only)."""
    found: dict[str, FormatSpec] = {}
    for info in pkgutil.iter_modules(__path__, __name__ + "."):
        if info.ispkg:
            spec = getattr(importlib.import_module(info.name), "FORMAT", None)
            if isinstance(spec, FormatSpec):
                found[spec.name] = spec
    return dict(sorted(found.items()))
