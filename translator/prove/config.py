"""Where each framework's environment is, named once in the project's configuration file: the
`[tool.neoconv.prove]` table of a `pyproject.toml`, or the `[prove]` table of a `.neoconv.toml`
(the project configuration file every command reads, io/project_config.py: as black and ruff do,
the first of these files found from the current folder upwards that has a neoconv table):

    [tool.neoconv.prove]                   # .neoconv.toml: [prove]
    env = { neox = "/opt/neox-env/bin/python", cerebras = "/opt/modelzoo-env/bin/python" }
    src = { neox = "/opt/gpt-neox", cerebras = "/opt/modelzoo/src" }

Relative paths are relative to the file's folder; nothing in them is expanded. `--env`/`--src` on the
command line win over the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import UsageError

KINDS = ("env", "src")


@dataclass(frozen=True)
class ProveConfig:
    file: str | None = None  # the file read (None: none found)
    env: dict[str, str] = field(default_factory=dict)
    src: dict[str, str] = field(default_factory=dict)


def find(start: Path | None = None) -> ProveConfig:
    """The prove table of the project's configuration file, from `start` (the current folder) upwards:
    the file every command reads (io/project_config.py), its `prove` sub-table."""
    from ..io.project_config import find as find_project

    project = find_project(start)
    if project.file is None:
        return ProveConfig()
    return _read(project.file, project.table.get("prove"))


def _read(path: Path, table: Any) -> ProveConfig:
    where = "[prove]" if path.name == ".neoconv.toml" else "[tool.neoconv.prove]"
    if table is None:
        return ProveConfig(str(path))
    if not isinstance(table, dict):
        raise UsageError(f"{path}: {where} must be a table (env = {{...}}, src = {{...}})")
    unknown = sorted(set(table) - set(KINDS))
    if unknown:
        raise UsageError(f"{path}: {where} has no key {unknown[0]!r}: it takes env and src (format = path tables)")
    out: dict[str, dict[str, str]] = {}
    for kind in KINDS:
        given = table.get(kind, {})
        if not isinstance(given, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in given.items()):
            raise UsageError(
                f'{path}: {where} {kind} must map format names to paths (e.g. {kind} = {{ neox = "..." }})'
            )
        out[kind] = {fmt: str((path.parent / value)) for fmt, value in given.items()}
    return ProveConfig(str(path), out["env"], out["src"])
