"""The Cerebras corpus files and helpers the Cerebras trainer-layout and NeoX-writer tests share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import CORPUS, corpus_files

from neoconv import InputError, translate
from neoconv.core.errors import UnsupportedFamily
from neoconv.formats.cerebras.reader import READER as cerebras
from neoconv.io.documents import flatten
from neoconv.services.validate import schema_errors

LEGACY = corpus_files("cerebras-legacy", "**/*.yaml")
TRAINER = corpus_files("cerebras-trainer", "**/*.yaml")
# Corpus files no Cerebras translation can read, and why (the test checks the error says so).
UNREADABLE: dict[str, str] = {}


def rel(path: Path) -> str:
    if not isinstance(path, Path) or not path.is_relative_to(CORPUS):  # pytest < 8.1 asks for an empty list's id
        return str(path)
    return str(path.relative_to(path.parents[len(path.relative_to(CORPUS).parts) - 2]))


def translate_or_known(path: Path, dst: str, **options: Any) -> Any:
    """translate(), or None for a corpus file listed in UNREADABLE (after checking its error)."""
    known = UNREADABLE.get(rel(path))
    try:
        result = translate(path, "cerebras", dst, **options)
    except UnsupportedFamily as exc:  # a BERT, T5, ViT, ...: refused for every other format (test_families)
        assert (
            dst != "cerebras" and "holds decoder-only transformer language models" in str(exc) and str(path) in str(exc)
        )
        return None
    except InputError as exc:
        if known is None:
            raise
        assert known in str(exc) and str(path) in str(exc)
        return None
    assert known is None, f"{rel(path)} reads now: take it out of UNREADABLE"
    return result


def numbers(tree: Any) -> Any:
    """YAML 1.1 float strings ('1e-05', which PyYAML reads as text) as the numbers they mean."""
    if isinstance(tree, dict):
        return {k: numbers(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [numbers(v) for v in tree]
    if isinstance(tree, str):
        try:
            return float(tree) if "e" in tree.lower() and not tree.isalpha() else tree
        except ValueError:
            return tree
    return tree


def assert_report_covers(result: Any, path: Path) -> None:
    """Every leaf of the file the reader saw gets one report entry, named as the user wrote it."""
    source = cerebras.read([str(path)])
    expected = [source.aliases.get(leaf, leaf) for leaf in flatten(source.tree)]
    # entries about keys the file lacks (a default written or lost) name the key, not a leaf; a model of a
    # family neoconv does not cover has one entry for its block, standing for every leaf under it
    blocks = [e.source_key for e in result.report.entries if e.source_key and "family not supported" in e.detail]
    keys = [e.source_key for e in result.report.entries if e.source_key in set(expected)]
    covered = [leaf for leaf in expected if any(leaf.startswith(b + ".") for b in blocks) and leaf not in keys]
    assert sorted(keys + covered) == sorted(expected)
    assert all(e.status.value == "dropped" for e in result.report.entries if e.source_key in blocks)
    assert schema_errors(result.report.to_json(), "report") == []
