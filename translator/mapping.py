"""Load and validate mapping tables (mappings/<format>.yaml) into typed rules.

A typo in a table is a MappingTableError at load time, never a silent no-op: unknown rule
attributes, unknown canonical fields, unknown formulas, formula signatures that do not match
the declared keys, keys claimed twice and dependency cycles are all refused.
The grammar is documented in the header of mappings/neox.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any

import yaml

from .catalogue import catalogue
from .errors import InputError, MappingTableError
from .resources import data_dir
from .formula import FORMULAS, Formula, Simple, field_ident, ident
from .families import Families, load_families
from .history import load_history
from .release_table import RELEASE_ENTRIES, ReleaseFacts, release_defaults, table_releases
from .yamlread import load as load_yaml

_NO_DEFAULT = object()

RULE_ATTRIBUTES = frozenset(
    {
        "field", "fields", "key", "also", "with", "formula", "invert", "enum", "scale",
        "case_insensitive", "default", "defaults", "version_defaults", "when", "required",
        "hint", "always", "derived", "versions", "peek", "lossy", "note", "const", "layouts",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Rule:
    fields: tuple[str, ...]
    key: str | None
    also: tuple[str, ...] = ()
    with_fields: dict[str, str] = field(default_factory=dict)  # ident -> canonical field
    formula: Formula | None = None
    simple: Simple | None = None
    default: Any = _NO_DEFAULT
    defaults: dict[str, Any] = field(default_factory=dict)
    version_defaults: dict[str, Any] = field(default_factory=dict)
    when: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    required: bool = False
    hint: str = ""
    always: bool = False
    derived: bool = False
    lossy: str = ""
    note: str = ""
    const: Any = _NO_DEFAULT
    layouts: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()  # write this rule only for these target versions (all when empty)
    peek: tuple[str, ...] = ()  # keys a formula reads without owning them (another rule reports them)

    # computed once: the engine asks these of every rule for every file
    @cached_property
    def keys(self) -> tuple[str, ...]:
        return ((self.key,) if self.key else ()) + self.also

    @property
    def label(self) -> str:
        return self.key or ", ".join(self.fields) or "(constant)"

    def has_default(self, version: str | None = None) -> bool:
        return self.default is not _NO_DEFAULT or (version in self.version_defaults)

    def default_for(self, version: str | None = None) -> Any:
        if version in self.version_defaults:
            return self.version_defaults[version]
        return None if self.default is _NO_DEFAULT else self.default

    def key_default(self, key: str, version: str | None = None) -> Any:
        if key == self.key:
            return self.default_for(version)
        return self.defaults.get(key)

    def applies(self, values: dict[str, Any]) -> bool:
        return all(values.get(name) in allowed for name, allowed in self.when.items())

    @cached_property
    def is_const(self) -> bool:
        return self.const is not _NO_DEFAULT

    @cached_property
    def read_args(self) -> tuple[tuple[str, str], ...]:
        """(formula argument, framework key) for the rule's own keys."""
        return tuple((ident(k), k) for k in self.keys)

    @cached_property
    def read_with(self) -> tuple[tuple[str, str], ...]:
        """(formula argument, canonical field) for the `with` fields its read function takes."""
        wanted = self.formula.read_params() if self.formula else frozenset()
        return tuple((alias, name) for alias, name in self.with_fields.items() if alias in wanted)

    @cached_property
    def write_args(self) -> tuple[tuple[str, str], ...]:
        """(formula argument, canonical field) its write function takes: `value`, fields, `with` fields."""
        if self.formula is None:
            return ()
        params = self.formula.write_params()
        args = [("value", self.fields[0])] if "value" in params else []
        args += [(field_ident(name), name) for name in self.fields if field_ident(name) in params]
        args += [(alias, name) for alias, name in self.with_fields.items() if alias in params]
        return tuple(args)

    def write_kwargs(self, ir: Any, version: str) -> dict[str, Any]:
        """A formula's write arguments; `version` (the target release) when it spells keys by release."""
        kwargs = {arg: ir.get(name) for arg, name in self.write_args}
        if self.formula is not None and "version" in self.formula.write_params():
            kwargs["version"] = version
        return kwargs

    @cached_property
    def key_by_ident(self) -> dict[str, str]:
        return {ident(k): k for k in self.keys}

    @cached_property
    def pure(self) -> bool:
        """Reads only its own keys: with none of them in a file, its reading is the same for every file."""
        return not self.peek and not self.with_fields and not self.is_const


@dataclass(frozen=True)
class Table:
    format: str
    title: str
    versions: tuple[str, ...]
    rules: tuple[Rule, ...]  # in table order: the order in which a writer emits keys
    read_order: tuple[Rule, ...]  # dependency order: `with` fields are read first
    unsupported: dict[str, str]
    source_file: str
    absent: dict[str, str] = field(default_factory=dict)
    extension_reasons: dict[str, str] = field(default_factory=dict)
    order: tuple[str, ...] = ()
    lenient_types: bool = False  # unmapped keys may not match the documented type (the docs are loose)
    releases: ReleaseFacts = field(default_factory=ReleaseFacts)  # aliases, older spellings, ... (release_table.py)
    families: Families | None = None  # model families the canonical fields do not cover (families.py)

    def rules_for_field(self, name: str) -> list[Rule]:
        return self._by_field.get(name, [])

    def rules_reading(self, name: str) -> list[Rule]:
        """Rules that take canonical field `name` as a `with` input."""
        return self._by_input.get(name, [])

    @cached_property
    def _by_input(self) -> dict[str, list[Rule]]:
        index: dict[str, list[Rule]] = {}
        for rule in self.rules:
            for name in dict.fromkeys(rule.with_fields.values()):
                index.setdefault(name, []).append(rule)
        return index

    @cached_property
    def _by_field(self) -> dict[str, list[Rule]]:
        index: dict[str, list[Rule]] = {}
        for rule in self.rules:
            for name in rule.fields:
                index.setdefault(name, []).append(rule)
        return index

    def key_owner(self) -> dict[str, Rule]:
        return {k: r for r in self.rules for k in r.keys}

    def for_layout(self, layout: str | None) -> "Table":
        """The rules of one layout; one Table per layout, made once (callers key caches by table)."""
        if layout is None:
            return self
        made = self._layouts.get(layout)
        if made is None:
            made = self._layouts[layout] = self._keep_layout(layout)
        return made

    @cached_property
    def read_rank(self) -> dict[int, int]:
        """rule id -> its place in read_order (dependencies first)."""
        return {id(rule): i for i, rule in enumerate(self.read_order)}

    @cached_property
    def default_reads(self) -> dict[tuple[int, str], list[tuple[str, Any, str | None]]]:
        """(rule id, version) -> what the rule reads when the file has none of its keys (engine cache)."""
        return {}

    @cached_property
    def value_reads(self) -> dict[tuple[Any, ...], Any]:
        """(rule id, version, its keys' values) -> what the rule read from them (engine cache)."""
        return {}

    @cached_property
    def leaf_kinds(self) -> dict[tuple[int, str], tuple[str, str]]:
        """(schema id, leaf) -> what a leaf no rule owns is (engine cache)."""
        return {}

    @cached_property
    def _layouts(self) -> dict[str, "Table"]:
        return {}

    def _keep_layout(self, layout: str) -> "Table":
        def keep(rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
            return tuple(r for r in rules if not r.layouts or layout in r.layouts)

        return replace(self, rules=keep(self.rules), read_order=keep(self.read_order))


def _known_formula(name: Any) -> bool:
    try:
        FORMULAS[name]
    except (KeyError, TypeError):
        return False
    return True


def _fail(table: str, where: str, message: str) -> MappingTableError:
    return MappingTableError(f"{table}: {where}: {message}")


def _build_rule(table: str, index: int, raw: Any) -> Rule:
    where = f"rule {index + 1}"
    if not isinstance(raw, dict):
        raise _fail(table, where, "must be a mapping")
    unknown = set(raw) - RULE_ATTRIBUTES
    if unknown:
        raise _fail(table, where, f"unknown attributes {sorted(unknown)}; allowed: {sorted(RULE_ATTRIBUTES)}")
    if "field" in raw and "fields" in raw:
        raise _fail(table, where, "give either field or fields, not both")
    fields = tuple(raw["fields"]) if "fields" in raw else ((raw["field"],) if raw.get("field") else ())
    where = f"rule for {', '.join(fields) or raw.get('key')}"
    known = catalogue()
    for name in fields:
        if name not in known:
            raise _fail(table, where, f"unknown canonical field {name!r} (add it to schemas/canonical.yaml)")
    with_raw = raw.get("with", [])
    with_fields = dict(with_raw) if isinstance(with_raw, dict) else {field_ident(n): n for n in with_raw}
    for name in with_fields.values():
        if name not in known:
            raise _fail(table, where, f"unknown canonical field {name!r} in with")
    kinds = [k for k in ("formula", "invert", "enum", "scale") if k in raw]
    if len(kinds) > 1:
        raise _fail(table, where, f"choose one transform, got {kinds}")
    simple: Simple | None = None
    formula: Formula | None = None
    key = raw.get("key")
    also = tuple(raw.get("also", ()))
    if "formula" in raw:
        formula = FORMULAS[raw["formula"]] if _known_formula(raw["formula"]) else None
        if formula is None:
            raise _fail(table, where, f"unknown formula {raw['formula']!r}; known: {FORMULAS.every()}")
        _check_formula(table, where, formula, fields, key, also + tuple(raw.get("peek", ())), with_fields)
    elif "peek" in raw:
        raise _fail(table, where, "peek only makes sense for a formula")
    else:
        if len(fields) > 1 or also:
            raise _fail(table, where, "several fields or keys need a formula")
        if "invert" in raw:
            simple = Simple("invert")
        elif "enum" in raw:
            pairs = tuple((k, v) for k, v in raw["enum"].items())
            simple = Simple("enum", table=pairs, case_insensitive=bool(raw.get("case_insensitive")))
        elif "scale" in raw:
            simple = Simple("scale", factor=float(raw["scale"]))
        else:
            simple = Simple("rename")
    if not fields and "const" not in raw:
        raise _fail(table, where, "a rule without a field must be a const rule")
    when = {name: tuple(v if isinstance(v, list) else [v]) for name, v in (raw.get("when") or {}).items()}
    for name in when:
        if name not in known:
            raise _fail(table, where, f"unknown canonical field {name!r} in when")
    return Rule(
        fields=fields,
        key=key,
        also=also,
        with_fields=with_fields,
        formula=formula,
        simple=simple,
        default=raw.get("default", _NO_DEFAULT),
        defaults=dict(raw.get("defaults", {})),
        version_defaults=dict(raw.get("version_defaults", {})),
        when=when,
        required=bool(raw.get("required", False)),
        hint=str(raw.get("hint", "")),
        always=bool(raw.get("always", False)),
        derived=bool(raw.get("derived", False)),
        lossy=str(raw.get("lossy", "")),
        note=str(raw.get("note", "")),
        const=raw.get("const", _NO_DEFAULT),
        layouts=tuple(raw.get("layouts", ())),
        versions=tuple(raw.get("versions", ())),
        peek=tuple(raw.get("peek", ())),
    )


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
            table, where,
            f"formula {formula.name} reads {sorted(formula.read_params())} but the rule gives {sorted(expected_read)}",
        )  # fmt: skip
    value_names = {"value"} if len(fields) == 1 else {field_ident(f) for f in fields}
    expected_write = value_names | set(with_fields)
    if formula.write_params() - expected_write - {"version"}:  # a writing may depend on the target release
        raise _fail(
            table, where,
            f"formula {formula.name} writes from {sorted(formula.write_params())}, rule gives {sorted(expected_write)}",
        )  # fmt: skip


def _topological(table: str, rules: list[Rule]) -> tuple[Rule, ...]:
    """Order rules so that every formula runs after the rules producing its `with` fields."""
    producers: dict[str, list[int]] = {}
    for i, rule in enumerate(rules):
        for name in rule.fields:
            producers.setdefault(name, []).append(i)
    order: list[int] = []
    state: dict[int, int] = {}  # 1 visiting, 2 done

    def visit(i: int, chain: tuple[str, ...]) -> None:
        if state.get(i) == 2:
            return
        if state.get(i) == 1:
            raise MappingTableError(f"{table}: rules depend on each other in a cycle: {' -> '.join(chain)}")
        state[i] = 1
        for dep in (*rules[i].with_fields.values(), *rules[i].when):
            for j in producers.get(dep, []):
                if j != i:
                    visit(j, chain + (dep,))
        state[i] = 2
        order.append(i)

    for i in range(len(rules)):
        visit(i, (rules[i].label,))
    return tuple(rules[i] for i in order)


@lru_cache(maxsize=None)
def load_table(fmt: str) -> Table:
    path = data_dir("mappings") / f"{fmt}.yaml"
    name = path.name
    try:
        raw = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, InputError) as exc:
        raise MappingTableError(f"{name}: cannot load: {exc}") from None
    if not isinstance(raw, dict) or raw.get("format") != fmt or not isinstance(raw.get("rules"), list):
        raise MappingTableError(f"{name}: needs `format: {fmt}` and a `rules:` list")
    rules = [_build_rule(name, i, r) for i, r in enumerate(raw["rules"])]
    claimed: dict[tuple[str, tuple[str, ...]], str] = {}
    for rule in rules:
        for key in rule.keys:
            # the same key may appear in rules for different layouts only
            slot = (key, rule.layouts)
            if slot in claimed:
                raise MappingTableError(f"{name}: key {key!r} is claimed by two rules ({claimed[slot]}, {rule.label})")
            claimed[slot] = rule.label
    allowed = {"format", "title", "rules", "unsupported", "absent", "extension_reasons", "order", "lenient_types",
               "families", *RELEASE_ENTRIES}  # fmt: skip
    if set(raw) - allowed:
        raise MappingTableError(f"{name}: unknown top-level entries {sorted(set(raw) - allowed)}")
    unsupported = dict(raw.get("unsupported") or {})
    absent = dict(raw.get("absent") or {})
    for key in absent:
        if key not in catalogue():
            raise MappingTableError(f"{name}: absent: unknown canonical field {key!r}")
    for key in unsupported:
        if any(key in r.keys for r in rules):
            raise MappingTableError(f"{name}: key {key!r} is both mapped and listed as unsupported")
    history = load_history(fmt)
    rules = [release_defaults(name, rule, history) for rule in rules]  # from the key history
    return Table(
        format=fmt,
        title=str(raw.get("title", fmt)),
        **table_releases(name, history, raw),  # versions (newest first) and the other release facts
        families=load_families(name, raw.get("families")),
        rules=tuple(rules),
        read_order=_topological(name, rules),
        unsupported=unsupported,
        source_file=name,
        absent=absent,
        extension_reasons=dict(raw.get("extension_reasons") or {}),
        order=tuple(raw.get("order") or ()),
        lenient_types=bool(raw.get("lenient_types", False)),
    )
