"""The relations of the catalogue (schemas/canonical.yaml `relations:`) checked after each read: a
config that breaks one could not run in its own framework, and is an input error naming its key."""

from __future__ import annotations

from .catalogue import AtMost, Length, constraints
from ..core.errors import InputError
from ..core.ir import IR, Origin
from .source import Source


def check_relations(source: Source, ir: IR) -> None:
    """A value breaking a relation the catalogue defines (heads dividing the width, kv heads dividing
    the heads, no more experts per token than experts, one attention kind per layer) names its key:
    a config its own framework could not run."""
    values = None
    for rel in constraints():
        if any(not ir.has(name) for name in rel.fields):
            continue  # cheap: most relations concern fields a config leaves out
        if values is None:
            values = ir.plain()
        reason = rel.broken(values)
        if reason is None:
            continue
        blamed, other = rel.fields[1], rel.fields[0]  # the dividend / the list / the larger side
        if isinstance(rel, (AtMost, Length)):
            blamed, other = rel.fields[0], rel.fields[1]
        value, partner = ir.fields[blamed], ir.fields[other]
        key = value.source_keys[0] if value.source_keys else blamed
        other_key = partner.source_keys[0] if partner.source_keys else other
        from_file = value.origin is not Origin.USER
        shown = values[blamed] if not isinstance(values[blamed], list) else f"{len(values[blamed])} entries"
        if isinstance(rel, AtMost):
            what = f"{shown} is more than {other_key}={values[other]}"
        elif isinstance(rel, Length):
            what = f"{shown} for {other_key}={values[other]}"
        else:
            what = f"{shown} is not divisible by {other_key}={values[other]}"
        raise InputError(
            f"{what} ({rel.why})", file=(value.file or source.file_of(key)) if from_file else None,
            line=source.line_of(key) if from_file else None, key=key, hint="fix one of them",
        )  # fmt: skip
