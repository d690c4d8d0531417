"""Write a plan out as YAML text: source lines wherever the plan keeps an entry, fresh text elsewhere.

Entries copied whole keep every character of their lines (quoting, flow style, number spellings,
comments, blank lines); a moved entry's lines are shifted as one block to their new indentation.
A changed value is replaced on its own line when it fits there, so the key and the comment after
it stay. Comments of source entries that have no entry of their own in the target (folded into
another key, or a mapping the migration took apart) become comment lines above the entry that
took over; comments of removed keys go with them, except a comment paragraph set off from the key
by a blank line, which belongs to what follows.
"""

from __future__ import annotations

from typing import Any

from . import yamlemit as emit
from .plan import Mode, Placed, Plan
from .yamlsource import YamlEntry, YamlSource, comments, own_comments

Line = tuple[str, str | None]  # text, its ending (None: the file's usual one)


def render(source: YamlSource, plan: Plan) -> tuple[str, list[tuple[str, str]]]:
    """The rewritten text and the comments that went with removed keys (key, comment)."""
    return _Renderer(source, plan).run()


class _Renderer:
    def __init__(self, source: YamlSource, plan: Plan) -> None:
        self.source = source
        self.lines = source.lines
        self.plan = plan
        self.out: list[Line] = []
        self.extra: dict[int, list[tuple[int, str]]] = {}  # id(placed) -> comment lines riding on it
        self.dropped: list[tuple[str, str]] = []  # (removed key, a comment that went with it)
        self.emitted: dict[int, int] = {}  # source line -> where it went in the output
        self.renamed = 0  # how much longer the last key line's key became
        self.value_end: tuple[int, int] | None = None  # where the last entry's value ends in the output
        self.comma = ""  # what follows a value written fresh: "," between the entries of a {...}

    def run(self) -> tuple[str, list[tuple[str, str]]]:
        for placed in _walk(self.plan.root):
            for rider in placed.riders:
                assert isinstance(rider, YamlEntry)
                self.extra.setdefault(id(placed), []).extend(own_comments(self.source, rider))
        for entry in self.plan.removed:
            assert isinstance(entry, YamlEntry)
            self._remove(entry)
        source, root = self.source, self.plan.root
        self._verbatim(0, source.header_end, 0)
        self._riders(root, 0, False)
        first = next(iter((source.root.children or {}).values()), None)
        self._entries(root, first.col if isinstance(first, YamlEntry) else 0, source.root.braces, source.root)
        if not root.children and not source.root.braces:
            self._generated(["{}"])  # every key removed: still a mapping, not an empty document
        self._verbatim(source.trailer_start, len(self.lines), 0)
        return self._text(), self.dropped

    # -- entries

    def _entries(self, placed: Placed, col: int, flow: bool, origin: YamlEntry | None, shift: int = 0) -> None:
        """The entries of a mapping at column `col` (those that stay in it keep their own column,
        moved by `shift` with it); `flow`: inside {...}, where entries are separated by commas."""
        kids = list((origin.children or {}).values()) if origin is not None else []
        style = kids[0].key_style if kids else ('"' if flow else None)  # type: ignore[attr-defined]
        last = len(placed.children) - 1
        for i, child in enumerate(placed.children):
            self.value_end = None
            stays = origin is not None and child.origin is not None and child.origin.parent is origin
            at = child.origin.col + shift if stays else col  # type: ignore[union-attr]
            self._entry(child, at, i == 0, flow, style, i == last)
            if flow and i < last and self.value_end is not None:
                self._comma(*self.value_end)

    def _entry(self, placed: Placed, col: int, first: bool, flow: bool, style: str | None, last: bool) -> None:
        origin = placed.origin
        self.comma = "," if flow and not last else ""  # for what is written fresh
        if origin is None:
            self._riders(placed, col, first)
            self._new(placed, col, flow, style)
            return
        assert isinstance(origin, YamlEntry)
        shift = col - origin.col
        self._lead(placed, origin, col, first)
        line, column = origin.value_end
        if placed.mode is Mode.COPY:
            self._key_line(placed, origin, shift)
            self._verbatim(origin.key_line + 1, origin.tail + 1, shift)
            if flow and line in self.emitted:  # a value inside {...} ends where its comma goes
                self.value_end = (self.emitted[line], column + shift + (self.renamed if line == origin.key_line else 0))
        elif placed.mode is Mode.OPEN:
            self._key_line(placed, origin, shift)
            kids = list((origin.children or {}).values())
            inner = col + (kids[0].col - origin.col if kids else self.source.indent)  # type: ignore[attr-defined]
            self._entries(placed, inner, flow or origin.braces, origin, shift)
            self._verbatim(_own_tail(origin), origin.tail + 1, shift)
            self.value_end = (self.emitted[line], column + shift) if flow and line in self.emitted else None
        else:
            self._rewritten(placed, origin, col, shift, flow)

    def _lead(self, placed: Placed, origin: YamlEntry, col: int, first: bool) -> None:
        """The lines above a key: its own (shifted with it), and those of entries riding on it."""
        riders = sorted(self.extra.get(id(placed), []))
        shift = col - origin.col
        block = self._indented([r for r in riders if r[0] < origin.lead], col)
        block += [
            (_shift(self.lines[i], shift), self.source.endings[i] or None) for i in range(origin.lead, origin.key_line)
        ]
        block += self._indented([r for r in riders if r[0] >= origin.lead], col)
        parent = origin.parent
        stays = placed.parent is not None and placed.parent.origin is parent and placed.parent.mode is Mode.OPEN
        if first and not (stays and parent and next(iter(parent.children or {}), None) == origin.key):
            while block and not block[0][0].strip():
                block.pop(0)  # blank lines above a key that is now the first of its mapping
        self.out += block

    def _key_line(self, placed: Placed, origin: YamlEntry, shift: int) -> None:
        text = self.lines[origin.key_line]
        self.renamed = 0
        if not _same_key(placed.key, origin.key):
            key = emit.scalar(placed.key, origin.key_style)
            self.renamed = len(key) - (origin.key_end - origin.col)
            text = text[: origin.col] + key + text[origin.key_end :]
        self.emitted[origin.key_line] = len(self.out)
        self.out.append((_shift(text, shift), self.source.endings[origin.key_line] or None))

    def _rewritten(self, placed: Placed, origin: YamlEntry, col: int, shift: int, flow: bool) -> None:
        """A new value under the source's key line (HEAD: a mapping with new entries)."""
        value = placed.value
        text = self.lines[origin.key_line]
        collection = isinstance(value, (dict, list)) and bool(value)
        fits = not collection or origin.flow or flow
        on_key_line = origin.value_start[0] == origin.key_line == origin.end
        if placed.mode is Mode.VALUE and fits and on_key_line and not origin.alias:
            start, stop = origin.value_start[1], origin.value_end[1]
            new = emit.flow(value) if collection else emit.scalar(value, origin.style)
            head = text[:start] + (" " if start == stop and text[start - 1 : start] == ":" else "") + new
            if not _same_key(placed.key, origin.key):  # the key comes before the value on the line
                head = head[: origin.col] + emit.scalar(placed.key, origin.key_style) + head[origin.key_end :]
            self.value_end = (len(self.out), len(head) + shift)
            self.out.append((_shift(head + text[stop:], shift), self.source.endings[origin.key_line] or None))
        else:
            found = comments(self.source, origin, whole=origin.children is None)  # entries inside ride on their own
            note = next((t for n, t in found if n == origin.key_line), "")
            self._comment_lines([c for c in found if c[0] != origin.key_line], col)  # comments of the old value
            key = (
                text[origin.col : origin.key_end]
                if _same_key(placed.key, origin.key)
                else emit.scalar(placed.key, origin.key_style)
            )
            head = " " * col + key + ":"
            if placed.mode is Mode.HEAD:
                self.out.append((head + (" {" if flow else "") + (" " + note if note else ""), None))
                comma = self.comma
                self._entries(placed, col + self.source.indent, flow, None)
                if flow:
                    self._generated([" " * col + "}" + comma])
            elif fits:
                head += " " + (emit.flow(value) if collection else emit.scalar(value)) + self.comma
                self.out.append((head + (" " + note if note else ""), None))
            else:
                self.out.append((head + (" " + note if note else ""), None))
                self._generated(emit.block(value, col, self.source.indent, self.source.dash))
        for i in range(_own_tail(origin), origin.tail + 1):  # its comments, not the `}` of the old value
            if not self.lines[i].strip() or self.lines[i].lstrip().startswith("#"):
                self._verbatim(i, i + 1, shift)

    def _new(self, placed: Placed, col: int, flow: bool, style: str | None) -> None:
        value = placed.value
        key = emit.scalar(placed.key, style)
        if isinstance(value, dict) and value and placed.children:
            comma = self.comma
            self._generated([" " * col + key + (": {" if flow else ":")])
            self._entries(placed, col + self.source.indent, flow, None)
            if flow:
                self._generated([" " * col + "}" + comma])
        elif flow:
            text = emit.flow(value) if isinstance(value, (dict, list)) and value else emit.scalar(value)
            self._generated([" " * col + key + ": " + text + self.comma])
        else:
            self._generated(emit.entry(key, value, col, self.source.indent, self.source.dash))

    def _comma(self, index: int, column: int) -> None:
        """Make sure the value that ends at `column` of output line `index` is followed by a comma."""
        text, ending = self.out[index]
        rest = text[column:]
        if not rest.lstrip(" \t").startswith(","):
            self.out[index] = (text[:column] + "," + rest, ending)

    # -- comments of entries without a place of their own

    def _riders(self, placed: Placed, col: int, first: bool) -> None:
        block = self._indented(sorted(self.extra.get(id(placed), [])), col)
        while first and block and not block[0][0].strip():
            block.pop(0)
        self.out += block

    def _remove(self, entry: YamlEntry) -> None:
        """A removed key's comments go with it; a paragraph set off by a blank line stays behind."""
        lines = self.lines
        blank = max((i for i in range(entry.lead, entry.key_line) if not lines[i].strip()), default=-1)
        detached = [(i, lines[i].strip()) for i in range(entry.lead, blank + 1)]
        host = self._neighbour(entry) if any(text for _, text in detached) else None
        if host is not None:
            self.extra.setdefault(id(host), []).extend(detached)
        kept = {i for i, _ in detached} if host is not None else set()
        key = ".".join(map(str, entry.path))
        self.dropped += [(key, text) for i, text in own_comments(self.source, entry) if text and i not in kept]

    def _neighbour(self, entry: YamlEntry) -> Placed | None:
        parent = entry.parent
        if parent is None:
            return None
        siblings = list((parent.children or {}).values())
        at = siblings.index(entry) if entry in siblings else len(siblings)
        for other in siblings[at + 1 :] + siblings[:at][::-1]:
            host = self.plan.host.get(other)
            if host is not None:
                return host
        return self.plan.host.get(parent) if parent.path else self.plan.root

    # -- lines

    def _verbatim(self, start: int, stop: int, shift: int) -> None:
        endings = self.source.endings
        for i in range(start, stop):
            self.emitted[i] = len(self.out)
            self.out.append((_shift(self.lines[i], shift), endings[i] or None))

    def _comment_lines(self, found: list[tuple[int, str]], col: int) -> None:
        self.out += self._indented(found, col)

    @staticmethod
    def _indented(found: list[tuple[int, str]], col: int) -> list[Line]:
        return [(" " * col + text if text else "", None) for _, text in found]

    def _generated(self, lines: list[str]) -> None:
        self.out.extend((line, None) for line in lines)

    def _text(self) -> str:
        endings = [e for e in self.source.endings if e]
        usual = max(set(endings), key=endings.count) if endings else "\n"
        parts = [text + (ending or usual) for text, ending in self.out]
        if parts and not self.source.endings[-1]:
            parts[-1] = self.out[-1][0]  # the file had no line break at its end: neither has the rewrite
        return "".join(parts)


def _walk(placed: Placed) -> list[Placed]:
    found = [placed]
    for child in placed.children:
        found += _walk(child)
    return found


def _own_tail(entry: YamlEntry) -> int:
    """The first line of the comments after a mapping's last entry that are the mapping's own."""
    kids = list((entry.children or {}).values())
    return max(k.tail for k in kids) + 1 if kids else entry.end + 1  # type: ignore[attr-defined]


def _same_key(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _shift(line: str, by: int) -> str:
    if by > 0 and line:
        return " " * by + line
    if by < 0:
        width = len(line) - len(line.lstrip(" "))
        return line[min(width, -by) :]
    return line
