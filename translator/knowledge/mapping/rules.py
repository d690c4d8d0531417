"""Typed rules and tables: what the engine reads and writes by."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from ..source import Families
from ..formula import Formula, Simple, field_ident, ident
from ..release_table import ReleaseFacts

NO_DEFAULT: Any = object()


@dataclass(frozen=True)
class Rule:
    fields: tuple[str, ...]
    key: str | None
    also: tuple[str, ...] = ()
    with_fields: dict[str, str] = field(default_factory=dict)  # ident -> canonical field
    write_only: tuple[str, ...] = ()  # with fields only the write function takes (`write_with`)
    formula: Formula | None = None
    simple: Simple | None = None
    default: Any = NO_DEFAULT
    defaults: dict[str, Any] = field(default_factory=dict)
    version_defaults: dict[str, Any] = field(default_factory=dict)
    when: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    required: bool = False
    hint: str = ""
    always: bool = False
    derived: bool = False
    lossy: str = ""
    note: str = ""
    const: Any = NO_DEFAULT
    layouts: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()  # write this rule only for these target versions (all when empty)
    peek: tuple[str, ...] = ()  # keys a formula reads without owning them (another rule reports them)
    product: tuple[str, ...] = ()  # the field is the product of these (the engine solves the one missing)
    fill: tuple[tuple[str, Any], ...] = ()  # (factor, value) taken while the product has more than one unknown
    shape: str = ""  # the grammar shape the rule was written in (fixed, flags, list, pick), for explain

    # computed once: the engine asks these of every rule for every file
    @cached_property
    def keys(self) -> tuple[str, ...]:
        return ((self.key,) if self.key else ()) + self.also

    @property
    def label(self) -> str:
        return self.key or ", ".join(self.fields) or "(constant)"

    def has_default(self, version: str | None = None) -> bool:
        return self.default is not NO_DEFAULT or (version in self.version_defaults)

    def default_for(self, version: str | None = None) -> Any:
        if version in self.version_defaults:
            return self.version_defaults[version]
        return None if self.default is NO_DEFAULT else self.default

    def key_default(self, key: str, version: str | None = None) -> Any:
        if key == self.key:
            return self.default_for(version)
        return self.defaults.get(key)

    def applies(self, values: dict[str, Any]) -> bool:
        return all(values.get(name) in allowed for name, allowed in self.when.items())

    @cached_property
    def is_const(self) -> bool:
        return self.const is not NO_DEFAULT

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
    def read_deps(self) -> tuple[str, ...]:
        """The `with` fields reading the rule depends on (what orders the rules and what a value is derived
        from): all but `write_with`'s, which only its write function takes (HF's class chosen by the blocks)."""
        return tuple(name for name in self.with_fields.values() if name not in self.write_only)

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
    def writes(self) -> dict[tuple[Any, ...], Any]:
        """(its formula's arguments' values) -> the keys it wrote from them (engine cache)."""
        return {}

    @cached_property
    def key_by_ident(self) -> dict[str, str]:
        return {ident(k): k for k in self.keys}

    @cached_property
    def pure(self) -> bool:
        """Reads only its own keys: with none of them in a file, its reading is the same for every file."""
        return not self.peek and not self.with_fields and not self.is_const and not self.product


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
    closed_enums: bool = False  # the schema's enums are the framework's own choices (a value outside: a fork's)
    releases: ReleaseFacts = field(default_factory=ReleaseFacts)  # aliases, older spellings, ... (release_table.py)
    families: Families | None = None  # model families the canonical fields do not cover (knowledge/source.py)

    def rules_for_field(self, name: str) -> list[Rule]:
        return self._by_field.get(name, [])

    def rules_reading(self, name: str) -> list[Rule]:
        """Rules that take canonical field `name` as a `with` input (or as a factor of their product)."""
        return self._by_input.get(name, [])

    @cached_property
    def _by_input(self) -> dict[str, list[Rule]]:
        index: dict[str, list[Rule]] = {}
        for rule in self.rules:
            for name in dict.fromkeys((*rule.read_deps, *rule.product)):
                index.setdefault(name, []).append(rule)
        return index

    @cached_property
    def _by_field(self) -> dict[str, list[Rule]]:
        index: dict[str, list[Rule]] = {}
        for rule in self.rules:
            for name in rule.fields:
                index.setdefault(name, []).append(rule)
        return index

    @cached_property
    def products(self) -> tuple[Rule, ...]:
        """Rules declaring a product (the engine checks on writing that the target can solve it)."""
        return tuple(rule for rule in self.rules if rule.product)

    @cached_property
    def held(self) -> frozenset[str]:
        """The fields a rule writes or works out from a product it holds (DeepSpeed's data-parallel
        size from its batch sizes: not lost for want of a key)."""
        return frozenset(self._by_field) | {name for rule in self.products for name in rule.product}

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
    def leaf_kinds(self) -> dict[tuple[int, str], tuple[str, Any]]:
        """(schema id, leaf) -> what a leaf no rule owns is (engine cache)."""
        return {}

    @cached_property
    def _layouts(self) -> dict[str, "Table"]:
        return {}

    def _keep_layout(self, layout: str) -> "Table":
        def keep(rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
            return tuple(r for r in rules if not r.layouts or layout in r.layouts)

        return replace(self, rules=keep(self.rules), read_order=keep(self.read_order))
