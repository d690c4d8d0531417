"""Losses no leaf entry carries: values the target reads relative to a field the output does not
hold, and losses of values no source leaf holds (a default, a value derived from others)."""

from __future__ import annotations

from ..core.ir import IR, Origin
from ..knowledge.mapping import Rule, Table
from ..core.report import Entry, Message, Report, Status, render, said
from ..core.report.kinds import as_value
from .writing import Carried


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
