"""Shell tokens, as bash splits them, with where each came from.

Not `shlex`: in POSIX mode it keeps the newline of a backslash-newline inside a word and, with
comments on, starts a comment at a `#` inside a word. Here, as in bash: words are separated by
unquoted blanks and newlines; a backslash-newline is removed (outside single quotes); `'...'` is
literal, `$'...'` decodes C escapes; `"..."` groups and allows `\\"`, `\\\\`, `\\$`, `` \\` `` and
expansions; `#` starts a comment only at the start of a word. An expansion (`$NAME`, `${...}`, `$1`,
`$(...)`, `$((...))`, a backquote, `<(...)`) is kept as a part of its own with its source text: what
it stands for is decided later (script.py), never by running anything. Operators (`;`, `&`, `|`,
`&&`, `||`, `;;`, `(`, `)`), redirections (`>`, `2>&1`, `<<EOF` with its here-document's body), an
arithmetic command `(( ... ))` and `NAME=(` / `NAME+=(` (a bash array) are tokens of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .scanner import (
    NAME_CHARS,
    NAME_START,
    Part,
    Scanner,
    ansi_c,
    double,
    expansion,
    single,
    skip_quoted,
    until_closing,
)

_PLAIN = re.compile(r"[^\s'\"\\$`();&|<>]+")
_REDIRECTS = ("&>>", "<<<", "<<-", "&>", ">>", "<<", "<>", ">&", "<&", ">|", "<", ">")
_OPERATORS = (";;&", ";;", ";&", "&&", "||", "|&", ";", "&", "|", "(", ")")


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

    @property
    def quoted(self) -> bool:
        return any(p.quoted for p in self.parts)


@dataclass
class Token:
    kind: str  # word | op | redir | newline | array (text "NAME=" / "NAME+=") | arith (text: inside (( )))
    line: int
    col: int
    word: Word | None = None
    text: str = ""
    start: int = 0  # offsets in the text: a redirection right after a word of digits takes it as its fd
    end: int = 0
    body: str = ""  # a here-document's text
    body_line: int = 0  # the line it starts on
    expand: bool = True  # its delimiter is unquoted: bash expands $... in it


def _source(part: Part) -> str:
    return "$" + part.text if part.kind == "param" else part.text


def tokenize(text: str, name: str) -> list[Token]:
    """Every token of a shell text, in order; an unterminated quote or expansion is an InputError."""
    sc = Scanner(text, name)
    tokens: list[Token] = []
    pending: list[tuple[Token, str, bool]] = []  # here-documents whose body starts after this line
    while sc.i < len(sc.s):
        ch = sc.peek()
        if ch in " \t\r\f\v":
            sc.advance()
        elif ch == "\\" and sc.peek(1) == "\n":
            sc.advance(2)
        elif ch == "\n":
            tokens.append(Token("newline", sc.line, sc.col, start=sc.i, end=sc.i + 1))
            sc.advance()
            for tok, delimiter, strip in pending:
                tok.body_line = sc.line
                tok.body = _here_document(sc, delimiter, strip, tok.line)
            pending.clear()
        elif ch == "#":
            end = sc.s.find("\n", sc.i)
            sc.advance((len(sc.s) if end < 0 else end) - sc.i)
        elif sc.startswith("(("):
            tokens.append(_arithmetic(sc))
        elif ch in "<>" and sc.peek(1) == "(":
            tokens.append(_word(sc))  # process substitution: a word
        elif ch in "<>&" and (redirect := next((r for r in _REDIRECTS if sc.startswith(r)), None)):
            line, col, start = sc.line, sc.col, sc.i
            sc.advance(len(redirect))
            tok = Token("redir", line, col, text=redirect, start=start, end=sc.i)
            tokens.append(tok)
            if redirect in ("<<", "<<-"):
                delimiter, tok.expand = _delimiter(sc, line)
                pending.append((tok, delimiter, redirect == "<<-"))
        elif ch in ";&|()":
            line, col, start = sc.line, sc.col, sc.i
            op = next(o for o in _OPERATORS if sc.startswith(o))
            sc.advance(len(op))
            tokens.append(Token("op", line, col, text=op, start=start, end=sc.i))
        else:
            tokens.append(_word(sc))
    return tokens  # a here-document still open at the end has no body (bash warns, reads it so)


def _delimiter(sc: Scanner, line: int) -> tuple[str, bool]:
    """The word after `<<` (quotes removed): the line that ends the here-document; and whether the
    body is expanded (an unquoted delimiter)."""
    while sc.peek() in (" ", "\t"):
        sc.advance()
    if not sc.peek() or sc.peek() in "\n;&|()<>":
        raise sc.error("`<<` names no delimiter word (a here-document needs one)", line)
    word = _word(sc).word
    assert word is not None
    if word.literal and not word.quoted:
        return word.text, True
    return word.raw.replace("'", "").replace('"', "").replace("\\", ""), False


def _here_document(sc: Scanner, delimiter: str, strip_tabs: bool, line: int) -> str:
    """The lines up to the delimiter's own line (bash warns and ends it at the end of the file)."""
    lines: list[str] = []
    while sc.i < len(sc.s):
        end = sc.s.find("\n", sc.i)
        end = len(sc.s) if end < 0 else end
        text = sc.s[sc.i : end]
        sc.advance(end - sc.i + (1 if end < len(sc.s) else 0))
        shown = text.lstrip("\t") if strip_tabs else text
        if shown.rstrip("\r") == delimiter:
            break
        lines.append(text)
    return "\n".join(lines)


def _arithmetic(sc: Scanner) -> Token:
    """`(( ... ))`: the arithmetic command, its expression kept as text."""
    line, col, start = sc.line, sc.col, sc.i
    sc.advance(2)
    inner_start = sc.i
    depth = 0
    while True:
        ch = sc.peek()
        if ch == "":
            raise sc.error("unterminated (( ... )) (close it with ))", line)
        if ch == ")" and depth == 0 and sc.peek(1) == ")":
            inner = sc.s[inner_start : sc.i]
            sc.advance(2)
            return Token("arith", line, col, text=inner.replace("\\\n", ""), start=start, end=sc.i)
        if ch in "'\"`$\\":
            skip_quoted(sc, line)
            continue
        depth += (ch == "(") - (ch == ")")
        if ch == "(":
            sc.check_nesting(depth + 1)  # inside the (( )) itself
        sc.advance()


def _word(sc: Scanner) -> Token:
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
        if ch in "<>" and sc.peek(1) == "(" and not parts:  # process substitution <(cmd): its output's path
            at, begin = sc.line, sc.i
            sc.advance(2)
            until_closing(sc, "(", ")", at)
            parts.append(Part("expr", sc.s[begin : sc.i], False, at))
            continue
        if ch in " \t\r\n\f\v" or ch in ";&|()<>":
            if ch == "(" and _opens_array(parts, sc):
                sc.advance()
                return Token("array", line, col, text=parts[0].text, start=start, end=sc.i)  # "NAME=" or "NAME+="
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
            single(sc, lit)
        elif ch == '"':
            double(sc, parts, lit)
        elif ch == "$" and sc.peek(1) == "'":
            sc.advance()
            ansi_c(sc, lit)
        elif ch == "$" and sc.peek(1) == '"':
            sc.advance()  # $"..." (a locale's translation): the text itself
            double(sc, parts, lit)
        elif ch == "$" or ch == "`":
            expansion(sc, parts, quoted=False)
        else:
            at = sc.line
            lit(sc.advance(), False, at)
    raw = sc.s[start : sc.i].replace("\\\n", "")
    return Token("word", line, col, word=Word(parts, raw, line, col), start=start, end=sc.i)


def _opens_array(parts: list[Part], sc: Scanner) -> bool:
    """`NAME=(` / `NAME+=(`: an unquoted name and `=` right before the parenthesis."""
    if len(parts) != 1 or parts[0].kind != "lit" or parts[0].quoted:
        return False
    text = parts[0].text
    name = text[:-2] if text.endswith("+=") else text[:-1] if text.endswith("=") else ""
    return bool(name) and name[0] in NAME_START and all(c in NAME_CHARS for c in name)
