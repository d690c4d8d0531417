"""Values the source file left at its framework's default: stated in the target when the target's
default differs (`defaulted`), or said to be lost when the target cannot take them."""

from __future__ import annotations

from ..mapping import Rule, Table
from ..ir import Origin
from ..report import Entry, Status
from ..transforms import Approx
from .ledger import Ingested
from .text import short
from .writing import UNDOCUMENTED, Written, key_default


def defaulted_entry(ingested: Ingested, table: Table, rule: Rule, present: list[str], written: Written, version: str) -> Entry:
    """A source default written because the target's own default differs: which default, where
    the source keeps it, what was written and what the target would have used."""
    ir = ingested.ir
    src_title = ingested.table.title if ingested.table else (ingested.source.format if ingested.source else "?")
    src_rules = ingested.table.rules_for_field(present[0]) if ingested.table else []
    src_key = src_rules[0].key if src_rules and src_rules[0].key else None
    shown = ", ".join(f"{k}={short(v[0])}" for k, v in written.items())
    documented = {k: d for k in written if (d := key_default(rule, k, version)) is not UNDOCUMENTED}
    tdef = "; ".join(f"{k}={short(d)}" for k, d in documented.items())
    if rule.key is not None and list(documented) == [rule.key]:
        tdef = f"; {table.title} default is {short(documented[rule.key])}"
    elif tdef:
        tdef = f"; {table.title} default {tdef}"
    caveat = ingested.lossy.get(id(src_rules[0])) if src_rules else None
    return Entry(
        src_key, ", ".join(written), Status.DEFAULTED,
        f"{src_title} default {present[0]}={short(ir.get(present[0]))} (not in the file){tdef}: wrote {shown}"
        + (f"; {caveat}" if caveat else ""), tuple(present),
    )  # fmt: skip


def default_not_kept(extra: list[Entry], ingested: Ingested, rule: Rule, present: list[str], why: str | Approx) -> None:
    """A value no source leaf carries (the source's default, or one derived from other fields) that
    the target cannot take has no leaf entry to say so: it gets an entry of its own (NeoX's default
    betas [0.9, 0.999] against VeOmni's hard-coded ones)."""
    title = ingested.table.title if ingested.table else "the source"
    for name in present:
        value = ingested.ir.fields[name]
        if value.origin is Origin.USER or (value.origin is not Origin.DEFAULT and value.source_keys):
            continue  # a --set entry, or the entries of the leaves it came from, say it
        reason = why.detail_for(name) if isinstance(why, Approx) else why
        if not reason:
            continue
        if value.origin is Origin.DEFAULT:
            src_rules = ingested.table.rules_for_field(name) if ingested.table else []
            src_key = f" ({src_rules[0].key})" if src_rules and src_rules[0].key else ""
            text = f"{title} default {name}={short(value.value)}{src_key}, not in the file, is not kept: {reason}"
        else:
            text = f"{title} {name}={short(value.value)} (derived from other settings) is not kept: {reason}"
        # no source_key: the file has no such leaf (the one-entry-per-leaf invariant counts leaves)
        extra.append(Entry(None, rule.key, Status.LOSSY, text, (name,)))
