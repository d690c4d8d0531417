"""The library's translation API, kept at this path for callers that import it by name
(`import neoconv.api`; a measurement script runs `import translator.api` from a checkout): the
translation pipeline lives in services/pipeline.py."""

from __future__ import annotations

import importlib.metadata  # noqa: F401  (the installed formats are found with it on the first translation)

from .services.dumping import dump
from .services.pipeline import ConfigInput, Translation, check_options, load, parse_set, read_ir, translate

# Every translation settles its schedule (and a writer fits one): those modules are loaded with the
# API instead of inside the first translation (where a run of distinct files would pay for them).
from .schedule import compare, fields  # noqa: F401

__all__ = ["ConfigInput", "Translation", "check_options", "dump", "load", "parse_set", "read_ir", "translate"]
