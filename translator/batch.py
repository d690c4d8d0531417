"""Batch migration of a whole tree of configs: `neoconv batch SRC2DST SRC_DIR -o OUT_DIR`.

One failing file never stops the run; outputs are written atomically and deterministically, so
`-j N` gives byte-identical output to `-j 1` and a re-run to the first run. The source tree is
never written to unless `--in-place` is asked for (with a backup unless `--no-backup`).
"""

from __future__ import annotations

import fnmatch
import json
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from collections import deque
from itertools import chain, islice
from pathlib import Path
from typing import Any, Callable, Iterator

from .errors import NeoconvError, UsageError
from .policy import Outcome, Policy, describe
from .policy import exit_code as outcome_code
from .registry import FORMATS, get_format

# Files NeoX users keep shared settings in: merged with --with, never translated on their own.
DEFAULT_INCLUDE = {"neox": ["*.yml", "*.yaml"], "deepspeed": ["*.json"], "cerebras": ["*.yaml", "*.yml"], "veomni": ["*.yaml", "*.yml"]}
SUMMARY_NAME = "neoconv-report.json"


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


def walk(root: Path, include: list[str], exclude: list[str]) -> Iterator[tuple[str, str, str]]:
    """(path, path relative to root in / form, problem) of the files under root matching include
    and not exclude, in sorted order; hidden folders skipped, symlink loops broken. `problem` is ""
    for a file, and says why for a folder that could not be read (its files would otherwise vanish
    from the migration without a word). A generator: a tree of 100,000 files is never held in memory."""
    seen: set[tuple[int, int]] = set()
    top = str(root)
    problems: list[OSError] = []
    for folder, dirs, files in os.walk(top, followlinks=True, onerror=problems.append):
        yield from _unreadable(problems, top)
        try:
            stat = os.stat(folder)
        except OSError as exc:
            problems.append(exc)
            continue
        if (stat.st_dev, stat.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((stat.st_dev, stat.st_ino))
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        base = os.path.relpath(folder, top).replace(os.sep, "/")
        for name in sorted(files):
            if name.startswith(".") or name == SUMMARY_NAME:
                continue
            rel = name if base == "." else f"{base}/{name}"
            if not any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in include):
                continue
            if any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p) for p in exclude):
                continue
            yield os.path.join(folder, name), rel, ""
    yield from _unreadable(problems, top)


def _unreadable(problems: list[OSError], top: str) -> Iterator[tuple[str, str, str]]:
    while problems:
        error = problems.pop(0)
        folder = str(error.filename or top)
        rel = os.path.relpath(folder, top).replace(os.sep, "/")
        yield folder, rel + "/", f"cannot read this folder ({error.strerror or error}): its files are not translated"


def output_path(rel: str, dst: str) -> str:
    """The output's path relative to OUT_DIR: the source's, with the target format's suffix."""
    stem, dot, suffix = rel.rpartition(".")
    return (stem if dot and "/" not in suffix else rel) + get_format(dst).suffix


MODEL_KEYS = ("num_layers", "hidden_size", "num_attention_heads")
FRAGMENT = "fragment: no model architecture (num_layers/hidden_size); name it with --with to merge it into every translation"


def _job(opts: BatchOptions, args: tuple[str, str, str]) -> FileResult:
    """Translate one file (runs in a worker process; must not raise)."""
    path_s, rel_s, out_s = args
    rel_out = output_path(rel_s, opts.dst)  # the summary names outputs relative to OUT_DIR
    from .api import translate
    from .io import replace_file

    try:
        config: Any = [path_s]
        if opts.src == "neox":
            # A NeoX file with no model architecture is a shared-settings fragment (local_setup.yml):
            # read it once, look, and translate what was read (a broken file fails as it would anyway)
            source = _read_source(path_s, opts)
            if source is not None:
                if not any(key in source.tree for key in MODEL_KEYS):
                    return FileResult(rel_s, "skipped", reason=FRAGMENT)
                if not opts.with_files:
                    config = source
        with_files = [(w, _companion(w, opts.src)) for w in opts.with_files]
        result = translate(config, opts.src, opts.dst, with_files=with_files, **opts.translate_options)
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
        if not os.path.isdir(folder):
            os.makedirs(folder, exist_ok=True)
        if opts.in_place and opts.backup and os.path.exists(out_s):
            replace_file(out_s + ".bak", Path(out_s).read_text(encoding="utf-8"))
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
    from .api import load
    from .errors import WrongFormat

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
    from .registry import companion_format

    return companion_format(path, src)


def _clean_stale_temps(out_dir: Path) -> None:
    """Remove temp files an interrupted earlier run (SIGKILL) may have left behind."""
    if not out_dir.is_dir():
        return
    for folder, _, files in os.walk(out_dir):
        for name in files:
            if name.startswith(".") and name.endswith(".tmp"):
                Path(folder, name).unlink(missing_ok=True)


def run_batch(
    src_dir: str, out_dir: str | None, opts: BatchOptions, progress: Callable[[int, int, str], None] | None = None
) -> tuple[list[FileResult], dict[str, Any]]:
    if opts.src not in FORMATS or opts.dst not in FORMATS:
        raise UsageError(f"unknown format pair {opts.src}2{opts.dst}; formats: {', '.join(FORMATS)}")
    root = Path(src_dir)
    if not root.is_dir():
        raise UsageError(f"{src_dir}: not a folder")
    if opts.in_place:
        if out_dir:
            raise UsageError("--in-place writes beside the sources: do not give -o")
        target_root = root
    else:
        if not out_dir:
            raise UsageError("give -o OUT_DIR (or --in-place to write beside the sources)")
        target_root = Path(out_dir)
        resolved_out, resolved_src = target_root.resolve(), root.resolve()
        if resolved_out == resolved_src or resolved_src in resolved_out.parents:
            raise UsageError(f"{out_dir} is inside {src_dir}: the source tree is never written to (use --in-place)")
    include = opts.include or DEFAULT_INCLUDE.get(opts.src, ["*"])
    with_resolved = {os.path.realpath(w) for w in opts.with_files}
    out_root = str(target_root)

    def plan() -> Iterator[tuple[str, str, str] | FileResult]:
        """In walk order, lazily: a job to run, or a file skipped up front (a --with file)."""
        for path, rel, problem in walk(root, include, opts.exclude):
            if problem:
                yield FileResult(rel, "failed", error=problem)
            elif with_resolved and os.path.realpath(path) in with_resolved:
                yield FileResult(rel, "skipped", reason="named with --with: merged into every translation")
            else:
                yield path, rel, os.path.join(out_root, output_path(rel, opts.dst))

    if not opts.check and not opts.in_place:
        target_root.mkdir(parents=True, exist_ok=True)
        _clean_stale_temps(target_root)
    # Memory stays flat however large the tree: the tree is walked lazily, each file's summary
    # line is streamed to disk, and only the notable results (failed, skipped, changed, strict)
    # are kept for the human summary.
    notable: list[FileResult] = []
    totals: dict[str, int] = {}
    sink = _SummaryWriter(None if opts.check else target_root / SUMMARY_NAME, f"{opts.src}2{opts.dst}")
    total = sum(1 for _ in walk(root, include, opts.exclude)) if progress else 0  # a count, not a list
    try:
        for done, result in enumerate(_results(plan(), opts), 1):
            totals[result.status] = totals.get(result.status, 0) + 1
            if result.status != "translated" or result.error:
                notable.append(result)
            sink.add(result)
            if progress:
                progress(done, total, result.source)
        sink.close(totals)
    finally:
        sink.discard()
    return notable, {"command": f"{opts.src}2{opts.dst}", "totals": totals}


def _results(plan: Iterator[tuple[str, str, str] | FileResult], opts: BatchOptions) -> Iterator[FileResult]:
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
    with ProcessPoolExecutor(max_workers=opts.jobs) as pool:
        pending: deque[tuple[list[Any], Any]] = deque()
        for chunk in chain([first], chunks):
            jobs = [item for item in chunk if not isinstance(item, FileResult)]
            pending.append((chunk, pool.submit(_run_chunk, opts, jobs)))
            if len(pending) >= opts.jobs * 4:
                yield from _in_order(*pending.popleft())
        while pending:
            yield from _in_order(*pending.popleft())


def _compile_tables(opts: BatchOptions) -> None:
    from .catalogue import catalogue
    from .mapping import load_table
    from .schema import schema_index

    catalogue()
    for fmt in (opts.src, opts.dst):
        load_table(fmt)
        schema_index(fmt)


_CHUNK = 16  # files per task sent to a worker: amortises the hand-over, keeps the pipeline short


def _run_chunk(opts: BatchOptions, jobs: list[tuple[str, str, str]]) -> list[FileResult]:
    return [_job(opts, item) for item in jobs]


def _in_order(chunk: list[Any], future: Any) -> Iterator[FileResult]:
    ran = iter(future.result())
    for item in chunk:
        yield item if isinstance(item, FileResult) else next(ran)


class _SummaryWriter:
    """Streams OUT_DIR/neoconv-report.json through a temp file renamed into place at the end."""

    def __init__(self, path: Path | None, command: str) -> None:
        self.path = path
        self.tmp: Path | None = None
        self.fh: Any = None
        self.first = True
        if path is not None:
            self.tmp = path.with_name(f".{path.name}.tmp")
            self.fh = open(self.tmp, "w", encoding="utf-8", newline="\n")
            self.fh.write('{\n  "command": ' + json.dumps(command) + ',\n  "files": [')

    def add(self, result: FileResult) -> None:
        if self.fh is not None:
            entry = json.dumps(result.to_json(), ensure_ascii=False)  # one line per file: grep-able
            self.fh.write(("\n    " if self.first else ",\n    ") + entry)
            self.first = False

    def close(self, totals: dict[str, int]) -> None:
        if self.fh is not None and self.path is not None and self.tmp is not None:
            self.fh.write(("\n  ]" if not self.first else "]") + ',\n  "totals": ' + json.dumps(totals) + "\n}\n")
            self.fh.close()
            os.replace(self.tmp, self.path)
            self.fh = None

    def discard(self) -> None:
        if self.fh is not None:  # interrupted: leave no half-written summary behind
            self.fh.close()
            if self.tmp is not None:
                self.tmp.unlink(missing_ok=True)
            self.fh = None


def exit_code(results: list[FileResult], opts: BatchOptions) -> int:
    return outcome_code(Outcome(
        failed=sum(r.status == "failed" for r in results), changed=sum(r.status == "changed" for r in results),
        policy_failures=sum(bool(r.error) for r in results if r.status != "failed"),
    ))  # fmt: skip


def human_summary(results: list[FileResult], opts: BatchOptions, totals: dict[str, int] | None = None) -> str:
    """The notable files one per line, then the count of every status (`totals` from run_batch:
    `results` holds only the notable ones)."""
    lines = []
    for r in results:
        if r.status == "failed":
            lines.append(f"failed   {r.source}: {r.error}")
        elif r.status == "skipped":
            lines.append(f"skipped  {r.source}: {r.reason}")
        elif r.status == "changed":
            lines.append(f"changed  {r.source} -> {r.output}")
        elif r.error:
            lines.append(f"strict   {r.source}: {r.error.removeprefix('fails the policy: ')}")
    counts = dict(totals or {})
    if totals is None:
        for r in results:
            counts[r.status] = counts.get(r.status, 0) + 1
    lines.append("neoconv batch: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return "\n".join(lines) + "\n"
