"""Shapes of one key whose meaning is a choice: `key_by` (another field picks which key holds the
value: NeoX's epsilon per norm kind), `follows` (no key: another field's value decides the field:
NeoX's norm bias) and an `enum` with modifiers (a closed set of names, some read
or written approximately, the rest an extension, an error or not writable), so that a formula
class per choice becomes table data."""

from __future__ import annotations

from typing import Any, NamedTuple

from ..formula import Approx, Extension, Formula, Unexpressible, field_ident, ident
from ...core.report.kinds import reason as said
from ...core.report.kinds import short
from .shapes import _formula, same_value


def key_by(field: str, key: str, by: str, keys: dict[Any, str]) -> Formula:
    """The value is one field; which key holds it is chosen by another field's value (`keys`),
    `key` for every other value (NeoX: rms_norm_epsilon with rmsnorm, else layernorm_epsilon)."""
    choice, every = f"by_{field_ident(by)}", [key, *dict.fromkeys(k for k in keys.values() if k != key)]

    def chosen(other: Any) -> str:
        return next((k for v, k in keys.items() if other is not None and same_value(other, v)), key)

    def read(**kw: Any) -> Any:
        return kw[ident(chosen(kw[choice]))]

    def write(**kw: Any) -> Any:
        return {ident(chosen(kw[choice])): kw["value"]}

    spelled = ", ".join(f"{short(v)}: {k}" for v, k in keys.items())
    return _formula(f"key by {by} ({spelled}; else {key})", read, [*map(ident, every), choice], write,
                    ["value", choice])  # fmt: skip


def follows(field: str, other: str, values: dict[Any, Any], otherwise: Any, reasons: dict[Any, str]) -> Formula:
    """No key: the field is decided by another field's value (`values`, `otherwise` for the rest;
    none while the other is unknown); a value that differs cannot be written: `reasons` say why, per
    value of the other field or `otherwise` ({other}, {value}). NeoX's LayerNorm always has a bias,
    its RMSNorm and ScaleNorm none."""
    alias = f"by_{field_ident(other)}"

    def decided(by: Any) -> Any:
        return next((mine for theirs, mine in values.items() if same_value(by, theirs)), otherwise)

    def read(**kw: Any) -> Any:
        return None if kw[alias] is None else decided(kw[alias])

    def write(**kw: Any) -> Any:
        by, value = kw[alias], kw["value"]
        if by is None or same_value(value, decided(by)):
            return {}
        why = next((w for theirs, w in reasons.items() if same_value(by, theirs)), reasons.get("otherwise", ""))
        raise Unexpressible(why.format(other=by, value=value))

    spelled = ", ".join(f"{short(v)}: {short(m)}" for v, m in values.items())
    return _formula(f"follows {other} ({spelled}; else {short(otherwise)})", read, [alias], write, ["value", alias])


class EnumModifiers(NamedTuple):
    """An enum's modifiers: `warn_values` ({framework value: why}: read approximately), `unknown`
    ({error: template} or {extension: template}: what a value outside the enum reads as; {value}),
    `extensions` ({framework name: template}: names that are the framework's own, with no canonical
    value), `nearest` ({canonical: framework}: written approximately, said by `nearest_reason`, a
    template or {canonical: template, otherwise: template}), `unwritable` ({reason: template,
    lossy: bool}: a canonical value with no name) and `reads_as` (canonical values that mean another
    while other fields have these values: read as it, and written by its name when they have none of
    their own; Adam without weight decay is AdamW's algorithm) and `types` ({null or list: {error:
    template} or {extension: template}}: what a value of that type reads as, since no name of the enum
    is one: DeepSpeed's autotuner takes a list as the values to try, its config refuses a null)."""

    warn: dict[Any, str] = {}
    unknown: dict[str, str] = {}
    nearest: dict[Any, Any] = {}
    nearest_reason: str | dict[Any, str] = ""
    unwritable: dict[str, Any] = {}
    reads_as: dict[Any, Any] = {}  # {canonical: canonical read instead while `reads_when` holds}
    reads_when: dict[str, tuple[Any, ...]] = {}  # {field: its values}, as a rule's `when`
    extensions: dict[Any, str] = {}
    types: dict[str, dict[str, str]] = {}  # {"null" or "list": {error: template} or {extension: template}}

    def args(self) -> list[str]:
        """The arguments for the fields `reads_when` looks at."""
        return [f"when_{field_ident(n)}" for n in self.reads_when]

    def holds(self, kw: dict[str, Any]) -> bool:
        return all(kw[f"when_{field_ident(n)}"] in v for n, v in self.reads_when.items())

    def near(self, value: Any) -> str:
        why = self.nearest_reason
        return (why if isinstance(why, str) else why.get(value, why.get("otherwise", ""))).format(value=value)


def enum(field: str, key: str, pairs: dict[Any, Any], case_insensitive: bool, extra: EnumModifiers) -> Formula:
    """A closed enum {framework: canonical} (the first pair for a canonical value is written) with
    its modifiers (EnumModifiers)."""
    arg = ident(key)

    def folded(value: Any) -> Any:
        return value.lower() if case_insensitive and isinstance(value, str) else value

    def read(**kw: Any) -> Any:
        raw = kw[arg]
        typed = extra.types.get("null" if raw is None else "list" if isinstance(raw, list) else "")
        if typed:
            return _outside(typed, raw)
        if raw is None and None not in pairs:  # (a key written null reads as the enum's null, if it has one)
            return None
        own = next((why for fw, why in extra.extensions.items() if same_value(folded(fw), folded(raw))), None)
        if own is not None:
            return Extension(own.format(value=raw))
        name = next((fw for fw in pairs if same_value(folded(fw), folded(raw))), _NONE)
        if name is _NONE:
            if extra.unknown:
                return _outside(extra.unknown, raw)
            raise ValueError(f"unknown value {raw!r}; expected one of {', '.join(str(f) for f in pairs)}")
        why = next((w for fw, w in extra.warn.items() if same_value(fw, name)), "")
        value = pairs[name]
        if value in extra.reads_as and extra.holds(kw):  # (only then does the reading take reads_as' fields)
            value = extra.reads_as[value]
        return Approx(value, why) if why else value

    def name_of(value: Any) -> Any:
        return next((fw for fw, canonical in pairs.items() if canonical == value), _NONE)

    def write(**kw: Any) -> Any:
        value = kw["value"]
        name = name_of(value)
        if name is _NONE and value in extra.reads_as and extra.holds(kw):
            name = name_of(extra.reads_as[value])  # the same algorithm here: its name, exactly
        if name is not _NONE:
            why = next((w for fw, w in extra.warn.items() if same_value(fw, name)), "")
            return Approx({arg: name}, why) if why else {arg: name}
        if value in extra.nearest:
            return Approx({arg: extra.nearest[value]}, extra.near(value))
        if extra.unwritable.get("lossy"):
            return Approx({}, extra.unwritable["reason"].format(value=value))
        if extra.unwritable:
            raise Unexpressible(extra.unwritable["reason"].format(value=value))
        raise Unexpressible(said("no_counterpart_value", field=field, value=value, key=key))

    parts = [", ".join(f"{fw}={canonical}" for fw, canonical in pairs.items())] + [f"{w} doubtful" for w in extra.warn]
    parts += [f"{n}: extension" for n in extra.extensions] + [f"other names: {kind}" for kind in extra.unknown]
    parts += [f"{c} as {fw}" for c, fw in extra.nearest.items()] + ["other values not written"] * bool(extra.unwritable)
    parts += [f"a {kind}: {next(iter(what))}" for kind, what in extra.types.items()]
    parts += [f"{a} means {b} when {', '.join(extra.reads_when)} allow" for a, b in extra.reads_as.items()]
    # the reading looks at reads_as' fields only when a name reads as one of its values (NeoX's never do)
    reading = extra.args() if any(v in extra.reads_as for v in pairs.values()) else []
    return _formula(f"enum {'; '.join(parts)}", read, [arg, *reading], write, ["value", *extra.args()])


_NONE: Any = object()


def _outside(what: dict[str, str], raw: Any) -> Extension:
    """A value outside the enum's names: an extension ({extension: reason}) or bad input ({error: message})."""
    if "extension" in what:
        return Extension(what["extension"].format(value=raw))
    raise ValueError(what["error"].format(value=raw))
