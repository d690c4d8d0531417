"""The text a translation writes: for a same-format translation of one file (a migration, an
--in-place rewrite), the source's own text edited into the target (comments, key order, quoting,
number spellings kept: translator/preserve); otherwise, or when that cannot be done, the target's
plain dump. The report says which, and why, and names the comments that went with removed keys."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from .api import Translation


def preservable(src: str, dst: str, inputs: Sequence[str], with_files: Sequence[object]) -> bool:
    """Only a same-format translation of one file has one source text to keep the formatting of."""
    return src == dst and len(inputs) == 1 and not with_files and inputs[0] != "-"


def output_text(result: Translation, source_path: str | None, *, plain: bool = False, source_text: str | None = None) -> str:
    """`source_path`: the one source file when preservable(), else None (the plain dump)."""
    if plain or source_path is None or result.report.source.get("format") != result.format:
        if source_path is not None and plain:
            result.report.target["formatting"] = {"kept": False, "why": "--plain"}
        if source_path is not None and not plain:
            return _with_comments(result, source_path, source_text)
        return result.dump()
    from .io import read_text
    from .preserve import moves_from_report, preserve
    from .registry import get_format

    text = source_text if source_text is not None else read_text(source_path)
    spec = get_format(result.format)
    unkept = spec.unkept_formatting(text) if spec.unkept_formatting is not None else None
    if unkept:  # a source in another syntax of the format: its plain form, and why
        result.report.target["formatting"] = {"kept": False, "why": unkept}
        return result.marked(result.dump())
    syntax = spec.syntax
    rewrite = preserve(text, result.config, moves_from_report(result.report), syntax, plain=result.dump)
    formatting: dict[str, object] = {"kept": rewrite.preserved}
    if not rewrite.preserved:
        formatting["why"] = rewrite.note.removeprefix("formatting not kept: ")
    if rewrite.removed_comments:
        formatting["removed_comments"] = [{"key": key, "comment": comment} for key, comment in rewrite.removed_comments]
    result.report.target["formatting"] = formatting
    if not rewrite.preserved:
        return rewrite.text  # the plain dump, already marked
    return result.marked(rewrite.text, check=True)


def carries_comments(src: str, dst: str, inputs: Sequence[str], with_files: Sequence[object]) -> bool:
    """A cross-format translation of one YAML file into YAML carries the file's comments over."""
    from .registry import get_format

    return (src != dst and len(inputs) == 1 and not with_files and inputs[0] != "-"
            and get_format(src).syntax == "yaml" and get_format(dst).syntax == "yaml")  # fmt: skip


def _with_comments(result: Translation, source_path: str, source_text: str | None) -> str:
    from .carry import carry_comments
    from .io import read_text
    from .registry import get_format

    plain = get_format(result.format).load_writer().dump(result.written)
    spell = get_format(str(result.report.source.get("format"))).spell
    text, carried = carry_comments(source_text if source_text is not None else read_text(source_path), plain,
                                   result.report, spell)  # fmt: skip
    if carried:
        result.report.target["comments_carried"] = carried
    return result.marked(text)


def formatting_notes(target: dict[str, object]) -> list[str]:
    """What the report's target says about the written text, as lines for the terminal."""
    from .errors import printable

    notes = []
    formatting = target.get("formatting")
    if isinstance(formatting, dict):
        if formatting.get("kept"):
            notes.append("the source's comments and formatting are kept; only what the migration changes differs")
        else:
            notes.append(f"wrote the plain layout, not the source's formatting: {printable(str(formatting.get('why', '')))}")
        for item in formatting.get("removed_comments") or []:
            notes.append(f"removed with {printable(item['key'])}: its comment {printable(item['comment'])}")
    if target.get("missing_marked") is False:
        notes.append("the output is JSON, which has no comments: the missing values above are not marked in it")
    return notes
