"""Running a command: the only place where exceptions become exit codes and one-line messages.
A command's work returns a policy.Outcome, whose `code` is its exit code; a NeoconvError is
EXIT_ERROR with one line, Ctrl-C EXIT_INTERRUPTED, anything unexpected EXIT_ERROR with a clear
"internal error" line (the traceback with --debug)."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Callable, NoReturn

import click

from ..core.errors import NeoconvError
from ..services.policy import EXIT_ERROR, EXIT_INTERRUPTED, Outcome


class Interrupted(Exception):
    """Ctrl-C after part of the work was written: what to tell the user instead of "nothing written"."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def fail(message: str) -> NoReturn:
    click.echo(f"neoconv: error: {one_line(message)}", err=True)
    sys.exit(EXIT_ERROR)


def one_line(text: str) -> str:
    """Hostile input can put newlines or terminal escapes into a key or value: show them escaped."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush stays quiet."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def guarded(run: Callable[[], Outcome], debug: bool = False, inputs: tuple[str, ...] = ()) -> NoReturn:
    """Run a command's work and exit with its outcome's code (or the code of what it raised)."""
    try:
        outcome = run()
    except NeoconvError as exc:
        if debug:
            traceback.print_exc()
        fail(str(exc))
    except Interrupted as exc:
        click.echo(f"neoconv: interrupted; {exc.message}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except KeyboardInterrupt:
        click.echo("neoconv: interrupted; nothing written", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except BrokenPipeError:  # the reader of stdout went away (`| head`): nothing left to say
        _silence_stdout()
        sys.exit(EXIT_ERROR)
    except Exception as exc:  # a bug, or input we did not foresee: still one line, no traceback
        if debug:
            traceback.print_exc()
        where = f" while reading {', '.join(inputs)}" if inputs else ""
        fail(f"internal error{where}: {type(exc).__name__}: {exc} (rerun with --debug and report it)")
    sys.exit(outcome.code)
