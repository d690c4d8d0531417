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
        raise UsageError(
            f"migrate rewrites each FILE in its own format; to check a translated tree use "
            f"`neoconv batch --check {' '.join(files)}` (pre-commit hook neoconv-batch-check)"
        )
    from .batch import _terminate_as_interrupt
    from .project import apply
    from .run import Interrupted
    from .translation import quiet_or_verbose

    quiet_or_verbose(opts)
    apply(opts, files)  # the project configuration file's options, where the command line gives none

    done = _Done()
    with _terminate_as_interrupt():
        try:
            for path in files:
                _one(path, opts, done)
        except KeyboardInterrupt:
            raise Interrupted(done.interrupted(len(files), opts["quiet"])) from None
    return Outcome(changed=done.changed, failed=done.failed)


class _Done:
    """What a migrate run did so far: what it can say exactly when Ctrl-C (or SIGTERM) stops it."""

    def __init__(self) -> None:
        self.changed = self.failed = 0
        self.rewritten: list[str] = []
        self.pending: tuple[str, str] | None = None  # (path, new text) being written when stopped

    def interrupted(self, total: int, quiet: bool) -> str:
        """Every file that reached the disk: the ones rewritten, and the one being written if its
        new text is there (the write is a rename: it happened whole or not at all)."""
        unnamed = [self.pending[0]] if self.pending is not None and _reads(self.pending[0]) == self.pending[1] else []
        if not self.rewritten + unnamed:
            return "nothing written"
        count = len(self.rewritten) + len(unnamed)
        if quiet or not self.rewritten:
            named = ", ".join(one_line(path) for path in self.rewritten + unnamed)
        else:
            named = "each named above" + "".join(f", and {one_line(path)}" for path in unnamed)
        count_text = "1 file" if count == 1 else f"{count} files"
        return f"rewrote {count_text} of {total} ({named}); the others are as they were: run the same command again to finish"


def _reads(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _one(path: str, opts: dict[str, Any], done: _Done) -> None:
    """Migrate one file (or say why not) and put it on record."""
    try:
        fmt = format_of(path, opts["fmt"])
        if fmt is None:
            if opts["verbose"]:
                click.echo(f"skipped  {one_line(path)}: not a {opts['fmt'] or 'known'} config", err=True)
            return
        unkept = _unkept(path, fmt)
        if unkept:  # a syntax a rewrite cannot keep the formatting of (a Megatron bash script): left alone
            click.echo(
                f"skipped  {one_line(path)}: {unkept}; migrate rewrites only what keeps its formatting", err=True
            )
            return
        old, new, report, said = _migrate(path, fmt, opts)
    except NeoconvError as exc:
        click.echo(f"failed   {one_line(str(exc) if path in str(exc) else f'{path}: {exc}')}", err=True)
        done.failed += 1
        return
    if new == old:
        return
    done.changed += 1
    if opts["check"]:
        if opts["show_diff"]:
            click.echo(_diff(old, new, path), nl=False)
        if not opts["quiet"]:
            click.echo(f"would migrate {one_line(path)} ({_counts(report)}{said})", err=True)
            _entries(report, opts)
        return
    done.pending = (_written_path(path), new)
    try:
        through = _write(path, new, opts["backup"])
    except NeoconvError as exc:
        done.pending = None
        click.echo(f"failed   {one_line(str(exc) if path in str(exc) else f'{path}: {exc}')}", err=True)
        done.failed += 1
        return
    done.rewritten.append(path)
    done.pending = None
    if not opts["quiet"]:
        click.echo(f"migrated {one_line(path)}{through} ({_counts(report)}{said})", err=True)
        _entries(report, opts)


def _entries(report: Any, opts: dict[str, Any]) -> None:
    """With -v: every entry of the file's report, as a translation shows them piped."""
    if opts["verbose"]:
        import sys

        from .report_view import plain, width

        click.echo(plain(report, verbose=True, columns=width(sys.stderr)), err=True, nl=False)


def _written_path(path: str) -> str:
    """The file a rewrite of `path` replaces (a symbolic link's target)."""
    import os

    return os.path.realpath(path) if os.path.islink(path) else path


def format_of(path: str, wanted: str | None) -> str | None:
    """The file's format, or None when it is not a config of `wanted` (of any format, without it)."""
    from ..formats.detect import detect_tree, score
    from ..io.documents import parse_json, parse_yaml, read_text

    text = read_text(path)
    sniffed = _sniffed(text, wanted)
    if sniffed is not None:  # a syntax of its own (Megatron's words), not YAML
        return sniffed
    try:
        tree = (
            parse_json(text, path)
            if text.lstrip().startswith("{") and path.endswith(".json")
            else parse_yaml(text, path, duplicates=[])
        )
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


def _migrate(path: str, fmt: str, opts: dict[str, Any]) -> tuple[str, str, Any, str]:
    from ..services.pipeline import translate
    from ..services.target_values import split_set
    from ..io.documents import read_text, starts_with_bom
    from ..services.output_text import output_text

    from .project import for_pair, set_values as all_set_values

    opts = for_pair(opts, fmt, fmt)
    set_values, target_values = split_set(all_set_values(opts, fmt), fmt)
    result = translate(
        path,
        fmt,
        fmt,
        layout=opts["layout"],
        target_version=opts["target_version"],
        set_values=set_values,
        target_values=target_values,
        verify=not opts["no_verify"],
    )
    old = read_text(path)
    new = output_text(result, path, plain=opts["plain"], source_text=old)
    new, said = _repeats(old, new, path, fmt, result.report.target.get("version"))
    if starts_with_bom(path):  # read_text drops it; the file keeps it
        old, new = "\ufeff" + old, "\ufeff" + new
    return old, new, result.report, said


def _repeats(old: str, new: str, path: str, fmt: str, release: str | None) -> tuple[str, str]:
    """Keys the file gives twice in one mapping, as the hook path must treat them to run again on its
    own output: a repeat of the same value is written once (the earlier line left out, when the file
    reads the same without it); a release whose loader refuses a repeated key (the table's
    `repeats_refused`) gets neither two different values nor an output that still repeats a key
    (refused, nothing written). Returns the text to write and what to add to the file's line."""
    from ..io.documents import at_path, parse_yaml
    from ..knowledge.schema import older
    from ..knowledge.mapping.load import load_table

    before: list[Any] = []
    after: list[Any] = []
    try:
        tree = parse_yaml(old, path, duplicates=before)
        if not before:
            return new, ""
        new = _written_once(new, path)
        parse_yaml(new, path, duplicates=after)
    except InputError:
        return new, ""  # not YAML (an argument file): its own reader says what a repeat means
    table = load_table(fmt)
    refused = table.releases.repeats_refused
    differ = [dup for dup in before if dup.shadowed != at_path(tree, ".".join(dup.path))]
    if refused is not None and not older(fmt, release, refused[0]) and (differ or after):
        dup = differ[0] if differ else after[0]
        problem = "with different values" if differ else "and the migrated file would repeat it"
        raise InputError(
            f"{'.'.join(dup.path)} given twice (lines {dup.first_line} and {dup.line}) {problem}: {table.title} "
            f"{release} refuses a key given twice ({refused[1]}): keep one, or give --to-version of a release "
            f"before {refused[0]}",
            file=path,
            line=dup.line,
        )
    still = {dup.path[-1] for dup in after}
    once = [dup for dup in before if dup.path[-1] not in still]
    same = [".".join(dup.path) for dup in once if dup not in differ]
    last = [".".join(dup.path) for dup in once if dup in differ]
    said = [f"given twice, written once: {', '.join(same)}"] if same else []
    if last:
        said.append(
            f"given twice with different values, the last written (as {table.title} {release} reads it): "
            f"{', '.join(last)}"
        )
    return new, "".join(f"; {text}" for text in said)


def _written_once(text: str, path: str) -> str:
    """`text` without the earlier line of each key it gives twice with the same scalar value on one
    line (`a: -0.16` twice), when the file reads the same without it: a repeat the source's own text
    carried into the migrated file (its formatting kept)."""
    import re

    from ..io.documents import at_path, parse_yaml

    repeats: list[Any] = []
    tree = parse_yaml(text, path, duplicates=repeats)
    lines = text.splitlines(keepends=True)
    drop: set[int] = set()
    for dup in repeats:
        key, index = re.escape(dup.path[-1]), dup.first_line - 1
        same = dup.shadowed == at_path(tree, ".".join(dup.path)) and not isinstance(dup.shadowed, (dict, list))
        if (
            same
            and dup.first_line != dup.line
            and 0 <= index < len(lines)
            and re.match(rf"^\s*['\"]?{key}['\"]?\s*:\s*[^\s#]", lines[index])
        ):
            drop.add(index)
    if not drop:
        return text
    shorter = "".join(line for index, line in enumerate(lines) if index not in drop)
    try:
        if parse_yaml(shorter, path, duplicates=[]) == tree:
            return shorter
    except InputError:
        pass
    return text  # a line that does not stand alone (a multi-line value): kept, and said


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
            raise OutputError(
                f"is a symbolic link to {target}, outside {here}: not rewritten (migrate that file itself)", file=path
            )
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
