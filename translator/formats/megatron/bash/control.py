"""Control flow of a script read statically (script.py): `if` and `case` (a test on what the script
does not give reads as bash reads it without those values, and the choice is said; a branch so chosen
that stops the script is not the one read when another goes on), `for`, `for ((;;))`, `while`/`until`
evaluated up to LOOP_LIMIT iterations, `break`/`continue`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from .arith import Unknown, evaluate
from .braced import brace_expand
from .expand import Expander
from .launch import Launch
from .lexer import Word
from .nodes import Case, ForArith, ForIn, If, Loop, Node, Sequence, names_assigned
from .values import Chunk, State, Value, cut, glob_regex, is_known, reasons, text_of, unknown

LOOP_LIMIT = 1_000  # iterations of one loop read; past it the loop's values are unknown
NOT_RUN = None  # the status of a command neoconv does not run


@dataclass
class Reading:
    launches: list[Launch] = field(default_factory=list)
    choices: list[str] = field(default_factory=list)
    not_run: dict[str, list[int]] = field(default_factory=dict)
    sourced: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)  # shell scripts it runs (`exec bash run.sh`): not given, not read
    included: list[str] = field(default_factory=list)  # files given beside it that it sources (read in place)
    # every variable the script sets, in the order it first sets them: an array's elements, a string's value
    variables: dict[str, list[list[Chunk]]] = field(default_factory=dict)
    exited: int | None = None  # the line of an `exit` the reading stopped at
    exited_in: int | None = None  # the line of the `if` whose branch, taken with the script's own values, exits
    order: list[str] = field(default_factory=list)


class Script(Protocol):
    """What control flow (and files.py) needs of script.Script, which calls them: no import back."""

    name: str
    state: State
    expander: Expander
    out: Reading
    files: dict[str, Value]
    pending_choice: tuple[int, str, list[str], bool] | None

    def run(self, node: Node) -> int | None: ...
    def choose(self, text: str) -> None: ...
    def arith_status(self, expression: str, line: int) -> int: ...
    def read_string(self, args: list[list[Chunk]], line: int, what: str) -> int | None: ...


class Exit(Exception):
    def __init__(self, line: int) -> None:
        self.line = line
        self.within: int | None = None  # the innermost `if` whose branch holds it


class Return(Exception):
    pass


class Jump(Exception):
    def __init__(self, kind: str, count: int) -> None:
        self.kind, self.count = kind, count


def condition(sc: Script, test: Sequence) -> tuple[int | None, tuple[int, str, list[str], bool] | None]:
    sc.pending_choice = None
    status = sc.run(test)
    choice = sc.pending_choice
    sc.pending_choice = None
    return status, choice


def if_(sc: Script, node: If) -> int | None:
    taken: int | None = None
    chosen_by: list[tuple[int, str, list[str]]] = []
    not_run: list[tuple[int, Sequence]] = []
    for k, (test, _, line) in enumerate(node.clauses):
        status, choice = condition(sc, test)
        if choice is not None:
            chosen_by.append((line, choice[1], choice[2]))
        if status is NOT_RUN:
            not_run.append((line, test))
        if status is NOT_RUN or status == 0:
            taken = k
            break
    bodies = [body for _, body, _ in node.clauses] + ([node.otherwise] if node.otherwise is not None else [])
    index = taken if taken is not None else (len(node.clauses) if node.otherwise is not None else None)
    if not chosen_by and not not_run:
        try:
            return sc.run(bodies[index]) if index is not None else 0
        except Exit as stop:
            stop.within = stop.within or node.line
            raise
    saved = sc.state.fork()
    try:
        status = sc.run(bodies[index]) if index is not None else 0
        _said(sc, node, index, chosen_by, not_run, None)
        return status
    except Exit as stop:
        others = [k for k in range(len(bodies)) if k != index] + (
            [None] if node.otherwise is None and index is not None else []
        )
        for other in others:
            sc.state.adopt(saved.fork())
            try:
                status = sc.run(bodies[other]) if other is not None else 0
            except Exit:
                continue
            _said(sc, node, other, chosen_by, not_run, stop.line)
            return status
        raise


def _said(
    sc: Script,
    node: If,
    index: int | None,
    chosen_by: list[tuple[int, str, list[str]]],
    not_run: list[tuple[int, Sequence]],
    exits: int | None,
) -> None:
    if index is None:
        branch = "no branch taken"
    elif index < len(node.clauses):
        branch = f"took the branch at line {node.clauses[index][2]}"
    else:
        branch = "took the `else`"
    why = "; ".join(dict.fromkeys(w for _, _, assumed in chosen_by for w in assumed))
    tests = ", ".join(f"`{cut(shown)}` (line {line})" for line, shown, _ in chosen_by)
    said = f"the `if` at line {node.line}: "
    if tests:
        said += f"{tests} depend{'s' if len(chosen_by) == 1 else ''} on values not known here ({why})"
    if not_run:
        said += ("; " if tests else "") + ", ".join(
            f"the test at line {line} runs a command neoconv does not run" for line, _ in not_run
        )
    if exits is not None:
        said += f"; the branch bash takes without them stops the script (exit, line {exits}), so read the one that goes on: {branch}"
    else:
        said += f": read as bash does without them: {branch}"
    sc.out.choices[:] = [
        c for c in sc.out.choices if not any(c.startswith(f"line {line}: ") for line, _, _ in chosen_by)
    ]
    sc.choose(said)


def case(sc: Script, node: Case) -> int | None:
    subject = sc.expander.value(node.word)
    assumed = ""
    if not is_known(subject):
        assumed = reasons(subject)
        subject = tuple(c for c in subject if c.known)
    text = text_of(subject)
    for k, (patterns, body, ending, line) in enumerate(node.arms):
        if any(_matches(sc, text, p) for p in patterns):
            if assumed:
                sc.choose(
                    f"the `case` at line {node.line}: {node.word.raw} is not known here ({assumed}): "
                    f"read as bash does without it: took the pattern at line {line}"
                )
            status = sc.run(body)
            rest = node.arms[k + 1 :]
            while ending == ";&" and rest:
                status = sc.run(rest[0][1])
                ending, rest = rest[0][2], rest[1:]
            return status
    if assumed:
        sc.choose(
            f"the `case` at line {node.line}: {node.word.raw} is not known here ({assumed}): "
            "read as bash does without it: no pattern matches"
        )
    return 0


def _matches(sc: Script, text: str, pattern: Word) -> bool:
    regex = ""
    for part in pattern.parts:
        if part.kind == "lit":
            regex += re.escape(part.text) if part.quoted else glob_regex(part.text)
        else:
            value = sc.expander.part(part)
            if not is_known(value):
                return False
            regex += re.escape(text_of(value)) if part.quoted else glob_regex(text_of(value))
    return re.fullmatch(regex, text, re.S) is not None


def for_in(sc: Script, node: ForIn) -> int | None:
    if node.words is None:
        words: list[Value] | None = list(sc.state.positional) if sc.state.positional is not None else None
        why = "the script's own arguments"
    else:
        words, why = [], ""
        for word in node.words:
            for piece in brace_expand(word):
                for f in sc.expander.fields(piece):
                    if not all(c.known for c in f):
                        why = reasons(tuple(f))
                    words.append(tuple(f))
        if why:
            words = None
    if words is None:
        sc.choose(
            f"the `for` loop at line {node.line} runs over words not known here ({why}): read once, "
            f"{node.name} not known"
        )
        sc.state.set_scalar(
            node.name,
            unknown(
                "$" + node.name, node.line, f"{node.name} is one of the words of the loop at line {node.line} ({why})"
            ),
        )
        return _iteration(sc, node.body)[0]
    status: int | None = 0
    for k, value in enumerate(words):
        if k >= LOOP_LIMIT:
            _unbounded(sc, node.body, node.line)
            break
        sc.state.set_scalar(node.name, value)
        status, stop = _iteration(sc, node.body)
        if stop:
            break
    return status


def _iteration(sc: Script, body: Sequence) -> tuple[int | None, bool]:
    try:
        return sc.run(body), False
    except Jump as jump:
        if jump.count > 1:
            raise Jump(jump.kind, jump.count - 1) from None
        return 0, jump.kind == "break"


def _unbounded(sc: Script, body: Node, line: int) -> None:
    sc.choose(
        f"the loop at line {line} runs more than {LOOP_LIMIT:,} times: read no further; what it sets is not known here"
    )
    for name in names_assigned(body):
        sc.state.set_scalar(
            name,
            unknown(
                "$" + name, line, f"{name} is set by the loop at line {line}, which runs more than {LOOP_LIMIT:,} times"
            ),
        )


def for_arith(sc: Script, node: ForArith) -> int | None:
    status: int | None = 0
    sc.arith_status(node.init, node.line) if node.init.strip() else None
    for k in range(LOOP_LIMIT + 1):
        if k == LOOP_LIMIT:
            _unbounded(sc, node.body, node.line)
            break
        if node.test.strip():
            expanded = sc.expander.inner_value(node.test, node.line)
            try:
                if not is_known(expanded):
                    raise Unknown(reasons(expanded))
                go = evaluate(
                    text_of(expanded), lambda n: sc.expander.arith_lookup(n, node.line), sc.expander.arith_assign
                )
            except Unknown as exc:
                sc.choose(
                    f"the `for ((...))` loop at line {node.line}: `{cut(node.test.strip())}` cannot be "
                    f"evaluated here ({exc.why}): not read"
                )
                break
            if not go:
                break
        status, stop = _iteration(sc, node.body)
        if stop:
            break
        if node.step.strip():
            sc.arith_status(node.step, node.line)
    return status


def loop(sc: Script, node: Loop) -> int | None:
    status: int | None = 0
    for k in range(LOOP_LIMIT + 1):
        if k == LOOP_LIMIT:
            _unbounded(sc, node.body, node.line)
            break
        test, choice = condition(sc, node.test)
        if test is NOT_RUN:
            sc.choose(
                f"the `{'until' if node.until else 'while'}` loop at line {node.line} tests a command "
                "neoconv does not run: not read"
            )
            break
        if (test == 0) == node.until:
            break
        before = (dict(sc.state.vars), {k: dict(v) for k, v in sc.state.arrays.items()}, len(sc.out.launches))
        status, stop = _iteration(sc, node.body)
        if stop:
            break
        if (sc.state.vars, sc.state.arrays, len(sc.out.launches)) == before:
            # nothing changed: read with the values not known here, it never ends (it waits on them)
            sc.choose(
                f"the `{'until' if node.until else 'while'}` loop at line {node.line} changes nothing the "
                "script gives from one round to the next: it waits on values not known here; read no further"
            )
            break
    return status
