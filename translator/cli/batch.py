"""`neoconv batch` on the command line: options into BatchOptions, progress, the summary."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator

import click

from ..core.errors import UsageError
from ..services.policy import Outcome
from ..knowledge.registry import FORMATS


def split_pair(pair: str) -> tuple[str, str]:
    src, sep, dst = pair.partition("2")
    if not sep or src not in FORMATS or dst not in FORMATS:
        raise UsageError(f"{pair!r} is not a SRC2DST pair; formats: {', '.join(FORMATS)}")
    return src, dst


def run(pair: str, src_dir: str, opts: dict[str, Any]) -> Outcome:
    from ..batch import BatchInterrupted, batch_outcome, human_summary, run_batch
    from ..services.target_values import split_set
    from .progress import for_stream
    from .project import apply, for_pair, set_values as all_set_values
    from .report_view import width
    from .run import Interrupted

    src, dst = split_pair(pair)
    apply(opts, [src_dir])  # the project configuration file's options, where the command line gives none
    opts = for_pair(opts, src, dst)
    set_values, target_values = split_set(all_set_values(opts, dst), dst)
    options = _batch_options(src, dst, opts, set_values, target_values)
    progress = for_stream(sys.stderr, opts["quiet"], width(sys.stderr) - 1)

    with _terminate_as_interrupt():
        try:
            results, summary = run_batch(src_dir, opts["out_dir"], options, progress)
        except BatchInterrupted as stop:
            files = "1 file" if stop.written == 1 else f"{stop.written} files"
            where = f"the partial report is {stop.report}" if stop.report else "no report was written"
            raise Interrupted(
                f"wrote {files} before stopping; {where}; run the same command again to complete it"
            ) from None
    for result in results:
        if result.diff:
            click.echo(result.diff, nl=False)
    if not opts["quiet"]:
        click.echo(
            human_summary(
                results,
                options,
                summary["totals"],
                summary.get("report_error", ""),
                summary.get("still_missing"),
                summary.get("report", ""),
            ),
            err=True,
            nl=False,
        )
    outcome = batch_outcome(results, summary, check=opts["check"])
    if outcome.policy_failures:  # why the exit code is 1, also with -q
        click.echo(_policy_line(outcome.policy_failures, opts), err=True)
    if options.prove:
        return _prove(summary.get("to_prove", []), src_dir, opts, options, outcome)
    return outcome


def _batch_options(src: str, dst: str, opts: dict[str, Any], set_values: Any, target_values: Any) -> Any:
    """The command line's options as the batch's BatchOptions, refusing the combinations that make no sense."""
    from ..batch import BatchOptions
    from ..services.policy import policy

    if opts["no_backup"] and not opts["in_place"]:
        raise UsageError("--no-backup only makes sense with --in-place")
    if opts.get("prove") and opts["check"]:
        raise UsageError("--prove runs the frameworks on the written files: not with --check, which writes nothing")
    return BatchOptions(
        src,
        dst,
        list(opts["include"]),
        list(opts["exclude"]),
        list(opts["with_files"]),
        opts["jobs"] or os.cpu_count() or 1,
        policy(opts["fail_on"], opts["strict"], opts["baseline"]),
        opts["check"],
        opts["in_place"],
        not opts["no_backup"],
        {
            "world_size": opts["world_size"],
            "set_values": set_values,
            "target_values": target_values,
            "layout": opts["layout"],
            "verify": not opts["no_verify"],
        },
        diff=opts["show_diff"],
        prune=opts["prune"],
        plain=opts["plain"],
        skip_unsupported=opts["skip_unsupported"],
        prove=bool(opts.get("prove")),
    )


def _policy_line(failures: int, opts: dict[str, Any]) -> str:
    flag = f"--fail-on {opts['fail_on']}" if opts.get("fail_on") else "--strict (lossy, unknown, missing)"
    files = "1 file has entries that fail" if failures == 1 else f"{failures} files have entries that fail"
    accepted = f", and --baseline {opts['baseline']} does not accept them" if opts.get("baseline") else ""
    return f"neoconv batch: exit 1: {files} {flag}{accepted}"


def _prove(to_prove: list[Any], src_dir: str, opts: dict[str, Any], options: Any, outcome: Outcome) -> Outcome:
    """--prove: every written file proven by both frameworks, recorded in its per-file report."""
    from pathlib import Path

    from ..batch import SUMMARY_NAME
    from ..prove.batch import NOT_PROVEN, NOT_RUN, prove_batch, record, summary_lines, verdict
    from .prove import options as prove_options

    out_root = src_dir if opts["in_place"] else opts["out_dir"]
    certs = prove_batch(to_prove, src_dir, out_root, options.src, options.dst, prove_options(opts))
    problem = record(Path(out_root) / SUMMARY_NAME, certs) if certs else ""
    if not opts["quiet"]:
        click.echo(summary_lines(certs) + (f"failed   {problem}\n" if problem else ""), err=True, nl=False)
    outcome.differences += sum(verdict(c) == NOT_PROVEN for c in certs.values())
    outcome.errors += sum(verdict(c) == NOT_RUN for c in certs.values())
    if problem:
        outcome.unrecorded = outcome.unrecorded or problem
    return outcome


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (a CI job cancelled, `kill`) stops a batch as Ctrl-C does: with its partial report."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (a test runner's): leave the signal alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
