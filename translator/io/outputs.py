"""Writing outputs: all or nothing, never over an input, never replacing what is not a regular file.

A regular file (or a new one) is written to a temp file beside it and renamed over it, so no
reader ever sees half a file. Anything else the user names as output (/dev/null, a FIFO, a
device, /dev/stdout or a link to /proc/self/fd/1) is opened and written through, as `tee` would:
renaming over it would replace /dev/null with a regular file for the whole machine.

Temp files are named `.NAME.neoconv-PID-RANDOM.tmp`: unique per run (two runs on one folder never
share one) and recognisably ours, so a later run removes only the leftovers of a process that is
gone (kill -9), never a user's hidden file or a temp file another live run is writing.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import stat
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..core.errors import OutputError

_TEMP = re.compile(r"^\..*\.neoconv-(\d+)-[a-z0-9]{8}\.tmp$")
# paths that name an open file descriptor of the process: /dev/stdout, /dev/fd/1, /proc/self/fd/1
_DESCRIPTOR = re.compile(r"^/(?:dev/std(?:in|out|err)|dev/fd/\d+|proc/(?:self|thread-self|\d+)/fd/\d+)$")


def temp_file(target: str | Path, names: list[str], mode: int = 0o600) -> int:
    """A new temp file beside `target` (never through a symlink), open for writing. `mode` is
    filtered by the process umask, as for any new file: NEW_FILE gives a file the mode the user's
    umask gives new files (the umask itself is never read: reading it means setting it, and a
    library must not touch process state another thread may rely on).

    Each name is appended to `names` *before* the file is created, so that a caller interrupted at
    any point (Ctrl-C) can remove whatever exists under those names; a name that turns out to be
    taken is dropped from the list (it is not ours) and another one is tried."""
    target = Path(target)
    folder = target.parent
    # a name of 255 bytes is valid, a temp name built from all of it would not be
    prefix = f".{target.name[:40]}.neoconv-{os.getpid()}-"
    while True:
        name = str(folder / (prefix + "".join(random.choices(_LETTERS, k=8)) + ".tmp"))
        names.append(name)
        try:
            return _open_new(name, mode)
        except FileExistsError:
            names.remove(name)


_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"
NEW_FILE = 0o666  # what open() asks for a new file; the kernel takes the umask off


def _open_new(path: str, mode: int) -> int:
    return os.open(
        path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), mode
    )


def remove(names: list[str]) -> None:
    """Remove the temp files of a write that did not finish."""
    for name in names:
        try:
            os.unlink(name)
        except OSError:
            pass
    names.clear()


def stale_temp(name: str) -> bool:
    """A temp file of a neoconv process that no longer runs (killed before it could clean up)."""
    found = _TEMP.match(name)
    if not found:
        return False
    try:
        os.kill(int(found.group(1)), 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):
        return False  # alive (someone else's), or not a pid at all
    return False


def writes_through(path: str | Path) -> bool:
    """True when `path` is not a regular file to replace: a device, a FIFO, or a file descriptor."""
    try:
        mode = os.stat(path).st_mode  # follows symlinks: a link to /dev/null is /dev/null
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        return True
    hop = os.path.abspath(path)
    for _ in range(40):  # /dev/stdout -> /proc/self/fd/1 -> (a pipe, a terminal, or a file)
        if _DESCRIPTOR.match(hop):
            return True
        try:
            link = os.readlink(hop)
        except OSError:
            return False
        hop = os.path.normpath(os.path.join(os.path.dirname(hop), link))
    return False


def check_target(path: str | Path, inputs: list[str] | tuple[str, ...] = ()) -> Path:
    """Refuse, before anything is written, an output that is an input, a folder, or in no folder."""
    target = Path(path)
    for src in inputs:
        if src != "-" and _same_file(src, target):
            raise OutputError(f"refusing to overwrite the input file {src}; choose another -o", file=str(path))
    try:
        mode: int | None = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as exc:  # a name too long, a symlink loop, ...
        raise OutputError(f"cannot write here: {exc.strerror or exc}", file=str(path)) from None
    if mode is not None and stat.S_ISDIR(mode):
        raise OutputError("is a folder; give a file name to write", file=str(path))
    if mode is not None and not stat.S_ISREG(mode):
        return target  # a device or FIFO: written through, wherever it lives
    folder = target.parent
    try:
        folder_mode = os.stat(folder).st_mode
    except FileNotFoundError:
        raise OutputError(f"output folder {folder} does not exist; create it first", file=str(path)) from None
    except NotADirectoryError:
        raise OutputError(f"{folder} is not a folder", file=str(path)) from None
    except OSError as exc:
        raise OutputError(f"cannot write here: {exc.strerror or exc}", file=str(path)) from None
    if not stat.S_ISDIR(folder_mode):
        raise OutputError(f"{folder} is not a folder", file=str(path))
    return target


def _same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one of them missing, a symlink loop, a NUL in a name
        return False


def write_atomic(path: str | Path, text: str, *, inputs: list[str] | tuple[str, ...] = ()) -> None:
    """Write via a temp file in the same folder and rename, so no reader ever sees half a file."""
    write_files_atomic({str(path): text}, inputs=inputs)


def write_files_atomic(
    files: Mapping[str, str] | Sequence[tuple[str, str]], *, inputs: list[str] | tuple[str, ...] = ()
) -> None:
    """Write several outputs (path -> text, or pairs) all or nothing: every target is checked and
    every temp file fully written before the first rename (or write-through); on any error or
    Ctrl-C the temp files are removed. Two outputs aimed at one file are an error, not a silent
    overwrite."""
    pairs = list(files.items()) if isinstance(files, Mapping) else list(files)
    targets = [(check_target(path, inputs), text) for path, text in pairs]
    seen: dict[str, str] = {}
    for (target, _), (path, _) in zip(targets, pairs):
        key = os.path.realpath(target)
        if key in seen and not (key == os.devnull and seen[key] == path):
            raise OutputError(f"{seen[key]} and {path} are the same file; write them to different places", file=path)
        seen[key] = path
    through = [(target, text) for target, text in targets if writes_through(target)]
    atomic = [(target, text) for target, text in targets if not writes_through(target)]
    temps: list[str] = []
    current = targets[0][0] if targets else None
    try:
        for current, text in atomic:
            kept = _existing_mode(current)  # replacing a file keeps its permissions
            fd = temp_file(current, temps, 0o600 if kept is not None else NEW_FILE)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                if kept is not None:
                    os.fchmod(fh.fileno(), kept)
        for current, text in through:  # before the renames: if /dev/full refuses, nothing is replaced
            with open(current, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        for (current, _), tmp in zip(atomic, list(temps)):
            os.replace(tmp, current)
            temps.remove(tmp)
    except OSError as exc:  # unwritable folder, disk full, ...
        raise OutputError(f"cannot write here: {exc.strerror or exc}", file=str(current)) from None
    finally:
        remove(temps)


def replace_file(target: str, data: str | bytes, *, like: str | None = None) -> None:
    """Batch's writer: the whole text (or bytes) to a temp file beside `target`, then renamed over
    it, so no reader sees half a file. The caller has made the folder and ruled out the inputs
    (batch checks its output tree once, not once per file); an existing file keeps its permissions,
    and `like` gives the new file that file's permissions and times (a backup, as shutil.copy2)."""
    try:
        existing = os.lstat(target)
    except OSError:
        existing = None
    if existing is not None and not (stat.S_ISREG(existing.st_mode) or stat.S_ISLNK(existing.st_mode)):
        raise OutputError("exists and is not a regular file; not replaced", file=target)
    temps: list[str] = []
    try:
        keep = existing is not None and stat.S_ISREG(existing.st_mode)
        fd = temp_file(target, temps, 0o600 if keep else NEW_FILE)
        try:
            if existing is not None and keep:
                os.fchmod(fd, existing.st_mode & 0o7777)
            view = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        if like is not None:
            shutil.copystat(like, temps[0])
        os.replace(temps[0], target)
        temps.clear()
    except OSError as exc:
        raise OutputError(f"cannot write here: {exc.strerror or exc}", file=target) from None
    finally:
        remove(temps)


def copy_file(source: str, target: str) -> None:
    """A byte-for-byte copy with the source's permissions and times (a backup), written atomically."""
    try:
        with open(source, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise OutputError(f"cannot read it to back it up: {exc.strerror or exc}", file=source) from None
    replace_file(target, data, like=source)


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(MAX_SIDE)
    except OSError:
        return None


MAX_SIDE = 1 << 24  # a side file or output larger than this is no file neoconv wrote


def _existing_mode(target: Path) -> int | None:
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        return None


def foreign_side_file(side: str, text: str, output: str, read: Callable[[str], str | None] | None = None) -> str:
    """Why writing the side file `side` (VeOmni's OUT_STEM.config.json) beside `output` would
    clobber a file neoconv did not write there, or "": it is new, byte-identical, or named by the
    neoconv output it sits beside (a re-run). `read`: how to read a file there (a Confined tree's)."""
    existing = (read or _read_text)(side)
    if existing is None or existing == text:
        return ""  # absent (any other problem is for the write to report), or the same
    head = (read or _read_text)(output) or ""
    if "written by neoconv" in head.partition("\n")[0] and f"config_path: {os.path.basename(side)}" in head:
        return ""
    return f"{side} exists and was not written by neoconv beside {output}: move it, or choose another output name"
