"""Source values the target has no place for that no leaf's entry names: those the source reader
derived with no key of their own (NeoX's model.family from its blocks, its norm bias from the norm,
Model Zoo's embedding dropout from dropout_rate, a data-parallel size from the world size). Each
is said on the entry of the one leaf it was derived from (its provenance); those derived from
several leaves, or from none the report lists, share one entry of their own."""

from __future__ import annotations

from typing import Any

from ..core.ir import IR, Origin
from ..knowledge.mapping import Table
from ..core.report import Entry, Message, Report, Status, said
from .entries import no_counterpart
from .ledger import Ingested

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
