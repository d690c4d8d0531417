"""The translation report: one entry per source leaf, plus what the target lacks or defaults.

Statuses are a closed catalogue (DESIGN.md): every source leaf lands in exactly one entry, so
nothing can disappear silently. `missing` and `defaulted` entries describe target keys and may
have no source leaf.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import printable
from .kinds import STRICT_FAILURES, Entry, Status


@dataclass
class Report:
    source: dict[str, Any] = field(default_factory=dict)
    target: dict[str, Any] = field(default_factory=dict)
    entries: list[Entry] = field(default_factory=list)

    def add(
        self,
        source_key: str | None,
        target_key: str | None,
        status: Status,
        detail: str = "",
        fields: tuple[str, ...] = (),
    ) -> None:
        self.entries.append(Entry(source_key, target_key, status, detail, fields))

    def summary(self) -> dict[str, int]:
        counts = dict.fromkeys(Status, 0)
        for entry in self.entries:
            counts[entry.status] += 1
        return {status.value: n for status, n in counts.items()}

    def by_source(self) -> dict[str, Entry]:
        return {e.source_key: e for e in self.entries if e.source_key is not None}

    def failures(self) -> list[Entry]:
        return [e for e in self.entries if e.status in STRICT_FAILURES]

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "entries": [e.to_json() for e in self.entries],
            "summary": self.summary(),
        }

    def render_table(self, *, verbose: bool = False) -> str:
        """Short human table for stderr: everything that is not exact/converted, then counts."""
        shown = (
            self.entries if verbose else [e for e in self.entries if e.status not in (Status.EXACT, Status.CONVERTED)]
        )
        lines: list[str] = []
        if shown:
            w_status = max(len(e.status.value) for e in shown)
            w_src = min(40, max(len(printable(e.source_key or "-")) for e in shown))
            for e in shown:
                src = printable(e.source_key or "-")
                tgt = printable(e.target_key or "-")
                detail = f"  {printable(e.detail)}" if e.detail else ""
                lines.append(f"{e.status.value:<{w_status}}  {src:<{w_src}} -> {tgt}{detail}")
        if self.source.get("note"):
            lines.insert(0, f"note: {printable(str(self.source['note']))}")
        counts = ", ".join(f"{n} {s}" for s, n in self.summary().items() if n)
        lines.append(f"neoconv: {counts or 'nothing to translate'}")
        added = self.target.get("added_by_verification")
        if added:
            lines.append(
                f"neoconv: reading the output back found {added} difference(s) no entry named: listed as lossy"
            )
        return "\n".join(lines) + "\n"
