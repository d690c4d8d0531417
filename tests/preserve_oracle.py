"""Checks of a format-preserving rewrite that do not trust the rewrite engine's own reading of YAML.

- `comment_texts`: every comment of a YAML text, found from PyYAML's token positions (a `#` after
  the last token of a line, or on a line of its own that no multi-line token covers).
- `diff_problems`: what a unified diff of source vs rewrite may touch. With "unchanged" meaning a
  key at the same path in the source and the target document whose value is equal and of the same
  type (a mapping at the same path in both counts as "kept": only its key line is pinned):
  (a) no line of an unchanged key (its key line and its value's lines) and no key line of a kept
      mapping is deleted or replaced;
  (b) every inserted line with content (not blank, not only a comment) belongs to a key that is
      not unchanged: no unchanged key is rewritten or written twice;
  (c) comments on inserted lines are comments from deleted lines: moved, never invented;
  (d) every hunk changes at least one line with content: no hunk of only blank lines or comments.
- `strictly_equal`: equal values of equal types all the way down (1, 1.0 and True differ).
"""

from __future__ import annotations

import difflib
import math
from collections import Counter
from typing import Any

import yaml

Path = tuple[Any, ...]


def comment_texts(text: str) -> Counter[str]:
    lines = text.splitlines()
    ends: dict[int, int] = {}
    inside: set[int] = set()
    for token in yaml.scan(text, Loader=yaml.SafeLoader):
        start, end = token.start_mark, token.end_mark
        if (start.line, start.column) == (end.line, end.column):
            continue  # block starts/ends: no text of their own
        inside.update(range(start.line + 1, end.line + 1))
        ends[end.line] = max(ends.get(end.line, 0), end.column)
    found: Counter[str] = Counter()
    for number, line in enumerate(lines):
        if number in ends:
            rest = line[ends[number] :]
        elif number in inside:
            continue
        else:
            rest = line
        rest = rest.strip()
        if rest.startswith("#"):
            found[rest] += 1
    return found


def strictly_equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strictly_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strictly_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


class _Entries:
    """The block-mapping entries of a YAML text: key line, last line, path (lists not entered)."""

    def __init__(self, text: str) -> None:
        self.key_line: dict[Path, int] = {}
        self.span: dict[Path, tuple[int, int]] = {}
        self.value: dict[Path, Any] = {}
        self.block: set[Path] = set()  # paths whose value is a block mapping
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            self._walk(node, (), loader)
        finally:
            loader.dispose()
        self.owner: dict[int, Path] = {}
        for path, (first, last) in sorted(self.span.items(), key=lambda item: len(item[0])):
            for line in range(first, last + 1):
                self.owner[line] = path  # deeper paths come later and win

    def _walk(self, node: Any, path: Path, loader: Any) -> None:
        if not isinstance(node, yaml.MappingNode) or node.flow_style:
            return
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            here = path + (key,)
            self.key_line[here] = key_node.start_mark.line
            self.span[here] = (key_node.start_mark.line, _last_line(value_node))
            self.value[here] = loader.construct_object(value_node, deep=True)
            if isinstance(value_node, yaml.MappingNode) and not value_node.flow_style:
                self.block.add(here)
                self._walk(value_node, here, loader)


def _last_line(node: Any) -> int:
    if isinstance(node, yaml.ScalarNode) or getattr(node, "flow_style", False) or not node.value:
        end = node.end_mark
        return max(node.start_mark.line, end.line if end.column else end.line - 1)
    last = node.value[-1]
    return max(_last_line(last[0]), _last_line(last[1])) if isinstance(node, yaml.MappingNode) else _last_line(last)


def _at(document: Any, path: Path) -> tuple[bool, Any]:
    for key in path:
        if not isinstance(document, dict) or key not in document:
            return False, None
        document = document[key]
    return True, document


def _content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def diff_problems(source: str, output: str, target: dict[str, Any]) -> list[str]:
    """What the rewrite touched that it should not have (empty: the diff is as small as promised)."""
    src, out = _Entries(source), _Entries(output)
    unchanged: set[Path] = set()
    pinned: dict[int, Path] = {}
    for path, line in src.key_line.items():
        found, value = _at(target, path)
        if not found:
            continue
        if path in src.block and isinstance(value, dict):
            unchanged.add(path)
            pinned[line] = path
        elif strictly_equal(src.value[path], value):
            unchanged.add(path)
            first, last = src.span[path]
            for number in range(first, last + 1):
                pinned.setdefault(number, path)
    a, b = source.splitlines(), output.splitlines()
    problems: list[str] = []
    removed_comments: Counter[str] = Counter()
    added_comments: Counter[str] = Counter()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(0):
        changed_content = False
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                continue
            for number in range(i1, i2):
                if number in pinned:
                    problems.append(
                        f"source line {number + 1} of unchanged {_dotted(pinned[number])} changed: {a[number]!r}"
                    )
                changed_content |= _content(a[number])
            removed_comments += comment_texts_of_lines(a[i1:i2])
            for number in range(j1, j2):
                if _content(b[number]):
                    changed_content = True
                    owner = out.owner.get(number)
                    if owner in unchanged and number in _own_lines(out, owner):
                        problems.append(f"output line {number + 1} rewrites unchanged {_dotted(owner)}: {b[number]!r}")
            added_comments += comment_texts_of_lines(b[j1:j2])
        if not changed_content:
            first = next(op for op in group if op[0] != "equal")
            problems.append(f"a hunk at source line {first[1] + 1} changes only blank lines or comments")
    invented = added_comments - removed_comments
    if invented:
        problems.append(f"comments on added lines that no removed line had: {sorted(invented)}")
    return problems


def _own_lines(entries: _Entries, path: Path) -> range:
    first, last = entries.span[path]
    return range(first, first + 1) if path in entries.block else range(first, last + 1)


def comment_texts_of_lines(lines: list[str]) -> Counter[str]:
    """Comments of a run of lines taken out of a file: each line's `#...` after a space, or the
    whole line (good enough for diff lines of configs, whose strings hold no ` #`)."""
    found: Counter[str] = Counter()
    for line in lines:
        stripped = line.strip()
        at = 0 if stripped.startswith("#") else stripped.find(" #")
        if at >= 0:
            found[stripped[at:].strip()] += 1
    return found


def _dotted(path: Path) -> str:
    return ".".join(map(str, path))


def removed_key_comments(source: str, removed: set[str]) -> Counter[str]:
    """The comments a removed key may take with it: those on its own lines and the comment lines
    directly above its key (no blank line between)."""
    entries = _Entries(source)
    lines = source.splitlines()
    found: Counter[str] = Counter()
    for path, (first, last) in entries.span.items():
        if _dotted(path) not in removed:
            continue
        above = first
        while above > 0 and lines[above - 1].strip().startswith("#"):
            above -= 1
        found += comment_texts_of_lines(lines[above : last + 1])
    return found
