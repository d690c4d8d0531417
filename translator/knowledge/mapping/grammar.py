"""The table grammar, read from its one definition: the meta-schema schemas/mapping.schema.json.

Attribute names, their types, which attributes exclude or need each other and the choice of one
transform all come from the meta-schema; this module checks a table's raw data against them with
messages that name the rule (jsonschema itself costs 100 ms to import: the tests run it instead,
over every table, so both readings of the meta-schema agree).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, NamedTuple

from ...core.errors import MappingTableError
from ...core.resources import data_dir

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
    "number": (int, float),
    "integer": (int,),
}


class Grammar(NamedTuple):
    """What the meta-schema says, in the form the loader asks for it."""

    table_attributes: frozenset[str]
    rule_attributes: frozenset[str]
    required: tuple[str, ...]  # table-level
    table_properties: dict[str, Any]
    rule_properties: dict[str, Any]
    exclusive: tuple[tuple[str, str], ...]  # pairs a rule may not give together
    transforms: tuple[str, ...]  # a rule gives at most one of these (none: a rename)
    needs: dict[str, tuple[str, ...]]  # attribute -> the attributes it needs


@lru_cache(maxsize=None)
def grammar() -> Grammar:
    meta = json.loads((data_dir("schemas") / "mapping.schema.json").read_text(encoding="utf-8"))
    rule = meta["$defs"]["rule"]
    branches = rule["oneOf"]
    return Grammar(
        table_attributes=frozenset(meta["properties"]),
        rule_attributes=frozenset(rule["properties"]),
        required=tuple(meta["required"]),
        table_properties=meta["properties"],
        rule_properties=rule["properties"],
        exclusive=tuple(tuple(part["not"]["required"]) for part in rule["allOf"]),  # type: ignore[misc]
        transforms=tuple(b["required"][0] for b in branches if "required" in b),
        needs={k: tuple(v) for k, v in rule["dependentRequired"].items()},
    )


def check_rule(table: str, where: str, raw: dict[str, Any]) -> None:
    """A rule's attributes, their types and their combinations, as the meta-schema defines them."""
    spec = grammar()
    unknown = set(raw) - spec.rule_attributes
    if unknown:
        raise _fail(table, where, f"unknown attributes {sorted(unknown)}; allowed: {sorted(spec.rule_attributes)}")
    for a, b in spec.exclusive:
        if a in raw and b in raw:
            raise _fail(table, where, f"give either {a} or {b}, not both")
    kinds = [k for k in spec.transforms if k in raw]
    if len(kinds) > 1:
        raise _fail(table, where, f"choose one transform, got {kinds}")
    for name, needed in spec.needs.items():
        if name in raw and any(n not in raw for n in needed):
            raise _fail(table, where, f"{name} needs {' and '.join(needed)}")
    for name, value in raw.items():
        problem = _mismatch(value, spec.rule_properties[name])
        if problem:
            raise _fail(table, where, f"{name}: {problem}")


def check_table(name: str, raw: Any) -> None:
    """The table's top-level entries (rules are checked one by one, with check_rule)."""
    spec = grammar()
    if not isinstance(raw, dict) or any(k not in raw for k in spec.required) or not isinstance(raw.get("rules"), list):
        raise MappingTableError(f"{name}: needs `format: <id>` and a `rules:` list")
    unknown = set(raw) - spec.table_attributes
    if unknown:
        raise MappingTableError(f"{name}: unknown top-level entries {sorted(unknown)}")
    for key, value in raw.items():
        if key != "rules":
            problem = _mismatch(value, spec.table_properties[key])
            if problem:
                raise MappingTableError(f"{name}: {key}: {problem}")


def _mismatch(value: Any, schema: dict[str, Any]) -> str:
    """What is wrong with a value under the meta-schema keywords it uses ("" when nothing)."""
    if "const" in schema and value != schema["const"]:
        return f"must be {json.dumps(schema['const'])}"
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else types
        if not any(_is(value, t) for t in names):
            return f"must be {' or '.join(names)}, not {type(value).__name__} {value!r:.60}"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return f"needs at least {schema['minItems']} items"
        items: dict[str, Any] = schema.get("items") or {}
        for item in value if items else ():
            problem = _mismatch(item, items)
            if problem:
                return f"item {item!r:.40}: {problem}"
    if isinstance(value, dict):
        if len(value) < schema.get("minProperties", 0):
            return f"needs at least {schema['minProperties']} entries"
        inner: dict[str, Any] = schema.get("additionalProperties") or {}
        for key, item in value.items() if isinstance(inner, dict) and inner else ():
            problem = _mismatch(item, inner)
            if problem:
                return f"{key}: {problem}"
    return ""


def _is(value: Any, json_type: str) -> bool:
    if json_type in ("number", "integer") and isinstance(value, bool):
        return False
    return isinstance(value, _JSON_TYPES[json_type])


def _fail(table: str, where: str, message: str) -> MappingTableError:
    return MappingTableError(f"{table}: {where}: {message}")


RULE_ATTRIBUTES = grammar().rule_attributes
