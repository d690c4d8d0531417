"""Shell words, as bash splits them, with where each came from.

Not `shlex`: in POSIX mode it keeps the newline of a backslash-newline inside a word and, with
comments on, starts a comment at a `#` inside a word. Here, as in bash: words are separated by
unquoted blanks and newlines; a backslash-newline is removed (outside single quotes); `'...'` is
literal; `"..."` groups and allows `\\"`, `\\\\`, `\\$`, `` \\` `` and expansions; `#` starts a
comment only at the start of a word. An expansion (`$NAME`, `${...}`, `$1`, `$(...)`, `$((...))`,
a backquote) is kept as a part of its own: its value is not known here (syntax.py resolves the
file's own literal assignments, never neoconv's environment). Unquoted `(`, `)`, `;`, `&`, `|`,
`<`, `>` are operators; `NAME=(` and `NAME+=(` open a bash array.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...core.errors import InputError

_OPERATORS = "();&|<>"
_PLAIN = re.compile(r"[^\s'\"\\$`();&|<>]+")
_NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
_NAME_CHARS = _NAME_START + "0123456789"


@dataclass
class Part:
    """A piece of a word: literal text (`lit`), a plain parameter `$NAME`/`${NAME}` (`param`, text =
    the name), or any other expansion (`expr`, text = its source). `quoted`: inside double (or
    single) quotes, so an expansion's value is not split into several words."""

    kind: str
    text: str
    quoted: bool
    line: int
    lines: list[int] = field(default_factory=list)  # lit: the source line of each character


@dataclass
class Word:
    parts: list[Part]
    raw: str  # the source text, quotes included
    line: int
    col: int

    @property
    def literal(self) -> bool:
        return all(p.kind == "lit" for p in self.parts)

    @property
    def text(self) -> str:
        """The word after quote removal (expansions as written)."""
        return "".join(p.text if p.kind == "lit" else _source(p) for p in self.parts)


@dataclass
class Token:
    kind: str  # word | op | newline | array (text: "NAME=" or "NAME+=", the parenthesis consumed)
    line: int
    col: int
    word: Word | None = None
    text: str = ""


def _source(part: Part) -> str:
    return "$" + part.text if part.kind == "param" else part.text


class _Scanner:
    def __init__(self, text: str, name: str) -> None:
        self.s = text
        self.name = name
        self.i = 0
        self.line = 1
        self.col = 1

    def error(self, message: str, line: int | None = None) -> InputError:
        return InputError(message, file=self.name, line=line or self.line)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def advance(self, n: int = 1) -> str:
        out = self.s[self.i : self.i + n]
        breaks = out.count("\n")
        if breaks:
            self.line += breaks
            self.col = len(out) - out.rindex("\n")
        else:
            self.col += len(out)
        self.i += n
        return out


def tokenize(text: str, name: str) -> list[Token]:
    """Every token of a shell text, in order; an unterminated quote or expansion is an InputError."""
    sc = _Scanner(text, name)
    tokens: list[Token] = []
    while sc.i < len(sc.s):
        ch = sc.peek()
        if ch in " \t\r":
            sc.advance()
        elif ch == "\\" and sc.peek(1) == "\n":
            sc.advance(2)
        elif ch == "\n":
            tokens.append(Token("newline", sc.line, sc.col))
            sc.advance()
        elif ch == "#":
            end = sc.s.find("\n", sc.i)
            sc.advance((len(sc.s) if end < 0 else end) - sc.i)
        elif ch in _OPERATORS:
            line, col = sc.line, sc.col
            op = sc.advance()
            if op in "&|" and sc.peek() == op:
                op += sc.advance()
            tokens.append(Token("op", line, col, text=op))
        else:
            tokens.append(_word(sc))
    return tokens


def _word(sc: _Scanner) -> Token:
    line, col, start = sc.line, sc.col, sc.i
    parts: list[Part] = []

    def lit(text: str, quoted: bool, at: int) -> None:
        if parts and parts[-1].kind == "lit" and parts[-1].quoted == quoted:
            parts[-1].text += text
            parts[-1].lines.extend([at] * len(text))
        else:
            parts.append(Part("lit", text, quoted, at, [at] * len(text)))

    while sc.i < len(sc.s):
        plain = _PLAIN.match(sc.s, sc.i)
        if plain:  # a run of ordinary characters (no quote, escape, expansion, blank or operator)
            at = sc.line
            lit(sc.advance(plain.end() - sc.i), False, at)
            continue
        ch = sc.peek()
        if ch in " \t\r\n" or ch in _OPERATORS:
            if ch == "(" and _opens_array(parts, sc):
                sc.advance()
                return Token("array", line, col, text=parts[0].text)  # "NAME=" or "NAME+="
            break
        if ch == "\\":
            nxt = sc.peek(1)
            if nxt == "\n":
                sc.advance(2)
                continue
            if nxt == "":
                sc.advance()
                lit("\\", False, sc.line)
                continue
            sc.advance()
            at = sc.line
            lit(sc.advance(), True, at)  # an escaped character is literal, as if quoted
        elif ch == "'":
            open_line = sc.line
            sc.advance()
            end = sc.s.find("'", sc.i)
            if end < 0:
                raise sc.error("unterminated single quote ' (close it)", open_line)
            if end == sc.i:
                parts.append(Part("lit", "", True, sc.line, []))
            for piece in sc.s[sc.i : end].split("\n"):  # literal, line by line (for each character's line)
                at = sc.line
                lit(sc.advance(len(piece)), True, at)
                if sc.i < end:
                    lit(sc.advance(), True, at)
            sc.advance()
        elif ch == '"':
            _double(sc, parts, lit)
        elif ch == "$" or ch == "`":
            _expansion(sc, parts, quoted=False)
        else:
            at = sc.line
            lit(sc.advance(), False, at)
    raw = sc.s[start : sc.i].replace("\\\n", "")
    return Token("word", line, col, word=Word(parts, raw, line, col))


def _opens_array(parts: list[Part], sc: _Scanner) -> bool:
    """`NAME=(` / `NAME+=(`: an unquoted name and `=` right before the parenthesis."""
    if len(parts) != 1 or parts[0].kind != "lit" or parts[0].quoted:
        return False
    text = parts[0].text
    name = text[:-2] if text.endswith("+=") else text[:-1] if text.endswith("=") else ""
    return bool(name) and name[0] in _NAME_START and all(c in _NAME_CHARS for c in name)


def _double(sc: _Scanner, parts: list[Part], lit) -> None:  # type: ignore[no-untyped-def]
    open_line = sc.line
    sc.advance()
    empty = True
    while True:
        ch = sc.peek()
        if ch == "":
            raise sc.error('unterminated double quote " (close it)', open_line)
        if ch == '"':
            sc.advance()
            break
        empty = False
        if ch == "\\":
            nxt = sc.peek(1)
            if nxt == "\n":
                sc.advance(2)
                continue
            if nxt in '$`"\\':
                sc.advance()
                at = sc.line
                lit(sc.advance(), True, at)
                continue
            at = sc.line
            lit(sc.advance(), True, at)
        elif ch == "$" or ch == "`":
            _expansion(sc, parts, quoted=True)
        else:
            at = sc.line
            lit(sc.advance(), True, at)
    if empty:
        parts.append(Part("lit", "", True, sc.line, []))


def _expansion(sc: _Scanner, parts: list[Part], quoted: bool) -> None:
    """`$NAME`, `${...}`, `$1`, `$(...)`, `$((...))` or a backquote: one part (a lone `$` is literal)."""
    line, start = sc.line, sc.i
    if sc.peek() == "`":
        sc.advance()
        end = sc.s.find("`", sc.i)
        if end < 0:
            raise sc.error("unterminated backquote ` (close it)", line)
        sc.advance(end + 1 - sc.i)
        parts.append(Part("expr", sc.s[start : sc.i], quoted, line))
        return
    nxt = sc.peek(1)
    if nxt == "{":
        sc.advance(2)
        _until_closing(sc, "{", "}", line)
        inner = sc.s[start + 2 : sc.i - 1]
        simple = inner and inner[0] in _NAME_START and all(c in _NAME_CHARS for c in inner)
        parts.append(Part("param" if simple else "expr", inner if simple else sc.s[start : sc.i], quoted, line))
    elif nxt == "(":
        sc.advance(2)
        _until_closing(sc, "(", ")", line)
        parts.append(Part("expr", sc.s[start : sc.i], quoted, line))
    elif nxt and nxt in _NAME_START:
        sc.advance()
        name = ""
        while sc.peek() and sc.peek() in _NAME_CHARS:
            name += sc.advance()
        parts.append(Part("param", name, quoted, line))
    elif nxt and nxt in "0123456789@*#?$!-":
        sc.advance(2)
        parts.append(Part("expr", sc.s[start : sc.i], quoted, line))
    else:
        sc.advance()
        if parts and parts[-1].kind == "lit" and parts[-1].quoted == quoted:
            parts[-1].text += "$"
            parts[-1].lines.append(line)
        else:
            parts.append(Part("lit", "$", quoted, line, [line]))


def _until_closing(sc: _Scanner, opening: str, closing: str, line: int) -> None:
    depth = 1
    while depth:
        ch = sc.peek()
        if ch == "":
            raise sc.error(f"unterminated ${opening}...{closing} (close it)", line)
        if ch == "\\":
            sc.advance(2)
            continue
        if ch in "'\"" and opening == "(":
            quote = sc.advance()
            end = sc.s.find(quote, sc.i)
            if end < 0:
                raise sc.error(f"unterminated quote {quote} inside $({closing}", line)
            sc.advance(end + 1 - sc.i)
            continue
        depth += (ch == opening) - (ch == closing)
        sc.advance()
