"""The words a Megatron file gives argparse (`Arg`), and all a file's reading gives (`Words`): what
syntax.py makes of a file and options.py parses."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Arg:
    """One word argparse would see: its text (an unresolved word: its source text), where it came
    from, and what the reader noted about it."""

    text: str
    raw: str
    resolved: bool
    file: str
    line: int
    note: str = ""
    why: str = ""  # unresolved: why its value is not known here
    group: int = -1  # words that one shell word split into share it (-1: unknown)
    word: str = ""  # the shell word it came from, as written
    literal: int = (
        0  # unresolved: how many leading characters of its text the file writes as they are (`--lr=` of `--lr=$LR`)
    )


@dataclass
class Words:
    syntax: str  # args | bash | yaml
    args: list[Arg] = field(default_factory=list)
    launcher: list[Arg] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # yaml: top-level entries besides MODEL_ARGS
    extra_lines: dict[str, int] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # yaml: the top-level keys in file order (MODEL_ARGS among them)
    notes: list[str] = field(default_factory=list)  # bash: what the reading assumed, did not run, did not read
    included: list[str] = field(default_factory=list)  # bash: files given beside it that it sources
