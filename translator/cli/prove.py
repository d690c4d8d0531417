"""`neoconv prove`, `--prove` on a translation and on batch, and `prove --check-env`: options into
ProveOptions, the certificate shown, its exit code (0 equal or named, 1 not, 2 a side not run)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..core.errors import UsageError
from ..services.policy import Outcome


def options(opts: dict[str, Any]) -> Any:
    from ..prove import ProveOptions
    from ..prove.environments import parse_pairs

    return ProveOptions(
        world_size=opts.get("world_size"),
        env=parse_pairs(opts.get("envs") or (), "--env"),
        src=parse_pairs(opts.get("sources") or (), "--src"),
        rtol=opts.get("rtol") or 1e-6,
        timeout=opts.get("timeout") or 1800.0,
        model_config=opts.get("model_config"),
    )


def outcome(cert: Any) -> Outcome:
    return Outcome(differences=len(cert.unnamed), errors=1 if cert.could_not_run else 0)


def run(paths: tuple[str, ...], opts: dict[str, Any]) -> Outcome:
    """`neoconv prove SRC... OUT`."""
    from ..formats.detect import detect_file
    from ..io.documents import parse_json
    from ..io.documents import read_text
    from ..prove import prove

    if opts["check_env"]:
        return check_env(opts)
    if len(paths) < 2:
        raise UsageError("give the source file(s) and the translated file: neoconv prove SRC... OUT (or --check-env)")
    *source, output = paths
    report_path = opts["report_path"]
    report = parse_json(read_text(report_path), report_path) if report_path else None
    src = opts["fmt_a"] or detect_file(source[0])
    dst = opts["fmt_b"] or detect_file(output)
    cert = prove(list(source), output, src, dst, report=report, report_file=report_path, options=options(opts))
    show(cert, opts, stream=sys.stdout, inputs=tuple(paths))
    return outcome(cert)


def after_translation(
    inputs: tuple[str, ...], output: str, src: str, dst: str, report: dict[str, Any], opts: dict[str, Any]
) -> Outcome:
    """`--prove` on a translation: the source and what was just written."""
    from ..prove import prove

    cert = prove(
        list(inputs), output, src, dst, report=report, report_file="the translation's report", options=options(opts)
    )
    show(cert, opts, stream=sys.stderr, inputs=inputs)
    return outcome(cert)


def show(cert: Any, opts: dict[str, Any], *, stream: Any, inputs: tuple[str, ...]) -> None:
    if opts.get("plot"):
        from ..prove.plot import PlotUnavailable, write_plot

        try:
            write_plot(cert, opts["plot"], inputs)
        except PlotUnavailable as exc:
            click.echo(f"neoconv: warning: {exc}", err=True)
    if opts.get("as_json"):
        click.echo(json.dumps(cert.to_json(), indent=2, default=str), file=stream)
    else:
        click.echo(cert.render(verbose=opts.get("verbose", False)), file=stream, nl=False)


def check_env(opts: dict[str, Any]) -> Outcome:
    """What is ready for each framework: its interpreter, source tree and version, or why not."""
    from ..prove import environments
    from ..prove.probes import probes
    from ..prove.runner import check

    from concurrent.futures import ThreadPoolExecutor

    envs = environments(list(probes()), options(opts))
    with ThreadPoolExecutor(max_workers=3) as pool:  # each check imports a framework: seconds, mostly waiting
        checked = list(pool.map(check, envs.values()))
    rows = []
    for env, (framework, problem) in zip(envs.values(), checked):
        rows.append(
            {**env.to_json(), "ready": problem is None, "problem": problem, "version": (framework or {}).get("version")}
        )
    if opts.get("as_json"):
        click.echo(json.dumps(rows, indent=2))
    else:
        for row in rows:
            if row["ready"]:
                where = f"{row['python']} ({row['origin']})" + (f", source {row['source']}" if row["source"] else "")
                version = row["version"] or "(no version: a source tree without git)"
                click.echo(f"{row['format']:<10} ready: {row['framework']} {version} with {where}")
            else:
                click.echo(f"{row['format']:<10} not ready: {row['problem']}")
    return Outcome(differences=sum(1 for row in rows if not row["ready"]))
