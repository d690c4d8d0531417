"""The tree of a bash script (parser.py builds it, script.py reads it): simple commands, pipelines,
`&&`/`||` lists, `if`, `case`, `for`, `while`/`until`, groups, functions, `(( ))` and `[[ ]]`."""

from __future__ import annotations

from dataclasses import dataclass, field
import re
from typing import Any, Union

from .lexer import Part, Token, Word

ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?)=")  # NAME=, NAME+=, NAME[i]=


@dataclass
class ArrayAssign:
    name: str
    append: bool
    elements: list[Word]
    line: int


@dataclass
class Redirect:
    op: str
    target: Word | None  # none for a here-document (its body is the input)
    line: int
    body: str = ""
    body_line: int = 0
    expand: bool = True  # a here-document whose $... bash expands


@dataclass
class Simple:
    """A simple command: its words and `NAME=( ... )` arrays in order, and its redirections."""

    items: list[Union[Word, ArrayAssign]]
    redirects: list[Redirect]
    line: int


@dataclass
class Pipeline:
    commands: list["Node"]
    negated: bool
    line: int


@dataclass
class AndOr:
    first: "Node"
    rest: list[tuple[str, "Node"]]  # ("&&" | "||", the command after it)
    line: int


@dataclass
class Sequence:
    items: list[tuple["Node", bool]] = field(default_factory=list)  # (command, run in the background)
    line: int = 0


@dataclass
class If:
    clauses: list[tuple[Sequence, Sequence, int]]  # (test, body, line of its `if`/`elif`)
    otherwise: Sequence | None
    line: int


@dataclass
class Loop:
    until: bool
    test: Sequence
    body: Sequence
    line: int


@dataclass
class ForIn:
    name: str
    words: list[Word] | None  # None: `for x; do` (the script's arguments)
    body: Sequence
    line: int


@dataclass
class ForArith:
    init: str
    test: str
    step: str
    body: Sequence
    line: int


@dataclass
class Case:
    word: Word
    arms: list[tuple[list[Word], Sequence, str, int]]  # (patterns, body, ;; | ;& | ;;&, line)
    line: int


@dataclass
class Group:
    body: Sequence
    subshell: bool
    line: int


@dataclass
class Function:
    name: str
    body: "Node"
    line: int


@dataclass
class Arith:
    expression: str
    line: int


@dataclass
class Cond:
    """`[[ ... ]]`: its words and operators as written."""

    tokens: list[Token]
    line: int


@dataclass
class Compound:
    """A compound command with redirections after it (`done < file`, `} > log`)."""

    body: "Node"
    redirects: list[Redirect]
    line: int


Node = Union[Simple, Pipeline, AndOr, Sequence, If, Loop, ForIn, ForArith, Case, Group, Function, Arith, Cond, Compound]


def names_assigned(tree: Any) -> dict[str, list[int]]:
    """Every name the script sets anywhere, with the lines (a variable unset on the path read is then
    named as set elsewhere, not as the environment's)."""
    found: dict[str, list[int]] = {}

    def walk(node: Any) -> None:
        if isinstance(node, ArrayAssign):
            found.setdefault(node.name, []).append(node.line)
        elif isinstance(node, Word):
            match = ASSIGNMENT.match(node.parts[0].text) if node.parts and node.parts[0].kind == "lit" else None
            if match and not node.parts[0].quoted:
                found.setdefault(match.group(1), []).append(node.line)
        elif isinstance(node, ForIn):
            found.setdefault(node.name, []).append(node.line)
            walk(node.body)
        elif isinstance(node, (list, tuple)):
            for item in node:
                walk(item)
        elif hasattr(node, "__dataclass_fields__") and not isinstance(node, (Token, Part)):
            for name in node.__dataclass_fields__:
                if name not in ("line",):
                    walk(getattr(node, name))

    walk(tree)
    return {name: sorted(set(lines)) for name, lines in found.items()}
