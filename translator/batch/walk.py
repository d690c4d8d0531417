"""The walk of a source tree: the files to translate, in a stable order, and the entries that are
skipped or failed with the reason, so that no file vanishes from a migration without a word."""

from __future__ import annotations

import fnmatch
import os
import stat
from pathlib import Path
from typing import Iterator, NamedTuple

from .summary import SUMMARY_NAME


class Found(NamedTuple):
    """One entry of the walk: a file to translate (status ""), or one skipped or failed, and why."""

    path: str
    rel: str  # relative to the root, in / form ("sub/" for a folder)
    status: str = ""  # "" | "skipped" | "failed"
    reason: str = ""


LINKED_FOLDER = "a symlink to a folder: not followed (give the folder it points to as SRC_DIR to translate it)"
LINK_OUTSIDE = "a symlink to a file outside SRC_DIR: not read"
LINK_IN_PLACE = "a symlink: --in-place rewrites only regular files (translate the file it points to)"


def walk(
    root: Path, include: list[str], exclude: list[str], *, in_place: bool = False, defaults: list[str] | None = None
) -> Iterator[Found]:
    """The files under root matching include and not exclude, in sorted order (a folder's files,
    then its subfolders), hidden files and folders left out. A pattern may name a folder (its name,
    or its path under root; a trailing / is allowed): `--exclude rwkv` leaves out rwkv/ and all
    below it, `--include llama` takes the files under llama/ that the format's `defaults` globs take. Nothing outside root is read: symlinked
    folders are never followed and a symlinked file is read only when it points inside root; a FIFO,
    socket or device is never opened (a FIFO would block the run forever). Such entries, and
    folders that cannot be read, come back with a status and the reason, so that no file vanishes
    from the migration without a word. A generator over os.scandir (no extra stat per file)."""
    top = str(root)
    real_top = os.path.realpath(top)
    folder_in = [p.rstrip("/") for p in include if p.rstrip("/")]
    folder_out = [p.rstrip("/") for p in exclude if p.rstrip("/")]
    stack = [(top, False)]  # a folder, and whether an --include pattern named it (or a folder above it)
    while stack:
        folder, named = stack.pop()
        base = os.path.relpath(folder, top).replace(os.sep, "/")
        prefix = "" if base == "." else base + "/"
        try:
            with os.scandir(folder) as entries:
                listed = sorted((e for e in entries if not e.name.startswith(".")), key=lambda e: e.name)
        except OSError as exc:
            yield Found(
                folder,
                prefix,
                "failed",
                f"cannot read this folder ({exc.strerror or exc}): its files are not translated",
            )
            continue
        folders: list[tuple[str, bool]] = []
        for entry in listed:
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not _named(entry.name, rel, folder_out):  # an excluded folder is not even listed
                        folders.append((entry.path, named or _named(entry.name, rel, folder_in)))
                    continue
                link = entry.is_symlink()
                regular = entry.is_file(follow_symlinks=False)
            except OSError as exc:
                yield Found(entry.path, rel, "failed", f"cannot read it ({exc.strerror or exc})")
                continue
            if link and os.path.isdir(entry.path):  # said whatever the globs: its files would vanish silently
                yield Found(entry.path, rel + "/", "skipped", LINKED_FOLDER)
                continue
            taken = _matches(entry.name, rel, include, exclude) or (
                named and _matches(entry.name, rel, defaults or [], exclude)
            )
            if entry.name == SUMMARY_NAME or not taken:
                continue
            if link:
                yield _linked(entry.path, rel, real_top, in_place)
            elif not regular:
                yield Found(entry.path, rel, "skipped", f"not a regular file ({_kind(entry.path)}): not read")
            else:
                yield Found(entry.path, rel)
        stack.extend(reversed(folders))  # depth first, in sorted order


def _named(name: str, rel: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in patterns)


def _matches(name: str, rel: str, include: list[str], exclude: list[str]) -> bool:
    if not any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in include):
        return False
    return not any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in exclude)


def _linked(path: str, rel: str, real_top: str, in_place: bool) -> Found:
    """A symlink that matched the globs: read only when it is a regular file inside the tree."""
    real = os.path.realpath(path)
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:
        return Found(path, rel, "failed", f"a symlink that cannot be followed ({exc.strerror or exc})")
    if os.path.commonpath([real, real_top]) != real_top:
        return Found(path, rel, "skipped", LINK_OUTSIDE)
    if not stat.S_ISREG(mode):
        return Found(
            path, rel, "skipped", f"a symlink to something that is not a regular file ({_kind(real)}): not read"
        )
    if in_place:
        return Found(path, rel, "skipped", LINK_IN_PLACE)
    return Found(path, rel)  # read as the file it points to inside the tree (io.inputs_inside)


def _kind(path: str) -> str:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "unknown"
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a file"
