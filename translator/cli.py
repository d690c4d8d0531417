"""Command line: `neoconv SRC2DST IN... [options]` for every format pair, plus formats/explain.

This is the only place where exceptions become exit codes and one-line messages (policy.py
maps a finished command's outcome to its code): 0 done; 1 done but an entry fails --strict /
--fail-on (not accepted by --baseline), or a diff found differences; 2 bad invocation or
unreadable/invalid input (and, with a clear "internal error" line, anything unexpected).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any, Callable

import click

from . import __version__
from .compare import DEFAULT_RTOL
from .errors import NeoconvError
from .options import translation_options
from .policy import EXIT_ERROR, EXIT_FAILED, EXIT_OK
from .registry import FORMATS, pairs



def _fail(message: str) -> None:
    click.echo(f"neoconv: error: {_one_line(message)}", err=True)
    sys.exit(EXIT_ERROR)


def _one_line(text: str) -> str:
    """Hostile input can put newlines or terminal escapes into a key or value: show them escaped."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush stays quiet."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _guarded(run: Callable[[], int], debug: bool, inputs: tuple[str, ...] = ()) -> None:
    try:
        code = run()
    except NeoconvError as exc:
        if debug:
            traceback.print_exc()
        _fail(str(exc))
    except KeyboardInterrupt:
        click.echo("neoconv: interrupted; nothing written", err=True)
        sys.exit(130)
    except BrokenPipeError:  # the reader of stdout went away (`| head`): nothing left to say
        _silence_stdout()
        sys.exit(EXIT_ERROR)
    except Exception as exc:  # a bug, or input we did not foresee: still one line, no traceback
        if debug:
            traceback.print_exc()
        where = f" while reading {', '.join(inputs)}" if inputs else ""
        _fail(f"internal error{where}: {type(exc).__name__}: {exc} (rerun with --debug and report it)")
    sys.exit(code)


def _run_translation(src: str, dst: str, inputs: tuple[str, ...], opts: dict[str, Any]) -> int:
    from .api import parse_set, translate
    from .io import dump_json
    from .outputs import write_files_atomic

    from .policy import Outcome, exit_code, policy
    from .registry import companion_format

    rules = policy(opts["fail_on"], opts["strict"], opts["baseline"])  # a bad baseline fails before any writing
    with_files = [(path, companion_format(path, src)) for path in opts["with_files"]]
    result = translate(
        list(inputs), src, dst,
        set_values=parse_set(opts["set_values"]), world_size=opts["world_size"], layout=opts["layout"],
        source_version=opts["source_version"], target_version=opts["target_version"], with_files=with_files,
        model_config=opts.get("model_config"), output=opts["output"] if opts["output"] != "-" else None,
        verify=not opts["no_verify"],
    )  # fmt: skip
    text = result.dump()
    output, report_path = opts["output"], opts["report_path"]
    # every file the translation read (a VeOmni config.json found beside the YAML too) is never overwritten
    everything = tuple(dict.fromkeys(inputs + tuple(opts["with_files"]) + tuple(result.report.source.get("files", ()))))
    if output == "-" and report_path == "-":
        raise NeoconvError("--report - needs the config written to a file with -o")
    if result.side_files and output == "-":
        names = ", ".join(result.side_files)
        raise NeoconvError(f"this translation also writes {names}: give -o OUT so they can go beside it")
    files: list[tuple[str, str]] = []
    if output != "-":
        from pathlib import Path

        from .outputs import foreign_side_file, writes_through

        if result.side_files and writes_through(output):
            raise NeoconvError(f"this translation also writes {', '.join(result.side_files)} beside the output: "
                               f"give -o a file name in a folder, not {output}")  # fmt: skip
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
    write_files_atomic(files, inputs=everything)  # all or nothing: every target checked before the first write
    if output == "-":
        click.echo(text, nl=False)
    if report_path == "-":
        click.echo(report_text, nl=False)
    if not opts["quiet"]:
        click.echo(result.report.render_table(verbose=opts["verbose"]), err=True, nl=False)
    return exit_code(Outcome(policy_failures=len(rules.failures(result.report))))


def _pair_command(src: str, dst: str) -> click.Command:
    @click.command(
        name=f"{src}2{dst}",
        help=f"Translate {FORMATS[src].title} into {FORMATS[dst].title}. Several NeoX files are merged as NeoX merges them.",
        no_args_is_help=True,
    )
    @click.argument("inputs", nargs=-1, required=True, metavar="IN...")
    @translation_options
    def command(inputs: tuple[str, ...], **opts: Any) -> None:
        _guarded(lambda: _run_translation(src, dst, inputs, opts), opts["debug"], inputs)

    return command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="neoconv")
def main() -> None:
    """Translate LLM training configs between GPT-NeoX, DeepSpeed, Cerebras Model Zoo and VeOmni.

    Every source setting is carried over, converted, or named in the report (stderr; --report
    FILE for JSON); the output is read back to check it. Exit codes: 0 done, 1 an entry fails
    --strict (lossy, unknown, missing) or --fail-on, 2 bad invocation or input.
    """


for _src, _dst in pairs():
    main.add_command(_pair_command(_src, _dst))


@main.command("convert", no_args_is_help=True)
@click.option("--from", "src", required=True, type=click.Choice(sorted(FORMATS)), help="Source format.")
@click.option("--to", "dst", required=True, type=click.Choice(sorted(FORMATS)), help="Target format.")
@click.argument("inputs", nargs=-1, required=True, metavar="IN...")
@translation_options
def convert(src: str, dst: str, inputs: tuple[str, ...], **opts: Any) -> None:
    """Translate IN... from one format to another (same as the SRC2DST commands)."""
    _guarded(lambda: _run_translation(src, dst, inputs, opts), opts["debug"], inputs)


@main.command("formats")
def formats() -> None:
    """List formats, their layouts and releases (what --from-version/--to-version accept)."""
    from .versions import versions

    for spec in FORMATS.values():
        known = versions(spec.name)
        layouts = ", ".join(spec.layouts) or "-"
        labels = known.labels if len(known.labels) <= 3 else (known.labels[0], "...", known.labels[-1])
        shown = f"{' '.join(labels)} ({len(known.labels)} releases)" if len(known.labels) > 1 else labels[0]
        aliases = f"; also {', '.join(known.aliases)}" if known.aliases else ""
        click.echo(f"{spec.name:<10} {spec.title:<26} layouts: {layouts:<12} releases: {shown}{aliases}")


@main.command("explain", no_args_is_help=True)
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def explain(name: str, as_json: bool) -> None:
    """Explain a canonical field (model.hidden_size) or a framework key (neox:rotary_pct)."""
    from .explain import explain_text

    _guarded(lambda: _print(explain_text(name, as_json=as_json)), False)


def _print(text: str) -> int:
    click.echo(text, nl=False)
    return EXIT_OK


@main.command("diff", no_args_is_help=True)
@click.argument("a")
@click.argument("b")
@click.option("--from-a", "fmt_a", type=click.Choice(sorted(FORMATS)), help="Format of A (default: detected).")
@click.option("--from-b", "fmt_b", type=click.Choice(sorted(FORMATS)), help="Format of B (default: detected).")
@click.option("--rtol", type=float, default=DEFAULT_RTOL, show_default=True, help="Relative tolerance for numbers.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--world-size", type=click.IntRange(min=1), help="GPUs of the runs, to compare global batches.")
@click.option("--report", "report_path", metavar="FILE", help="The JSON report of translating A into B: show what it says of each difference.")
@click.option("--debug", is_flag=True, help="Show a traceback on errors.")
def diff(a: str, b: str, fmt_a: str | None, fmt_b: str | None, rtol: float, as_json: bool, world_size: int | None,
         report_path: str | None, debug: bool) -> None:  # fmt: skip
    """Do A and B describe the same training run? Compares canonical fields (exit 0 equal, 1 different)."""

    def run() -> int:
        from .api import read_ir
        from .detect import detect_file
        from .diff import annotate, diff_ir
        from .io import parse_json, read_text

        report = parse_json(read_text(report_path), report_path) if report_path else None
        left = read_ir([a], fmt_a or detect_file(a), world_size=world_size)
        right = read_ir([b], fmt_b or detect_file(b), world_size=world_size)
        result = diff_ir(left, right, rtol=rtol)
        if report is not None:
            annotate(result, report)
        click.echo(json.dumps(result.to_json(), indent=2, default=str) if as_json else result.render(), nl=not as_json)
        return EXIT_OK if result.equal else EXIT_FAILED

    _guarded(run, debug, (a, b))


@main.command("roundtrip", no_args_is_help=True)
@click.argument("pair", metavar="SRC2DST")
@click.argument("inputs", nargs=-1, required=True, metavar="IN...")
@click.option("--rtol", type=float, default=DEFAULT_RTOL, show_default=True, help="Relative tolerance for numbers.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--world-size", type=click.IntRange(min=1), help="GPUs of the source run.")
@click.option("--set", "set_values", metavar="FIELD=VALUE", multiple=True, help="As for translations.")
@click.option("--debug", is_flag=True, help="Show a traceback on errors.")
def roundtrip(pair: str, inputs: tuple[str, ...], rtol: float, as_json: bool, world_size: int | None,
              set_values: tuple[str, ...], debug: bool) -> None:  # fmt: skip
    """Translate there and back; list what did not survive (exit 0 all survived, 1 otherwise)."""

    def run() -> int:
        from .api import parse_set
        from .diff import roundtrip as do_roundtrip

        src, sep, dst = pair.partition("2")
        if not sep or src not in FORMATS or dst not in FORMATS:
            raise NeoconvError(f"{pair!r} is not a SRC2DST pair; formats: {', '.join(FORMATS)}")
        result, _, _ = do_roundtrip(list(inputs), src, dst, rtol=rtol, world_size=world_size,
                                    set_values=parse_set(set_values))  # fmt: skip
        click.echo(json.dumps(result.to_json(), indent=2, default=str) if as_json else result.render(), nl=not as_json)
        return EXIT_OK if result.equal else EXIT_FAILED

    _guarded(run, debug, inputs)


@main.command("docs")
@click.option("-o", "--output", default="-", show_default=True, help="Where to write docs/mappings.md.")
@click.option("--check", is_flag=True, help="Exit 1 if OUTPUT differs from what the tables generate.")
def docs(output: str, check: bool) -> None:
    """Generate the mapping reference (docs/mappings.md) from the tables."""

    def run() -> int:
        from pathlib import Path

        from .docs import render
        from .outputs import write_atomic

        text = render()
        if check:
            current = Path(output).read_text(encoding="utf-8") if Path(output).is_file() else ""
            if current != text:
                click.echo(f"{output} is stale: run `neoconv docs -o {output}`", err=True)
                return EXIT_FAILED
            return EXIT_OK
        if output == "-":
            click.echo(text, nl=False)
        else:
            write_atomic(output, text)
        return EXIT_OK

    _guarded(run, False)


@main.command("batch", no_args_is_help=True)
@click.argument("pair", metavar="SRC2DST")
@click.argument("src_dir", metavar="SRC_DIR")
@click.option("-o", "--output", "out_dir", metavar="OUT_DIR", help="Folder to mirror the tree into.")
@click.option("--include", multiple=True, metavar="GLOB", help="Only files matching (default per format, e.g. *.yml *.yaml).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip files matching; repeatable.")
@click.option("--with", "with_files", multiple=True, metavar="FILE", help="Merged into every translation (e.g. local_setup.yml).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Parallel workers (default: CPU count).")
@click.option("--strict", is_flag=True, help="Exit 1 also when a report has lossy, unknown or missing entries.")
@click.option("--fail-on", "fail_on", metavar="STATUSES", help="Exit 1 also when a report has entries of these statuses.")
@click.option("--baseline", metavar="FILE", help="Accepted entries (a JSON report or list of entries): only others fail.")
@click.option("--no-verify", "no_verify", is_flag=True, help="Do not read each output back to check its report.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if any output would change.")
@click.option("--in-place", is_flag=True, help="Write beside the sources (backup *.bak unless --no-backup).")
@click.option("--no-backup", is_flag=True, help="With --in-place: do not keep *.bak copies.")
@click.option("--world-size", type=click.IntRange(min=1), metavar="N", help="GPUs of the source runs.")
@click.option("--set", "set_values", metavar="FIELD=VALUE", multiple=True, help="As for translations.")
@click.option("--layout", metavar="NAME", help="Target layout.")
@click.option("-q", "--quiet", is_flag=True, help="No progress and no summary lines.")
@click.option("--debug", is_flag=True, help="Show a traceback on errors.")
def batch(pair: str, src_dir: str, out_dir: str | None, include: tuple[str, ...], exclude: tuple[str, ...],
          with_files: tuple[str, ...], jobs: int | None, strict: bool, fail_on: str | None, baseline: str | None,
          no_verify: bool, check: bool, in_place: bool, no_backup: bool, world_size: int | None,
          set_values: tuple[str, ...], layout: str | None, quiet: bool, debug: bool) -> None:  # fmt: skip
    """Translate every config under SRC_DIR into OUT_DIR (summary in OUT_DIR/neoconv-report.json).

    Exit 0 when every file translated, 1 when any failed (--strict / --fail-on: or has an entry
    of those statuses the --baseline does not accept; --check: or would change), 2 on a bad invocation.
    """

    def run() -> int:
        import os

        from .api import parse_set
        from .batch import BatchOptions, exit_code, human_summary, run_batch
        from .policy import policy

        src, sep, dst = pair.partition("2")
        if not sep or src not in FORMATS or dst not in FORMATS:
            raise NeoconvError(f"{pair!r} is not a SRC2DST pair; formats: {', '.join(FORMATS)}")
        if no_backup and not in_place:
            raise NeoconvError("--no-backup only makes sense with --in-place")
        opts = BatchOptions(
            src, dst, list(include), list(exclude), list(with_files), jobs or os.cpu_count() or 1,
            policy(fail_on, strict, baseline), check, in_place, not no_backup,
            {"world_size": world_size, "set_values": parse_set(set_values), "layout": layout, "verify": not no_verify},
        )  # fmt: skip
        show = not quiet and sys.stderr.isatty()

        def progress(done: int, total: int, name: str) -> None:
            click.echo(f"\r[{done}/{total}] {name[:60]:<60}", err=True, nl=done == total)

        results, summary = run_batch(src_dir, out_dir, opts, progress if show else None)
        if not quiet:
            click.echo(human_summary(results, opts, summary["totals"], summary.get("report_error", "")), err=True, nl=False)
        return exit_code(results, opts, summary)

    _guarded(run, debug, (src_dir,))
