"""A translation checks itself: the written document is read back with the target's own reader
(in memory), and its canonical values are compared with the source's, field by field, with the
comparison and tolerance `neoconv diff` uses. A difference that no lossy/dropped/missing/unknown
entry names becomes a `lossy` entry, so nothing a translation changes can go unreported."""

from __future__ import annotations

from typing import Any, Mapping

from ..core.compare import DEFAULT_RTOL
from ..engine.difference import FieldChange, diff_ir, expressible, only_b_unheld
from ..engine import Ingested, ingest
from ..engine.derived import provenance
from ..core.errors import NeoconvError
from ..core.ir import Origin, Value
from ..knowledge.mapping import load_table
from ..core.report import Entry, Message, Report, Status, said
from ..knowledge.schema import schema_index
from ..knowledge.families import set_family_aside, withhold_defaults
from ..knowledge.spellings import upgrade

# statuses that tell the user a value did not survive as it was
NAMING = frozenset({Status.LOSSY, Status.DROPPED, Status.MISSING, Status.UNKNOWN})


def read_back(
    document: Mapping[str, Any],
    fmt: str,
    layout: str | None,
    version: str,
    source: Ingested,
    model_config: Mapping[str, Any] | None,
) -> Ingested:
    """The written document ingested with the target's reader and table, as a user would read it:
    what the user gave on the command line that the target cannot hold (--world-size) is given
    again, as `neoconv diff --world-size` would; nothing else of the source is known."""
    from .reading import load, settle_schedule

    back = load(document, fmt, model_config=model_config) if model_config is not None else load(document, fmt)
    back.version = version  # read as the release it was written for, its older spellings as today's keys
    table = load_table(fmt).for_layout(back.layout or layout)
    upgrade(back, table)
    family = set_family_aside(back, table)
    kept = expressible(fmt)
    given = {name: value for name, value in source.ir.fields.items() if value.origin is Origin.USER and name not in kept}
    read = ingest(back, table, schema_index(fmt), None, given, ledger=False)
    if family is not None:
        withhold_defaults(read.ir, table)
    settle_schedule(read.ir)
    return read


def verify(report: Report, source: Ingested, back: Ingested, rtol: float = DEFAULT_RTOL) -> int:
    """Name every difference between the source and its read-back that no entry names; returns
    how many had to be named."""
    result = diff_ir(source, back, rtol=rtol, differences_only=True)
    named = {name for e in report.entries if e.status in NAMING for name in e.fields}
    # a value only the output has is named by the entry that says it was written (added for the target)
    added_named = named | {name for e in report.entries if e.status is Status.DEFAULTED for name in e.fields}
    added = 0
    for change in (*result.changed, *result.only_a, *result.only_b):
        if change.field in (added_named if change.a is None else named):
            continue
        _name(report, change, source, back.ir.fields.get(change.field), back.raw)
        named.add(change.field)
        added += 1
    for change in only_b_unheld(source, back):  # the target's own values: said, and no loss
        # (given by the output's keys, or derived from them and --world-size: a data-parallel size)
        if change.field not in added_named:
            report.entries.append(_target_value(change, source, back))
    return added


def _target_value(change: FieldChange, source: Ingested, back: Ingested) -> Entry:
    src = source.table.title if source.table else "the source"
    dst = back.table.title if back.table else "the target"
    why = source.table.absent.get(change.field, "") if source.table else ""
    # a value no key gives itself is said with what it came from (the output's keys, --set values)
    keys = tuple(change.b_keys) if back.ir.fields[change.field].source_keys else ()
    came = list(keys) or provenance(back, change.field)
    message: Message = ("target_value", {"title": dst, "field": change.field, "value": change.b, "keys": came,
                                         "source": src, "why": why})  # fmt: skip
    return said(None, ", ".join(keys) or None, Status.DEFAULTED, (message,), (change.field,), keys)


def _name(
    report: Report, change: FieldChange, source: Ingested, after: Value | None, written: Mapping[str, Any]
) -> None:
    keys = [k for k in (after.source_keys if after else ()) if k in written]
    message: Message = ("reads_back_differently", {"field": change.field, "source_value": change.a,
                                                    "written": {k: written[k] for k in keys}, "read_back": change.b})  # fmt: skip
    # the leaves the value came from keep their one entry, now lossy; a default's loss gets its own
    before = source.ir.fields.get(change.field)
    aliases = source.source.aliases if source.source else {}
    leaves = {aliases.get(k, k) for k in before.source_keys} if before else set()
    hit = False
    for i, entry in enumerate(report.entries):
        if entry.status in _AMENDABLE and (change.field in entry.fields or entry.source_key in leaves):
            report.entries[i] = _lossy(entry, change.field, message)
            hit = True
    if not hit:
        report.entries.append(said(None, ", ".join(keys) or None, Status.LOSSY, (message,), (change.field,), tuple(keys)))


_AMENDABLE = (Status.EXACT, Status.CONVERTED, Status.DEFAULTED)


def _lossy(entry: Entry, name: str, message: Message) -> Entry:
    fields = entry.fields if name in entry.fields else (*entry.fields, name)
    # a defaulted entry names a key the file lacks; as a loss of that default it has no source leaf
    source_key = None if entry.status is Status.DEFAULTED else entry.source_key
    return entry.amended(Status.LOSSY, message, first=False, source_key=source_key, fields=fields)


def check_read_back(
    report: Report, document: Mapping[str, Any], fmt: str, layout: str | None, version: str, source: Ingested,
    model_config: Mapping[str, Any] | None,
) -> tuple[bool, int | None]:  # fmt: skip
    """Read the written document back and name what no entry names: (read back at all, how many
    differences only this named)."""
    try:
        back = read_back(document, fmt, layout, version, source, model_config)
    except NeoconvError as exc:
        readback_failed(report, exc)
        return False, None
    return True, verify(report, source, back)


def readback_failed(report: Report, exc: NeoconvError) -> None:
    """The output cannot even be read back: say so (the target framework would refuse it too)."""
    report.entries.append(said(None, None, Status.LOSSY, (("unreadable_output", {"message": exc.message}),)))
