"""Losses no leaf entry carries: values the target reads relative to a field the output does not
hold, and losses of values no source leaf holds (a default, a value derived from others)."""

from __future__ import annotations

from ..ir import IR, Origin
from ..mapping import Rule, Table
from ..report import Entry, Report, Status
from .text import short
from .writing import Carried


def unanchored(applied: list[tuple[Rule, list[str]]], table: Table, ir: IR, carried: dict[str, Carried], extra: list[Entry]) -> None:
    """A value the target reads relative to another field that the output does not hold (VeOmni's
    warmup as a ratio of a step count it cannot state, its accumulation derived from a missing
    global batch) does not read back: lossy, with why. Values given on the command line are given
    again when reading, so they hold."""
    missing = {name: e.detail for e in extra if e.status is Status.MISSING for name in e.fields}
    unheld: dict[str, str] = {}
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
            why = unheld.get(name) or missing.get(name) or (slot.skipped if slot else "") or table.absent.get(name, "")
            reason = f"{table.title} reads it relative to {name}, which this output does not hold" + (f" ({why})" if why else "")
            for own in present:
                carried[own].lossy.append(reason)
                unheld.setdefault(own, reason)


def unreported_losses(report: Report, extra: list[Entry], carried: dict[str, Carried], ir: IR, src_title: str) -> None:
    """A loss of a value no source leaf carries (a framework default, a value derived from others)
    is said too: in the `defaulted` entry that wrote it (now lossy), else in an entry of its own
    (source_key null) naming the fields, their values and what the target does."""
    covered = {name for e in report.entries if e.status is Status.LOSSY for name in e.fields}
    covered.update(name for e in extra if e.status is Status.LOSSY for name in e.fields)
    grouped: dict[tuple[str, str], list[str]] = {}  # (target keys, reasons) -> fields
    upgraded: set[int] = set()  # defaulted entries that now say a loss
    for name, slot in carried.items():
        if not slot.lossy or name in covered or not ir.has(name):
            continue
        why = "; ".join(dict.fromkeys(slot.lossy))
        at = next((i for i, e in enumerate(extra) if name in e.fields and (
            e.status is Status.DEFAULTED or i in upgraded)), None)  # fmt: skip
        if at is not None:
            entry = extra[at]
            # no source_key: a defaulted entry names a key the file lacks, a lossy one a leaf it has
            detail = entry.detail if why in entry.detail else f"{entry.detail}; {why}"
            extra[at] = entry._replace(source_key=None, status=Status.LOSSY, detail=detail)
            upgraded.add(at)
            continue
        grouped.setdefault((", ".join(dict.fromkeys(slot.target_keys)), why), []).append(name)
    for (targets, why), group in grouped.items():
        values = []
        for name in group:
            value = ir.fields[name]
            how = "not in the file" if value.origin is Origin.DEFAULT else (
                f"from {', '.join(value.source_keys)}" if value.source_keys else value.origin.value)
            values.append(f"{name}={short(value.value)} ({how})")
        report.add(None, targets or None, Status.LOSSY, f"{src_title} {', '.join(values)}: {why}", tuple(group))
