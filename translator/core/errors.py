"""Typed exceptions. The library raises these; only the CLI turns them into exit codes."""

from __future__ import annotations

import re

_LONG_NUMBER = re.compile(r"(?<![\w.])\d{21,}(?![\w.])")  # past 20 digits, beyond every size a framework takes


def printable(text: str, keep: str = "") -> str:
    """Text from a config (keys, values, file names) as one safe line: control characters such as
    ESC, BEL or a newline are shown escaped (\\x1b, \\n), so a file cannot drive the terminal or
    forge report rows, log lines or lines of an output file. `keep`: characters left as they are
    (a tab in a comment)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in keep else repr(ch)[1:-1] for ch in text)


def abbreviated(text: str) -> str:
    """A message with every whole number of more than 20 digits shortened to its leading digits and
    its length (`1.00e+308 (a 309-digit number)`): a hostile value printed whole buries the line."""
    return _LONG_NUMBER.sub(lambda m: f"{m[0][0]}.{m[0][1:3]}e+{len(m[0]) - 1} (a {len(m[0])}-digit number)", text)


class NeoconvError(Exception):
    """Base class: one clear message, optionally anchored to a file, line and key path."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        key: str | None = None,
        hint: str | None = None,
        column: int | None = None,
        written_key: str | None = None,
    ) -> None:
        message = abbreviated(message)
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.key = key  # the reader's name of the leaf (what code that catches the error looks up)
        self.hint = abbreviated(hint) if hint else hint
        self.column = column  # 1-based, for syntax errors
        self.written_key = written_key  # the key as the file spells it, when the reader names it otherwise

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line else "")
            where += (f":{self.column}" if self.line and self.column else "") + ": "
        key = f"{self.written_key or self.key}: " if self.key else ""
        hint = f" ({self.hint})" if self.hint else ""
        return printable(f"{where}{key}{self.message}{hint}")  # one line, whatever a key or file name holds


class InputError(NeoconvError):
    """The input cannot be read, parsed or understood (exit code 2)."""


class UsageError(NeoconvError):
    """The call itself is wrong: unknown format, bad --set, conflicting options (exit code 2)."""


class MappingTableError(NeoconvError):
    """A mapping table or the catalogue is malformed; a bug in neoconv's data, not in the input."""


class OutputError(NeoconvError):
    """The output cannot be written where asked (exit code 2)."""


class NothingToWrite(InputError):
    """The translation would write a file holding nothing a run of the target needs (exit code 2)."""


class UnsupportedFamily(InputError):
    """The source is of a model family the target cannot hold (a BERT or T5 into a decoder-only format)."""


class WrongFormat(InputError):
    """The file is clearly another format's (a NeoX argument file in JSON given as DeepSpeed)."""

    def __init__(self, message: str, *, suggested: str, **where: object) -> None:
        super().__init__(message, **where)  # type: ignore[arg-type]
        self.suggested = suggested
