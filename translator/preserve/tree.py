"""What the planner sees of a source file: its mapping entries, each with the value it loads to.

Both syntaxes (YAML, JSON) build this tree; positions and comments stay in their own subclasses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

Path = tuple[Any, ...]


@dataclass(eq=False)
class SourceEntry:
    """One `key: value` of the source (the root is the entry with the empty path)."""

    key: Any
    path: Path
    value: Any  # as yaml.safe_load / json.loads builds it
    parent: SourceEntry | None
    index: int  # document order
    # the entries of a mapping the rewrite can open and edit key by key; None: edited as a whole
    children: dict[Any, SourceEntry] | None = field(default=None)
    flow: bool = False  # written on one line ({a: 1}, [1, 2]): a changed value is rewritten the same way

    def walk(self) -> Iterator[SourceEntry]:
        """This entry and every entry below it, in document order."""
        yield self
        for child in (self.children or {}).values():
            yield from child.walk()


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down: 1 and 1.0 and True load differently."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def resolve_source(root: SourceEntry, dotted: str) -> tuple[SourceEntry, bool] | None:
    """The entry a dotted report key names (keys may contain dots), and whether it named the
    entry exactly (False: the key points inside an entry edited as a whole, e.g. a list)."""
    parts = dotted.split(".")
    return _walk_source(root, parts) if dotted else None


def _walk_source(entry: SourceEntry, parts: list[str]) -> tuple[SourceEntry, bool] | None:
    if not parts:
        return entry, True
    if entry.children is None:
        return (entry, False) if entry.parent is not None else None
    for cut in range(len(parts), 0, -1):  # the longest key first: `a.b: 1` beside `a: {b: ...}` is rare
        child = _child(entry.children, ".".join(parts[:cut]))
        if child is not None:
            found = _walk_source(child, parts[cut:])
            if found is not None:
                return found
    return None


def resolve_target(document: Mapping[Any, Any], dotted: str) -> Path | None:
    """The path of the mapping entry a dotted report key names in the target document; a key
    that points inside a list names the entry holding the list."""
    parts = dotted.split(".")
    return _walk_target(document, parts, ()) if dotted else None


def _walk_target(node: Any, parts: list[str], path: Path) -> Path | None:
    if not parts:
        return path
    if not isinstance(node, dict):
        return path if path else None
    for cut in range(len(parts), 0, -1):
        text = ".".join(parts[:cut])
        key = text if text in node else next((k for k in node if not isinstance(k, str) and str(k) == text), _MISSING)
        if key is not _MISSING:
            found = _walk_target(node[key], parts[cut:], path + (key,))
            if found is not None:
                return found
    return None


_MISSING = object()


def _child(children: dict[Any, SourceEntry], text: str) -> SourceEntry | None:
    found = children.get(text)
    if found is not None:
        return found
    return next((c for k, c in children.items() if not isinstance(k, str) and str(k) == text), None)
