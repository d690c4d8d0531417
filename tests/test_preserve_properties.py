"""Properties of preserve() on random configs and random migrations.

A random nested config is written in a random style (indent 2 or 4, flow or block lists, quoted or
plain text, comments above keys and after values, blank lines, sometimes GPT-NeoX's {...} style); a random migration moves, renames,
changes, removes and adds keys. Whatever happens, the text loads to exactly the target document
(kept formatting or the plain dump); when formatting is kept, every comment is still there but
those the rewrite names as gone with removed keys. Derandomized and small in CI; set
NEOCONV_FUZZ_EXAMPLES=5000 to search harder.
"""

from __future__ import annotations

import json
import os
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from preserve_oracle import comment_texts, strictly_equal

from neoconv.io.preserve import preserve

SCALE = int(os.environ.get("NEOCONV_FUZZ_EXAMPLES", "0"))
BUDGET = settings(
    max_examples=SCALE or 150,
    deadline=None,
    derandomize=not SCALE,
    database=None,
    suppress_health_check=list(HealthCheck),
)

keys = st.sampled_from(["lr", "steps", "model", "data", "train", "name", "a", "b", "c", "x_y", "on", "3", "seed"])
scalars = (
    st.integers(-5, 10**6)
    | st.sampled_from([0.1, 3.0e-4, 1e-05, 1.0, -2.5])
    | st.booleans()
    | st.none()
    | st.sampled_from(["fsdp1", "text with spaces", "yes", "2024-01-01", "#not-a-comment", "a: b", "", "x'y"])
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, min_size=1, max_size=4),
    max_leaves=12,
)
documents = st.dictionaries(keys, values, min_size=1, max_size=5)


class _Writer:
    """YAML text for a document, with style choices and comments drawn from hypothesis."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw
        self.indent = draw(st.sampled_from([2, 4]))
        self.dash = draw(st.sampled_from([0, 2]))
        self.counter = 0
        self.lines: list[str] = []

    def comment(self) -> str:
        self.counter += 1
        return f"# note {self.counter}"

    def mapping(self, data: dict[Any, Any], col: int, braces: bool = False) -> None:
        """Block style, or (braces) GPT-NeoX's style: {...} with one key a line and commas."""
        last = len(data) - 1
        for i, (key, value) in enumerate(data.items()):
            pad = " " * col
            comma = "," if braces and (i < last or self.draw(st.booleans())) else ""
            if self.draw(st.integers(0, 4)) == 0:
                self.lines.append("")
            if self.draw(st.integers(0, 3)) == 0:
                self.lines.append(pad + self.comment())
            head = pad + (json.dumps(key) if braces and isinstance(key, str) else _scalar(key)) + ":"
            after = ("  " + self.comment()) if self.draw(st.integers(0, 3)) == 0 else ""
            if isinstance(value, dict) and value:
                self.lines.append(head + (" {" if braces else "") + after)
                self.mapping(value, col + self.indent, braces)
                if braces:
                    self.lines.append(pad + "}" + comma)
            elif isinstance(value, list) and value and not braces and self.draw(st.booleans()):
                self.lines.append(head + after)
                for item in value:
                    self.lines.append(" " * (col + self.dash) + "- " + _flow(item))
            else:
                self.lines.append(head + " " + _flow(value) + comma + after)


def _scalar(value: Any) -> str:
    text: str = yaml.safe_dump(value, default_flow_style=True, width=1 << 20).rstrip("\n")
    return text[: -len("\n...")] if text.endswith("\n...") else text


def _flow(value: Any) -> str:
    return _scalar(value)


@st.composite
def cases(draw: Any) -> tuple[str, dict[str, Any], list[tuple[str, str]]]:
    source = draw(documents)
    writer = _Writer(draw)
    if draw(st.booleans()):
        writer.lines += ["# file header", ""]
    if draw(st.integers(0, 3)) == 0:
        writer.lines.append("{")
        writer.mapping(source, writer.indent, braces=True)
        writer.lines.append("}")
    else:
        writer.mapping(source, 0)
    text = "\n".join(writer.lines) + "\n"
    target = json.loads(json.dumps(source))  # a deep copy with the same (JSON-safe) types
    target = _fix_keys(source, target)
    moves: list[tuple[str, str]] = []
    leaves = list(_leaves(source, ()))
    for path in draw(st.lists(st.sampled_from(leaves), max_size=3, unique=True)) if leaves else []:
        action = draw(st.sampled_from(["move", "rename", "change", "remove", "nest"]))
        value = _pop(target, path)
        if value is _GONE:
            continue
        if action == "remove":
            continue
        if action == "change":
            value = draw(scalars)
            new = path
        elif action == "rename":
            new = path[:-1] + (f"{path[-1]}_new",)
        elif action == "nest":
            new = path[:-1] + ("group", path[-1])
        else:
            new = ("moved",) + path
        if _put(target, new, value):
            moves.append((".".join(map(str, path)), ".".join(map(str, new))))
    if draw(st.booleans()):
        _put(target, (draw(keys) + "_added",), draw(values))
    return text, target, moves


def _fix_keys(source: Any, copy: Any) -> Any:
    """json turned int keys into text; put the source's keys back."""
    if isinstance(source, dict):
        return {k: _fix_keys(v, copy[str(k)] if str(k) in copy else copy[k]) for k, v in source.items()}
    if isinstance(source, list):
        return [_fix_keys(a, b) for a, b in zip(source, copy)]
    return source


def _leaves(data: dict[Any, Any], path: tuple[Any, ...]) -> Any:
    for key, value in data.items():
        if isinstance(value, dict) and value:
            yield from _leaves(value, path + (key,))
        else:
            yield path + (key,)


_GONE = object()


def _pop(data: dict[Any, Any], path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        data = data.get(key)  # type: ignore[assignment]
        if not isinstance(data, dict):
            return _GONE
    return data.pop(path[-1], _GONE)


def _put(data: dict[Any, Any], path: tuple[Any, ...], value: Any) -> bool:
    for key in path[:-1]:
        nxt = data.setdefault(key, {})
        if not isinstance(nxt, dict):
            return False
        data = nxt
    if path[-1] in data:
        return False
    data[path[-1]] = value
    return True


@BUDGET
@given(cases())
def test_the_rewrite_always_loads_to_the_target_and_keeps_comments(
    case: tuple[str, dict[str, Any], list[tuple[str, str]]],
) -> None:
    text, target, moves = case
    rewrite = preserve(text, target, moves, "yaml")
    assert strictly_equal(yaml.safe_load(rewrite.text), target), (rewrite.note, rewrite.text)
    if rewrite.preserved:
        before, after = comment_texts(text), comment_texts(rewrite.text)
        assert after - before == {}
        assert sorted((before - after).elements()) == sorted(rewrite.dropped_comments)
    crlf = preserve(text.replace("\n", "\r\n"), target, moves, "yaml")
    assert crlf.preserved == rewrite.preserved
    if crlf.preserved:
        assert crlf.text == rewrite.text.replace("\n", "\r\n")


@BUDGET
@given(documents, documents)
def test_json_rewrites_load_to_the_target(source: dict[str, Any], target: dict[str, Any]) -> None:
    source, target = json.loads(json.dumps(source)), json.loads(json.dumps(target))
    for indent in (None, 2, "\t"):
        text = json.dumps(source, indent=indent)
        rewrite = preserve(text, target, [], "json")
        assert rewrite.preserved and strictly_equal(json.loads(rewrite.text), target), rewrite.text
