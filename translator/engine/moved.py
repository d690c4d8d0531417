"""A same-format migration's rules whose keys, kept as written, mean another value at the target release:
those are written from the IR instead (engine/entries.py's fresh rules)."""

from __future__ import annotations

from typing import Callable

from ..knowledge.formula import field_ident, ident, unwrap
from ..knowledge.mapping import Rule
from .ledger import Ingested


def meaning_moved(
    rule: Rule, ingested: Ingested, version: str, unplaceable: Callable[[str], str | None] | None
) -> bool:
    """A rule whose reading depends on the release (its formula takes `version`) reads the file's own keys
    that the target has a place for as another value at the target release (Model Zoo's mixed_precision
    alone: float16 for a 1.x TensorFlow model, bfloat16 for 2.4+; its use_bfloat16 retired)."""
    formula = rule.formula
    if formula is None:
        return False
    raw = {k: v for k, v in ingested.raw.items() if unplaceable is None or not unplaceable(k)}
    versioned = "version" in formula.read_params()
    if versioned and rule.read_with:
        return False  # (a value read relative to other fields is rewritten with them, by the format's writer)
    # a key the target release retired (NeoX's mlp_type) no longer decides what the rule's other keys build
    dropped = not versioned and any(k in ingested.raw and k not in raw for k in (*rule.keys, *rule.peek))
    if not (dropped or versioned and any(k in raw for k in rule.keys)):
        return False
    kwargs = {arg: raw[k] if k in raw else rule.key_default(k, version) for arg, k in rule.read_args}
    kwargs.update({ident(k): raw.get(k) for k in rule.peek})
    kwargs.update({arg: ingested.ir.get(name) for arg, name in rule.read_with})
    if versioned:
        kwargs["version"] = version
    try:
        there = formula.read(**kwargs)
    except (TypeError, ValueError, ArithmeticError):
        return True  # the target release cannot read them as they are: write the value
    there = there if isinstance(there, dict) and len(rule.fields) > 1 else {field_ident(rule.fields[0]): there}
    return any(
        unwrap(there.get(field_ident(name)))[0] != ingested.ir.get(name)
        for name in rule.fields
        if isinstance(there, dict)
    )
