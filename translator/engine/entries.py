"""The report's entries: one per source leaf (and per leaf of each --with companion), built from
the ledger and what emit did with each canonical field; then one per --set value. Every entry is
said as messages of report/kinds.py, its detail rendered from them."""

from __future__ import annotations

from typing import Any

from ..knowledge.catalogue import catalogue
from ..core.ir import Origin
from ..knowledge.mapping import Rule, Table
from ..core.report import Entry, Message, Report, Status, said
from ..core.report.kinds import TEMPLATES
from ..core.report.kinds import as_value
from .ledger import Ingested, LeafFate, fields_of
from .losses import unique
from .writing import Carried

_NOTHING: dict[str, Any] = {}  # the values of a message with none (shared: never changed)
_CARRIED: tuple[Message, ...] = (("carried", _NOTHING),)


def leaf_entries(
    ingested: Ingested, table: Table, dst_format: str, carried: dict[str, Carried], out: dict[str, Any],
    passed: set[str], homeless: dict[str, str],
) -> list[Entry]:  # fmt: skip
    entries: list[Entry] = []
    src_format = ingested.source.format if ingested.source else "?"
    for part in (ingested, *ingested.companions):
        prefix = "" if part is ingested else f"{part.source.files[0] if part.source else '?'}:"
        part_format = part.source.format if part.source else src_format
        for leaf, fate in part.fates.items():
            if part is ingested and leaf in passed:
                entry = _passed_entry(leaf, part, fate)
            elif part is ingested and leaf in homeless:
                entry = said(leaf, None, Status.DROPPED, (("no_place_in_layout", {"reason": homeless[leaf]}), *fate.notes),
                             fields_of(fate))  # fmt: skip
            elif fate.kind == "unsupported" and len(fate.notes) == 1:  # the commonest leaf no rule takes
                kind, values = fate.notes[0]
                entry = Entry(leaf, None, Status.DROPPED, TEMPLATES[kind](values), (), kind, values)
            elif fate.kind == "rule" and fate.rule is not None and not fate.rule.is_const:  # the commonest of all
                entry = _rule_entry(leaf, part.raw.get(leaf), fate, fate.rule, part, carried, table)
            else:
                entry = _entry_for(leaf, part.raw.get(leaf), fate, part, out, table, dst_format, part_format)
            shown = part.source.aliases.get(leaf, leaf) if part.source else leaf
            if prefix or shown != leaf:
                entry = entry._replace(source_key=prefix + shown)
            entries.append(entry)
    return entries


def set_entries(report: Report, ingested: Ingested, table: Table, carried: dict[str, Carried]) -> None:
    """What became of each --set value: written, used to derive others, or without a counterpart."""
    ir = ingested.ir
    for name, value in ir.fields.items():
        if value.origin is not Origin.USER:
            continue
        given = carried.get(name)
        if given and given.target_keys:
            keys = tuple(dict.fromkeys(given.target_keys))
            report.entries.append(said(f"--set {name}", ", ".join(keys), Status.EXACT,
                                       (("set_written", {"field": name, "value": value.value}),), (name,), keys))  # fmt: skip
            continue
        readers = ingested.table.rules_reading(name) if ingested.table else []
        summary_of = catalogue()[name].summary_of  # a schedule summary: the phases are rebuilt from it
        users = [summary_of] if summary_of else sorted({f for r in readers for f in r.fields if ir.has(f)})
        if users:
            used: Message = ("used_to_derive", {"fields": users})
            report.entries.append(said(f"--set {name}", None, Status.CONVERTED, (used,), (name,)))
        else:
            why = _waits_for(table, ir, name) or no_counterpart(table, [name])
            report.entries.append(said(f"--set {name}", None, Status.DROPPED, (why,), (name,)))


def _waits_for(table: Table, ir: Any, name: str) -> Message | None:
    """A target rule writes the field but needs another one the IR lacks (VeOmni's config.json
    class needs model.family): name that one, not "no counterpart"."""
    for rule in table.rules_for_field(name):
        lacking = [f for f in rule.with_fields.values() if f not in rule.fields and not ir.has(f)
                   and table.rules_for_field(f)]  # fmt: skip
        if lacking:
            choices = catalogue()[lacking[0]].enum
            value = f"{{{', '.join(choices[:6])}, ...}}" if choices else "VALUE"
            hint = f"{table.title} writes {name} only with {lacking[0]}: give --set {lacking[0]}={value} too"
            return "needs_value", {"field": lacking[0], "hint": hint, "elsewhere": None}
    return None


def no_counterpart(table: Table, fields: list[str]) -> Message:
    """Why the target writes nothing for these fields: its table's `absent` reason, or none."""
    absent = next((table.absent[f] for f in fields if f in table.absent), None)
    if absent is not None:
        return "absent", {"reason": absent, "field": next(f for f in fields if f in table.absent)}
    return "no_counterpart", {"title": table.title, "fields": fields}


def _placeholder(leaf: str, fate: LeafFate, ingested: Ingested) -> bool:
    """The leaf, or the run-time value it is read with, is a placeholder the launcher fills (Source.placeholders)."""
    filled = ingested.source.placeholders if ingested.source is not None else frozenset()
    causes = [leaf, *(key for kind, values in fate.notes if kind == "read_with_runtime_value" for key in values["keys"])]
    return any(cause in filled for cause in causes)


def _passed_entry(leaf: str, ingested: Ingested, fate: LeafFate) -> Entry:
    """A leaf a same-format translation carried as written."""
    if fate.kind == "unknown":
        return said(leaf, leaf, Status.UNKNOWN, (*fate.notes, ("carried_as_written", {})), ())
    family = next((values for kind, values in fate.notes if kind == "family_not_supported"), None)
    if fate.kind == "unsupported" and family is not None:
        # a model family neoconv does not read (an HF model_type no row maps): carried, and not checked
        return said(leaf, leaf, Status.EXACT, (("carried_unchecked", {"what": family["what"]}),), ())
    if leaf in ingested.coerced:
        notes = fate.notes if fate.kind == "rule" else ()
        return said(leaf, leaf, Status.CONVERTED, notes or _CARRIED, fields_of(fate))
    notes = fate.notes if fate.kind == "rule" else ((fate.caveat,) if fate.caveat else ())
    return said(leaf, leaf, Status.EXACT, notes or _CARRIED, fields_of(fate))


def _entry_for(
    leaf: str, raw: Any, fate: LeafFate, ingested: Ingested, out: dict[str, Any], table: Table, dst_format: str,
    src_format: str,
) -> Entry:  # fmt: skip
    if fate.kind == "unknown":
        return said(leaf, None, Status.UNKNOWN, fate.notes)
    if fate.kind == "unsupported":
        return said(leaf, None, Status.DROPPED, fate.notes)
    if fate.kind == "extension":
        if dst_format == src_format and out.get(leaf) == raw:
            return said(leaf, leaf, Status.EXACT, fate.notes or _CARRIED, ())
        # a rule's reading with no canonical form says why; a known key with no rule has no counterpart
        if fate.rule is not None:
            return said(leaf, None, Status.DROPPED, fate.notes, fields_of(fate))
        return said(leaf, None, Status.DROPPED, (("no_counterpart", {"title": table.title}), *fate.notes))
    if fate.kind == "unresolved":
        if dst_format == src_format and out.get(leaf) == raw:
            return said(leaf, leaf, Status.EXACT, fate.notes, fields_of(fate))
        if _placeholder(leaf, fate, ingested):
            # the launcher fills the value ("auto"): missing, with the --set that gives it; a key no
            # canonical field holds (a ZeRO bucket size) is not carried either way
            return said(leaf, None, Status.MISSING if fate.rule and fate.rule.fields else Status.DROPPED, fate.notes,
                        fields_of(fate))
        return said(leaf, None, Status.LOSSY if fate.rule else Status.DROPPED, fate.notes, fields_of(fate))
    rule = fate.rule
    assert rule is not None and rule.is_const
    reason = ingested.lossy.get(id(rule))
    if reason:
        return said(leaf, None, Status.LOSSY, (reason,))
    assumed: Message = ("assumed", {"key": leaf, "value": raw, "title": table.title})
    return said(leaf, None, Status.EXACT if dst_format == src_format else Status.CONVERTED, (assumed, *fate.notes))


def _rule_entry(
    leaf: str, raw: Any, fate: LeafFate, rule: Rule, ingested: Ingested, carried: dict[str, Carried], table: Table
) -> Entry:
    """A leaf a rule read: dropped (nothing written), lossy (with every reason), exact or converted."""
    slots = [carried.get(name) for name in rule.fields]
    done = [s for s in slots if s and (s.target_keys or s.note or s.lossy)]
    if not done:
        return _unwritten(leaf, fate, rule, slots, ingested, table)
    if len(slots) == 1:  # the common case: one field, written to its keys
        only = done[0]
        targets = only.target_keys if len(only.target_keys) < 2 else list(dict.fromkeys(only.target_keys))
        lossy, values, note = list(only.lossy), only.written, only.note
        placed = bool(only.target_keys or only.note)
        missing = [] if placed or not ingested.ir.has(rule.fields[0]) else [rule.fields[0]]
        lost_fields = rule.fields
    else:
        targets = list(dict.fromkeys(k for s in done for k in s.target_keys))
        lossy = [x for s in done for x in s.lossy]
        values = [v for s in done for v in s.written]
        note = next((s.note for s in done if s.note), "")
        # fields the source gave a value the target could not place (fields without a value lose nothing)
        missing = [f for f, s in zip(rule.fields, slots) if not (s and (s.target_keys or s.note)) and ingested.ir.has(f)]
        lost_fields = tuple(f for f, s in zip(rule.fields, slots) if (s and s.lossy) or f in missing)
    target = ", ".join(targets) or None
    read_lossy = ingested.lossy.get(id(rule))
    if read_lossy:
        lossy.insert(0, read_lossy)
    if rule.lossy:
        lossy.insert(0, ("approximated", {"reason": rule.lossy}))
    if read_lossy or rule.lossy:  # the rule's reading or mapping as a whole is approximate
        lost_fields = rule.fields
    if missing:
        why = next((s.skipped for f, s in zip(rule.fields, slots) if f in missing and s and s.skipped), None) or next(
            (("absent", {"reason": table.absent[f], "field": f}) for f in missing if f in table.absent), None)
        lossy.append(("cannot_express", {"title": table.title, "fields": missing, "why": as_value(why)}))
    if lossy:
        return said(leaf, target, Status.LOSSY, (*unique(lossy), *fate.notes), lost_fields, _keys(targets))
    exact = (
        len(rule.keys) == 1 and leaf == rule.key and len(targets) == 1 and len(values) == 1
        and _same(raw, values[0]) and not fate.notes
    )  # fmt: skip
    if exact:  # the commonest entry: said without rendering
        return Entry(leaf, target, Status.EXACT, "", rule.fields, "renamed", _NOTHING, _keys(targets))
    if leaf != rule.key and rule.key is not None and leaf in rule.also:
        main: Message = ("folded", {"fields": [f for f in rule.fields if ingested.ir.has(f)] or list(rule.fields)})
    elif note:
        main = ("expressed", {"note": note})
    else:
        main = ("converted", {"value": values[0]} if len(values) == 1 else _NOTHING)
    if fate.notes:
        return said(leaf, target, Status.CONVERTED, (main, *fate.notes), rule.fields, _keys(targets))
    return Entry(leaf, target, Status.CONVERTED, TEMPLATES[main[0]](main[1]), rule.fields, main[0], main[1], _keys(targets))


def _unwritten(
    leaf: str, fate: LeafFate, rule: Rule, slots: list[Carried | None], ingested: Ingested, table: Table
) -> Entry:
    """A rule's leaf whose fields the target did not write: why (skipped, absent, no counterpart); a
    leaf that says its fields have no value (an explicit null) is carried: the target leaves them out too."""
    if any(kind == "means_absent" for kind, _ in fate.notes):
        return said(leaf, None, Status.CONVERTED, fate.notes, rule.fields)
    why = next((s.skipped for s in slots if s and s.skipped), None) or no_counterpart(table, list(rule.fields))
    if not any(f in ingested.ir.fields and ingested.ir.fields[f].value is not None for f in rule.fields):
        why = ("not_derived", {"fields": list(rule.fields)})
    return said(leaf, None, Status.DROPPED, (why, *fate.notes), rule.fields)


def _keys(targets: list[str]) -> tuple[str, ...]:
    """The target keys one by one, when there are several (one is the entry's target_key itself)."""
    return tuple(targets) if len(targets) > 1 else ()


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b or (
        isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool)
        and not isinstance(b, bool) and a == b
    )  # fmt: skip
