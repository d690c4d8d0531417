"""Leaves no rule takes: unsupported (the table says why), a known extension (the schema knows the
key), or unknown (with a "did you mean" when a known key is close). Cached per table and schema:
a batch sees the same stray keys again and again."""

from __future__ import annotations

from typing import Any

from ..core.bounded import keep
from ..core.errors import InputError
from ..core.ir import IR
from ..knowledge.mapping import Table
from ..core.report import Message
from ..knowledge.schema import SchemaIndex
from ..knowledge.source import Source
from .ledger import UNDECIDED, LeafFate
from .reading import coerce_input

SUGGESTIONS_PER_FILE = 100  # "did you mean" searches (~1 ms each) one file may cost; a file with
# thousands of stray keys (generated, or not a config at all) is then reported without them


def classify_strays(
    source: Source, table: Table, schema: SchemaIndex, ir: IR, fates: dict[str, LeafFate], leaves: dict[str, Any]
) -> None:
    """Give every leaf no rule took its fate; a known extension is kept in the IR for same-format."""
    coerce = schema.coerce
    searches = 0  # stray leaves not classified before (each may cost a "did you mean" search)
    for leaf, fate in fates.items():
        if fate is not UNDECIDED:
            continue
        type_note: Message | None = None
        try:
            coerce_input(source, coerce, leaf, leaves[leaf])  # the framework refuses a wrong type even in a key we drop
        except InputError as exc:
            if not table.lenient_types:
                raise
            type_note = ("wrong_type", {"message": exc.message})
        searches += (id(schema), leaf) not in table.leaf_kinds
        kind, said = classify(leaf, schema, table, suggest=searches <= SUGGESTIONS_PER_FILE)
        notes = (said,) if said is not None else ()
        fates[leaf] = LeafFate(kind, notes=(type_note, *notes) if type_note else notes, caveat=type_note)
        if kind == "extension":
            ir.extensions.setdefault(source.format, {})[leaf] = leaves[leaf]
    for leaf, note in source.notes.items():
        if leaf in fates and note:
            fates[leaf].notes = (("reader_note", {"note": note}), *fates[leaf].notes)


def classify(leaf: str, schema: SchemaIndex, table: Table, suggest: bool = True) -> tuple[str, Message | None]:
    """(kind, message) of a leaf no rule owns: unsupported, a known extension, or unknown. Cached:
    a batch sees the same stray keys again and again. suggest=False: no "did you mean" search for
    an unknown leaf not seen before (and nothing cached, so another file still gets one)."""
    key = (id(schema), leaf)
    found = table.leaf_kinds.get(key)
    if found is None:
        reason = _unsupported_reason(table, leaf)
        if reason is not None:
            found = ("unsupported", ("unsupported_key", {"reason": reason}))
        elif schema.known(leaf):
            why = schema.note(leaf) or table.extension_reasons.get(_group_of(schema, leaf), "")
            found = ("extension", ("framework_extension", {"reason": why}) if why else None)
        elif not suggest:
            return ("unknown", ("not_a_parameter", {"title": table.title, "unsearched": True}))
        else:
            found = ("unknown", _closest(leaf, schema, table))
        keep(table.leaf_kinds, key, found, 1_000)
    return found


def _group_of(schema: SchemaIndex, leaf: str) -> str:
    """The x-group of the deepest schema node on a leaf's path that has one (VeOmni groups by dataclass)."""
    parts = leaf.split(".")
    for i in range(len(parts), 0, -1):
        group = (schema.node(".".join(parts[:i])) or {}).get("x-group")
        if group:
            return str(group)
    return ""


def _unsupported_reason(table: Table, leaf: str) -> str | None:
    parts = leaf.split(".")
    for i in range(len(parts), 0, -1):
        reason = table.unsupported.get(".".join(parts[:i]))
        if reason is not None:
            return reason
    return None


_CANDIDATES: dict[tuple[int, int], list[str]] = {}


def _closest(leaf: str, schema: SchemaIndex, table: Table) -> Message:
    slot = (id(schema), id(table))
    if slot not in _CANDIDATES:
        _CANDIDATES[slot] = sorted(set(schema.all_keys()) | {k for r in table.rules for k in r.keys})
    # a ratio >= 0.75 needs the shorter name to be >= 0.6 of the longer: skip hopeless candidates
    size = len(leaf)
    near = [c for c in _CANDIDATES[slot] if 0.6 * max(size, len(c)) <= min(size, len(c))]
    import difflib  # only when a file has a key nobody knows

    close = difflib.get_close_matches(leaf, near, n=1, cutoff=0.75)
    if close:
        return "not_a_parameter", {"title": table.title, "suggestion": close[0]}
    return "not_a_parameter", {"title": table.title}
