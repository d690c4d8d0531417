"""What a reader hands to the engine: the merged raw tree plus where each leaf came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..io.documents import flatten, key_line

if TYPE_CHECKING:
    from ..core.report.kinds import Message
    from .versions import Release
    from ..io.yamlread import Duplicate


@dataclass
class Source:
    format: str
    tree: dict[str, Any]
    files: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # file name -> text, for line numbers
    leaf_files: dict[str, str] = field(default_factory=dict)  # top-level key -> file it came from
    layout: str | None = None
    version: str | None = None  # the release label the file is read as (versions.settle decides)
    release: Release | None = None  # how that release was decided
    notes: dict[str, str] = field(default_factory=dict)  # leaf -> what the reader did to it
    # what else the reader noted: `unsupplied` (field -> why no file supplies it) for the engine; a
    # same-format writer gets it all as WriteContext.source_shape (private to the format)
    meta: dict[str, Any] = field(default_factory=dict)
    # leaf as the tables see it -> path as the user wrote it (a layout the reader restructured)
    aliases: dict[str, str] = field(default_factory=dict)
    # the file as written, when the reader restructured it into another layout's view (Cerebras' trainer
    # layout): what the layout's own schema checks (validate)
    written: dict[str, Any] | None = None
    # leaf -> why its value is only known at run time (HF Trainer's "auto"): no value, kept in same-format
    unresolved: dict[str, str] = field(default_factory=dict)
    # leaves of `unresolved` that are placeholders the launcher fills by design (DeepSpeed's "auto"): the report
    # says `missing`, with the --set that gives the value; any other unresolved value is `lossy`
    placeholders: frozenset[str] = frozenset()
    # how to find a key's line in a file's text (leaf as written -> line), for a syntax io.key_line
    # (YAML and JSON) does not know; the reader supplies it
    locate: Callable[[str, str], int | None] | None = None
    # leaf or block -> why no rule reads it (dropped, carried by same-format): a key the file's release
    # does not read, a model family neoconv does not cover (a block: its rules' defaults do not apply either)
    set_aside: dict[str, Message] = field(default_factory=dict)
    # what the reader saw in the file that the user should see whatever the report shows (a key given
    # twice with two values): the report's source note
    warnings: list[str] = field(default_factory=list)
    # every key given twice in one mapping: (file, the repeat); a release whose loader refuses them is not
    # the file's (versions.settle)
    repeated: list[tuple[str, Duplicate]] = field(default_factory=list)

    def file_of(self, leaf: str) -> str | None:
        top = leaf.split(".", 1)[0]
        return self.leaf_files.get(top) or (self.files[0] if self.files else None)

    def line_of(self, leaf: str) -> int | None:
        name = self.file_of(leaf)
        text = self.texts.get(name or "")
        return (self.locate or key_line)(text, self.aliases.get(leaf, leaf)) if text else None


def set_aside(source: Source, readable: dict[str, Any], fates: dict[str, Any], fate: Callable[..., Any]) -> dict[str, Any]:
    """The leaves rules may read, without those the source sets aside (each `set_aside` entry a leaf, or a
    block covering the leaves under it); those get the fate `unsupported` with the reason."""
    if not source.set_aside:
        return readable
    found = _aside(source.set_aside, readable)
    for leaf, why in found.items():
        fates[leaf] = fate("unsupported", notes=(why,))
    return {k: v for k, v in readable.items() if k not in found} if found else readable


def _aside(aside: dict[str, Message], leaves: dict[str, Any]) -> dict[str, Message]:
    found: dict[str, Message] = {}
    for leaf in leaves:
        why = aside.get(leaf)
        if why is None and "." in leaf:
            parts = leaf.split(".")
            why = next((aside[b] for i in range(len(parts) - 1, 0, -1) if (b := ".".join(parts[:i])) in aside), None)
        if why is not None:
            found[leaf] = why
    return found


def withheld(rule: Any, aside: dict[str, Message]) -> bool:
    """Every key of the rule lies inside a block set aside (a rule without keys never does)."""
    return bool(rule.keys) and all(any(k.startswith(b + ".") for b in aside) for k in rule.keys)


def note_duplicates(source: Source, raw: dict[str, Any], duplicates: list[Duplicate], loader: str, file: str = "") -> None:
    """Name every key given twice in one mapping of `raw` (the file as parsed) on the leaves that keep
    the last value, as `loader` (the framework's own YAML loader) does: the first value is not used, by
    the framework either. A repeated block also names the first block's leaves the kept one lacks."""
    written = {path: leaf for leaf, path in source.aliases.items()}
    source.repeated += [(file or (source.files[0] if source.files else ""), dup) for dup in duplicates]
    for dup in duplicates:
        parts: list[str] = []
        node: Any = raw
        for part in dup.path:  # a list is one leaf: a repeat inside it is noted on the list
            if not isinstance(node, dict):
                break
            parts.append(part)
            node = node.get(part)
        dotted = ".".join(parts)
        leaves = [dotted + "." + k for k in flatten(node)] if isinstance(node, dict) and node else [dotted]
        lost = ""
        if isinstance(dup.shadowed, dict) and len(parts) == len(dup.path):
            gone = sorted(set(flatten(dup.shadowed, dotted + ".")) - set(leaves))
            lost = f" (with {', '.join(gone)}, which the later block does not set)" if gone else ""
        shadowed = "block" if isinstance(dup.shadowed, dict) else repr(dup.shadowed)[:40]
        note = (
            f"{'.'.join(dup.path)} given twice (lines {dup.first_line} and {dup.line}); {loader} keeps the last, "
            f"as here: the first, {shadowed}{lost}, is not used"
        )
        for leaf in leaves:
            leaf = written.get(leaf, leaf)
            source.notes[leaf] = "; ".join(x for x in (source.notes.get(leaf), note) if x)
        if lost or dup.shadowed != node:  # two values: the file says one thing and runs another
            source.warnings.append(note)
