"""What ingest hands to emit: the canonical IR, what became of every source leaf, the raw values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.errors import InputError
from ..core.ir import IR, Origin
from ..knowledge.mapping import Rule, Table
from ..core.report import Message, Status
from ..knowledge.source import Source
from ..knowledge.source import carried_whole as carried_whole  # (for entries.py, whose imports are at its cap)
from ..knowledge.formula import is_close
from ..core.report.kinds import short


@dataclass(slots=True)
class LeafFate:
    """What ingest decided about one source leaf."""

    kind: str  # rule | unsupported | extension | unknown | user | unresolved
    rule: Rule | None = None
    notes: tuple[Message, ...] = ()  # what ingest has to say about the leaf (the entry's messages)
    caveat: Message | None = None  # kept even when a same-format translation carries the leaf as written


UNDECIDED = LeafFate("unknown")  # shared placeholder (never changed): no rule has taken the leaf yet


@dataclass
class Ingested:
    ir: IR
    fates: dict[str, LeafFate]  # source leaf -> fate, in document order
    raw: dict[str, Any]  # source leaf -> raw value
    lossy: dict[int, Message] = field(default_factory=dict)  # id(rule) -> why reading was approximate
    source: Source | None = None
    table: Table | None = None
    companions: list["Ingested"] = field(default_factory=list)  # --with files of other formats
    coerced: dict[str, Any] = field(default_factory=dict)  # source leaf -> value after type coercion
    # formats that carry as written what the source sets aside (a multimodal model a format trains whole)
    kept_by: tuple[str, ...] = ()

    def run_time_value(self, fate: LeafFate) -> tuple[Status, tuple[Message, ...]]:
        """A leaf whose value only the launcher knows ("auto"): missing, with the --set that gives it, or converted
        when the user gave it (every field of its rule has a value, one at least from --set, the rest derived with
        it: its notes then without the hint); dropped when no canonical field holds it (a ZeRO bucket size)."""
        fields = fate.rule.fields if fate.rule is not None else ()
        values = [self.ir.fields.get(f) for f in fields]
        users = [f for f, v in zip(fields, values) if v is not None and v.origin is Origin.USER]
        if not users or any(v is None or v.value is None for v in values):
            return (Status.MISSING if fields else Status.DROPPED), fate.notes
        notes = tuple((kind, {**v, "fields": []}) if kind == "runtime_value" else (kind, v) for kind, v in fate.notes)
        return Status.CONVERTED, (*notes, *(("overridden", {"field": f}) for f in users))

    def merge(self, other: "Ingested") -> None:
        """Add a companion file's values (e.g. the ds_config.json beside a NeoX YAML).

        A field given explicitly in both with different values is an error naming both files;
        an explicit value wins over a default.
        """
        for name, value in other.ir.fields.items():
            mine = self.ir.fields.get(name)
            if mine is None or (mine.origin is Origin.DEFAULT and value.origin is not Origin.DEFAULT):
                self.ir.set(name, value)
            elif value.origin in (Origin.EXPLICIT, Origin.DERIVED) and mine.origin in (Origin.EXPLICIT, Origin.DERIVED):
                if not is_close(mine.value, value.value):
                    raise InputError(
                        f"{name} is {short(value.value)} here ({', '.join(value.source_keys)}) but "
                        f"{short(mine.value)} in {mine.file} ({', '.join(mine.source_keys)}): make them agree",
                        file=value.file,
                    )
        for fmt, leaves in other.ir.extensions.items():
            self.ir.extensions.setdefault(fmt, {}).update(leaves)
        self.companions.append(other)


def fields_of(fate: LeafFate) -> tuple[str, ...]:
    return fate.rule.fields if fate.rule is not None else ()
