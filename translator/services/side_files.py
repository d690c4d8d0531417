"""The files a translation wrote beside its output (a TrainingArguments YAML's DeepSpeed JSON, a VeOmni YAML's
HF config.json), found for diff, validate and prove so that they read the output as its framework runs it: from
the translation's report (its target block lists each side file and its role) when one is given, else from the
output's own reference to it (the format's `side_file_key`). A side file is read only from the output's own
folder: a name that leads out of it (`..`, an absolute path, a symlink pointing elsewhere) is never followed."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..core.errors import InputError
from ..knowledge.registry import get_format

WITH = "with"  # read together with the output, as `--with FILE` would give it
MODEL_CONFIG = "model_config"  # the architecture the output keeps apart, as `--model-config FILE` would give it
ROLES = (WITH, MODEL_CONFIG)


def role(fmt: str) -> str:
    """How a side file of a `fmt` output is read with it."""
    return MODEL_CONFIG if get_format(fmt).takes_model_config else WITH


def listing(names: list[str], fmt: str) -> list[dict[str, str]]:
    """The report's `target.side_files`: each file written beside the output (named relative to its folder)."""
    return [{"file": name, "role": role(fmt)} for name in names]


@dataclass(frozen=True)
class OutputFiles:
    """An output and what is read with it."""

    paths: list[str]  # the output first, then its `with` side files
    model_config: str | None = None  # its `model_config` side file

    @property
    def side(self) -> list[str]:
        return self.paths[1:] + ([self.model_config] if self.model_config else [])

    def options(self) -> dict[str, Any]:
        return {"model_config": self.model_config} if self.model_config else {}


def output_files(output: str, fmt: str, report: Mapping[str, Any] | None = None) -> OutputFiles:
    """`output` with the side files read with it: those the report lists (each must be there), else the one
    the output names under its format's side_file_key (followed only when it is a file inside the folder)."""
    if output == "-":
        return OutputFiles([output])
    listed = _listed(report, output) if report is not None else None
    if listed is not None:
        found = [(_inside(output, name, strict=True), kind) for name, kind in listed]
    else:
        named = _named(output, fmt)
        path = _inside(output, named, strict=False) if named else None
        found = [(path, role(fmt))] if path else []
    paths = [output] + [str(p) for p, kind in found if p and kind == WITH]
    models = [str(p) for p, kind in found if p and kind == MODEL_CONFIG]
    return OutputFiles(paths, models[0] if models else None)


def _listed(report: Mapping[str, Any], output: str) -> list[tuple[str, str]] | None:
    """The report's side files as (name, role); None when it lists none (a report of before they were listed)."""
    target = report.get("target")
    entries = target.get("side_files") if isinstance(target, Mapping) else None
    if entries is None:
        return None
    if not isinstance(entries, list) or not all(
        isinstance(e, Mapping) and isinstance(e.get("file"), str) and e.get("role") in ROLES for e in entries
    ):
        raise InputError(
            "the report's target.side_files is not a list of {file, role} as --report writes it: give the "
            "report the translation wrote",
            file=output,
        )
    return [(e["file"], e["role"]) for e in entries]


def _named(output: str, fmt: str) -> str | None:
    """The file name the output gives under its format's side_file_key, if it gives one as text."""
    from ..io.documents import parse_json, parse_yaml, read_text

    key = get_format(fmt).side_file_key
    if not key:
        return None
    try:
        text = read_text(output)
        tree: Any = parse_json(text, output) if output.endswith(".json") else parse_yaml(text, output)
    except (InputError, OSError, ValueError):
        return None  # the reader says what is wrong with the file itself
    for part in key.split("."):
        tree = tree.get(part) if isinstance(tree, Mapping) else None
    return tree if isinstance(tree, str) and tree else None


def _inside(output: str, name: str, *, strict: bool) -> Path | None:
    """`name` resolved in the output's folder, if it is a file there and does not lead out of it (through
    `..`, an absolute path or a symlink); otherwise an InputError (strict: the report says it was written
    there) or None (the output's own reference, which the reader then names as not read)."""
    folder = Path(output).parent
    path = folder / name
    why = None
    if Path(name).is_absolute() or ".." in Path(name).parts:
        why = f"{name!r} leads out of the output's folder: a side file is read only from beside the output"
    elif os.path.commonpath([os.path.realpath(path), os.path.realpath(folder)]) != os.path.realpath(folder):
        why = (
            f"{name!r} is a symlink leading out of the output's folder: a side file is read only from beside the output"
        )
    elif not path.is_file():
        why = (
            f"the translation's report lists {name!r} as written beside the output, and there is no such file: "
            "keep the side files beside the output, or give the report of this translation"
        )
    if why is None:
        return path
    if strict:
        raise InputError(why, file=output)
    return None
