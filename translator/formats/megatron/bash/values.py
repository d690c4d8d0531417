"""Values of a script read statically: pieces (`Chunk`s) that are known or not (with why), and the
`State` of what the script has set so far (variables, arrays, its arguments)."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

BLANKS = " \t\n"
MAX_WORDS = 100_000  # words one expansion may make ({1..N}, an array): a bound on a hostile file


@dataclass(frozen=True)
class Chunk:
    """A piece of a value: its text (an unknown piece: the expression as written), whether the script
    gives it, the line of each character (a known piece; one line for an unknown one), and why it is
    not known or, for a known one, where it came from when that is worth saying."""

    text: str
    known: bool
    lines: tuple[int, ...]
    why: str = ""
    note: str = ""

    @property
    def line(self) -> int:
        return self.lines[0] if self.lines else 0


Value = tuple[Chunk, ...]


def literal(text: str, line: int, note: str = "") -> Value:
    return (Chunk(text, True, (line,) * max(1, len(text)), note=note),) if text or note else ()


def unknown(text: str, line: int, why: str) -> Value:
    return (Chunk(text, False, (line,), why),)


def text_of(value: Value) -> str:
    return "".join(c.text for c in value)


def is_known(value: Value) -> bool:
    return all(c.known for c in value)


def reasons(value: Value) -> str:
    return "; ".join(dict.fromkeys(c.why for c in value if not c.known and c.why))


@dataclass
class State:
    """What the script has set so far on the path read."""

    file: str
    vars: dict[str, Value] = field(default_factory=dict)
    arrays: dict[str, dict[str, Value]] = field(default_factory=dict)
    positional: list[Value] | None = None  # None: the script's own arguments (not known)
    assigned: dict[str, list[int]] = field(default_factory=dict)  # every line the file sets each name
    sourced: list[str] = field(default_factory=list)  # `source FILE` (line N) not read
    defaults: bool = False  # reading a condition: an unknown value is what bash sees without it
    assumed: list[str] = field(default_factory=list)  # what the defaults read assumed
    holes: dict[str, Chunk] = field(default_factory=dict)  # unknown values inside a string read as shell

    def fork(self) -> "State":
        return State(
            self.file,
            dict(self.vars),
            {k: dict(v) for k, v in self.arrays.items()},
            None if self.positional is None else list(self.positional),
            self.assigned,
            self.sourced,
            self.defaults,
            self.assumed,
            self.holes,
        )

    def adopt(self, other: "State") -> None:
        self.vars, self.arrays, self.positional = other.vars, other.arrays, other.positional

    def assume(self, what: str) -> None:
        if what not in self.assumed:
            self.assumed.append(what)

    # ---- variables
    def lookup(self, name: str, line: int) -> Value | None:
        """A variable's value (an array's element 0), or None when the script has not set it here."""
        if name in self.vars:
            return self.vars[name]
        if name in self.arrays:
            return self.arrays[name].get("0", ())
        return None

    def unset_why(self, name: str, line: int = 0) -> str:
        lines = [n for n in self.assigned.get(name, ())]
        if lines and line and all(n >= line for n in lines):
            lines = []  # set only later in the file: here it is the environment's
        if lines:
            shown = ", ".join(map(str, lines[:6])) + (", ..." if len(lines) > 6 else "")
            return (
                f"{name} is set only on line{'s' if len(lines) > 1 else ''} {shown}, which the run does not reach here"
            )
        source = f", or set by {' or '.join(self.sourced[:2])}, which neoconv does not read" if self.sourced else ""
        return f"{name} is not set in this file (the environment's{source})"

    def set_scalar(self, name: str, value: Value) -> None:
        if name in self.arrays:
            self.arrays[name]["0"] = value
        else:
            self.vars[name] = value

    def set_element(self, name: str, index: str, value: Value) -> None:
        if name in self.vars and name not in self.arrays:
            self.arrays[name] = {"0": self.vars.pop(name)}
        self.arrays.setdefault(name, {})[index] = value

    def set_array(self, name: str, elements: list[Value], append: bool) -> None:
        before = self.arrays.get(name)
        if before is None and name in self.vars:
            before = {"0": self.vars.pop(name)}
        items = list(ordered(before).values()) if append and before else []
        items.extend(elements)
        self.vars.pop(name, None)
        self.arrays[name] = {str(i): v for i, v in enumerate(items)}

    def unset(self, name: str) -> None:
        self.vars.pop(name, None)
        self.arrays.pop(name, None)

    # ---- positional parameters
    def positional_value(self, index: int, line: int) -> Value | None:
        if self.positional is not None:
            return self.positional[index - 1] if 0 < index <= len(self.positional) else None
        return None

    def positional_why(self, index: int) -> str:
        if self.positional is not None:
            return f"${index} is not given to the function"
        return f"${index} is the script's {ordinal(index)} argument"


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def ordered(array: dict[str, Value] | None) -> dict[str, Value]:
    if not array:
        return {}
    return dict(
        sorted(
            array.items(),
            key=lambda kv: (not kv[0].lstrip("-").isdigit(), int(kv[0]) if kv[0].lstrip("-").isdigit() else 0, kv[0]),
        )
    )


# ---- words ------------------------------------------------------------------------------------


def split_at_blanks(value: Value | list[Chunk]) -> list[Value]:
    """A value split at blanks, as an unquoted expansion is (an unknown piece stays in its word)."""
    out: list[list[Chunk]] = [[]]
    for chunk in value:
        if not chunk.known:
            out[-1].append(chunk)
            continue
        last = 0
        for found in re.finditer(r"[^ \t\n]+", chunk.text):
            if found.start() > last or (found.start() > 0 and out[-1]):
                out.append([])
            lines = chunk.lines[found.start() : found.end()] or (chunk.line,)
            out[-1].append(Chunk(found.group(), True, tuple(lines), note=chunk.note))
            last = found.end()
        if last < len(chunk.text):
            out.append([])
    return [tuple(piece) for piece in out if piece]


def one_value(element: Value) -> Value | None:
    """An array element that is one value with blanks (`"0:16 2.4B:320"`, not `"--split 99,1,0"`):
    bash would pass its pieces as several words; it is read as the one value meant, and said so."""
    if not element or not is_known(element):
        return None
    text = text_of(element)
    pieces = text.split()
    if len(pieces) < 2 or text.lstrip().startswith("-"):
        return None
    note = (
        f"one value with blanks ({text!r}): bash expands the array unquoted and would pass {len(pieces)} words; "
        "read as the one value meant"
    )
    return tuple(Chunk(c.text, c.known, c.lines, c.why, note) for c in element)


def noted(value: Value, name: str) -> Value:
    """A variable's known value, each chunk noting the variable (the first line it came from)."""
    if not value or not is_known(value) or any(c.note for c in value):
        return value
    shown = text_of(value)
    if any(c in shown for c in " \t\n") or len(shown) > 60:
        return value  # a string of several arguments: each word's line says where it came from
    note = f"${name} = {shown!r} (line {value[0].line})"
    return tuple(Chunk(c.text, c.known, c.lines, c.why, note) for c in value)


def join_values(values: list[Value]) -> Value:
    out: list[Chunk] = []
    for k, value in enumerate(values):
        if k:
            out.append(Chunk(" ", True, (value[0].line if value else 0,)))
        out.extend(value)
    return tuple(out)


def cut(text: str, size: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= size else text[: size - 3] + "..."


def glob_regex(text: str) -> str:
    return fnmatch.translate(text).removeprefix("(?s:").removesuffix(r")\Z")
