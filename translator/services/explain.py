"""`neoconv explain`: what a canonical field or framework key means, generated from the tables."""

from __future__ import annotations

import difflib
import json
from typing import Any

from ..knowledge.catalogue import catalogue
from ..core.errors import UsageError
from ..knowledge.release_table import default_runs
from ..knowledge.mapping import Rule, load_table
from ..knowledge.registry import FORMATS


def _describe(rule: Rule, labels: tuple[str, ...] = ()) -> dict[str, Any]:
    if rule.formula is not None:
        transform = f"formula {rule.formula.name}"
    elif rule.simple is not None:
        transform = (
            rule.simple.kind
            if rule.simple.kind != "enum"
            else "enum " + ", ".join(f"{a}={b}" for a, b in rule.simple.table)
        )
    else:
        transform = "rename"
    out: dict[str, Any] = {"key": rule.key, "also": list(rule.also), "transform": transform}
    if rule.has_default():
        out["default"] = rule.default_for()
    if rule.version_defaults:  # the releases whose default differs, as runs: {"2021-04-26..2023-12-22": 0.1}
        runs = default_runs(labels, rule.version_defaults)
        out["version_defaults"] = {(a if a == b else f"{a}..{b}"): value for a, b, value in runs}
    if rule.when:
        out["when"] = {k: list(v) for k, v in rule.when.items()}
    if rule.note:
        out["note"] = rule.note
    return out


def explain_data(name: str) -> dict[str, Any]:
    fields = catalogue()
    if ":" in name:
        fmt, key = name.split(":", 1)
        if fmt not in FORMATS:
            raise UsageError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
        return _explain_key(fmt, key)
    if name not in fields:
        close = difflib.get_close_matches(name, list(fields), n=1)
        raise UsageError(f"{name!r} is not a canonical field" + (f"; did you mean {close[0]}?" if close else ""))
    spec = fields[name]
    per_format: dict[str, Any] = {}
    written_as = spec.summary_of or name  # a summary is written (and read) through what it summarises
    for fmt in FORMATS:
        table = load_table(fmt)
        rules = table.rules_for_field(written_as)
        if rules:
            per_format[fmt] = [_describe(r, tuple(reversed(table.versions))) for r in rules]
        elif name in table.absent:
            per_format[fmt] = {"absent": table.absent[name]}
    out = {
        "field": name,
        "type": spec.type,
        "unit": spec.unit,
        "doc": spec.doc,
        "enum": list(spec.enum),
        "formats": per_format,
    }
    if spec.summary_of:
        out["summary_of"] = spec.summary_of
    return out


def _explain_key(fmt: str, key: str) -> dict[str, Any]:
    """A framework key in any spelling its reader accepts: NeoX's num-layers, a VeOmni flat key, a
    Cerebras trainer-layout path; a key the framework has but no canonical field (a DeepSpeed
    tuning knob) says so."""
    from ..knowledge.schema import schema_index

    table = load_table(fmt)
    leaf = _as_read(fmt, key)
    spelled = FORMATS[fmt].spell(leaf)  # as the framework reads it (NeoX: num-layers is num_layers)
    owners = [r for r in table.rules if leaf in r.keys or spelled in r.keys or (r.key and spelled == r.key)]
    base: dict[str, Any] = {"format": fmt, "key": key}
    if leaf != key:
        base["read_as"] = leaf
    if owners:
        names = list(dict.fromkeys(f for r in owners for f in r.fields))
        return {**base, "fields": [explain_data(f) for f in names]}
    for known in (leaf, spelled):
        if known in table.unsupported:
            return {**base, "unsupported": table.unsupported[known]}
    schema = schema_index(fmt)
    if schema.known(spelled):
        node = schema.node(spelled) or {}
        why = next(
            (
                r
                for prefix, r in table.extension_reasons.items()
                if spelled == prefix or spelled.startswith(prefix + ".")
            ),
            "",
        )
        return {
            **base,
            "extension": why or f"a {table.title} parameter no other framework has",
            "doc": str(node.get("description", "")),
        }
    close = difflib.get_close_matches(spelled, [k for r in table.rules for k in r.keys] + schema.all_keys(), n=1)
    raise UsageError(
        f"{fmt} key {key!r} is not a {table.title} parameter" + (f"; did you mean {close[0]}?" if close else "")
    )


def _as_read(fmt: str, key: str) -> str:
    """The leaf a reader makes of `key` (a layout it restructures: trainer paths, flat keys)."""
    from ..core.errors import NeoconvError
    from ..io.documents import flatten, unflatten

    try:
        source = FORMATS[fmt].load_reader().from_tree(unflatten({key: 1}))
    except (NeoconvError, ValueError, TypeError):
        return key
    written = {alias: leaf for leaf, alias in source.aliases.items()}
    if key in written:
        return written[key]
    leaves = list(flatten(source.tree))
    return leaves[0] if len(leaves) == 1 else key


def list_data() -> list[dict[str, Any]]:
    """Every canonical field with its keys in each format (None: the format cannot express it)."""
    tables = {fmt: load_table(fmt) for fmt in FORMATS}
    out = []
    for name, spec in catalogue().items():
        keys: dict[str, Any] = {}
        for fmt, table in tables.items():
            rules = table.rules_for_field(name)
            # each rule's own key, and how many more it reads with it (`explain FIELD` names them)
            more: dict[str, int] = {}
            for r in rules:
                more[r.key or "(derived)"] = max(more.get(r.key or "(derived)", 0), len(r.also))
            keys[fmt] = [k + (f" (+{n} more)" if n else "") for k, n in more.items()] if rules else None
        out.append({"field": name, "type": spec.type, "unit": spec.unit, "doc": spec.doc, "keys": keys})
    return out


def list_text(width: int = 100) -> str:
    """Two or more lines a field: its name and type, then each format's keys (`-`: none), a format
    never split across lines."""
    lines = []
    for item in list_data():
        unit = f", {item['unit']}" if item["unit"] else ""
        lines.append(f"{item['field']} ({item['type']}{unit})")
        line = ""
        for fmt, keys in item["keys"].items():
            pair = f"{fmt}: {', '.join(keys) if keys else '-'}"
            if line and len(line) + 3 + len(pair) > width:
                lines.append(line)
                line = ""
            line = f"{line}   {pair}" if line else f"    {pair}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def explain_text(name: str | None, *, as_json: bool = False, width: int = 100) -> str:
    if not name:
        return json.dumps(list_data(), indent=2) + "\n" if as_json else list_text(width)
    data = explain_data(name)
    if as_json:
        return json.dumps(data, indent=2) + "\n"
    read = f" (read as {data['read_as']})" if data.get("read_as") else ""
    if "unsupported" in data:
        return f"{data['format']}:{data['key']}{read} has no canonical field: {data['unsupported']}\n"
    if "extension" in data:
        doc = f" {data['doc']}" if data.get("doc") else ""
        return (
            f"{data['format']}:{data['key']}{read}: {data['extension']}.{doc} No canonical field: kept as written "
            f"by {data['format']}2{data['format']}, named in the report of other translations.\n"
        )
    if "fields" in data:
        head = (
            f"{data['format']}:{data['key']}{read} feeds {', '.join(f['field'] for f in data['fields'])}\n"
            if read
            else ""
        )
        return head + "".join(_field_text(f) for f in data["fields"])
    return _field_text(data)


def _field_text(data: dict[str, Any]) -> str:
    unit = f" [{data['unit']}]" if data["unit"] else ""
    lines = [f"{data['field']} ({data['type']}{unit}): {data['doc']}"]
    if data["enum"]:
        lines.append(f"  values: {', '.join(data['enum'])}")
    if data.get("summary_of"):
        lines.append(f"  derived from {data['summary_of']}, and written through it:")
    for fmt, rules in data["formats"].items():
        if isinstance(rules, dict):
            lines.append(f"  {fmt}: not expressible ({rules['absent']})")
            continue
        for rule in rules:
            key = rule["key"] or "(no key)"
            extra = f" + {', '.join(rule['also'])}" if rule["also"] else ""
            default = f"; default {rule['default']!r}" if "default" in rule else ""
            versions = "".join(f"; {v} default {d!r}" for v, d in rule.get("version_defaults", {}).items())
            when = f"; when {rule['when']}" if "when" in rule else ""
            lines.append(f"  {fmt}: {key}{extra} ({rule['transform']}{default}{versions}{when})")
    return "\n".join(lines) + "\n"
