"""Reading input files: each opened once, without waiting on a FIFO, and read only when it is a
regular file (a device, a FIFO or a folder is refused with one line); a batch's sources only inside
SRC_DIR and never through a link swapped in after the walk (inputs_inside). UTF-8 text, bounded."""

from __future__ import annotations

import errno
import os
import stat
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..core.errors import InputError, NeoconvError

MAX_BYTES = 16 * 1024 * 1024  # configs are kilobytes; anything this large is not a config


def read_text(path: str | Path) -> str:
    """Read a config file as UTF-8 text, turning every OS failure into one clear InputError. The file
    is opened once and read from that descriptor, and only a regular file is read: a FIFO would block
    the run for ever and a device (/dev/zero, /dev/stdin) is no config ("-" reads standard input)."""
    name = str(path)
    if name == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    else:
        data = _read_regular(name)
    if len(data) > MAX_BYTES:
        raise InputError(f"larger than {MAX_BYTES // (1024 * 1024)} MiB; not a config file", file=name)
    if data[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):
        raise InputError("UTF-32 text; save it as UTF-8", file=name)
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError("UTF-16 text; save it as UTF-8", file=name)
    if b"\0" in data:
        line = data[: data.index(b"\0")].count(b"\n") + 1
        raise InputError("binary file (contains NUL bytes); expected YAML or JSON text", file=name, line=line)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8",
            file=name, line=line,
        ) from None  # fmt: skip


# A batch reads its sources only inside SRC_DIR and never through a link (a file swapped for one after
# the walk): (the folder, files outside it the user named: --with); set by inputs_inside()
_INSIDE: ContextVar[tuple[Any, frozenset[str]] | None] = ContextVar("neoconv_inputs_inside", default=None)


@contextmanager
def inputs_inside(root: str | Path, named: Iterable[str] = ()) -> Iterator[None]:
    """Within the block, read_text() opens a file under `root` one folder at a time without following
    a link (files in `named` are read as given)."""
    from .confined import Confined

    token = _INSIDE.set((Confined(root), frozenset(os.path.abspath(n) for n in named)))
    try:
        yield
    finally:
        _INSIDE.reset(token)


def _open_input(name: str) -> int:
    # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then tells what was opened
    confined = _INSIDE.get()
    if confined is None or os.path.abspath(name) in confined[1]:
        return os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    tree = confined[0]
    try:
        return int(tree.open_file(name))
    except NeoconvError:
        raise InputError(f"is outside {tree.root} or reached through a symbolic link (it changed while the "
                         "batch ran?): not read", file=name) from None  # fmt: skip
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
    # a link: read the file it points to when that lies inside the tree, opened itself without a link
    real, top = os.path.realpath(name), os.path.realpath(tree.root)
    if os.path.commonpath([real, top]) != top:
        raise InputError(f"is a symbolic link to a file outside {tree.root} (it changed while the batch ran?): not read",
                         file=name)  # fmt: skip
    try:
        return int(type(tree)(top).open_file(real))
    except NeoconvError:
        raise InputError("is reached through a symbolic link: not read", file=name) from None


def starts_with_bom(path: str) -> bool:
    """Whether a regular file starts with the UTF-8 byte order mark (read_text drops it from the text;
    an edit of the file keeps it)."""
    try:
        fd = _open_input(path)
    except (OSError, NeoconvError):
        return False
    with os.fdopen(fd, "rb") as fh:
        return stat.S_ISREG(os.fstat(fd).st_mode) and fh.read(3) == b"\xef\xbb\xbf"


def _read_regular(name: str) -> bytes:
    try:
        fd = _open_input(name)
    except IsADirectoryError:
        raise InputError("is a folder, not a config file; give the file inside it", file=name) from None
    except FileNotFoundError:
        raise InputError("no such file", file=name) from None
    except PermissionError:
        raise InputError("permission denied; check the file's permissions", file=name) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read: {getattr(exc, 'strerror', None) or exc}", file=name) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise InputError("is a folder, not a config file; give the file inside it", file=name)
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"
        raise InputError(f"is {kind}, not a config file; give a file (or - to read standard input)", file=name)
    with os.fdopen(fd, "rb") as fh:
        try:
            return fh.read(MAX_BYTES + 1)  # never more: a file growing while read stays bounded
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", file=name) from None
