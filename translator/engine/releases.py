"""Defaults that depend on the release (issue #27 item 8): a file whose keys fit several releases is read
as the newest of them, and a key it leaves out takes that release's default. Where the fitting releases'
defaults differ (NeoX's weight_decay 0.01 before 2023-12-26, 0.1 from it), the value is the release's
choice, not the file's: the report names the dependence and the --from-version that decides it, on the
entry that already speaks of the key's value, or in an entry of its own."""

from __future__ import annotations

from typing import Any

from ..knowledge.schema import NO_DEFAULT, load_history
from ..core.report import Entry, Message, Report, Status, said
from ..core.report.kinds import render
from .ledger import Ingested


def name_release_defaults(report: Report, ingested: Ingested) -> None:
    source, table = ingested.source, ingested.table
    release = source.release if source is not None else None
    if release is None or release.how == "given" or not release.assumed or table is None:
        return
    history = load_history(source.format) if source is not None else None
    if history is None or release.first is None or release.last is None:
        return
    span = list(history.labels[history.position[release.first] : history.position[release.last] + 1])
    for key, value in release.assumed.items():
        rules = [r for r in table.rules if r.key == key]
        fields = rules[0].fields if rules else ()
        runs = _runs(history, key, span)
        if len(runs) < 2:  # (a key the range's other releases lack: its absence, not its default, differs)
            continue
        message: Message = ("release_default", {"title": table.title, "key": key, "value": value, "read_as": release.label,
                                                "first": release.first, "last": release.last, "runs": runs})  # fmt: skip
        _say(report, key, fields, message)


def _runs(history: Any, key: str, span: list[str]) -> list[list[Any]]:
    """[[first release, last release, default], ...] over the fitting releases, one per change."""
    runs: list[list[Any]] = []
    aliased = [r.release for r in history.renamed_from(key) if r.overlap]
    for label in span:
        value = history.default_at(key, label)
        if value is NO_DEFAULT or any(history.position[label] >= history.position[since] for since in aliased):
            # from a rename on, an old spelling still read is the new key's alias: its default is not its own
            # (the 5.x Trainer's gradient_checkpointing: None, activation_checkpointing decides)
            continue
        if runs and runs[-1][2] == value:
            runs[-1][1] = label
        else:
            runs.append([label, label, value])
    return runs


def _say(report: Report, key: str, fields: tuple[str, ...], message: Message) -> None:
    """On the entry that states the key's default (defaulted, or lost), else an entry of its own."""
    for i, entry in enumerate(report.entries):
        if entry.source_key == key or (entry.source_key is None and fields and set(fields) & set(entry.fields)):
            if entry.status in (Status.DEFAULTED, Status.LOSSY, Status.DROPPED):
                report.entries[i] = _with(entry, message)
                return
    report.entries.append(said(None, None, Status.DEFAULTED, (message,), fields))


def _with(entry: Entry, message: Message) -> Entry:
    values = dict(entry.values or {})
    values["also"] = [*values.get("also", ()), {"kind": message[0], "values": message[1]}]
    return entry._replace(detail="; ".join(filter(None, (entry.detail, render(*message)))), values=values)
