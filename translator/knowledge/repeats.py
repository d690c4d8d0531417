"""A YAML key given twice in one mapping, release by release: the releases whose loader keeps the last
value run such a file, later ones (a table's `repeats_refused`) refuse it. Which release a file with one
is read as, and what a same-format translation to a refusing release does with it. Nothing here names a
framework."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..core.errors import InputError
from .schema import History, load_history
from ..io.documents import at_path


def runs_repeats(source: Any, release: Any, history: History, since: str, by: str, title: str) -> Any:
    """A file with a key given twice runs only on the releases before `since` (whose loader keeps the last
    value): the newest of those its keys fit (`release` is a versions.Release), or an error naming the
    repeat when none fits or the user named a later release."""
    cut = history.position[since]
    at = history.position.get(release.label)
    if at is None or at < cut:
        return release
    lowest = history.position.get(release.first or "", at) if release.how != "given" else at
    if lowest < cut:
        label = history.labels[cut - 1]
        detail = f"{release.detail}; a key given twice: read as {label}, the newest release that runs it"
        return replace(release, label=label, last=label, detail=detail)
    file, dup = source.repeated[0]
    raise InputError(
        f"{'.'.join(dup.path)} given twice (lines {dup.first_line} and {dup.line}): {title} {since} and later refuse "
        f"that ({by}) and this file reads as {release.label}: keep one, or give --from-version of an earlier release",
        file=file,
        line=dup.line,
    )


def repeats_for(source: Any, table: Any, release: str) -> list[str]:
    """A same-format translation to a release whose loader refuses a key given twice (the table's
    `repeats_refused`): a repeat of the same value is written once (the dotted keys returned, for the
    report); a repeat of another value is refused, since the file says two things and that release runs
    neither."""
    refused = table.releases.repeats_refused
    history = load_history(source.format)
    if not source.repeated or refused is None or history is None or release not in history.position:
        return []
    if history.position[release] < history.position[refused[0]]:
        return []
    once = []
    for file, dup in source.repeated:
        kept = _kept(source, ".".join(dup.path))
        if dup.shadowed != kept:
            raise InputError(
                f"{'.'.join(dup.path)} given twice with different values (lines {dup.first_line} and {dup.line}): "
                f"{table.title} {release} refuses a key given twice ({refused[1]}): keep one, or give --to-version "
                f"of a release before {refused[0]}",
                file=file,
                line=dup.line,
            )
        once.append(".".join(dup.path))
    return once


def _kept(source: Any, dotted: str) -> Any:
    """The value the file keeps at a key it repeats, as written: a reader that reads a layout into another
    view (Model Zoo's trainer layout, read as the legacy one) names where each leaf was written in
    `aliases`, so a trainer path is looked up through them (a block: its leaves, nested again)."""
    from ..io.documents import unflatten

    value = at_path(source.tree, dotted)
    if value is not None:
        return value
    aliases = getattr(source, "aliases", {}) or {}
    same = [read for read, written in aliases.items() if written == dotted]
    if same:
        return at_path(source.tree, same[0])
    under = {
        written[len(dotted) + 1 :]: at_path(source.tree, read)
        for read, written in aliases.items()
        if written.startswith(dotted + ".")
    }
    return unflatten(under) if under else None


def said_once(entries: list[Any], once: list[str], title: str, release: str) -> list[Any]:
    """The entries of leaves whose key the file repeated (with the same value) say it is written once."""
    said = f"written once: {title} {release} refuses a key given twice"

    def one(entry: Any) -> Any:
        key = entry.source_key or ""
        if not any(key == k or key.startswith(k + ".") for k in once):
            return entry
        return entry._replace(detail="; ".join(filter(None, (entry.detail, said))))

    return [one(e) for e in entries]
