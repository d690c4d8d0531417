"""The grammar's shapes that stand for a formula: `fixed`, `flags`, `list` and `pick` each build a
read/write pair from the rule's data, so a recurring shape is a table line, not a formula class.
(`product` relates fields rather than keys: the engine solves it, engine/solve.py.)"""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable, NamedTuple

from ...core.report.kinds import reason as said
from ...core.report.kinds import short
from ..formula import Approx, Formula, Unexpressible, field_ident, ident, is_close, parameters


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
            [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY) for a in args])
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
            raise ValueError(f"unknown value {raw!r}; expected one of {', '.join(map(str, choices))}")
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
        return Approx({arg: near[0]}, said("picked_value", key=key, choice=near[0], means=means,
                                           wanted={f: wanted[f] for f in lost}), tuple(lost))  # fmt: skip

    return _formula(f"pick {key}", read, [arg], write, [field_ident(f) for f in fields])


def renamed(
    field: str, key: str, gate: dict[str, tuple[Any, ...]], off: list[Any], read_only: str, values: dict[Any, Any],
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
        if extra.base and value is not None:
            value = _power(key, extra.base, value)
        warning = next((why for framework, why in extra.warn.items() if raw is not None and same_value(raw, framework)), "")
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

    parts = [f"rename {key}"] + [f"read when {n} in {', '.join(map(str, v))}" for n, v in gate.items()]
    parts += [f"off {short(v)}" for v in off] + ["read only"] * bool(read_only)
    parts += [f"{short(a)} means {short(b)}" for a, b in values.items()]
    parts += [f"{short(v)} left out" for v in extra.omit] + [f"{short(v)} doubtful" for v in extra.warn]
    parts += [f"{extra.base}**key"] * bool(extra.base)
    parts += [f"absent: by {n}" for n in extra.by] + [f"absent: {extra.source}"] * bool(extra.source)
    parts += [f"{extra.over['key']} overrides" for _ in [extra.over] if extra.over]
    parts += [f"{short(v)} through {extra.over['key']}" for v in (extra.over or {}).get("through", {})]
    parts += [f"written with {extra.needs['field']}" for _ in [extra.needs] if extra.needs]
    writing = [f"with_{field_ident(extra.needs['field'])}"] if extra.needs else []
    return _formula("; ".join(parts), read, [arg, *gates, *extra.args()], write, ["value", *writing])


class Modifiers(NamedTuple):
    """A rename's further modifiers: `omit` (the canonical value the framework says by leaving the key
    out: an absent key reads as it, and it is written as no key), `warn_values` ({key value: why}: read or written, but approximately), `exponent_of`
    (the key is the exponent: the field is base ** key), `default_by` and `default_from` (an absent
    key's value depends on other fields: Cerebras' attention_dropout_rate), `overridden_by` (another
    key of the rule whose values decide the field whatever the key says: NeoX's mlp_type: llama, an
    MLP without biases; with `as_is` its every value decides, and `through` names values the key cannot
    pass on, written through the overriding key: NeoX's gradient_clipping 1.0) and `written_with` (the key is written only beside another field's value:
    NeoX refuses `save` without checkpoint_factor)."""

    omit: list[Any] = []
    warn: dict[Any, str] = {}
    base: int = 0
    by: dict[str, dict[Any, Any]] = {}  # default_by: {field: {its value: the key's default}}
    source: str = ""  # default_from: the field whose value an absent key has otherwise
    over: dict[str, Any] = {}  # overridden_by: {key, values: {its value: the field's} or as_is, reasons, keeps, unknown, through}
    needs: dict[str, Any] = {}  # written_with: {field, unless: [its values], reason}

    def args(self) -> list[str]:
        """The reading's arguments: the fields the defaults depend on, the overriding key."""
        return ([f"by_{field_ident(n)}" for n in self.by] + [f"from_{field_ident(self.source)}"] * bool(self.source)
                + ([ident(self.over["key"])] if self.over else []))  # fmt: skip


_NOT: Any = object()  # no override: the rule's key decides


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
        raise ValueError(over["unknown"].format(value=raw))
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
