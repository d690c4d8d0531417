"""`neoconv validate FILE`: a file loaded and read as the pipeline reads it, then every problem
validate.py finds. Apart from validate.py because it reads through the pipeline, whose check stage
validates every output with validate.py (a module the pipeline imports cannot import it back)."""

from __future__ import annotations

from .pipeline import load, read_ir
from .validate import Validation, validate_source


def validate_file(
    path: str,
    fmt: str | None = None,
    *,
    version: str | None = None,
    layout: str | None = None,
    model_config: str | None = None,
) -> Validation:
    from ..formats.detect import detect_file

    fmt = fmt or detect_file(path)
    source = load(path, fmt, layout=layout, model_config=model_config)
    return validate_source(source, path, fmt, version, source.texts.get(path, ""), read_ir)
