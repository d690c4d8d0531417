"""Load a mapping table: read the YAML, start from the base table it extends, build and check every
rule, refuse keys claimed twice and dependency cycles, and order the rules for reading."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from ..catalogue import catalogue
from ...core.errors import InputError, MappingTableError
from ...io.yamlread import load as load_yaml
from ..source import load_families
from ..schema import load_history
from ..release_table import release_defaults, table_releases
from .build import build_rule
from .grammar import check_table
from .rules import Rule, Table


@lru_cache(maxsize=None)
def load_table(fmt: str) -> Table:
    """The table of a format, from mappings/<fmt>.yaml or the folder its spec names (loaded once)."""
    from ..registry import data_file

    return load_table_file(data_file("mappings", fmt, ".yaml"), fmt)


def load_table_file(path: Path, fmt: str | None = None) -> Table:
    """A table from any file (tests keep their own tables); `fmt`: the format it must declare."""
    name = path.name
    raw = _read(path)
    check_table(name, raw)
    if fmt is not None and raw.get("format") != fmt:
        raise MappingTableError(f"{name}: needs `format: {fmt}` and a `rules:` list")
    base = _base(path, raw)
    rules = [build_rule(name, i, r, str(raw["format"])) for i, r in enumerate(raw["rules"])]
    own_absent = _groups(name, dict(raw.get("absent") or {}), {f for r in rules for f in r.fields})
    if base is not None:
        rules = _extend(base, rules, own_absent)
    ruled = {f for r in rules for f in r.fields}  # an inherited `absent` holds where no rule here writes
    absent = {**{k: v for k, v in (base.absent if base else {}).items() if k not in ruled}, **own_absent}
    _check_claims(name, rules)
    unsupported = {**(base.unsupported if base else {}), **dict(raw.get("unsupported") or {})}
    for key in absent:
        if key not in catalogue():
            raise MappingTableError(f"{name}: absent: unknown canonical field {key!r}")
    for key in unsupported:
        if any(key in r.keys for r in rules):
            raise MappingTableError(f"{name}: key {key!r} is both mapped and listed as unsupported")
    history = load_history(str(raw["format"])) if fmt is not None else None  # a test table has none
    rules = [release_defaults(name, rule, history) for rule in rules]  # per-release defaults from the key history
    releases = table_releases(name, history, raw, base.versions if base else None)
    return Table(
        format=str(raw["format"]),
        title=str(raw.get("title", base.title if base else raw["format"])),
        **releases,  # versions (newest first) and the other release facts
        families=load_families(name, raw.get("families")) if "families" in raw else (base.families if base else None),
        rules=tuple(rules),
        read_order=_topological(name, rules),
        unsupported=unsupported,
        source_file=name,
        absent=absent,
        extension_reasons={**(base.extension_reasons if base else {}), **dict(raw.get("extension_reasons") or {})},
        order=tuple(raw.get("order") or (base.order if base else ())),
        lenient_types=bool(raw.get("lenient_types", base.lenient_types if base else False)),
        closed_enums=bool(raw.get("closed_enums", base.closed_enums if base else False)),
    )


def _groups(name: str, absent: dict[str, str], ruled: set[str]) -> dict[str, str]:
    """`absent: {optim.*: why}`: every catalogue field of the group that no rule of the table writes."""
    out: dict[str, str] = {}
    for key, why in absent.items():
        if key.endswith(".*"):
            group = [f for f in catalogue() if f.startswith(key[:-1]) and f not in ruled]
            if not group:
                raise MappingTableError(f"{name}: absent: {key!r} names no canonical field")
            out.update(dict.fromkeys(group, why))
        else:
            out[key] = why
    return out


def _read(path: Path) -> Any:
    try:
        return load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError, InputError) as exc:
        raise MappingTableError(f"{path.name}: cannot load: {exc}") from None


def _base(path: Path, raw: dict[str, Any]) -> Table | None:
    """The table `extends:` names, from the same folder (a chain of bases is allowed, a cycle not)."""
    parent = raw.get("extends")
    if parent is None:
        return None
    base_path = path.with_name(f"{parent}.yaml")
    if base_path == path:
        raise MappingTableError(f"{path.name}: a table cannot extend itself")
    if not base_path.is_file():
        raise MappingTableError(f"{path.name}: extends {parent!r}, but there is no {base_path.name} beside it")
    return load_table_file(base_path, parent)


def _extend(base: Table, rules: list[Rule], absent: dict[str, str]) -> list[Rule]:
    """The base's rules, each replaced by this table's rules for the same fields (in the base rule's
    place) or dropped when this table says the field is absent; this table's other rules follow."""
    mine: dict[tuple[str, ...], list[Rule]] = {}
    for rule in rules:
        mine.setdefault(rule.fields, []).append(rule)
    merged: list[Rule] = []
    placed: set[tuple[str, ...]] = set()
    for rule in base.rules:
        if rule.fields in mine:
            if rule.fields not in placed:
                merged.extend(mine[rule.fields])
                placed.add(rule.fields)
        elif not any(name in absent for name in rule.fields):
            merged.append(rule)
    merged.extend(rule for rule in rules if rule.fields not in placed)
    return merged


def _check_claims(name: str, rules: list[Rule]) -> None:
    claimed: dict[tuple[str, tuple[str, ...]], str] = {}
    for rule in rules:
        for key in rule.keys:
            # the same key may appear in rules for different layouts only
            slot = (key, rule.layouts)
            if slot in claimed:
                raise MappingTableError(f"{name}: key {key!r} is claimed by two rules ({claimed[slot]}, {rule.label})")
            claimed[slot] = rule.label


def _topological(table: str, rules: list[Rule]) -> tuple[Rule, ...]:
    """Order rules so that every formula runs after the rules producing its `with` fields. A product
    may give any of its factors: it runs after their own rules, and before any rule taking one of
    them. Two products sharing a factor (the batch's and the world size's data-parallel size) do not
    wait for each other: the engine solves the products it has reached together."""
    producers: dict[str, list[int]] = {}
    for i, rule in enumerate(rules):
        for name in (*rule.fields, *rule.product):
            producers.setdefault(name, []).append(i)
    order: list[int] = []
    state: dict[int, int] = {}  # 1 visiting, 2 done

    def visit(i: int, chain: tuple[str, ...]) -> None:
        if state.get(i) == 2:
            return
        if state.get(i) == 1:
            raise MappingTableError(f"{table}: rules depend on each other in a cycle: {' -> '.join(chain)}")
        state[i] = 1
        rule = rules[i]
        for dep in (*rule.read_deps, *rule.when):
            for j in producers.get(dep, []):
                if j != i:
                    visit(j, chain + (dep,))
        for dep in rule.product:
            for j in producers.get(dep, []):
                if j != i and (not rules[j].product or dep in rules[j].fields):
                    visit(j, chain + (dep,))
        state[i] = 2
        order.append(i)

    for i in range(len(rules)):
        visit(i, (rules[i].label,))
    return tuple(rules[i] for i in order)
