"""What a batch is asked to do (BatchOptions) and what became of each file (FileResult): shared by the
run (__init__.py), one file's job, the summary and the record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..services.policy import Policy


@dataclass
class BatchOptions:
    src: str
    dst: str
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    with_files: list[str] = field(default_factory=list)
    jobs: int = 1
    policy: Policy = field(
        default_factory=Policy
    )  # which report entries fail the run (--strict, --fail-on, --baseline)
    check: bool = False
    in_place: bool = False
    backup: bool = True
    translate_options: dict[str, Any] = field(default_factory=dict)
    diff: bool = False  # with check: a unified diff of each change (FileResult.diff)
    prune: bool = False  # remove the outputs of sources that are gone (record.py says which)
    plain: bool = False  # a same-format migration writes the plain layout, not the source's formatting
    skip_unsupported: bool = False  # a model family the target cannot hold: skipped, not failed
    out_root: str = (
        ""  # the folder outputs go into (OUT_DIR, or SRC_DIR with --in-place): nothing is written outside it
    )
    src_root: str = ""  # SRC_DIR: sources are read only inside it, never through a link
    prove: bool = False  # keep each written file's report for `--prove` (cli/batch.py proves them after the run)


@dataclass
class FileResult:
    source: str  # relative to SRC_DIR
    status: str  # translated | unchanged | changed | failed | skipped | orphaned | removed
    output: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    error: str = ""
    reason: str = ""
    diff: str = ""  # --check --diff: what would change (not in the summary file)
    side_files: list[str] = field(default_factory=list)  # written beside the output (relative to OUT_DIR)
    proof_report: dict[str, Any] | None = None  # --prove: the translation's JSON report (not in the summary file)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"source": self.source, "status": self.status}
        if self.output:
            data["output"] = self.output
        if self.side_files:
            data["side_files"] = self.side_files
        if self.counts:
            data["counts"] = self.counts
        if self.error:
            data["error"] = self.error
        if self.reason:
            data["reason"] = self.reason
        return data
