"""One translation on the command line: read, translate, write the output, side files and report
all or nothing, show the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from ..core.errors import NeoconvError
from ..services.policy import Outcome


def run_translation(
    src: str, dst: str, inputs: tuple[str, ...], opts: dict[str, Any], command: Callable[[str], str] | None = None
) -> Outcome:
    """`command(fmt)`: the command line that reads the inputs as `fmt`, named when they are of
    another format than `src` (detected from their content before anything is translated)."""
    from ..services.pipeline import translate
    from ..io.outputs import write_files_atomic, writes_through
    from ..knowledge.registry import companion_format
    from ..services.policy import policy
    from ..services.target_values import split_set
    from .project import apply, for_pair, set_values as all_set_values

    quiet_or_verbose(opts)
    apply(opts, inputs)  # the project configuration file's options, where the command line gives none
    opts = for_pair(opts, src, dst)
    rules = policy(opts["fail_on"], opts["strict"], opts["baseline"])  # a bad baseline fails before any writing
    with_files = [(path, companion_format(path, src)) for path in opts["with_files"]]
    output, report_path = opts["output"], opts["report_path"]
    if output == "-" and report_path == "-":
        raise NeoconvError("--report - needs the config written to a file with -o")
    if opts.get("prove") and (output == "-" or writes_through(output)):
        raise NeoconvError("--prove runs the target framework on the written file: give -o OUT, a file")
    set_values, target_values = split_set(all_set_values(opts, dst), dst)
    if command is not None:
        from .input_format import refuse_other_format

        refuse_other_format(inputs, src, command)
    result = translate(
        list(inputs),
        src,
        dst,
        set_values=set_values,
        target_values=target_values,
        world_size=opts["world_size"],
        layout=opts.get("layout"),
        source_version=opts["source_version"],
        target_version=opts["target_version"],
        with_files=with_files,
        model_config=opts.get("model_config"),
        output=output if output != "-" else None,
        verify=not opts["no_verify"],
    )
    from ..services.output_text import carries_comments, output_text, preservable

    one = (
        inputs[0]
        if preservable(src, dst, inputs, with_files) or carries_comments(src, dst, inputs, with_files)
        else None
    )
    text = output_text(result, one, plain=opts["plain"])
    # every file the translation read (a VeOmni config.json found beside the YAML too) is never overwritten
    everything = tuple(dict.fromkeys(inputs + tuple(opts["with_files"]) + tuple(result.report.source.get("files", ()))))
    files, report_text = _files_to_write(result, text, output, report_path)
    write_files_atomic(files, inputs=everything)  # all or nothing: every target checked before the first write
    if output == "-":
        click.echo(text, nl=False)
    if report_path == "-":
        click.echo(report_text, nl=False)
    if not opts["quiet"]:
        show_report(result.report, verbose=opts["verbose"], color=opts["color"])
    failures = rules.failures(result.report)
    if failures:  # why the exit code is 1, also with -q
        click.echo(f"neoconv: {failure_reason(failures, opts)}", err=True)
    policy_failures = len(failures)
    if opts.get("prove"):
        from .prove import after_translation

        proved = after_translation(inputs, output, src, dst, result.report.to_json(), opts)
        return Outcome(policy_failures=policy_failures, differences=proved.differences, errors=proved.errors)
    return Outcome(policy_failures=policy_failures)


def _files_to_write(result: Any, text: str, output: str, report_path: str) -> tuple[list[tuple[str, str]], str]:
    """The output, its side files beside it and the report, each checked before anything is written."""
    from ..io.documents import dump_json
    from ..io.outputs import foreign_side_file, writes_through

    if result.side_files and output == "-":
        names = ", ".join(result.side_files)
        raise NeoconvError(f"this translation also writes {names}: give -o OUT so they can go beside it")
    files: list[tuple[str, str]] = []
    if output != "-":
        if result.side_files and writes_through(output):
            raise NeoconvError(
                f"this translation also writes {', '.join(result.side_files)} beside the output: "
                f"give -o a file name in a folder, not {output}"
            )
        for name, side in result.side_files.items():
            path = str(Path(output).parent / name)
            clash = foreign_side_file(path, side, output)
            if clash:
                raise NeoconvError(clash)
            files.append((path, side))
        files.append((output, text))
    report_text = dump_json(result.report.to_json()) if report_path else ""
    if report_path and report_path != "-":
        files.append((report_path, report_text))
    return files, report_text


def quiet_or_verbose(opts: dict[str, Any]) -> None:
    """-q (no report) and -v (every entry) ask for opposite things: refused rather than one winning silently."""
    from ..core.errors import UsageError

    if opts.get("quiet") and opts.get("verbose"):
        raise UsageError("-q (no report) and -v (every entry) contradict each other: give one")


def failure_reason(failures: list[Any], opts: dict[str, Any]) -> str:
    """One line: which entries fail which option ('exit 1: 6 lossy, 1 missing entries fail --fail-on lossy,missing')."""
    from ..services.policy import describe

    flag = f"--fail-on {opts['fail_on']}" if opts.get("fail_on") else "--strict (lossy, unknown, missing)"
    accepted = f", and --baseline {opts['baseline']} does not accept them" if opts.get("baseline") else ""
    noun = "entry fails" if len(failures) == 1 else "entries fail"
    return f"exit 1: {describe(failures)} {noun} {flag}{accepted}"


def show_report(report: Any, *, verbose: bool, color: str) -> None:
    """The report on stderr: a table on a terminal, plain lines when piped (report_view.py)."""
    import sys

    from .report_view import plain, terminal, use_terminal, width

    table, colour = use_terminal(sys.stderr, color)
    if table:
        terminal(report, verbose=verbose, color=colour, file=sys.stderr)
    else:
        click.echo(plain(report, verbose=verbose, columns=width(sys.stderr)), err=True, nl=False)
