#!/usr/bin/env python3
"""Extract the Cerebras Model Zoo parameter facts from the reference documents into tools/facts/.

Reads the two renderings of the Model Zoo parameter docs in --reference (../shared/reference beside
the checkout): release "r1" (cerebras-modelzoo-params-r1.md, markdown tables) and release "r2"
(cerebras-modelzoo-params-r2.txt, plain text), and writes one facts file per release
(tools/facts/cerebras-params-r1.json, -r2.json): per table row the sections it applies to, the key,
the JSON types its `(type, optional)` hint names, the accepted values the description lists, its
default (a literal, or the words of a worded default), whether it is required, and the models (or,
for runconfig, the devices) the row is for. Descriptions are not kept: tools/gen_cerebras_schema.py
merges these rows into the schema.

--check compares instead of writing (exit 1 when the committed facts no longer say what the
documents say): the `upstream` test tier runs it when the documents are at hand.

Usage:
    python tools/extract_cerebras_facts.py [--reference DIR] [--facts DIR] [--check]
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from facts_file import FACTS_DIR, REFERENCE_DIR, document_source, render  # tools/ is on sys.path as a script
from gen_cerebras_schema import _MISSING, DOCUMENTS, Spec, TypeInfo, spec_to_json
from schema_output import write_or_check

DOC_SECTION_PREFIXES = {
    "model param": ("model",),
    "data loader param": ("train_input", "eval_input"),
    "optimizer param": ("optimizer",),
    "runconfig param": ("runconfig",),
}


class DocFormatError(ValueError):
    """The reference text does not have the shape this parser expects; fail rather than guess."""


# --------------------------------------------------------------------------------------------
# Reading the two renderings into uniform rows
# --------------------------------------------------------------------------------------------


@dataclass
class Row:
    """One table row as written in one release's docs."""

    release: str
    sections: tuple[str, ...]
    name: str
    description: str
    scope: str | None  # third column: supported models (or, for runconfig, supported modes)
    scope_kind: str | None  # "models" or "devices"
    line: int


def _doc_sections(heading: str) -> tuple[str, ...] | None:
    lowered = heading.lower()
    for prefix, sections in DOC_SECTION_PREFIXES.items():
        if lowered.startswith(prefix):
            return sections
    return None


def _scope_kind(header: str) -> str | None:
    lowered = header.strip().lower()
    if lowered == "supported models":
        return "models"
    if lowered == "supported mode":  # runconfig tables list target devices (All/CSX/GPU)
        return "devices"
    return None


_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_HEADER_NAMES = ("parameter name", "parameter", "key")


def _clean_markdown(text: str) -> str:
    # Links keep their text; <br> is a line break; bold/italic markers go. Backticks stay because
    # they delimit literal values for the default/enum parsers.
    text = re.sub(r"\[([^\]]*)\]+\([^)]*\)", r"\1", text)
    text = text.replace("<br>", "\n")
    text = re.sub(r"\*\*(\S[^*]*?)\*\*", r"\1", text)
    text = re.sub(r"(?<![\w*])\*(\w[^*]*?)\*(?![\w*])", r"\1", text)
    return text.strip()


def _normalise_quotes(text: str) -> str:
    return text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")


def read_r1(path: Path) -> list[Row]:
    """Markdown: `## X params` sections, `### ...` groups, pipe tables."""
    rows: list[Row] = []
    sections: tuple[str, ...] | None = None
    columns: list[str] | None = None
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            title = line.lstrip("#").strip()
            if level == 2:
                sections = _doc_sections(title)
            columns = None
            continue
        if not line.startswith("|"):
            columns = None  # any other line ends the table
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if re.fullmatch(r"[\s|:-]+", line):
            continue  # header separator
        if columns is None:
            if cells[0].lower() not in _HEADER_NAMES:
                raise DocFormatError(f"{path.name}:{number}: table without a header row")
            columns = cells
            continue
        if sections is None:
            continue
        if not cells[0]:
            continue  # blank spacer rows inside the DiT table
        name = cells[0].strip("` ")
        if not _NAME_RE.match(name):
            raise DocFormatError(f"{path.name}:{number}: unexpected parameter name {cells[0]!r}")
        scope = cells[2] if len(columns) > 2 and len(cells) > 2 else None
        rows.append(
            Row(
                release="r1",
                sections=sections,
                name=name,
                description=_normalise_quotes(_clean_markdown(cells[1])),
                scope=scope.strip() if scope else None,
                scope_kind=_scope_kind(columns[2]) if len(columns) > 2 else None,
                line=number,
            )
        )
    return rows


def read_r2(path: Path) -> list[Row]:
    """Plain text: blank-line separated blocks; headings end with '#'; a table is a header of 2 or 3
    blocks (name, description[, scope]) followed by rows of the same number of blocks."""
    rows: list[Row] = []
    text = _normalise_quotes(path.read_text(encoding="utf-8"))
    blocks: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw.strip():
            if not current:
                start = number
            current.append(raw.rstrip())
        elif current:
            blocks.append((start, "\n".join(current)))
            current = []
    if current:
        blocks.append((start, "\n".join(current)))

    sections: tuple[str, ...] | None = None
    index = 0
    while index < len(blocks):
        number, block = blocks[index]
        if block.endswith("#") and "\n" not in block:
            title = block[:-1].strip()
            found = _doc_sections(title)
            if found is not None or title.lower().endswith("parameters"):
                sections = found
            index += 1
            continue
        if block.lower() in _HEADER_NAMES:
            columns = [block]
            index += 1
            while index < len(blocks) and blocks[index][1] in (
                "Description",
                "Supported Models",
                "Supported mode",
            ):
                columns.append(blocks[index][1])
                index += 1
            width = len(columns)
            scope_kind = _scope_kind(columns[2]) if width > 2 else None
            while index < len(blocks) and not blocks[index][1].endswith("#"):
                group = blocks[index : index + width]
                if len(group) < width:
                    raise DocFormatError(f"{path.name}:{group[0][0]}: truncated row")
                (line, name), (_, description) = group[0], group[1]
                if not _NAME_RE.match(name):
                    raise DocFormatError(f"{path.name}:{line}: unexpected parameter name {name!r}")
                if sections is not None:
                    rows.append(
                        Row(
                            release="r2",
                            sections=sections,
                            name=name,
                            description=description,
                            scope=group[2][1] if width > 2 else None,
                            scope_kind=scope_kind,
                            line=line,
                        )
                    )
                index += width
            continue
        raise DocFormatError(f"{path.name}:{number}: unexpected block {block[:60]!r}")
    return rows


# --------------------------------------------------------------------------------------------
# Understanding one description: type hint, enum, default
# --------------------------------------------------------------------------------------------


_SCALARS = {
    "int": "integer",
    "integer": "integer",
    "float": "number",
    "bool": "boolean",
    "str": "string",
    "string": "string",
    "none": "null",
    "dict": "object",
    "list": "array",
}


def _split_top(text: str, separators: tuple[str, ...]) -> list[str]:
    """Split on any separator that is not inside brackets or parentheses."""
    parts: list[str] = []
    depth = 0
    last = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif depth == 0:
            for sep in separators:
                if text.startswith(sep, i):
                    parts.append(text[last:i])
                    i += len(sep)
                    last = i
                    break
            else:
                i += 1
                continue
            continue
        i += 1
    parts.append(text[last:])
    return [p.strip() for p in parts if p.strip()]


def parse_type(hint: str) -> TypeInfo:
    """`bool`, `str/None`, `Dict or str`, `List[int] (or) int`, `Union[None, int, Literal[...]]`..."""
    text = hint.replace("`", "").strip()
    info = TypeInfo()
    alternatives = _split_top(text, ("/", " or ", " (or) "))
    if len(alternatives) > 1:
        for alt in alternatives:
            info.merge(parse_type(alt))
        return info
    union = re.fullmatch(r"Union\[(.*)\]", text)
    if union:
        for alt in _split_top(union.group(1), (",",)):
            info.merge(parse_type(alt))
        return info
    literal = re.fullmatch(r"Literal\[(.*)\]", text)
    if literal:
        info.literals = [v.strip().strip("\"'") for v in _split_top(literal.group(1), (",",))]
        return info
    listed = re.fullmatch(r"(?:List|list)\[(.*)\]|\[(.*)\]", text)
    if listed:
        info.types.add("array")
        inner = listed.group(1) if listed.group(1) is not None else listed.group(2)
        for element in _split_top(inner, (",",)):
            element_type = _SCALARS.get(element.lower())
            if element_type:
                info.items.add(element_type)
        return info
    if re.fullmatch(r"(?:Dict|dict)(\[.*\])?", text):
        info.types.add("object")
        return info
    scalar = _SCALARS.get(text.lower())
    if scalar is None:
        raise DocFormatError(f"unknown type name {text!r} in hint {hint!r}")
    info.types.add(scalar)
    return info


def find_type_hint(description: str) -> tuple[str, str, int, int] | None:
    """Return (type text, optional|required, start, end) of the `(type, optional)` hint."""
    for match in re.finditer(r",\s*(optional|required|option)\s*\)", description):
        depth = 0
        for pos in range(match.start() - 1, -1, -1):
            ch = description[pos]
            if ch == ")":
                depth += 1
            elif ch == "(":
                if depth == 0:
                    inner = description[pos + 1 : match.start()]
                    kind = "optional" if match.group(1) == "option" else match.group(1)
                    return inner, kind, pos, match.end()
                depth -= 1
    return None


# Phrases after which the docs list every accepted value.
_ENUM_TRIGGERS = (
    "Accepted values:",
    "Accepts one of:",
    "Accepts:",
    "Can be one of:",
    "One of:",
    "One of ",
    "Allowed options are:",
    "supported: values:",
    "either ",
)


def _literal(token: str) -> Any:
    """A doc literal as a JSON value: None/True/False, numbers, `2 ** 15`, flow lists, else str."""
    token = token.strip()
    if token == "None":
        return None
    if token in ("True", "true"):
        return True
    if token in ("False", "false"):
        return False
    if re.fullmatch(r"[-+]?\d+", token):
        return int(token)
    if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)", token):
        return float(token)
    power = re.fullmatch(r"(\d+)\s*\*\*\s*(\d+)", token)
    if power:
        return int(power.group(1)) ** int(power.group(2))
    if token.startswith("[") and token.endswith("]"):
        return [_literal(t) for t in _split_top(token[1:-1], (",",))]
    return token


def parse_enum(description: str, hint_start: int | None) -> list[Any] | None:
    for trigger in _ENUM_TRIGGERS:
        at = description.find(trigger)
        if at < 0:
            continue
        start = at + len(trigger)
        end = len(description)
        if hint_start is not None and hint_start > start:
            end = hint_start
        sentence_end = re.search(r"\.(?:\s+(?=[A-Z(])|\s*$)", description[start:end])
        if sentence_end:
            end = start + sentence_end.start()
        segment = description[start:end]
        values: list[Any] = re.findall(r'"([^"\n]+)"', segment)
        if not values and trigger == "either ":
            continue  # "either a single value or ..." is prose, not a list
        if not values:
            values = re.findall(r"`([^`\n]+)`", segment)
        if not values:
            pieces = re.split(r",|\bor\b|\n", segment.replace("`", ""))
            values = [t.strip() for t in pieces if re.fullmatch(r"[A-Za-z_][\w-]*", t.strip())]
        if re.search(r'(?<![\w"`])`?None`?(?![\w"`])', segment):
            values.append(None)
        values = [None if v == "None" else v for v in values]
        unique: list[Any] = []
        for value in values:
            if value not in unique:
                unique.append(value)
        return unique or None
    return None


_DEFAULT_RE = re.compile(r"\bDefault:?\s+(?P<value>.*)")


def parse_default(description: str, hint_end: int | None) -> tuple[Any, str | None]:
    """Return (literal default or _MISSING, prose default text or None)."""
    tail = description[hint_end:] if hint_end is not None else description
    match = _DEFAULT_RE.search(tail)
    if not match or (hint_end is None and "Default:" not in tail):
        return _MISSING, None
    raw = match.group("value").split("\n")[0].strip()
    # Trailing noise seen in the docs: "See more", a stray ")" and a full stop.
    raw = re.sub(r"\s*See more\.?$", "", raw).strip()
    if raw.endswith(")") and raw.count("(") < raw.count(")"):
        raw = raw[:-1].strip()
    raw = raw.rstrip(".").strip()
    quoted = re.fullmatch(r'"([^"]*)"|`"([^"]*)"`', raw)
    if quoted:
        return (quoted.group(1) if quoted.group(1) is not None else quoted.group(2)), None
    backticked = re.fullmatch(r"`([^`]*)`", raw)
    token = backticked.group(1).strip() if backticked else raw
    value = _literal(token)
    if isinstance(value, str) and not re.fullmatch(r"[\w./:-]+", value):
        return _MISSING, raw.replace("`", "")  # prose such as "varies per model"
    return value, None


# --------------------------------------------------------------------------------------------
# One release's view of a parameter, then the cross-release merge
# --------------------------------------------------------------------------------------------


def row_spec(row: Row) -> Spec:
    hint = find_type_hint(row.description)
    try:
        type_info = parse_type(hint[0]) if hint else None
    except DocFormatError as exc:
        raise DocFormatError(f"{row.release} line {row.line} ({row.name}): {exc}") from None
    enum = parse_enum(row.description, hint[2] if hint else None)
    default, default_text = parse_default(row.description, hint[3] if hint else None)
    if enum is not None and default is None and None not in enum:
        enum.append(None)  # "Default: None" is an accepted value even when the list omits it
    scope = _split_top(row.scope, (",",)) if row.scope else None
    return Spec(
        type=type_info,
        enum=enum,
        default=default,
        default_text=default_text,
        required=(hint[1] == "required") if hint else None,
        scope=scope,
        scope_kind=row.scope_kind,
    )


def facts(reference: Path) -> dict[str, str]:
    """File name -> text of each release's facts file."""
    readers = {"r1": read_r1, "r2": read_r2}
    out: dict[str, str] = {}
    for release, (document, facts_name) in DOCUMENTS.items():
        path = reference / document
        rows = []
        for row in readers[release](path):
            rows.append(
                {"line": row.line, "sections": list(row.sections), "name": row.name, **spec_to_json(row_spec(row))}
            )
        out[facts_name] = render(
            {
                "$comment": [
                    f"Cerebras Model Zoo parameter docs, release {release!r}, read by tools/extract_cerebras_facts.py.",
                    "rows, in document order: line, sections, name; type {types, literals, items} named by the "
                    "(type, optional) hint (null: none); enum: the accepted values listed (null: open); "
                    "default: a literal (absent: none given), default_text: a default given in words; "
                    "required; scope: the models (scope_kind 'models') or devices ('devices') of the row.",
                ],
                "source": document_source(path),
                "rows": rows,
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reference", type=Path, default=REFERENCE_DIR, help="the reference documents (default: %(default)s)"
    )
    parser.add_argument("--facts", type=Path, default=FACTS_DIR, help="the facts folder (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if a facts file is out of date")
    opts = parser.parse_args(argv)
    try:
        texts = facts(opts.reference)
    except (OSError, DocFormatError) as exc:
        print(f"extract_cerebras_facts: {exc}", file=sys.stderr)
        return 2
    status = 0
    for name, text in texts.items():
        status |= write_or_check(text, opts.facts / name, opts.check, "extract_cerebras_facts.py")
    return status


if __name__ == "__main__":
    sys.exit(main())
