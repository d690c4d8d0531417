"""The words Megatron's argparse would get from a file, in three syntaxes (told apart by the first line
that is not a comment):

* an argument file (`*.args`): options and values (`--num-layers 24`), comments, backslash
  continuations;
* a bash script made of arrays (`GPT_MODEL_ARGS=( --num-layers 24 ... )`, `+=(...)`), literal
  assignments (`GPUS_PER_NODE=8`, `export ...`), string variables of arguments (`GPT_ARGS="--num-layers
  24 ..."`) and one launch line (`torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py ${GPT_MODEL_ARGS[@]}
  ...`), as Megatron-LM's examples write them. The launch line decides the order of the arguments and
  which words are the launcher's; without one, the arrays are the arguments, in file order. Any other
  shell code (`if`, `case`, `source`, commands) is refused with its line: neoconv runs nothing;
* Megatron-LM's CI YAML (`MODEL_ARGS:` mapping `--flag: value`, `true` = a bare flag), turned into
  words as its `_run_training.sh` does.

A variable the file assigns a literal value earlier (outside any condition) is resolved; any other
expansion (`$1`, `${X:-y}`, `$(...)`, a variable the file does not set) stays unresolved: neoconv never
reads its own environment. Bash expands arrays unquoted (`${A[@]}`), re-splitting every element: an
element that starts with `--` is split as bash splits it (quote characters inside it stay literal); an
element that is one value with blanks is kept whole, with a note (bash would pass several words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...core.errors import InputError
from ...io.documents import key_line, parse_yaml
from .lexer import Part, Token, Word, tokenize

LAUNCHERS = frozenset({"torchrun", "python", "python3", "deepspeed"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_ARRAY_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}$")
_YAML_FLAG = re.compile(r"^--?[\w.-]+:(\s|$)")
_YAML_START = re.compile(r"""^(---|%|\{|["']?[\w.$/-]+["']?\s*:(\s|$))""")  # a mapping entry, a document marker
EXTRACT = "write the Megatron arguments as an args file (--flag value per line) or as arrays NAME=( ... ) and the launch line"


@dataclass
class Arg:
    """One word argparse would see: its text (an unresolved word: its source text), where it came
    from, and what the reader noted about it."""

    text: str
    raw: str
    resolved: bool
    file: str
    line: int
    note: str = ""
    why: str = ""  # unresolved: the expansions it holds


@dataclass
class Words:
    syntax: str  # args | bash | yaml
    args: list[Arg] = field(default_factory=list)
    launcher: list[Arg] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # yaml: top-level entries besides MODEL_ARGS
    extra_lines: dict[str, int] = field(default_factory=dict)


def syntax_of(text: str) -> str:
    if text.startswith("#!"):
        return "bash"  # a script (`#!/bin/bash` is no comment line to skip)
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if _YAML_FLAG.match(stripped):
            return "yaml"
        if stripped.startswith("-"):
            return "args"
        first = stripped.split()[0]
        if _ASSIGNMENT.match(stripped) or first in LAUNCHERS or first in ("export", "set") or first.endswith("=("):
            return "bash"
        if re.match(r"[A-Za-z_][A-Za-z0-9_]*\+?=\(", stripped):
            return "bash"
        return "yaml" if _YAML_START.match(stripped) else "bash"  # a command line (`pkill -9 x`) is no YAML
    return "args"


def words_of(text: str, name: str) -> Words:
    kind = syntax_of(text)
    if kind == "yaml":
        return _yaml_words(text, name)
    tokens = tokenize(text, name)
    return _args_words(tokens, name) if kind == "args" else _Bash(tokens, name).run()


# ---- argument files -------------------------------------------------------------------------


def _args_words(tokens: list[Token], name: str) -> Words:
    out = Words("args")
    for tok in tokens:
        if tok.kind == "newline":
            continue
        if tok.kind != "word":
            what = f"`{tok.text}(`" if tok.kind == "array" else f"an unquoted `{tok.text}`"
            raise InputError(
                f"{what} is shell syntax; an args file holds options and values only: quote the value, or "
                "write the arrays and the launch line as a bash script (NAME=( ... ))",
                file=name, line=tok.line,
            )  # fmt: skip
        assert tok.word is not None
        out.args.extend(_expand(tok.word, {}, name, split=False))
    return out


# ---- bash scripts of arrays -----------------------------------------------------------------


@dataclass
class _Var:
    """A variable the file assigns: its value as chunks (text, resolved, line): a string of arguments
    (GPT_ARGS="--lr 1e-4 --save $CKPT") keeps its literal words when one expansion is unknown."""

    chunks: list[tuple[str, bool, tuple[int, ...]]]  # text, resolved, the line of each character
    line: int
    raw: str

    @property
    def resolved(self) -> bool:
        return all(ok for _, ok, _ in self.chunks)

    @property
    def text(self) -> str:
        return "".join(t for t, _, _ in self.chunks)


class _Bash:
    def __init__(self, tokens: list[Token], name: str) -> None:
        self.tokens = tokens
        self.name = name
        self.i = 0
        self.vars: dict[str, _Var] = {}
        self.arrays: dict[str, list[Arg]] = {}
        self.command: list[Word] | None = None

    def error(self, message: str, line: int) -> InputError:
        return InputError(message, file=self.name, line=line)

    def run(self) -> Words:
        while self.i < len(self.tokens):
            tok = self.tokens[self.i]
            if tok.kind == "newline" or (tok.kind == "op" and tok.text == ";"):
                self.i += 1
            elif tok.kind == "array":
                self._array(tok)
            elif tok.kind == "word":
                self._command()
            else:
                raise self.error(f"`{tok.text}` is shell code neoconv does not run; {EXTRACT}", tok.line)
        return self._words()

    def _array(self, start: Token) -> None:
        self.i += 1
        name, append = start.text.rstrip("+="), start.text.endswith("+=")
        elements: list[Arg] = []
        while True:
            if self.i >= len(self.tokens):
                raise self.error(f"array {name}=( is not closed with )", start.line)
            tok = self.tokens[self.i]
            self.i += 1
            if tok.kind == "newline":
                continue
            if tok.kind == "op" and tok.text == ")":
                break
            if tok.kind != "word":
                raise self.error(f"`{tok.text}` inside array {name}: {EXTRACT}", tok.line)
            assert tok.word is not None
            ref = self._array_ref(tok.word)
            if ref is not None:  # A+=("${B[@]}"): B's elements as they are
                elements.extend(self._elements(ref, tok.word, tok.line, quoted=True))
            else:
                elements.extend(_expand(tok.word, self.vars, self.name, split=True))
        self.arrays[name] = (self.arrays.get(name, []) if append else []) + elements

    def _command(self) -> None:
        words: list[Word] = []
        line = self.tokens[self.i].line
        while self.i < len(self.tokens):
            tok = self.tokens[self.i]
            if tok.kind == "newline" or (tok.kind == "op" and tok.text == ";"):
                break
            if tok.kind != "word":
                raise self.error(f"`{tok.text}` is shell code neoconv does not run; {EXTRACT}", tok.line)
            assert tok.word is not None
            words.append(tok.word)
            self.i += 1
        first = words[0]
        head = first.text
        if _is_assignment(first):
            for word in words:
                if not _is_assignment(word):
                    raise self.error(f"`{word.raw}` after an assignment runs a command; {EXTRACT}", line)
                self._assign(word)
        elif head == "export" and first.literal:
            for word in words[1:]:
                if _is_assignment(word):
                    self._assign(word)
        elif head == "set" and first.literal:
            return  # shell options (set -x): nothing for the run
        elif head.rsplit("/", 1)[-1] in LAUNCHERS and first.literal:
            if self.command is not None:
                raise self.error(f"a second launch line (the first at line {self.command[0].line}); one run per file", line)
            self.command = words
        else:
            raise self.error(f"`{first.raw}` is shell code neoconv does not run; {EXTRACT}", line)

    def _assign(self, word: Word) -> None:
        name, _, _ = word.parts[0].text.partition("=")
        first = word.parts[0]
        rest = Part("lit", first.text[len(name) + 1 :], first.quoted, first.line, first.lines[len(name) + 1 :])
        value = Word(([rest] if rest.text else []) + word.parts[1:], word.raw[len(name) + 1 :], word.line, word.col)
        self.vars[name] = _Var(_chunks(value, self.vars), word.line, value.raw)

    def _array_ref(self, word: Word) -> str | None:
        if len(word.parts) == 1 and word.parts[0].kind == "expr":
            found = _ARRAY_REF.match(word.parts[0].text)
            if found:
                return found.group(1)
        return None

    def _elements(self, name: str, word: Word, line: int, quoted: bool) -> list[Arg]:
        if name not in self.arrays:
            raise self.error(f"${{{name}[@]}}: the file defines no array {name} before this line", line)
        if quoted:
            return list(self.arrays[name])
        out: list[Arg] = []
        for element in self.arrays[name]:
            out.extend(_resplit(element))
        return out

    def _words(self) -> Words:
        out = Words("bash")
        if self.command is None:
            out.args = [a for elements in self.arrays.values() for element in elements for a in _resplit(element)]
            if not out.args:
                raise InputError(f"no Megatron arguments: the file has no arrays and no launch line; {EXTRACT}", file=self.name)
            return out
        expanded: list[Arg] = []
        for word in self.command[1:]:
            ref = self._array_ref(word)
            if ref is not None:
                expanded.extend(self._elements(ref, word, word.line, quoted=word.parts[0].quoted))
            else:
                expanded.extend(_expand(word, self.vars, self.name, split=True))
        script = next((i for i, a in enumerate(expanded) if a.resolved and a.text.endswith(".py")), None)
        if script is None:
            raise self.error(f"the launch line names no training script (a *.py word); {EXTRACT}", self.command[0].line)
        out.launcher, out.args = expanded[:script], expanded[script + 1 :]
        return out


def _is_assignment(word: Word) -> bool:
    first = word.parts[0] if word.parts else None
    return bool(first and first.kind == "lit" and not first.quoted and _ASSIGNMENT.match(first.text))


def _resplit(element: Arg) -> list[Arg]:
    """An array element expanded unquoted (`${A[@]}`): bash splits it again at blanks."""
    pieces = element.text.split()
    if not element.resolved or len(pieces) < 2:
        return [element]
    if not element.text.lstrip().startswith("--"):
        note = (f"one value with blanks ({element.raw}): bash expands the array unquoted and would pass "
                f"{len(pieces)} words; read as the one value meant")  # fmt: skip
        return [Arg(element.text, element.raw, True, element.file, element.line, _join(element.note, note))]
    out = []
    for piece in pieces:
        note = element.note
        if "'" in piece or '"' in piece:
            note = _join(note, f"from {element.raw}: bash passes the quote characters of {piece} to Megatron literally")
        out.append(Arg(piece, piece, True, element.file, element.line, note))
    return out


# ---- expansion --------------------------------------------------------------------------------


def _lines(part: Part) -> tuple[int, ...]:
    return tuple(part.lines) if part.kind == "lit" and part.lines else (part.line,) * max(1, len(part.text))


def _chunks(word: Word, variables: dict[str, _Var]) -> list[tuple[str, bool, tuple[int, ...]]]:
    """A word's value, unsplit, as chunks (an assignment's right-hand side)."""
    out: list[tuple[str, bool, tuple[int, ...]]] = []
    for part in word.parts:
        known = variables.get(part.text) if part.kind == "param" else None
        if part.kind == "lit":
            out.append((part.text, True, _lines(part)))
        elif known is not None:
            out.extend(known.chunks)
        else:
            out.append((_shown(part), False, (part.line,)))
    return out


def _expand(word: Word, variables: dict[str, _Var], name: str, split: bool) -> list[Arg]:
    """The words one shell word becomes: the file's variables substituted (split at blanks when
    unquoted and `split`, as bash splits them), any other expansion left unresolved."""
    fields: list[list[tuple[str, bool, int]]] = [[]]  # per word: (text, resolved, line of its first character)
    notes: list[str] = []
    for part in word.parts:
        known = variables.get(part.text) if part.kind == "param" else None
        if part.kind == "lit":
            fields[-1].append((part.text, True, _lines(part)[0]))
            continue
        if known is None:
            fields[-1].append((_shown(part), False, part.line))
            continue
        if known.resolved:
            notes.append(f"${part.text} = {known.text!r} (line {known.line})")
        for text, ok, lines in known.chunks:
            if not ok or part.quoted or not split:
                fields[-1].append((text, ok, lines[0]))
                continue
            if text[:1] in (" ", "\t", "\n") and text and fields[-1]:
                fields.append([])  # a leading blank ends the word before it
            for k, found in enumerate(re.finditer(r"[^ \t\n]+|$", text)):
                if k and (found.group() or found.start() < len(text) or text[-1:].isspace()):
                    fields.append([])
                if found.group():
                    fields[-1].append((found.group(), True, lines[min(found.start(), len(lines) - 1)]))
    out = []
    single = len(fields) == 1
    for chunks in fields:
        if not chunks and not single:
            continue  # blanks at either end of a split value make no word
        resolved = all(ok for _, ok, _ in chunks)
        text = "".join(t for t, _, _ in chunks)
        line = chunks[0][2] if chunks else word.line
        why = ", ".join(t for t, ok, _ in chunks if not ok)
        out.append(Arg(text, word.raw if single else text, resolved, name, line, "; ".join(notes), why))
    return out


def _shown(part: Part) -> str:
    return "${" + part.text + "}" if part.kind == "param" else part.text


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


# ---- Megatron's CI YAML ------------------------------------------------------------------------


def _yaml_words(text: str, name: str) -> Words:
    tree = parse_yaml(text, name)
    out = Words("yaml")
    if all(isinstance(k, str) and k.startswith("-") for k in tree):
        flags = tree
    elif isinstance(tree.get("MODEL_ARGS"), dict):
        flags = tree["MODEL_ARGS"]
        for key, value in tree.items():
            if key != "MODEL_ARGS":
                out.extra[str(key)] = value
                out.extra_lines[str(key)] = key_line(text, str(key)) or 1
    else:
        first = next(iter(tree), None)
        raise InputError(
            "not Megatron arguments: no `--flag: value` keys and no MODEL_ARGS mapping of them "
            "(Megatron-LM's CI model_config.yaml)", file=name, line=key_line(text, str(first)) if first else None,
        )  # fmt: skip
    for key, value in flags.items():
        line = key_line(text, str(key)) or 1
        if not isinstance(key, str) or not key.startswith("-"):
            raise InputError(f"{key!r} is not an option (--flag)", file=name, line=line)
        out.args.append(Arg(key, key, True, name, line))
        if value is True:
            continue
        if value is False or value is None or isinstance(value, dict):
            what = "false" if value is False else "no value" if value is None else "a mapping"
            raise InputError(
                f"{key}: {what}: Megatron's CI script passes `{key} {str(value).lower()}` to argparse, which refuses "
                f"it; give a value, `true` for a flag, or remove the key",
                file=name, line=line,
            )  # fmt: skip
        items = value if isinstance(value, list) else [value]
        for item in items:
            out.args.extend(_yaml_value(item, name, line))
    return out


def _yaml_value(value: Any, name: str, line: int) -> list[Arg]:
    """A value as _run_training.sh passes it: unquoted, or in double quotes when it has blanks or
    parentheses (then `eval`)."""
    text = value if isinstance(value, str) else repr(value) if isinstance(value, float) else str(value)
    quoted = any(c in text for c in " |()")
    tokens = tokenize(f'"{text}"' if quoted else text, name)
    words = [t.word for t in tokens if t.kind == "word" and t.word is not None]
    out: list[Arg] = []
    for word in words:
        for arg in _expand(word, {}, name, split=False):
            arg.line = line
            out.append(arg)
    return out
