"""`neoconv explain`: what a canonical field or framework key means, generated from the tables."""

from __future__ import annotations

import difflib
import json
from typing import Any

from .catalogue import catalogue
from .errors import UsageError
from .release_table import default_runs
from .mapping import Rule, load_table
from .registry import FORMATS


def _describe(rule: Rule, labels: tuple[str, ...] = ()) -> dict[str, Any]:
    if rule.formula is not None:
        transform = f"formula {rule.formula.name}"
    elif rule.simple is not None:
        transform = rule.simple.kind if rule.simple.kind != "enum" else "enum " + ", ".join(
            f"{a}={b}" for a, b in rule.simple.table
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
        table = load_table(fmt)
        spelled = FORMATS[fmt].spell(key)  # as the framework reads it (NeoX: num-layers is num_layers)
        owners = [r for r in table.rules if key in r.keys or (r.key and spelled == r.key)]
        if not owners:
            if key in table.unsupported:
                return {"format": fmt, "key": key, "unsupported": table.unsupported[key]}
            close = difflib.get_close_matches(key, [k for r in table.rules for k in r.keys], n=1)
            raise UsageError(f"{fmt} key {key!r} is not mapped" + (f"; did you mean {close[0]}?" if close else ""))
        names = [f for r in owners for f in r.fields]
        return {"format": fmt, "key": key, "fields": [explain_data(f) for f in names]}
    if name not in fields:
        close = difflib.get_close_matches(name, list(fields), n=1)
        raise UsageError(f"{name!r} is not a canonical field" + (f"; did you mean {close[0]}?" if close else ""))
    spec = fields[name]
    per_format: dict[str, Any] = {}
    for fmt in FORMATS:
        table = load_table(fmt)
        rules = table.rules_for_field(name)
        if rules:
            per_format[fmt] = [_describe(r, tuple(reversed(table.versions))) for r in rules]
        elif name in table.absent:
            per_format[fmt] = {"absent": table.absent[name]}
    return {"field": name, "type": spec.type, "unit": spec.unit, "doc": spec.doc,
            "enum": list(spec.enum), "formats": per_format}  # fmt: skip


def explain_text(name: str, *, as_json: bool = False) -> str:
    data = explain_data(name)
    if as_json:
        return json.dumps(data, indent=2) + "\n"
    if "unsupported" in data:
        return f"{data['format']}:{data['key']} has no canonical field: {data['unsupported']}\n"
    if "fields" in data:
        return "".join(_field_text(f) for f in data["fields"])
    return _field_text(data)


def _field_text(data: dict[str, Any]) -> str:
    unit = f" [{data['unit']}]" if data["unit"] else ""
    lines = [f"{data['field']} ({data['type']}{unit}): {data['doc']}"]
    if data["enum"]:
        lines.append(f"  values: {', '.join(data['enum'])}")
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
