"""A YAML file as lines plus a tree of its block-mapping entries, each owning the lines it carries.

An entry owns its key line, the lines of its value, the comment lines and blank lines above it
(its lead) and comment lines after it that are indented into it (its tail). Lines between two
entries are split this way: the comment lines (and blank lines) directly above the next key, at
most as indented as that key, lead into it; comments indented deeper stay with the entry they are
indented into. Comments before the first key are the file's header, but for a paragraph directly
above the key after a blank line (it leads into the key). Only block mappings are opened; a list, a flow collection, a
block scalar or a mapping with a merge key (<<) is one entry edited as a whole.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from .tree import SourceEntry

try:
    from yaml.cyaml import CParser as _Parser  # type: ignore[attr-defined]
except ImportError:  # PyYAML without libyaml: the pure-Python reader, scanner and parser

    class _Parser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):  # type: ignore[no-redef]
        def __init__(self, text: str) -> None:
            yaml.reader.Reader.__init__(self, text)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)


MERGE = "tag:yaml.org,2002:merge"


class _DatesAsText(SafeConstructor):
    """yaml.safe_load's values, but a date YAML cannot build (`2024-13-45`) stays text: edited, not refused."""

    def construct_yaml_timestamp(self, node: Any) -> Any:  # type: ignore[override]
        try:
            return SafeConstructor.construct_yaml_timestamp(self, node)
        except ValueError:
            return self.construct_scalar(node)


_DatesAsText.add_constructor("tag:yaml.org,2002:timestamp", _DatesAsText.construct_yaml_timestamp)  # type: ignore[type-var]
_FastLoader: Any = None  # libyaml's composer, where PyYAML has it
if hasattr(yaml, "CSafeLoader"):
    _FastLoader = type("_FastLoader", (yaml.CSafeLoader,), {})
    _FastLoader.add_constructor("tag:yaml.org,2002:timestamp", _DatesAsText.construct_yaml_timestamp)
_ALIAS = re.compile(r"(?:^|[\s\[{,])\*[^\s,\[\]{}]", re.M)  # what could be an alias (`*name`); comments too


class Unsupported(Exception):
    """A construct the line editor does not handle; the caller falls back to the plain dump."""


@dataclass(eq=False)
class YamlEntry(SourceEntry):
    key_line: int = 0
    col: int = 0  # the key's column
    key_end: int = 0  # column just after the key as written
    end: int = 0  # last line of the value
    lead: int = 0  # first line of the comments and blank lines above the key
    tail: int = 0  # last line owned (end, or later when comments are indented into the entry)
    value_start: tuple[int, int] = (0, 0)  # (line, column) of the value as written
    value_end: tuple[int, int] = (0, 0)
    style: str | None = None  # the scalar's quoting ('"', "'", '|', '>') or None
    key_style: str | None = None  # the key's quoting
    alias: bool = False  # the value is an alias (*name)
    braces: bool = False  # the value is a {...} mapping over several lines, opened key by key


@dataclass
class YamlSource:
    lines: list[str]  # without line endings
    endings: list[str]  # each line's own ending ("\n", "\r\n", or "" for a last line without one)
    root: YamlEntry
    header_end: int  # lines [0, header_end) are the file header
    trailer_start: int  # lines [trailer_start, len(lines)) are the file trailer
    aliases: bool  # any alias in the file
    indent: int  # the file's usual mapping indent
    dash: int  # how far the file indents a list's dashes from its key (0: `key:\n- a`)


class _Loader(Composer, _Parser, _DatesAsText, Resolver):  # type: ignore[misc, valid-type]
    """The C parser's events, composed here so that an alias use keeps its own position."""

    def __init__(self, text: str) -> None:
        _Parser.__init__(self, text)
        Composer.__init__(self)
        _DatesAsText.__init__(self)
        Resolver.__init__(self)
        self.used_alias = False

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(AliasEvent):
            event: Any = self.peek_event()
            node: Any = Composer.compose_node(self, parent, index)
            use = copy.copy(node)
            use.start_mark, use.end_mark = event.start_mark, event.end_mark
            use.alias_use = True
            self.used_alias = True
            return use
        return Composer.compose_node(self, parent, index)


def safe_load(text: str) -> Any:
    """What yaml.safe_load reads from `text` (yaml.YAMLError if it is not YAML), but a date YAML
    cannot build stays text."""
    loader: Any = _FastLoader if _FastLoader is not None else _Loader
    return yaml.load(text, Loader=loader)  # noqa: S506 (a safe constructor)


def parse(text: str) -> YamlSource:
    """Raises Unsupported for a file the line editor cannot open (and yaml.YAMLError if not YAML)."""
    lines, endings = _split(text)
    # without an alias the C composer's positions are all right, and it is faster
    loader = _Loader(text) if _ALIAS.search(text) or _FastLoader is None else _FastLoader(text)
    try:
        node = loader.get_single_node()
        if not isinstance(node, MappingNode) or not _openable(node):
            raise Unsupported("the file is not a mapping of settings with one key a line")
        root = YamlEntry(None, (), None, None, 0, key_line=-1, col=-1, end=-1, lead=0, tail=len(lines) - 1)
        root.braces = bool(node.flow_style)
        entries: list[YamlEntry] = []
        root.children = _mapping(node, root, entries, loader)
        if root.children is None:
            raise Unsupported("the top-level mapping has a merge key (<<) or a key that is not plain text")
        loader.construct_object(node, deep=True)  # every value, as yaml.safe_load builds it
        done = loader.constructed_objects
        root.value = done[node]
        for entry in entries:
            entry.value = done[entry._node]  # type: ignore[attr-defined]
    finally:
        loader.dispose()
    source = YamlSource(lines, endings, root, 0, len(lines), getattr(loader, "used_alias", False), 2, 0)
    _own_lines(source, entries)
    source.indent, source.dash = _style(source, entries)
    return source


def _split(text: str) -> tuple[list[str], list[str]]:
    """Lines as YAML counts them (LF or CRLF; not str.splitlines, which also breaks at form feeds)."""
    lines: list[str] = []
    endings: list[str] = []
    parts = text.split("\n")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if last and not part:
            break  # the text ends with a line break
        body, ending = (part[:-1], "\r\n") if part.endswith("\r") and not last else (part, "" if last else "\n")
        if "\r" in body or "\x85" in body or "\u2028" in body or "\u2029" in body:
            raise Unsupported("the file has line breaks other than LF and CRLF")
        lines.append(body)
        endings.append(ending)
    return lines, endings


def _mapping(node: MappingNode, parent: YamlEntry, out: list[YamlEntry], loader: Any) -> dict[Any, SourceEntry] | None:
    """The entries of a block mapping, or None when it cannot be edited key by key."""
    children: dict[Any, SourceEntry] = {}
    for key_node, value_node in node.value:
        if key_node.tag == MERGE or not isinstance(key_node, ScalarNode) or getattr(key_node, "alias_use", False):
            return None
        if key_node.start_mark.line != key_node.end_mark.line or key_node.style in ("|", ">"):
            return None
        key = loader.construct_object(key_node)
        try:
            hash(key)
        except TypeError:
            return None
        start, stop = value_node.start_mark, value_node.end_mark
        entry = YamlEntry(
            key,
            parent.path + (key,),
            None,
            parent,
            len(out) + 1,
            key_line=key_node.start_mark.line,
            col=key_node.start_mark.column,
            key_end=key_node.end_mark.column,
            value_start=(start.line, start.column),
            value_end=(stop.line, stop.column),
            style=value_node.style if isinstance(value_node, ScalarNode) else None,
            key_style=key_node.style or None,
            alias=getattr(value_node, "alias_use", False),
        )
        entry._node = value_node  # type: ignore[attr-defined]
        out.append(entry)
        if isinstance(value_node, MappingNode) and not entry.alias and _openable(value_node):
            entry.children = _mapping(value_node, entry, out, loader)
            entry.braces = bool(value_node.flow_style) and entry.children is not None
            if entry.children is None:  # edited whole: forget the entries found inside it
                del out[out.index(entry) + 1 :]
        entry.flow = bool(getattr(value_node, "flow_style", False)) and not entry.alias
        entry.end = max(entry.key_line, _last_line(value_node))
        if key in children:
            children.pop(key)  # a duplicate key: YAML keeps the last one, so does the tree
        children[key] = entry
    return children


def _openable(node: MappingNode) -> bool:
    """A block mapping, or a {...} mapping written one key a line with its braces on lines of
    their own (GPT-NeoX's style): either can be edited key by key."""
    if not node.value:
        return False
    if not node.flow_style:
        return True
    last = node.start_mark.line  # the `{`
    for key_node, value_node in node.value:
        if key_node.start_mark.line <= last:
            return False
        last = _last_line(value_node)
    return node.end_mark.line > last  # the `}`


def _last_line(node: Node) -> int:
    if getattr(node, "alias_use", False):
        return node.end_mark.line  # type: ignore[no-any-return]
    if isinstance(node, ScalarNode):
        end = node.end_mark
        last: int = end.line if end.column > 0 else end.line - 1
        return max(last, node.start_mark.line)
    if getattr(node, "flow_style", False) or not node.value:
        return node.end_mark.line  # type: ignore[no-any-return]
    if isinstance(node, MappingNode):
        return max(_last_line(node.value[-1][0]), _last_line(node.value[-1][1]))
    assert isinstance(node, SequenceNode)
    return _last_line(node.value[-1])


def _comment_col(line: str) -> int | None:
    """The column of a comment-only line, None for anything else (blank lines included)."""
    stripped = line.lstrip(" \t")
    return len(line) - len(stripped) if stripped.startswith("#") else None


def _leads_in(line: str, col: int) -> bool:
    """A blank line, or a comment at most `col` deep: it can lead into a key at column `col`."""
    column = _comment_col(line)
    return not line.strip() or (column is not None and column <= col)


def _own_lines(source: YamlSource, entries: list[YamlEntry]) -> None:
    lines = source.lines
    for entry in entries:
        entry.lead, entry.tail = entry.key_line, entry.end
    first = entries[0]
    # the file header: everything before the first key up to the last blank line (or `---`) above
    # it; comments that open the file with no blank line before the key are the header too
    blank = max((i for i in range(first.key_line) if _comment_col(lines[i]) is None), default=-1)
    source.header_end = blank + 1 if blank >= 0 else first.key_line
    first.lead = source.header_end
    for before, after in zip(entries, entries[1:]):
        if after.parent is before:
            after.lead = before.key_line + 1  # the first key of a mapping: everything since its parent
            continue
        _split_gap(lines, before, after.key_line, after.col, after)
    last = entries[-1]
    source.trailer_start = _split_gap(lines, last, len(lines), 0, None)
    for entry in reversed(entries):  # a mapping owns what its entries own
        parent = entry.parent
        if isinstance(parent, YamlEntry) and parent.path:
            parent.tail = max(parent.tail, entry.tail)
            parent.end = max(parent.end, entry.end)
        if entry.end < entry.key_line or entry.lead > entry.key_line:
            raise Unsupported("a key's position could not be read")


def _split_gap(lines: list[str], before: YamlEntry, stop: int, col: int, after: YamlEntry | None) -> int:
    """Share the lines between `before`'s value and line `stop` (the next key, at column `col`):
    the run of blank lines and comments at most `col` deep directly above the key leads into it;
    earlier comments go to the deepest entry still open that they are indented into."""
    start = before.end + 1
    cut = stop
    while cut > start and _leads_in(lines[cut - 1], col):
        cut -= 1
    chain: list[YamlEntry] = []  # the entries that close here, deepest first
    node: Any = before
    while isinstance(node, YamlEntry) and node.path and (after is None or node is not after.parent):
        chain.append(node)
        node = node.parent
    depth = 0
    for i in range(start, cut):
        column = _comment_col(lines[i])
        if column is None:
            continue  # a blank line goes with the comment after it
        while depth < len(chain) and chain[depth].col >= column:
            depth += 1
        if depth == len(chain):
            cut = i  # not inside anything that closes here: it leads into the next key
            break
        chain[depth].tail = i
    # blank lines between tail comments stay with them; after the last one they lead on (a `}`
    # closing a mapping stays with it)
    lead = max([before.end] + [max(e.tail, e.end) for e in chain]) + 1
    if after is not None:
        after.lead = lead
    return lead


def _style(source: YamlSource, entries: list[YamlEntry]) -> tuple[int, int]:
    """The mapping indent and list-dash indent the file uses most."""
    indents: dict[int, int] = {}
    dashes: dict[int, int] = {}
    for entry in entries:
        parent = entry.parent
        if isinstance(parent, YamlEntry) and parent.path:
            step = entry.col - parent.col
            indents[step] = indents.get(step, 0) + 1
        if not entry.flow and isinstance(entry.value, list) and entry.value and entry.value_start[0] > entry.key_line:
            dash = entry.value_start[1] - entry.col
            dashes[dash] = dashes.get(dash, 0) + 1
    indent = max(indents, key=lambda k: (indents[k], -k)) if indents else 2
    dash = max(dashes, key=lambda k: (dashes[k], -k)) if dashes else 0
    return (indent if indent > 0 else 2), max(dash, 0)


def inline_comment(line: str, col: int) -> str:
    """The comment that ends `line` after column `col`, when only indicators (`:`, `-`, flow
    punctuation, anchors, tags, block-scalar headers) come before it; '' when there is none."""
    i, n = col, len(line)
    while i < n:
        char = line[i]
        if char in " \t,[]{}:-?":
            i += 1
        elif char == "#":
            return line[i:] if i == 0 or line[i - 1] in " \t" else ""
        elif char in "&!|>" and (i == col or line[i - 1] in " \t"):
            while i < n and line[i] not in " \t":
                i += 1
        else:
            return ""
    return ""


def comments(source: YamlSource, entry: YamlEntry, *, whole: bool) -> list[tuple[int, str]]:
    """The comments on an entry's key line and, with `whole`, on its value's lines: (line, text),
    full-line comments and the comments that end a line, never text inside a multi-line string."""
    value: Node = entry._node  # type: ignore[attr-defined]
    ends: dict[int, int] = {entry.key_line: entry.key_end}
    inside: set[int] = set()
    _ends(value, ends, inside, whole)
    found: list[tuple[int, str]] = []
    for number in range(entry.key_line, (entry.end if whole else entry.key_line) + 1):
        line = source.lines[number]
        if number in ends:
            text = inline_comment(line, ends[number])
            if text:
                found.append((number, text.strip()))
        elif number not in inside and _comment_col(line) is not None:
            found.append((number, line.strip()))
    return found


def own_comments(source: YamlSource, entry: YamlEntry) -> list[tuple[int, str]]:
    """Every comment the entry owns but not its entries (when it is a mapping opened key by key),
    with the blank lines among the comments above it ('' texts)."""
    lines = source.lines
    found = [(i, lines[i].strip()) for i in range(entry.lead, entry.key_line)]
    found += comments(source, entry, whole=entry.children is None)
    if entry.children:
        after = max(c.tail for c in entry.children.values())  # type: ignore[attr-defined]
    else:
        after = entry.end
    found += [(i, lines[i].strip()) for i in range(after + 1, entry.tail + 1) if _comment_col(lines[i]) is not None]
    return found


def _ends(node: Node, ends: dict[int, int], inside: set[int], deep: bool) -> None:
    """Where the last token of each line ends; which lines are inside a multi-line string."""
    start, stop = node.start_mark, node.end_mark
    if getattr(node, "alias_use", False):
        ends[stop.line] = max(ends.get(stop.line, 0), stop.column)
        return
    if isinstance(node, ScalarNode):
        if node.style in ("|", ">"):
            ends[start.line] = max(ends.get(start.line, 0), start.column)  # `key: |  # note`
            inside.update(range(start.line + 1, stop.line + (1 if stop.column > 0 else 0)))
        else:
            inside.update(range(start.line + 1, stop.line + 1))
            ends[stop.line] = max(ends.get(stop.line, 0), stop.column)
        return
    if getattr(node, "flow_style", False):
        ends[stop.line] = max(ends.get(stop.line, 0), stop.column)
    elif start.line in ends:  # a block collection: its first line starts after the key line
        ends[start.line] = max(ends[start.line], start.column)
    if deep:
        for child in _nodes(node):
            _ends(child, ends, inside, deep)


def _nodes(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []
