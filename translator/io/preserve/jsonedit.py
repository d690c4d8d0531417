"""Format-preserving rewrites of JSON: unchanged members keep their text, the rest is written in
the file's own indentation, separators and line breaks.

An object written over several lines is edited member by member (one member a line, the file's
indent); an object written on one line is rewritten on one line when it changes. Members copied
whole keep their spelling (`3e-4` stays `3e-4`), key order follows the plan.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .plan import Mode, Placed, Plan
from .tree import SourceEntry

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class Unsupported(Exception):
    """Not a JSON object this editor can position; the caller falls back to the plain dump."""


@dataclass(eq=False)
class JsonEntry(SourceEntry):
    key_start: int = 0  # the key's opening quote
    key_end: int = 0  # just after its closing quote
    value_start: int = 0
    value_end: int = 0
    col: int = 0  # the key's column


@dataclass
class JsonSource:
    text: str
    root: JsonEntry
    indent: str | None  # one level of indentation; None: the file is on one line
    key_sep: str  # ": " or ":"
    item_sep: str  # ", " or "," (objects and lists written on one line)
    newline: str
    ascii: bool  # the file writes non-ASCII text as \\u escapes (or has none)


def parse(text: str) -> JsonSource:
    """Raises ValueError for text that is not JSON, Unsupported for JSON that is not an object."""
    start = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
    if not text.startswith("{", start):
        raise Unsupported("the file is not a JSON object")
    root = JsonEntry(None, (), None, None, 0, value_start=start, col=-1)
    counter = [0]
    end = _object(text, start, root, counter)
    if text[_SPACE.match(text, end).end() :].strip():  # type: ignore[union-attr]
        raise ValueError("extra data after the JSON object")
    root.value_end = end
    root.value = json.loads(text)
    seps = [text[e.key_end : e.value_start] for e in root.walk() if isinstance(e, JsonEntry) and e.path]
    key_sep = ":" if seps and seps.count(":") > len(seps) // 2 else ": "
    item_sep = ", " if ", " in text or "," not in text else ","
    return JsonSource(
        text, root, _indent(text, root), key_sep, item_sep, "\r\n" if "\r\n" in text else "\n", text.isascii()
    )


def _object(text: str, at: int, entry: JsonEntry, counter: list[int]) -> int:
    """Read the object at `at` into entry.children; return the index after its `}`."""
    children: dict[Any, SourceEntry] = {}
    i = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    if text.startswith("}", i):
        entry.children = children
        return i + 1
    while True:
        if not text.startswith('"', i):
            raise ValueError(f"expected a key in quotes at offset {i}")
        key, key_end = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
        j = _SPACE.match(text, key_end).end()  # type: ignore[union-attr]
        if not text.startswith(":", j):
            raise ValueError(f"expected ':' at offset {j}")
        value_start = _SPACE.match(text, j + 1).end()  # type: ignore[union-attr]
        counter[0] += 1
        child = JsonEntry(
            key,
            entry.path + (key,),
            None,
            entry,
            counter[0],
            key_start=i,
            key_end=key_end,
            value_start=value_start,
            col=i - (text.rfind("\n", 0, i) + 1),
        )
        if text.startswith("{", value_start):
            child.value_end = _object(text, value_start, child, counter)
            child.value = json.loads(text[value_start : child.value_end])
        else:
            child.value, child.value_end = _DECODER.raw_decode(text, value_start)
        child.flow = "\n" not in text[value_start : child.value_end]
        if isinstance(child.value, dict) and child.flow:
            child.children = None  # a one-line object is rewritten whole
        children.pop(key, None)  # a repeated key: the last one counts, as for json.loads
        children[key] = child
        i = _SPACE.match(text, child.value_end).end()  # type: ignore[union-attr]
        if text.startswith("}", i):
            entry.children = children
            return i + 1
        if not text.startswith(",", i):
            raise ValueError(f"expected ',' or '}}' at offset {i}")
        i = _SPACE.match(text, i + 1).end()  # type: ignore[union-attr]


def _indent(text: str, root: JsonEntry) -> str | None:
    first = next(iter((root.children or {}).values()), None)
    if not isinstance(first, JsonEntry):
        return None
    line_start = text.rfind("\n", 0, first.key_start) + 1
    if line_start == 0:
        return None  # on the line of the opening brace: a one-line file
    return text[line_start : first.key_start]


def render(source: JsonSource, plan: Plan) -> str:
    text = source.text
    root = source.root
    body = _Writer(source).value(plan.root, 0)
    return text[: root.value_start] + body + text[root.value_end :]


class _Writer:
    def __init__(self, source: JsonSource) -> None:
        self.source = source
        self.text = source.text
        self.unit = source.indent

    def value(self, placed: Placed, level: int) -> str:
        """The text of an object the plan opens or makes, starting at its `{`."""
        if self.unit is None or (isinstance(placed.origin, JsonEntry) and placed.origin.flow):
            return self._dumps(placed.value, None)
        members = [self.member(child, level + 1) for child in placed.children]
        if not members:
            return "{}"
        nl = self.source.newline
        pad = self.unit * level
        return "{" + nl + ("," + nl).join(members) + nl + pad + "}"

    def member(self, placed: Placed, level: int) -> str:
        pad = (self.unit or "") * level
        origin = placed.origin
        if not isinstance(origin, JsonEntry):
            key = json.dumps(placed.key, ensure_ascii=self.source.ascii)
            if placed.mode is Mode.NEW and placed.children:
                return pad + key + self.source.key_sep + self.value(placed, level)
            return pad + key + self.source.key_sep + self._dumps(placed.value, level)
        key = self.text[origin.key_start : origin.key_end]
        if placed.key != origin.key:
            key = json.dumps(placed.key, ensure_ascii=self.source.ascii)
        sep = self.text[origin.key_end : origin.value_start]
        if placed.mode is Mode.COPY:
            body = self.text[origin.value_start : origin.value_end]
            return pad + key + sep + _reindent(body, len(pad) - origin.col, (self.unit or " ")[0])
        if placed.mode in (Mode.OPEN, Mode.HEAD):
            return pad + key + sep + self.value(placed, level)
        return pad + key + sep + self._dumps(placed.value, None if origin.flow else level)

    def _dumps(self, value: Any, level: int | None) -> str:
        """A value written fresh: on one line (level None), else in the file's indentation."""
        if level is None or self.unit is None or not isinstance(value, (dict, list)) or not value:
            return json.dumps(
                value, ensure_ascii=self.source.ascii, separators=(self.source.item_sep, self.source.key_sep)
            )
        text = json.dumps(
            value, ensure_ascii=self.source.ascii, indent=self.unit, separators=(",", self.source.key_sep)
        )
        pad = self.unit * level
        return text.replace("\n", self.source.newline + pad)


def _reindent(body: str, shift: int, char: str) -> str:
    """Move the continuation lines of a copied value by `shift` columns (of `char`)."""
    if shift == 0 or "\n" not in body:
        return body
    lines = body.split("\n")
    moved = [lines[0]]
    for line in lines[1:]:
        if shift > 0:
            moved.append(char * shift + line if line.strip() else line)
        else:
            width = len(line) - len(line.lstrip(char))
            moved.append(line[min(width, -shift) :])
    return "\n".join(moved)
