"""A batch run's record: OUT_DIR/neoconv-report.json streamed as files finish, and the summary
for the terminal."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import printable

if TYPE_CHECKING:
    from .options import BatchOptions, FileResult

SUMMARY_NAME = "neoconv-report.json"


class SummaryWriter:
    """Streams OUT_DIR/neoconv-report.json through a temp file of this run, renamed into place at
    the end. A summary that cannot be written (a full disk) stops being written, and says so at
    the end; it never stops the translations."""

    def __init__(self, path: Path | None, command: str) -> None:
        self.path = path
        self.temps: list[str] = []  # this run's temp file, once it exists
        self.fh: Any = None
        self.first = True
        self.error = ""
        if path is not None:
            from ..io.outputs import NEW_FILE, temp_file

            try:
                fd = temp_file(path, self.temps, NEW_FILE)
                self.fh = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
                self.fh.write('{\n  "command": ' + json.dumps(command) + ',\n  "files": [')
            except OSError as exc:
                self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        self.error = (
            f"{self.path}: cannot write it ({exc.strerror or exc}); the files listed above were still translated"
        )
        self.discard()

    def add(self, result: FileResult) -> None:
        if self.fh is not None:
            entry = json.dumps(result.to_json(), ensure_ascii=False)  # one line per file: grep-able
            try:
                self.fh.write(("\n    " if self.first else ",\n    ") + entry)
            except OSError as exc:
                self._failed(exc)
            self.first = False

    closed = False  # renamed into place: a complete record (or, interrupted, a partial one that says so)

    def close(self, totals: dict[str, int], *, interrupted: bool = False) -> None:
        if self.fh is not None and self.path is not None:
            try:
                end = ',\n  "interrupted": true' if interrupted else ""
                self.fh.write(
                    ("\n  ]" if not self.first else "]") + ',\n  "totals": ' + json.dumps(totals) + end + "\n}\n"
                )
                self.fh.close()
                self.fh = None
                os.replace(self.temps[0], self.path)
                self.temps.clear()
                self.closed = True
            except OSError as exc:
                self._failed(exc)

    def discard(self) -> None:
        """Interrupted or failed: leave no half-written summary behind."""
        if self.fh is not None:
            try:
                self.fh.close()
            except OSError:
                pass
            self.fh = None
        from ..io.outputs import remove

        remove(self.temps)


SHOWN = 3  # names shown of a group of files (the rest: in neoconv-report.json)
GROUPED = 4  # skips of one reason shown as one line from this many on


def human_summary(
    results: list[FileResult],
    opts: BatchOptions,
    totals: dict[str, int] | None = None,
    report_error: str = "",
    still_missing: list[str] | None = None,
    report: str = "",
) -> str:
    """The notable files, then the count of every status (`totals` from run_batch: `results` holds only
    the notable ones), the outputs that still miss values and where the report is. Files skipped for
    the same reason are one line (a tree of 415 shared-settings fragments is not 415 lines). File
    names and messages come from the tree: control characters in them are shown escaped, never sent
    to the terminal."""
    lines = []
    skipped: dict[str, list[str]] = {}
    for r in results:
        if r.status == "failed":
            lines.append(f"failed   {printable(r.source)}: {printable(r.error)}")
        elif r.status == "skipped":
            skipped.setdefault(r.reason, []).append(r.source)
        elif r.status == "changed":
            lines.append(f"changed  {printable(r.source)} -> {printable(r.output or '')}")
        elif r.status in ("orphaned", "removed"):
            lines.append(f"{r.status:<8} {printable(r.output or '')}: {printable(r.reason)}")
        elif r.error:
            lines.append(f"strict   {printable(r.source)}: {printable(r.error.removeprefix('fails the policy: '))}")
    for reason, sources in skipped.items():
        if len(sources) < GROUPED:
            lines += [f"skipped  {printable(source)}: {printable(reason)}" for source in sources]
        else:
            lines.append(f"skipped  {len(sources)} paths: {printable(reason)} ({_some(sources, report)})")
    if report_error:
        lines.append(f"failed   {printable(report_error)}")
    counts = dict(totals or {})
    if totals is None:
        for r in results:
            counts[r.status] = counts.get(r.status, 0) + 1
    if still_missing:
        count = "1 output still misses" if len(still_missing) == 1 else f"{len(still_missing)} outputs still miss"
        lines.append(
            f"missing  {count} values the run needs (their # MISSING: lines and report entries name the "
            f"--set that gives each): {_some(still_missing, report)}"
        )
    if report:
        lines.append(f"neoconv batch: the per-file report is {printable(report)}")
    lines.append("neoconv batch: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return "\n".join(lines) + "\n"


def _some(names: list[str], report: str) -> str:
    """Up to SHOWN names, and how many more (all of them are in the per-file report)."""
    shown = ", ".join(printable(name) for name in names[:SHOWN])
    more = len(names) - SHOWN
    if more <= 0:
        return shown
    return f"{shown} and {more} more" + (", each in the per-file report" if report else "")
