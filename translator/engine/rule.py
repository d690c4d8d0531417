"""Applying one rule of a table, in either direction: its reading (the canonical values it gives for
its keys' values, or its defaults, checked against the catalogue), its writing (the target keys and
values it gives for its fields, and what emit records per field: the keys written, why a value was
not, what was lost), `product:` rules (global batch = micro x accumulation x data-parallel size:
reading solves the one value missing, values that disagree are bad input; writing loses a factor the
target derives at run time when another value is unknown), and the keys of the caches that remember
a rule's reading or writing of the same values per table (a batch of thousands of configs repeats
most values: norm: layernorm, seq_length: 2048, a scheduler's block; blocks are keyed by their
types, order and values, and shared results holding blocks are handed out as copies)."""

from __future__ import annotations

import math
from typing import Any, Callable

from ..core.ir import keep
from ..core.errors import InputError, UsageError
from ..io.documents import at_path
from ..core.ir import IR, Origin, Value
from ..core.report import Message, as_message, reason
from ..core.report.kinds import short
from ..knowledge.catalogue import catalogue
from ..knowledge.formula import (
    Absent,
    Approx,
    Extension,
    Foreign,
    Missing,
    UnknownValue,
    Unexpressible,
    Unrunnable,
    field_ident,
    ident,
    is_close,
    unwrap,
)
from ..knowledge.mapping import Rule, Table
from ..knowledge.schema import _Guess
from ..knowledge.source import Source

_MEMO_TYPES = frozenset({str, int, bool, type(None)})
IMMUTABLE = _MEMO_TYPES | {float}
_MEMO_BLOCK = 64  # at most this many values in the blocks of one key: larger ones are worked out afresh


def memo_key(
    rule: Any, version: str | None, present: dict[str, Any], inputs: dict[str, Any] | None = None
) -> tuple[Any, ...] | None:
    """A key for a rule's reading (or writing) of these values, or None when they are not small
    scalars or small blocks of them."""
    parts: list[Any] = [id(rule), version]
    for key, value in present.items() if not inputs else (*present.items(), ("|", None), *inputs.items()):
        kind = type(value)
        if kind is float:
            value = value.hex()  # keeps -0.0 apart from 0.0, and a NaN equal to itself
        elif kind is dict or kind is list:
            value = _frozen(value, [_MEMO_BLOCK])
            if value is None:
                return None
        elif kind not in _MEMO_TYPES or (kind is str and len(value) > 200):
            return None
        parts += (key, kind, value)  # the type too: 1, 1.0 and true are different settings
    return tuple(parts)


def _frozen(value: Any, budget: list[int]) -> Any:
    """A block of small scalars as a hashable value that keeps types and order apart, or None."""
    budget[0] -= 1
    kind = type(value)
    if budget[0] < 0:
        return None
    if kind is float:
        return (kind, value.hex())
    if kind in _MEMO_TYPES:
        return (kind, value) if kind is not str or len(value) <= 200 else None
    if kind is dict or kind is list:
        items = value.items() if kind is dict else enumerate(value)
        out: list[Any] = [kind]
        for key, item in items:
            frozen = _frozen(item, budget)
            if frozen is None or type(key) not in (str, int):
                return None
            out += (key, frozen)
        return tuple(out)
    return None


class WithBlocks(list):  # type: ignore[type-arg]
    """A cached result some of whose values are blocks: copied each time it is handed out."""


def shareable(value: Any) -> bool:
    """Immutable, or a plain block of immutable values (shared as copies: copy_block)."""
    kind = type(value)
    if kind in IMMUTABLE:
        return True
    if kind is dict:
        return all(type(k) is str and shareable(v) for k, v in value.items())
    if kind is list:
        return all(shareable(v) for v in value)
    return False


def copy_block(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: copy_block(v) for k, v in value.items()}
    if kind is list:
        return [copy_block(v) for v in value]
    return value


Subtree = Callable[[str], tuple[Any, list[str]]]  # key -> (value or block, the leaves it covers)
Checked = list[tuple[str, Any, "str | None", str]]  # (field, checked value, why approximate, note)


def coerce_input(
    source: Source, coerce: Callable[[str, Any], tuple[Any, str]], key: str, value: Any
) -> tuple[Any, str]:
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
    return InputError(
        str(exc),
        file=source.file_of(key),
        line=source.line_of(key),
        key=key,
        hint="fix the value",
        written_key=source.aliases.get(key),
    )


def _same(raw: Any, value: Any) -> bool:
    number = isinstance(raw, (int, float)) and not isinstance(raw, bool) and isinstance(value, float)
    return type(raw) is type(value) and raw == value or (number and raw == value)


def remember(table: Table, memo: tuple[Any, ...], checked: Any) -> None:
    """Keep a reading for the next file with the same values; only immutable results, and plain
    blocks of them (handed out as copies: recall), are shared."""
    if isinstance(checked, (Extension, Absent, Foreign)):
        kept: Any = checked
    elif all(type(value) in IMMUTABLE for _, value, _, _ in checked):
        kept = checked
    elif all(shareable(value) for _, value, _, _ in checked):
        # a copy, marked: the IR of the file read first, or of any later one, may change its blocks
        kept = WithBlocks((name, copy_block(value), approx, note) for name, value, approx, note in checked)
    else:
        return
    keep(
        table.value_reads, memo, kept, 500
    )  # the values most files share refill it at once: memory flat over a migration


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
        for name, result in ({} if isinstance(read, (Extension, Absent, Foreign)) else read).items():
            value, approx = unwrap(result)
            if value is not None:
                value, note = check_field(source, name, value, rule.keys)
                notes.extend([note] if note else [])
            cached.append(
                (name, None if value is None else Value(value, Origin.DEFAULT, (), None, "; ".join(notes)), approx)
            )
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
) -> dict[str, Any] | Extension | Absent | Foreign:
    """Canonical field -> value (maybe Approx) one rule reads from its keys' values (or defaults).
    A value the release does not know (UnknownValue, from any table shape or formula) is a Foreign
    reading: the engine's one rule for a fork's values."""
    if rule.formula is not None:
        return _read_formula(rule, present, subtree, ir, version, source, owned_leaves)
    assert rule.simple is not None and rule.key
    raw = present[rule.key] if rule.key in present else rule.default_for(version)  # None when it has none
    try:
        return {rule.fields[0]: rule.simple.read(raw)}
    except UnknownValue as exc:
        return Foreign(exc.value, exc.known, exc.key or rule.key)
    except ValueError as exc:
        raise InputError(
            str(exc), file=source.file_of(rule.key), line=source.line_of(rule.key), key=rule.key, hint="fix the value"
        ) from None


def _read_formula(
    rule: Rule, present: dict[str, Any], subtree: Subtree, ir: IR, version: str, source: Source, owned_leaves: list[str]
) -> dict[str, Any] | Extension | Absent | Foreign:
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
    except UnknownValue as exc:
        return Foreign.of(exc)
    except (TypeError, ValueError, ArithmeticError) as exc:  # overflow on a huge value is bad input too
        key = _culprit(owned_leaves, present, exc) if owned_leaves else rule.label
        at_fault = dict(rule.read_args).get(exc.arg) if isinstance(exc, Unrunnable) and exc.arg else None
        if at_fault is not None and at_fault in present:  # the key holding the value at fault, as the file writes it
            key = at_fault
        message = str(exc) if isinstance(exc, Unrunnable) else f"cannot compute {', '.join(rule.fields)}: {exc}"
        raise InputError(message, file=source.file_of(key), line=source.line_of(key), key=key) from None
    if isinstance(result, (Extension, Absent, Foreign)):
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


Written = dict[str, tuple[Any, "Approx | None"]]  # target key -> (value, why it is approximate)

LOSS = ""  # write() key for "nothing written, and why" (a formula returning Approx)
MISSING = "\0missing:"  # write() key prefix: a key the target needs that the formula cannot give (Missing)


class Carried:
    """What emit did with one canonical field: the target keys and values written, and why not."""

    __slots__ = ("target_keys", "written", "lossy", "note", "skipped", "unwritable")

    def __init__(self) -> None:  # by hand: a dataclass's list factories cost more, once per field per file
        self.target_keys: list[str] = []
        self.written: list[Any] = []
        self.lossy: list[Message] = []
        self.note = ""
        self.skipped: Message | None = None  # why a rule matched but did not apply
        self.unwritable = False  # skipped because the target cannot take the value (not a `when`)


def write_formula(rule: Rule, ir: IR, version: str | None = None) -> Written:
    """Framework key -> (value, why it is approximate) a formula writes for its rule's fields.

    A formula may return Approx({...}, reason) to say the target cannot hold all of it, or map a
    key to Approx(None, reason) to say why that key is not written: both reach the report as lossy
    (under LOSS when nothing carries them).
    """
    assert rule.formula is not None
    kwargs = {arg: ir.get(name) for arg, name in rule.write_args}
    if "version" in rule.formula.write_params():  # a writing that depends on the target's release
        kwargs["version"] = version
    # the same values write the same keys: a batch repeats most of them (worked out once per rule)
    memo = memo_key(rule, version, kwargs)
    kept = rule.writes.get(memo) if memo is not None else None
    if kept is not None:
        return {key: (copy_block(value), approx) for key, (value, approx) in kept.items()}
    result = _written(rule, kwargs)
    if memo is not None and all(
        shareable(value) and (approx is None or type(approx.value) in IMMUTABLE) for value, approx in result.values()
    ):
        keep(rule.writes, memo, {key: (copy_block(value), approx) for key, (value, approx) in result.items()}, 200)
    return result


def _written(rule: Rule, kwargs: dict[str, Any]) -> Written:
    assert rule.formula is not None
    produced = rule.formula.write(**kwargs)
    losses: list[Approx] = [produced] if isinstance(produced, Approx) and produced.detail else []
    by_ident = rule.key_by_ident
    result: Written = {}
    for name, value in unwrap(produced)[0].items():
        if name not in by_ident:
            raise UsageError(f"formula {rule.formula.name} wrote {name!r}, which its rule does not declare")
        if isinstance(value, Missing):  # reported missing (emit), and the reason on the rule's leaves
            result[MISSING + by_ident[name]] = (None, Approx(None, value.hint))
            value = Approx(None, value.hint)
        if isinstance(value, Approx):
            if value.value is not None:
                result[by_ident[name]] = (value.value, value if value.detail else None)
            elif value.detail:
                losses.append(value)
        elif value is not None:
            result[by_ident[name]] = (value, None)
    if losses:
        parts = tuple(part for x in losses for part in (x.parts or ((x.detail, x.fields),)))
        fields = (
            () if any(not names for _, names in parts) else tuple(dict.fromkeys(f for _, names in parts for f in names))
        )
        result[LOSS] = (None, Approx(None, "; ".join(x.detail for x in losses), fields, parts))
    return result


def reason_for(approx: Approx, name: str) -> Message | None:
    """Why `approx` concerns canonical field `name`, as a message (None when it does not): one
    reason keeps its own kind; several are said together, as the formula joined them."""
    if approx.parts:
        mine = [why for why, names in approx.parts if not names or name in names]
        if len(mine) == 1:
            return as_message(mine[0])
    text = approx.detail_for(name)
    return as_message(text) if text else None


def write_simple(rule: Rule, value: Any) -> Written:
    """A rename, enum, scale or inversion: one key, one value."""
    assert rule.simple is not None and rule.key
    try:
        return {rule.key: (rule.simple.write(value), None)}
    except LookupError:
        raise Unexpressible(reason("no_counterpart_value", field=rule.fields[0], value=value, key=rule.key)) from None


UNDOCUMENTED = object()


def key_default(rule: Rule, key: str, version: str) -> Any:
    """The documented default of one of a rule's keys, or UNDOCUMENTED."""
    if key == rule.key:
        return rule.default_for(version) if rule.has_default(version) else UNDOCUMENTED
    return rule.defaults.get(key, UNDOCUMENTED)


def at_default(rule: Rule, written: Written, version: str) -> bool:
    """Every key a rule wrote holds its documented default (a key without one never does): NeoX's
    rms_norm_epsilon is checked against its own default 1e-8, not layernorm_epsilon's 1e-5."""
    for key, (value, _) in written.items():
        default = key_default(rule, key, version)
        if default is UNDOCUMENTED or not is_close(value, default):
            return False
    return True


def solve(rule: Rule, ir: IR, table: Table, source: Source) -> bool:
    """Fill (`fill:`) and solve one product; True when a value was added to the IR."""
    names = (rule.fields[0], *rule.product)
    unknown = [n for n in names if ir.get(n) is None]
    added = False
    for name, value in rule.fill:  # DeepSpeed: accumulation 1 when only one batch size is given
        if len(unknown) > 1 and name in unknown and _fill_applies(name, names, unknown, table):
            ir.fields[name] = Value(value, Origin.DEFAULT, (), None, "")
            unknown.remove(name)
            added = True
    if len(unknown) > 1:
        return added
    values = {n: ir.get(n) for n in names if n not in unknown}
    if not all(_number(v) for v in values.values()):
        return added
    total, factors = names[0], names[1:]
    if not unknown:
        if not is_close(values[total], math.prod(values[f] for f in factors)):
            raise _error(
                f"{_label(total, ir, table)} {short(values[total])} is not " + _times(factors, values, ir, table),
                names,
                ir,
                source,
            )
        return added
    missing = unknown[0]
    if missing == total:
        solved: Any = math.prod(values[f] for f in factors)
    else:
        others = [f for f in factors if f != missing]
        divisor = math.prod(values[f] for f in others)
        solved = _quotient(values[total], divisor)
        if solved is None:
            raise _error(
                f"cannot solve {missing}: {_label(total, ir, table)} {short(values[total])} is not a "
                f"multiple of {_times(others, values, ir, table) or '1'}",
                names,
                ir,
                source,
            )
    given = [ir.fields[n] for n in names if n != missing]
    origin = Origin.DERIVED if any(v.origin is not Origin.DEFAULT for v in given) else Origin.DEFAULT
    keys = tuple(dict.fromkeys(k for v in given for k in v.source_keys if not k.startswith("--set ")))
    file = next((v.file for v in given if v.file), None)
    ir.fields[missing] = Value(solved, origin, keys, file, "")
    return True


def _fill_applies(name: str, names: tuple[str, ...], unknown: list[str], table: Table) -> bool:
    """A factor is filled when, of the other values the file can state (those with a key here),
    some are given and some are not: DeepSpeed's accumulation is 1 when only the global or only
    the micro batch is given, VeOmni's when only the micro batch is. A value the framework works
    out at run time (the data-parallel size) is no reason to fill: it solves the product then."""
    keyed = [n for n in names if n != name and any(r.key for r in table.rules_for_field(n))]
    return any(n in unknown for n in keyed) and any(n not in unknown for n in keyed)


def _has_default(table: Table, name: str) -> bool:
    return any(r.key and r.has_default() for r in table.rules_for_field(name))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _quotient(total: Any, divisor: Any) -> Any:
    """total / divisor when it is a positive whole quotient (floats: within rounding), else None."""
    if not divisor or divisor < 0:
        return None
    if isinstance(total, int) and isinstance(divisor, int):
        return total // divisor if total % divisor == 0 and total > 0 else None
    quotient = total / divisor
    return quotient if quotient > 0 else None


def _label(name: str, ir: IR, table: Table) -> str:
    """A value as the user knows it: the key it came from, else this table's key, else the field."""
    value = ir.fields.get(name)
    if value is not None and value.source_keys:
        return value.source_keys[0]
    return next((r.key for r in table.rules_for_field(name) if r.key), name)


def _times(names: Any, values: dict[str, Any], ir: IR, table: Table) -> str:
    return " x ".join(f"{_label(n, ir, table)} {short(values[n])}" for n in names)


def _error(message: str, names: tuple[str, ...], ir: IR, source: Source) -> InputError:
    """Blame the first value the file gave (a --set value has no line)."""
    key = next((k for n in names if (v := ir.fields.get(n)) for k in v.source_keys if not k.startswith("--set ")), None)
    return InputError(
        message,
        file=source.file_of(key) if key else None,
        line=source.line_of(key) if key else None,
        key=key,
        hint="make them agree",
    )


def unsolved(table: Table, ir: IR, carried: dict[str, Carried]) -> None:
    """A value the target derives from a product (no key of its own) reads back only when every
    other value of the product is known (or the target's documented default): else lossy, naming
    what is not known."""
    for rule in table.products:
        names = (rule.fields[0], *rule.product)
        fills = dict(rule.fill)
        for name in names:
            if not ir.has(name) or any(r.key for r in table.rules_for_field(name)):
                continue
            unknown = [n for n in names if n != name and not ir.has(n) and not _has_default(table, n)]
            if unknown and name in fills and is_close(ir.get(name), fills[name]):
                # the target fills this value itself when the product cannot be solved (Megatron:
                # accumulation 1 without --global-batch-size): it reads back as it is
                missing = [n for n in names if not ir.has(n)] + [name]
                if _fill_applies(name, names, missing, table):
                    continue
            if unknown:
                why: Message = (
                    "derived_by_target",
                    {
                        "title": table.title,
                        "field": name,
                        "total": names[0],
                        "factors": list(names[1:]),
                        "unknown": unknown,
                    },
                )
                carried.setdefault(name, Carried()).lossy.append(why)
