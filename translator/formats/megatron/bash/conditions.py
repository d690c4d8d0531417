"""`[ ... ]`, `test ...` and `[[ ... ]]` as bash evaluates them, on values the script gives: string
and integer comparisons, `-z`/`-n`, `-v`, `!`, `-a`/`-o`, `&&`/`||`, parentheses, glob patterns
(`[[ $x == --lr* ]]`) and `=~`. A file test (`-f`, `-d`, ...) asks about the machine the script runs
on: it is Unknown, as is a comparison with a value the script does not give (script.py then reads
the branch bash takes when nothing is given, and says so).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Callable

from .arith import Unknown, evaluate
from .expand import Expander
from .limits import NESTING_LIMIT, TooDeep
from .values import Value, is_known, reasons, text_of
from .lexer import Token, Word

_FILE_TESTS = frozenset("abcdefghkprstuwxGLNOS")
_STRING_OPS = frozenset({"=", "==", "!=", "<", ">"})
_INT_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_FILE_BINARY = frozenset({"-nt", "-ot", "-ef"})


_STATE: list[Expander] = []  # the expander of the test under way (its state says whether to read defaults)


def _known(value: Value) -> str:
    if not is_known(value):
        state = _STATE[-1].state if _STATE else None
        if state is None or not state.defaults:
            raise Unknown(reasons(value) or "a value not known here")
        for chunk in value:
            if not chunk.known:
                state.assume(chunk.why)
        return "".join(c.text for c in value if c.known)
    return text_of(value)


def _file(path: str, expander: Expander, op: str) -> bool:
    why = f"`{op} {path}` asks the machine the script runs on"
    if expander.state.defaults:
        expander.state.assume(why + " (read as false)")
        return False
    raise Unknown(why)


def _integer(text: str) -> int | None:
    text = text.strip()
    return int(text) if re.fullmatch(r"[-+]?\d{1,30}", text) else None


def test_words(args: list[Value], expander: Expander) -> bool:
    """`[ args ]` / `test args`: True or False (a malformed test is false, as bash's status 2)."""
    return _evaluate(_Test(args, expander), len(args), expander)


def _evaluate(parser: "_Descent", length: int, expander: Expander) -> bool:
    """A test's value: false when it is malformed or leaves words unread, as bash's status 2."""
    _STATE.append(expander)
    try:
        result = parser.expression()
    except _Malformed:
        return False
    finally:
        _STATE.pop()
    return result if parser.i == length else False


class _Malformed(Exception):
    pass


class _Descent:
    """The and/or/not descent `[ ]` and `[[ ]]` share: `-o`/`||` over `-a`/`&&` over `!`, each side a
    primary; the subclasses read their words (`takes`) and primaries. `[ ]` takes an operator only
    when a word follows it (`[ -a ]` is the one-word test of "-a"); `[[ ]]` always."""

    OR, AND = "", ""
    i: int
    nesting = 0  # parentheses and `!` open here (a hostile nest stops at NESTING_LIMIT)

    def inner(self, read: Callable[[], bool]) -> bool:
        self.nesting += 1
        try:
            if self.nesting > NESTING_LIMIT:
                raise TooDeep("a test's parentheses and `!`")
            return read()
        finally:
            self.nesting -= 1

    def takes(self, op: str) -> bool:
        """Is the word here the operator `op`, to be taken?"""
        raise NotImplementedError

    def primary(self) -> bool:
        raise NotImplementedError

    def expression(self) -> bool:
        result = self.conjunction()
        while self.takes(self.OR):
            self.i += 1
            right = self.conjunction()
            result = result or right
        return result

    def conjunction(self) -> bool:
        result = self.negation()
        while self.takes(self.AND):
            self.i += 1
            right = self.negation()
            result = result and right
        return result

    def negation(self) -> bool:
        if self.takes("!"):
            self.i += 1
            return not self.inner(self.negation)
        return self.primary()


class _Test(_Descent):
    OR, AND = "-o", "-a"

    def __init__(self, args: list[Value], expander: Expander) -> None:
        self.args, self.expander, self.i = args, expander, 0

    def takes(self, op: str) -> bool:
        return self.word() == op and self.i + 1 < len(self.args)

    def word(self, k: int = 0) -> str | None:
        j = self.i + k
        if j >= len(self.args):
            return None
        value = self.args[j]
        return text_of(value) if is_known(value) else None

    def primary(self) -> bool:
        if self.i >= len(self.args):
            raise _Malformed
        first = self.word()
        if first == "(" and self.i + 2 < len(self.args):
            self.i += 1
            result = self.inner(self.expression)
            if self.word() != ")":
                raise _Malformed
            self.i += 1
            return result
        op = self.word(1)
        if (
            op is not None
            and self.i + 2 < len(self.args)
            and (op in _STRING_OPS or op in _INT_OPS or op in _FILE_BINARY)
        ):
            left, right = self.args[self.i], self.args[self.i + 2]
            self.i += 3
            return _binary(op, left, right, self.expander, pattern=False)
        if first is not None and len(first) == 2 and first[0] == "-" and self.i + 1 < len(self.args):
            operand = self.args[self.i + 1]
            self.i += 2
            return _unary(first, operand, self.expander)
        value = self.args[self.i]
        self.i += 1
        return _known(value) != ""


def _unary(op: str, operand: Value, expander: Expander) -> bool:
    if op == "-z":
        return _known(operand) == ""
    if op == "-n":
        return _known(operand) != ""
    if op == "-v":
        name = _known(operand)
        return expander.state.lookup(name, 0) is not None
    if op[1] in _FILE_TESTS or op == "-o":
        return _file(_known(operand) if is_known(operand) else text_of(operand), expander, op)
    raise _Malformed


def _binary(
    op: str, left: Value, right: Value, expander: Expander, pattern: bool, right_pattern: str | None = None
) -> bool:
    if op in _FILE_BINARY:
        return _file(f"{text_of(left)} {op} {text_of(right)}", expander, op)
    a = _known(left)
    if op in _INT_OPS:
        if pattern:  # [[ ]]: arithmetic operands
            x, y = (_arith(t, expander) for t in (a, _known(right)))
        else:
            x, y = _integer(a), _integer(_known(right))  # type: ignore[assignment]
            if x is None or y is None:
                raise _Malformed
        return {"-eq": x == y, "-ne": x != y, "-lt": x < y, "-le": x <= y, "-gt": x > y, "-ge": x >= y}[op]
    if op in ("=", "==", "!="):
        if right_pattern is not None:
            matched = re.fullmatch(right_pattern, a, re.S) is not None
        else:
            matched = a == _known(right)
        return matched if op != "!=" else not matched
    b = _known(right)
    return a < b if op == "<" else a > b


def _arith(text: str, expander: Expander) -> int:
    line = 0
    return evaluate(text, lambda n: expander.arith_lookup(n, line), expander.arith_assign)


def cond(tokens: list[Token], expander: Expander) -> bool:
    """`[[ ... ]]`: True or False (Unknown when a value it needs is not known)."""
    return _evaluate(_Cond(tokens, expander), len(tokens), expander)


class _Cond(_Descent):
    OR, AND = "||", "&&"

    def __init__(self, tokens: list[Token], expander: Expander) -> None:
        self.tokens, self.expander, self.i = tokens, expander, 0

    def takes(self, op: str) -> bool:
        return self.text() == op

    def text(self, k: int = 0) -> str | None:
        j = self.i + k
        if j >= len(self.tokens):
            return None
        tok = self.tokens[j]
        if tok.kind == "word" and tok.word is not None:
            word = tok.word
            return word.text if word.literal and not word.quoted else None
        return tok.text

    def value(self, tok: Token) -> Value:
        if tok.word is None:
            raise _Malformed
        return self.expander.value(tok.word)

    def primary(self) -> bool:
        if self.i >= len(self.tokens):
            raise _Malformed
        if self.text() == "(":
            self.i += 1
            result = self.inner(self.expression)
            if self.text() != ")":
                raise _Malformed
            self.i += 1
            return result
        first = self.text()
        op = self.text(1)
        if (
            op is not None
            and self.i + 2 < len(self.tokens)
            and (op in _STRING_OPS or op in _INT_OPS or op in _FILE_BINARY or op == "=~")
        ):
            left, right = self.tokens[self.i], self.tokens[self.i + 2]
            self.i += 3
            if op == "=~":
                return _regex(self.value(left), self.value(right), self.expander)
            pattern = _pattern(right.word, self.expander) if op in ("=", "==", "!=") and right.word else None
            return _binary(op, self.value(left), self.value(right), self.expander, pattern=True, right_pattern=pattern)
        if first is not None and len(first) == 2 and first[0] == "-" and self.i + 1 < len(self.tokens):
            operand = self.value(self.tokens[self.i + 1])
            self.i += 2
            return _unary(first, operand, self.expander)
        value = self.value(self.tokens[self.i])
        self.i += 1
        return _known(value) != ""


def _pattern(word: Word, expander: Expander) -> str:
    """The right side of `==` in `[[ ]]`: unquoted parts are glob patterns, quoted parts literal."""
    out = ""
    for part in word.parts:
        if part.kind == "lit":
            out += _glob(part.text) if not part.quoted else re.escape(part.text)
            continue
        value = expander.part(part)
        text = _known(value)
        out += re.escape(text) if part.quoted else _glob(text)
    return out


def _glob(text: str) -> str:
    return fnmatch.translate(text).removeprefix("(?s:").removesuffix(r")\Z")


def _regex(left: Value, right: Value, expander: Expander) -> bool:
    subject, pattern = _known(left), _known(right)
    if len(subject) > 1000 or len(pattern) > 200:
        raise Unknown("a regular expression match neoconv does not evaluate (too long)")
    try:
        return re.search(pattern, subject) is not None
    except re.error:
        raise _Malformed from None
