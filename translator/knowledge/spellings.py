"""Older spellings of today's keys (a table's `renamed:`): read in their place (upgrade), and written
under the older name for a target release that knows only that one (downgrade). Source.aliases keep
the name a file wrote, so reports and line numbers speak of it."""

from __future__ import annotations

from typing import Any, Iterator

from .history import load_history


def upgrade(source: Any, table: Any) -> None:
    """Read the table's older spellings (`renamed:`) as the keys that replaced them: the value moves to
    the new path in the source tree and Source.aliases keep the name the file wrote (reports, lines).
    An old key beside its new one stays where it is (the new one is what the framework reads)."""
    for old, new in table.releases.renamed.items():
        value = _pop_path(source.tree, old, peek=True)
        if value is _ABSENT or _pop_path(source.tree, new, peek=True) is not _ABSENT:
            continue
        _pop_path(source.tree, old)
        _put_path(source.tree, new, value)
        for leaf, rest in _leaves(value, ""):
            written = source.aliases.pop(old + rest, old + rest)
            source.aliases[new + rest] = written
            note = source.notes.pop(old + rest, "")
            source.notes[new + rest] = "; ".join(x for x in (f"read as {new + rest}, its name in other releases", note) if x)
        top_old, top_new = old.split(".", 1)[0], new.split(".", 1)[0]
        if top_old in source.leaf_files:
            source.leaf_files.setdefault(top_new, source.leaf_files[top_old])
            if top_old not in source.tree:
                del source.leaf_files[top_old]


_ABSENT: Any = object()


def _pop_path(tree: dict[str, Any], path: str, peek: bool = False) -> Any:
    node: Any = tree
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or parts[-1] not in node:
        return _ABSENT
    if peek:
        return node[parts[-1]]
    value = node.pop(parts[-1])
    if not node and len(parts) > 1:  # an emptied block goes too
        _pop_path(tree, ".".join(parts[:-1]))
    return value


def _put_path(tree: dict[str, Any], path: str, value: Any) -> None:
    node = tree
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _leaves(value: Any, prefix: str) -> Iterator[tuple[Any, str]]:
    """(value, dotted suffix) of every leaf of a value (a block's leaves, or the value itself)."""
    if isinstance(value, dict) and value:
        for name, item in value.items():
            yield from _leaves(item, f"{prefix}.{name}")
    else:
        yield value, prefix


def downgrade(leaves: dict[str, Any], table: Any, release: str) -> dict[str, str]:
    """Write keys the target release reads only under an older name (the table's `renamed:`) under that
    name; returns new leaf -> old leaf for what it renamed."""
    history = load_history(table.format)
    if history is None or not table.releases.renamed or release == history.newest:
        return {}
    moved: dict[str, str] = {}
    for old, new in table.releases.renamed.items():
        # the history's rename says from when the new name is the one to use; else, who reads which
        since = next((r.release for r in history.renamed_from(old) if r.new == new), None)
        if since is not None:
            if not history.position[release] < history.position[since]:
                continue
        elif history.reads(new, release) or not history.reads(old, release):
            continue
        for leaf in [k for k in leaves if k == new or k.startswith(new + ".")]:
            moved[leaf] = old + leaf[len(new):]
    if moved:
        for new_leaf, old_leaf in moved.items():
            leaves[old_leaf] = leaves.pop(new_leaf)
    return moved
