"""`neoconv migrate FILE...`: each config rewritten in place as its own framework's current form
(a layout, current spellings), keeping its comments and formatting; what the pre-commit hooks run.
A file that is no config of the format asked for (or of any, without --format) is left alone: a
hook sees every YAML file of a repository."""

from __future__ import annotations

from typing import Any

import click

from ..core.errors import InputError, NeoconvError
from ..services.policy import Outcome
from .run import one_line


def run(files: tuple[str, ...], opts: dict[str, Any]) -> Outcome:
    import os

    from ..core.errors import UsageError
    from ..knowledge.registry import pairs

    if files and files[0] in {f"{a}2{b}" for a, b in pairs()} and not os.path.exists(files[0]):
        raise UsageError(f"migrate rewrites each FILE in its own format; to check a translated tree use "
                         f"`neoconv batch --check {' '.join(files)}` (pre-commit hook neoconv-batch-check)")  # fmt: skip
    changed = failed = 0
    for path in files:
        try:
            fmt = format_of(path, opts["fmt"])
            if fmt is None:
                if opts["verbose"]:
                    click.echo(f"skipped  {one_line(path)}: not a {opts['fmt'] or 'known'} config", err=True)
                continue
            unkept = _unkept(path, fmt)
            if unkept:  # a syntax a rewrite cannot keep the formatting of (a Megatron bash script): left alone
                click.echo(f"skipped  {one_line(path)}: {unkept}; migrate rewrites only what keeps its formatting", err=True)
                continue
            old, new, report = _migrate(path, fmt, opts)
        except NeoconvError as exc:
            click.echo(f"failed   {one_line(str(exc) if path in str(exc) else f'{path}: {exc}')}", err=True)
            failed += 1
            continue
        if new == old:
            continue
        changed += 1
        if opts["check"]:
            if opts["show_diff"]:
                click.echo(_diff(old, new, path), nl=False)
            if not opts["quiet"]:
                click.echo(f"would migrate {one_line(path)} ({_counts(report)})", err=True)
            continue
        try:
            through = _write(path, new, opts["backup"])
        except NeoconvError as exc:
            click.echo(f"failed   {one_line(str(exc) if path in str(exc) else f'{path}: {exc}')}", err=True)
            failed += 1
            continue
        if not opts["quiet"]:
            click.echo(f"migrated {one_line(path)}{through} ({_counts(report)})", err=True)
    return Outcome(changed=changed, failed=failed)


def format_of(path: str, wanted: str | None) -> str | None:
    """The file's format, or None when it is not a config of `wanted` (of any format, without it)."""
    from ..formats.detect import detect_tree, score
    from ..io.documents import parse_json, parse_yaml, read_text

    text = read_text(path)
    sniffed = _sniffed(text, wanted)
    if sniffed is not None:  # a syntax of its own (Megatron's words), not YAML
        return sniffed
    try:
        tree = parse_json(text, path) if text.lstrip().startswith("{") and path.endswith(".json") else parse_yaml(text, path, duplicates=[])
    except InputError:
        if _other_yaml(text):
            return None  # valid YAML no framework could read as a config (a CI workflow's `on:` key): not ours
        raise  # a config that does not parse: say so
    if wanted is not None:
        return wanted if score(tree, wanted) >= 0.5 else None
    try:
        return detect_tree(tree, path)
    except InputError:
        return None


def _sniffed(text: str, wanted: str | None) -> str | None:
    """A format whose reader recognises the text in a syntax of its own (not YAML or JSON)."""
    from ..knowledge.registry import FORMATS

    for fmt, spec in FORMATS.items():
        sniff = spec.load_reader().sniff_text if wanted in (None, fmt) else None
        if sniff is not None and (sniff(text) or 0.0) >= 0.5:
            return fmt
    return None


def _unkept(path: str, fmt: str) -> str | None:
    from ..io.documents import read_text
    from ..knowledge.registry import get_format

    spec = get_format(fmt)
    return spec.unkept_formatting(read_text(path)) if spec.unkept_formatting is not None else None


def _migrate(path: str, fmt: str, opts: dict[str, Any]) -> tuple[str, str, Any]:
    from ..services.pipeline import translate
    from ..services.target_values import split_set
    from ..io.documents import read_text, starts_with_bom
    from ..services.output_text import output_text

    set_values, target_values = split_set(opts["set_values"], fmt)
    result = translate(path, fmt, fmt, layout=opts["layout"], target_version=opts["target_version"],
                       set_values=set_values, target_values=target_values, verify=not opts["no_verify"])  # fmt: skip
    old = read_text(path)
    new = output_text(result, path, plain=opts["plain"], source_text=old)
    if starts_with_bom(path):  # read_text drops it; the file keeps it
        old, new = "\ufeff" + old, "\ufeff" + new
    return old, new, result.report


def _write(path: str, text: str, backup: bool) -> str:
    """Rewrite `path` in place (never through a symlinked folder). A FILE that is a symbolic link is
    not replaced by a regular file: the file it points to is rewritten, when that file lies inside
    the folder migrate runs in (the repository a hook sees), and the message says so; a link that
    points elsewhere is refused. Returns what to add to the message."""
    import os

    from ..core.errors import OutputError
    from ..io.confined import Confined

    target, through = path, ""
    if os.path.islink(path):
        target, here = os.path.realpath(path), os.path.realpath(os.getcwd())
        if os.path.commonpath([target, here]) != here:
            raise OutputError(f"is a symbolic link to {target}, outside {here}: not rewritten (migrate that file itself)",
                              file=path)  # fmt: skip
        through = f" (the file its link points to, {os.path.relpath(target)})"
    tree = Confined(os.path.dirname(os.path.abspath(target)))
    if backup:
        data = tree.read_bytes(target)
        if data is not None:
            tree.replace(target + ".bak", data, times_of=target)
    tree.replace(target, text)
    return through


def _counts(report: Any) -> str:
    return ", ".join(f"{n} {s}" for s, n in report.summary().items() if n and s not in ("exact",)) or "renamed only"


def _diff(old: str, new: str, path: str) -> str:
    import difflib

    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _other_yaml(text: str) -> bool:
    """Valid YAML that is no mapping of named settings: a CI workflow (`on:` reads as true), a list.
    A config neoconv refuses for its own reasons (a duplicate key) is not this: its error is shown."""
    import yaml

    from ..io.preserve.yamlsource import safe_load

    try:
        data = safe_load(text)
    except yaml.YAMLError:
        return False
    return not isinstance(data, dict) or not all(isinstance(k, str) for k in data)
