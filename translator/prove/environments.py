"""Which interpreter and which source tree run each format's probe: `--env FMT=PYTHON` and `--src
FMT=PATH` first, then the project's configuration file (config.py), then the current interpreter
when it can import what the probe needs."""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import UsageError
from .config import ProveConfig
from .probes import ProbeSpec, probes


@dataclass(frozen=True)
class Environment:
    format: str
    spec: ProbeSpec
    python: str | None
    source: str | None
    origin: str  # where the interpreter was named: --env, the configuration file, the current interpreter
    problem: str | None = None  # why the probe cannot run (None: it is run; the probe itself may still say why not)

    def to_json(self) -> dict[str, str | None]:
        return {
            "format": self.format,
            "framework": self.spec.framework,
            "python": self.python,
            "source": self.source,
            "origin": self.origin,
            "problem": self.problem,
        }


def parse_pairs(values: tuple[str, ...] | list[str], option: str) -> dict[str, str]:
    """`--env neox=/opt/neox/bin/python` (repeatable) -> {"neox": "/opt/neox/bin/python"}."""
    known = probes()
    out: dict[str, str] = {}
    for text in values:
        fmt, sep, path = text.partition("=")
        if not sep or not path:
            raise UsageError(f"{option} {text}: give FORMAT=PATH (e.g. {option} neox=/opt/neox/bin/python)")
        if fmt not in known:
            raise UsageError(f"{option} {text}: no probe for {fmt!r}; formats with one: {', '.join(known)}")
        out[fmt] = path
    return out


def _missing_imports(spec: ProbeSpec) -> list[str]:
    """What the current interpreter cannot import of what the probe needs (found, not imported)."""
    missing = []
    for name in spec.imports:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            missing.append(name)
    return missing


def resolve(fmt: str, env: dict[str, str], src: dict[str, str], config: ProveConfig) -> Environment:
    spec = probes()[fmt]
    where = config.file or "the configuration file"
    source = src.get(fmt) or config.src.get(fmt)
    if fmt in env:
        python, origin = env[fmt], "--env"
    elif fmt in config.env:
        python, origin = config.env[fmt], where
    else:
        python, origin = sys.executable, "the current interpreter"
    problem = None
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        problem = f"the {spec.framework} interpreter {python} (from {origin}) is not an executable file"
    elif source is not None and spec.checkout and not (Path(source) / spec.checkout).exists():
        problem = f"{source} is not a {spec.framework} source tree: it has no {spec.checkout}"
    elif source is None and spec.needs_checkout:
        problem = (
            f"{spec.framework} is used from a source checkout: give it with --src {fmt}=PATH "
            f"({spec.source or 'its repository'})"
        )
    elif origin == "the current interpreter":
        missing = _missing_imports(spec)
        if spec.installed and source is None and importlib.util.find_spec(spec.installed.split(".")[0]) is None:
            missing.append(spec.installed)
        if missing:
            problem = (
                f"no interpreter for {spec.framework}: give --env {fmt}=PATH/TO/python (this one, {python}, "
                f"cannot import {', '.join(missing)})"
            )
    return Environment(fmt, spec, python, source, origin, problem)
