"""Toy TOML job files read with the standard library's TOML parser (one file; an empty one is every default)."""

from __future__ import annotations

import tomllib
from typing import Any

from neoconv.core.errors import InputError
from neoconv.formats.spec import ModelConfig, Reader
from neoconv.io.documents import read_text
from neoconv.knowledge.source import Source


def _line_of(text: str, key: str) -> int | None:
    """The line of a key (`a.b`: its last part, after the table it sits in)."""
    table, _, name = key.rpartition(".")
    start = 0
    if table:
        header = text.find(f"[{table}]")
        if header < 0:
            return None
        start = header
    for number, line in enumerate(text[start:].splitlines(), text.count("\n", 0, start) + 1):
        if line.split("=", 1)[0].strip() == name:
            return number
    return None


class ToyReader(Reader):
    format = "toyjob"

    def read(self, paths: list[str], *, layout: str | None = None, model_config: ModelConfig = None) -> Source:
        if len(paths) != 1:
            raise InputError("a toy job is one file; give one", file=str(paths[-1]))
        name = str(paths[0])
        text = read_text(name)
        try:
            tree: dict[str, Any] = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"invalid TOML: {exc}", file=name) from None
        source = Source("toyjob", tree, [name], {name: text}, {k: name for k in tree})
        source.locate = _line_of
        return source


def _sniff_text(text: str) -> float | None:
    """How surely a text is a toy job (content detection, `neoconv diff`, a file given to another
    format's command): it reads as TOML, and the share of its tables the schema knows."""
    try:
        tree = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    if not tree:
        return None
    from neoconv.formats.detect import score

    return score(tree, "toyjob")


ToyReader.sniff_text = staticmethod(_sniff_text)
READER = ToyReader()
