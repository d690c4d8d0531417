"""The text a translation writes: for a same-format translation of one file (a migration, an
--in-place rewrite), the source's own text edited into the target (comments, key order, quoting,
number spellings kept: translator/preserve); otherwise, or when that cannot be done, the target's
plain dump. The report says which, and why, and names the comments that went with removed keys."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from .pipeline import Translation


def preservable(src: str, dst: str, inputs: Sequence[str], with_files: Sequence[object]) -> bool:
    """Only a same-format translation of one file has one source text to keep the formatting of."""
    return src == dst and len(inputs) == 1 and not with_files and inputs[0] != "-"


def output_text(
    result: Translation, source_path: str | None, *, plain: bool = False, source_text: str | None = None
) -> str:
    """`source_path`: the one source file when preservable(), else None (the plain dump)."""
    from .pipeline import Translation
    from ..core.errors import UsageError

    if not isinstance(result, Translation):
        raise UsageError(f"output_text() takes the Translation translate() returned, not {type(result).__name__}")
    if source_path is not None and not isinstance(source_path, str):
        raise UsageError(f"output_text(): source_path must be a path string or None, not {type(source_path).__name__}")
    once = result.report.target.get("written_once")
    if once and source_path is not None and not plain:  # the source's text repeats keys the target release refuses
        result.report.target["formatting"] = {
            "kept": False,
            "why": f"the file gives {', '.join(once)} twice, which "
            f"{result.report.target.get('version')} refuses: written once each",
        }
        return result.dump()
    if plain or source_path is None or result.report.source.get("format") != result.format:
        if source_path is not None and plain:
            result.report.target["formatting"] = {"kept": False, "why": "--plain"}
        if source_path is not None and not plain:
            return _with_comments(result, source_path, source_text)
        return result.dump()
    from ..io.preserve import moves_from_report, preserve
    from ..knowledge.registry import get_format

    spec = get_format(result.format)
    if spec.editor is None:  # no editor reads its files: the plain layout
        result.report.target["formatting"] = {
            "kept": False,
            "why": f"neoconv has no format-preserving editor for {spec.title}",
        }
        return result.dump()
    text = _source_text(result, source_path, source_text)
    unkept = spec.unkept_formatting(text) if spec.unkept_formatting is not None else None
    if unkept:  # a source in another syntax of the format (a Megatron bash script): its plain form, and why
        result.report.target["formatting"] = {"kept": False, "why": unkept}
        return result.dump()  # dump() marks what is missing
    rewrite = preserve(text, result.config, moves_from_report(result.report), spec.editor, plain=result.dump)
    formatting: dict[str, object] = {"kept": rewrite.preserved}
    if not rewrite.preserved:
        formatting["why"] = rewrite.note.removeprefix("formatting not kept: ")
    if rewrite.removed_comments:
        formatting["removed_comments"] = [{"key": key, "comment": comment} for key, comment in rewrite.removed_comments]
    result.report.target["formatting"] = formatting
    if not rewrite.preserved:
        return rewrite.text  # the plain dump, already marked
    if "valid" in result.report.target:  # the output was validated: its text too (the source's repeated keys)
        from .validate import check_text

        check_text(result.report, rewrite.text, result.format)
    from ..io.documents import starts_with_bom

    bom = "\ufeff" if source_text is None and starts_with_bom(source_path) else ""  # kept, as the rest of the file
    return bom + result.marked(rewrite.text, check=True)


def carries_comments(src: str, dst: str, inputs: Sequence[str], with_files: Sequence[object]) -> bool:
    """A cross-format translation of one YAML file into YAML carries the file's comments over."""
    from ..knowledge.registry import get_format

    source, target = get_format(src), get_format(dst)
    one = src != dst and len(inputs) == 1 and not with_files and inputs[0] != "-"
    return one and source.editor == "yaml" and target.editor == "yaml" and target.comments


def _with_comments(result: Translation, source_path: str, source_text: str | None) -> str:
    from ..io.carry import carry_comments
    from ..knowledge.registry import get_format

    plain = get_format(result.format).load_writer().dump(result.written)
    spell = get_format(str(result.report.source.get("format"))).spell
    text, carried = carry_comments(_source_text(result, source_path, source_text), plain, result.report, spell)
    if carried:
        result.report.target["comments_carried"] = carried
    return result.marked(text)


def _source_text(result: Translation, path: str, given: str | None) -> str:
    """The source's text as the translation read it (the file is not opened a second time)."""
    from ..io.documents import read_text

    if given is not None:
        return given
    known = result.source_texts.get(path)
    return known if known is not None else read_text(path)


def formatting_notes(target: dict[str, object]) -> list[str]:
    """What the report's target says about the written text, as lines for the terminal."""
    from ..core.errors import printable

    notes = []
    formatting = target.get("formatting")
    if isinstance(formatting, dict):
        if formatting.get("kept"):
            notes.append("the source's comments and formatting are kept; only what the migration changes differs")
        else:
            notes.append(
                f"wrote the plain layout, not the source's formatting: {printable(str(formatting.get('why', '')))}"
            )
        for item in formatting.get("removed_comments") or []:
            notes.append(f"removed with {printable(item['key'])}: its comment {printable(item['comment'])}")
    if target.get("missing_marked") is False:
        notes.append("the output is JSON, which has no comments: the missing values above are not marked in it")
    return notes
