"""The library's translation API, kept at this path for callers that import it by name
(`import neoconv.api`; a measurement script runs `import translator.api` from a checkout): the
translation pipeline lives in services/pipeline.py."""

from __future__ import annotations

from .services.pipeline import ConfigInput, Translation, check_options, dump, load, parse_set, read_ir, translate

__all__ = ["ConfigInput", "Translation", "check_options", "dump", "load", "parse_set", "read_ir", "translate"]
