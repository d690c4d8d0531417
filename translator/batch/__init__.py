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
from contextlib import contextmanager
from concurrent.futures import ProcessPoolExecutor
from itertools import chain, islice
from pathlib import Path
from typing import Any, Callable, Iterator

from ..core.errors import NeoconvError, UsageError
from ..services.policy import Outcome
from ..knowledge.registry import FORMATS, get_format
from .job import Job, output_path, run_job
from .options import BatchOptions, FileResult
from .summary import SUMMARY_NAME, SummaryWriter, human_summary
from .walk import walk

__all__ = [
    "SUMMARY_NAME",
    "BatchOptions",
    "BatchInterrupted",
    "FileResult",
    "batch_outcome",
    "human_summary",
    "output_path",
    "run_batch",
    "walk",
]


def _clean_stale_temps(out_dir: Path) -> None:
    """Remove the temp files of an earlier neoconv run that was killed (kill -9) before it could:
    only neoconv's own names, only those of processes that are gone, never through a link."""
    from ..io.confined import Confined
    from ..io.outputs import stale_temp

    if not out_dir.is_dir():
        return
    tree = Confined(out_dir)
    for folder, _, files in os.walk(out_dir):  # symlinked folders are not descended
        for name in files:
            if name.startswith(".") and stale_temp(name):
                try:
                    tree.remove(os.path.join(folder, name))
                except NeoconvError:
                    pass


def _usage(opts: BatchOptions) -> None:
    """What would make every file fail the same way is a bad invocation: exit 2 before any work."""
    from ..services.pipeline import load
    from ..services.pipeline import check_options

    check_options(opts.src, opts.dst, opts.translate_options)
    from ..knowledge.registry import companion_format

    for path in opts.with_files:
        load(path, companion_format(path, opts.src))  # a missing or broken --with file, once, with its own message


def _plan(
    root: Path, out_root: str, opts: BatchOptions, inside_src: str | None, earlier: set[str]
) -> tuple[list[Job | FileResult], set[str]]:
    """Every file's job (or why it is skipped), in walk order, and the sources and outputs it
    claims; refuse before any work two sources that would be written to one output, and outputs
    that would land in the source tree. `earlier`: what an earlier --in-place run wrote beside its
    sources (never read back as a source). Holds the names only: a tree of 100,000 files costs a
    few megabytes."""
    with_resolved = {os.path.realpath(w) for w in opts.with_files}
    claimed: dict[str, str] = {}  # output (relative to OUT_DIR) -> the source written there
    plan: list[Job | FileResult] = []
    matched = 0
    sources: set[str] = set()
    defaults = list(get_format(opts.src).globs)
    for found in walk(root, opts.include or defaults, opts.exclude, in_place=opts.in_place, defaults=defaults):
        if not found.rel.endswith("/"):
            matched += 1
            sources.add(found.rel)
        if found.status:
            plan.append(
                FileResult(
                    found.rel,
                    found.status,
                    error=found.reason if found.status == "failed" else "",
                    reason=found.reason if found.status == "skipped" else "",
                )
            )
            continue
        if with_resolved and os.path.realpath(found.path) in with_resolved:
            plan.append(FileResult(found.rel, "skipped", reason="named with --with: merged into every translation"))
            continue
        if found.rel in earlier:
            plan.append(FileResult(found.rel, "skipped", reason="written by an earlier --in-place run: not a source"))
            continue
        rel_out = output_path(found.rel, opts.src, opts.dst)
        other = claimed.setdefault(rel_out, found.rel)
        if other != found.rel:
            raise UsageError(
                f"{other} and {found.rel} would both be written to {rel_out}: one would overwrite the other; "
                "rename one or leave one out with --exclude"
            )
        if inside_src is not None and (rel_out == inside_src or rel_out.startswith(inside_src + "/")):
            raise UsageError(
                f"{found.rel} would be written to {os.path.join(out_root, rel_out)}, inside SRC_DIR (which is inside "
                "OUT_DIR): the source tree is never written to; choose an OUT_DIR outside it"
            )
        plan.append((found.path, found.rel, os.path.join(out_root, rel_out)))
    if opts.include and not matched:
        raise UsageError(f"no file under {root} matches --include {' '.join(opts.include)}")
    if opts.in_place:  # m.yml -> m.yaml where m.yaml is a source left out of the run (a --with file, a link)
        for rel_out, rel in claimed.items():
            if rel_out != rel and rel_out in sources and rel_out not in earlier:
                raise UsageError(f"{rel} would be written to {rel_out}, which is another source file: rename one")
    return plan, sources | set(claimed)


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during a batch: what was written, and where the partial summary is."""

    def __init__(self, written: int, report: str) -> None:
        super().__init__(written, report)
        self.written = written
        self.report = report


def _roots(src_dir: str, out_dir: str | None, opts: BatchOptions) -> tuple[Path, Path, str | None]:
    """SRC_DIR, where outputs go, and SRC_DIR relative to OUT_DIR when it lies inside it."""
    root = Path(src_dir)
    if not root.is_dir():
        raise UsageError(f"{src_dir}: not a folder")
    if opts.in_place:
        if out_dir:
            raise UsageError("--in-place writes beside the sources: do not give -o")
        return root, root, None
    if not out_dir:
        raise UsageError("give -o OUT_DIR (or --in-place to write beside the sources)")
    target_root = Path(out_dir)
    if target_root.exists() and not target_root.is_dir():
        raise UsageError(f"{out_dir}: not a folder (a file is there); give a folder to write the tree into")
    resolved_out, resolved_src = target_root.resolve(), root.resolve()
    if resolved_out == resolved_src or resolved_src in resolved_out.parents:
        raise UsageError(f"{out_dir} is inside {src_dir}: the source tree is never written to (use --in-place)")
    inside = resolved_src.relative_to(resolved_out).as_posix() if resolved_out in resolved_src.parents else None
    return root, target_root, inside


def run_batch(
    src_dir: str, out_dir: str | None, opts: BatchOptions, progress: Callable[[int, int, str], None] | None = None
) -> tuple[list[FileResult], dict[str, Any]]:
    from . import record

    if opts.src not in FORMATS or opts.dst not in FORMATS:
        raise UsageError(f"unknown format pair {opts.src}2{opts.dst}; formats: {', '.join(FORMATS)}")
    if opts.diff and not opts.check:
        raise UsageError("--diff shows what --check finds: give both")
    root, target_root, inside_src = _roots(src_dir, out_dir, opts)
    opts.out_root, opts.src_root = str(target_root), str(root)
    _usage(opts)
    command = f"{opts.src}2{opts.dst}"
    earlier = record.previous(target_root, command)
    plan, claimed = _plan(
        root, str(target_root), opts, inside_src, record.own_outputs(earlier) if opts.in_place else set()
    )
    work = sum(1 for item in plan if not isinstance(item, FileResult))
    # never more workers than chunks of work or than the machine has cores (-j 100 over 40 files)
    opts.jobs = max(1, min(opts.jobs, os.cpu_count() or 1, -(-work // _CHUNK)))
    if not opts.check:
        if not opts.in_place:
            target_root.mkdir(parents=True, exist_ok=True)
        _clean_stale_temps(target_root)
    # Memory stays small however large the tree: the plan holds names only, each file's summary
    # line is streamed to disk, and only the notable results (failed, skipped, changed, strict)
    # are kept for the human summary.
    notable: list[FileResult] = []
    totals: dict[str, int] = {}
    sink = SummaryWriter(None if opts.check else target_root / SUMMARY_NAME, command)

    to_prove: list[tuple[str, str, dict[str, Any]]] = []  # --prove: source, output (relative), report
    still_missing: list[str] = []  # outputs the run cannot start from yet: the summary names them

    def add(result: FileResult) -> None:
        if result.counts.get("missing") and result.status != "failed":
            still_missing.append(result.output or result.source)
        if result.proof_report is not None and result.output:
            to_prove.append((result.source, result.output, result.proof_report))
            result.proof_report = None
        totals[result.status] = totals.get(result.status, 0) + 1
        if result.status not in ("translated", "unchanged") or result.error:
            notable.append(result)
        sink.add(result)

    runner = _Runner(iter(plan), opts)
    try:
        results, done = iter(runner), 0
        while True:
            with _held():  # Ctrl-C or SIGTERM waits until the file just written is on record
                result = next(results, None)
                if result is None:
                    break
                add(result)
            done += 1
            if progress:
                progress(done, len(plan), result.source)
        for result in record.orphans(root, target_root, earlier, claimed, opts):
            add(result)
        sink.close(totals)
    except KeyboardInterrupt:
        for result in runner.unfinished():  # the files the workers are writing now: on record too
            add(result)
        sink.close(totals, interrupted=True)  # what was done is on record: a re-run completes it
        raise BatchInterrupted(
            totals.get("translated", 0), str(target_root / SUMMARY_NAME) if sink.closed else ""
        ) from None
    finally:
        runner.close()
        sink.discard()
    summary: dict[str, Any] = {"command": command, "totals": totals, "still_missing": still_missing}
    if sink.closed:
        summary["report"] = str(target_root / SUMMARY_NAME)
    if opts.prove:
        summary["to_prove"] = to_prove
    if sink.error:
        summary["report_error"] = sink.error
    return notable, summary


@contextmanager
def _held() -> Iterator[None]:
    """SIGINT and SIGTERM held back (delivered when the block ends), where the OS can hold them."""
    hold = getattr(signal, "pthread_sigmask", None)
    if hold is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    before = hold(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        hold(signal.SIG_SETMASK, before)


class _Runner:
    """Each file's result in plan order (so -j N writes the same summary as -j 1): in this process
    for -j 1, else from worker processes in chunks; after an interrupt, the results of the chunks
    the workers are running (their files are being written) are still collected (unfinished)."""

    def __init__(self, plan: Iterator[Job | FileResult], opts: BatchOptions) -> None:
        self.plan, self.opts = plan, opts
        self.pool: ProcessPoolExecutor | None = None
        self.pending: deque[tuple[list[Any], Any]] = deque()
        self.current: Iterator[FileResult] = iter(())  # the rest of the chunk being handed out

    def __iter__(self) -> Iterator[FileResult]:
        opts = self.opts
        if opts.jobs <= 1:
            for item in self.plan:
                yield item if isinstance(item, FileResult) else run_job(opts, item)
            return
        chunks = iter(lambda: list(islice(self.plan, _CHUNK)), [])
        first = next(chunks, [])
        if len(first) <= 1:  # one file: not worth starting workers
            for item in first:
                yield item if isinstance(item, FileResult) else run_job(opts, item)
            return
        _compile_tables(opts)  # before the workers start: forked workers inherit them compiled
        # A bounded number of chunks in flight: workers never wait for the next window, and a tree of
        # 100,000 files never queues 100,000 futures.
        self.pool = ProcessPoolExecutor(max_workers=opts.jobs, initializer=_die_with_parent, initargs=(os.getpid(),))
        for chunk in chain([first], chunks):
            jobs = [item for item in chunk if not isinstance(item, FileResult)]
            self.pending.append((chunk, self.pool.submit(_run_chunk, opts, jobs)))
            if len(self.pending) >= opts.jobs * 4:
                self.current = _in_order(*self.pending.popleft())
                yield from self.current
        while self.pending:
            self.current = _in_order(*self.pending.popleft())
            yield from self.current

    def unfinished(self) -> Iterator[FileResult]:
        """After an interrupt: the rest of the chunk being handed out and of the chunks already running
        (waited for; a second interrupt stops the wait); the chunks not started are cancelled."""
        try:
            yield from self.current
            for chunk, future in self.pending:
                if not future.cancel():
                    yield from _in_order(chunk, future)
        except KeyboardInterrupt:
            return
        except Exception:  # a worker that died: its files are what a re-run redoes
            return

    def close(self) -> None:
        if self.pool is not None:
            for _, future in self.pending:
                future.cancel()
            self.pool.shutdown(wait=False, cancel_futures=True)


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
    # Ctrl-C and SIGTERM reach the whole process group: the parent decides, and collects what the
    # worker's chunk writes (a worker stopped halfway would leave files on disk that no report lists)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


_PR_SET_PDEATHSIG = 1


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(1)


def _compile_tables(opts: BatchOptions) -> None:
    from ..knowledge.catalogue import catalogue
    from ..knowledge.mapping import load_table
    from ..knowledge.schema import schema_index

    catalogue()
    for fmt in (opts.src, opts.dst):
        load_table(fmt)
        schema_index(fmt)


_CHUNK = 16  # files per task sent to a worker: amortises the hand-over, keeps the pipeline short


def _run_chunk(opts: BatchOptions, jobs: list[Job]) -> list[FileResult]:
    return [run_job(opts, item) for item in jobs]


def _in_order(chunk: list[Any], future: Any) -> Iterator[FileResult]:
    ran = iter(future.result())
    for item in chunk:
        yield item if isinstance(item, FileResult) else next(ran)


def batch_outcome(results: list[FileResult], summary: dict[str, Any] | None = None, *, check: bool = False) -> Outcome:
    """What a batch ended with (`results`: the notable ones run_batch returns); for --check, an
    output left behind by a deleted source is a change too."""
    stale = ("changed", "orphaned") if check else ("changed",)
    return Outcome(
        failed=sum(r.status == "failed" for r in results),
        changed=sum(r.status in stale for r in results),
        policy_failures=sum(bool(r.error) for r in results if r.status != "failed"),
        unrecorded=(summary or {}).get("report_error", ""),  # the caller would have no record of the run
    )
