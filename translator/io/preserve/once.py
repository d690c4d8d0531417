"""A YAML text that gives a key twice in one mapping with the same value, written with the key once: the
file's own text, one of the two lines left out and no comment lost, for a release that refuses a repeat
(and for a hook that must accept its own output on its next run)."""

from __future__ import annotations

import re
from typing import Any

from ...core.errors import InputError
from ..documents import at_path, parse_yaml


def written_once(text: str, path: str) -> str:
    """`text` with one line of each key it gives twice with the same scalar value on one line (`a: -0.16`
    twice), when the file reads the same without it: the line without a comment goes (the earlier when
    neither has one); the earlier line's comment, when both have one, stays as a comment line in its
    place. `text` itself when a repeat's line does not stand alone (a multi-line value)."""
    repeats: list[Any] = []
    tree = parse_yaml(text, path, duplicates=repeats)
    lines = text.splitlines(keepends=True)
    edits: dict[int, str] = {}
    for dup in repeats:
        same = dup.shadowed == at_path(tree, ".".join(dup.path)) and not isinstance(dup.shadowed, (dict, list))
        first, last = dup.first_line - 1, dup.line - 1
        if not same or first == last or not all(_scalar_line(lines, i, dup.path[-1]) for i in (first, last)):
            continue
        comment_first, comment_last = _comment(lines[first]), _comment(lines[last])
        if comment_first and not comment_last:
            edits[last] = ""
        else:
            indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
            edits[first] = f"{indent}{comment_first}{_ending(lines[first])}" if comment_first else ""
    if not edits:
        return text
    shorter = "".join(edits.get(index, line) for index, line in enumerate(lines))
    try:
        if parse_yaml(shorter, path, duplicates=[]) == tree:
            return shorter
    except InputError:
        pass
    return text


def _scalar_line(lines: list[str], index: int, key: str) -> bool:
    return (
        0 <= index < len(lines)
        and re.match(rf"^\s*['\"]?{re.escape(key)}['\"]?\s*:\s*[^\s#]", lines[index]) is not None
    )


def _comment(line: str) -> str:
    """The line's trailing comment (`# heads`), or "" (a `#` inside quotes is not one)."""
    found = re.search(r"""^[^#'"]*(?:(?:'[^']*'|"(?:[^"\\]|\\.)*")[^#'"]*)*\s(#.*?)\s*$""", line)
    return found.group(1) if found else ""


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]
