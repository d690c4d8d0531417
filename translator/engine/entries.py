"""The report's entries: one per source leaf (and per leaf of each --with companion), built from
the ledger and what emit did with each canonical field; then one per --set value."""

from __future__ import annotations

from typing import Any

from ..ir import Origin
from ..mapping import Rule, Table
from ..report import Entry, Report, Status
from .ledger import Ingested, LeafFate, fields_of
from .text import join, short
from .writing import Carried


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
                entry = Entry(leaf, None, Status.DROPPED, join(homeless[leaf], fate.detail), fields_of(fate))
            elif fate.kind == "unsupported":  # the commonest leaf no rule takes: said without a call
                entry = Entry(leaf, None, Status.DROPPED, fate.detail)
            elif fate.kind == "rule" and fate.rule is not None and not fate.rule.is_const:  # the commonest of all
                entry = _rule_entry(leaf, part.raw.get(leaf), fate, fate.rule, part, carried, table)
            else:
                entry = _entry_for(leaf, part.raw.get(leaf), fate, part, carried, out, table, dst_format, part_format)
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
            report.add(f"--set {name}", ", ".join(dict.fromkeys(given.target_keys)), Status.EXACT,
                       f"= {short(value.value)}", (name,))  # fmt: skip
            continue
        readers = ingested.table.rules_reading(name) if ingested.table else []
        users = sorted({f for r in readers for f in r.fields if ir.has(f)})
        if users:
            report.add(f"--set {name}", None, Status.CONVERTED, f"used to derive {', '.join(users)}", (name,))
        else:
            report.add(f"--set {name}", None, Status.DROPPED,
                       table.absent.get(name, f"{table.title} has no counterpart for {name}"), (name,))  # fmt: skip


def _passed_entry(leaf: str, ingested: Ingested, fate: LeafFate) -> Entry:
    """A leaf a same-format translation carried as written."""
    if fate.kind == "unknown":
        return Entry(leaf, leaf, Status.UNKNOWN, join(fate.detail, "carried as written"))
    if leaf in ingested.coerced:
        return Entry(leaf, leaf, Status.CONVERTED, fate.detail if fate.kind == "rule" else "", fields_of(fate))
    return Entry(leaf, leaf, Status.EXACT, fate.detail if fate.kind == "rule" else fate.caveat, fields_of(fate))


def _entry_for(
    leaf: str, raw: Any, fate: LeafFate, ingested: Ingested, carried: dict[str, Carried], out: dict[str, Any],
    table: Table, dst_format: str, src_format: str,
) -> Entry:  # fmt: skip
    title = table.title
    if fate.kind == "unknown":
        return Entry(leaf, None, Status.UNKNOWN, fate.detail)
    if fate.kind == "unsupported":
        return Entry(leaf, None, Status.DROPPED, fate.detail)
    if fate.kind == "extension":
        if dst_format == src_format and out.get(leaf) == raw:
            return Entry(leaf, leaf, Status.EXACT, fate.detail)
        # a rule's reading with no canonical form says why; a known key with no rule has no counterpart
        why = fate.detail if fate.rule is not None else join(f"{title} has no counterpart", fate.detail)
        return Entry(leaf, None, Status.DROPPED, why, fields_of(fate))
    if fate.kind == "unresolved":
        if dst_format == src_format and out.get(leaf) == raw:
            return Entry(leaf, leaf, Status.EXACT, fate.detail, fields_of(fate))
        return Entry(leaf, None, Status.LOSSY if fate.rule else Status.DROPPED, fate.detail, fields_of(fate))
    rule = fate.rule
    assert rule is not None
    if rule.is_const:
        reason = ingested.lossy.get(id(rule))
        if reason:
            return Entry(leaf, None, Status.LOSSY, reason)
        return Entry(leaf, None, Status.EXACT if dst_format == src_format else Status.CONVERTED,
                     join(f"{leaf}={short(raw)} is what {title} assumes", fate.detail))  # fmt: skip
    return _rule_entry(leaf, raw, fate, rule, ingested, carried, table)


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
        lossy.insert(0, rule.lossy)
    if read_lossy or rule.lossy:  # the rule's reading or mapping as a whole is approximate
        lost_fields = rule.fields
    if missing:
        title = table.title
        why = next((s.skipped for f, s in zip(rule.fields, slots) if f in missing and s and s.skipped), "")
        lossy.append(f"{title} cannot express {', '.join(missing)}" + (f": {why}" if why else ""))
    if lossy:
        return Entry(leaf, target, Status.LOSSY, join("; ".join(dict.fromkeys(lossy)), fate.detail), lost_fields)
    exact = (
        len(rule.keys) == 1 and leaf == rule.key and len(targets) == 1 and len(values) == 1
        and _same(raw, values[0]) and not fate.detail
    )  # fmt: skip
    if exact:
        return Entry(leaf, target, Status.EXACT, "", rule.fields)
    if leaf != rule.key and rule.key is not None and leaf in rule.also:
        detail = f"folded into {', '.join(rule.fields)}"
    else:
        detail = note or (f"= {short(values[0])}" if len(values) == 1 else "")
    return Entry(leaf, target, Status.CONVERTED, join(detail, fate.detail), rule.fields)


def _unwritten(
    leaf: str, fate: LeafFate, rule: Rule, slots: list[Carried | None], ingested: Ingested, table: Table
) -> Entry:
    """A rule's leaf whose fields the target did not write: why (skipped, absent, no counterpart)."""
    skipped = next((s.skipped for s in slots if s and s.skipped), "")
    absent = next((table.absent[f] for f in rule.fields if f in table.absent), "")
    detail = skipped or absent or f"{table.title} has no counterpart for {', '.join(rule.fields)}"
    if not any(f in ingested.ir.fields and ingested.ir.fields[f].value is not None for f in rule.fields):
        detail = f"no value for {', '.join(rule.fields)} could be derived"
    return Entry(leaf, None, Status.DROPPED, join(detail, fate.detail), rule.fields)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b or (
        isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool)
        and not isinstance(b, bool) and a == b
    )  # fmt: skip
