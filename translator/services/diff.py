"""`neoconv diff` and `neoconv roundtrip`: two configs compared through the canonical IR (the comparison
itself is the engine's: engine/difference.py), each difference with what a translation report says of
its field, and the there-and-back round trip through real files."""

from __future__ import annotations

from typing import Any, Mapping

from ..core.ir import DEFAULT_RTOL
from ..core.errors import InputError, NeoconvError
from ..engine.difference import (
    DiffResult,
    FieldChange,
    check_rtol,
    diff_ir,
    expressible,
    run_layout,
    unheld,
    writable,
)

__all__ = [
    "DiffResult",
    "FieldChange",
    "annotate",
    "check_report",
    "diff_ir",
    "expressible",
    "given_from_a",
    "reported_format",
    "roundtrip",
    "run_layout",
    "written_release",
]


def reported_format(report: Mapping[str, Any] | None, side: str) -> str | None:
    """The format the report of a translation says its source or target (`side`) is: a file it names is read
    as that format, not detected again (an output whose keys two formats both know is the report's)."""
    from ..knowledge.registry import FORMATS

    named = report.get(side) if report is not None else None
    fmt = named.get("format") if isinstance(named, Mapping) else None
    return fmt if isinstance(fmt, str) and fmt in FORMATS else None


def written_release(report: Mapping[str, Any] | None, fmt: str) -> str | None:
    """The release a translation wrote its output for (the report's target), when the output is read as that
    format: the output is read as that release, not as the one its keys fit best (a migration that carries
    keys the target release does not read, each named, would read as an older release otherwise)."""
    target = report.get("target") if report is not None else None
    if not isinstance(target, Mapping) or target.get("format") != fmt:
        return None
    version = target.get("version")
    return version if isinstance(version, str) else None


def check_report(data: Any, path: str) -> dict[str, Any]:
    """A translation report as `--report FILE` writes it, or an InputError naming the file."""
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not all(
        isinstance(e, dict)
        and isinstance(e.get("fields") or [], list)
        and all(isinstance(f, str) for f in e.get("fields") or [])
        for e in entries
    ):
        raise InputError(
            "not a neoconv translation report (it needs an `entries` list, as --report writes it); give the "
            "file a translation's --report wrote",
            file=path,
        )
    return data


def annotate(result: DiffResult, report: dict[str, Any]) -> None:
    """Give each difference the statuses of the translation report's entries about its field (the
    report of translating A into B, as `--report FILE` wrote it); a value the user gave with --set
    is `set`, whatever its status."""
    by_field: dict[str, list[str]] = {}
    for entry in report.get("entries") or ():
        if isinstance(entry, dict):
            status = "set" if entry.get("kind") == "set_written" else str(entry.get("status"))
            for name in entry.get("fields") or ():
                by_field.setdefault(name, []).append(status)
    for change in (*result.changed, *result.only_a, *result.only_b, *result.inexpressible):
        change.report = tuple(dict.fromkeys(by_field.get(change.field, ())))


def given_from_a(result: DiffResult, layout: dict[str, Any], fmt_b: str) -> None:
    """The sizes B was read with from A (run_layout) are still A's alone: each is said as a field B's format
    cannot hold, as the comparison says any other."""
    for name, value in layout.items():
        if not any(change.field == name for change in result.inexpressible):
            change = FieldChange(name, value.value, None, value.source_keys, ())
            change.unheld = unheld(name, fmt_b)
            result.inexpressible.append(change)


_THERE_ONLY = (
    "layout",
    "with_files",
    "source_layout",
    "model_config",
    "target_values",
    "source_version",
    "target_version",
)


def roundtrip(
    inputs: list[str], src: str, dst: str, *, rtol: float = DEFAULT_RTOL, **options: Any
) -> tuple[DiffResult, Any, Any]:
    """Translate src -> dst -> src through real files; diff the canonical values of both ends."""
    import tempfile
    from pathlib import Path

    from .pipeline import Request, canonical, read, read_ir, translate
    from ..knowledge.registry import get_format

    check_rtol(rtol)
    there = translate(inputs, src, dst, **options)
    with tempfile.TemporaryDirectory(prefix="neoconv-rt-") as tmp:
        middle = Path(tmp) / f"there{get_format(dst).suffix}"
        middle.write_text(there.dump(), encoding="utf-8")
        for name, text in there.side_files.items():
            (Path(tmp) / name).write_text(text, encoding="utf-8")
        # back: the target's file read as its release, written for the source's (the source's own
        # options: its layout, companions, model config and --set DST:KEY values, stay on the way there)
        back_options = {k: v for k, v in options.items() if k not in _THERE_ONLY}
        back_options.update(source_version=options.get("target_version"), target_version=options.get("source_version"))
        try:
            back = translate([str(middle)], dst, src, **back_options)
        except NeoconvError as exc:  # the middle file is ours and gone: name what the user gave
            exc.file, exc.line, exc.column = f"{inputs[0]} (translated to {dst} and read back)", None, None
            raise
        final = Path(tmp) / f"back{get_format(src).suffix}"
        final.write_text(back.dump(), encoding="utf-8")
        for name, text in back.side_files.items():
            (Path(tmp) / name).write_text(text, encoding="utf-8")
        # the source as the translation read it (its --with companions merged), and the file back
        start_options = {k: v for k, v in options.items() if k not in ("target_values", "output", "verify")}
        request = Request.of(inputs, src, dst, start_options)
        start = canonical(read(request), request)
        end_options = {k: v for k, v in back_options.items() if k not in ("source_version", "target_version")}
        end = read_ir([str(final)], src, **end_options, source_version=options.get("source_version"))
    result = diff_ir(start, end, rtol=rtol)
    # what the middle format cannot express is expected to be lost: list it, but separately
    kept = writable(dst)
    lost = [c for c in result.changed + result.only_a if c.field not in kept]
    result.changed = [c for c in result.changed if c.field in kept]
    result.only_a = [c for c in result.only_a if c.field in kept]
    for c in lost:
        c.unheld = unheld(c.field, dst)
    result.inexpressible.extend(lost)
    return result, there, back
