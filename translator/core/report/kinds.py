"""The report's entries and the closed catalogue of their message kinds, each with one template (as
pandoc's LogMessage): an entry (what became of one source leaf, or what the target lacks or
defaults) says a status, `kind` and `values`, and its `detail` is rendered from them here, in one place.

A message is (kind, values); `values` is JSON-ready (it is what the JSON report carries), and a
value that is itself a message is {"kind": ..., "values": ...}. Text that tables, formulas,
readers and writers give (a table's `unsupported:` reason, a formula's Approx) is carried whole
in the value its kind names (`reason`, `note`, `text`)."""

from __future__ import annotations

import math
from collections.abc import Mapping as MappingABC
from enum import Enum
from typing import Any, Callable, Mapping, NamedTuple, Sequence


def _spelled(value: Any) -> str:
    """A value as the config files spell it (YAML and JSON both: true, false, null), not Python's."""
    if value is True or value is False or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_spelled(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_spelled(v)}" for k, v in value.items()) + "}"
    return str(value)


def short(value: Any) -> str:
    """A value as a message shows it: in the files' spelling, strings quoted, anything past 60
    characters cut."""
    text = _spelled(value)
    return text if len(text) <= 60 else text[:57] + "..."


def short_repr(value: Any) -> str:
    """A value as a read-back message shows it (repr, cut at 60)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


Values = Mapping[str, Any]
Message = tuple[str, Values]  # (kind, values)


def _names(values: Any) -> str:
    return ", ".join(values)


def nested(message: Any) -> str:
    """A message inside another's values, rendered ("" when there is none)."""
    return render(message["kind"], message["values"]) if message else ""


def _not_a_parameter(v: Values) -> str:
    if v.get("unsearched"):
        return f"not a {v['title']} parameter (no suggestion: the file has too many unknown keys)"
    return f"not a {v['title']} parameter" + (f"; did you mean {v['suggestion']}?" if v.get("suggestion") else "")


def _runtime_value(v: Values) -> str:
    return str(v["why"]) + _set_hint(v)


def _set_hint(v: Values) -> str:
    fields: list[str] = list(v.get("fields") or ())
    if not fields:
        return ""
    spelled = " ".join(f"--set {name}=VALUE" for name in fields)  # as the user types them (each one --set takes)
    return f"; give the value{'s' if len(fields) > 1 else ''} with {spelled}"


def _not_a_value(v: Values) -> str:
    known, fields = list(v.get("known") or ()), list(v.get("fields") or ())
    listed = f" (it knows {_names(known[:12])}{', ...' * (len(known) > 12)})" if known else ""
    return f"{short(v['value'])} is not a value of {v['title']} {v['release']}{listed}: a fork's?" + (
        f"; {_names(fields)} left without a value" if fields else ""
    )


def _release_default(v: Values) -> str:
    runs = "; ".join(f"{short(d)} in {a}" + (f"..{b}" if b != a else "") for a, b, d in v["runs"])
    return (
        f"{v['title']}'s default {v['key']} depends on the release ({runs}): the file's keys fit {v['first']}.."
        f"{v['last']}, read as {v['read_as']} ({short(v['value'])}); give --from-version RELEASE to read it as another"
    )


def _default_written(v: Values) -> str:
    defaults = v.get("target_defaults") or {}
    if v.get("key_default") and defaults:
        tdef = f"; {v['target']} default is {short(v.get('field_default', next(iter(defaults.values()))))}"
    else:
        tdef = "; ".join(f"{k}={short(d)}" for k, d in defaults.items())
        tdef = f"; {v['target']} default {tdef}" if tdef else ""
    shown = ", ".join(f"{k}={short(value)}" for k, value in v["written"].items())
    return f"{v['title']} default {v['field']}={short(v['value'])} (not in the file){tdef}: wrote {shown}"


def _added_for_target(v: Values) -> str:
    shown = ", ".join(f"{k}={short(value)}" for k, value in v["written"].items())
    return f"not in the source, added for {v['title']}: wrote {shown}" + (f" ({v['why']})" if v.get("why") else "")


def _value_lost(v: Values) -> str:
    shown = []
    for item in v["values"]:
        how = (
            "not in the file"
            if item["origin"] == "default"
            else (f"from {_names(item['keys'])}" if item["keys"] else item["origin"])
        )
        shown.append(f"{item['field']}={short(item['value'])} ({how})")
    return f"{v['title']} {', '.join(shown)}: {'; '.join(nested(m) for m in v['reasons'])}"


def _derived_dropped(v: Values) -> str:
    shown = ", ".join(
        f"{item['field']}={short(item['value'])}" + (f" (from {_names(item['from'])})" if item.get("from") else "")
        for item in v["values"]
    )
    if v.get("own_entry"):
        return f"{v['title']} derives {shown} with no key of {'its' if len(v['values']) == 1 else 'their'} own"
    return f"{v['title']} derives {shown} from it"


def _needs_value(v: Values) -> str:
    if v.get("elsewhere"):
        return f"{v['elsewhere']}, or --set {v['field']}=VALUE"
    return str(v.get("hint") or f"give it with --set {v['field']}=VALUE")


def _reads_back_differently(v: Values) -> str:
    written = v.get("written") or {}
    what = "written as " + ", ".join(f"{k}={short_repr(x)}" for k, x in written.items()) if written else "not written"
    back = (
        "nothing"
        if v.get("read_back") is None
        else short_repr(v["read_back"]) + ("" if written else " (the target's default)")
    )
    return f"{v['field']} is {short_repr(v['source_value'])} in the source, {what}; reads back as {back}"


def _refused_by_release(v: Values) -> str:
    problems: Mapping[str, str] = v["problems"]
    said = "; ".join(problems.values()) if len(problems) == 1 else "; ".join(f"{k}: {m}" for k, m in problems.items())
    release = "" if v["release"] == "current" else f" {v['release']}"
    return f"not valid in {v['title']}{release}: {said}"


def _only_when(v: Values) -> str:
    cond = ", ".join(f"{k}={'/'.join(map(str, allowed))}" for k, allowed in v["when"].items())
    return f"{v['rule']} only applies when {cond}"


class Kind(NamedTuple):  # (a NamedTuple: created at every start, cheaper than a dataclass)
    doc: str  # what the message says (the catalogue's documentation)
    template: Callable[[Values], str]


KINDS: dict[str, Kind] = {
    # ---- a leaf a rule read, and what the target made of it
    "renamed": Kind(
        "carried to the target key with the same value",
        lambda v: "",
    ),
    "converted": Kind(
        "written as another value",
        lambda v: f"= {short(v['value'])}" if "value" in v else "",
    ),
    "expressed": Kind(
        "expressed by the target's structure, as its table notes",
        lambda v: str(v["note"]),
    ),
    "folded": Kind(
        "a further key of a rule, folded into the rule's fields",
        lambda v: f"folded into {_names(v['fields'])}",
    ),
    "carried": Kind(
        "a same-format translation carried the leaf as written",
        lambda v: "",
    ),
    "carried_unchecked": Kind(
        "a same-format translation carried a leaf of a model family neoconv does not read, without checking it",
        lambda v: f"carried as written, not checked: {v['what']}",
    ),
    "carried_as_written": Kind(
        "an unknown leaf a same-format translation carried as written",
        lambda v: "carried as written",
    ),
    "assumed": Kind(
        "a key whose value the target assumes",
        lambda v: f"{v['key']}={short(v['value'])} is what {v['title']} assumes",
    ),
    "not_assumed": Kind(
        "a key whose value differs from what the other frameworks assume",
        lambda v: f"{v['key']}={v['value']!r} is not expressible: the other frameworks assume {v['assumed']!r}",
    ),
    # ---- not written
    "no_counterpart": Kind(
        "the target has no counterpart (for these fields)",
        lambda v: f"{v['title']} has no counterpart" + (f" for {_names(v['fields'])}" if v.get("fields") else ""),
    ),
    "absent": Kind(
        "the target cannot express the field; its table says why",
        lambda v: str(v["reason"]),
    ),
    "not_derived": Kind(
        "no value for the fields could be derived",
        lambda v: f"no value for {_names(v['fields'])} could be derived",
    ),
    "means_absent": Kind(
        "the source says on purpose that the fields have no value (an explicit null, a switch that is off)",
        lambda v: f"no {_names(v['fields'])}: {v['why']}",
    ),
    "only_when": Kind(
        "the target rule applies under a condition the IR does not meet",
        _only_when,
    ),
    "unexpressible": Kind(
        "the target has the key but not this value (a formula's reason)",
        lambda v: str(v["reason"]),
    ),
    "no_counterpart_value": Kind(
        "an enum value the target key lacks",
        lambda v: f"{v['field']}={short(v['value'])} has no counterpart in {v['key']}",
    ),
    "no_place_in_layout": Kind(
        "the target layout has no place for the leaf (the writer's reason)",
        lambda v: str(v["reason"]),
    ),
    "derived_dropped": Kind(
        "values the source reader derived from others, with no key of their own, that the target has no place for "
        "(said on the entry of the leaf they came from, else in an entry of their own)",
        _derived_dropped,
    ),
    "unsupported_key": Kind(
        "a known key with no canonical meaning (the table's reason)",
        lambda v: str(v["reason"]),
    ),
    "not_read_by_release": Kind(
        "a key other releases read that the file's release does not (a rule would read it with their meaning)",
        lambda v: f"{v['title']} {v['release']} does not read {v['key']} (read by {v['runs']})",
    ),
    "family_not_supported": Kind(
        "the architecture block of a model family the canonical fields do not describe, set aside whole",
        lambda v: f"family not supported: {v['what']}; the canonical fields describe decoder-only language models",
    ),
    "framework_extension": Kind(
        "a known key of the source framework with no canonical field (its group's reason)",
        lambda v: str(v["reason"]),
    ),
    "no_canonical_form": Kind(
        "a value a formula reads as having no canonical form",
        lambda v: str(v["reason"]),
    ),
    "not_a_parameter": Kind(
        "a key the source framework does not know",
        _not_a_parameter,
    ),
    # ---- lost on the way
    "approximated": Kind(
        "the value is only approximated (a formula's, table's or reader's reason)",
        lambda v: str(v["reason"]),
    ),
    "cannot_express": Kind(
        "the target cannot express some of a rule's fields",
        lambda v: (
            f"{v['title']} cannot express {_names(v['fields'])}" + (f": {nested(v['why'])}" if v.get("why") else "")
        ),
    ),
    "relative_to_missing": Kind(
        "the target reads the value relative to a field the output does not hold",
        lambda v: (
            f"{v['title']} reads it relative to {v['field']}, which this output does not hold"
            + (f" ({nested(v['why'])})" if v.get("why") else "")
        ),
    ),
    "derived_by_target": Kind(
        "the target derives the value from a product whose other values are not known",
        lambda v: (
            f"{v['title']} derives {v['field']} from {v['total']} = {' x '.join(v['factors'])}; "
            f"{_names(v['unknown'])} is not known here"
        ),
    ),
    "fixed_value": Kind(
        "the target hard-codes the field: another value cannot be set",
        lambda v: f"{v['reason']}: {v['field']} {short(v['value'])} cannot be set",
    ),
    "no_flag_for_value": Kind(
        "no switch of the target means this value",
        lambda v: f"{v['field']}={short(v['value'])} has no counterpart among {_names(v['keys'])}",
    ),
    "wrong_length": Kind(
        "a list the target's keys cannot hold item by item",
        lambda v: f"{v['field']}={short(v['value'])}: {_names(v['keys'])} take exactly {len(v['keys'])} items",
    ),
    "picked_value": Kind(
        "the one key the target has means other values for some fields",
        lambda v: (
            f"{v['key']} {short(v['choice'])} means "
            + ", ".join(f"{f}={short(x)}" for f, x in v["means"].items())
            + ": "
            + ", ".join(f"{f}={short(x)}" for f, x in v["wanted"].items())
            + " is not expressible"
        ),
    ),
    "value_lost": Kind(
        "a value no source leaf carries (a default, a derived value) is lost",
        _value_lost,
    ),
    # ---- defaults
    "default_written": Kind(
        "the source's default, stated because the target's default differs",
        _default_written,
    ),
    "release_default": Kind(
        "a default the file relies on that differs between the releases its keys fit: the --from-version that decides",
        _release_default,
    ),
    "default_not_kept": Kind(
        "the source's default, not in the file, that the target cannot take",
        lambda v: (
            f"{v['title']} default {v['field']}={short(v['value'])}"
            + (f" ({v['key']})" if v.get("key") else "")
            + f", not in the file, is not kept: {nested(v['reason'])}"
        ),
    ),
    "derived_not_kept": Kind(
        "a value derived from other settings that the target cannot take",
        lambda v: (
            f"{v['title']} {v['field']}={short(v['value'])} (derived from other settings) is not kept: "
            f"{nested(v['reason'])}"
        ),
    ),
    "added_for_target": Kind(
        "a value the target needs that the source does not state, added so the target runs the same (the writer's or "
        "the table's reason)",
        _added_for_target,
    ),
    "target_value": Kind(
        "the target's own value of a field the source's format has no value for (read back from the output)",
        lambda v: (
            f"{v['title']} runs with {v['field']}={short(v['value'])}"
            + (f" (from {_names(v['keys'])})" if v.get("keys") else "")
            + f": {v['source']} has no value for it"
            + (f" ({v['why']})" if v.get("why") else "")
        ),
    ),
    "needs_value": Kind(
        "the target needs a value the source does not give",
        _needs_value,
    ),
    # ---- values given on the command line
    "set_written": Kind(
        "a --set value, written",
        lambda v: f"= {short(v['value'])}",
    ),
    "used_to_derive": Kind(
        "a --set value the target has no key for, used to derive others",
        lambda v: f"used to derive {_names(v['fields'])}",
    ),
    "overridden": Kind(
        "a leaf whose value a --set replaced",
        lambda v: f"overridden by --set {v['field']}",
    ),
    # ---- what the reading noticed about a leaf
    "coerced": Kind(
        "the schema's type coercion of the raw value",
        lambda v: str(v["note"]),
    ),
    "wrong_type": Kind(
        "a key no rule reads whose value is not of the documented type",
        lambda v: f"does not match the documented type ({v['message']}); not used by the translation",
    ),
    "reader_note": Kind(
        "what the reader did to the leaf",
        lambda v: str(v["note"]),
    ),
    "runtime_value": Kind(
        'a value only known at run time (HF\'s "auto")',
        _runtime_value,
    ),
    "not_a_value": Kind(
        "a value no name of the file's release is (a fork's optimizer, norm or schedule): its fields get none",
        _not_a_value,
    ),
    "read_with_unknown_value": Kind(
        "a key read together with one whose value the file's release does not know",
        lambda v: (
            f"read together with {v['key']}={short(v['value'])}, which the file's release does not know: "
            + (f"{_names(v['fields'])} not read" if v.get("fields") else "not read")
        ),
    ),
    "read_with_runtime_value": Kind(
        "a key read together with one whose value is only known at run time",
        lambda v: f"read together with {_names(v['keys'])}, whose value is only known at run time" + _set_hint(v),
    ),
    # ---- the translation's check of its own output
    "reads_back_differently": Kind(
        "reading the output back gives another value than the source's",
        _reads_back_differently,
    ),
    "refused_by_release": Kind(
        "the target release refuses the value as written, or does not read it (validate of the output)",
        _refused_by_release,
    ),
    "unreadable_output": Kind(
        "the written config cannot be read back",
        lambda v: f"the written config cannot be read back: {v['message']}",
    ),
    # ---- prose from code that gives no kind (a format writer's entries)
    "text": Kind(
        "free text",
        lambda v: str(v["text"]),
    ),
}


TEMPLATES: dict[str, Callable[[Values], str]] = {name: kind.template for name, kind in KINDS.items()}


def render(kind: str, values: Values) -> str:
    """The one place a message becomes text."""
    return TEMPLATES[kind](values)


class Said(str):
    """A reason rendered from a kind, that still knows its kind and values: what a formula or shape
    hands back where the engine takes text (Approx's detail, Unexpressible's message)."""

    kind: str
    values: Values

    def __new__(cls, kind: str, values: Values) -> "Said":
        made = super().__new__(cls, render(kind, values))
        made.kind, made.values = kind, values
        return made


def reason(kind: str, **values: Any) -> Said:
    """A reason of this kind, as text that keeps its kind (Approx(..., reason(...)))."""
    return Said(kind, values)


def as_message(reason: Any, kind: str = "approximated") -> Message:
    """A reason as a message: its own kind when it was Said, else `kind` carrying the text."""
    if isinstance(reason, Said):
        return reason.kind, reason.values
    return kind, {"reason": str(reason)}


def as_value(message: Message | None) -> dict[str, Any] | None:
    """A message as it sits inside another's values."""
    return None if message is None else {"kind": message[0], "values": dict(message[1])}


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
        return said(
            changes.get("source_key", self.source_key),
            changes.get("target_key", self.target_key),
            status,
            messages,
            changes.get("fields", self.fields),
            changes.get("target_keys", self.target_keys),
        )

    def relocated(
        self, moved: Mapping[str, str] | Callable[[str], str], in_values: Callable[[str], str] | None = None
    ) -> "Entry":
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
    return {
        name: (
            {where(k): v for k, v in value.items()}
            if name in KEYED_BY_TARGET and isinstance(value, MappingABC)
            else value
        )
        for name, value in values.items()
    }


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
