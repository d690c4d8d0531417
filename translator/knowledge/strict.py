"""What a release whose parser refuses every key its argument classes do not declare (VeOmni from PR #1090)
makes of such a key. A typo beside a declared field, a key another release reads or moved, a dotted YAML key,
a key outside every known block or not spelt as a field name: the release cannot run the file, so it is refused
with the parser's reason. A field-shaped key under a known block that no release of the history declares is a
fork's or a development branch's setting (issue #27): the file runs there, so the key is read as `unknown` and
noted as such, and the rest translates. Nothing here names a framework."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from ..core.errors import InputError
from ..io.documents import flatten
from .schema import History, load_history

_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # a dataclass field, in any fork, is an identifier


@lru_cache(maxsize=64)
def _declared(fmt: str, label: str) -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """(fields read at `label`, their parent blocks, block -> the class declaring its fields)."""
    history = load_history(fmt)
    assert history is not None
    fields = frozenset(k for k in history.keys if history.reads(k, label) and ".*." not in k)
    blocks: set[str] = set()
    owner: dict[str, str] = {}
    for key in fields:
        parts = key.split(".")
        for i in range(1, len(parts)):
            blocks.add(".".join(parts[:i]))
        group = history.keys[key].get("group")
        if group and not history.keys[key].get("trainers"):  # not a task script's subclass (MyModelArguments)
            parent = ".".join(parts[:-1])
            if owner.get(parent, "Base").startswith("Base"):  # the subclass, not the base it inherits fields from
                owner[parent] = str(group)
    return fields, frozenset(blocks), owner


def _first_undeclared(written: str, fields: frozenset[str], blocks: frozenset[str]) -> str | None:
    """The shortest prefix of a written key that no class declares (None: declared). A declared field
    ends the walk: what a dict-valued field holds is its own (VeOmni recurses into dataclasses only)."""
    parts = written.split(".")
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        if prefix in fields:
            return None
        if prefix not in blocks:
            return prefix
    return None


def _moved_to(history: History, key: str, label: str) -> str | None:
    """Where a release before `label` had `key` (or a block of that name) moved by `label`."""
    at = history.position[label]
    done = [r for r in history.renames if history.position.get(r.release, at + 1) <= at]
    for rename in sorted(done, key=lambda r: -history.position[r.release]):  # the latest move first
        if rename.old == key and not rename.new.startswith(key + "."):
            return rename.new
        if rename.old.startswith(key + "."):
            rest = rename.old[len(key) :]
            if rename.new.endswith(rest):
                return rename.new[: len(rename.new) - len(rest)]
    return None


def _written_keys(source: Any) -> Iterator[tuple[str, str, tuple[str, str] | None]]:
    """(view key, key as written, the dotted YAML key holding it or None) of every leaf of the file: a YAML
    key written with dots (`optimizer.lr:` under `model:`) is one key to a parser that splits nothing."""
    dotted = source.meta.get("dotted_yaml", {})
    config = source.files[0] if source.files else None
    for leaf in flatten(source.tree):
        if source.file_of(leaf) != config:  # a companion file's (VeOmni's config.json): not the config's keys
            continue
        yield leaf, source.aliases.get(leaf, leaf), dotted.get(leaf)


def check_undeclared(source: Any, title: str, history: History) -> None:
    """Raise InputError for the first key the source's release (one that refuses keys) refuses; a fork's key
    (see the module's note) gets a note on each of its leaves instead."""
    label = source.version
    fields, blocks, owner = _declared(source.format, label)
    written_keys = list(_written_keys(source))
    if not any(k.split(".", 1)[0] in blocks for _, k, _ in written_keys):
        return  # no section of any release: not a config (the pipeline says so), rather than its first key
    for leaf, written, dotted in written_keys:
        found = _first_undeclared(written, fields, blocks)
        if found is not None:
            bad, parent = found, found.rsplit(".", 1)[0] if "." in found else ""
        elif dotted is not None:  # a declared field, but written as one dotted YAML key
            bad, parent = dotted
        else:
            continue
        moved = _moved_to(history, bad, label)
        cls = owner.get(parent, "the arguments root")
        said = f"{bad} has moved to {moved}" if moved else f"{bad} is not a field of {cls}"
        hint: str | None
        if moved:
            hint = f"write it as {moved}"
        elif dotted is not None and bad == dotted[0]:
            hint = f"write {written} nested ({title} splits dotted keys only on its command line)"
        else:
            bare = not parent and bad == written  # a value at the root, which holds only sections
            hint = _hint(history, bad, parent, fields | blocks, title, bare)
            if hint is None:
                note = f"no {title} release declares {bad} ({title} {label} refuses it)"
                note += ": a fork's or a development branch's setting?"
                source.notes[leaf] = "; ".join(x for x in (source.notes.get(leaf), note) if x)
                continue
        where = getattr(source, "origins", {}).get(leaf, (None, None))
        raise InputError(
            f'{title} {label} refuses {bad}: its parser says "{said}" (from PR {history.refuses_unknown_from} on, '
            f"every key no argument class declares is an error); {hint}",
            file=where[0],
            line=where[1],
            key=written,
        )


def _hint(history: History, bad: str, parent: str, known: frozenset[str], title: str, bare: bool) -> str | None:
    """What to do about an undeclared key the release refuses, or None for a fork's key: field-shaped, under a
    known block or a section of its own (a task script's root adds sections, as `infer`; `bare`: a value at
    the root, never a setting), near no declared sibling, and read by no release of the history (as a key or
    a block)."""
    siblings = sorted(k for k in known if k.rsplit(".", 1)[0] == parent and "." in k or not parent and "." not in k)
    names = {k.rsplit(".", 1)[-1]: k for k in siblings}
    name = bad.rsplit(".", 1)[-1]
    near = [names[n] for n in difflib.get_close_matches(name, list(names), n=1, cutoff=0.75)]
    inside = (k for k in history.keys if k.startswith(bad + "."))  # a block: where its fields were read
    runs = history.runs(bad) if bad in history.keys else history.runs(next(inside, ""))
    if not bare and _FIELD_NAME.match(name) and not near and not runs:
        return None
    return (f"did you mean {near[0]}?" if near else "remove it") + (
        f" ({bad} is read by {title} {runs})" if runs else ""
    )
