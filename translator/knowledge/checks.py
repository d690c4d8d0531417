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
    one_of: tuple[Any, ...] = ()  # the only values taken (another is refused)
    required: bool = False  # the key must be given (checked when the file gives `when`'s keys those values)
    forbidden: bool = False  # the key must not be given (a config class that forbids extra keys)
    equals: str | None = None  # another key the value must equal (its default at the release when left out)
    beside: str | None = None  # checked only when the file also gives this key (two spellings of one field)
    since: str | None = None  # the first release that refuses it (None: every release)
    until: str | None = None  # the last release that refuses it (None: every release from `since` on)


def build_checks(table: str, raw: Any, labels: tuple[str, ...]) -> tuple[Check, ...]:
    """The checks of a table's `checks:` list (the meta-schema has checked their shape). An item with
    `over: [A, B]` stands for one check per block: its keys' `{}` is each block in turn (the same rule of a
    framework's training and evaluation loaders), and `key` may list several keys checked alike."""
    out = []
    for i, item in enumerate(raw or ()):
        since, until = (str(item[k]) if item.get(k) is not None else None for k in ("since", "until"))
        for word, label in (("since", since), ("until", until)):
            if label is not None and label not in labels:
                raise MappingTableError(
                    f"{table}: checks[{i}] ({item['key']}): {word} {label!r} is not a release of the table"
                )
        bounds = tuple((name, float(item[name])) for name in _BOUNDS if name in item)
        kinds = ("integer", "refused", "one_of", "required", "forbidden", "equals")
        if not (bounds or any(item.get(kind) for kind in kinds)):
            raise MappingTableError(
                f"{table}: checks[{i}] ({item['key']}): says nothing to check (a bound, or one of {', '.join(kinds)})"
            )
        keys = item["key"] if isinstance(item["key"], list) else [item["key"]]
        for block in item.get("over") or [None]:

            def at(key: str, block: str | None = block) -> str:
                return key.replace("{}", block) if block is not None else key

            when = {at(str(k)): tuple(v) for k, v in (item.get("when") or {}).items()}
            equals = at(str(item["equals"])) if item.get("equals") else None
            for key in keys:
                out.append(
                    Check(
                        at(str(key)),
                        str(item["by"]),
                        when,
                        bounds,
                        bool(item.get("integer")),
                        tuple(item.get("refused") or ()),
                        tuple(item.get("one_of") or ()),
                        bool(item.get("required")),
                        bool(item.get("forbidden")),
                        equals,
                        at(str(item["beside"])) if item.get("beside") else None,
                        since,
                        until,
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
        given = value is not _MISSING or (check.required and all(leaves.get(k) in v for k, v in check.when.items()))
        if not given or not _in_force(check, release, labels) or (check.beside and check.beside not in leaves):
            continue
        if not all(_value(leaves, key, release, default) in allowed for key, allowed in check.when.items()):
            continue
        other = _value(leaves, check.equals, release, default) if check.equals else _MISSING
        problem = _problem(check, value, other, written)
        if problem:
            context = ", ".join(f"{written(k)}={_show(_value(leaves, k, release, default))}" for k in check.when)
            said = (f" with {context}" if context else "") + (
                f" beside {written(check.beside)}" if check.beside else ""
            )
            shown = written(check.key) + ("" if value is _MISSING else f"={_show(value)}")  # a required key left out
            found.append((check.key, f"{shown}{said} {problem} ({check.by})"))
    return found


def _in_force(check: Check, release: str, labels: tuple[str, ...]) -> bool:
    if release not in labels:
        return check.until is None  # a release the table does not list (a file's own label): the newest rules hold
    at = labels.index(release)  # newest first
    return (check.since is None or at <= labels.index(check.since)) and (
        check.until is None or at >= labels.index(check.until)
    )


def _value(leaves: Mapping[str, Any], key: str, release: str, default: Any) -> Any:
    value = leaves.get(key, _MISSING)
    return default(key, release) if value is _MISSING else value


def _problem(check: Check, value: Any, other: Any = _MISSING, written: Callable[[str], str] = str) -> str | None:
    """What is wrong with the value, said after it ("is refused", "must be more than 0"); `other`: the
    value of the key it must equal."""
    if value is _MISSING:
        return "is required" if check.required else None
    if check.forbidden or (check.refused and value in check.refused):
        return "is refused"
    if check.one_of and value not in check.one_of:
        return f"is refused: the only values taken are {', '.join(_show(v) for v in check.one_of)}"
    if check.equals and not _same(value, other):
        return f"must equal {written(check.equals)} ({_show(other)})"
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


def _same(a: Any, b: Any) -> bool:
    """Equal as the framework compares them (a key left out is None; 512 == 512.0, never True == 1)."""
    a, b = (None if v is _MISSING else v for v in (a, b))
    return a == b and isinstance(a, bool) == isinstance(b, bool)


def _show(value: Any) -> str:
    """A value as a config spells it."""
    if value is _MISSING or value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, str) else str(value)


MISSING = _MISSING
