"""The project's configuration file: the options a repository always passes, found as black and ruff
find theirs. From a folder (the inputs' common folder; the current one) upwards, the first
`.neoconv.toml` (its top level is neoconv's table) or `pyproject.toml` with a `[tool.neoconv]` table
is the one read; a `pyproject.toml` without that table is passed over.

    [tool.neoconv]                          # .neoconv.toml: the same keys at its top level
    world-size = 8
    set = ["model.vocab_size=50304", "cerebras:train_input.data_dir=./data"]
    layout = "trainer"

    [tool.neoconv.prove]                    # .neoconv.toml: [prove] (read by `neoconv prove`)
    env = { neox = "/opt/neox-env/bin/python" }

This module only finds and reads the file: what a key means is the command line's business
(cli/project.py), and a sub-table is read by the module it belongs to (`section("prove")`).
Nothing in the file is expanded or executed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..core.errors import UsageError

DEDICATED = ".neoconv.toml"
PYPROJECT = "pyproject.toml"


@dataclass(frozen=True)
class ProjectConfig:
    file: Path | None = None  # the file read (None: none found)
    table: Mapping[str, Any] = field(default_factory=dict)  # neoconv's table of it

    @property
    def where(self) -> str:
        """How a message names the table: `pyproject.toml [tool.neoconv]`, `.neoconv.toml`."""
        if self.file is None:
            return "no project configuration file"
        shown = _shown(self.file)
        return f"{shown} [tool.neoconv]" if self.file.name == PYPROJECT else shown

    def section(self, name: str) -> Mapping[str, Any] | None:
        """A sub-table (`prove`: `[tool.neoconv.prove]`, `[prove]` of a .neoconv.toml), None when absent."""
        value = self.table.get(name)
        if value is not None and not isinstance(value, Mapping):
            raise UsageError(f"{self.where}: {name} must be a table ([{name}] or {name} = {{...}})")
        return value

    def resolve(self, path: str) -> str:
        """A path the file names, relative to the file's folder (an absolute one as it is)."""
        if self.file is None or Path(path).is_absolute():
            return path
        return str(self.file.parent / path)


def find(start: str | Path | None = None) -> ProjectConfig:
    """The project configuration that applies to `start` (a folder, or a file: its folder; default the
    current folder), searching upwards; an empty one when there is none."""
    folder = Path(start) if start is not None else Path.cwd()
    folder = folder.absolute()
    if not folder.is_dir():
        folder = folder.parent
    for place in (folder, *folder.parents):
        for name in (DEDICATED, PYPROJECT):
            path = place / name
            if path.is_file():
                table = _neoconv_table(path)
                if table is not None:
                    return ProjectConfig(path, table)
    return ProjectConfig()


def common_folder(paths: Iterable[str | Path]) -> Path:
    """The deepest folder holding every path (a file counts as its folder): where the search starts."""
    import os

    folders = [
        str(Path(p).absolute() if Path(p).is_dir() else Path(p).absolute().parent) for p in paths if str(p) != "-"
    ]
    return Path(os.path.commonpath(folders)) if folders else Path.cwd()


def _neoconv_table(path: Path) -> Mapping[str, Any] | None:
    import tomllib

    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        if path.name == PYPROJECT and "neoconv" not in _text(path):
            return None  # another tool's broken file: not ours to judge
        raise UsageError(
            f"{path}: not a TOML file neoconv can read ({exc}); fix it or remove its neoconv settings"
        ) from None
    if path.name == DEDICATED:
        return data
    tool = data.get("tool")
    table = tool.get("neoconv") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"{path}: tool.neoconv must be a table ([tool.neoconv])")
    return table


def _shown(path: Path) -> str:
    """The file as a message names it: relative to the current folder when it is below it."""
    try:
        return str(path.relative_to(Path.cwd().absolute()))
    except ValueError:
        return str(path)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
