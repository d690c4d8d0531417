"""Scanning a shell text character by character: the pieces of a word (`Part`), quotes (`'...'`,
`"..."`, `$'...'`) and expansions (`$NAME`, `${...}`, `$(...)`, `$((...))`, backquotes), each kept as
its source text with the line it is on (lexer.py builds words and tokens from them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ....core.errors import InputError
from .limits import NESTING_LIMIT, too_deep

NAME_START = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
NAME_CHARS = NAME_START + "0123456789"
_C_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


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


class Scanner:
    def __init__(self, text: str, name: str) -> None:
        self.s = text
        self.name = name
        self.i = 0
        self.line = 1
        self.col = 1
        self.nesting = 0  # brackets and quotes open around the place read (a bound on a hostile nest)

    def error(self, message: str, line: int | None = None) -> InputError:
        return InputError(message, file=self.name, line=line or self.line)

    def check_nesting(self, inner: int = 0) -> None:
        """An InputError past NESTING_LIMIT (`inner`: brackets open inside the construct being read)."""
        if self.nesting + inner > NESTING_LIMIT:
            raise self.error(too_deep("shell quotes, expansions and parentheses"))

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def startswith(self, text: str) -> bool:
        return self.s.startswith(text, self.i)

    def advance(self, n: int = 1) -> str:
        out = self.s[self.i : self.i + n]
        breaks = out.count("\n")
        if breaks:
            self.line += breaks
            self.col = len(out) - out.rindex("\n")
        else:
            self.col += len(out)
        self.i += len(out)
        return out


def single(sc: Scanner, lit) -> None:  # type: ignore[no-untyped-def]
    open_line = sc.line
    sc.advance()
    end = sc.s.find("'", sc.i)
    if end < 0:
        raise sc.error("unterminated single quote ' (close it)", open_line)
    if end == sc.i:
        lit("", True, sc.line)
    for piece in sc.s[sc.i : end].split("\n"):  # literal, line by line (for each character's line)
        at = sc.line
        lit(sc.advance(len(piece)), True, at)
        if sc.i < end:
            lit(sc.advance(), True, at)
    sc.advance()


def ansi_c(sc: Scanner, lit) -> None:  # type: ignore[no-untyped-def]
    """`$'...'`: C escapes decoded (\\n, \\t, \\xHH, \\', ...)."""
    open_line = sc.line
    sc.advance()
    out = ""
    while True:
        ch = sc.peek()
        if ch == "":
            raise sc.error("unterminated $'...' quote (close it)", open_line)
        sc.advance()
        if ch == "'":
            break
        if ch == "\\" and sc.peek():
            nxt = sc.advance()
            if nxt == "x":
                digits = ""
                while len(digits) < 2 and sc.peek() and sc.peek() in "0123456789abcdefABCDEF":
                    digits += sc.advance()
                out += chr(int(digits, 16)) if digits else "\\x"
            else:
                out += _C_ESCAPES.get(nxt, "\\" + nxt)
        else:
            out += ch
    lit(out, True, open_line)


def double(sc: Scanner, parts: list[Part], lit) -> None:  # type: ignore[no-untyped-def]
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
            expansion(sc, parts, quoted=True)
        else:
            at = sc.line
            lit(sc.advance(), True, at)
    if empty:
        parts.append(Part("lit", "", True, sc.line, []))


def expansion(sc: Scanner, parts: list[Part], quoted: bool) -> None:
    """`$NAME`, `${...}`, `$1`, `$(...)`, `$((...))` or a backquote: one part (a lone `$` is literal)."""
    line, start = sc.line, sc.i
    if sc.peek() == "`":
        sc.advance()
        while True:
            ch = sc.peek()
            if ch == "":
                raise sc.error("unterminated backquote ` (close it)", line)
            sc.advance(2 if ch == "\\" else 1)
            if ch == "`":
                break
        parts.append(Part("expr", sc.s[start : sc.i], quoted, line))
        return
    nxt = sc.peek(1)
    if nxt == "{":
        sc.advance(2)
        until_closing(sc, "{", "}", line)
        inner = sc.s[start + 2 : sc.i - 1]
        simple = inner and inner[0] in NAME_START and all(c in NAME_CHARS for c in inner)
        parts.append(Part("param" if simple else "expr", inner if simple else sc.s[start : sc.i], quoted, line))
    elif nxt == "(":
        sc.advance(2)
        until_closing(sc, "(", ")", line)
        parts.append(Part("expr", sc.s[start : sc.i], quoted, line))
    elif nxt and nxt in NAME_START:
        sc.advance()
        name = ""
        while sc.peek() and sc.peek() in NAME_CHARS:
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


def skip_quoted(sc: Scanner, line: int) -> None:
    """Past one quoted piece or expansion inside `$(...)`/`${...}` (nested quotes and expansions)."""
    ch = sc.peek()
    if ch == "\\":
        sc.advance(2)
    elif ch == "'":
        end = sc.s.find("'", sc.i + 1)
        if end < 0:
            raise sc.error("unterminated single quote ' (close it)", line)
        sc.advance(end + 1 - sc.i)
    elif ch == '"':
        sc.advance()
        while True:
            c = sc.peek()
            if c == "":
                raise sc.error('unterminated double quote " (close it)', line)
            if c == '"':
                sc.advance()
                return
            if c in "\\$`":
                skip_quoted(sc, line)
            else:
                sc.advance()
    elif ch == "`":
        sc.advance()
        while True:
            c = sc.peek()
            if c == "":
                raise sc.error("unterminated backquote ` (close it)", line)
            sc.advance(2 if c == "\\" else 1)
            if c == "`":
                return
    elif ch == "$" and sc.peek(1) in ("(", "{"):
        opening = sc.peek(1)
        sc.advance(2)
        until_closing(sc, opening, ")" if opening == "(" else "}", line)
    else:
        sc.advance()


def until_closing(sc: Scanner, opening: str, closing: str, line: int) -> None:
    """Past the closing bracket that matches one already opened, over nested quotes and expansions
    (`$(ssh host "test -f \\"$f\\"")`) and, in a command, comments."""
    sc.nesting += 1
    try:
        _past_closing(sc, opening, closing, line)
    finally:
        sc.nesting -= 1


def _past_closing(sc: Scanner, opening: str, closing: str, line: int) -> None:
    depth = 1
    at_word_start = True
    sc.check_nesting()
    while depth:
        ch = sc.peek()
        if ch == "":
            raise sc.error(f"unterminated ${opening}...{closing} (close it)", line)
        if ch in "\\'\"`" or (ch == "$" and sc.peek(1) in ("(", "{")):
            skip_quoted(sc, line)
            at_word_start = False
            continue
        if ch == "#" and opening == "(" and at_word_start:
            end = sc.s.find("\n", sc.i)
            sc.advance((len(sc.s) if end < 0 else end) - sc.i)
            continue
        depth += (ch == opening) - (ch == closing)
        if ch == opening:
            sc.check_nesting(depth - 1)
        at_word_start = ch in " \t\n;&|("
        sc.advance()
