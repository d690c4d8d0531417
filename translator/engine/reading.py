"""One rule's reading: the canonical values a rule gives for its keys' values (or its defaults),
checked against the catalogue, and remembered per table (a batch of thousands of configs repeats
most values: norm: layernorm, seq_length: 2048, ...)."""

from __future__ import annotations

from typing import Any, Callable

from ..core.bounded import keep
from ..knowledge.catalogue import catalogue
from ..core.errors import InputError
from ..io.documents import at_path
from ..core.ir import IR, Origin, Value
from ..knowledge.mapping import Rule, Table
from ..knowledge.schema import _Guess
from ..knowledge.source import Source
from ..knowledge.formula import Absent, Approx, Extension, Unrunnable, field_ident, ident, unwrap
from .memo import IMMUTABLE, WithBlocks, copy_block, shareable

Subtree = Callable[[str], tuple[Any, list[str]]]  # key -> (value or block, the leaves it covers)
Checked = list[tuple[str, Any, "str | None", str]]  # (field, checked value, why approximate, note)


def coerce_input(source: Source, coerce: Callable[[str, Any], tuple[Any, str]], key: str, value: Any) -> tuple[Any, str]:
    """Check a raw value against the source format's schema types (light coercion only)."""
    try:
        return coerce(key, value)
    except _Guess as guess:
        return Approx(guess.value, guess.note), ""
    except ValueError as exc:
        raise InputError(
            str(exc), file=source.file_of(key), line=source.line_of(key), key=key, hint="fix the value"
        ) from None


def check_field(source: Source, name: str, value: Any, keys: tuple[str, ...]) -> tuple[Any, str]:
    try:
        return catalogue()[name].check(value)
    except ValueError as exc:
        raise field_error(source, name, exc, keys) from None


def field_error(source: Source, name: str, exc: ValueError, keys: tuple[str, ...], value: Any = None) -> InputError:
    """The value of field `name` is refused: named at the key of the rule's that holds it (a rule reading
    several keys: HF's rope_scaling.factor, not the rotary base its rule starts with), else its first."""
    held = [k for k in keys if value is not None and _same(at_path(source.tree, k), value)]
    key = held[0] if held else keys[0] if keys else name
    return InputError(str(exc), file=source.file_of(key), line=source.line_of(key), key=key, hint="fix the value",
                      written_key=source.aliases.get(key))  # fmt: skip


def _same(raw: Any, value: Any) -> bool:
    return type(raw) is type(value) and raw == value or (
        isinstance(raw, (int, float)) and not isinstance(raw, bool) and isinstance(value, float) and raw == value)


def remember(table: Table, memo: tuple[Any, ...], checked: Any) -> None:
    """Keep a reading for the next file with the same values; only immutable results, and plain
    blocks of them (handed out as copies: recall), are shared."""
    if isinstance(checked, (Extension, Absent)):
        kept: Any = checked
    elif all(type(value) in IMMUTABLE for _, value, _, _ in checked):
        kept = checked
    elif all(shareable(value) for _, value, _, _ in checked):
        # a copy, marked: the IR of the file read first, or of any later one, may change its blocks
        kept = WithBlocks((name, copy_block(value), approx, note) for name, value, approx, note in checked)
    else:
        return
    keep(table.value_reads, memo, kept, 500)  # the values most files share refill it at once: memory flat over a migration


def recall(table: Table, memo: tuple[Any, ...]) -> Any:
    """A remembered reading (its blocks copied)."""
    checked = table.value_reads.get(memo)
    if type(checked) is WithBlocks:
        return [(name, copy_block(value), approx, note) for name, value, approx, note in checked]
    return checked


def inputs(rule: Rule, ir: IR, subtree: Subtree) -> dict[str, Any]:
    """What a rule's reading takes besides its own keys: its `with` fields and the keys it peeks at."""
    if rule.pure:
        return {}
    found = {name: ir.get(name) for _, name in rule.read_with}
    for key in rule.peek:
        found[key] = subtree(key)[0]
    return found


def checked_values(
    read: dict[str, Any], fields_catalog: dict[str, Any], source: Source, owned_leaves: list[str], rule: Rule
) -> Checked:
    """(field, value checked against the catalogue, why approximate, note) for what a rule read."""
    checked = []
    for name, result in read.items():
        value, approx = unwrap(result)
        note = ""
        if value is not None:
            try:
                value, note = fields_catalog[name].check(value)
            except ValueError as exc:
                if not owned_leaves and rule.read_with:  # none of the file's keys: say what it came from
                    exc = ValueError(f"{exc} (derived from {', '.join(name for _, name in rule.read_with)})")
                raise field_error(source, name, exc, tuple(owned_leaves) or rule.keys, value) from None
        checked.append((name, value, approx, note))
    return checked


def default_holds(rule: Rule, ir: IR) -> bool:
    """A documented default only holds where its rule applies (GPT-J-only keys, ...)."""
    if not rule.when:
        return True
    outer = {n: ir.get(n) for n in rule.when if n not in rule.fields}
    return not outer or all(outer[n] in rule.when[n] for n in outer)


def defaults_of(rule: Rule, table: Table, version: str, source: Source) -> list[tuple[str, Value | None, str | None]]:
    """What a rule reads when the file has none of its keys, worked out once per table and version
    (a batch reads thousands of files): field -> default Value (or None) and why it is approximate."""
    cached = table.default_reads.get((id(rule), version))
    if cached is None:
        read = read_rule(rule, {}, lambda key: (None, []), IR(), version, source, [])
        cached, notes = [], []
        for name, result in ({} if isinstance(read, (Extension, Absent)) else read).items():
            value, approx = unwrap(result)
            if value is not None:
                value, note = check_field(source, name, value, rule.keys)
                notes.extend([note] if note else [])
            cached.append((name, None if value is None else Value(value, Origin.DEFAULT, (), None, "; ".join(notes)), approx))
        table.default_reads[(id(rule), version)] = cached
    return cached


def read_rule(
    rule: Rule,
    present: dict[str, Any],
    subtree: Subtree,
    ir: IR,
    version: str,
    source: Source,
    owned_leaves: list[str],
) -> dict[str, Any] | Extension | Absent:
    """Canonical field -> value (maybe Approx) one rule reads from its keys' values (or defaults)."""
    if rule.formula is not None:
        return _read_formula(rule, present, subtree, ir, version, source, owned_leaves)
    assert rule.simple is not None and rule.key
    raw = present[rule.key] if rule.key in present else rule.default_for(version)  # None when it has none
    try:
        return {rule.fields[0]: rule.simple.read(raw)}
    except ValueError as exc:
        raise InputError(
            str(exc), file=source.file_of(rule.key), line=source.line_of(rule.key), key=rule.key, hint="fix the value"
        ) from None


def _read_formula(
    rule: Rule, present: dict[str, Any], subtree: Subtree, ir: IR, version: str, source: Source, owned_leaves: list[str]
) -> dict[str, Any] | Extension | Absent:
    assert rule.formula is not None
    kwargs = {arg: present[k] if k in present else rule.key_default(k, version) for arg, k in rule.read_args}
    for key in rule.peek:
        kwargs[ident(key)] = subtree(key)[0]
    for arg, name in rule.read_with:
        kwargs[arg] = ir.get(name)
    if "version" in rule.formula.read_params():
        kwargs["version"] = version
    try:
        result = rule.formula.read(**kwargs)
    except (TypeError, ValueError, ArithmeticError) as exc:  # overflow on a huge value is bad input too
        key = _culprit(owned_leaves, present, exc) if owned_leaves else rule.label
        message = str(exc) if isinstance(exc, Unrunnable) else f"cannot compute {', '.join(rule.fields)}: {exc}"
        raise InputError(message, file=source.file_of(key), line=source.line_of(key), key=key) from None
    if isinstance(result, (Extension, Absent)):
        return result
    if len(rule.fields) > 1:
        by_ident = {field_ident(f): f for f in rule.fields}
        whole = result if isinstance(result, Approx) else None  # the reading as a whole is approximate
        out = {by_ident[k]: v for k, v in ((whole.value if whole else result) or {}).items()}
        if whole is not None and whole.detail:
            named = [f for f in whole.fields if f in out] or [f for f in rule.fields if out.get(f) is not None]
            name = (named or [rule.fields[0]])[0]
            out[name] = Approx(unwrap(out.get(name))[0], whole.detail)
        return out
    return {rule.fields[0]: result}


def _culprit(owned_leaves: list[str], present: dict[str, Any], exc: Exception) -> str:
    """The key to blame for a formula that failed: for an overflow, the largest number read (a
    400-digit train_iters, not the warmup read beside it), else the first key."""
    if isinstance(exc, ArithmeticError):
        numbers = [(abs(v), k) for k, v in present.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if numbers:
            return max(numbers)[1]
    return owned_leaves[0]
