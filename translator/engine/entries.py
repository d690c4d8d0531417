"""The report's entries: one per source leaf (and per leaf of each --with companion), built from
the ledger and what emit did with each canonical field; then one per --set value. Every entry is
said as messages of report/kinds.py, its detail rendered from them. Then what no leaf's entry
carries: losses of values the target reads relative to a field the output does not hold, or that no
source leaf holds (a default, a value derived from others); and source values the reader derived
with no key of their own (NeoX's model.family from its blocks, its norm bias from the norm, Model
Zoo's embedding dropout from dropout_rate, a data-parallel size from the world size) that the target
has no place for: each said on the entry of the one leaf it was derived from (its provenance), those
derived from several leaves or none the report lists on one entry of their own."""

from __future__ import annotations

from typing import Any

from ..core.ir import IR, Origin
from ..core.report import Entry, Message, Report, Status, render, said
from ..core.report.kinds import TEMPLATES, as_value
from ..knowledge.catalogue import catalogue
from ..knowledge.mapping import Rule, Table
from .ledger import Ingested, LeafFate, fields_of
from .rule import Carried


def unanchored(
    applied: list[tuple[Rule, list[str]]], table: Table, ir: IR, carried: dict[str, Carried], extra: list[Entry]
) -> None:
    """A value the target reads relative to another field that the output does not hold (VeOmni's
    warmup as a ratio of a step count it cannot state, its accumulation derived from a missing
    global batch) does not read back: lossy, with why. Values given on the command line are given
    again when reading, so they hold."""
    missing = {name: e.messages()[0] for e in extra if e.status is Status.MISSING for name in e.fields}
    unheld: dict[str, Message] = {}
    order = table.read_rank
    for rule, present in sorted(applied, key=lambda item: order.get(id(item[0]), 0)):
        for _, name in rule.read_with:
            if name in present or (ir.has(name) and ir.fields[name].origin is Origin.USER):
                continue
            if not ir.has(name) and (rule.key is not None or name not in missing):
                continue  # optional and unknown; only a value derived from one the target needs is lost
            slot = carried.get(name)
            if slot is not None and not slot.unwritable and name not in unheld and (
                slot.target_keys or slot.note or slot.skipped
            ):
                continue  # written, expressed by a note, or not meant for this config (a `when`)
            absent = table.absent.get(name)
            why = unheld.get(name) or missing.get(name) or (slot.skipped if slot else None) or (
                ("absent", {"reason": absent, "field": name}) if absent else None)  # fmt: skip
            reason: Message = ("relative_to_missing", {"title": table.title, "field": name, "why": as_value(why)})
            for own in present:
                carried[own].lossy.append(reason)
                unheld.setdefault(own, reason)


def unique(messages: list[Message]) -> list[Message]:
    """Messages without repeats (two rules giving the same reason say it once)."""
    if len(messages) < 2:
        return messages
    seen: dict[str, Message] = {}
    for message in messages:
        seen.setdefault(render(*message), message)
    return list(seen.values())


def _lost_too(entry: Entry, reasons: list[Message], why: str) -> Entry:
    """A defaulted (or already upgraded) entry that now says a loss too: lossy, the reasons added
    as further messages unless the entry says them already (its detail is its messages, rendered)."""
    if why in entry.detail:
        return entry._replace(source_key=None, status=Status.LOSSY)
    values = dict(entry.values or {})
    values["also"] = [*values.get("also", ()), *(as_value(m) for m in reasons)]
    detail = f"{entry.detail}; {why}" if entry.detail else why
    return entry._replace(source_key=None, status=Status.LOSSY, detail=detail, values=values)


def unreported_losses(report: Report, extra: list[Entry], carried: dict[str, Carried], ir: IR, src_title: str) -> None:
    """A loss of a value no source leaf carries (a framework default, a value derived from others)
    is said too: in the `defaulted` entry that wrote it (now lossy), else in an entry of its own
    (source_key null) naming the fields, their values and what the target does."""
    covered = {name for e in report.entries if e.status is Status.LOSSY for name in e.fields}
    covered.update(name for e in extra if e.status is Status.LOSSY for name in e.fields)
    grouped: dict[tuple[tuple[str, ...], str], tuple[list[Message], list[str]]] = {}  # (targets, why) -> reasons, fields
    upgraded: set[int] = set()  # defaulted entries that now say a loss
    for name, slot in carried.items():
        if not slot.lossy or name in covered:
            continue
        reasons = unique(slot.lossy)
        if not ir.has(name):  # a field the source leaves out that the target would read as a value
            targets = tuple(dict.fromkeys(slot.target_keys))
            report.entries.append(said(None, ", ".join(targets) or None, Status.LOSSY, reasons, (name,), targets))
            continue
        why = "; ".join(render(*m) for m in reasons)
        at = next((i for i, e in enumerate(extra) if name in e.fields and (
            e.status is Status.DEFAULTED or i in upgraded)), None)  # fmt: skip
        if at is not None:
            # no source_key: a defaulted entry names a key the file lacks, a lossy one a leaf it has
            extra[at] = _lost_too(extra[at], reasons, why)
            upgraded.add(at)
            continue
        slot_key = (tuple(dict.fromkeys(slot.target_keys)), why)
        grouped.setdefault(slot_key, (reasons, []))[1].append(name)
    for (targets, _), (reasons, group) in grouped.items():
        values = [{"field": name, "value": ir.fields[name].value, "origin": ir.fields[name].origin.value,
                   "keys": list(ir.fields[name].source_keys)} for name in group]  # fmt: skip
        message: Message = ("value_lost", {"title": src_title, "values": values, "reasons": [as_value(m) for m in reasons]})
        report.entries.append(said(None, ", ".join(targets) or None, Status.LOSSY, (message,), tuple(group), targets))


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


def _passed_entry(leaf: str, ingested: Ingested, fate: LeafFate) -> Entry:
    """A leaf a same-format translation carried as written."""
    if fate.kind == "unknown":
        return said(leaf, leaf, Status.UNKNOWN, (*fate.notes, ("carried_as_written", {})), ())
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


# an entry a derived value can ride on: it already says the leaf's value is not carried
_CARRIES_LOSS = (Status.DROPPED, Status.LOSSY)
_NAMING = frozenset({Status.LOSSY, Status.DROPPED, Status.MISSING, Status.UNKNOWN})
_STATED = (Origin.EXPLICIT, Origin.DERIVED)  # a default the file leaves out is no value of its own; --set is said apart


def unheld_derived(report: Report, ingested: Ingested, table: Table) -> None:
    """Name, as dropped, every source value (not a default, not a --set value) that the target's
    table has no rule for and that no lossy/dropped/missing/unknown entry names yet."""
    ir, held = ingested.ir, table.held
    lost = [name for name, value in ir.fields.items() if name not in held and value.origin in _STATED
            and value.value is not None]  # fmt: skip
    if not lost:
        return
    from .difference import covered_or_summary

    entries = report.entries
    named = {name for e in entries if e.status in _NAMING for name in e.fields}
    lost = [name for name in lost if name not in named and not covered_or_summary(name, ir)]
    if not lost:
        return
    shown = {name: provenance(ingested, name) for name in lost}
    wanted = {key for keys in shown.values() for key in keys}
    by_leaf: dict[str, int] = {}  # a source leaf's entry, by the key the report shows
    for i, entry in enumerate(entries):
        if entry.source_key in wanted:
            by_leaf.setdefault(entry.source_key, i)
    riding: dict[int, list[str]] = {}  # entry index -> the derived fields said on it
    grouped: dict[str, list[str]] = {}  # the target table's reason ("" for none) -> fields
    for name in lost:
        at = _one_rule(entries, by_leaf, shown[name])
        for i in at:
            riding.setdefault(i, []).append(name)
        if not at:
            grouped.setdefault(table.absent.get(name, ""), []).append(name)
    src = ingested.table.title if ingested.table else "the source"
    for i, names in riding.items():
        entry, messages = entries[i], list(entries[i].messages())
        for reason in dict.fromkeys(table.absent.get(name, "") for name in names):
            alike = [name for name in names if table.absent.get(name, "") == reason]
            messages = _with_reason(messages, no_counterpart(table, alike), alike)
        messages.append(_message(src, ir, names, None))
        entries[i] = said(entry.source_key, entry.target_key, entry.status, messages, (*entry.fields, *names),
                          entry.target_keys)  # fmt: skip
    for names in grouped.values():
        message = _message(src, ir, names, shown)
        entries.append(said(None, None, Status.DROPPED, (message, no_counterpart(table, names)), tuple(names)))


def provenance(ingested: Ingested, name: str) -> list[str]:
    """The leaves (as the report shows them) and --set values a value came from."""
    return _shown(ingested, _leaves(ingested, name, set()))


def _leaves(ingested: Ingested, name: str, seen: set[str]) -> list[str]:
    """The source leaves (or --set values) a value came from: its own keys, else those of the
    values the source table derived it from (`with` fields), transitively."""
    value = ingested.ir.fields.get(name)
    if value is None or value.origin is Origin.DEFAULT or name in seen:
        return []
    if value.source_keys:
        return list(value.source_keys)
    seen.add(name)
    inputs: dict[str, None] = {}
    for part in (ingested, *ingested.companions):
        # the rules that derived rather than read (none of their keys in the file); of those, the ones
        # with no key at all when there are any (HF's parallel_shared_norm, not the Falcon block's)
        rules = [r for r in (part.table.rules_for_field(name) if part.table else ()) if not any(k in part.raw for k in r.keys)]
        for rule in [r for r in rules if not r.keys] or rules:
            inputs.update(dict.fromkeys(f for f in rule.with_fields.values() if f != name))
    return list(dict.fromkeys(leaf for f in inputs for leaf in _leaves(ingested, f, seen)))


def _shown(ingested: Ingested, leaves: list[str]) -> list[str]:
    """Leaves as the report shows them: a trainer-layout path, a companion file's `FILE:key`."""
    out = []
    for leaf in leaves:
        for part in (ingested, *ingested.companions):
            if part.source is not None and leaf in part.raw:
                prefix = "" if part is ingested else f"{part.source.files[0]}:"
                out.append(prefix + part.source.aliases.get(leaf, leaf))
                break
        else:
            out.append(leaf)  # a --set value
    return out


def _one_rule(entries: list[Entry], by_leaf: dict[str, int], leaves: list[str]) -> list[int]:
    """The entries of the one leaf the value was derived from, or of one rule's leaves (entries about
    the same fields: HF's model_type and architectures), when they already say the value is not
    carried; else none."""
    found = [by_leaf.get(key) for key in leaves]
    if not found or None in found:
        return []
    at = list(dict.fromkeys(i for i in found if i is not None))
    if any(entries[i].fields != entries[at[0]].fields for i in at):
        return []  # several leaves of several rules: said apart, with where it came from
    return at if all(entries[i].status in _CARRIES_LOSS for i in at) else []


def _with_reason(messages: list[Message], why: Message, names: list[str]) -> list[Message]:
    """An entry's messages, saying `why` the derived fields are not carried too: the entry's own
    "no counterpart for ..." names them as well, the same `absent` reason is not said twice."""
    out = list(messages)
    for i, (kind, values) in enumerate(out):
        if kind == why[0] == "no_counterpart" and values.get("title") == why[1]["title"]:
            if values.get("fields"):
                out[i] = (kind, {**values, "fields": [*values["fields"], *names]})
            return out
        if kind == why[0] == "absent" and values.get("reason") == why[1]["reason"]:
            return out
    return [*out, why]


def _message(src: str, ir: IR, names: list[str], provenance: dict[str, list[str]] | None) -> Message:
    """`provenance` None: said on the entry of the leaf the values came from."""
    values: list[dict[str, Any]] = []
    for name in names:
        item: dict[str, Any] = {"field": name, "value": ir.fields[name].value}
        if provenance is not None:
            item["from"] = provenance[name]
        values.append(item)
    return "derived_dropped", {"title": src, "values": values, "own_entry": provenance is not None}
