"""A string read as shell (`eval "$CMD"`, `bash -c '...'`): its tokens, each with the line its
characters came from in the file, and a value not known here kept as an unknown part of its own
(script.py joins the words, marking each unknown value, then reads the string)."""

from __future__ import annotations

import re

from .lexer import Part, Token
from .values import Chunk

HOLE = re.compile("\x00(\\d+)\x00")


def relocate(tokens: list[Token], text: str, char_lines: list[int], line: int, holes: dict[str, Chunk]) -> None:
    """Tokens of a string read as shell: each takes the line its first character came from in the
    file, and a value not known here (a marker in the string) becomes an unknown part again."""
    for tok in tokens:
        tok.line = char_lines[tok.start] if tok.start < len(char_lines) else line
        if tok.word is None:
            continue
        tok.word.line = tok.line
        tok.word.raw = HOLE.sub(lambda m: holes[m.group(1)].text, tok.word.raw)
        parts: list[Part] = []
        for part in tok.word.parts:
            part.line = tok.line
            part.lines = [tok.line] * len(part.lines)
            if part.kind == "lit" and "\x00" in part.text:
                parts.extend(_holes(part, holes))
            else:
                parts.append(part)
        tok.word.parts = parts


def _holes(part: Part, holes: dict[str, Chunk]) -> list[Part]:
    out: list[Part] = []
    at = 0
    for match in HOLE.finditer(part.text):
        if match.start() > at:
            out.append(
                Part("lit", part.text[at : match.start()], part.quoted, part.line, part.lines[at : match.start()])
            )
        chunk = holes[match.group(1)]
        out.append(Part("hole", match.group(1), part.quoted, chunk.line))
        at = match.end()
    if at < len(part.text):
        out.append(Part("lit", part.text[at:], part.quoted, part.line, part.lines[at:]))
    return out
