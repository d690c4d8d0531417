"""What a reader hands to the engine: the merged raw tree plus where each leaf came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .io import key_line

if TYPE_CHECKING:
    from .report.kinds import Message
    from .versions import Release


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
    # leaf -> why its value is only known at run time (HF Trainer's "auto"): no value, kept in same-format
    unresolved: dict[str, str] = field(default_factory=dict)
    # how to find a key's line in a file's text (leaf as written -> line), for a syntax io.key_line
    # (YAML and JSON) does not know; the reader supplies it
    locate: Callable[[str, str], int | None] | None = None
    # leaf or block -> why no rule reads it (dropped, carried by same-format): a key the file's release
    # does not read, a model family neoconv does not cover (a block: its rules' defaults do not apply either)
    set_aside: dict[str, Message] = field(default_factory=dict)

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
