"""A file given to a command of another format is refused before anything is translated: its format
is detected from its content as `diff` detects it, and the message names that format and the command
to use (translating it as the declared format would name most of its keys unknown and exit 0, or
refuse one of its keys with a fix that does not apply)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..core.errors import InputError, NeoconvError, WrongFormat
from ..knowledge.registry import FORMATS


def refuse_other_format(inputs: tuple[str, ...], src: str, command: Callable[[str], str]) -> None:
    """Raise InputError when a main input is plainly another format's file; `command(fmt)` is the
    command line that reads it as `fmt`. A file whose format cannot be told (no format knows most
    of its keys, or two know all of them) is left to the reader."""
    from ..formats.detect import detect_file

    for path in inputs:
        if path == "-" or not Path(path).is_file():
            continue  # the reader says what is wrong with it
        try:
            found = detect_file(path)
        except NeoconvError:
            continue
        if found == src:
            continue
        if _declared_reads_it(path, src, found):
            continue
        raise InputError(
            f"a {FORMATS[found].title} config, not {FORMATS[src].title} (detected from its keys): "
            f"use `{command(found)}`",
            file=path,
        )


def _declared_reads_it(path: str, src: str, found: str) -> bool:
    """Whether the declared format takes the file after all: its reader says plainly the file is
    `found`'s, and the translation reads it as that and says so (a NeoX argument file in JSON given
    as DeepSpeed)."""
    from ..services.pipeline import load

    try:
        load(path, src)
    except WrongFormat as exc:
        return exc.suggested == found
    except NeoconvError:
        return False
    return False
