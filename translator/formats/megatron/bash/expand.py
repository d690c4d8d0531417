"""A shell word's value, as bash would expand it, from what the script itself sets: parameters
(`$X`, `${X:-default}`, `${A[@]}`, `${#A[@]}`, `${X%suffix}`, ...), arithmetic, quote removal and
field splitting. Nothing is run and the environment is never read: a value the script does not give
(a variable it does not set, `$1`, `$(command)`) is an unknown chunk that says why.

`${X:-default}` of a variable the script does not set is its default (bash's value when the
environment does not set X), noted. In a condition (`defaults=True`) every unknown value reads as
bash reads it when nothing is given (empty, 0, no arguments), and what was assumed is recorded: the
branch the defaults take.
"""

from __future__ import annotations

import re

from ....core.errors import InputError
from .arith import Unknown, evaluate
from .braced import braced
from .lexer import Part, Word, tokenize
from .values import (
    BLANKS,
    MAX_WORDS,
    Chunk,
    State,
    Value,
    join_values,
    noted,
    one_value,
    ordinal,
    is_known,
    literal,
    ordered,
    reasons,
    split_at_blanks,
    text_of,
    unknown,
)

Field = list[Chunk]
_IFS = re.compile(r"IFS=.?$", re.S)
ECHO_DEPTH = 8  # $(echo ...) read inside one another: deeper is a command's output, not read
MAX_ECHOED = 10_000  # characters of one command substitution read as an echo


def _joined(values: list[Value], joiner: str | Value, line: int) -> Value:
    between = ((Chunk(joiner, True, (line,)),) if joiner else ()) if isinstance(joiner, str) else joiner
    out: list[Chunk] = []
    for k, value in enumerate(values):
        if k:
            out.extend(between)
        out.extend(value)
    return tuple(out)


def _starred(part: Part) -> bool:
    """`${A[*]}`, `$*`, `${*}`: quoted, the elements are ONE word (`${A[@]}`, `$@`: one word each)."""
    return part.text in ("$*", "${*}") or part.text.endswith("[*]}")


class Expander:
    """Expands words against a State; `output` names a command substitution (`$(...)`) for its reason."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.echo_depth = 0  # command substitutions read inside one another (echoed)

    def fields(self, word: Word, split: bool = True) -> list[Field]:
        """The words one shell word becomes (split at blanks where unquoted and `split`)."""
        out: list[Field] = [[]]
        quoted: list[bool] = [False]
        pending = False  # a blank of a split value ends the word before the next piece
        defaults = self.state.defaults

        def add(chunks: Value | list[Chunk], is_quoted: bool) -> None:
            nonlocal pending
            if defaults and any(not c.known for c in chunks):
                for c in chunks:
                    if not c.known:
                        self.state.assume(c.why)
                chunks = [c for c in chunks if c.known]
            if pending and (out[-1] or quoted[-1]) and (chunks or is_quoted):
                out.append([])
                quoted.append(False)
                pending = False
            if chunks or is_quoted:
                pending = False
            out[-1].extend(chunks)
            quoted[-1] |= is_quoted

        for part in word.parts:
            if part.kind == "lit":
                add(self._literal(part, part is word.parts[0]), part.quoted)
                continue
            many = self._array_all(part)
            if many is not None and part.quoted and _starred(part):  # "${A[*]}" / "$*": one word
                add(_joined(many, self.ifs_first(part.line), part.line), True)
                continue
            if many is not None and part.quoted and split:  # "${A[@]}" / "$@": one word per element
                for k, element in enumerate(many):
                    if k:
                        out.append([])
                        quoted.append(True)
                    add(element, True)
                continue
            if many is not None and split and not part.quoted and len(word.parts) == 1:
                for element in many:  # unquoted ${A[@]}: each element split again at blanks
                    whole = one_value(element)
                    if whole is not None:
                        pending = True
                        add(whole, False)
                        pending = True
                        continue
                    for piece in self._split(element):
                        pending = True
                        add(piece, False)
                continue
            value = join_values(many) if many is not None else self.part(part)
            if part.quoted or not split:
                add(value, part.quoted)
                continue
            for chunk in value:
                if not chunk.known:
                    add((chunk,), False)
                    continue
                last = 0
                for found in re.finditer(r"[^ \t\n]+", chunk.text):
                    if found.start() > last or (found.start() > 0 and last == 0):
                        pending = True
                    lines = chunk.lines[found.start() : found.end()] or (chunk.line,)
                    add((Chunk(found.group(), True, tuple(lines), note=chunk.note),), False)
                    last = found.end()
                if last < len(chunk.text):
                    pending = True
            if len(out) > MAX_WORDS:
                raise Unknown("an expansion of more than 100,000 words")
        return [f for f, q in zip(out, quoted) if f or q]

    def ifs_first(self, line: int) -> Value:
        """What joins the elements of "${A[*]}": IFS's first character (bash sets IFS itself at start,
        never from the environment: a space unless the script sets it; nothing when it sets it empty)."""
        ifs = self.state.lookup("IFS", line)
        if ifs is None:
            return literal(" ", line)
        if not is_known(ifs):
            return self.missing("$IFS", line, reasons(ifs))
        return literal(text_of(ifs)[:1], line)

    def _split(self, value: Value) -> list[Value]:
        return split_at_blanks(value)

    def value(self, word: Word) -> Value:
        """The word's value, unsplit (an assignment's right-hand side, a case subject)."""
        found = self.fields(word, split=False)
        return tuple(c for f in found for c in f) if len(found) <= 1 else join_values([tuple(f) for f in found])

    def _literal(self, part: Part, first: bool) -> Value:
        text = part.text
        lines = tuple(part.lines) if part.lines else (part.line,) * max(1, len(text))
        if first and not part.quoted and text.startswith("~"):
            user = re.match(r"~[A-Za-z0-9_.-]*", text)
            assert user is not None
            head = user.group()
            rest = text[len(head) :]
            value = self.missing(head, part.line, "~ is the home directory (the environment's HOME)")
            return value + ((Chunk(rest, True, lines[len(head) :] or (part.line,)),) if rest else ())
        return (Chunk(text, True, lines),) if text or part.quoted else ()

    def missing(self, text: str, line: int, why: str) -> Value:
        """An unknown value: in a condition, what bash sees without it (nothing), assumed."""
        if self.state.defaults:
            self.state.assume(why)
            return ()
        return unknown(text, line, why)

    def _array_all(self, part: Part) -> list[Value] | None:
        """The elements of `${A[@]}`, `${A[*]}`, `$@`, `$*` (None for any other part)."""
        if part.kind != "expr":
            return None
        text = part.text
        if text in ("$@", "$*", "${@}", "${*}"):
            if self.state.positional is None:
                if self.state.defaults:
                    self.state.assume("the script is given no arguments")
                    return []
                return [unknown(text, part.line, "the script's own arguments")]
            return list(self.state.positional)
        found = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\[([@*])\]\}", text)
        if not found:
            return None
        name = found.group(1)
        if name in self.state.arrays:
            return list(ordered(self.state.arrays[name]).values())
        if name in self.state.vars:
            return [self.state.vars[name]]
        return [self.missing(text, part.line, self.state.unset_why(name, part.line))]

    # ---- one part
    def part(self, part: Part) -> Value:
        if part.kind == "hole":
            chunk = self.state.holes[part.text]
            return self.missing(chunk.text, chunk.line, chunk.why)
        if part.kind == "param":
            return self.parameter(part.text, part.line, f"${{{part.text}}}")
        text = part.text
        line = part.line
        if text.startswith("$((") and text.endswith("))"):
            return self.arithmetic(text[3:-2], line, text)
        if text.startswith("$(") or text.startswith("`") or text[:2] in ("<(", ">("):
            inner = text[2:-1] if text[0] in "$<>" else text[1:-1]
            echoed = self.echoed(inner, line) if text[0] in "$`" else None
            if echoed is not None:
                return echoed
            shown = " ".join(inner.split())
            shown = shown if len(shown) <= 50 else shown[:47] + "..."
            return self.missing(text, line, f"`{shown}` is a command's output")
        if text.startswith("${"):
            return self.braced(text[2:-1], line, text)
        if len(text) == 2 and text[0] == "$":  # $1, $#, $?, $$, $!, $@, $*, $-
            return self.parameter(text[1], line, text)
        return self.missing(text, line, f"{text}: a shell expansion")

    def echoed(self, inner: str, line: int) -> Value | None:
        """The output of a command substitution that only echoes words (`$(echo "$A")`, `$(IFS=,; echo
        "${A[*]}")`): bash's echo prints its words joined by blanks, nothing is run. None for any other
        command (a pipe, a redirection, an option, a program), whose output is not known here."""
        from .nodes import Simple
        from .parser import parse_script

        if self.echo_depth >= ECHO_DEPTH or len(inner) > MAX_ECHOED:
            return None  # a hostile nest of $(echo $(echo ...)): its output is not read
        try:
            tree = parse_script(inner, "<$(...)>")
        except InputError:
            return None
        if not tree.items:
            return None
        joiner: str | None = None  # `IFS=,; echo "${A[*]}"`: the assignment is a command of its own, then echo
        *before, (last, background) = tree.items
        for command, bg in before:
            if not isinstance(command, Simple) or bg or command.redirects:
                return None
            assigned = [w for w in command.items if isinstance(w, Word) and w.literal and _IFS.match(w.text)]
            if not assigned or len(assigned) < len(command.items):
                return None
            joiner = assigned[-1].text[4:5]  # bash joins "${A[*]}" with IFS's first character (none when empty)
        if not isinstance(last, Simple) or background or last.redirects:
            return None
        words = [w for w in last.items if isinstance(w, Word)]
        plain = len(words) == len(last.items) and len(words) > 1 and not words[1].text.startswith("-")
        if not plain or words[0].raw != "echo":  # echo's options (-n, -e) and other commands: not read
            return None
        self.echo_depth += 1
        try:
            return self._printed(words[1:], joiner, line)
        finally:
            self.echo_depth -= 1

    def _printed(self, words: list[Word], joiner: str | None, line: int) -> Value:
        """Echo's words; `joiner`: IFS's first character as the substitution itself sets it (None: it does
        not, the script's IFS joins "${A[*]}")."""
        printed: list[Value] = []
        for word in words:
            single = len(word.parts) == 1 and word.parts[0].quoted and joiner is not None
            many = self._array_all(word.parts[0]) if single else None
            if many is not None and _starred(word.parts[0]):  # "${A[*]}": one word, IFS's first
                printed.append(_joined(many, joiner or "", line))
                continue
            printed.extend(tuple(f) for f in self.fields(word))
        return _joined(printed, " ", line)

    def arithmetic(self, inner: str, line: int, shown: str) -> Value:
        expanded = self.inner_value(inner, line)
        if not is_known(expanded):
            return self.missing(shown, line, reasons(expanded) or f"{shown}: not known here")
        try:
            result = evaluate(text_of(expanded), lambda n: self.arith_lookup(n, line), self.arith_assign)
        except Unknown as exc:
            return self.missing(shown, line, exc.why)
        return literal(str(result), line)

    def arith_lookup(self, name: str, line: int) -> str:
        found = self.state.lookup(name, line)
        if found is None:
            if self.state.defaults:
                self.state.assume(self.state.unset_why(name, line))
                return "0"
            raise Unknown(self.state.unset_why(name, line))
        if not is_known(found):
            if self.state.defaults:
                self.state.assume(reasons(found))
                return "0"
            raise Unknown(reasons(found))
        return text_of(found)

    def arith_assign(self, name: str, value: int) -> None:
        self.state.set_scalar(name, literal(str(value), 0))

    def inner_value(self, text: str, line: int) -> Value:
        """Text with expansions inside (an arithmetic expression, a `${X:-word}` operand) expanded,
        as inside double quotes."""
        if "$" not in text and "`" not in text and "'" not in text and '"' not in text and "\\" not in text:
            return literal(text, line)
        try:
            tokens = tokenize('"' + text.replace('"', '\\"') + '"', "<expansion>")
        except Exception:
            return literal(text, line)
        words = [t.word for t in tokens if t.word is not None]
        if len(words) != 1:
            return literal(text, line)
        for p in words[0].parts:
            p.line = line
            p.lines = [line] * len(p.text) if p.kind == "lit" else []
        return self.value(words[0])

    def operand_value(self, text: str, line: int) -> Value:
        """The word of `${X:-word}` (`${X:-"a b"}`, `${X:-${Y:-1}}`): expanded, its quotes removed."""
        if not text or not any(c in text for c in "$`'\"\\"):
            return literal(text, line)
        try:
            tokens = tokenize(text, "<expansion>")
        except Exception:
            return literal(text, line)
        if any(t.kind not in ("word", "newline") or t.word is None for t in tokens):
            return literal(text, line)
        values: list[Value] = []
        for tok in tokens:
            if tok.word is None:
                continue
            for p in tok.word.parts:
                p.line = line
                p.lines = [line] * len(p.text) if p.kind == "lit" else []
            values.append(self.value(tok.word))
        return join_values(values)

    def parameter(self, name: str, line: int, shown: str) -> Value:
        state = self.state
        if name.isdigit():
            index = int(name)
            if index == 0:
                return self.missing(shown, line, "$0 is the script's own path")
            found = state.positional_value(index, line)
            if found is None:
                return self.missing(shown, line, state.positional_why(index))
            return found
        if name == "#":
            if state.positional is not None:
                return literal(str(len(state.positional)), line)
            return self.missing(shown, line, "$# is the number of the script's arguments")
        if name in "@*":
            many = self._array_all(Part("expr", "$" + name, True, line))
            return join_values(many or [])
        if name in "?$!-" or name in ("RANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "EPOCHSECONDS"):
            return self.missing(shown, line, f"{shown} is a value bash decides when the script runs")
        found = state.lookup(name, line)
        if found is None:
            return self.missing(shown, line, state.unset_why(name, line))
        if found and not any(c.known for c in found):  # X=$1: unknown as $X, saying what X holds
            held = text_of(found)
            why = f"{name} = {held} (line {found[0].line}): {reasons(found)}" if held != "$" + name else reasons(found)
            return self.missing("$" + name, found[0].line, why)
        return noted(found, name)

    def braced(self, inner: str, line: int, shown: str) -> Value:
        return braced(self, inner, line, shown)
