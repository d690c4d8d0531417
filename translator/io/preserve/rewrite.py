"""preserve(): the source file's text, edited into the target document, or the plain dump and why."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import yaml

from .. import yamlread
from ...core.errors import NeoconvError
from .plan import plan
from .tree import same

Moves = Iterable[tuple[str, str]]  # (old dotted key, new dotted key), in report order


@dataclass(frozen=True)
class Rewrite:
    """The text to write. `preserved` False: the plain dump, and `note` says why."""

    text: str
    preserved: bool
    note: str = ""
    dropped_comments: list[str] = field(default_factory=list)  # comments that went with removed keys
    removed_comments: list[tuple[str, str]] = field(default_factory=list)  # the same, with the key each went with


def preserve(
    source_text: str,
    target: Mapping[str, Any],
    moves: Moves,
    fmt: str,
    *,
    plain: str | Callable[[], str] | None = None,
) -> Rewrite:
    """Edit `source_text` into text that loads to exactly `target`, keeping its formatting.

    fmt: "yaml" or "json" (the syntax of the text). moves: what the migration moved, e.g. from
    moves_from_report(translation.report). plain: the text to write when formatting cannot be
    kept (default: a plain YAML/JSON dump of `target`); a callable is called only then.
    """
    document = _plain_dicts(target)
    if fmt not in ("yaml", "json"):
        raise ValueError(f"preserve: fmt must be 'yaml' or 'json', not {fmt!r}")
    bom = "\ufeff" if source_text.startswith("\ufeff") else ""
    text = source_text[len(bom) :]
    try:
        if fmt == "yaml":
            out, dropped = _yaml(text, document, list(moves))
        else:
            out, dropped = _json(text, document, list(moves))
    except _Fallback as why:
        return Rewrite(_plain(plain, document, fmt), False, str(why))
    return Rewrite(bom + out, True, "", [text for _, text in dropped], dropped)


class _Fallback(Exception):
    pass


def _plain_dicts(value: Any) -> Any:
    """The target with every mapping a plain dict (a writer's document class loads back as one)."""
    if isinstance(value, Mapping):
        return {k: _plain_dicts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_dicts(v) for v in value]
    return value


def _yaml(text: str, document: dict[str, Any], moves: list[tuple[str, str]]) -> tuple[str, list[tuple[str, str]]]:
    from . import yamlrender, yamlsource  # only a rewrite pays for these

    try:
        source = yamlsource.parse(text)
    except yamlsource.Unsupported as exc:
        if same(_safe_load(text), document):
            return text, []  # nothing to edit: the file stays as it is whatever its shape
        raise _Fallback(f"formatting not kept: {exc}") from None
    except yaml.YAMLError:
        raise _Fallback("formatting not kept: the source is not YAML this reader can position") from None
    if same(source.root.value, document):
        return text, []
    out, dropped = yamlrender.render(source, plan(source.root, document, moves))
    if not same(_safe_load(out), document):
        raise _Fallback(_why_not(text, source.aliases))
    return out, dropped


_DATE = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}")


def _safe_load(text: str) -> Any:
    """What yaml.safe_load reads from `text` (_BROKEN for an error; a date it cannot build stays
    text). neoconv's one-pass reader is faster and agrees with safe_load but for dates (it keeps
    them as text) and what it refuses (a repeated key)."""
    from .yamlsource import safe_load

    if not _DATE.search(text):
        try:
            return yamlread.load(text)
        except (NeoconvError, yaml.YAMLError):
            pass
    try:
        return safe_load(text)
    except yaml.YAMLError:
        return _BROKEN


def _json(text: str, document: dict[str, Any], moves: list[tuple[str, str]]) -> tuple[str, list[tuple[str, str]]]:
    from . import jsonedit

    try:
        source = jsonedit.parse(text)
    except (ValueError, jsonedit.Unsupported) as exc:
        raise _Fallback(f"formatting not kept: {exc}") from None
    if same(source.root.value, document):
        return text, []
    out = jsonedit.render(source, plan(source.root, document, moves))
    try:
        check = json.loads(out)
    except ValueError:
        check = _BROKEN
    if not same(check, document):
        raise _Fallback("formatting not kept: the edited text did not load to the translated document")
    return out, []


_BROKEN = object()


def _why_not(text: str, aliases: bool) -> str:
    if aliases:
        return "formatting not kept: the file shares values through anchors and aliases (&name, *name) that the migration changes"
    if "!" in text and any(line.lstrip().split(": ", 1)[-1].startswith("!") for line in text.splitlines()):
        return "formatting not kept: the file uses YAML tags (!name) on values the migration changes"
    return "formatting not kept: the edited text did not load to the translated document"


def _plain(plain: str | Callable[[], str] | None, document: dict[str, Any], fmt: str) -> str:
    if callable(plain):
        return plain()
    if plain is not None:
        return plain
    if fmt == "json":
        return json.dumps(document, indent=2) + "\n"
    return str(yaml.safe_dump(document, sort_keys=False, default_flow_style=False, allow_unicode=True))


def moves_from_report(report: Any) -> list[tuple[str, str]]:
    """What a translation moved, from its report: (source key, target key) for each entry that
    has both (an entry written to several keys gives a pair for each)."""
    pairs: list[tuple[str, str]] = []
    for entry in report.entries:
        if entry.source_key and entry.target_key:
            pairs += [(entry.source_key, key) for key in entry.target_key.split(", ")]
    return pairs
