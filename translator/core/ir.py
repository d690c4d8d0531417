"""The canonical intermediate representation: canonical field -> Value with its provenance."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterator, NamedTuple


class Origin(str, Enum):
    EXPLICIT = "explicit"  # written in the source file
    DERIVED = "derived"  # computed by a formula from other values
    DEFAULT = "default"  # the source framework's documented default; the file left it out
    USER = "user"  # given on the command line (--set, --world-size)


class Value(NamedTuple):  # immutable and cheap: one per canonical field of every file read
    value: Any
    origin: Origin
    source_keys: tuple[str, ...] = ()
    file: str | None = None
    note: str = ""  # why the value is what it is, when that is not obvious (coercions, traps)


@dataclass
class IR:
    """Canonical fields plus framework-scoped extensions (source leaves with no canonical field)."""

    fields: dict[str, Value] = field(default_factory=dict)
    extensions: dict[str, dict[str, Any]] = field(default_factory=dict)  # format -> leaf -> value

    def get(self, name: str) -> Any:
        value = self.fields.get(name)
        return None if value is None else value.value

    def has(self, name: str) -> bool:
        return name in self.fields and self.fields[name].value is not None

    def set(self, name: str, value: Value) -> None:
        self.fields[name] = value

    def __iter__(self) -> Iterator[tuple[str, Value]]:
        return iter(self.fields.items())

    def plain(self) -> dict[str, Any]:
        """Canonical values only, for diffing and tests."""
        return {k: v.value for k, v in self.fields.items() if v.value is not None}
