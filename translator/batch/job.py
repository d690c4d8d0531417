"""One file of a batch: translate it (keeping the source's formatting for a same-format migration),
then compare with what is there (--check, --diff), or write it with its side files (--in-place:
only when it changes, backed up first). Runs in a worker process and never raises."""

from __future__ import annotations

import os
from typing import Any

from ..core.errors import NeoconvError, UnsupportedFamily
from ..services.policy import describe
from ..knowledge.registry import get_format
from .options import BatchOptions, FileResult

Job = tuple[str, str, str]  # source path, source relative to SRC_DIR, output path


def output_path(rel: str, src: str, dst: str) -> str:
    """The output's path relative to OUT_DIR: the source's, with the target format's suffix (a
    same-format migration keeps the file's own name)."""
    if src == dst:
        return rel
    stem, dot, suffix = rel.rpartition(".")
    return (stem if dot and "/" not in suffix else rel) + get_format(dst).suffix


def run_job(opts: BatchOptions, args: Job) -> FileResult:
    """Translate one file (must not raise: one bad file never stops a migration of thousands)."""

    from ..io.documents import inputs_inside

    path_s, rel_s, out_s = args
    try:
        with inputs_inside(opts.src_root or os.path.dirname(path_s), opts.with_files):
            return _job(opts, path_s, rel_s, out_s)
    except NeoconvError as exc:
        if opts.skip_unsupported and isinstance(exc, UnsupportedFamily):
            return FileResult(rel_s, "skipped", reason=exc.message)
        return FileResult(rel_s, "failed", error=str(exc))
    except Exception as exc:
        return FileResult(rel_s, "failed", error=f"internal error: {type(exc).__name__}: {exc}")


def _job(opts: BatchOptions, path_s: str, rel_s: str, out_s: str) -> FileResult:
    from ..services.pipeline import translate
    from ..services.output_text import carries_comments, output_text, preservable
    from ..io.confined import Confined
    from ..io.outputs import foreign_side_file

    rel_out = output_path(rel_s, opts.src, opts.dst)  # the summary names outputs relative to OUT_DIR
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
    # a migration keeps the source's formatting; a YAML-to-YAML translation carries its comments over
    one = preservable(opts.src, opts.dst, [path_s], opts.with_files) or carries_comments(
        opts.src, opts.dst, [path_s], opts.with_files
    )
    text = output_text(result, path_s if one else None, plain=opts.plain)
    counts = {k: v for k, v in result.report.summary().items() if v}
    failing = opts.policy.failures(result.report, rel_s) if opts.policy.fail_on else []
    strict = f"fails the policy: {describe(failing)}" if failing else ""
    folder = os.path.dirname(out_s)
    files = {out_s: text, **{os.path.join(folder, name): side for name, side in result.side_files.items()}}
    names = {p: posix_join(os.path.dirname(rel_out), os.path.basename(p)) for p in files}  # as the summary names them
    rel_sides = [names[p] for p in files if p != out_s]
    tree = Confined(opts.out_root)  # every read, write and removal stays inside the tree, links never followed
    if opts.check or opts.in_place:  # only these compare with what is there (a plain run just writes)
        before = {p: tree.read(p) for p in files}
        changed = [p for p, t in files.items() if before[p] != t]
    else:
        before, changed = {}, list(files)
    if opts.check:
        status = "changed" if changed else "unchanged"
        shown = "".join(_diff(before[p], files[p], names[p]) for p in changed) if opts.diff else ""
        return FileResult(rel_s, status, rel_out, counts, error=strict, diff=shown, side_files=rel_sides)
    proof = result.report.to_json() if opts.prove else None  # --prove: proven once every file is written
    if not changed:  # --in-place and nothing changes: nothing to write, nothing to back up
        return FileResult(rel_s, "unchanged", rel_out, counts, error=strict, side_files=rel_sides, proof_report=proof)
    for target, content in files.items():
        clash = foreign_side_file(target, content, out_s, tree.read) if target != out_s else ""
        if clash:
            return FileResult(rel_s, "failed", error=clash)
    for target in changed:
        if opts.in_place and opts.backup and before.get(target) is not None:
            # the bytes as they were (CRLF, BOM, comments kept), with the file's permissions and times
            tree.replace(target + ".bak", tree.read_bytes(target) or b"", times_of=target)
        tree.replace(target, files[target])
    return FileResult(rel_s, "translated", rel_out, counts, error=strict, side_files=rel_sides, proof_report=proof)


def posix_join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _diff(old: str | None, new: str, name: str) -> str:
    """A unified diff of one file's change, named as the summary names it."""
    import difflib

    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        new.splitlines(keepends=True),
        f"a/{name}" if old is not None else "/dev/null",
        f"b/{name}",
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _read_source(path: str, opts: BatchOptions) -> Any:
    """The file read as the source format, or None when it plainly is another format (translate
    then reads it as that one and says so)."""
    from ..services.pipeline import load
    from ..core.errors import WrongFormat

    options = opts.translate_options
    try:
        return load(path, opts.src, layout=options.get("source_layout"), model_config=options.get("model_config"))
    except WrongFormat:
        return None


def _companion(path: str, src: str) -> str:
    from ..knowledge.registry import companion_format

    return companion_format(path, src)
