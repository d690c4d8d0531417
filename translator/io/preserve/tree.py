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
        stack = [self]
        while stack:
            entry = stack.pop()
            yield entry
            if entry.children:
                stack.extend(reversed(entry.children.values()))


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
    entry = root
    for part in parts:  # the common case: every part is a text key as written
        child = entry.children.get(part) if entry.children else None
        if child is None:
            break
        entry = child
    else:
        return entry, True
    if not dotted:
        return None
    return _walk_source(root, parts, True) or _walk_source(root, parts, False)


def _walk_source(entry: SourceEntry, parts: list[str], exact: bool) -> tuple[SourceEntry, bool] | None:
    if not parts:
        return entry, True
    if entry.children is None:
        return (entry, False) if entry.parent is not None and not exact else None
    for cut in range(1, len(parts) + 1):  # a key with dots in it (`train.lr: 1`) when no shorter key fits
        child = _child(entry.children, ".".join(parts[:cut]))
        if child is not None:
            found = _walk_source(child, parts[cut:], exact)
            if found is not None:
                return found
    return None


def resolve_target(document: Mapping[Any, Any], dotted: str) -> Path | None:
    """The path of the mapping entry a dotted report key names in the target document; a key
    that points inside a list names the entry holding the list."""
    parts = dotted.split(".")
    node: Any = document
    for part in parts:  # the common case: every part is a text key
        if not isinstance(node, dict) or part not in node:
            break
        node = node[part]
    else:
        return tuple(parts)
    if not dotted:
        return None
    # a key with dots in it; else a key pointing inside a list names the entry holding the list
    return _walk_target(document, parts, (), True) or _walk_target(document, parts, (), False)


def _walk_target(node: Any, parts: list[str], path: Path, exact: bool) -> Path | None:
    if not parts:
        return path
    if not isinstance(node, dict):
        return path if path and not exact else None
    for cut in range(1, len(parts) + 1):
        text = ".".join(parts[:cut])
        key = text if text in node else _MISSING
        if key is _MISSING and not _textual(text):  # `3: ...`, `true: ...`: keys YAML read as non-text
            key = next((k for k in node if not isinstance(k, str) and str(k) == text), _MISSING)
        if key is not _MISSING:
            found = _walk_target(node[key], parts[cut:], path + (key,), exact)
            if found is not None:
                return found
    return None


_MISSING = object()


def _child(children: dict[Any, SourceEntry], text: str) -> SourceEntry | None:
    found = children.get(text)
    if found is not None:
        return found
    if not _textual(text):
        found = next((c for k, c in children.items() if not isinstance(k, str) and str(k) == text), None)
        if found is not None:
            return found
    # a reader that normalises spellings (GPT-NeoX: `hidden-size` is `hidden_size`) reports its own
    spelled = [c for k, c in children.items() if isinstance(k, str) and k.replace("-", "_") == text.replace("-", "_")]
    return spelled[0] if len(spelled) == 1 else None


def _textual(text: str) -> bool:
    """A key that can only have been text in the file (so no scan for number or boolean keys)."""
    return text.isidentifier() and text.lower() not in _WORDS


_WORDS = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "none"}
