"""One report entry: what became of one source leaf (or what the target lacks or defaults), as a
status, a message kind with its values, and the detail rendered from them (report/kinds.py)."""

from __future__ import annotations

import math
from collections.abc import Mapping as MappingABC
from enum import Enum
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from .kinds import TEMPLATES, Message, as_value, render


class Status(str, Enum):
    EXACT = "exact"
    CONVERTED = "converted"
    LOSSY = "lossy"
    DROPPED = "dropped"
    UNKNOWN = "unknown"
    MISSING = "missing"
    DEFAULTED = "defaulted"


# Statuses that --strict turns into exit code 1: the run may not mean the same thing. `dropped`
# is not among them: most dropped keys are performance knobs with no counterpart (--fail-on adds it).
STRICT_FAILURES = frozenset({Status.LOSSY, Status.UNKNOWN, Status.MISSING})


class Entry(NamedTuple):  # immutable and cheap: a batch makes one per leaf of thousands of files
    source_key: str | None
    target_key: str | None
    status: Status
    detail: str = ""
    # the canonical fields the entry is about (for `lossy`: the ones that lost something), so a
    # difference `diff` finds can be matched with the entry that names it
    fields: tuple[str, ...] = ()
    # the message: `detail` is rendered from it (see said()); an entry made with prose only (a
    # format writer's) has no kind and reads as kind "text"
    kind: str = ""
    values: Mapping[str, Any] | None = None
    target_keys: tuple[str, ...] = ()  # the keys target_key names, one by one

    @property
    def targets(self) -> tuple[str, ...]:
        """The target keys, one by one (never split from target_key's text)."""
        return self.target_keys or ((self.target_key,) if self.target_key else ())

    def messages(self) -> tuple[Message, ...]:
        """The entry's messages: its kind and values, then the further ones (`also`)."""
        if not self.kind:
            return (("text", {"text": self.detail}),) if self.detail else ()
        values = self.values or {}
        also = values.get("also")
        if not also:
            return ((self.kind, values),)
        main = {k: v for k, v in values.items() if k != "also"}
        return ((self.kind, main), *((m["kind"], m["values"]) for m in also))

    def amended(self, status: Status, reason: Message | str, *, first: bool = True, **changes: Any) -> "Entry":
        """The entry with another status and one more message (first, or last): a writer that had to
        change a carried value, a read-back that found a difference."""
        message = reason if isinstance(reason, tuple) else ("text", {"text": reason})
        messages = (message, *self.messages()) if first else (*self.messages(), message)
        return said(changes.get("source_key", self.source_key), changes.get("target_key", self.target_key), status,
                    messages, changes.get("fields", self.fields), changes.get("target_keys", self.target_keys))  # fmt: skip

    def relocated(self, moved: Mapping[str, str] | Callable[[str], str],
                  in_values: Callable[[str], str] | None = None) -> "Entry":
        """The entry with its target keys renamed (a writer that restructured the layout), in its
        values too (`wrote model.dropout_rate=0.1` names the key where the writer put it; `in_values`
        when only some keys keep their values' meaning at the new place)."""
        where = moved if callable(moved) else (lambda key: moved.get(key, key))
        keys = tuple(where(k) for k in self.targets)
        entry = self._replace(target_key=", ".join(keys) or None, target_keys=keys if self.target_keys else ())
        if not self.kind or not any(isinstance(v, MappingABC) for v in (self.values or {}).values()):
            return entry
        messages = tuple((kind, _keys_renamed(values, in_values or where)) for kind, values in self.messages())
        return said(entry.source_key, entry.target_key, entry.status, messages, entry.fields, entry.target_keys)

    def to_json(self) -> dict[str, Any]:
        return {
            "source_key": self.source_key,
            "target_key": self.target_key,
            "status": self.status.value,
            "detail": self.detail,
            "fields": list(self.fields),
            "kind": self.kind or "text",
            "values": _json_ready(self.values or {}) if self.kind else {"text": self.detail},
        }


def said(
    source_key: str | None,
    target_key: str | None,
    status: Status,
    messages: Sequence[Message],
    fields: tuple[str, ...] = (),
    target_keys: tuple[str, ...] = (),
) -> Entry:
    """An entry from its messages (the first is its kind; the others ride in values["also"]),
    with the detail rendered from them."""
    if len(messages) == 1:
        kind, values = messages[0]
        return Entry(source_key, target_key, status, TEMPLATES[kind](values), fields, kind, values, target_keys)
    kind, values = messages[0]
    parts = [render(k, v) for k, v in messages]
    values = {**values, "also": [as_value(m) for m in messages[1:]]}
    return Entry(source_key, target_key, status, "; ".join(p for p in parts if p), fields, kind, values, target_keys)


# message values keyed by target keys (kinds.py): renamed with the entry's target keys
KEYED_BY_TARGET = ("written", "target_defaults")


def _keys_renamed(values: Mapping[str, Any], where: Callable[[str], str]) -> Mapping[str, Any]:
    return {name: ({where(k): v for k, v in value.items()} if name in KEYED_BY_TARGET and isinstance(value, MappingABC)
                   else value) for name, value in values.items()}  # fmt: skip


_SCALARS = frozenset({str, int, bool, type(None)})


def _json_ready(value: Any) -> Any:
    """Values as JSON holds them: lists for tuples, text for what JSON has no number for (a report
    is written with NaN and infinity refused). Flat values, the common case, are returned as they are."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is float:
        return value if math.isfinite(value) else str(value)
    if kind is dict:
        for item in value.values():
            if type(item) not in _SCALARS and not (type(item) is float and math.isfinite(item)):
                return {str(k): _json_ready(v) for k, v in value.items()}
        return value
    if kind is list or kind is tuple:
        if all(type(item) is str for item in value):  # field and key names
            return value
        return [_json_ready(v) for v in value]
    if isinstance(value, MappingABC):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    return str(value)  # a str subclass (a Said reason) as plain text; anything else as its text
