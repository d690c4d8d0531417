"""Guess a config file's format from its content (and, to break ties, its file name).

Each format's JSON Schema already lists its known top-level keys, so detection is data-driven:
the format whose schema knows the largest share of the file's top-level keys wins (a format's reader
may sniff its files itself: spec.Reader.sniff for a parsed tree, spec.Reader.sniff_text for a file
whose syntax is not YAML or JSON, asked first).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.errors import InputError
from ..io.documents import parse_json, parse_yaml, read_text
from ..knowledge.registry import FORMATS, get_format
from ..knowledge.schema import schema_index


def score(tree: dict[str, Any], fmt: str) -> float:
    """How surely a parsed tree is one of `fmt`'s files (0..1): the format's own sniffing, else the
    share of its top-level keys (as the framework spells them) that the format's schemas know."""
    spec = get_format(fmt)
    sniff = spec.load_reader().sniff
    sniffed = sniff(tree) if sniff is not None else None
    if sniffed is not None:
        return sniffed
    keys = [spec.spell(str(k)) for k in tree]
    if not keys:
        return 0.0
    best = 0.0
    for name in spec.schemas or (fmt,):
        index = schema_index(name)
        best = max(best, sum(1 for k in keys if index.node(k) is not None or index.known(k)) / len(keys))
    return best


def detect_tree(tree: dict[str, Any], name: str = "", header: str = "") -> str:
    """`header`: the file's first line; neoconv's own outputs name their framework there, which breaks
    a tie of a few keys two formats both know (a VeOmni file of model.config_path alone)."""
    scores = {fmt: score(tree, fmt) for fmt in FORMATS}
    best = max(scores.values())
    if best < 0.5:
        raise InputError(
            "cannot tell which framework this config is for; give the format (--from, or the SRC2DST command)",
            file=name or None,
        )
    top = sorted(f for f, s in scores.items() if s == best)
    if len(top) > 1:
        suffix = Path(name).suffix.lower()
        preferred = [
            f for f in top if FORMATS[f].suffix == suffix or (suffix == ".yml" and FORMATS[f].suffix == ".yaml")
        ]
        if len(preferred) == 1:
            return preferred[0]
        if "written by neoconv" in header:
            named = [f for f in top if header.startswith(f"# {FORMATS[f].title.split()[0]} ")]
            if len(named) == 1:
                return named[0]
        raise InputError(
            f"could be {' or '.join(top)} (both know all its keys); give the format with --from",
            file=name or None,
        )
    return top[0]


def detect_file(path: str) -> str:
    text = read_text(path)
    sniffed = {fmt: spec.load_reader().sniff_text for fmt, spec in FORMATS.items()}
    scores = {fmt: sniff(text) for fmt, sniff in sniffed.items() if sniff is not None}
    best = max((s for s in scores.values() if s is not None), default=0.0)
    if best >= 0.5:  # a syntax of its own (not YAML or JSON) that its reader recognises
        return sorted(f for f, s in scores.items() if s == best)[0]
    tree = (
        parse_json(text, path)
        if text.lstrip().startswith("{") and path.endswith(".json")
        else parse_yaml(text, path, duplicates=[])
    )
    return detect_tree(tree, path, text.split("\n", 1)[0])
