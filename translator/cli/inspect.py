"""The work of the commands that read and compare without translating a file into a file: diff,
roundtrip, explain, formats, docs."""

from __future__ import annotations

import json
from typing import Any

import click

from ..core.errors import UsageError
from ..services.policy import Outcome


def formats() -> Outcome:
    from ..knowledge.registry import FORMATS
    from ..knowledge.versions import versions

    for spec in FORMATS.values():
        known = versions(spec.name)
        layouts = ", ".join(spec.layouts) or "-"
        labels = known.labels if len(known.labels) <= 3 else (known.labels[0], "...", known.labels[-1])
        shown = f"{' '.join(labels)} ({len(known.labels)} releases)" if len(known.labels) > 1 else labels[0]
        aliases = f"; also {', '.join(known.aliases)}" if known.aliases else ""
        click.echo(f"{spec.name:<10} {spec.title:<26} layouts: {layouts:<12} releases: {shown}{aliases}")
    return Outcome()


def diff(a: str, b: str, opts: dict[str, Any]) -> Outcome:
    from ..services.pipeline import read_ir
    from ..formats.detect import detect_file
    from ..services.diff import annotate, check_report, diff_ir, given_from_a, reported_format, run_layout
    from ..services.diff import written_release
    from ..services.side_files import output_files
    from ..io.documents import parse_json
    from ..io.documents import read_text

    report_path = opts["report_path"]
    report = check_report(parse_json(read_text(report_path), report_path), report_path) if report_path else None
    # the report of the translation says what A and B are: read as those, not detected again
    left = read_ir(
        [a], opts["fmt_a"] or reported_format(report, "source") or detect_file(a), world_size=opts["world_size"]
    )
    fmt_b = opts["fmt_b"] or reported_format(report, "target") or detect_file(b)
    with_b = output_files(b, fmt_b, report)  # B is the translation: read with the files written beside it
    # B is read in A's run: the model-parallel sizes B's format leaves to the training code (DeepSpeed's mpu)
    layout = run_layout(left.ir, fmt_b)
    release = written_release(report, fmt_b)
    right = read_ir(
        with_b.paths, fmt_b, world_size=opts["world_size"], context=layout, **with_b.options(), source_version=release
    )
    result = diff_ir(left, right, rtol=opts["rtol"])
    given_from_a(result, layout, fmt_b)
    if report is not None:
        annotate(result, report)
    _show(result, opts["as_json"])
    return Outcome(differences=0 if result.equal else 1)


def roundtrip(pair: str, inputs: tuple[str, ...], opts: dict[str, Any]) -> Outcome:
    from ..io.documents import dump_json
    from ..io.outputs import write_files_atomic
    from ..knowledge.registry import companion_format
    from ..services.target_values import split_set
    from ..services.diff import roundtrip as do_roundtrip
    from .batch import split_pair
    from .input_format import refuse_other_format
    from .project import apply, for_pair, set_values

    src, dst = split_pair(pair)
    apply(opts, inputs)
    opts = for_pair(opts, src, dst)
    canonical, target = split_set(set_values(opts, dst), dst)
    refuse_other_format(inputs, src, lambda fmt: f"neoconv roundtrip {fmt}2{dst}")
    result, there, _ = do_roundtrip(
        list(inputs),
        src,
        dst,
        rtol=opts["rtol"],
        world_size=opts["world_size"],
        set_values=canonical,
        target_values=target,
        layout=opts["layout"],
        with_files=[(p, companion_format(p, src)) for p in opts["with_files"]],
        model_config=opts.get("model_config"),
        source_version=opts["source_version"],
        target_version=opts["target_version"],
    )
    if opts["report_path"]:
        write_files_atomic(
            [(opts["report_path"], dump_json(there.report.to_json()))], inputs=tuple(inputs) + tuple(opts["with_files"])
        )
    _show(result, opts["as_json"])
    return Outcome(differences=0 if result.equal else 1)


def _show(result: Any, as_json: bool) -> None:
    click.echo(json.dumps(result.to_json(), indent=2, default=str) if as_json else result.render(), nl=not as_json)


def docs(output: str, check: bool) -> Outcome:
    from pathlib import Path

    from ..services.docs import render
    from ..io.outputs import write_atomic

    text = render()
    if check:
        if output == "-":
            raise UsageError(
                "--check compares a file with what the tables generate: give it with -o (docs/mappings.md)"
            )
        current = Path(output).read_text(encoding="utf-8") if Path(output).is_file() else ""
        if current != text:
            click.echo(f"{output} is stale: run `neoconv docs -o {output}`", err=True)
            return Outcome(changed=1)
        return Outcome()
    if output == "-":
        click.echo(text, nl=False)
    else:
        write_atomic(output, text)
    return Outcome()


def explain(name: str | None, listed: bool, as_json: bool) -> Outcome:
    import shutil

    from ..services.explain import explain_text

    if listed and name:
        raise UsageError("explain --list lists every field: give no NAME with it")
    width = shutil.get_terminal_size((100, 24)).columns if _tty() else 100
    click.echo(explain_text(name, as_json=as_json, width=max(60, min(width, 120))), nl=False)
    return Outcome()


def _tty() -> bool:
    import sys

    return sys.stdout.isatty()


def validate(files: tuple[str, ...], opts: dict[str, Any]) -> Outcome:
    from ..core.errors import NeoconvError
    from ..services.validate_file import validate_file
    from .run import one_line

    problems = errors = 0
    results = []
    report = _written_by(opts.get("report_path"), files)
    for path in files:
        if opts["configs_only"] and not _a_config(path, opts["fmt"]):
            continue
        try:
            result = validate_file(
                path,
                opts["fmt"],
                version=opts["version"],
                layout=opts["layout"],
                model_config=opts.get("model_config"),
                report=report,
            )
        except NeoconvError as exc:
            if len(files) == 1:
                raise
            click.echo(f"neoconv: error: {one_line(str(exc))}", err=True)  # the others are still checked
            errors += 1
            continue
        problems += len(result.problems)
        results.append(result)
        if not opts["as_json"]:
            for problem in result.problems:
                click.echo(one_line(problem.render()))
            if not opts["quiet"] and result.valid:
                click.echo(f"{one_line(path)}: valid {result.format} config ({_release(result)})", err=True)
    if opts["as_json"]:
        click.echo(json.dumps([r.to_json() for r in results], indent=2))
    return Outcome(differences=problems, errors=errors)


def _written_by(report_path: str | None, files: tuple[str, ...]) -> dict[str, Any] | None:
    """validate --report: the report of the translation that wrote the one FILE given."""
    from ..io.documents import parse_json, read_text
    from ..services.diff import check_report

    if not report_path:
        return None
    if len(files) != 1:
        raise UsageError("--report is the report of the translation that wrote one file: give that one FILE with it")
    return check_report(parse_json(read_text(report_path), report_path), report_path)


def _release(result: Any) -> str:
    layout = f"{result.layout} layout, " if result.layout else ""
    return f"{layout}release {result.release}"


def _a_config(path: str, fmt: str | None) -> bool:
    """Is `path` a config of `fmt` (of any known framework, without it)? A file that cannot even be
    parsed is one, so that its error is shown."""
    from ..core.errors import NeoconvError
    from .migrate import format_of

    try:
        return format_of(path, fmt) is not None
    except NeoconvError:
        return True
