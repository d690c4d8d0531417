"""Which of the releases a file's keys fit accept its values (issue #27/#28: the release guess).

Keys alone leave a range of releases; the newest of it may refuse a value the file gives (DeepSpeed
0.19.3+ refuses a dynamic loss scale's `min_loss_scale: 0`, which 0.19.2 takes). A table's `checks:`
say what each release refuses; the guess is the newest release of the range whose checks the file
passes, and a release that refuses a value is the guess only when every one of the range does.
Nothing here names a framework."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..core.errors import InputError
from ..io.documents import flatten
from .checks import MISSING, Check, broken_checks
from .schema import NO_DEFAULT, History


def file_leaves(source: Any) -> dict[str, Any]:
    """The leaves the checks read: the reader's view, and the file as written where its layout has keys
    of its own (a check names a key as the format's schema does: either)."""
    leaves: dict[str, Any] = {}
    for tree in (source.tree, getattr(source, "written", None)):
        if isinstance(tree, dict):
            try:
                leaves.update(flatten(tree))
            except InputError:  # a malformed tree: the reading after the release is told names it
                continue
    return leaves


def refusals(
    history: History, checks: Iterable[Check], leaves: dict[str, Any], labels: tuple[str, ...], members: list[str]
) -> dict[str, list[str]]:
    """Release -> what it refuses of the file's values (each problem as `validate` says it), for each of
    `members` (the releases the keys fit); releases that accept the file are left out."""
    mine = [c for c in checks if c.key in leaves]  # only checks of keys the file gives (a required key's: never here)
    if not mine:
        return {}
    default = _default_at(history)
    out: dict[str, list[str]] = {}
    for label in members:
        found = broken_checks(mine, leaves, label, labels, default)
        if found:
            out[label] = [problem for _, problem in found]
    return out


def newest_accepting(members: list[str], refused: dict[str, list[str]]) -> str | None:
    """The newest of `members` (oldest first) that refuses nothing; None when every one refuses."""
    accepting = [label for label in members if label not in refused]
    return accepting[-1] if accepting else None


def _default_at(history: History) -> Callable[[str, str], Any]:
    def default(key: str, label: str) -> Any:
        if history.reads_within(key, label) is False:
            return MISSING
        found = history.default_at(key, label)
        return MISSING if found is NO_DEFAULT else found

    return default
