"""IR -> target leaves, and the report's entries. Every rule of the target table writes its fields, in
table order (the order in which a writer emits keys; rule.py writes one); values the source file left
at its framework's default are stated in the target when the target's default differs (`defaulted`),
or said to be lost when the target cannot take them.

Then the report: one entry per source leaf (and per leaf of each --with companion), built from the
ledger and what emit did with each canonical field; then one per --set value. Every entry is said as
messages of report/kinds.py, its detail rendered from them. Then what no leaf's entry carries: losses
of values the target reads relative to a field the output does not hold, or that no source leaf holds
(a default, a value derived from others); and source values the reader derived with no key of their
own (NeoX's model.family from its blocks, its norm bias from the norm, Model Zoo's embedding dropout
from dropout_rate, a data-parallel size from the world size) that the target has no place for: each
said on the entry of the one leaf it was derived from (its provenance), those derived from several
leaves or none the report lists on one entry of their own."""

from __future__ import annotations

from typing import Any, Callable

from ..core.ir import IR, Origin
from ..core.report import Entry, Message, Report, Status, as_message, render, said
from ..core.report.kinds import TEMPLATES, as_value
from ..knowledge.catalogue import catalogue
from ..knowledge.formula import Approx, Unexpressible, is_close
from ..knowledge.schema import load_history
from ..knowledge.versions import name_release_defaults
from ..knowledge.mapping import Rule, Table
from .ledger import Ingested, LeafFate, carried_whole, fields_of
from .moved import meaning_moved
from .rule import (
    LOSS,
    MISSING,
    UNDOCUMENTED,
    Carried,
    Written,
    at_default,
    key_default,
    reason_for,
    unsolved,
    write_formula,
    write_simple,
)


def unanchored(
    applied: list[tuple[Rule, list[str]]],
    table: Table,
    ir: IR,
    carried: dict[str, Carried],
    extra: list[Entry],
    kept: frozenset[str] = frozenset(),
) -> None:
    """A value the target reads relative to another field that the output does not hold (VeOmni's
    warmup as a ratio of a step count it cannot state, its accumulation derived from a missing
    global batch) does not read back: lossy, with why. Values given on the command line are given
    again when reading, so they hold; so do `kept` fields (a same-format output carries their keys as written)."""
    missing = {name: e.messages()[0] for e in extra if e.status is Status.MISSING for name in e.fields}
    unheld: dict[str, Message] = {}
    order = table.read_rank
    for rule, present in sorted(applied, key=lambda item: order.get(id(item[0]), 0)):
        for _, name in rule.read_with:
            if name in present or name in kept or (ir.has(name) and ir.fields[name].origin is Origin.USER):
                continue
            if not ir.has(name) and (rule.key is not None or name not in missing):
                continue  # optional and unknown; only a value derived from one the target needs is lost
            slot = carried.get(name)
            if (
                slot is not None
                and not slot.unwritable
                and name not in unheld
                and (slot.target_keys or slot.note or slot.skipped)
            ):
                continue  # written, expressed by a note, or not meant for this config (a `when`)
            absent = table.absent.get(name)
            why = (
                unheld.get(name)
                or missing.get(name)
                or (slot.skipped if slot else None)
                or (("absent", {"reason": absent, "field": name}) if absent else None)
            )
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
    grouped: dict[
        tuple[tuple[str, ...], str], tuple[list[Message], list[str]]
    ] = {}  # (targets, why) -> reasons, fields
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
        at = next(
            (i for i, e in enumerate(extra) if name in e.fields and (e.status is Status.DEFAULTED or i in upgraded)),
            None,
        )
        if at is not None:
            # no source_key: a defaulted entry names a key the file lacks, a lossy one a leaf it has
            extra[at] = _lost_too(extra[at], reasons, why)
            upgraded.add(at)
            continue
        slot_key = (tuple(dict.fromkeys(slot.target_keys)), why)
        grouped.setdefault(slot_key, (reasons, []))[1].append(name)
    for (targets, _), (reasons, group) in grouped.items():
        values = [
            {
                "field": name,
                "value": ir.fields[name].value,
                "origin": ir.fields[name].origin.value,
                "keys": list(ir.fields[name].source_keys),
            }
            for name in group
        ]
        message: Message = (
            "value_lost",
            {"title": src_title, "values": values, "reasons": [as_value(m) for m in reasons]},
        )
        report.entries.append(said(None, ", ".join(targets) or None, Status.LOSSY, (message,), tuple(group), targets))


_NOTHING: dict[str, Any] = {}  # the values of a message with none (shared: never changed)
_CARRIED: tuple[Message, ...] = (("carried", _NOTHING),)


def leaf_entries(
    ingested: Ingested,
    table: Table,
    dst_format: str,
    carried: dict[str, Carried],
    out: dict[str, Any],
    passed: set[str],
    homeless: dict[str, str],
) -> list[Entry]:
    entries: list[Entry] = []
    src_format = ingested.source.format if ingested.source else "?"
    for part in (ingested, *ingested.companions):
        prefix = "" if part is ingested else f"{part.source.files[0] if part.source else '?'}:"
        part_format = part.source.format if part.source else src_format
        for leaf, fate in part.fates.items():
            if part is ingested and leaf in passed:
                entry = _passed_entry(leaf, part, fate)
            elif part is ingested and leaf in homeless:
                entry = said(
                    leaf,
                    None,
                    Status.DROPPED,
                    (("no_place_in_layout", {"reason": homeless[leaf]}), *fate.notes),
                    fields_of(fate),
                )
            elif fate.kind == "unsupported" and len(fate.notes) == 1 and dst_format not in part.kept_by:  # commonest
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
            report.entries.append(
                said(
                    f"--set {name}",
                    ", ".join(keys),
                    Status.EXACT,
                    (("set_written", {"field": name, "value": value.value}),),
                    (name,),
                    keys,
                )
            )
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
        lacking = [
            f for f in rule.with_fields.values() if f not in rule.fields and not ir.has(f) and table.rules_for_field(f)
        ]
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
    causes = [
        leaf,
        *(key for kind, values in fate.notes if kind == "read_with_runtime_value" for key in values["keys"]),
    ]
    return any(cause in filled for cause in causes)


def _passed_entry(leaf: str, ingested: Ingested, fate: LeafFate) -> Entry:
    """A leaf a same-format translation carried as written."""
    source = ingested.source
    if fate.kind == "unknown" and source is not None and leaf in source.unknown_values:  # expanded alike when run
        return said(leaf, leaf, Status.EXACT, (*fate.notes, ("carried_as_written", {})), fields_of(fate))
    if fate.kind == "unknown":
        return said(leaf, leaf, Status.UNKNOWN, (*fate.notes, ("carried_as_written", {})), fields_of(fate))
    family = next((values for kind, values in fate.notes if kind == "family_not_supported"), None)
    if fate.kind == "unsupported" and family is not None:  # a family no row reads: carried, and not checked
        read_as = tuple(note for note in fate.notes if note[0] == "reader_note")  # what the reader made of the text
        return said(leaf, leaf, Status.EXACT, (*read_as, ("carried_unchecked", {"what": family["what"]})), ())
    if leaf in ingested.coerced:
        notes = fate.notes if fate.kind == "rule" else ()
        return said(leaf, leaf, Status.CONVERTED, notes or _CARRIED, fields_of(fate))
    notes = fate.notes if fate.kind == "rule" else ((fate.caveat,) if fate.caveat else ())
    return said(leaf, leaf, Status.EXACT, notes or _CARRIED, fields_of(fate))


def _entry_for(
    leaf: str,
    raw: Any,
    fate: LeafFate,
    ingested: Ingested,
    out: dict[str, Any],
    table: Table,
    dst_format: str,
    src_format: str,
) -> Entry:
    if fate.kind == "unknown":  # (a key no release knows, or a rule's value no name of the release is)
        return said(leaf, None, Status.UNKNOWN, fate.notes, fields_of(fate))
    if fate.kind == "unsupported":
        return carried_whole(leaf, fate, ingested, dst_format) or said(leaf, None, Status.DROPPED, fate.notes)
    if fate.kind == "extension":  # (a multimodal model carried whole: in the file written, as it was)
        if dst_format == src_format and out.get(leaf) == raw or dst_format in ingested.kept_by:
            return said(leaf, leaf, Status.EXACT, fate.notes or _CARRIED, ())
        # a rule's reading with no canonical form says why; a known key with no rule has no counterpart
        if fate.rule is not None:
            return said(leaf, None, Status.DROPPED, fate.notes, fields_of(fate))
        return said(leaf, None, Status.DROPPED, (("no_counterpart", {"title": table.title}), *fate.notes))
    if fate.kind == "unresolved":
        if dst_format == src_format and out.get(leaf) == raw:
            return said(leaf, leaf, Status.EXACT, fate.notes, fields_of(fate))
        if _placeholder(leaf, fate, ingested):
            # the launcher fills the value ("auto"): missing, with the --set that gives it (converted once given);
            # a key no canonical field holds (a ZeRO bucket size) is not carried either way
            return said(leaf, None, *ingested.run_time_value(fate), fields_of(fate))
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
        missing = [
            f for f, s in zip(rule.fields, slots) if not (s and (s.target_keys or s.note)) and ingested.ir.has(f)
        ]
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
            (("absent", {"reason": table.absent[f], "field": f}) for f in missing if f in table.absent), None
        )
        lossy.append(("cannot_express", {"title": table.title, "fields": missing, "why": as_value(why)}))
    if lossy:
        return said(leaf, target, Status.LOSSY, (*unique(lossy), *fate.notes), lost_fields, _keys(targets))
    exact = (
        leaf in rule.keys
        and sum(k in ingested.fates for k in rule.keys) == 1  # one spelling of the rule's given
        and len(targets) == 1
        and len(values) == 1
        and _same(raw, values[0])
        and not fate.notes
    )
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
    return Entry(
        leaf, target, Status.CONVERTED, TEMPLATES[main[0]](main[1]), rule.fields, main[0], main[1], _keys(targets)
    )


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
    return (
        type(a) is type(b)
        and a == b
        or (
            isinstance(a, (int, float))
            and isinstance(b, (int, float))
            and not isinstance(a, bool)
            and not isinstance(b, bool)
            and a == b
        )
    )


# an entry a derived value can ride on: it already says the leaf's value is not carried
_CARRIES_LOSS = (Status.DROPPED, Status.LOSSY)
_NAMING = frozenset({Status.LOSSY, Status.DROPPED, Status.MISSING, Status.UNKNOWN})
_STATED = (Origin.EXPLICIT, Origin.DERIVED)  # a default the file leaves out is no value of its own; --set is said apart


def unheld_derived(report: Report, ingested: Ingested, table: Table) -> None:
    """Name, as dropped, every source value (not a default, not a --set value) that the target's
    table has no rule for and that no lossy/dropped/missing/unknown entry names yet."""
    ir, held = ingested.ir, table.held
    lost = [
        name
        for name, value in ir.fields.items()
        if name not in held and value.origin in _STATED and value.value is not None
    ]
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
        entries[i] = said(
            entry.source_key, entry.target_key, entry.status, messages, (*entry.fields, *names), entry.target_keys
        )
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
        rules = [
            r
            for r in (part.table.rules_for_field(name) if part.table else ())
            if not any(k in part.raw for k in r.keys)
        ]
        for rule in [r for r in rules if not r.keys] or rules:
            inputs.update(dict.fromkeys(f for f in rule.read_deps if f != name))
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


def defaulted_entry(
    ingested: Ingested, table: Table, rule: Rule, present: list[str], written: Written, version: str
) -> Entry:
    """A source default written because the target's own default differs: which default, where
    the source keeps it, what was written and what the target would have used."""
    src_title = ingested.table.title if ingested.table else (ingested.source.format if ingested.source else "?")
    target_title = table.title
    read_as = ingested.source.version if ingested.source else None
    if src_title == target_title and read_as and read_as != version:  # a migration between releases: name them
        src_title, target_title = f"{src_title} {read_as}", f"{target_title} {version}"
    src_rules = ingested.table.rules_for_field(present[0]) if ingested.table else []
    src_key = src_rules[0].key if src_rules and src_rules[0].key else None
    if src_key is not None and ingested.source is not None:  # as the file's layout spells it (VeOmni #1090)
        src_key = ingested.source.aliases.get(src_key, src_key)
    documented = {k: d for k in written if (d := key_default(rule, k, version)) is not UNDOCUMENTED}
    # "the target's default is X" speaks of the field: only a one-key transform turns the key's
    # default into the field's (an inverted flag's false is the field's true); otherwise name the key
    as_field = rule.simple is not None and rule.key is not None and list(documented) == [rule.key]
    message: Message = (
        "default_written",
        {
            "title": src_title,
            "field": present[0],
            "value": ingested.ir.get(present[0]),
            "target": target_title,
            "target_defaults": documented,
            "key_default": as_field,
            "written": {k: v[0] for k, v in written.items()},
            **({"field_default": _as_field(rule, documented[rule.key])} if as_field and rule.key else {}),
        },
    )
    caveat = ingested.lossy.get(id(src_rules[0])) if src_rules else None
    keys = tuple(written)
    # a caveat of the source's reading concerns all its fields (a schedule left unknown)
    fields = src_rules[0].fields if caveat else tuple(present)
    return said(src_key, ", ".join(keys), Status.DEFAULTED, (message, caveat) if caveat else (message,), fields, keys)


def default_not_kept(
    extra: list[Entry], ingested: Ingested, rule: Rule, present: list[str], why: Message | Approx
) -> None:
    """A value no source leaf carries (the source's default, or one derived from other fields) that
    the target cannot take has no leaf entry to say so: it gets an entry of its own (NeoX's default
    betas [0.9, 0.999] against VeOmni's hard-coded ones)."""
    title = ingested.table.title if ingested.table else "the source"
    for name in present:
        value = ingested.ir.fields[name]
        if value.origin is Origin.USER or (value.origin is not Origin.DEFAULT and value.source_keys):
            continue  # a --set entry, or the entries of the leaves it came from, say it
        if isinstance(why, Approx):
            said_here = reason_for(why, name)
            if said_here is None:
                continue
            reason = said_here
        else:
            reason = why
        if value.origin is Origin.DEFAULT:
            src_rules = ingested.table.rules_for_field(name) if ingested.table else []
            src_key = src_rules[0].key if src_rules and src_rules[0].key else None
            message: Message = (
                "default_not_kept",
                {"title": title, "field": name, "value": value.value, "key": src_key, "reason": as_value(reason)},
            )
        else:
            message = (
                "derived_not_kept",
                {"title": title, "field": name, "value": value.value, "reason": as_value(reason)},
            )
        # no source_key: the file has no such leaf (the one-entry-per-leaf invariant counts leaves)
        extra.append(said(None, rule.key, Status.LOSSY, (message,), (name,), (rule.key,) if rule.key else ()))


def _as_field(rule: Rule, default: Any) -> Any:
    try:
        return rule.simple.read(default) if rule.simple is not None else default
    except ValueError:  # a documented default the transform does not know: shown as the key has it
        return default


def emit(
    ingested: Ingested,
    table: Table,
    dst_format: str,
    *,
    version: str | None = None,
    unplaceable: Callable[[str], str | None] | None = None,
) -> tuple[dict[str, Any], Report]:
    """Write the IR with the target table; build the report from the source ledger.

    Same format (a layout migration, a merge, a --set edit): every source leaf is carried as
    written (after type coercion) and only rules whose values came from elsewhere (--set, a
    --with companion) are written from the IR, so nothing is re-derived or normalised away.
    `unplaceable(leaf)` says why the target layout has no place for a leaf (None: it has one).
    """
    run = _Emission(ingested, table, dst_format, version or table.versions[0], unplaceable)
    if run.same:
        run.carry_as_written()
    run.write_all(table.rules)
    unanchored(run.applied, table, ingested.ir, run.carried, run.extra, run.kept())
    if table.products:
        unsolved(table, ingested.ir, run.carried)
    src_format = ingested.source.format if ingested.source else "?"
    if dst_format == src_format:  # framework-only extensions go back where they came from
        for leaf, value in ingested.ir.extensions.get(src_format, {}).items():
            if leaf not in run.homeless and (unplaceable is None or not unplaceable(leaf)):
                run.out.setdefault(leaf, value)
    report = Report()
    report.entries = leaf_entries(ingested, table, dst_format, run.carried, run.out, run.passed, run.homeless)
    src_title = ingested.table.title if ingested.table else src_format
    unreported_losses(report, run.extra, run.carried, ingested.ir, src_title)
    set_entries(report, ingested, table, run.carried)
    report.entries.extend(run.extra)
    if not run.same:
        unheld_derived(report, ingested, table)
    name_release_defaults(report, ingested.source, ingested.table)
    return run.out, report


class _Emission:
    """One translation's writing under way: the target leaves, and what became of each field."""

    def __init__(
        self,
        ingested: Ingested,
        table: Table,
        dst_format: str,
        version: str,
        unplaceable: Callable[[str], str | None] | None,
    ) -> None:
        self.ingested, self.table, self.version, self.unplaceable = ingested, table, version, unplaceable
        self.history = load_history(dst_format)  # what the target release's code takes for a key (whole numbers)
        self.ir = ingested.ir
        self.values = self.ir.plain()
        self.out: dict[str, Any] = {}
        self.carried: dict[str, Carried] = {}
        self.extra: list[Entry] = []  # entries no source leaf carries: missing, defaulted, unkept defaults
        source = ingested.source
        self.same = dst_format == (source.format if source else "?") and source is not None
        self.unsupplied: dict[str, str] = dict(source.meta.get("unsupplied") or {}) if source else {}
        self.fresh = _fresh_rules(ingested, table, version, unplaceable) if self.same else set()
        self.passed: set[str] = set()
        self.applied: list[tuple[Rule, list[str]]] = []  # rules that wrote (or noted) their fields, with those fields
        self.homeless: dict[str, str] = {}  # leaf -> why the target layout has no place for it

    def kept(self) -> frozenset[str]:
        """Same format: the fields of rules not rewritten whose keys the output carries as written."""
        if not self.same:
            return frozenset()
        out = self.out
        return frozenset(
            name
            for rule in self.table.rules
            if id(rule) not in self.fresh and any(k in out for k in rule.keys)
            for name in rule.fields
        )

    def carry_as_written(self) -> None:
        """Same format: every leaf no --set or companion value replaces is written as it was read."""
        ingested = self.ingested
        for leaf, fate in ingested.fates.items():
            if fate.kind == "rule" and fate.rule is not None and id(fate.rule) in self.fresh:
                continue  # rewritten from the IR
            why = self.unplaceable(leaf) if self.unplaceable is not None else None
            if why:
                self.homeless[leaf] = why
                continue
            self.out[leaf] = ingested.coerced.get(leaf, ingested.raw.get(leaf))
            self.passed.add(leaf)

    def write_all(self, rules: tuple[Rule, ...]) -> None:
        """Every rule writes its fields (the hot loop: a batch runs it for every rule of every file)."""
        ir, carried, out, version, values = self.ir, self.carried, self.out, self.version, self.values
        fields, same, fresh, applied = ir.fields, self.same, self.fresh, self.applied
        for rule in rules:
            if rule.versions and version not in rule.versions:
                continue
            if same and id(rule) not in fresh:
                continue
            if rule.is_const:
                if rule.key and rule.applies(values):
                    out[rule.key] = rule.const
                    self.extra.append(_const_entry(self.table, rule))
                continue
            if rule.product and rule.key is None and rule.formula is None and not rule.note:
                continue  # a relation only: nothing to write (solve.unsolved checks it)
            present = [f for f in rule.fields if (known := fields.get(f)) is not None and known.value is not None]
            if not present:
                self._missing(rule)
                continue
            if rule.when and not rule.applies(values):
                self._not_now(rule, present)
                continue
            try:
                if rule.simple is not None:
                    written = write_simple(rule, fields[present[0]].value)
                else:  # a formula, or a note (no key, no formula: nothing to write)
                    written = write_formula(rule, ir, version, self.ingested.source) if rule.formula is not None else {}
            except Unexpressible as exc:
                self._unwritable(rule, present, exc)
                continue
            if written is None:
                continue
            fraction = self._not_whole(written)
            if fraction is not None:  # the release's code takes a whole number there (DeepSpeed's int min_loss_scale)
                self._unwritable(rule, present, fraction)
                continue
            applied.append((rule, present))
            for key in [k for k in written if k.startswith(MISSING)]:
                self._needed(rule, key[len(MISSING) :], written.pop(key)[1])
            lost = written.pop(LOSS, None)
            if lost is not None or rule.lossy or rule.key is None or rule.note:
                self._noted(rule, present, written, lost[1] if lost else None)
            else:
                for name in present:
                    slot = carried.get(name)
                    if slot is None:
                        carried[name] = Carried()
                    else:
                        slot.skipped = None
            origin = fields[present[0]].origin
            at_default_ = origin is Origin.DEFAULT and bool(written) and at_default(rule, written, version)
            if at_default_ and not rule.always:
                for name in present:
                    carried[name].target_keys.extend(written)
                continue
            for key, (value, approx) in written.items():
                out[key] = value
                for name in present:
                    slot = carried[name]
                    slot.target_keys.append(key)
                    slot.written.append(value)
                    inexact = reason_for(approx, name) if approx is not None else None
                    if inexact:
                        slot.lossy.append(inexact)
            if origin is Origin.DEFAULT and written and not at_default_:
                self.extra.append(defaulted_entry(self.ingested, self.table, rule, present, written, version))

    def _not_whole(self, written: dict[str, Any]) -> Unexpressible | None:
        """A value with a fraction for a key the target release's code types `int`: it would refuse it
        (pydantic: "a number with a fractional part"), so the value is not written."""
        history = self.history
        if history is None:
            return None
        for key, (value, _) in written.items():
            if isinstance(value, float) and not value.is_integer() and history.type_at(key, self.version) == "int":
                return Unexpressible(
                    f"{self.table.title} {self.version} takes a whole number for {key} (its code "
                    f"types it int): {value!r} is not one; its default applies"
                )
        return None

    def _noted(self, rule: Rule, present: list[str], written: dict[str, Any], loss: Approx | None) -> None:
        """What a rule says besides its keys: a loss (all of it, or per field), its note."""
        if loss is not None and not written:
            default_not_kept(self.extra, self.ingested, rule, present, loss)
        for name in present:
            slot = self.carried.setdefault(name, Carried())
            slot.skipped = None
            lost_here = reason_for(loss, name) if loss is not None else None
            if lost_here:
                slot.lossy.append(lost_here)
            if rule.lossy:
                slot.lossy.append(("approximated", {"reason": rule.lossy}))
            if rule.key is None or (rule.note and not written):
                slot.note = rule.note
        for name in loss.fields if loss is not None else ():  # a field the source leaves out, written as a value
            if name in rule.fields and name not in present and (why := reason_for(loss, name) if loss else None):
                self.carried.setdefault(name, Carried()).lossy.append(why)

    def _not_now(self, rule: Rule, present: list[str]) -> None:
        """The rule applies under a condition (`when`) this IR does not meet."""
        for name in present:
            slot = self.carried.setdefault(name, Carried())
            if not slot.target_keys:
                when = {k: list(v) for k, v in rule.when.items()}
                slot.skipped = slot.skipped or ("only_when", {"rule": rule.label, "when": when})

    def _unwritable(self, rule: Rule, present: list[str], exc: Unexpressible) -> None:
        """The target has the key but not this value."""
        why = _unexpressible(exc)
        for name in present:
            slot = self.carried.setdefault(name, Carried())
            slot.skipped, slot.unwritable = why, True
        default_not_kept(self.extra, self.ingested, rule, present, why)
        if rule.required and rule.key and rule.applies(self.values):  # what the target needs is still not there
            need: Message = ("needs_value", {"field": rule.fields[0], "hint": rule.hint or None, "elsewhere": None})
            self.extra.append(said(None, rule.key, Status.MISSING, (need,), rule.fields, (rule.key,)))

    def _needed(self, rule: Rule, key: str, why: Approx | None) -> None:
        """A key the target needs that the rule's formula could not give (the --set that gives it)."""
        need: Message = (
            "needs_value",
            {"field": rule.fields[0], "hint": why.detail if why else None, "elsewhere": None},
        )
        self.extra.append(said(None, key, Status.MISSING, (need,), rule.fields, (key,)))

    def _missing(self, rule: Rule) -> None:
        """None of the rule's fields has a value: `missing` when the target needs one."""
        ir, table = self.ir, self.table
        # the source says where these live when they are not in it (VeOmni: the HF config.json)
        elsewhere = next((self.unsupplied[f] for f in rule.fields if f in self.unsupplied), None) if rule.key else None
        if (
            (rule.required or elsewhere)
            and rule.applies(self.values)
            and not any(ir.has(f) for r in table.rules_for_field(rule.fields[0]) for f in r.fields if r is not rule)
        ):
            # the source's word on where the value lives wins over the target's own hint
            need: Message = (
                "needs_value",
                {"field": rule.fields[0], "hint": rule.hint or None, "elsewhere": elsewhere},
            )
            self.extra.append(
                said(None, rule.key, Status.MISSING, (need,), rule.fields, (rule.key,) if rule.key else ())
            )


def _const_entry(table: Table, rule: Rule) -> Entry:
    """A target-only key the table writes with a fixed value: nothing of the source says it, so the
    report does (a value added for the target, no loss)."""
    assert rule.key is not None
    when = ", ".join(f"{k}={'/'.join(map(str, v))}" for k, v in rule.when.items())
    why = rule.hint or "a key with no canonical field, which the table writes " + (
        f"when {when}" if when else "for every config"
    )
    added: Message = ("added_for_target", {"title": table.title, "written": {rule.key: rule.const}, "why": why})
    return said(None, rule.key, Status.DEFAULTED, (added,), (), (rule.key,))


def _unexpressible(exc: Unexpressible) -> Message:
    """Why the target cannot take a value: the formula's reason (its own kind when it has one)."""
    return as_message(exc.args[0] if exc.args else str(exc), "unexpressible")


def _fresh_rules(
    ingested: Ingested, table: Table, version: str, unplaceable: Callable[[str], str | None] | None
) -> set[int]:
    """Rules (by id) a same-format translation must write from the IR: a value of theirs came
    from --set or from a --with companion file, not from the leaves of the source itself; or the file
    left the rule's key at a default the target release changed (a 2022 NeoX file's weight decay 0.01,
    0.1 from 2023-12-26 on: a migration states it)."""
    mine = set(ingested.raw)
    fresh: set[int] = set()
    read_as = ingested.source.version if ingested.source else None
    for rule in table.rules:
        for name in rule.fields:
            value = ingested.ir.fields.get(name)
            if value is None or value.value is None:
                continue
            if value.origin is Origin.USER or not set(value.source_keys) <= mine:
                fresh.add(id(rule))
            elif (
                value.origin is Origin.DEFAULT
                and read_as
                and read_as != version
                and _default_moved(rule, read_as, version)
            ):
                fresh.add(id(rule))
        if (
            read_as
            and read_as != version
            and id(rule) not in fresh
            and meaning_moved(rule, ingested, version, unplaceable)
        ):
            fresh.add(id(rule))  # the same keys mean another value at the target release: written from the IR
    return fresh


def _default_moved(rule: Rule, read_as: str, version: str) -> bool:
    """The rule's key default differs between the release the file was read as and the target's."""
    if rule.key is None or not (rule.version_defaults and rule.has_default()):
        return False
    return not is_close(rule.default_for(read_as), rule.default_for(version))
