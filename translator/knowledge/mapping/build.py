"""One rule of a table, checked and typed: the grammar's attributes (grammar.py) first, then what
needs the catalogue or the formula registry (unknown fields, formula signatures), then the shapes
(shapes.py) built into the rule's transform."""

from __future__ import annotations

from typing import Any

from ..catalogue import catalogue
from ...core.errors import MappingTableError
from ..formula import FORMULAS, Formula, Simple, field_ident, ident
from . import shapes
from .grammar import check_rule
from .rules import NO_DEFAULT, Rule


def _fail(table: str, where: str, message: str) -> MappingTableError:
    return MappingTableError(f"{table}: {where}: {message}")


def _known_formula(name: Any) -> bool:
    try:
        FORMULAS[name]
    except (KeyError, TypeError):
        return False
    return True


def build_rule(table: str, index: int, raw: Any, fmt: str = "") -> Rule:
    where = f"rule {index + 1}"
    if not isinstance(raw, dict):
        raise _fail(table, where, "must be a mapping")
    check_rule(table, where, raw)
    fields = tuple(raw["fields"]) if "fields" in raw else ((raw["field"],) if raw.get("field") else ())
    where = f"rule for {', '.join(fields) or raw.get('key')}"
    known = catalogue()
    with_fields, write_only = _with_fields(table, where, raw, fields, known)
    key, also = raw.get("key"), tuple(raw.get("also", ()))
    if "product" in raw and len(fields) != 1:
        raise _fail(table, where, "a product rule maps one field: the product")
    shape = next(
        (s for s in ("fixed", "flags", "list", "pick", "same_as", "key_by", "follows", "cases") if s in raw), ""
    )
    formula: Formula | None = None
    simple: Simple | None = None
    if shape:
        key, also, formula = _shape(table, where, shape, raw, fields, fmt)
        if shape == "same_as":
            if with_fields or raw["same_as"]["field"] not in known:
                raise _fail(table, where, "same_as names one known canonical field (and no `with`)")
            with_fields = {f"same_{field_ident(raw['same_as']['field'])}": raw["same_as"]["field"]}
        if shape in ("key_by", "follows"):
            if with_fields or raw[shape]["field"] not in known:
                raise _fail(table, where, f"{shape} names one known canonical field (and no `with`)")
            with_fields = {f"by_{field_ident(raw[shape]['field'])}": raw[shape]["field"]}
    elif "formula" in raw:
        formula = FORMULAS[raw["formula"]] if _known_formula(raw["formula"]) else None
        if formula is None:
            raise _fail(table, where, f"unknown formula {raw['formula']!r}; known: {FORMULAS.every()}")
        _check_formula(table, where, formula, fields, key, also + tuple(raw.get("peek", ())), with_fields)
    elif "peek" in raw:
        raise _fail(table, where, "peek only makes sense for a formula")
    elif "enum" in raw and any(k in raw for k in _ENUM_MODIFIERS):
        formula, shape = _enum(table, where, raw, fields, also), "enum"
        with_fields.update({f"when_{field_ident(n)}": n for n in (raw.get("reads_as") or {}).get("when", {})})
    elif any(k in raw for k in _MODIFIERS):
        formula = _renamed(table, where, raw, fields, also)
        with_fields.update({f"gate_{ident(n)}": n for n in raw.get("read_when", {})})
        with_fields.update({f"by_{field_ident(n)}": n for n in raw.get("default_by", {})})
        if "default_from" in raw:
            with_fields[f"from_{field_ident(raw['default_from'])}"] = raw["default_from"]
        if "written_with" in raw:
            with_fields[f"with_{field_ident(raw['written_with']['field'])}"] = raw["written_with"]["field"]
    elif key is not None or any(k in raw for k in ("invert", "enum", "scale")):
        simple = _simple(table, where, raw, fields, also)  # (no key, no transform: a note, or a product alone)
    if not fields and "const" not in raw:
        raise _fail(table, where, "a rule without a field must be a const rule")
    when = _when(table, where, raw, known)
    defaults = dict(raw.get("defaults", {}))
    default = raw.get("default", NO_DEFAULT)
    if shape in ("flags", "list") and key in defaults:  # the shape's first key is the rule's key
        default = defaults.pop(key)
    return Rule(
        fields=fields,
        key=key,
        also=also,
        with_fields=with_fields,
        write_only=write_only,
        formula=formula,
        simple=simple,
        default=default,
        defaults=defaults,
        version_defaults=dict(raw.get("version_defaults", {})),
        when=when,
        required=bool(raw.get("required", False)),
        hint=str(raw.get("hint", "")),
        always=bool(raw.get("always", False)),
        derived=bool(raw.get("derived", False)),
        lossy=str(raw.get("lossy", "")),
        note=str(raw.get("note", raw.get("fixed_reason", ""))),
        const=raw.get("const", NO_DEFAULT),
        layouts=tuple(raw.get("layouts", ())),
        versions=tuple(raw.get("versions", ())),
        peek=tuple(raw.get("peek", ())),
        product=tuple(raw.get("product", ())),
        fill=tuple((raw.get("fill") or {}).items()),
        shape=shape,
    )


def _with_fields(
    table: str, where: str, raw: dict[str, Any], fields: tuple[str, ...], known: Any
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The fields a rule names beside its own (`with`, `write_with`, a product's factors), each a known one."""
    for name in fields:
        if name not in known:
            raise _fail(table, where, f"unknown canonical field {name!r} (add it to schemas/canonical.yaml)")
    with_raw = raw.get("with", [])
    with_fields = dict(with_raw) if isinstance(with_raw, dict) else {field_ident(n): n for n in with_raw}
    write_only = tuple(n for n in raw.get("write_with", ()) if field_ident(n) not in with_fields)
    with_fields.update({field_ident(n): n for n in write_only})  # the write function's too: ordering nothing
    for part, names in (
        ("with", with_fields.values()),
        ("product", raw.get("product", ())),
        ("fill", raw.get("fill", {})),
    ):
        for name in names:
            if name not in known:
                raise _fail(table, where, f"unknown canonical field {name!r} in {part}")
    if any(name not in raw.get("product", ()) for name in raw.get("fill", {})):
        raise _fail(table, where, "fill names factors of the product")
    return with_fields, write_only


def _when(table: str, where: str, raw: dict[str, Any], known: Any) -> dict[str, tuple[Any, ...]]:
    """The fields whose values a rule applies under (`when`), each a known one."""
    when = {name: tuple(v if isinstance(v, list) else [v]) for name, v in (raw.get("when") or {}).items()}
    for name in when:
        if name not in known:
            raise _fail(table, where, f"unknown canonical field {name!r} in when")
    return when


_ENUM_MODIFIERS = ("warn_values", "unknown", "nearest", "unwritable", "reads_as", "extensions", "types")
_MODIFIERS = (
    "read_when",
    "off_value",
    "read_only",
    "values",
    "omit",
    "warn_values",
    "exponent_of",
    "default_by",
    "default_from",
    "overridden_by",
    "written_with",
    "at_least",
)


def _renamed(table: str, where: str, raw: dict[str, Any], fields: tuple[str, ...], also: tuple[str, ...]) -> Formula:
    """A rename with `read_when`, `off_value`, `read_only`, `values`, `omit`, `warn_values`,
    `exponent_of`, `default_by`, `default_from`, `overridden_by`, `written_with` or `at_least` (shapes.renamed)."""
    over = dict(raw.get("overridden_by") or {})
    if (
        len(fields) != 1
        or also != ((over["key"],) if over else ())
        or not raw.get("key")
        or any(k in raw for k in ("invert", "enum", "scale", "with"))
    ):
        raise _fail(
            table,
            where,
            f"{', '.join(k for k in _MODIFIERS if k in raw)} modifies a rename: one key, one "
            "field (and overridden_by's key as its one `also`)",
        )
    if over and ("values" in over) == bool(over.get("as_is")):
        raise _fail(
            table,
            where,
            "overridden_by gives values (what its key's values decide) or as_is: true (each decides, as it is)",
        )
    if "written_with" in raw and raw["written_with"]["field"] not in catalogue():
        raise _fail(table, where, f"unknown canonical field {raw['written_with']['field']!r} in written_with")
    gate = {name: tuple(v if isinstance(v, list) else [v]) for name, v in (raw.get("read_when") or {}).items()}
    if any(name not in catalogue() for name in gate):
        raise _fail(table, where, f"unknown canonical field in read_when: {sorted(gate)}")
    off = [raw["off_value"]] if "off_value" in raw else []
    if "exponent_of" in raw and (raw["exponent_of"] < 2 or any(k in raw for k in ("values", "off_value"))):
        raise _fail(table, where, "exponent_of is a base of 2 or more, on a rename without values or off_value")
    by = {name: dict(picks) for name, picks in (raw.get("default_by") or {}).items()}
    if any(name not in catalogue() for name in (*by, *[raw.get("default_from")] * ("default_from" in raw))):
        raise _fail(table, where, "default_by and default_from name known canonical fields")
    if any(k in raw for k in ("default_by", "default_from")) and any(k in raw for k in ("default", "omit")):
        raise _fail(table, where, "an absent key's value comes from default_by / default_from, or from default or omit")
    more = shapes.Modifiers(
        [raw["omit"]] if "omit" in raw else [],
        dict(raw.get("warn_values") or {}),
        int(raw.get("exponent_of", 0)),
        by,
        str(raw.get("default_from", "")),
        over,
        dict(raw.get("written_with") or {}),
        raw.get("at_least"),
    )
    values = dict(raw.get("values") or {})
    return shapes.renamed(fields[0], raw["key"], gate, off, str(raw.get("read_only", "")), values, more)


def _enum(table: str, where: str, raw: dict[str, Any], fields: tuple[str, ...], also: tuple[str, ...]) -> Formula:
    """An enum with `warn_values`, `unknown`, `nearest` or `unwritable` (shapes.enum)."""
    if len(fields) != 1 or also or not raw.get("key") or "with" in raw:
        raise _fail(
            table, where, "an enum's modifiers modify one key, one field (reads_as names the fields it looks at)"
        )
    pairs = dict(raw["enum"])
    if any(name not in pairs for name in raw.get("warn_values", {})):
        raise _fail(table, where, "warn_values names values of the enum")
    if set(raw.get("types") or {}) - {"null", "list"}:
        raise _fail(table, where, "types names null or list")
    if "null" in (raw.get("types") or {}) and "default" not in raw:
        raise _fail(table, where, "types' null needs the rule's default (without one an absent key reads as null too)")
    if any(len(what) > 1 for what in (raw.get("unknown") or {}, *(raw.get("types") or {}).values())):
        raise _fail(table, where, "unknown and each of types is {error: message} or {extension: reason}, not both")
    if bool(raw.get("nearest")) != bool(raw.get("nearest_reason")):
        raise _fail(table, where, "nearest and nearest_reason go together")
    reads = raw.get("reads_as") or {}
    when = {name: tuple(v if isinstance(v, list) else [v]) for name, v in (reads.get("when") or {}).items()}
    if any(name not in catalogue() for name in when):
        raise _fail(table, where, f"unknown canonical field in reads_as: {sorted(when)}")
    why = raw.get("nearest_reason", "")
    more = shapes.EnumModifiers(
        dict(raw.get("warn_values") or {}),
        dict(raw.get("unknown") or {}),
        dict(raw.get("nearest") or {}),
        dict(why) if isinstance(why, dict) else str(why),
        dict(raw.get("unwritable") or {}),
        dict(reads.get("values") or {}),
        when,
        dict(raw.get("extensions") or {}),
        {kind: dict(what) for kind, what in (raw.get("types") or {}).items()},
    )
    return shapes.enum(fields[0], raw["key"], pairs, bool(raw.get("case_insensitive")), more)


def _simple(table: str, where: str, raw: dict[str, Any], fields: tuple[str, ...], also: tuple[str, ...]) -> Simple:
    """A rename, inversion, enum map or scaling: one key, one field."""
    if len(fields) > 1 or also:
        raise _fail(table, where, "several fields or keys need a formula")
    if "invert" in raw:
        return Simple("invert")
    if "enum" in raw:
        pairs = tuple((k, v) for k, v in raw["enum"].items())
        return Simple("enum", table=pairs, case_insensitive=bool(raw.get("case_insensitive")))
    if "scale" in raw:
        return Simple("scale", factor=float(raw["scale"]))
    return Simple("rename")


def _shape(
    table: str, where: str, shape: str, raw: dict[str, Any], fields: tuple[str, ...], fmt: str = ""
) -> tuple[str | None, tuple[str, ...], Formula]:
    """(key, also, formula) of a rule written in one of the grammar's shapes."""
    if shape == "pick":
        key = raw["key"]
        if set(raw["pick"]) != set(fields) or len(fields) < 2:
            raise _fail(
                table, where, f"pick gives each of the rule's fields (two or more) its value: got {sorted(raw['pick'])}"
            )
        tables = [dict(p) for p in raw["pick"].values() if isinstance(p, dict)]
        if any(p != "value" for p in raw["pick"].values() if not isinstance(p, dict)):
            raise _fail(table, where, "a pick is a mapping {framework value: field value} or `value`")
        if any(list(t) != list(tables[0]) for t in tables):
            raise _fail(table, where, "every pick mapping lists the same framework values, in the same order")
        return key, tuple(raw.get("also", ())), shapes.pick(fields, key, raw["pick"])
    if shape == "cases":  # (the meta-schema requires its key, null for a rule that only peeks; one field or several)
        also = tuple(raw.get("also", ()))
        decided_by = (raw["key"], *also) if raw["key"] else also
        made = shapes.cases(
            fmt, fields, decided_by, raw["cases"], lambda m: _fail(table, where, m), tuple(raw.get("peek", ()))
        )
        return raw["key"], also, made
    if len(fields) != 1:
        raise _fail(table, where, f"{shape} maps one field")
    if shape == "same_as":
        same = raw["same_as"]
        made = shapes.same_as(
            fields[0], same["field"], same["reason"], same.get("otherwise"), bool(same.get("implied"))
        )
        return None, (), made
    if shape == "follows":
        made = raw["follows"]
        return (
            None,
            (),
            shapes.follows(fields[0], made["field"], dict(made["values"]), made["otherwise"], dict(made["reasons"])),
        )
    if shape == "key_by":
        by, also = raw["key_by"], tuple(raw.get("also", ()))
        if not raw.get("key") or set(by["keys"].values()) - set(also):
            raise _fail(
                table, where, "key_by chooses among the rule's keys: `key` for other values, the rest in `also`"
            )
        return raw["key"], also, shapes.key_by(fields[0], raw["key"], by["field"], dict(by["keys"]))
    if shape == "fixed":
        if "fixed_reason" not in raw:
            raise _fail(table, where, "fixed needs fixed_reason: where the framework hard-codes the value")
        return None, (), shapes.fixed(fields[0], raw["fixed"], raw["fixed_reason"], str(raw.get("fixed_loss", "")))
    keys = list(raw[shape])
    formula = (
        shapes.flags(fields[0], raw["flags"], raw.get("otherwise"))
        if shape == "flags"
        else shapes.items(fields[0], keys)
    )
    return keys[0], tuple(keys[1:]), formula


def _check_formula(
    table: str,
    where: str,
    formula: Formula,
    fields: tuple[str, ...],
    key: str | None,
    also: tuple[str, ...],
    with_fields: dict[str, str],
) -> None:
    key_idents = {ident(k) for k in ((key,) if key else ()) + also}
    expected_read = key_idents | set(with_fields)
    if len(key_idents) + len(with_fields) != len(expected_read):
        raise _fail(table, where, "a key and a with-field share a name; alias the field with with: {alias: field}")
    params = formula.read_params() - {"version"}  # a reading may depend on the documented version
    if not key_idents <= params or not params <= expected_read:
        raise _fail(
            table,
            where,
            f"formula {formula.name} reads {sorted(formula.read_params())} but the rule gives {sorted(expected_read)}",
        )
    value_names = {"value"} | ({field_ident(f) for f in fields} if len(fields) > 1 else set())  # value: the first
    expected_write = value_names | set(with_fields)
    if formula.write_params() - expected_write - {"version"}:  # a writing may depend on the target release
        raise _fail(
            table,
            where,
            f"formula {formula.name} writes from {sorted(formula.write_params())}, rule gives {sorted(expected_write)}",
        )
