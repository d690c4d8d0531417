"""The grammar's shapes that stand for a formula: `fixed`, `flags`, `list` and `pick` each build a
read/write pair from the rule's data, so a recurring shape is a table line, not a formula class.
(`product` relates fields rather than keys: the engine solves it, engine/rule.py.)

The `cases` shape: a decision table over several keys that decide a field together (DeepSpeed's
fp16 / bf16 / amp / torch_autocast blocks are one compute dtype), or several fields (Model Zoo's
norm_type and 1.9.1's switches are the norm and its bias), as ordered data instead of a formula
class: each reading case is a pattern over the rule's keys (and the file's release) giving the value
(several fields: field -> value, a field left out not set), approximately or not, an error or an
extension; each writing entry gives, for a value (several fields: field -> pattern) and the target's
release, the keys to write or the reason none can be.

Shapes of one key whose meaning is a choice: `key_by` (another field picks which key holds the
value: NeoX's epsilon per norm kind), `follows` (no key: another field's value decides the field:
NeoX's norm bias) and an `enum` with modifiers (a closed set of names, some read
or written approximately, the rest an extension, an error or not writable), so that a formula
class per choice becomes table data.
"""

from __future__ import annotations

import inspect
import math
from copy import deepcopy
from typing import Any, Callable, NamedTuple

from ...core.errors import MappingTableError
from ...core.report.kinds import reason as said
from ...core.report.kinds import short
from ..formula import Approx, Extension, Formula, UnknownValue, Unexpressible, field_ident, ident, is_close, parameters
from ..schema import load_history, older


def same_value(a: Any, b: Any) -> bool:
    """Equal as settings: numbers within rounding, lists item by item, a boolean only to a boolean."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return is_close(a, b)


def _formula(
    name: str, read: Callable[..., Any], read_args: list[str], write: Callable[..., Any], write_args: list[str]
) -> Formula:
    """A Formula whose functions take the named keyword arguments (the engine passes them by name)."""
    for func, args in ((read, read_args), (write, write_args)):
        func.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY) for a in args]
        )
    return Formula(name, read, write, parameters(read), parameters(write))


def fixed(field: str, value: Any, reason: str, loss: str = "") -> Formula:
    """The framework hard-codes the field: read as `value`; another value cannot be written (said
    with `reason`, or in the words of `loss`, {value} the value lost)."""

    def read() -> Any:
        return list(value) if isinstance(value, list) else value  # a fresh list: the IR's values are not shared

    def write(**kw: Any) -> Any:
        given = kw["value"]
        if same_value(given, value):
            return {}
        if loss:
            return Approx({}, loss.format(value=given))
        return Approx({}, said("fixed_value", reason=reason, field=field, value=given))

    return _formula(f"fixed {short(value)}", read, [], write, ["value"])


def same_as(field: str, other: str, reason: str, otherwise: Any, implied: bool = False) -> Formula:
    """The framework has no key of its own: the field is another field's value (NeoX's embedding
    dropout is hidden_dropout); another value is lost, said by `reason` ({same}, {value}: format fields).
    `implied`: the field's absence already means the other's value (the catalogue's none_means), so
    reading gives no value, and nothing is lost while the other is unknown."""
    alias = f"same_{field_ident(other)}"

    def read(**kw: Any) -> Any:
        return kw[alias] if alias in kw else None

    def write(**kw: Any) -> Any:
        value, applied = kw["value"], otherwise if kw[alias] is None else kw[alias]
        if same_value(value, applied) or (implied and applied is None):
            return {}
        return Approx({}, reason.format(same=applied, value=value))

    # implied: the reading takes nothing (no value read depends on the other field's)
    return _formula(f"same as {other}", read, [] if implied else [alias], write, ["value", alias])


def flags(field: str, switches: dict[str, Any], otherwise: Any) -> Formula:
    """Several boolean keys <-> one enum field: at most one switch is on; none on means `otherwise`."""
    names = {ident(k): k for k in switches}

    def read(**kw: Any) -> Any:
        for arg, key in names.items():
            if kw[arg] is not None and not isinstance(kw[arg], bool):
                raise ValueError(f"{key}: expected true or false, got {kw[arg]!r}")
        on = [key for arg, key in names.items() if kw[arg] is True]
        if len(on) > 1:
            raise ValueError(f"{' and '.join(on)} are all true: only one of {', '.join(switches)} can be")
        return switches[on[0]] if on else otherwise

    def write(**kw: Any) -> Any:
        value = kw["value"]
        for key, meaning in switches.items():
            if meaning == value:
                return {ident(key): True}
        if value == otherwise and otherwise is not None:
            return {next(iter(names)): False}
        raise Unexpressible(said("no_flag_for_value", field=field, value=value, keys=list(switches)))

    table = ", ".join(f"{k}={v}" for k, v in switches.items())
    return _formula(f"flags {table}", read, list(names), write, ["value"])


def items(field: str, keys: list[str]) -> Formula:
    """One key per item of a list field (Adam's beta1, beta2 <-> optim.betas)."""
    names = [ident(k) for k in keys]

    def read(**kw: Any) -> Any:
        got = [kw[n] for n in names]
        if all(v is None for v in got):
            return None
        missing = [k for k, v in zip(keys, got) if v is None]
        if missing:
            raise ValueError(f"{', '.join(missing)} not given and without a default: {field} needs every item")
        return got

    def write(**kw: Any) -> Any:
        value = kw["value"]
        if not isinstance(value, (list, tuple)) or len(value) != len(keys):
            raise Unexpressible(said("wrong_length", field=field, value=value, keys=list(keys)))
        return dict(zip(names, value))

    return _formula(f"list {', '.join(keys)}", read, names, write, ["value"])


def pick(fields: tuple[str, ...], key: str, picks: dict[str, Any]) -> Formula:
    """One key feeding several fields: each field's value picked from the key's value."""
    arg = ident(key)
    tables = {f: p for f, p in picks.items() if isinstance(p, dict)}
    choices = list(next(iter(tables.values()))) if tables else []

    def value_of(name: str, raw: Any) -> Any:
        table = picks[name]
        return raw if not isinstance(table, dict) else table.get(raw)

    def read(**kw: Any) -> Any:
        raw = kw[arg]
        if raw is None:
            return {}
        if tables and raw not in choices:
            raise UnknownValue(raw, choices)
        return {field_ident(f): value_of(f, raw) for f in fields}

    def write(**kw: Any) -> Any:
        wanted = {f: kw[field_ident(f)] for f in fields if kw[field_ident(f)] is not None}
        candidates = choices or [wanted.get(next(f for f in fields if not isinstance(picks[f], dict)))]
        for raw in candidates:
            if all(same_value(value_of(f, raw), v) for f, v in wanted.items()):
                return {arg: raw}
        first = fields[0]
        near = [raw for raw in candidates if first in wanted and same_value(value_of(first, raw), wanted[first])]
        if not near:
            raise Unexpressible(said("no_counterpart_value", field=first, value=wanted.get(first), key=key))
        lost = [f for f in wanted if not same_value(value_of(f, near[0]), wanted[f])]
        means = {f: value_of(f, near[0]) for f in lost}
        return Approx(
            {arg: near[0]},
            said("picked_value", key=key, choice=near[0], means=means, wanted={f: wanted[f] for f in lost}),
            tuple(lost),
        )

    return _formula(f"pick {key}", read, [arg], write, [field_ident(f) for f in fields])


def renamed(
    field: str,
    key: str,
    gate: dict[str, tuple[Any, ...]],
    off: list[Any],
    read_only: str,
    values: dict[Any, Any],
    more: Modifiers | None = None,
) -> Formula:
    """A rename with modifiers: `read_when` (the key only means something while other fields have
    these values: DeepSpeed's optimizer.params.eps for the optimizers that take one), `off_value` (a key
    value that turns the setting off: read as no value), `read_only` (never written: the reason),
    `values` (a few key values that stand for a canonical one, any other value as it is), and the
    `Modifiers`: `omit`, `warn_values`, `exponent_of`."""
    arg = ident(key)
    gates = {f"gate_{ident(name)}": allowed for name, allowed in gate.items()}
    extra = more or Modifiers()

    def read(**kw: Any) -> Any:
        raw = kw[arg]
        if extra.over:  # another key whose value decides the field (NeoX's mlp_type: llama)
            decided = _overridden(extra.over, kw[ident(extra.over["key"])])
            if decided is not _NOT:
                return decided
        if any(kw[g] not in allowed for g, allowed in gates.items()):
            return None
        if off and raw is not None and same_value(raw, off[0]):
            return None
        if raw is None and extra.omit:  # the framework says this value by leaving the key out
            return extra.omit[0]
        if raw is None and (extra.by or extra.source):
            return _default_of(extra, kw)
        value = next((canonical for framework, canonical in values.items() if same_value(raw, framework)), raw)
        if (
            extra.floor is not None
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
            and value < extra.floor
        ):
            value = type(value)(extra.floor)  # NeoX: mp_size if mp_size >= 1 else 1, before validate_values runs
        if extra.base and value is not None:
            value = _power(key, extra.base, value)
        warning = next(
            (why for framework, why in extra.warn.items() if raw is not None and same_value(raw, framework)), ""
        )
        warning = warning or _through(extra.over, raw)  # a value the framework passes on only through the other key
        return Approx(value, warning) if warning else value

    def write(**kw: Any) -> Any:
        value = kw["value"]
        if read_only:
            raise Unexpressible(read_only.replace("{value}", short(value)))
        if _through(extra.over, value):  # the rule's key cannot pass it on: written where the framework takes it
            return {ident(extra.over["key"]): value}
        if extra.needs:  # written only beside another field's value (NeoX's save, with a checkpoint interval)
            other = kw[f"with_{field_ident(extra.needs['field'])}"]
            if other is None:
                return Approx({}, extra.needs["reason"].format(value=value))
            if any(same_value(other, v) for v in extra.needs.get("unless", ())):
                return {}  # (the rule's note says what leaving the key out means)
        if extra.omit and same_value(value, extra.omit[0]):
            return {}
        if extra.base:
            return {arg: _exponent(extra.base, value)}
        out = next((framework for framework, canonical in values.items() if same_value(value, canonical)), value)
        warning = next((why for framework, why in extra.warn.items() if same_value(out, framework)), "")
        return {arg: Approx(out, warning) if warning else out}  # a doubtful value is so either way

    description = _renamed_description(key, gate, off, read_only, values, extra)
    writing = [f"with_{field_ident(extra.needs['field'])}"] if extra.needs else []
    return _formula(description, read, [arg, *gates, *extra.args()], write, ["value", *writing])


class Modifiers(NamedTuple):
    """A rename's further modifiers: `omit` (the canonical value the framework says by leaving the key
    out: an absent key reads as it, and it is written as no key), `warn_values` ({key value: why}: read or written, but approximately), `exponent_of`
    (the key is the exponent: the field is base ** key), `default_by` and `default_from` (an absent
    key's value depends on other fields: Cerebras' attention_dropout_rate), `overridden_by` (another
    key of the rule whose values decide the field whatever the key says: NeoX's mlp_type: llama, an
    MLP without biases; with `as_is` its every value decides, and `through` names values the key cannot
    pass on, written through the overriding key: NeoX's gradient_clipping 1.0) and `written_with` (the key is written only beside another field's value:
    NeoX refuses `save` without checkpoint_factor), `at_least` (a number under it runs as it: the framework
    derives it before its checks, NeoX's model_parallel_size 0)."""

    omit: list[Any] = []
    warn: dict[Any, str] = {}
    base: int = 0
    by: dict[str, dict[Any, Any]] = {}  # default_by: {field: {its value: the key's default}}
    source: str = ""  # default_from: the field whose value an absent key has otherwise
    over: dict[
        str, Any
    ] = {}  # overridden_by: {key, values: {its value: the field's} or as_is, reasons, keeps, through}
    needs: dict[str, Any] = {}  # written_with: {field, unless: [its values], reason}
    floor: float | None = None  # at_least: a number under it runs as it (the framework derives it before its checks)

    def args(self) -> list[str]:
        """The reading's arguments: the fields the defaults depend on, the overriding key."""
        return (
            [f"by_{field_ident(n)}" for n in self.by]
            + [f"from_{field_ident(self.source)}"] * bool(self.source)
            + ([ident(self.over["key"])] if self.over else [])
        )


_NOT: Any = object()  # no override: the rule's key decides


def _renamed_description(
    key: str, gate: dict[str, tuple[Any, ...]], off: list[Any], read_only: str, values: dict[Any, Any], extra: Modifiers
) -> str:
    """What a rename with modifiers does, in words (the formula's name in `explain` and errors)."""
    parts = [f"rename {key}"] + [f"read when {n} in {', '.join(map(str, v))}" for n, v in gate.items()]
    parts += [f"off {short(v)}" for v in off] + ["read only"] * bool(read_only)
    parts += [f"{short(a)} means {short(b)}" for a, b in values.items()]
    parts += [f"{short(v)} left out" for v in extra.omit] + [f"{short(v)} doubtful" for v in extra.warn]
    parts += [f"{extra.base}**key"] * bool(extra.base) + (
        [f"under {extra.floor:g} runs as it"] if extra.floor is not None else []
    )
    parts += [f"absent: by {n}" for n in extra.by] + [f"absent: {extra.source}"] * bool(extra.source)
    parts += [f"{extra.over['key']} overrides" for _ in [extra.over] if extra.over]
    parts += [f"{short(v)} through {extra.over['key']}" for v in (extra.over or {}).get("through", {})]
    parts += [f"written with {extra.needs['field']}" for _ in [extra.needs] if extra.needs]
    return "; ".join(parts)


def _overridden(over: dict[str, Any], raw: Any) -> Any:
    """The field's value an overriding key's value decides (an Approx with its reason), or _NOT."""
    if raw is None:
        return _NOT
    if over.get("as_is"):  # every value decides, as it is (NeoX's deepspeed_extra_args, merged last)
        return raw
    for value, meaning in over["values"].items():
        if same_value(raw, value):
            why = (over.get("reasons") or {}).get(value, "")
            return Approx(meaning, why.format(value=raw)) if why else meaning
    if "keeps" in over and not any(same_value(raw, v) for v in over["keeps"]):
        raise UnknownValue(raw, [*over["keeps"], *over["values"]], over["key"])  # a fork's value: the engine's one rule
    return _NOT


def _through(over: dict[str, Any], value: Any) -> str:
    """Why the rule's key cannot pass `value` on (overridden_by's `through`: the framework drops it
    there, the overriding key carries it), or "". Compared exactly, as the framework compares."""
    if value is None or isinstance(value, bool):
        return ""
    return next((why for dropped, why in (over.get("through") or {}).items() if value == dropped), "")


def _default_of(extra: Modifiers, kw: dict[str, Any]) -> Any:
    """An absent key's value: by another field's value (`default_by`), else another field's (`default_from`)."""
    for name, table in extra.by.items():
        if kw[f"by_{field_ident(name)}"] in table:
            return table[kw[f"by_{field_ident(name)}"]]
    return kw[f"from_{field_ident(extra.source)}"] if extra.source else None


def _power(key: str, base: int, exponent: Any) -> float:
    if isinstance(exponent, bool) or not isinstance(exponent, (int, float)) or not -1000 <= exponent <= 1000:
        # (base ** a huge exponent would be computed as an exact integer first)
        raise ValueError(f"{key} {exponent!r} is no usable power of {_spelled(base)}")
    return float(base) ** exponent


def _exponent(base: int, value: float) -> Any:
    """The exponent of `value` (approximate, rounded, when it is no power of `base`)."""
    power = math.log(value, base) if value > 0 else 0.0
    exact = round(power)
    if not is_close(power, exact):
        return Approx(exact, f"{value} is not a power of {_spelled(base)}")
    return int(exact)


def _spelled(base: int) -> str:
    return {2: "two", 10: "ten"}.get(base, str(base))


_OUTCOMES = ("value", "error", "extension")


def cases(
    fmt: str,
    fields: tuple[str, ...],
    keys: tuple[str, ...],
    spec: dict[str, Any],
    fail: Callable[[str], MappingTableError],
    peek: tuple[str, ...] = (),
) -> Formula:
    """The rule's formula, after checking that the cases name only the rule's keys (and match on its
    `peek` keys, another rule's, read only), fields and releases of the format's key history."""
    _check(spec, fail)
    folded, several = bool(spec.get("case_insensitive")), len(fields) > 1
    reads, writes = list(spec["read"]), list(spec["write"])
    _check_cases(fmt, fields, keys, peek, reads, writes, fail)
    args = {key: ident(key) for key in keys}
    seen = {**args, **{key: ident(key) for key in peek}}  # what reading matches on
    by_release = any(b in c for c in reads for b in ("since", "before"))
    writes_by_release = any(
        b in c or "{version}" in c.get("lossy", c.get("error", "")) for c in writes for b in ("since", "before")
    )
    params = [field_ident(f) for f in fields] if several else ["value"]

    def holds(case: dict[str, Any], values: dict[str, Any], version: str) -> bool:
        fold = bool(case.get("case_insensitive", folded))  # (a case may say otherwise)
        return _in_releases(fmt, case, version) and all(
            _matches(values[key], pattern, fold) for key, pattern in case.get("match", {}).items()
        )

    def read(**kw: Any) -> Any:
        values = {key: kw[arg] for key, arg in seen.items()}
        case = next((c for c in reads if holds(c, values, kw.get("version", ""))), None)
        if case is None:
            _unknown(values, keys, reads, folded)  # a value no case names: the release does not know it (a fork's)
            raise ValueError(f"no case for {', '.join(f'{k}={short(v)}' for k, v in values.items())}")
        if "error" in case:
            raise ValueError(_render(case["error"], values))
        if "extension" in case:
            return Extension(_render(case["extension"], values))
        value = deepcopy(case["value"])  # (the IR's own)
        if several:
            value = {field_ident(f): item for f, item in value.items()}
        return (
            Approx(value, _render(case["lossy"], values), tuple(case.get("lost", ()))) if case.get("lossy") else value
        )

    def write(**kw: Any) -> Any:
        version = kw.get("version") or ""
        given = {f: kw[p] for f, p in zip(fields, params)}
        for case in writes:
            wanted = case.get("value", {}) if several else ({fields[0]: case["value"]} if "value" in case else {})
            if not _in_releases(fmt, case, version) or not all(_matches(given[f], p, False) for f, p in wanted.items()):
                continue
            names = {"value": given[fields[0]], **given, "version": version}
            if "error" in case:
                raise Unexpressible(_render(case["error"], names))
            out = {args[key]: deepcopy(item) for key, item in case["keys"].items()}  # (the document's own)
            return Approx(out, _render(case["lossy"], names), tuple(case.get("lost", ()))) if case.get("lossy") else out
        raise Unexpressible(
            said("no_counterpart_value", field=fields[0], value=given[fields[0]], key=(keys or peek)[0])
        )

    common = _common_prefix(keys + peek)
    name = (
        "cases "
        + "; ".join(_case_spelled(c, True, common, several) for c in reads)
        + "; writes "
        + "; ".join(_case_spelled(c, False, common, several) for c in writes)
    )
    return _formula(
        name, read, [*seen.values()] + ["version"] * by_release, write, params + ["version"] * writes_by_release
    )


def _check_cases(
    fmt: str,
    fields: tuple[str, ...],
    keys: tuple[str, ...],
    peek: tuple[str, ...],
    reads: list[dict[str, Any]],
    writes: list[dict[str, Any]],
    fail: Callable[[str], MappingTableError],
) -> None:
    """Each case gives one outcome, names only the rule's keys and fields and releases of the key history."""
    for case in reads:
        if sum(k in case for k in _OUTCOMES) != 1 or ("lossy" in case and "value" not in case):
            raise fail("a reading case gives one of value (+ lossy), error or extension")
    for case in writes:
        if ("keys" in case) == ("error" in case) or ("lossy" in case and "keys" not in case):
            raise fail("a write entry gives the keys it writes (keys: {key: value}, + lossy) or an error")
    history = load_history(fmt)
    releases = history.position if history is not None else {}
    for writing, case in [(False, c) for c in reads] + [(True, c) for c in writes]:
        named = set(case.get("match", {})) - set(peek) | set(case.get("keys", {}))
        if named - set(keys):
            raise fail(f"cases name keys that are not the rule's: {sorted(named - set(keys))}")
        for bound in ("since", "before"):
            if bound in case and case[bound] not in releases:
                raise fail(f"{bound}: {case[bound]!r} is no release of {fmt}'s key history")
        _check_fields(case, fields, writing, fail)


def _unknown(values: dict[str, Any], keys: tuple[str, ...], reads: list[dict[str, Any]], folded: bool) -> None:
    """Raise UnknownValue for the first of the rule's keys whose name (a text value) no reading case's
    pattern names (the names the cases know for it listed); nothing when every name is named somewhere
    (the combination is what no case takes) or the value is no name (a flag, a number)."""
    for key in keys:
        value = values.get(key)
        naming = [c for c in reads if key in c.get("match", {})]
        if not isinstance(value, str) or not naming:
            continue
        if any(_matches(value, c["match"][key], bool(c.get("case_insensitive", folded))) for c in naming):
            continue
        patterns = [c["match"][key] for c in naming]
        known = [n for p in patterns for n in (p if isinstance(p, list) else [p]) if isinstance(n, str) and n]
        raise UnknownValue(value, list(dict.fromkeys(known)), key)


def _check_fields(
    case: dict[str, Any], fields: tuple[str, ...], writing: bool, fail: Callable[[str], MappingTableError]
) -> None:
    """A rule over several fields: a case's value is a mapping naming some of them (a writing entry's:
    field -> pattern); `lost` names them."""
    if set(case.get("lost", ())) - set(fields) or ("lost" in case and "lossy" not in case):
        raise fail(f"lost names the fields a lossy case approximates, of {list(fields)}")
    if (
        len(fields) > 1
        and "value" in case
        and (not isinstance(case["value"], dict) or set(case["value"]) - set(fields))
    ):
        raise fail(
            f"a case of a rule over several fields gives its value as {{field: value}}, fields of {list(fields)}"
        )
    if len(fields) > 1 and writing and not all(_pattern_ok(p) for p in case.get("value", {}).values()):
        raise fail(_BAD_PATTERN)


_PARTS = {
    "read": {"match", "since", "before", "value", "lossy", "lost", "error", "extension", "case_insensitive"},
    "write": {"value", "since", "before", "keys", "lossy", "lost", "error"},
}


def _check(spec: dict[str, Any], fail: Callable[[str], MappingTableError]) -> None:
    """The shape's structure (the meta-schema describes it; the loader's checker reads only its top)."""
    if set(spec) - {"read", "write", "case_insensitive"} or not all(
        isinstance(spec.get(s), list) and spec[s] for s in _PARTS
    ):
        raise fail("cases is {read: [cases], write: [entries]} (+ case_insensitive)")
    for side, allowed in _PARTS.items():
        for case in spec[side]:
            if not isinstance(case, dict) or set(case) - allowed or not isinstance(case.get("match", {}), dict):
                raise fail(f"a {side} case is a mapping of {sorted(allowed)} (match: a mapping)")
            if side == "write" and not isinstance(case.get("keys", {}), dict):
                raise fail("a write entry gives the keys it writes: keys: {key: value}")
            if not isinstance(case.get("lost", []), list):
                raise fail("lost is a list of the rule's fields")
            if any(not isinstance(case[m], str) for m in ("lossy", "error", "extension") if m in case):
                raise fail("lossy, error and extension are messages (strings)")
            if not all(_pattern_ok(p) for p in case.get("match", {}).values()):
                raise fail(_BAD_PATTERN)


_BAD_PATTERN = "a pattern is a value, a list of values, {not: pattern} or {truthy: true/false}"


def _pattern_ok(pattern: Any) -> bool:
    if isinstance(pattern, dict):
        return set(pattern) == {"not"} or (set(pattern) == {"truthy"} and isinstance(pattern["truthy"], bool))
    return True


def _matches(value: Any, pattern: Any, folded: bool) -> bool:
    """A key's value against a pattern: a value (null: absent), a list of them, {not: ...}, or
    {truthy: ...} (as the framework's `if key:` takes it: null, false, 0, "" and empty are not)."""
    if isinstance(pattern, dict):
        if "truthy" in pattern:
            return bool(value) is pattern["truthy"]
        return not _matches(value, pattern["not"], folded)
    if isinstance(pattern, list):
        return any(_matches(value, p, folded) for p in pattern)
    if pattern is None or value is None:
        return pattern is value
    if folded and isinstance(value, str) and isinstance(pattern, str):
        return value.lower() == pattern.lower()
    return same_value(value, pattern)


def _in_releases(fmt: str, case: dict[str, Any], version: str) -> bool:
    """The case's release range (`since`, `before`) holds (an unknown release counts as the newest)."""
    if "since" in case and older(fmt, version, case["since"]):
        return False
    return "before" not in case or older(fmt, version, case["before"])


def _render(template: str, names: dict[str, Any]) -> str:
    """A message with {name} and {name!r} replaced by the values (names are key paths, with dots)."""
    for name, value in names.items():
        template = template.replace(f"{{{name}!r}}", repr(value)).replace(f"{{{name}}}", str(value))
    return template


def _common_prefix(keys: tuple[str, ...]) -> str:
    """The block every key of the rule is in (`model.`), left out where the cases are spelled."""
    shared: list[str] = []
    for level in zip(*(k.split(".")[:-1] for k in keys)) if len(keys) > 1 else ():
        if len(set(level)) > 1:
            break
        shared.append(level[0])
    return "".join(f"{p}." for p in shared)


def _case_spelled(case: dict[str, Any], reading: bool, common: str, several: bool) -> str:
    """One case as explain and docs/mappings.md show it (keys without their common block)."""
    if reading:
        when = ", ".join(f"{k[len(common) :]}={_pattern(p)}" for k, p in case.get("match", {}).items())
        outcome = _value(case["value"], several) if "value" in case else next(o for o in _OUTCOMES if o in case)
    else:
        when = _value(case["value"], several, _pattern) if "value" in case else ""
        outcome = (
            "error"
            if "error" in case
            else (", ".join(f"{k[len(common) :]}={short(v)}" for k, v in case["keys"].items()) or "nothing")
        )
    outcome += " (lossy)" * bool(case.get("lossy"))
    releases = " ".join(f"{b} {case[b]}" for b in ("since", "before") if b in case)
    return f"{' '.join(p for p in (when, releases) if p) or 'else'}: {outcome}"


def _value(value: Any, several: bool, spell: Callable[[Any], str] = short) -> str:
    """A case's value: of one field, or of several (field -> value, the fields by their last part)."""
    if several:
        return ", ".join(f"{field_ident(f)}={spell(v)}" for f, v in value.items()) or "nothing"
    return spell(value)


def _pattern(pattern: Any) -> str:
    if isinstance(pattern, dict):
        if "truthy" in pattern:
            return "set" if pattern["truthy"] else "unset"
        negated = pattern["not"]
        return (
            f"not ({_pattern(negated)})"
            if isinstance(negated, list) and len(negated) > 1
            else f"not {_pattern(negated)}"
        )
    if isinstance(pattern, list):
        return "|".join(map(_pattern, pattern))
    return "absent" if pattern is None else short(pattern)


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
    return _formula(
        f"key by {by} ({spelled}; else {key})", read, [*map(ident, every), choice], write, ["value", choice]
    )


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
    unknown: dict[str, str] = {}  # {extension: template}: the framework's own names outside the enum
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
            raise UnknownValue(raw, [*pairs, *extra.extensions])  # a fork's name: the engine's one rule
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
