"""Toy TOML job files written: top-level values first, then one `[table]` per block, in the table's order."""

from __future__ import annotations

import json
import math
from typing import Any

from neoconv.core.errors import InputError
from neoconv.formats.spec import WriteContext, WriteResult, Writer
from neoconv.io.documents import unflatten


def _value(value: Any, key: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = repr(value)
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v, key) for v in value) + "]"
    raise InputError(f"{key}: a TOML job cannot hold {type(value).__name__} {value!r}")


def _table(lines: list[str], name: str, block: dict[str, Any]) -> None:
    scalars = {k: v for k, v in block.items() if not isinstance(v, dict) and v is not None}
    if scalars or not any(isinstance(v, dict) for v in block.values()):
        if name:
            lines.append(f"\n[{name}]")
        lines.extend(f"{k} = {_value(v, f'{name}.{k}' if name else k)}" for k, v in scalars.items())
    for key, value in block.items():
        if isinstance(value, dict):
            _table(lines, f"{name}.{key}" if name else key, value)


class ToyWriter(Writer):
    format = "toyjob"

    def write(self, leaves: dict[str, Any], ctx: WriteContext) -> WriteResult:
        document = unflatten(leaves)
        return WriteResult(document, self.header(document, ctx))

    def header(self, document: dict[str, Any], ctx: WriteContext) -> list[str]:
        return [f"# Toy TOML job written by neoconv from {ctx.sources}"] if ctx.sources else []

    def serialise(self, document: dict[str, Any]) -> str:
        lines: list[str] = []
        _table(lines, "", document)
        return "\n".join(lines).lstrip("\n") + "\n"


WRITER = ToyWriter()
