"""`product:` rules: a field equal to the product of others (global batch = micro x accumulation x
data-parallel size). Reading, the one value missing is solved for; values that disagree are bad
input. Writing, a factor the target derives at run time is lost when another value is unknown."""

from __future__ import annotations

import math
from typing import Any

from ..core.errors import InputError
from ..core.ir import IR, Origin, Value
from ..knowledge.mapping import Rule, Table
from ..core.report import Message
from ..knowledge.source import Source
from ..knowledge.formula import is_close
from ..core.report.kinds import short
from .writing import Carried


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
            raise _error(f"{_label(total, ir, table)} {short(values[total])} is not " + _times(factors, values, ir, table),
                         names, ir, source)  # fmt: skip
        return added
    missing = unknown[0]
    if missing == total:
        solved: Any = math.prod(values[f] for f in factors)
    else:
        others = [f for f in factors if f != missing]
        divisor = math.prod(values[f] for f in others)
        solved = _quotient(values[total], divisor)
        if solved is None:
            raise _error(f"cannot solve {missing}: {_label(total, ir, table)} {short(values[total])} is not a "
                         f"multiple of {_times(others, values, ir, table) or '1'}", names, ir, source)  # fmt: skip
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
    return InputError(message, file=source.file_of(key) if key else None, line=source.line_of(key) if key else None,
                      key=key, hint="make them agree")  # fmt: skip


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
                why: Message = ("derived_by_target", {"title": table.title, "field": name, "total": names[0],
                                                      "factors": list(names[1:]), "unknown": unknown})  # fmt: skip
                carried.setdefault(name, Carried()).lossy.append(why)
