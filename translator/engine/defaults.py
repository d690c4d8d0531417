"""Values the source file left at its framework's default: stated in the target when the target's
default differs (`defaulted`), or said to be lost when the target cannot take them."""

from __future__ import annotations

from typing import Any

from ..core.ir import Origin
from ..knowledge.mapping import Rule, Table
from ..core.report import Entry, Message, Status, said
from ..core.report.kinds import as_value
from ..knowledge.formula import Approx
from .ledger import Ingested
from .writing import UNDOCUMENTED, Written, key_default, reason_for


def defaulted_entry(ingested: Ingested, table: Table, rule: Rule, present: list[str], written: Written, version: str) -> Entry:
    """A source default written because the target's own default differs: which default, where
    the source keeps it, what was written and what the target would have used."""
    src_title = ingested.table.title if ingested.table else (ingested.source.format if ingested.source else "?")
    src_rules = ingested.table.rules_for_field(present[0]) if ingested.table else []
    src_key = src_rules[0].key if src_rules and src_rules[0].key else None
    if src_key is not None and ingested.source is not None:  # as the file's layout spells it (VeOmni #1090)
        src_key = ingested.source.aliases.get(src_key, src_key)
    documented = {k: d for k in written if (d := key_default(rule, k, version)) is not UNDOCUMENTED}
    # "the target's default is X" speaks of the field: only a one-key transform turns the key's
    # default into the field's (an inverted flag's false is the field's true); otherwise name the key
    as_field = rule.simple is not None and rule.key is not None and list(documented) == [rule.key]
    message: Message = ("default_written", {
        "title": src_title, "field": present[0], "value": ingested.ir.get(present[0]), "target": table.title,
        "target_defaults": documented, "key_default": as_field, "written": {k: v[0] for k, v in written.items()},
        **({"field_default": _as_field(rule, documented[rule.key])} if as_field and rule.key else {}),
    })  # fmt: skip
    caveat = ingested.lossy.get(id(src_rules[0])) if src_rules else None
    keys = tuple(written)
    # a caveat of the source's reading concerns all its fields (a schedule left unknown)
    fields = src_rules[0].fields if caveat else tuple(present)
    return said(src_key, ", ".join(keys), Status.DEFAULTED, (message, caveat) if caveat else (message,), fields, keys)


def default_not_kept(extra: list[Entry], ingested: Ingested, rule: Rule, present: list[str], why: Message | Approx) -> None:
    """A value no source leaf carries (the source's default, or one derived from other fields) that
    the target cannot take has no leaf entry to say so: it gets an entry of its own (NeoX's default
    betas [0.9, 0.999] against VeOmni's hard-coded ones)."""
    title = ingested.table.title if ingested.table else "the source"
    for name in present:
        value = ingested.ir.fields[name]
        if value.origin is Origin.USER or (value.origin is not Origin.DEFAULT and value.source_keys):
            continue  # a --set entry, or the entries of the leaves it came from, say it
        if isinstance(why, Approx):
            said_here = reason_for(why, name)
            if said_here is None:
                continue
            reason = said_here
        else:
            reason = why
        if value.origin is Origin.DEFAULT:
            src_rules = ingested.table.rules_for_field(name) if ingested.table else []
            src_key = src_rules[0].key if src_rules and src_rules[0].key else None
            message: Message = ("default_not_kept", {"title": title, "field": name, "value": value.value, "key": src_key,
                                                     "reason": as_value(reason)})  # fmt: skip
        else:
            message = ("derived_not_kept", {"title": title, "field": name, "value": value.value, "reason": as_value(reason)})
        # no source_key: the file has no such leaf (the one-entry-per-leaf invariant counts leaves)
        extra.append(said(None, rule.key, Status.LOSSY, (message,), (name,), (rule.key,) if rule.key else ()))


def _as_field(rule: Rule, default: Any) -> Any:
    try:
        return rule.simple.read(default) if rule.simple is not None else default
    except ValueError:  # a documented default the transform does not know: shown as the key has it
        return default
