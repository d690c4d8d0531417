"""The structure of a bash script, from its tokens (lexer.py): simple commands, pipelines, `&&`/`||`
lists, `if`, `case`, `for`, `while`/`until`, `{ ...; }`, `( ... )`, `(( ... ))`, `[[ ... ]]` and
function definitions, as bash's grammar nests them. Nothing here runs or expands anything: script.py
reads the tree statically. A text bash itself refuses (`bash -n`) may be refused here too, with its
line; a text bash accepts must parse.
"""

from __future__ import annotations

from typing import Union

from ....core.errors import InputError
from .lexer import Token, Word, tokenize
from .limits import NESTING_LIMIT, too_deep
from .nodes import (
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
    Redirect,
    Sequence,
    Simple,
)

RESERVED = frozenset(
    {
        "if",
        "then",
        "elif",
        "else",
        "fi",
        "do",
        "done",
        "case",
        "esac",
        "while",
        "until",
        "for",
        "in",
        "{",
        "}",
        "!",
        "function",
        "select",
        "time",
        "[[",
    }
)
_LIST_ENDS = frozenset({"then", "elif", "else", "fi", "do", "done", "esac", "}"})
_CASE_ENDS = (";;", ";&", ";;&")


def parse_script(text: str, name: str) -> Sequence:
    return _Parser(tokenize(text, name), name).program()


def parse_tokens(tokens: list[Token], name: str) -> Sequence:
    return _Parser(tokens, name).program()


class _Parser:
    def __init__(self, tokens: list[Token], name: str) -> None:
        self.tokens = tokens
        self.name = name
        self.i = 0
        self.depth = 0  # commands open around the one read (blocks, subshells, loops, functions)

    # ---- tokens
    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def error(self, message: str, tok: Token | None = None) -> InputError:
        tok = tok if tok is not None else self.peek() or (self.tokens[-1] if self.tokens else None)
        return InputError(f"shell syntax: {message}", file=self.name, line=tok.line if tok else None)

    def reserved(self, tok: Token | None = None) -> str | None:
        tok = tok if tok is not None else self.peek()
        if tok is None or tok.kind != "word" or tok.word is None:
            return None
        word = tok.word
        if len(word.parts) == 1 and word.parts[0].kind == "lit" and not word.parts[0].quoted:
            text = word.parts[0].text
            return text if text in RESERVED or text == "]]" else None
        return None

    def is_op(self, *texts: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "op" and tok.text in texts

    def skip_newlines(self) -> None:
        while (tok := self.peek()) is not None and tok.kind == "newline":
            self.i += 1

    def expect_word(self, text: str, opened: Token) -> Token:
        self.skip_newlines()
        tok = self.peek()
        if self.reserved(tok) != text:
            shown = f"`{tok.text or (tok.word.raw if tok.word else tok.kind)}`" if tok else "the end of the file"
            raise self.error(
                f"`{text}` expected for the `{self.reserved(opened) or opened.text}` at line "
                f"{opened.line}, found {shown}",
                tok or opened,
            )
        self.i += 1
        assert tok is not None
        return tok

    # ---- grammar
    def program(self) -> Sequence:
        body = self.sequence()
        tok = self.peek()
        if tok is not None:
            what = self.reserved(tok) or tok.text or tok.kind
            raise self.error(f"unexpected `{what}`", tok)
        return body

    def sequence(self, case_arm: bool = False) -> Sequence:
        first = self.peek()
        out = Sequence(line=first.line if first is not None else 0)
        while True:
            self.skip_newlines()
            tok = self.peek()
            if tok is None or self.reserved(tok) in _LIST_ENDS or self.is_op(")", *_CASE_ENDS):
                return out
            if case_arm and self.reserved(tok) == "esac":
                return out
            node = self.and_or()
            background = False
            tok = self.peek()
            if tok is not None and tok.kind == "op" and tok.text in (";", "&"):
                background = tok.text == "&"
                self.i += 1
            elif (
                tok is not None
                and tok.kind not in ("newline",)
                and not self.is_op(")", *_CASE_ENDS)
                and self.reserved(tok) not in _LIST_ENDS
            ):
                raise self.error(f"unexpected `{tok.text or (tok.word.raw if tok.word else tok.kind)}`", tok)
            out.items.append((node, background))

    def and_or(self) -> Node:
        first = self.pipeline()
        rest: list[tuple[str, Node]] = []
        while self.is_op("&&", "||"):
            op = self.peek().text  # type: ignore[union-attr]
            self.i += 1
            self.skip_newlines()
            rest.append((op, self.pipeline()))
        return AndOr(first, rest, first_line(first)) if rest else first

    def pipeline(self) -> Node:
        tok = self.peek()
        negated = False
        while self.reserved() in ("!", "time"):
            negated ^= self.reserved() == "!"
            self.i += 1
            if (
                self.reserved(self.peek()) is None
                and (t := self.peek()) is not None
                and t.kind == "word"
                and t.word is not None
                and t.word.text == "-p"
            ):
                self.i += 1  # time -p
        commands = [self.command()]
        while self.is_op("|", "|&"):
            self.i += 1
            self.skip_newlines()
            commands.append(self.command())
        if len(commands) == 1 and not negated:
            return commands[0]
        return Pipeline(commands, negated, tok.line if tok else 0)

    def command(self) -> Node:
        self.depth += 1
        try:
            if self.depth > NESTING_LIMIT:
                raise self.error(too_deep("blocks, subshells, loops and functions"))
            return self._command()
        finally:
            self.depth -= 1

    def _command(self) -> Node:
        tok = self.peek()
        if tok is None:
            raise self.error("a command is missing at the end of the file")
        word = self.reserved(tok)
        node: Node
        if word == "if":
            node = self.if_clause(tok)
        elif word in ("while", "until"):
            node = self.loop(tok)
        elif word in ("for", "select"):
            node = self.for_clause(tok)
        elif word == "case":
            node = self.case_clause(tok)
        elif word == "{":
            self.i += 1
            body = self.sequence()
            self.expect_word("}", tok)
            node = Group(body, False, tok.line)
        elif word == "[[":
            node = self.cond(tok)
        elif word == "function":
            node = self.function(tok)
        elif word is not None and word not in ("]]",):
            raise self.error(f"`{word}` where a command is expected", tok)
        elif tok.kind == "op" and tok.text == "(":
            self.i += 1
            body = self.sequence()
            if not self.is_op(")"):
                raise self.error(f"`)` expected to close the `(` at line {tok.line}")
            self.i += 1
            node = Group(body, True, tok.line)
        elif tok.kind == "arith":
            self.i += 1
            node = Arith(tok.text, tok.line)
        elif tok.kind == "word" and self._function_header():
            return self.function_body(tok, tok.word.text)  # type: ignore[union-attr]
        elif tok.kind in ("word", "array", "redir"):
            return self.simple()
        else:
            raise self.error(f"unexpected `{tok.text or tok.kind}`", tok)
        redirects = self.redirects()
        return Compound(node, redirects, tok.line) if redirects else node

    def _function_header(self) -> bool:
        """`name ( )`: a function definition."""
        rest = self.tokens[self.i + 1 : self.i + 3]
        return len(rest) == 2 and all(t.kind == "op" for t in rest) and [t.text for t in rest] == ["(", ")"]

    def function(self, tok: Token) -> Node:
        self.i += 1
        name_tok = self.peek()
        if name_tok is None or name_tok.kind != "word" or name_tok.word is None:
            raise self.error("`function` names no function", tok)
        if self._function_header():
            return self.function_body(tok, name_tok.word.text)
        self.i += 1
        self.skip_newlines()
        return Function(name_tok.word.text, self.command(), tok.line)

    def function_body(self, tok: Token, name: str) -> Node:
        self.i += 3 if self.tokens[self.i].kind == "word" else 2
        self.skip_newlines()
        return Function(name, self.command(), tok.line)

    def if_clause(self, tok: Token) -> Node:
        self.i += 1
        clauses: list[tuple[Sequence, Sequence, int]] = []
        line = tok.line
        while True:
            test = self.sequence()
            self.expect_word("then", tok)
            body = self.sequence()
            clauses.append((test, body, line))
            word = self.reserved()
            if word == "elif":
                line = self.peek().line  # type: ignore[union-attr]
                self.i += 1
                continue
            otherwise = None
            if word == "else":
                self.i += 1
                otherwise = self.sequence()
            self.expect_word("fi", tok)
            return If(clauses, otherwise, tok.line)

    def loop(self, tok: Token) -> Node:
        self.i += 1
        test = self.sequence()
        self.expect_word("do", tok)
        body = self.sequence()
        self.expect_word("done", tok)
        return Loop(self.reserved(tok) == "until", test, body, tok.line)

    def for_clause(self, tok: Token) -> Node:
        self.i += 1
        nxt = self.peek()
        if nxt is not None and nxt.kind == "arith":
            self.i += 1
            pieces = nxt.text.split(";")
            if len(pieces) != 3:
                raise self.error("for (( init; test; step )) needs three parts", nxt)
            self._loop_opening()
            body = self.do_done(tok)
            return ForArith(pieces[0], pieces[1], pieces[2], body, tok.line)
        if nxt is None or nxt.kind != "word" or nxt.word is None:
            raise self.error("`for` names no variable", tok)
        name = nxt.word.text
        self.i += 1
        self.skip_newlines()
        words: list[Word] | None = None
        if self.reserved() == "in":
            self.i += 1
            words = []
            while (t := self.peek()) is not None and t.kind == "word" and t.word is not None:
                words.append(t.word)
                self.i += 1
        self._loop_opening()
        return ForIn(name, words, self.do_done(tok), tok.line)

    def _loop_opening(self) -> None:
        if self.is_op(";"):
            self.i += 1
        self.skip_newlines()

    def do_done(self, tok: Token) -> Sequence:
        if self.reserved() == "{":  # for x in ...; { ...; } (bash accepts a group for do/done)
            opened = self.peek()
            self.i += 1
            body = self.sequence()
            self.expect_word("}", opened)  # type: ignore[arg-type]
            return body
        self.expect_word("do", tok)
        body = self.sequence()
        self.expect_word("done", tok)
        return body

    def case_clause(self, tok: Token) -> Node:
        self.i += 1
        subject = self.peek()
        if subject is None or subject.kind != "word" or subject.word is None:
            raise self.error("`case` has no word to match", tok)
        self.i += 1
        self.expect_word("in", tok)
        arms: list[tuple[list[Word], Sequence, str, int]] = []
        while True:
            self.skip_newlines()
            if self.reserved() == "esac":
                self.i += 1
                break
            start = self.peek()
            if start is None:
                raise self.error(f"`esac` expected for the `case` at line {tok.line}", tok)
            if self.is_op("("):
                self.i += 1
            patterns: list[Word] = []
            while True:
                t = self.peek()
                if t is None or t.kind != "word" or t.word is None:
                    raise self.error("a case pattern is expected", t or tok)
                patterns.append(t.word)
                self.i += 1
                if self.is_op("|"):
                    self.i += 1
                    continue
                break
            if not self.is_op(")"):
                raise self.error("`)` expected after the case pattern", self.peek() or tok)
            self.i += 1
            body = self.sequence(case_arm=True)
            ending = ";;"
            if self.is_op(*_CASE_ENDS):
                ending = self.peek().text  # type: ignore[union-attr]
                self.i += 1
            arms.append((patterns, body, ending, start.line))
        return Case(subject.word, arms, tok.line)

    def cond(self, tok: Token) -> Node:
        self.i += 1
        out: list[Token] = []
        while True:
            t = self.peek()
            if t is None:
                raise self.error(f"`]]` expected for the `[[` at line {tok.line}", tok)
            self.i += 1
            if self.reserved(t) == "]]":
                return Cond(out, tok.line)
            if t.kind != "newline":
                out.append(t)

    def redirects(self) -> list[Redirect]:
        out: list[Redirect] = []
        while (tok := self.peek()) is not None:
            if (
                tok.kind == "word"
                and tok.word is not None
                and tok.word.text.isdigit()
                and self.i + 1 < len(self.tokens)
            ):
                nxt = self.tokens[self.i + 1]
                if nxt.kind == "redir" and nxt.start == tok.end:  # `done 2>&1`: the 2 is the descriptor
                    self.i += 1
                    continue
            if tok.kind != "redir":
                break
            out.append(self.redirect(tok))
        return out

    def redirect(self, tok: Token) -> Redirect:
        self.i += 1
        if tok.text in ("<<", "<<-"):
            return Redirect(tok.text, None, tok.line, tok.body, tok.body_line, tok.expand)
        target = self.peek()
        if target is None or target.kind != "word":
            opened = (
                next(
                    (
                        t
                        for t in reversed(self.tokens[: self.i - 1])
                        if t.line == tok.line and t.kind == "redir" and t.text == "<"
                    ),
                    None,
                )
                if tok.text == ">"
                else None
            )
            if opened is not None:
                shown = " ".join(
                    t.word.raw if t.word else t.text for t in self.tokens[self.tokens.index(opened) : self.i]
                )
                raise self.error(
                    f"`{shown}` is a placeholder to fill in (bash reads < and > as redirections and "
                    "refuses the line): write the value",
                    tok,
                )
            raise self.error(f"`{tok.text}` names no file", tok)
        self.i += 1
        return Redirect(tok.text, target.word, tok.line)

    def simple(self) -> Node:
        first = self.peek()
        assert first is not None
        items: list[Union[Word, ArrayAssign]] = []
        redirects: list[Redirect] = []
        previous: Token | None = None
        while (tok := self.peek()) is not None:
            if tok.kind == "word" and tok.word is not None:
                items.append(tok.word)
                self.i += 1
            elif tok.kind == "array":
                items.append(self.array(tok))
            elif tok.kind == "redir":
                if (
                    previous is not None
                    and previous.kind == "word"
                    and previous.end == tok.start
                    and previous.word is not None
                    and previous.word.text.isdigit()
                    and items
                    and items[-1] is previous.word
                ):
                    items.pop()  # 2>&1: the 2 is the redirection's file descriptor
                redirects.append(self.redirect(tok))
            else:
                break
            previous = tok
        return Simple(items, redirects, first.line)

    def array(self, tok: Token) -> ArrayAssign:
        self.i += 1
        elements: list[Word] = []
        while True:
            t = self.peek()
            if t is None:
                raise self.error(f"array {tok.text}( is not closed with )", tok)
            self.i += 1
            if t.kind == "newline":
                continue
            if t.kind == "op" and t.text == ")":
                break
            if t.kind != "word" or t.word is None:
                raise self.error(f"`{t.text}` inside the array {tok.text.rstrip('+=')}=( ... )", t)
            elements.append(t.word)
        return ArrayAssign(tok.text.rstrip("+="), tok.text.endswith("+="), elements, tok.line)


def first_line(node: Node) -> int:
    return getattr(node, "line", 0)
