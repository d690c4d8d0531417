"""A cross-format translation's YAML output with the source's comments carried over: the file's
header under neoconv's own, and each key's comments (the lines above it, its inline comment) on
the target key it maps to, where that is unambiguous — the report maps the source leaf to exactly
one target key, and no other leaf to that key. Comments of a block (`### Model` above `model:`)
stay behind: blocks do not map one to one between frameworks.

Both texts are read by indentation alone, in one pass each (a batch migration pays next to nothing
for it): the target is what neoconv's YAML writer wrote (block style, one key a line), the source
a block-style file or one of NeoX's one-key-a-line {...} files; a comment line is inserted at its
key's indentation, which no YAML reader reads as data."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable

from ..core.errors import printable

if TYPE_CHECKING:
    from ..core.report import Report

_KEY = re.compile(r"^(\s*)([^\s#\-][^:#]*?):(?:\s|$)")


def carry_comments(source_text: str, target_text: str, report: Report, spell: Callable[[str], str]) -> tuple[str, int]:
    """The target text with the source's comments, and how many comment lines were carried."""
    if "#" not in source_text:
        return target_text, 0
    # lines as the source's own syntax ends them (a \x0b, \x1c or \x85 in a comment ends none: splitlines would)
    source_lines = [line.removesuffix("\r") for line in source_text.lstrip("\ufeff").split("\n")]
    header, notes = source_comments(source_lines, spell)
    if not header and not notes:  # comments only above blocks, or in lists: none stays with a key
        return target_text, 0
    lines = target_text.splitlines(keepends=True)
    above: dict[int, list[str]] = {}  # target line -> comment lines to put above it
    inline: dict[int, str] = {}
    pairs = [
        (target, found)
        for leaf, target in _unambiguous(report).items()
        if (found := notes.get(".".join(spell(p) for p in leaf.split(".")))) is not None
    ]
    where = _key_lines(lines, {target for target, _ in pairs}) if pairs else {}
    for target, found in pairs:
        at = where.get(target)
        if at is not None:
            above.setdefault(at, []).extend(found[0])
            comment = _inline(found[1]) if "#" in found[1] else ""
            if comment:
                inline[at] = comment
    carried = len(header) + sum(len(v) for v in above.values()) + len(inline)
    if not carried:
        return target_text, 0
    out: list[str] = []
    ours = 0
    while ours < len(lines) and lines[ours].startswith("#"):  # neoconv's header first, then the source's
        out.append(lines[ours])
        ours += 1
    out += [line + "\n" for line in header]
    for i in range(ours, len(lines)):
        line = lines[i]
        if i in above:
            indent = line[: len(line) - len(line.lstrip())]
            out += [f"{indent}{text}\n" for text in above[i]]
        if i in inline and _plain_scalar_line(line):
            body = line.rstrip("\r\n")
            line = f"{body}  {inline[i]}{line[len(body) :]}"
        out.append(line)
    return "".join(out), carried


_SOURCE_KEY = re.compile(r"^(\s*)(?:\{\s*)?(\"[^\"]+\"|'[^']+'|[^\s#\-{}\[\]\"'][^:#]*?)\s*:(?:\s|$)")
_BLOCK = re.compile(r":\s*[|>][-+0-9]*\s*(?:#.*)?$")


def source_comments(
    lines: list[str], spell: Callable[[str], str]
) -> tuple[list[str], dict[str, tuple[list[str], str]]]:
    """The file's header comments, and for each key with a comment (dotted, in the reader's spelling)
    the comment lines right above it and the rest of its line (where an inline comment would be).
    One pass over the lines, by indentation: block mappings and NeoX's one-key-a-line {...} files
    (a line inside a block scalar is data, skipped)."""
    header: list[str] = []
    notes: dict[str, tuple[list[str], str]] = {}
    pending: list[str] = []
    stack: list[tuple[int, str]] = []
    seen_key = False
    scalar_indent: int | None = None  # inside a block scalar (|, >) opened by a key at this indent
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if scalar_indent is not None:
            if not stripped or indent > scalar_indent:
                continue
            scalar_indent = None
        if stripped.startswith("#"):
            pending.append(printable(stripped, keep="\t"))  # one comment line in the output, whatever it holds
            continue
        if not stripped:
            if not seen_key and pending:
                header += pending  # a paragraph before the first key is the file's header
                pending = []
            continue
        match = _SOURCE_KEY.match(line) if ":" in line else None
        if not match:
            if not seen_key:
                header += pending  # comments above a NeoX file's opening brace are its header too
            pending = []
            continue
        seen_key = True
        key = spell(match.group(2).strip().strip("'\""))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        rest = line[match.end() :]  # the rest of the line: its inline comment, read when used
        if pending or "#" in rest:  # (a key with no comment has nothing to carry)
            notes[".".join([k for _, k in stack] + [key])] = (pending, rest)
        pending = []
        stack.append((indent, key))
        if ("|" in line or ">" in line) and _BLOCK.search(line):
            scalar_indent = indent
    return header, notes


def _inline(rest: str) -> str:
    """The comment after a value on its line (a '#' inside quotes is part of the value)."""
    quote = ""
    for i, ch in enumerate(rest):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "#" and (i == 0 or rest[i - 1] in " \t"):
            return printable(rest[i:].strip(), keep="\t")
    return ""


def _unambiguous(report: Report) -> dict[str, str]:
    """Source leaf -> its one target key, for the leaves whose target key no other leaf writes."""
    pairs = {}
    writers: dict[str, int] = {}
    for entry in report.entries:
        targets = entry.target_key.split(", ") if entry.target_key else []
        for key in targets:
            writers[key] = writers.get(key, 0) + 1
        if entry.source_key and len(targets) == 1 and not entry.source_key.startswith("--"):
            pairs[entry.source_key] = targets[0]
    return {leaf: key for leaf, key in pairs.items() if writers[key] == 1}


def _key_lines(lines: list[str], wanted: set[str]) -> dict[str, int]:
    """Dotted key -> line, for YAML as neoconv's writer writes it (block mappings; list items are
    values, not keys), read until every `wanted` key is found."""
    found: dict[str, int] = {}
    left = len(wanted)
    stack: list[tuple[int, str]] = []  # (indent, key) of the open mappings
    for i, line in enumerate(lines):
        match = _KEY.match(line)
        if not match:
            continue
        indent, key = len(match.group(1)), match.group(2).strip().strip("'\"")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = ".".join([k for _, k in stack] + [key])
        if path not in found:
            found[path] = i
            if path in wanted:
                left -= 1
                if not left:
                    break
        stack.append((indent, key))
    return found


def _plain_scalar_line(line: str) -> bool:
    """`key: value` with nothing after the value that a comment could confuse."""
    body = line.rstrip("\r\n")
    key, sep, value = body.partition(": ")
    value = value.strip()
    return bool(sep and value and "#" not in body and value[0] not in "|>&*!'\"[{")
