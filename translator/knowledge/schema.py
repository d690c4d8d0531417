"""Per-format JSON Schemas (schemas/<format>.schema.json) as an index of known keys and types.

The engine uses the index to tell a known-but-unmapped key (an extension) from an unknown one,
to suggest the closest known key, and to check raw value types before any transform runs.
Full jsonschema validation of outputs lives in `validate.py` (imported only when needed).
"""

from __future__ import annotations

import copy
import json
import re
from functools import lru_cache
from typing import Any

from .history import History, load_history

_FLOAT_TEXT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)$")
_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}


def _types_of(node: dict[str, Any], defs: dict[str, Any] | None = None) -> frozenset[str]:
    found: set[str] = set()
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and defs:  # e.g. one LR scheduler mapping
        found.update(_types_of(defs.get(ref[len("#/$defs/") :], {}), defs))
    kind = node.get("type")
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, list):
        found.update(kind)
    if "enum" in node:
        found.update(_JSON_TYPES.get(type(v), "null") for v in node["enum"])
    for combo in ("anyOf", "oneOf"):
        for option in node.get(combo, []):
            found.update(_types_of(option, defs))
    return frozenset(found)


class _Guess(Exception):
    """A value we could read only by guessing what was meant: carried, but reported lossy."""

    def __init__(self, value: Any, note: str) -> None:
        super().__init__(note)
        self.value = value
        self.note = note


class SchemaIndex:
    def __init__(self, schema: dict[str, Any], root: tuple[str, ...] = ()) -> None:
        self.schema = schema
        self._nodes: dict[str, dict[str, Any]] = {}
        self._types: dict[str, frozenset[str]] = {}  # key -> JSON types, worked out on first use
        self._open: set[str] = set()  # paths below which any key is accepted
        # the framework's key history at one release (with_release): every key any release read is known
        self._history: History | None = None
        self._release = ""
        self._title = ""
        node = schema
        for part in root:
            node = node.get("properties", {}).get(part, {})
        self._walk(node, "")

    def _walk(self, node: dict[str, Any], prefix: str) -> None:
        props = node.get("properties")
        if not props:
            if prefix:
                self._open.add(prefix)
            return
        for name, child in props.items():
            path = f"{prefix}{name}"
            self._nodes[path] = child
            if isinstance(child, dict):
                self._walk(child, path + ".")

    def known(self, leaf: str) -> bool:
        """A leaf is known when the schema lists it, or sits inside a block the schema leaves open,
        or (with a release) some release of the framework read it."""
        if leaf in self._nodes:
            return True
        parts = leaf.split(".")
        for i in range(len(parts) - 1, 0, -1):
            head = ".".join(parts[:i])
            if head in self._nodes:
                if not self._nodes[head].get("properties"):
                    # an open block holds any key; a scalar key (a boolean, a number) holds none
                    types = self.types_of(head)
                    return not types or "object" in types
                break
        return self._history is not None and self._history_key(leaf) is not None

    def _history_key(self, leaf: str) -> str | None:
        """The history's key for a leaf: itself, or a block of its own the history does not detail."""
        history = self._history
        assert history is not None
        if leaf in history.keys:
            return leaf
        parts = leaf.split(".")
        for i in range(len(parts) - 1, 0, -1):
            head = ".".join(parts[:i])
            if head in history.keys and head not in history.blocks:
                return head
        return None

    def note(self, leaf: str) -> str:
        """Why a known leaf that no rule takes is what it is, when a release says more than the schema:
        a key the chosen release does not read (but others did)."""
        if self._history is None or leaf in self._nodes:
            return ""
        key = self._history_key(leaf)
        if key is None or self._history.reads(key, self._release):
            return ""
        where = self._history.runs(key) or "no release"
        return f"{self._title} {self._release} does not read it (read by {where})"

    def all_keys(self) -> list[str]:
        if self._history is not None:
            return list(dict.fromkeys([*self._nodes, *self._history.keys]))
        return list(self._nodes)

    def with_release(self, history: History, release: str, title: str) -> "SchemaIndex":
        """This index knowing every key of the framework's history, at one release."""
        index = copy.copy(self)
        index._history, index._release, index._title = history, release, title
        return index

    def node(self, key: str) -> dict[str, Any] | None:
        return self._nodes.get(key)

    def types_of(self, key: str) -> frozenset[str]:
        """The JSON types the schema gives a key (none: it says nothing)."""
        types = self._types.get(key)
        if types is None:
            node = self._nodes.get(key)
            types = self._types[key] = _types_of(node, self.schema.get("$defs")) if node is not None else frozenset()
        return types

    def coerce(self, key: str, value: Any) -> tuple[Any, str]:
        """Light type check of a raw value: YAML 1.1 float strings become numbers, with a note."""
        if value is None:
            return value, ""
        types = self.types_of(key)
        if not types:
            return value, ""
        actual = _JSON_TYPES.get(type(value), "unknown")
        if actual in types or (actual == "integer" and "number" in types):
            return value, ""
        if actual == "string" and types & {"number", "integer"} and _FLOAT_TEXT.match(value.strip()):
            number = float(value)
            if "integer" in types and "number" not in types:
                if not number.is_integer():
                    raise ValueError(f"expected a whole number, got {value!r}")
                number = int(number)
            return number, f"read {value!r} as the number {number} (YAML 1.1 needs a dot in floats)"
        if actual == "string" and types & {"number"} and _FLOAT_TEXT.match(value.strip().replace("e_", "e-")):
            # "1.0e_8": a global '-' -> '_' rename that hit a value (GPT-NeoX's own gmlp config has it)
            number = float(value.strip().replace("e_", "e-"))
            raise _Guess(number, f"read {value!r} as {number} (looks like 'e-' mangled into 'e_'); the source "
                         "framework would receive the string: fix the file")
        if actual == "number" and "integer" in types and float(value).is_integer():
            return int(value), ""
        wanted = " or ".join(sorted(t for t in types if t != "null")) or "null"
        return_value = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
        raise ValueError(f"expected {wanted}, got {actual} {return_value}")


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict[str, Any]:
    from .registry import data_file

    path = data_file("schemas", name, ".schema.json")
    return json.loads(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def schema_index(name: str, root: tuple[str, ...] = ()) -> SchemaIndex:
    return SchemaIndex(load_schema(name), root)


@lru_cache(maxsize=256)
def release_index(name: str, release: str | None, title: str) -> SchemaIndex:
    """The schema of a format at one release: its JSON schema plus every key its history knows."""
    history = load_history(name)
    base = schema_index(name)
    if history is None or release is None or release not in history.position:
        return base
    return base.with_release(history, release, title)
