"""Values a same-format translation carries as written that the target release's code refuses: a text
its Literal for the key lacks (NeoX's `launcher: srun`, a str until 2023-03, pdsh/openmpi/mvapich/slurm
since). Such an entry is `unknown` ("not a value of <release>"), never `exact`."""

from __future__ import annotations

from typing import Any

from ..core.report import Entry, Status, said
from ..knowledge.mapping import Table
from ..knowledge.schema import load_history


def unknown_at_target(
    entries: list[Entry], leaves: dict[str, Any], table: Table, fmt: str, version: str
) -> list[Entry]:
    """The entries, with each exact carry whose text value the target release does not name made unknown."""
    history = load_history(fmt)
    if history is None:
        return entries
    out: list[Entry] = []
    for entry in entries:
        key = entry.source_key
        value = (
            leaves.get(key) if key is not None and entry.status is Status.EXACT and key == entry.target_key else None
        )
        names = history.choices_at(key, version) if isinstance(value, str) and key is not None else None
        known = {n if table.closed_enums else n.lower() for n in names or ()}
        if names and isinstance(value, str) and (value if table.closed_enums else value.lower()) not in known:
            values = {
                "title": table.title,
                "release": version,
                "key": key,
                "value": value,
                "known": list(names),
                "fields": [],
            }
            entry = said(key, key, Status.UNKNOWN, (("not_a_value", values), ("carried_as_written", {})), entry.fields)
        out.append(entry)
    return out
