"""The canonical intermediate representation: canonical field -> Value with its provenance; when two
canonical values mean the same (one comparison for `neoconv diff` and for a translation's check of
its own output: light on imports, the CLI reads its default); and the one rule of neoconv's value
caches (a cache holding more than its bound is emptied before the next entry, so a batch of any
size keeps memory flat: most values repeat across files)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterator, NamedTuple, TypeVar


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


DEFAULT_RTOL = 1e-6  # `neoconv diff --rtol` and a translation's check of its own output


def values_equal(a: Any, b: Any, rtol: float = DEFAULT_RTOL) -> bool:
    """Two canonical values mean the same: numbers within `rtol` (1 and 1.0 alike, never a bool),
    lists item by item in order, mappings key by key, anything else by ==."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or math.isclose(a, b, rel_tol=rtol, abs_tol=0.0)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(values_equal(x, y, rtol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k], rtol) for k in a)
    return type(a) is type(b) and bool(a == b)


K = TypeVar("K")
V = TypeVar("V")


def keep(cache: dict[K, V], key: K, value: V, bound: int) -> V:
    """Store `value` under `key` (the cache emptied first when it holds more than `bound`); returns it."""
    if len(cache) > bound:
        cache.clear()
    cache[key] = value
    return value
