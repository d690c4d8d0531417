"""Decide, for every entry of the target document, which source entry (if any) it is made from.

The planner is syntax-free: it sees the source as a tree of entries with loaded values and the
target as a plain dict, plus the moves the migration reported (old dotted key -> new dotted key).
Who-comes-from-where, in this order (earlier claims win):
1. the moves, leaf by leaf (a second source moved onto a claimed target is folded into it);
2. mappings still at their own path; then mappings by votes: `model.x -> trainer.init.model.x` is
   a vote for `model -> trainer.init.model` (one vote counts only when the mapping keeps its name);
3. whatever is left at the same path in both.
Then each target entry is copied whole (same value), opened (a mapping edited key by key),
rewritten (value changed, comments kept) or written new. Source entries with no place in the target
either ride along with the entry that took over their content (their comments go there) or are
removed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterable, Mapping

from .tree import Path, SourceEntry, resolve_source, resolve_target, same


class Mode(Enum):
    COPY = "copy"  # the source entry's text, whole (re-indented, key renamed if need be)
    OPEN = "open"  # the source mapping's key line and comments; its entries planned one by one
    HEAD = "head"  # a mapping made from a source entry that was not one: its comments, new entries
    VALUE = "value"  # the source entry's key line and comments with a new value
    NEW = "new"  # nothing in the source: written fresh


@dataclass(eq=False)
class Placed:
    """One entry of the output, in output order."""

    key: Any
    value: Any
    path: Path
    origin: SourceEntry | None
    mode: Mode
    parent: Placed | None = None
    children: list[Placed] = field(default_factory=list)
    riders: list[SourceEntry] = field(default_factory=list)  # source entries whose own comments come along


@dataclass
class Plan:
    root: Placed
    removed: list[SourceEntry]  # no place in the target: their own comments go with them
    host: dict[SourceEntry, Placed]  # every source entry that is not removed -> the output entry carrying it


def plan(source: SourceEntry, target: Mapping[Any, Any], moves: Iterable[tuple[str, str]]) -> Plan:
    return _Planner(source, dict(target)).run(moves)


class _Planner:
    def __init__(self, source: SourceEntry, target: dict[Any, Any]) -> None:
        self.source = source
        self.target = target
        self.by_path = {e.path: e for e in source.walk()}
        self.claim: dict[Path, SourceEntry] = {}
        self.owner: dict[SourceEntry, Path] = {}
        self.folded: dict[SourceEntry, Path] = {}
        self.hints: dict[SourceEntry, Path] = {}
        self.containers = list(_containers(target))  # every non-empty mapping of the target, pre-order
        self.host: dict[SourceEntry, Placed] = {}
        self.placed: dict[Path, Placed] = {}

    def run(self, moves: Iterable[tuple[str, str]]) -> Plan:
        self._claim_moves(moves)
        self._claim_containers()
        self._claim_same_paths()
        root = Placed(None, self.target, (), self.source, Mode.OPEN)
        self.host[self.source] = root
        self.placed[()] = root
        root.children = self._children(root)
        removed = self._riders()
        return Plan(root, removed, self.host)

    # -- who comes from where

    def _take(self, path: Path, entry: SourceEntry) -> bool:
        if path in self.claim or entry in self.owner or entry in self.folded or entry is self.source:
            return False
        self.claim[path] = entry
        self.owner[entry] = path
        return True

    def _claim_moves(self, moves: Iterable[tuple[str, str]]) -> None:
        for old, new in moves:
            found = resolve_source(self.source, old)
            path = resolve_target(self.target, new)
            if found is None or not path:
                continue
            entry, exact = found
            if not exact:  # the key points inside a list: the list's comments follow it, nothing more
                self.hints.setdefault(entry, path)
            elif not self._take(path, entry) and path in self.claim and self.claim[path] is not entry:
                if entry not in self.owner:
                    self.folded.setdefault(entry, path)  # two source keys made one target key

    def _claim_containers(self) -> None:
        votes: Counter[tuple[Path, Path]] = Counter()
        for path, entry in self.claim.items():
            shared = _common_suffix(path, entry.path)
            for cut in range(1, shared + 1):
                if len(path) > cut and len(entry.path) > cut:
                    votes[(path[:-cut], entry.path[:-cut])] += 1
        for path in self.containers:  # a mapping that is still where it was stays itself
            kept = self.by_path.get(path)
            if kept is not None and isinstance(kept.value, dict):
                self._take(path, kept)
        order = {path: i for i, path in enumerate(self.containers)}
        ranked = sorted(
            (c for c in votes if c[0] in order and c[1] in self.by_path),
            key=lambda c: (-votes[c], len(c[0]), order[c[0]]),
        )
        for path, source_path in ranked:
            entry = self.by_path[source_path]
            # one key in common is a coincidence unless the mapping keeps its name
            if isinstance(entry.value, dict) and (votes[(path, source_path)] > 1 or path[-1] == source_path[-1]):
                self._take(path, entry)

    def _claim_same_paths(self) -> None:
        for path in _paths(self.target, ()):
            entry = self.by_path.get(path)
            if entry is not None:
                self._take(path, entry)

    # -- the output tree

    def _place(self, key: Any, value: Any, path: Path, parent: Placed) -> Placed:
        origin = self.claim.get(path)
        if origin is not None and same(origin.value, value) and self._intact(origin, path):
            mode = Mode.COPY
        elif isinstance(value, dict) and value:
            if origin is None:
                mode = Mode.NEW
            elif origin.children is not None:
                mode = Mode.OPEN
            else:
                mode = Mode.VALUE if origin.flow else Mode.HEAD
        else:
            mode = Mode.NEW if origin is None else Mode.VALUE
        placed = Placed(key, value, path, origin, mode, parent)
        self.placed[path] = placed
        if origin is not None:
            for entry in origin.walk() if mode is Mode.COPY else (origin,):
                self.host[entry] = placed
        if mode in (Mode.OPEN, Mode.HEAD, Mode.NEW) and isinstance(value, dict):
            placed.children = self._children(placed)
        return placed

    def _intact(self, origin: SourceEntry, path: Path) -> bool:
        """Copying the entry whole would not also copy a key the migration put elsewhere."""
        depth = len(origin.path)
        for entry in origin.walk():
            if entry in self.folded:
                return False
            where = self.owner.get(entry)
            if where is not None and where != path + entry.path[depth:]:
                return False
        return True

    def _children(self, placed: Placed) -> list[Placed]:
        value: dict[Any, Any] = placed.value
        keys = list(value)
        if placed.mode is Mode.OPEN:
            keys = self._ordered(placed, keys)
        return [self._place(k, value[k], placed.path + (k,), placed) for k in keys]

    def _ordered(self, placed: Placed, keys: list[Any]) -> list[Any]:
        """Keys that stay in their mapping keep the source's order; the others follow the key the
        target document puts before them."""
        origin = placed.origin
        assert origin is not None
        stays = {}
        for k in keys:
            entry = self.claim.get(placed.path + (k,))
            if entry is not None and entry.parent is origin:
                stays[k] = entry.index
        result = sorted(stays, key=stays.__getitem__)
        before = None
        for k in keys:
            if k not in stays:
                result.insert(0 if before is None else result.index(before) + 1, k)
            before = k
        return result

    # -- entries with no place of their own

    def _riders(self) -> list[SourceEntry]:
        removed: list[SourceEntry] = []
        for entry in self.source.walk():
            if entry in self.host:
                continue
            host = self._rider_host(entry)
            if host is None:
                removed.append(entry)
            else:
                host.riders.append(entry)
                self.host[entry] = host
        return removed

    def _rider_host(self, entry: SourceEntry) -> Placed | None:
        path = self.folded.get(entry) or self.hints.get(entry)
        if path is not None:
            while path not in self.placed:
                path = path[:-1]
            return self.placed[path]
        # a mapping the migration took apart: its comments go with its first key
        first = next((self.host[e] for e in entry.walk() if e in self.host), None)
        if first is not None:
            return first
        # part of a value that was rewritten whole
        above = entry.parent
        while above is not None:
            placed = self.host.get(above)
            if placed is not None and placed.origin is above and placed.mode in (Mode.VALUE, Mode.HEAD):
                return placed
            above = above.parent
        return None


def _common_suffix(a: Path, b: Path) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _containers(document: dict[Any, Any], path: Path = ()) -> Iterable[Path]:
    for key, value in document.items():
        if isinstance(value, dict) and value:
            yield path + (key,)
            yield from _containers(value, path + (key,))


def _paths(document: dict[Any, Any], path: Path) -> Iterable[Path]:
    for key, value in document.items():
        yield path + (key,)
        if isinstance(value, dict):
            yield from _paths(value, path + (key,))
