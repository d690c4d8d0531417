"""Where each framework's environment is, named once in the project's configuration file: the
`[tool.neoconv.prove]` table of a `pyproject.toml`, or the `[prove]` table of a `.neoconv.toml`
(the name issue #31's project configuration file uses; as black and ruff do, the first of these
files found from the current folder upwards that has a neoconv table is the one read):

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


def _toml(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: not a TOML file neoconv can read ({exc}); fix it or remove its neoconv table") from None


def _table(path: Path) -> tuple[bool, Any]:
    """(has a neoconv table, its prove table) of one candidate file."""
    data = _toml(path)
    if path.name == ".neoconv.toml":
        return True, data.get("prove")
    tool = data.get("tool")
    neoconv = tool.get("neoconv") if isinstance(tool, dict) else None
    return neoconv is not None, neoconv.get("prove") if isinstance(neoconv, dict) else None


def find(start: Path | None = None) -> ProveConfig:
    """The prove table of the project's configuration file, from `start` (the current folder) upwards."""
    folder = (start or Path.cwd()).resolve()
    for place in (folder, *folder.parents):
        for name in (".neoconv.toml", "pyproject.toml"):
            path = place / name
            if not path.is_file():
                continue
            found, table = _table(path)
            if found:
                return _read(path, table)
    return ProveConfig()


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
            raise UsageError(f"{path}: {where} {kind} must map format names to paths (e.g. {kind} = {{ neox = \"...\" }})")
        out[kind] = {fmt: str((path.parent / value)) for fmt, value in given.items()}
    return ProveConfig(str(path), out["env"], out["src"])
