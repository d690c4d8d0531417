"""The values a user gives with --set, and those still missing. A canonical field's (`--set
model.vocab_size=50432`, or the library's set_values) is checked against the catalogue; a value only
the target has (`--set cerebras:train_input.data_dir=./data`) against the target's schema before any
file is read, then written into the output, and the `missing` entry it answers taken out of the
report. The `missing` values nobody gave are marked in the output as `# MISSING:` comment lines
(a format whose files take comments), so that the file itself shows what is left to fill in."""

from __future__ import annotations

import difflib
import re
from typing import Any, Iterable, Mapping

import yaml

from ..core.errors import NeoconvError, UsageError, printable
from ..core.report import Entry, Report, Status
from ..io.documents import parse_value
from ..knowledge.catalogue import check_set


def split_set(assignments: Iterable[str], dst: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """`--set` strings -> (canonical values, values of keys only the target has: `DST:KEY=VALUE`)."""
    from ..knowledge.registry import FORMATS

    canonical: list[str] = []
    target: dict[str, Any] = {}
    for item in assignments:
        head, colon, rest = item.partition(":")
        if not colon or head not in FORMATS or "=" in head:
            canonical.append(item)
            continue
        if head != dst:
            raise UsageError(
                f"--set {item!r}: this translation writes {dst}: give {dst}:KEY=VALUE, or a canonical field"
            )
        key, sep, text = rest.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {item!r}: expected {dst}:KEY=VALUE, e.g. --set {dst}:train_input.data_dir=./data")
        target[key.strip()] = _value(item, key.strip(), text)
    return parse_set(canonical), target


def _value(item: str, name: str, text: str) -> Any:
    if not text.strip():
        raise UsageError(f"--set {item!r}: no value after '='; give KEY=VALUE, e.g. --set {name}=VALUE")
    if not text.isprintable():  # a newline would start a line of settings (or swallow a comment) in the output
        raise UsageError(f"--set {printable(item)}: the value holds a control character; a value is one line of text")
    if _COMMENT.search(text):  # YAML would drop what follows ' #': a value on the command line holds no comment
        return text.strip()
    try:
        value = parse_value(text)  # bounded: a value can be an alias bomb too
    except yaml.YAMLError:
        value = text
    except NeoconvError as exc:
        raise UsageError(f"--set {name}: {exc.message}") from None
    if value is None:
        raise UsageError(
            f"--set {item!r}: {text.strip()} is no value; --set gives a value (leave it out to keep "
            "what the source says)"
        )
    return value


_COMMENT = re.compile(r"(?:^|\s)#")


def parse_set(assignments: Iterable[str]) -> dict[str, Any]:
    """`FIELD=VALUE` strings -> canonical values, checked against the catalogue."""
    values: dict[str, Any] = {}
    for item in assignments:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"--set {item!r}: expected FIELD=VALUE, e.g. --set model.vocab_size=50304")
        check_set(name, None)  # the field first: its name is the likelier mistake
        value = _value(item, name, text)
        values[name] = check_set(name, value)
    return values


def check_target_values(dst: str, layout: str | None, values: Mapping[str, Any]) -> dict[str, Any]:
    """Each key must be one the target's schema (of that layout) knows and no canonical field
    writes (that value goes through --set FIELD, so that the report and the read-back see it)."""
    from ..knowledge.mapping import load_table
    from ..knowledge.registry import get_format
    from ..knowledge.schema import schema_index

    spec = get_format(dst)
    layout = layout or spec.default_layout
    schema = schema_index(spec.schema_for(layout))
    owners = {k: rule for rule in load_table(dst).rules for k in rule.keys}
    checked: dict[str, Any] = {}
    for key, value in values.items():
        label = f"--set {dst}:{key}"
        if not isinstance(key, str) or not key:
            raise UsageError(f"{label}: give the target key, e.g. --set {dst}:KEY=VALUE")
        spelled = spec.spell(key)  # the schema's spelling of a key as the format writes it (Megatron's --data-path)
        rule = owners.get(spelled)
        if rule is not None and rule.fields and layout == spec.default_layout:
            raise UsageError(
                f"{label}: {key} is written from canonical field {rule.fields[0]}: give --set {rule.fields[0]}=VALUE"
            )
        if not schema.known(spelled):
            close = difflib.get_close_matches(spelled, schema.all_keys(), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            where = f" ({layout} layout)" if layout else ""
            raise UsageError(f"{label}: not a {spec.title} key{where}{hint}")
        if value is None:
            raise UsageError(f"{label}: give a value")
        if isinstance(value, dict) and "object" not in schema.types_of(key):
            raise UsageError(
                f"{label}: a value here is one value, not a block of keys (give each key with its own --set)"
            )
        try:
            checked[key], _ = schema.coerce(spelled, value)
        except ValueError as exc:
            try:  # one value for a key that takes a list (Megatron's --data-path PREFIX): a list of one
                checked[key], _ = schema.coerce(spelled, [value])
            except ValueError:
                raise UsageError(f"{label}: {exc}") from None
    return checked


def apply_target_values(report: Report, document: dict[str, Any], fmt: str, values: Mapping[str, Any]) -> None:
    """Write the values into the document; the `missing` entries they answer (a key in either of
    the format's spellings) leave the report."""
    from ..knowledge.registry import get_format

    spell = get_format(fmt).spell
    for key, value in values.items():
        node = document
        parts = key.split(".")
        for depth, part in enumerate(parts[:-1]):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise UsageError(
                    f"--set {fmt}:{key}: {'.'.join(parts[: depth + 1])} is a value, not a block, in this output"
                )
            node = child
        node[parts[-1]] = value
    given = {spell(k) for k in values}
    report.entries = [
        e for e in report.entries if not (e.status is Status.MISSING and given & {spell(t) for t in _targets(e)})
    ]
    for key in values:
        report.add(f"--set {fmt}:{key}", key, Status.EXACT, "given on the command line")


def _targets(entry: Entry) -> list[str]:
    return entry.target_key.split(", ") if entry.target_key else []


MARK = "# MISSING:"


def mark_missing(text: str, report: Report, fmt: str) -> str:
    """The YAML text with a `# MISSING: KEY — give --set ...` line for each missing value, under
    the block it belongs in (at the end when no part of its path is written). Keys of side files
    (VeOmni's `x.config.json:vocab_size`) are not marked: JSON has no comments."""
    from ..io.documents import key_line

    lines = text.splitlines(keepends=True)
    inserts: list[tuple[int, str]] = []
    found: dict[str, int | None] = {}
    for entry in report.entries:
        if entry.status is not Status.MISSING:
            continue
        for key in _targets(entry):
            if ":" in key:
                continue
            hint = _given_by(entry.detail) or (
                f"--set {entry.fields[0]}=VALUE" if entry.fields else f"--set {fmt}:{key}=VALUE"
            )
            parts = key.split(".")
            at, indent, shown = len(lines), "", key
            for depth in range(len(parts) - 1, 0, -1):
                parent = ".".join(parts[:depth])
                if parent not in found:  # missing keys of one block share its line
                    found[parent] = key_line(text, parent)
                line = found[parent]
                if line is not None:
                    at, indent = line, _child_indent(lines, line - 1)
                    shown = ".".join(parts[depth:])
                    break
            inserts.append((at, f"{indent}{MARK} {shown} — give {hint}\n"))
    if not inserts:
        return text
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    # from the bottom (earlier positions stay put); at one place, the last first, so they read in report order
    for _, (at, comment) in sorted(enumerate(inserts), key=lambda item: (-item[1][0], -item[0])):
        lines.insert(at, comment)
    return "".join(lines)


_GIVES = re.compile(r"--set [\w.:-]+=[^\s,;)]+|--world-size \w+")


def _given_by(detail: str) -> str:
    """What the report's hint says to give, as the user types it: the --set (and --world-size) of its first way
    ("--set batch.micro=N (per GPU), or --set batch.global=N with --world-size": --set batch.micro=N); "" when it
    names none (the field's own --set is then shown)."""
    for way in re.split(r"[,;]? or (?=--)|[,;] or ", detail):  # the ways it offers, one after the other
        found = _GIVES.findall(way)
        if found:  # (a target-only key: its path in the layout written, as the caller spells it)
            return "" if any(":" in f for f in found) else " ".join(found)
    return ""


def _child_indent(lines: list[str], parent: int) -> str:
    """The indentation of a block's keys: its first key's, or two spaces more than the block's."""
    own = len(lines[parent]) - len(lines[parent].lstrip())
    for line in lines[parent + 1 :]:
        if line.strip() and not line.lstrip().startswith("#"):
            width = len(line) - len(line.lstrip())
            return " " * width if width > own else " " * (own + 2)
    return " " * (own + 2)
