"""Bash arithmetic (`$(( ... ))`, `(( ... ))`, `let`, `for (( ; ; ))`) of values the script itself
gives: 64-bit integers as bash computes them (wrapping, `/` towards zero, `**`, `?:`, `,`, the
assignment operators, `++`/`--`), bases (`0x1f`, `017`, `2#101`), a name's value read as an
expression again (bash does). A name the script does not set, or any value not known here, raises
Unknown: the caller decides what that means (never a guess).
"""

from __future__ import annotations

import re
from typing import Callable

from .limits import NESTING_LIMIT, TooDeep

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+#[0-9A-Za-z@_]+|0[xX][0-9a-fA-F]+|\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*=|<<=|>>=|\+\+|--|\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&^|]=|[-+*/%<>=!~&^|?:(),]))"
)
_BINARY = {  # precedence, right-associative
    ",": (1, False),
    "||": (4, False),
    "&&": (5, False),
    "|": (6, False),
    "^": (7, False),
    "&": (8, False),
    "==": (9, False),
    "!=": (9, False),
    "<": (10, False),
    ">": (10, False),
    "<=": (10, False),
    ">=": (10, False),
    "<<": (11, False),
    ">>": (11, False),
    "+": (12, False),
    "-": (12, False),
    "*": (13, False),
    "/": (13, False),
    "%": (13, False),
    "**": (15, True),
}
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", "**="}
MAX_DEPTH = 32  # a name whose value names another, and so on (bash stops at 1024 levels)


class Unknown(Exception):
    """A value the script does not give: why, in words."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def wrap(value: int) -> int:
    """As bash's intmax_t (64 bits) holds it."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def evaluate(
    text: str,
    lookup: Callable[[str], str],
    assign: Callable[[str, int], None],
    depth: int = 0,
    nesting: int = 0,
) -> int:
    """The value of an arithmetic expression; `lookup(name)` gives a variable's text (raising Unknown
    when the script does not give it), `assign` stores what `=`, `+=`, `++` ... set. `nesting`: the
    expressions open around this one (a name's value read inside another expression); past
    NESTING_LIMIT, TooDeep."""
    if depth > MAX_DEPTH:
        raise Unknown("an arithmetic value that names itself")
    tokens = _tokens(text)
    if not tokens:
        return 0
    parser = _Parser(tokens, lookup, assign, depth)
    parser.nesting = nesting
    value = parser.expression(0)
    if parser.i != len(tokens):
        raise Unknown(f"`{text.strip()}` is not an arithmetic expression bash evaluates")
    return value


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        found = _TOKEN.match(text, i)
        if not found or found.end() == i:
            raise Unknown(f"`{text.strip()}` is not an arithmetic expression bash evaluates")
        kind = found.lastgroup or "op"
        out.append((kind, found.group(kind).strip()))
        i = found.end()
    return out


def number(text: str) -> int:
    """A number as bash reads one: decimal, 0x hex, leading-0 octal, BASE#digits."""
    try:
        if "#" in text:
            base, _, digits = text.partition("#")
            return wrap(int(digits, int(base)))
        if text[:2] in ("0x", "0X"):
            return wrap(int(text[2:], 16))
        if len(text) > 1 and text.startswith("0"):
            return wrap(int(text, 8))
        if len(text) > 40:  # far past 64 bits: bash wraps; Python need not convert 4,300 digits
            raise Unknown(f"{text[:20]}...: a number past 64 bits")
        return wrap(int(text))
    except ValueError:
        raise Unknown(f"{text!r} is not a number bash reads") from None


class _Parser:
    def __init__(
        self,
        tokens: list[tuple[str, str]],
        lookup: Callable[[str], str],
        assign: Callable[[str, int], None],
        depth: int,
    ) -> None:
        self.tokens, self.lookup, self.assign, self.depth = tokens, lookup, assign, depth
        self.i = 0
        self.skipping = False  # inside an operand a short-circuit does not evaluate
        self.nesting = 0  # parentheses, ?:, unary and right-associative operators open here

    def inner(self, read: Callable[..., int], *args: int) -> int:
        """An expression inside another (parentheses, `?:`, `!x`, the right side of `**` or `=`): a
        hostile nest of them stops at NESTING_LIMIT, before Python's stack does."""
        self.nesting += 1
        try:
            if self.nesting > NESTING_LIMIT:
                raise TooDeep("arithmetic parentheses and operators")
            return read(*args)
        finally:
            self.nesting -= 1

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, text: str) -> None:
        tok = self.peek()
        if tok is None or tok[1] != text:
            raise Unknown(f"`{text}` expected in an arithmetic expression")
        self.i += 1

    def value_of(self, name: str) -> int:
        if self.skipping:
            return 0
        text = self.lookup(name).strip()
        if not text:
            return 0
        return evaluate(text, self.lookup, self.assign, self.depth + 1, self.nesting)

    def expression(self, floor: int) -> int:
        left = self.assignment()
        while (tok := self.peek()) is not None and tok[0] == "op":
            if tok[1] == "?" and floor <= 3:
                self.i += 1
                yes = self.inner(self.expression, 1)
                self.take(":")
                no = self.inner(self.expression, 3)
                left = yes if left else no
                continue
            if tok[1] not in _BINARY or _BINARY[tok[1]][0] < floor:
                break
            precedence, right_assoc = _BINARY[tok[1]]
            self.i += 1
            if tok[1] == "&&" and not left:  # short-circuit: the right side is not evaluated
                self._skip(precedence + 1)
                left = 0
                continue
            if tok[1] == "||" and left:
                self._skip(precedence + 1)
                left = 1
                continue
            right = self.inner(self.expression, precedence) if right_assoc else self.expression(precedence + 1)
            left = self.apply(tok[1], left, right)
        return left

    def apply(self, op: str, left: int, right: int) -> int:
        try:
            return _apply(op, left, right)
        except Unknown:
            if self.skipping:
                return 0
            raise

    def _skip(self, floor: int) -> None:
        """Past the operand a short-circuit does not evaluate (its assignments do not happen)."""
        saved, self.skipping = self.skipping, True
        try:
            self.expression(floor)
        finally:
            self.skipping = saved

    def assignment(self) -> int:
        tok = self.peek()
        nxt = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else None
        if tok is not None and tok[0] == "name" and nxt is not None and nxt[1] in _ASSIGN:
            self.i += 2
            right = self.inner(self.expression, 2)
            value = right if nxt[1] == "=" else self.apply(nxt[1][:-1], self.value_of(tok[1]), right)
            if not self.skipping:
                self.assign(tok[1], value)
            return value
        return self.unary()

    def unary(self) -> int:
        tok = self.peek()
        if tok is None:
            raise Unknown("an arithmetic expression ends early")
        if tok[1] in ("!", "~", "-", "+"):
            self.i += 1
            value = self.inner(self.unary)
            return {"!": int(not value), "~": wrap(~value), "-": wrap(-value), "+": value}[tok[1]]
        if tok[1] in ("++", "--"):
            self.i += 1
            name = self.peek()
            if name is None or name[0] != "name":
                raise Unknown(f"`{tok[1]}` needs a variable")
            self.i += 1
            value = wrap(self.value_of(name[1]) + (1 if tok[1] == "++" else -1))
            if not self.skipping:
                self.assign(name[1], value)
            return value
        return self.postfix()

    def postfix(self) -> int:
        tok = self.peek()
        assert tok is not None
        self.i += 1
        if tok[1] == "(":
            value = self.inner(self.expression, 1)
            self.take(")")
            return value
        if tok[0] == "num":
            return number(tok[1])
        if tok[0] == "name":
            value = self.value_of(tok[1])
            after = self.peek()
            if after is not None and after[1] in ("++", "--"):
                self.i += 1
                if not self.skipping:
                    self.assign(tok[1], wrap(value + (1 if after[1] == "++" else -1)))
            return value
        raise Unknown(f"`{tok[1]}` where an arithmetic value is expected")


def _apply(op: str, left: int, right: int) -> int:
    if op in ("/", "%"):
        if right == 0:
            raise Unknown("division by 0")
        quotient = abs(left) // abs(right) * (1 if (left < 0) == (right < 0) else -1)
        return wrap(quotient if op == "/" else left - quotient * right)
    if op == "**":
        if right < 0:
            raise Unknown("a negative exponent")
        return wrap(pow(left, right, 1 << 64))
    if op in ("<<", ">>"):
        shift = right & 63
        return wrap(left << shift) if op == "<<" else left >> shift
    table: dict[str, Callable[[int, int], int]] = {
        ",": lambda a, b: b,
        "||": lambda a, b: int(bool(a or b)),
        "&&": lambda a, b: int(bool(a and b)),
        "|": lambda a, b: a | b,
        "^": lambda a, b: a ^ b,
        "&": lambda a, b: a & b,
        "==": lambda a, b: int(a == b),
        "!=": lambda a, b: int(a != b),
        "<": lambda a, b: int(a < b),
        ">": lambda a, b: int(a > b),
        "<=": lambda a, b: int(a <= b),
        ">=": lambda a, b: int(a >= b),
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
    }
    return wrap(table[op](left, right))
