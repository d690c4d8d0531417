"""Reads, writes and removals confined to one folder the user named, never through a symbolic link."""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path

from ..core.errors import OutputError
from .outputs import NEW_FILE, _LETTERS


class Confined:
    """Reads, writes and removals inside one folder the user named (a batch's OUT_DIR, the tree an
    --in-place run or `migrate` rewrites), never through a symbolic link: a path is opened from the
    root one folder at a time with O_NOFOLLOW (openat), so a symlinked folder inside the tree —
    there from the start, or swapped in while the run goes on — is refused, never followed; a
    file is replaced by renaming a temp file over its name, which replaces a link, never writes
    through it. The root itself is what the user named, and may be a link."""

    def __init__(self, root: str | Path) -> None:
        self.root = os.path.abspath(root)

    def parts(self, path: str | Path) -> list[str]:
        """`path` (absolute, or relative to the current folder) as names under the root."""
        rel = os.path.relpath(os.path.abspath(path), self.root)
        names = [] if rel == "." else rel.split(os.sep)
        if not names or names[0] == ".." or any(n in ("", ".", "..") for n in names):
            raise OutputError(
                f"is outside {self.root}, the folder neoconv was given; nothing is written there", file=str(path)
            )
        return names

    def folder(self, names: list[str], *, create: bool = False, path: str | Path = "") -> int:
        """An open descriptor of the folder root/names... (made when `create`), or OutputError when a
        step is a link or not a folder."""
        fd = os.open(self.root, _FOLDER)
        try:
            for i, name in enumerate(names):
                if create:
                    try:
                        os.mkdir(name, 0o777, dir_fd=fd)
                    except FileExistsError:
                        pass
                try:
                    step = os.open(name, _FOLDER | getattr(os, "O_NOFOLLOW", 0), dir_fd=fd)
                except OSError as exc:
                    where = os.path.join(self.root, *names[: i + 1])
                    why = "is a symbolic link" if _is_link(name, fd) else (exc.strerror or str(exc)).lower()
                    raise OutputError(
                        f"{where} {why}: neoconv writes only inside {self.root} and never through a "
                        "link; remove it or choose another output folder",
                        file=str(path or where),
                    ) from None
                os.close(fd)
                fd = step
            return fd
        except BaseException:
            os.close(fd)
            raise

    def open_file(self, path: str | Path) -> int:
        """A read-only descriptor of the file at `path` under the root, opened without following a
        link at any step (and without waiting on a FIFO); OSError or OutputError when it cannot be."""
        names = self.parts(path)
        fd = self.folder(names[:-1], path=path)
        try:
            return os.open(
                names[-1],
                os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                dir_fd=fd,
            )
        finally:
            os.close(fd)

    def read_bytes(self, path: str | Path) -> bytes | None:
        """The bytes of a regular file under the root, or None (absent, a link, not a regular file)."""
        try:
            file = self.open_file(path)
        except (OutputError, OSError):
            return None
        if not stat.S_ISREG(os.fstat(file).st_mode):  # a folder or a FIFO is no file of ours
            os.close(file)
            return None
        with os.fdopen(file, "rb") as fh:
            return fh.read()

    def read(self, path: str | Path) -> str | None:
        """The UTF-8 text of a regular file under the root, or None."""
        data = self.read_bytes(path)
        try:
            return None if data is None else data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def replace(self, path: str | Path, data: str | bytes, *, times_of: str | Path | None = None) -> None:
        """Write the whole of `data` to a temp file beside `path` and rename it over `path` (folders
        made as needed); an existing file keeps its permissions; `times_of`: a file whose
        permissions and times the new one gets (a backup)."""
        names = self.parts(path)
        try:
            fd = self.folder(names[:-1], create=True, path=path)
        except OSError as exc:
            raise OutputError(f"cannot make its folder: {exc.strerror or exc}", file=str(path)) from None
        temp = ""
        try:
            name = names[-1]
            try:
                existing: os.stat_result | None = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                existing = None
            if existing is not None and not (stat.S_ISREG(existing.st_mode) or stat.S_ISLNK(existing.st_mode)):
                raise OutputError("exists and is not a regular file; not replaced", file=str(path))
            keep = existing is not None and stat.S_ISREG(existing.st_mode)
            prefix = f".{name[:40]}.neoconv-{os.getpid()}-"
            while True:
                temp = prefix + "".join(random.choices(_LETTERS, k=8)) + ".tmp"
                try:
                    out = os.open(
                        temp, _NEW | getattr(os, "O_NOFOLLOW", 0), 0o600 if keep or times_of else NEW_FILE, dir_fd=fd
                    )
                    break
                except FileExistsError:
                    continue
            try:
                if keep and existing is not None:
                    os.fchmod(out, existing.st_mode & 0o7777)
                view = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
                while view:
                    view = view[os.write(out, view) :]
                if times_of is not None:
                    like = os.stat(times_of)
                    os.fchmod(out, like.st_mode & 0o7777)
                    os.utime(out, ns=(like.st_atime_ns, like.st_mtime_ns))
            finally:
                os.close(out)
            os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
            temp = ""
        except OSError as exc:
            raise OutputError(f"cannot write here: {exc.strerror or exc}", file=str(path)) from None
        finally:
            if temp:
                try:
                    os.unlink(temp, dir_fd=fd)
                except OSError:
                    pass
            os.close(fd)

    def remove(self, path: str | Path) -> None:
        """Remove a regular file under the root (a link or anything else there is left alone)."""
        names = self.parts(path)
        fd = self.folder(names[:-1], path=path)
        try:
            if not stat.S_ISREG(os.stat(names[-1], dir_fd=fd, follow_symlinks=False).st_mode):
                raise OutputError("is not a regular file; not removed", file=str(path))
            os.unlink(names[-1], dir_fd=fd)
        except OSError as exc:
            raise OutputError(f"cannot remove it: {exc.strerror or exc}", file=str(path)) from None
        finally:
            os.close(fd)


_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def _is_link(name: str, folder: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)
    except OSError:
        return False
