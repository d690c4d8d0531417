"""Locate the data folders (`mappings/`, `schemas/`) both in a source checkout and when installed.

setup.cfg installs them as `translator/mappings` and `translator/schemas`; in a checkout they sit
beside the package. Looking in both places keeps tests, editable and regular installs working.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # core/ is one level below the package


@lru_cache(maxsize=None)
def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"neoconv data folder {name!r} not found next to {_PACKAGE}")
