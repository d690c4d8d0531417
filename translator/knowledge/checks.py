"""A table's `checks:`: what a framework's own config code refuses that no key's schema says (a bound
that holds only with other settings, an int the release's pydantic model takes, two options its
argument check refuses together), as data. `validate` says each broken check as a problem of its key,
and so every translation's validation of its output does. Nothing here names a framework."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from ..core.errors import MappingTableError

_MISSING: Any = object()
_BOUNDS = {
    "above": (lambda v, b: v > b, "more than"),
    "at_least": (lambda v, b: v >= b, "at least"),
    "below": (lambda v, b: v < b, "less than"),
    "at_most": (lambda v, b: v <= b, "at most"),
}


@dataclass(frozen=True)
class Check:
    key: str  # the key the problem is said at (as the format's schema names it); checked when the file gives it
    by: str  # the framework code that refuses it, for the message
    when: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # other keys' values that make it apply
    bounds: tuple[tuple[str, float], ...] = ()  # (above|at_least|below|at_most, number)
    integer: bool = False  # a number with a fraction is refused (a pydantic int)
    refused: tuple[Any, ...] = ()  # values refused
    since: str | None = None  # the first release that refuses it (None: every release)


def build_checks(table: str, raw: Any, labels: tuple[str, ...]) -> tuple[Check, ...]:
    """The checks of a table's `checks:` list (the meta-schema has checked their shape)."""
    out = []
    for i, item in enumerate(raw or ()):
        since = str(item["since"]) if item.get("since") is not None else None
        if since is not None and since not in labels:
            raise MappingTableError(
                f"{table}: checks[{i}] ({item['key']}): since {since!r} is not a release of the table"
            )
        bounds = tuple((name, float(item[name])) for name in _BOUNDS if name in item)
        if not (bounds or item.get("integer") or item.get("refused")):
            raise MappingTableError(
                f"{table}: checks[{i}] ({item['key']}): says nothing to check (a bound, integer or refused)"
            )
        when = {str(k): tuple(v) for k, v in (item.get("when") or {}).items()}
        out.append(
            Check(
                str(item["key"]),
                str(item["by"]),
                when,
                bounds,
                bool(item.get("integer")),
                tuple(item.get("refused") or ()),
                since,
            )
        )
    return tuple(out)


def broken_checks(
    checks: Iterable[Check],
    leaves: Mapping[str, Any],
    release: str,
    labels: tuple[str, ...],
    default: Any,
    written: Callable[[str], str] = str,
) -> list[tuple[str, str]]:
    """(key, problem) for each check the file's `leaves` (key -> value, as the schema names keys)
    break at `release` (`labels`: the releases, newest first); `default(key, release)`: the value a
    key the file leaves out has there (or _MISSING); `written(key)`: the key as the file writes it,
    for the message (VeOmni's flat data_parallel_mode is the view's accelerator fsdp_mode)."""
    found = []
    for check in checks:
        value = leaves.get(check.key, _MISSING)
        if value is _MISSING or not _in_force(check, release, labels):
            continue
        if not all(_value(leaves, key, release, default) in allowed for key, allowed in check.when.items()):
            continue
        problem = _problem(check, value)
        if problem:
            given = ", ".join(f"{written(k)}={_show(_value(leaves, k, release, default))}" for k in check.when)
            said = f" with {given}" if given else ""
            found.append((check.key, f"{written(check.key)}={_show(value)}{said} {problem} ({check.by})"))
    return found


def _in_force(check: Check, release: str, labels: tuple[str, ...]) -> bool:
    if check.since is None:
        return True
    if release not in labels:
        return True  # a release the table does not list (a file's own label): the newest rules hold
    return labels.index(release) <= labels.index(check.since)  # newest first


def _value(leaves: Mapping[str, Any], key: str, release: str, default: Any) -> Any:
    value = leaves.get(key, _MISSING)
    return default(key, release) if value is _MISSING else value


def _problem(check: Check, value: Any) -> str | None:
    """What is wrong with the value, said after it ("is refused", "must be more than 0")."""
    if check.refused and value in check.refused:
        return "is refused"
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if check.integer and not (
        number and (isinstance(value, int) or (math.isfinite(value) and float(value).is_integer()))
    ):
        return "is not an integer"
    for name, bound in check.bounds:
        test, words = _BOUNDS[name]
        if number and not test(value, bound):
            return f"must be {words} {bound:g}"
    return None


def _show(value: Any) -> str:
    """A value as a config spells it."""
    if value is _MISSING or value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, str) else str(value)


MISSING = _MISSING
