"""`${...}` with an operator, an index, a length or an indirection (`${X:-word}`, `${A[i]}`,
`${#A[@]}`, `${!A[@]}`, `${X%.*}`, `${X//a/b}`, `${X^^}`, `${X:1:2}`), and brace expansion (`{0..7}`,
`{a,b}`), as bash expands them, on values the script gives."""

from __future__ import annotations

import fnmatch
import re
from typing import Protocol

from .arith import Unknown, evaluate
from .lexer import Part, Word
from .limits import NESTING_LIMIT, TooDeep
from .values import MAX_WORDS, Chunk, State, Value, is_known, join_values, literal, ordered, ordinal, reasons, text_of


class Expander(Protocol):
    """What these expansions need of expand.Expander (which calls them): no import back."""

    state: State

    def missing(self, text: str, line: int, why: str) -> Value: ...
    def parameter(self, name: str, line: int, shown: str) -> Value: ...
    def inner_value(self, text: str, line: int) -> Value: ...
    def operand_value(self, text: str, line: int) -> Value: ...
    def arith_lookup(self, name: str, line: int) -> str: ...
    def arith_assign(self, name: str, value: int) -> None: ...
    def _array_all(self, part: Part) -> list[Value] | None: ...


_PARAM = re.compile(
    r"^(?P<len>#)?(?P<bang>!)?(?P<name>[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])"
    r"(?:\[(?P<index>[^\]]*)\])?(?P<rest>.*)$",
    re.S,
)
_OPERATOR = re.compile(r"^(:?[-=+?])|^(##|#|%%|%)|^(//|/#|/%|/)|^(\^\^|\^|,,|,)|^(:)", re.S)


def braced(ex: Expander, inner: str, line: int, shown: str) -> Value:
    """`${...}` with an operator, an index, a length, an indirection."""
    match = _PARAM.match(inner)
    if not match:
        return ex.missing(shown, line, f"{shown}: a shell expansion neoconv does not read")
    name, index, rest = match.group("name"), match.group("index"), match.group("rest")
    if match.group("len"):
        if rest:
            return ex.missing(shown, line, f"{shown}: a shell expansion neoconv does not read")
        if index in ("@", "*"):
            if name in ex.state.arrays:
                return literal(str(len(ex.state.arrays[name])), line)
            return (
                literal("1", line) if name in ex.state.vars else ex.missing(shown, line, ex.state.unset_why(name, line))
            )
        value = (indexed(ex, name, index, line, shown) or ()) if index is not None else ex.parameter(name, line, shown)
        return literal(str(len(text_of(value))), line) if is_known(value) else ex.missing(shown, line, reasons(value))
    if match.group("bang"):
        if index in ("@", "*"):  # ${!A[@]}: the indices
            keys = list(ordered(ex.state.arrays.get(name, {})))
            return literal(" ".join(keys), line)
        target = ex.parameter(name, line, shown)
        if not is_known(target) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+", text_of(target)):
            return ex.missing(shown, line, reasons(target) or f"{shown}: an indirection neoconv does not follow")
        return ex.parameter(text_of(target), line, shown)
    if index is not None:
        if index in ("@", "*"):
            base = join_values(ex._array_all(Part("expr", f"${{{name}[@]}}", True, line)) or [])
            set_ = name in ex.state.arrays or name in ex.state.vars
        else:
            found = indexed(ex, name, index, line, shown)
            set_ = found is not None
            base = (
                found
                if found is not None
                else ()
                if rest
                else ex.missing(shown, line, f"{name}[{index}] is not set in this file")
            )
    else:
        set_ = _is_set(ex, name, line)
        # unset: the operators that test it (-, =, +, ?) decide; any other (%%, #, /, ^, :n) works on
        # the environment's value, not known here (in a test: what bash sees without it, assumed)
        tests_unset = re.match(r":?[-=+?]", rest or "") is not None
        base = ex.parameter(name, line, shown) if set_ or not rest or not tests_unset else ()
    if not rest:
        return base
    return operator(ex, name, base, set_, rest, line, shown)


def _is_set(ex: Expander, name: str, line: int) -> bool:
    if name.isdigit():
        return ex.state.positional_value(int(name), line) is not None
    if name in "@*#":
        return ex.state.positional is not None
    return ex.state.lookup(name, line) is not None


def indexed(ex: Expander, name: str, index: str, line: int, shown: str) -> Value | None:
    """An element's value (None: the script does not set it)."""
    key = ex.inner_value(index, line)
    if not is_known(key):
        return ex.missing(shown, line, reasons(key))
    text = text_of(key).strip()
    if name in ex.state.arrays and not text.lstrip("-").isdigit():
        try:  # an indexed array's subscript is arithmetic
            text = str(evaluate(text, lambda n: ex.arith_lookup(n, line), ex.arith_assign))
        except Unknown as exc:
            return ex.missing(shown, line, exc.why)
    array = ex.state.arrays.get(name)
    if array is None:
        found = ex.state.vars.get(name)
        return found if found is not None and text == "0" else None
    if text.lstrip("-").isdigit() and int(text) < 0 and array:
        elements = list(ordered(array).values())
        position = len(elements) + int(text)
        return elements[position] if position >= 0 else None
    return array.get(text)


def operator(ex: Expander, name: str, base: Value, set_: bool, rest: str, line: int, shown: str) -> Value:
    op = _OPERATOR.match(rest)
    if not op:
        return ex.missing(shown, line, f"{shown}: a shell expansion neoconv does not read")
    kind = op.group(0)
    operand_text = rest[len(kind) :]
    empty = set_ and is_known(base) and text_of(base) == ""
    if kind in (":-", "-", ":=", "="):
        use_default = not set_ or (kind.startswith(":") and empty)
        if not use_default:
            return base
        default = ex.operand_value(operand_text, line)
        if kind in (":=", "=") and not name.isdigit():
            ex.state.set_scalar(name, default)
        if ex.state.defaults:
            return default
        who = f"the script's {ordinal(int(name))} argument" if name.isdigit() else f"the environment sets {name}"
        note = f"{shown}: its default {text_of(default)!r}, unless {who}" if is_known(default) else ""
        return tuple(Chunk(c.text, c.known, c.lines, c.why, note if c.known else c.note) for c in default) or literal(
            "", line, note
        )
    if kind in (":+", "+"):
        if set_ and not (kind == ":+" and empty):
            if not is_known(base) and not ex.state.defaults:
                return ex.missing(shown, line, reasons(base))
            return ex.operand_value(operand_text, line)
        return ()
    if kind in (":?", "?"):
        if set_ and not (kind == ":?" and empty):
            return base
        return ex.missing(shown, line, f"{shown}: bash stops the script when {name} is not given")
    if not is_known(base):
        return base if ex.state.defaults else ex.missing(shown, line, reasons(base))
    text = text_of(base)
    pattern = ex.operand_value(operand_text, line)
    if not is_known(pattern) and kind not in ("^^", "^", ",,", ","):
        return ex.missing(shown, line, reasons(pattern))
    if kind in ("#", "##", "%", "%%"):
        result = _trim(text, text_of(pattern), kind)
    elif kind in ("//", "/#", "/%", "/"):
        pat, _, replacement = operand_text.partition("/")
        result = _replace(
            text, text_of(ex.operand_value(pat, line)), text_of(ex.operand_value(replacement, line)), kind
        )
    elif kind in ("^^", "^", ",,", ","):
        result = {
            "^^": text.upper(),
            "^": text[:1].upper() + text[1:],
            ",,": text.lower(),
            ",": text[:1].lower() + text[1:],
        }[kind]
    else:  # ${X:offset:length}
        piece = _substring(ex, text, operand_text, line, shown)
        if piece is None:
            return ex.missing(shown, line, f"{shown}: an offset neoconv cannot evaluate")
        result = piece
    return literal(result, base[0].line if base else line)


def _substring(ex: Expander, text: str, spec: str, line: int, shown: str) -> str | None:
    offset, _, length = spec.partition(":")
    try:
        start = evaluate(offset, lambda n: ex.arith_lookup(n, line), ex.arith_assign)
        size = evaluate(length, lambda n: ex.arith_lookup(n, line), ex.arith_assign) if length else None
    except Unknown:
        return None
    if start < 0:
        start = max(0, len(text) + start)
    if size is None:
        return text[start:]
    return text[start : start + size] if size >= 0 else text[start : len(text) + size]


def _glob(pattern: str) -> str:
    return fnmatch.translate(pattern).removesuffix(r"\Z").removeprefix("(?s:").removesuffix(")")


def _trim(text: str, pattern: str, kind: str) -> str:
    regex = re.compile(_glob(pattern), re.S)
    spans = range(len(text) + 1)
    if kind in ("#", "##"):
        order = spans if kind == "#" else reversed(spans)
        for end in order:
            if regex.fullmatch(text[:end]):
                return text[end:]
        return text
    order = reversed(spans) if kind == "%" else spans
    for start in order:
        if regex.fullmatch(text[start:]):
            return text[:start]
    return text


def _replace(text: str, pattern: str, replacement: str, kind: str) -> str:
    if not pattern:
        return text
    regex = re.compile(_glob(pattern), re.S)
    if kind == "/#":
        for end in range(len(text), -1, -1):
            if regex.fullmatch(text[:end]):
                return replacement + text[end:]
        return text
    if kind == "/%":
        for start in range(len(text) + 1):
            if regex.fullmatch(text[start:]):
                return text[:start] + replacement
        return text
    out, i, done = "", 0, False
    while i <= len(text):
        match = None
        if not done:
            for end in range(len(text), i, -1):  # the longest match at i, as bash takes it
                if regex.fullmatch(text[i:end]):
                    match = end
                    break
        if match is not None:
            out += replacement
            i = match
            done = kind == "/"
            continue
        if i < len(text):
            out += text[i]
        i += 1
    return out


_SEQUENCE = re.compile(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?")


def brace_expand(word: Word, depth: int = 0) -> list[Word]:
    """`{0..7}`, `{a,b}` in an unquoted literal part (a `for` list, an array): the words it makes
    (`depth`: the braces expanded before this one in the word, each by a call of its own)."""
    if depth > NESTING_LIMIT:
        raise TooDeep("brace expansions ({a,b} inside or beside one another)")
    for k, part in enumerate(word.parts):
        if part.kind != "lit" or part.quoted:
            continue
        found = _brace_group(part.text)
        if found is None:
            continue
        start, end, items = found
        out: list[Word] = []
        for item, span in items:
            text = part.text[:start] + item + part.text[end:]
            item_lines = part.lines[span[0] : span[1]] if span else [part.line] * len(item)
            lines = part.lines[:start] + item_lines + part.lines[end:]
            parts = word.parts[:k] + [Part("lit", text, False, part.line, lines)] + word.parts[k + 1 :]
            out.extend(brace_expand(Word(parts, word.raw, word.line, word.col), depth + 1))
            if len(out) > MAX_WORDS:
                raise Unknown("a brace expansion of more than 100,000 words")
        return out
    return [word]


def _brace_group(text: str) -> tuple[int, int, list[tuple[str, tuple[int, int] | None]]] | None:
    """The first `{...}` bash expands in an unquoted text, outermost first (`{a,{b,c}}`: a, b, c): its
    start, its end and its items (each with where it is in the text, none for a sequence's numbers). A
    `{` whose braces hold no comma at their own level and no `x..y` is literal (`{{a,b}}`: {a} {b})."""
    closing: dict[int, int] = {}
    commas: dict[int, list[int]] = {}
    open_at: list[int] = []
    for i, ch in enumerate(text):  # one pass: each `{` with its `}` and the commas at its level
        if ch == "{":
            open_at.append(i)
            commas[i] = []
        elif ch == "}" and open_at:
            closing[open_at.pop()] = i
        elif ch == "," and open_at:
            commas[open_at[-1]].append(i)
    for start in sorted(closing):
        end = closing[start]
        if commas[start]:
            bounds = [start, *commas[start], end]
            return start, end + 1, [(text[a + 1 : b], (a + 1, b)) for a, b in zip(bounds, bounds[1:])]
        sequence = _SEQUENCE.fullmatch(text, start + 1, end)
        if sequence:
            a, b = int(sequence.group(1)), int(sequence.group(2))
            step = abs(int(sequence.group(3) or 1)) or 1
            if abs(b - a) // step > MAX_WORDS:
                raise Unknown(f"{text[start : end + 1]}: more than 100,000 words")
            numbers = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
            return start, end + 1, [(str(n), None) for n in numbers]
    return None
