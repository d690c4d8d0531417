"""What an earlier run wrote, from its summary (neoconv-report.json): the outputs whose source is
gone (--prune removes them, --check lists them), and the outputs an --in-place run must not read
back as sources.

The rule for removing a file: it is listed as the `output` (or a `side_files` entry) of a source
in the previous run's summary of the same SRC2DST command, it bears the name neoconv gives that
source's output, it lies inside the output tree and is a regular file, and the source is no longer
under SRC_DIR. Nothing else is ever removed: not a file neoconv did not list, not a file whose
source is still there (left out with --exclude, say).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, Iterator

from ..core.errors import NeoconvError
from ..io.confined import Confined
from .summary import SUMMARY_NAME
from .options import BatchOptions, FileResult


def previous(target_root: Path, command: str) -> list[dict[str, Any]]:
    """The file entries of the previous run's summary, if it was of this command (else none)."""
    text = Confined(target_root).read(target_root / SUMMARY_NAME) if target_root.is_dir() else None
    try:
        data = json.loads(text) if text is not None else None  # a link or a FIFO there is no summary of ours
    except ValueError:
        return []
    if not isinstance(data, dict) or data.get("command") != command or not isinstance(data.get("files"), list):
        return []
    return [f for f in data["files"] if isinstance(f, dict) and isinstance(f.get("source"), str)]


def written(entries: list[dict[str, Any]]) -> Iterator[tuple[str, str]]:
    """(source, output) for every file the entries say neoconv wrote (outputs and side files)."""
    for entry in entries:
        for name in [entry.get("output"), *(entry.get("side_files") or [])]:
            if isinstance(name, str) and name:
                yield entry["source"], name


def orphans(
    root: Path, target_root: Path, entries: list[dict[str, Any]], claimed: set[str], opts: BatchOptions
) -> list[FileResult]:
    """The outputs of sources that are gone: `removed` (--prune), else `orphaned` (a --check fails on them)."""
    from .job import output_path

    found: list[FileResult] = []
    for source, name in written(entries):
        if source in claimed or (root / source).exists() or name in claimed:
            continue
        own = output_path(source, opts.src, opts.dst)
        if name != own and os.path.dirname(name) != os.path.dirname(own):
            continue  # not a name neoconv gives this source's files
        path = _inside(target_root, name)
        if path is None:
            continue
        if opts.check or not opts.prune:  # listed (and kept on record for a later --prune)
            found.append(FileResult(source, "orphaned", name, reason="its source is gone: --prune removes it"))
            continue
        try:
            Confined(target_root).remove(path)  # never through a symlinked folder inside the tree
        except NeoconvError as exc:
            found.append(FileResult(source, "failed", name, error=f"cannot remove {name}: {exc.message}"))
            continue
        found.append(FileResult(source, "removed", name, reason="its source is gone"))
    return found


def _inside(target_root: Path, name: str) -> Path | None:
    """The file `name` under target_root, if it is a regular file there (no '..', no link, no folder)."""
    if os.path.isabs(name) or ".." in Path(name).parts:
        return None
    path = target_root / name
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    return path if stat.S_ISREG(mode) else None


def own_outputs(entries: list[dict[str, Any]]) -> set[str]:
    """What an earlier --in-place run wrote beside its sources (an output under another name than its
    source: neox2cerebras writes m.yaml beside m.yml): not to be read back as a source."""
    return {name for source, name in written(entries) if name != source}
