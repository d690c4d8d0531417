"""A launcher script read statically, the way bash would run it, without running anything and without
reading the environment: assignments (`X=..`, `export`, `declare`, arrays, `+=`), `$((...))` of the
values the script gives, `if`/`case`/`[[ ]]` on them, bounded loops (`for ((i=0; i<N; i++))`, `for x in
...`, `while`) evaluated, functions called, `eval` and `bash -c '...'` strings read as shell, and each
command that launches a Python script recorded (launch.py tells which one trains).

A test whose answer depends on what the script does not give (its arguments, the environment, the
machine: `[ $ENV = dsw ]` with ENV=$1, `[ -f $CKPT ]`) is read as bash reads it when nothing is
given; the choice is said (`choices`). A branch so chosen that stops the script (`exit`) is not taken
when another branch goes on. Commands that are not the launch (`mkdir`, `echo`, `cd`, `pip`, `source`
of a file not given) are not run, only named (`not_run`, `sourced`).
"""

from __future__ import annotations

import re
from typing import Any, Union

from ....core.errors import InputError
from . import control
from .arith import Unknown, evaluate
from .braced import brace_expand
from .conditions import cond, test_words
from .control import NOT_RUN, Exit, Jump, Reading, Return
from .expand import Expander
from .files import run_written
from .launch import NEVER_LAUNCH, Launch, Written, find, shell_string
from .lexer import Part, Token, Word, tokenize
from .limits import RUN_LIMIT, STRING_BUDGET, TooDeep, too_deep
from .nodes import (
    ASSIGNMENT,
    AndOr,
    Arith,
    ArrayAssign,
    Case,
    Compound,
    Cond,
    ForArith,
    ForIn,
    Function,
    Group,
    If,
    Loop,
    Node,
    Pipeline,
    Sequence,
    Simple,
    names_assigned,
)
from .parser import parse_script, parse_tokens
from .strings import relocate
from .values import Chunk, State, Value, cut, is_known, literal, ordered, reasons, text_of, unknown

STEP_LIMIT = 20_000  # simple commands read in all: a hostile file cannot keep the reader busy
DEPTH_LIMIT = 64  # nested function calls, evals and `bash -c` strings
CALL_NESTING = RUN_LIMIT // 2  # a call, eval or sourced file read only with room left for its own blocks
DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})


class Script:
    def __init__(self, name: str, given: dict[str, str] | None = None) -> None:
        self.name = name
        self.given = dict(given or {})  # the other files given with it (path -> text): what it may source
        self.state = State(name)
        self.expander = Expander(self.state)
        self.functions: dict[str, Node] = {}
        self.out = Reading()
        self.steps = 0
        self.depth = 0
        self.nesting = 0  # commands read inside one another (run), across calls, evals and sourced files
        self.string_chars = 0  # characters read as shell from eval / bash -c strings so far (STRING_BUDGET)
        self.holes = self.state.holes
        self.pending_choice: tuple[int, str, list[str], bool] | None = None
        self.groups = 0  # shell words expanded so far (each one's fields share a number)
        self.files: dict[str, Value] = {}  # scripts the script writes with a here-document (files.py)
        self.exported: set[str] = set()  # names `export` (or `declare -x`) gives the commands it runs
        self.prefixed: dict[str, Value] = {}  # `NAME=value cmd`: the command being read gets these too

    # ---- entry
    def read(self, text: str) -> Reading:
        tree = parse_script(text, self.name)
        self.state.assigned = names_assigned(tree)
        try:
            self.run(tree)
        except Exit as stop:
            self.out.exited, self.out.exited_in = stop.line, stop.within
        except (Return, Jump):
            pass
        self.out.sourced = list(self.state.sourced)
        for name in self.out.order:
            if name in self.state.arrays:
                self.out.variables[name] = [list(v) for v in ordered(self.state.arrays[name]).values()]
            elif name in self.state.vars:
                self.out.variables[name] = [list(self.state.vars[name])]
        return self.out

    def _given(self, word: Written) -> str | None:
        """The file given beside this one that `source WORD` names: by its name (`${DIR}/config.sh`: the
        directory may be unknown, the name is written)."""
        tail = word.chunks[-1] if word.chunks else None
        if tail is None or not tail.known:
            return None
        wanted = tail.text.rsplit("/", 1)[-1]
        found = [path for path in self.given if path.replace("\\", "/").rsplit("/", 1)[-1] == wanted]
        return found[0] if len(found) == 1 and wanted else None

    def _include(self, path: str, line: int) -> None:
        """`source FILE` of a file given beside it: what FILE sets, read on its own (never run), is set
        here, each value noted with where FILE sets it; said in the report."""
        short = path.replace("\\", "/").rsplit("/", 1)[-1]
        others = {p: t for p, t in self.given.items() if p != path}
        sub = Script(path, others)
        sub.steps, sub.depth, sub.nesting = self.steps, self.depth + 1, self.nesting
        if sub.depth > DEPTH_LIMIT or sub.nesting >= CALL_NESTING:
            raise InputError(
                f"`source {short}` nests deeper than {DEPTH_LIMIT} files or {CALL_NESTING} commands: a file that sources itself?",
                file=self.name,
                line=line,
            )
        reading = sub.read(self.given[path])
        self.steps = sub.steps

        def here(var: str, value: Value) -> Value:  # its lines are FILE's: said, and placed at the `source` line
            return tuple(
                Chunk(
                    c.text,
                    c.known,
                    (line,) * max(len(c.lines), 1),
                    c.why,
                    f"{short}: {c.note}" if c.note else f"{var} set in {short} (line {c.line})" if c.known else "",
                )
                for c in value
            )

        self.exported |= sub.exported  # (`source`: its exports are this shell's)
        for var, value in sub.state.vars.items():
            self.state.set_scalar(var, here(var, value))
        for var, elements in sub.state.arrays.items():
            self.state.set_array(var, [here(var, v) for v in ordered(elements).values()], False)
        for var in reading.order:
            if var not in self.out.order:
                self.out.order.append(var)
        self.out.included.extend([path, *reading.included])
        self.out.choices.extend(f"{short}: {c}" for c in reading.choices)
        self.choose(f"`source {short}` (line {line}): read, it is given beside the script")

    def choose(self, text: str) -> None:
        if text not in self.out.choices:
            self.out.choices.append(text)

    # ---- commands
    def run(self, node: Node) -> int | None:
        """A command and the commands inside it, RUN_LIMIT inside one another at most; a construct nested
        past its limit (TooDeep) is refused at the command that holds it."""
        self.nesting += 1
        try:
            if self.nesting > RUN_LIMIT:
                raise InputError(
                    too_deep("commands (blocks, pipelines, function calls, eval strings, sourced scripts)", RUN_LIMIT),
                    file=self.name,
                    line=getattr(node, "line", None) or None,
                )
            if isinstance(node, Sequence):
                status: int | None = 0
                for item, background in node.items:
                    status = self.subshell(item) if background else self.run(item)
                return status
            if isinstance(node, Simple):
                return self.simple(node)
            if isinstance(node, AndOr):
                status = self.run(node.first)
                for op, nxt in node.rest:
                    passed = status is NOT_RUN or status == 0
                    if (op == "&&") == passed:
                        status = self.run(nxt)
                return status
            if isinstance(node, Pipeline):
                status = 0
                for command in node.commands:
                    status = self.subshell(command) if len(node.commands) > 1 else self.run(command)
                if node.negated:
                    return NOT_RUN if status is NOT_RUN else int(status == 0)
                return status
            if isinstance(node, If):
                return control.if_(self, node)
            if isinstance(node, Case):
                return control.case(self, node)
            if isinstance(node, ForIn):
                return control.for_in(self, node)
            if isinstance(node, ForArith):
                return control.for_arith(self, node)
            if isinstance(node, Loop):
                return control.loop(self, node)
            if isinstance(node, Group):
                return self.subshell(node.body) if node.subshell else self.run(node.body)
            if isinstance(node, Compound):
                return self.run(node.body)
            if isinstance(node, Function):
                self.functions[node.name] = node.body
                return 0
            if isinstance(node, Arith):
                return self.arith_status(node.expression, node.line)
            if isinstance(node, Cond):
                return self.test(
                    lambda: cond(node.tokens, self.expander), node.line, f"[[ {_shown_tokens(node.tokens)} ]]"
                )
            raise AssertionError(f"unknown node {node!r}")
        except TooDeep as exc:
            raise InputError(too_deep(exc.what), file=self.name, line=getattr(node, "line", None) or None) from None
        except Unknown as exc:  # only a bound raises it this far ({1..N} of more than 100,000 words)
            raise InputError(
                f"{exc.why}: neoconv expands no more of a shell script; write the values out",
                file=self.name,
                line=getattr(node, "line", None) or None,
            ) from None
        finally:
            self.nesting -= 1

    def subshell(self, node: Node) -> int | None:
        saved = self.state.fork()
        try:
            return self.run(node)
        except Exit:
            return 1
        finally:
            self.state.adopt(saved)

    def simple(self, node: Simple) -> int | None:
        self.steps += 1
        if self.steps > STEP_LIMIT:
            raise InputError(
                f"the script runs more than {STEP_LIMIT:,} commands here (loops, functions): neoconv "
                "stops reading it; write the launch line's arguments out",
                file=self.name,
                line=node.line,
            )
        items = node.items
        k = 0
        while k < len(items) and (isinstance(items[k], ArrayAssign) or _is_assignment(items[k])):
            k += 1
        if k == len(items):
            for item in items:
                self.assign(item)
            return 0
        head = items[k]
        if isinstance(head, Word) and head.literal and head.text in DECLARE:
            return self.declare(head.text, items[k + 1 :], node.line)
        fields: list[Written] = []
        for item in items[k:]:
            if isinstance(item, ArrayAssign):
                continue  # `cmd A=(...)`: bash refuses it; nothing for the run
            found = self.expander.fields(item)
            self.groups += 1
            fields.extend(Written(f, item.raw, self.groups, len(found) == 1) for f in found)
        if not fields:
            for item in items[:k]:
                self.assign(item)
            return 0
        saved, self.prefixed = self.prefixed, self._prefixed(items[:k])
        try:
            if node.redirects or self.files:
                handled, status = run_written(self, fields, node.redirects, node.line)
                if handled:
                    return status
            return self.command(fields, node.line)
        finally:
            self.prefixed = saved

    def command(self, fields: list[Written], line: int) -> int | None:
        words = [w.chunks for w in fields]
        name = _known(words[0])
        args = words[1:]
        if name in (":", "true"):
            return 0
        if name == "false":
            return 1
        if name in ("[", "test"):
            operands = args[:-1] if name == "[" and args and _known(args[-1]) == "]" else args
            shown = " ".join(w.shown for w in fields)
            return self.test(lambda: test_words([tuple(a) for a in operands], self.expander), line, shown)
        if name == "exit":
            raise Exit(line)
        if name == "return":
            raise Return()
        if name in ("break", "continue"):
            count = _known(args[0]) if args else "1"
            raise Jump(name, int(count) if count and count.isdigit() else 1)
        if name in ("source", "."):
            what = fields[1].shown if len(fields) > 1 else ""
            given = self._given(fields[1]) if len(fields) > 1 else None
            if given is not None:
                self._include(given, line)
                return 0
            self.state.sourced.append(f"`source {what}` (line {line})")
            return NOT_RUN
        if name == "eval":
            return self.read_string(args, line, "eval")
        if name == "let":
            status = 0
            for arg in args:
                status = self.arith_status(text_of(tuple(arg)) if is_known(tuple(arg)) else "\x00", line)
            return status
        if name == "set":
            if args and _known(args[0]) == "--":
                self.state.positional = [tuple(a) for a in args[1:]]
            return 0
        if name == "shift":
            if self.state.positional is not None:
                count = _known(args[0]) if args else "1"
                self.state.positional = self.state.positional[int(count) if count and count.isdigit() else 1 :]
            return 0
        if name == "unset":
            for arg in args:
                text = _known(arg)
                if text and not text.startswith("-"):
                    self.state.unset(text)
                    self.functions.pop(text, None)
            return 0
        if name == "read":
            for arg in args:
                text = _known(arg)
                if text and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
                    self.state.set_scalar(text, unknown("$" + text, line, f"{text} is read from input (line {line})"))
            return NOT_RUN
        if name is not None and name in self.functions:
            return self.call(name, args, line)
        if name is not None and name.rsplit("/", 1)[-1] in NEVER_LAUNCH:
            self.out.not_run.setdefault(name.rsplit("/", 1)[-1], []).append(line)
            return NOT_RUN
        launch = find(fields, line)
        if launch is not None:
            self.out.launches.append(launch)
            return NOT_RUN
        string = shell_string(words)
        if string is not None:
            saved = self.state.fork()
            for var, value in self.prefixed.items():  # `X=1 bash -c '...'`: the string's shell has X
                self.state.set_scalar(var, value)
            try:
                return self.read_string([string], line, "shell string")
            finally:
                self.state.adopt(saved)
        return self.other_command(name, fields, line)

    def other_command(self, name: str | None, fields: list[Written], line: int) -> int | None:
        """A command that is not the launch: not run, named; a shell script it runs (`exec bash run.sh`) may hold
        the launch: read when it is given beside this one, else named as the file to give."""
        ran = next((w for w in fields if w.chunks and w.chunks[-1].known and w.chunks[-1].text.endswith(".sh")), None)
        given = self._given(ran) if ran is not None else None
        if given is not None and given != self.name:
            self._hand_over(given, line, " ".join(w.shown for w in fields))
            if name == "exec":  # the shell is replaced: nothing after this line runs
                raise Exit(line)
            return NOT_RUN
        shown = name if name is not None else (fields[0].shown or "a command")
        self.out.not_run.setdefault(shown[:40], []).append(line)
        if ran is not None:  # the launch may be in it (a script of exports that ends `exec bash run.sh`)
            self.out.scripts.append(f"{cut(ran.shown)} (line {line})")
        return NOT_RUN

    def _hand_over(self, path: str, line: int, command: str) -> None:
        """`exec bash run.sh` of a script given beside this one: read (never run) in a shell of its own whose
        environment is this script's variables; its launch is this one's, placed at the line that runs it."""
        short = path.replace("\\", "/").rsplit("/", 1)[-1]
        mine = self.name.replace("\\", "/").rsplit("/", 1)[-1]
        sub = Script(path, {p: t for p, t in self.given.items() if p != path})
        sub.steps, sub.depth, sub.nesting = self.steps, self.depth + 1, self.nesting
        if sub.depth > DEPTH_LIMIT or sub.nesting >= CALL_NESTING:
            raise InputError(
                f"`{cut(command)}` nests deeper than {DEPTH_LIMIT} scripts or {CALL_NESTING} commands: scripts that run each other?",
                file=self.name,
                line=line,
            )
        sub.state.vars = self._environment(mine, line)
        sub.exported = set(sub.state.vars)
        unseen = sorted(var for var in self.state.vars if var not in sub.exported)
        reading = sub.read(self.given[path])
        self.steps = sub.steps
        for launch in reading.launches:  # its words placed at this line, each noted with where it is set
            words = [
                Written(
                    list(
                        Chunk(
                            c.text,
                            c.known,
                            (line,) * max(len(c.lines), 1),
                            c.why,
                            c.note or (f"in {short} (line {c.line})" if c.known else ""),
                        )
                        for c in w.chunks
                    ),
                    w.raw,
                    w.group,
                    w.whole,
                )
                for w in launch.words
            ]
            self.out.launches.append(Launch(words, launch.program_at, launch.script_at, line, launch.through))
        self.out.included.extend([path, *reading.included])
        self.out.scripts.extend(reading.scripts)
        self.out.choices.extend(f"{short}: {c}" for c in reading.choices)
        self.choose(
            f"`{cut(command)}` (line {line}): {short} read, it is given beside the script; its environment is what this "
            "script exports"
            + (f", plus {', '.join(list(self.prefixed)[:4])} set on that line for it alone" if self.prefixed else "")
            + (f" (not {', '.join(unseen[:4])}: set, not exported)" if unseen else "")
        )

    def _environment(self, mine: str, line: int) -> dict[str, Value]:
        """The environment a script this one runs starts with: what this one exports (bash exports no arrays)
        and the assignments before the command (`NUM_LAYERS=32 bash run.sh`: for that command alone); each
        value noted with where it is set. The rest of this script's variables it never sees."""

        def said(var: str, value: Value, prefixed: bool) -> Value:
            return tuple(
                Chunk(
                    c.text,
                    c.known,
                    c.lines,
                    c.why,
                    c.note
                    or (
                        (
                            f"{var} set for the command on line {line} of {mine}"
                            if prefixed
                            else f"{var} set in {mine} (line {c.line})"
                        )
                        if c.known
                        else ""
                    ),
                )
                for c in value
            )

        env = {var: said(var, value, False) for var, value in self.state.vars.items() if var in self.exported}
        env.update((var, said(var, value, True)) for var, value in self.prefixed.items())
        return env

    def test(self, evaluate_test: Any, line: int, shown: str) -> int:
        """A test's status; decided by what bash sees without the unknown values when it needs them."""
        try:
            return 0 if evaluate_test() else 1
        except Unknown:
            pass
        self.state.defaults, before = True, len(self.state.assumed)
        try:
            result = evaluate_test()
        except Unknown:
            result = False
        finally:
            self.state.defaults = False
        assumed = self.state.assumed[before:]
        del self.state.assumed[before:]
        self.pending_choice = (line, shown, assumed, bool(result))
        self.choose(
            f"line {line}: `{cut(shown)}` depends on values not known here ({'; '.join(assumed) or 'unknown'}): "
            f"read as bash does without them ({'true' if result else 'false'})"
        )
        return 0 if result else 1

    def arith_status(self, expression: str, line: int) -> int:
        expanded = self.expander.inner_value(expression, line)
        try:
            if not is_known(expanded):
                raise Unknown(reasons(expanded))
            value = evaluate(
                text_of(expanded), lambda n: self.expander.arith_lookup(n, line), self.expander.arith_assign
            )
        except Unknown as exc:
            self.choose(
                f"line {line}: `(( {cut(expression.strip())} ))` cannot be evaluated here ({exc.why}): read as false"
            )
            return 1
        return 0 if value else 1

    # ---- assignments
    def assign(self, item: Union[Word, ArrayAssign]) -> None:
        if isinstance(item, ArrayAssign):
            elements: list[Value] = []
            for word in item.elements:
                match = re.match(r"^\[([^\]]*)\]=", word.text) if word.parts and word.parts[0].kind == "lit" else None
                for piece in brace_expand(word) if not match else [word]:
                    elements.extend(tuple(f) for f in self.expander.fields(piece))
            self.state.set_array(item.name, elements, item.append)
            if item.name not in self.out.order:
                self.out.order.append(item.name)
            return
        name, index, value = self._assigned(item)
        if index is not None:
            key = self.expander.inner_value(index[1:-1], item.line)
            if is_known(key):
                self.state.set_element(name, text_of(key).strip(), value)
            return
        self.state.set_scalar(name, value)
        if name not in self.out.order:
            self.out.order.append(name)

    def _assigned(self, item: Word) -> tuple[str, str | None, Value]:
        """`NAME=word`, `NAME+=word`, `NAME[i]=word`: the name, the index as written, the value it gets."""
        found = ASSIGNMENT.match(item.parts[0].text)
        assert found is not None
        name, index, append = found.group(1), found.group(2), found.group(3)
        first = item.parts[0]
        cut = len(found.group(0))
        rest = Part("lit", first.text[cut:], first.quoted, first.line, first.lines[cut:])
        word = Word(([rest] if rest.text else []) + item.parts[1:], item.raw[cut:], item.line, item.col)
        value = self.expander.value(word) if word.parts else ()
        if append and index is None:
            before = self.state.lookup(name, item.line)
            value = (
                before if before is not None else unknown("$" + name, item.line, self.state.unset_why(name, item.line))
            ) + value
        return name, index, value

    def _prefixed(self, items: list[Union[Word, ArrayAssign]]) -> dict[str, Value]:
        """`NUM_LAYERS=32 bash run.sh`: the variables the assignments before a command give that command's
        environment, for it alone (bash refuses an array there; an element is not exported)."""
        out: dict[str, Value] = {}
        if not items:
            return out
        saved = self.state.fork()  # each is set while the next is expanded (`X=1 Y=$X cmd`: Y is 1), then undone
        try:
            for item in items:
                if isinstance(item, Word):
                    name, index, value = self._assigned(item)
                    if index is None:
                        out[name] = value
                        self.state.set_scalar(name, value)
        finally:
            self.state.adopt(saved)
        return out

    def declare(self, command: str, items: list[Union[Word, ArrayAssign]], line: int) -> int:
        arrays, exported = False, command == "export"
        for item in items:
            if isinstance(item, ArrayAssign) or _is_assignment(item):
                self.assign(item)
                found = ASSIGNMENT.match(item.parts[0].text) if isinstance(item, Word) else None
                if exported and found is not None:
                    self.exported.add(found.group(1))
                continue
            text = item.text
            if text.startswith("-") or text.startswith("+"):
                arrays |= "a" in text or "A" in text
                exported |= text.startswith("-") and "x" in text
                continue
            if exported and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
                self.exported.add(text)
            if arrays and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text) and text not in self.state.arrays:
                self.state.set_array(text, [], False)
        return 0

    # ---- functions, strings read as shell
    def call(self, name: str, args: list[list[Chunk]], line: int) -> int | None:
        if self.depth >= DEPTH_LIMIT or self.nesting >= CALL_NESTING:
            self.choose(
                f"line {line}: `{name}` is called inside more than {DEPTH_LIMIT} calls or {CALL_NESTING} commands: "
                "not read further"
            )
            return NOT_RUN
        saved = self.state.positional
        self.state.positional = [tuple(a) for a in args]
        self.depth += 1
        try:
            return self.run(self.functions[name])
        except Return:
            return 0
        finally:
            self.depth -= 1
            self.state.positional = saved

    def read_string(self, args: list[list[Chunk]], line: int, what: str) -> int | None:
        """`eval WORDS` / `bash -c STRING`: the words joined and read as shell (a value not known here
        stays one word of its own, unknown)."""
        if self.depth >= DEPTH_LIMIT or self.nesting >= CALL_NESTING:
            return NOT_RUN
        text = ""
        char_lines: list[int] = []
        for k, arg in enumerate(args):
            if k:
                text += " "
                char_lines.append(char_lines[-1] if char_lines else line)
            for chunk in arg:
                if chunk.known:
                    text += chunk.text
                    char_lines.extend(
                        chunk.lines[i] if i < len(chunk.lines) else chunk.line for i in range(len(chunk.text))
                    )
                else:
                    key = str(len(self.holes))
                    self.holes[key] = chunk
                    marker = f"\x00{key}\x00"
                    text += marker
                    char_lines.extend([chunk.line] * len(marker))
        self.string_chars += len(text)
        if self.string_chars > STRING_BUDGET:
            self.choose(
                f"line {line}: the {what} would take the script's strings read as shell past "
                f"{STRING_BUDGET:,} characters (a generated or hostile script?): not read"
            )
            return NOT_RUN
        try:
            tokens = tokenize(text, self.name)
        except InputError as exc:
            self.choose(f"line {line}: the {what} is not shell bash could read ({exc.message}): not read")
            return NOT_RUN
        relocate(tokens, text, char_lines, line, self.holes)
        try:
            tree = parse_tokens(tokens, self.name)
        except InputError as exc:
            self.choose(f"line {line}: the {what} is not shell bash could read ({exc.message}): not read")
            return NOT_RUN
        self.state.assigned = {**names_assigned(tree), **self.state.assigned}
        self.depth += 1
        try:
            return self.run(tree)
        finally:
            self.depth -= 1


# ---- helpers ---------------------------------------------------------------------------------


def _is_assignment(item: Any) -> bool:
    if not isinstance(item, Word) or not item.parts:
        return False
    first = item.parts[0]
    return first.kind == "lit" and not first.quoted and ASSIGNMENT.match(first.text) is not None


def _known(field: list[Chunk]) -> str | None:
    return "".join(c.text for c in field) if all(c.known for c in field) else None


def _shown_tokens(tokens: list[Token]) -> str:
    return " ".join(t.word.raw if t.word is not None else t.text for t in tokens)
