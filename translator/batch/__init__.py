"""Batch migration of a whole tree of configs: `neoconv batch SRC2DST SRC_DIR -o OUT_DIR`.

One failing file never stops the run; outputs are written atomically and deterministically, so
`-j N` gives byte-identical output to `-j 1` and a re-run to the first run. The source tree is
never written to unless `--in-place` is asked for (with a backup unless `--no-backup`).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import NeoconvError, UsageError
from ..policy import Outcome, Policy, describe
from ..registry import FORMATS, get_format
from .summary import SUMMARY_NAME, SummaryWriter, human_summary
from .walk import walk

__all__ = ["SUMMARY_NAME", "BatchOptions", "FileResult", "batch_outcome", "human_summary", "output_path", "run_batch", "walk"]


@dataclass
class BatchOptions:
    src: str
    dst: str
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    with_files: list[str] = field(default_factory=list)
    jobs: int = 1
    policy: Policy = field(default_factory=Policy)  # which report entries fail the run (--strict, --fail-on, --baseline)
    check: bool = False
    in_place: bool = False
    backup: bool = True
    translate_options: dict[str, Any] = field(default_factory=dict)


@dataclass
class FileResult:
    source: str  # relative to SRC_DIR
    status: str  # translated | unchanged | changed | failed | skipped
    output: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    error: str = ""
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"source": self.source, "status": self.status}
        if self.output:
            data["output"] = self.output
        if self.counts:
            data["counts"] = self.counts
        if self.error:
            data["error"] = self.error
        if self.reason:
            data["reason"] = self.reason
        return data


def output_path(rel: str, dst: str) -> str:
    """The output's path relative to OUT_DIR: the source's, with the target format's suffix."""
    stem, dot, suffix = rel.rpartition(".")
    return (stem if dot and "/" not in suffix else rel) + get_format(dst).suffix


def _job(opts: BatchOptions, args: Job) -> FileResult:
    """Translate one file (runs in a worker process; must not raise)."""
    path_s, rel_s, out_s = args
    rel_out = output_path(rel_s, opts.dst)  # the summary names outputs relative to OUT_DIR
    from ..api import translate
    from ..outputs import copy_file, foreign_side_file, replace_file

    try:
        config: Any = [path_s]
        fragment = get_format(opts.src).load_reader().fragment
        if fragment is not None:
            # a format whose files may be shared-settings fragments (NeoX's local_setup.yml): read the
            # file once, look, and translate what was read (a broken file fails as it would anyway)
            source = _read_source(path_s, opts)
            if source is not None:
                why = fragment(source)
                if why:
                    return FileResult(rel_s, "skipped", reason=why)
                if not opts.with_files:
                    config = source
        with_files = [(w, _companion(w, opts.src)) for w in opts.with_files]
        result = translate(config, opts.src, opts.dst, with_files=with_files, output=out_s, **opts.translate_options)
        text = result.dump()
        counts = {k: v for k, v in result.report.summary().items() if v}
        failing = opts.policy.failures(result.report) if opts.policy.fail_on else []
        strict = f"fails the policy: {describe(failing)}" if failing else ""
        folder = os.path.dirname(out_s)
        files = {out_s: text, **{os.path.join(folder, name): side for name, side in result.side_files.items()}}
        if opts.check:
            same = all(_read_or_none(p) == t for p, t in files.items())
            status = "unchanged" if same else "changed"
            return FileResult(rel_s, status, rel_out, counts, error=strict)
        for target, content in files.items():
            clash = foreign_side_file(target, content, out_s) if target != out_s else ""
            if clash:
                return FileResult(rel_s, "failed", error=clash)
        if not os.path.isdir(folder):
            os.makedirs(folder, exist_ok=True)
        if opts.in_place and opts.backup and os.path.exists(out_s):
            copy_file(out_s, out_s + ".bak")  # the bytes as they were (CRLF, BOM, comments kept)
        for target, content in files.items():
            replace_file(target, content)
        return FileResult(rel_s, "translated", rel_out, counts, error=strict)
    except NeoconvError as exc:
        return FileResult(rel_s, "failed", error=str(exc))
    except Exception as exc:  # one bad file must not stop a migration of thousands
        return FileResult(rel_s, "failed", error=f"internal error: {type(exc).__name__}: {exc}")


def _read_source(path: str, opts: BatchOptions) -> Any:
    """The file read as the source format, or None when it plainly is another format (translate
    then reads it as that one and says so)."""
    from ..api import load
    from ..errors import WrongFormat

    options = opts.translate_options
    try:
        return load(path, opts.src, layout=options.get("source_layout"), model_config=options.get("model_config"))
    except WrongFormat:
        return None


def _read_or_none(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def _companion(path: str, src: str) -> str:
    from ..registry import companion_format

    return companion_format(path, src)


def _clean_stale_temps(out_dir: Path) -> None:
    """Remove the temp files of an earlier neoconv run that was killed (kill -9) before it could:
    only neoconv's own names, and only those of processes that are gone."""
    from ..outputs import stale_temp

    if not out_dir.is_dir():
        return
    for folder, _, files in os.walk(out_dir):
        for name in files:
            if name.startswith(".") and stale_temp(name):
                Path(folder, name).unlink(missing_ok=True)


Job = tuple[str, str, str]  # source path, source relative to SRC_DIR, output path


def _usage(opts: BatchOptions) -> None:
    """What would make every file fail the same way is a bad invocation: exit 2 before any work."""
    from ..api import load
    from ..arguments import check_options

    check_options(opts.src, opts.dst, opts.translate_options)
    for path in opts.with_files:
        load(path, _companion(path, opts.src))  # a missing or broken --with file, once, with its own message


def _plan(root: Path, out_root: str, include: list[str], opts: BatchOptions, inside_src: str | None) -> list[Job | FileResult]:
    """Every file's job (or why it is skipped), in walk order, and refuse before any work two
    sources that would be written to one output, and outputs that would land in the source tree.
    Holds the names only: a tree of 100,000 files costs a few megabytes."""
    with_resolved = {os.path.realpath(w) for w in opts.with_files}
    claimed: dict[str, str] = {}  # output (relative to OUT_DIR) -> the source written there
    plan: list[Job | FileResult] = []
    matched = 0
    sources: set[str] = set()
    for found in walk(root, include, opts.exclude, in_place=opts.in_place):
        if not found.rel.endswith("/"):
            matched += 1
            if opts.in_place:
                sources.add(found.rel)
        if found.status:
            plan.append(FileResult(found.rel, found.status, error=found.reason if found.status == "failed" else "",
                                   reason=found.reason if found.status == "skipped" else ""))  # fmt: skip
            continue
        if with_resolved and os.path.realpath(found.path) in with_resolved:
            plan.append(FileResult(found.rel, "skipped", reason="named with --with: merged into every translation"))
            continue
        rel_out = output_path(found.rel, opts.dst)
        other = claimed.setdefault(rel_out, found.rel)
        if other != found.rel:
            raise UsageError(
                f"{other} and {found.rel} would both be written to {rel_out}: one would overwrite the other; "
                "rename one or leave one out with --exclude"
            )  # fmt: skip
        if inside_src is not None and (rel_out == inside_src or rel_out.startswith(inside_src + "/")):
            raise UsageError(
                f"{found.rel} would be written to {os.path.join(out_root, rel_out)}, inside SRC_DIR (which is inside "
                "OUT_DIR): the source tree is never written to; choose an OUT_DIR outside it"
            )  # fmt: skip
        plan.append((found.path, found.rel, os.path.join(out_root, rel_out)))
    if opts.include and not matched:
        raise UsageError(f"no file under {root} matches --include {' '.join(opts.include)}")
    if opts.in_place:  # m.yml -> m.yaml where m.yaml is a source left out of the run (a --with file, a link)
        for rel_out, rel in claimed.items():
            if rel_out != rel and rel_out in sources:
                raise UsageError(f"{rel} would be written to {rel_out}, which is another source file: rename one")
    return plan


def run_batch(
    src_dir: str, out_dir: str | None, opts: BatchOptions, progress: Callable[[int, int, str], None] | None = None
) -> tuple[list[FileResult], dict[str, Any]]:
    if opts.src not in FORMATS or opts.dst not in FORMATS:
        raise UsageError(f"unknown format pair {opts.src}2{opts.dst}; formats: {', '.join(FORMATS)}")
    root = Path(src_dir)
    if not root.is_dir():
        raise UsageError(f"{src_dir}: not a folder")
    inside_src: str | None = None  # SRC_DIR relative to OUT_DIR, when it lies inside it
    if opts.in_place:
        if out_dir:
            raise UsageError("--in-place writes beside the sources: do not give -o")
        target_root = root
    else:
        if not out_dir:
            raise UsageError("give -o OUT_DIR (or --in-place to write beside the sources)")
        target_root = Path(out_dir)
        if target_root.exists() and not target_root.is_dir():
            raise UsageError(f"{out_dir}: not a folder (a file is there); give a folder to write the tree into")
        resolved_out, resolved_src = target_root.resolve(), root.resolve()
        if resolved_out == resolved_src or resolved_src in resolved_out.parents:
            raise UsageError(f"{out_dir} is inside {src_dir}: the source tree is never written to (use --in-place)")
        if resolved_out in resolved_src.parents:
            inside_src = resolved_src.relative_to(resolved_out).as_posix()
    _usage(opts)
    include = opts.include or list(get_format(opts.src).globs)
    plan = _plan(root, str(target_root), include, opts, inside_src)
    if not opts.check:
        if not opts.in_place:
            target_root.mkdir(parents=True, exist_ok=True)
        _clean_stale_temps(target_root)
    # Memory stays small however large the tree: the plan holds names only, each file's summary
    # line is streamed to disk, and only the notable results (failed, skipped, changed, strict)
    # are kept for the human summary.
    notable: list[FileResult] = []
    totals: dict[str, int] = {}
    sink = SummaryWriter(None if opts.check else target_root / SUMMARY_NAME, f"{opts.src}2{opts.dst}")
    try:
        for done, result in enumerate(_results(iter(plan), opts), 1):
            totals[result.status] = totals.get(result.status, 0) + 1
            if result.status != "translated" or result.error:
                notable.append(result)
            sink.add(result)
            if progress:
                progress(done, len(plan), result.source)
        sink.close(totals)
    finally:
        sink.discard()
    summary: dict[str, Any] = {"command": f"{opts.src}2{opts.dst}", "totals": totals}
    if sink.error:
        summary["report_error"] = sink.error
    return notable, summary


def _results(plan: Iterator[Job | FileResult], opts: BatchOptions) -> Iterator[FileResult]:
    """Results in plan order (so -j N writes the same summary as -j 1)."""
    if opts.jobs <= 1:
        for item in plan:
            yield item if isinstance(item, FileResult) else _job(opts, item)
        return
    chunks = iter(lambda: list(islice(plan, _CHUNK)), [])
    first = next(chunks, [])
    if len(first) <= 1:  # one file: not worth starting workers
        for item in first:
            yield item if isinstance(item, FileResult) else _job(opts, item)
        return
    _compile_tables(opts)  # before the workers start: forked workers inherit them compiled
    # A bounded number of chunks in flight: workers never wait for the next window, and a tree of
    # 100,000 files never queues 100,000 futures.
    pool = ProcessPoolExecutor(max_workers=opts.jobs, initializer=_die_with_parent, initargs=(os.getpid(),))
    finished = False
    try:
        pending: deque[tuple[list[Any], Any]] = deque()
        for chunk in chain([first], chunks):
            jobs = [item for item in chunk if not isinstance(item, FileResult)]
            pending.append((chunk, pool.submit(_run_chunk, opts, jobs)))
            if len(pending) >= opts.jobs * 4:
                yield from _in_order(*pending.popleft())
        while pending:
            yield from _in_order(*pending.popleft())
        finished = True
    finally:
        # interrupted: drop the queued chunks rather than wait for them (the workers die with us)
        pool.shutdown(wait=finished, cancel_futures=not finished)


def _die_with_parent(parent: int) -> None:
    """Runs first in every worker: a worker must not outlive the batch (a killed parent would leave
    it writing files and holding the caller's pipes open). Linux kills it with the parent
    (PR_SET_PDEATHSIG); elsewhere a watchdog thread notices the parent is gone."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


_PR_SET_PDEATHSIG = 1


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(1)


def _compile_tables(opts: BatchOptions) -> None:
    from ..catalogue import catalogue
    from ..mapping import load_table
    from ..schema import schema_index

    catalogue()
    for fmt in (opts.src, opts.dst):
        load_table(fmt)
        schema_index(fmt)


_CHUNK = 16  # files per task sent to a worker: amortises the hand-over, keeps the pipeline short


def _run_chunk(opts: BatchOptions, jobs: list[Job]) -> list[FileResult]:
    return [_job(opts, item) for item in jobs]


def _in_order(chunk: list[Any], future: Any) -> Iterator[FileResult]:
    ran = iter(future.result())
    for item in chunk:
        yield item if isinstance(item, FileResult) else next(ran)


def batch_outcome(results: list[FileResult], summary: dict[str, Any] | None = None) -> Outcome:
    """What a batch ended with (`results`: the notable ones run_batch returns)."""
    return Outcome(
        failed=sum(r.status == "failed" for r in results), changed=sum(r.status == "changed" for r in results),
        policy_failures=sum(bool(r.error) for r in results if r.status != "failed"),
        unrecorded=(summary or {}).get("report_error", ""),  # the caller would have no record of the run
    )  # fmt: skip

