"""`neoconv validate FILE`: a file loaded and read as the pipeline reads it, then every problem
validate.py finds. Apart from validate.py because it reads through the pipeline, whose check stage
validates every output with validate.py (a module the pipeline imports cannot import it back)."""

from __future__ import annotations

from typing import Any

from .pipeline import load, read_ir
from .side_files import output_files
from .validate import Validation, validate_source


def validate_file(
    path: str,
    fmt: str | None = None,
    *,
    version: str | None = None,
    layout: str | None = None,
    model_config: str | None = None,
    report: dict[str, Any] | None = None,
) -> Validation:
    """`report`: of the translation that wrote `path`: the side files it lists are read with it."""
    from ..formats.detect import detect_file

    fmt = fmt or detect_file(path)
    source = _load(path, fmt, layout, model_config, report)
    return validate_source(source, path, fmt, version, source.texts.get(path, ""), read_ir)


def _load(path: str, fmt: str, layout: str | None, model_config: str | None, report: dict[str, Any] | None) -> Any:
    """The file with what was written beside it (TrainingArguments' deepspeed JSON): from the report, else
    what the file names (services/side_files.py)."""
    files = output_files(path, fmt, report)
    given = files.paths if len(files.paths) > 1 else path
    return load(given, fmt, layout=layout, model_config=model_config or files.model_config)
