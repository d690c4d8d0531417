"""The key histories (schemas/history/<fmt>.json, generated from each framework's own source at
every release): which releases read a key, and what it was renamed to. `neoconv validate
--version` asks them whether a key belongs to a release."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .errors import UsageError
from .resources import data_dir


@dataclass(frozen=True)
class History:
    fmt: str
    releases: tuple[str, ...]  # oldest first
    aliases: dict[str, str]
    keys: dict[str, Any]
    renames: tuple[dict[str, Any], ...]

    def release(self, label: str) -> str:
        """A release label or alias (`current`, `2.4`, `v0.1.10`) as a release label."""
        found = self.aliases.get(label, label)
        if found not in self.releases:
            raise UsageError(f"--version {label}: no {self.fmt} release of that name; known: {self.known()}")
        return found

    def known(self) -> str:
        names = list(self.aliases) + list(self.releases)
        return ", ".join(names[:12]) + (f", ... ({len(names)} names)" if len(names) > 12 else "")

    def record(self, key: str) -> tuple[str, dict[str, Any]] | None:
        """The history of `key`, or of the nearest enclosing key the history has (a leaf inside a
        block the framework reads whole)."""
        parts = key.split(".")
        for end in range(len(parts), 0, -1):
            head = ".".join(parts[:end])
            if head in self.keys:
                return head, self.keys[head]
        return None

    def reads(self, key: str, release: str, *, exact: bool = False) -> bool | None:
        """Does `release` read `key` (or, unless `exact`, the block around it)? None: the history does
        not know the key."""
        found = (key, self.keys[key]) if exact and key in self.keys else (None if exact else self.record(key))
        if found is None:
            return None
        at = self.releases.index(release)
        index = self.releases.index
        return any(index(first) <= at <= index(last) for first, last in found[1].get("in", ()))

    def why_not(self, key: str, release: str) -> str:
        """Why `release` does not read `key`: the releases that do, and a rename."""
        found = self.record(key)
        assert found is not None
        name, record = found
        spans = ", ".join(first if first == last else f"{first} to {last}" for first, last in record.get("in", ()))
        said = f"{self.title} {release} does not read {name} (read by {spans})"
        for rename in self.renames:
            if rename.get("from") == name:
                return f"{said}; renamed to {rename['to']} in {rename['release']}"
        return said

    @property
    def title(self) -> str:
        from .registry import FORMATS

        return FORMATS[self.fmt].title.split(" YAML")[0].split(" JSON")[0]


@lru_cache(maxsize=None)
def history(fmt: str) -> History | None:
    path = data_dir("schemas") / "history" / f"{fmt}.json"
    if not path.is_file():
        return None
    raw = json.loads(path.read_text(encoding="utf-8"))
    return History(fmt, tuple(r["label"] for r in raw["releases"]), dict(raw.get("aliases", {})), raw["keys"],
                   tuple(raw.get("renames", ())))  # fmt: skip
