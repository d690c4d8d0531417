"""Format-preserving migrations of every legacy corpus file: VeOmni flat -> nested, Cerebras legacy ->
trainer (and GPT-NeoX files to current NeoX spellings). For each: (1) every comment line of the source is in the rewrite (counted; only comments
of removed keys may go, and the rewrite names them), (2) the diff touches only lines of keys that
moved, changed, were added or removed (preserve_oracle.diff_problems says exactly what that means),
(3) the rewrite loads to exactly the document the plain migration writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CORPUS, corpus_files
from preserve_oracle import comment_texts, diff_problems, removed_key_comments, strictly_equal

from neoconv import InputError, translate
from neoconv.io.preserve import moves_from_report, preserve

MIGRATIONS = (
    [("veomni", "nested", p) for p in corpus_files("veomni-legacy", "**/*.yaml")]
    + [("cerebras", "trainer", p) for p in corpus_files("cerebras-legacy", "**/*.yaml")]
    # old NeoX spellings (hidden-size) to current ones (hidden_size), inside NeoX's {...} files
    + [("neox", None, p) for p in corpus_files("neox", "**/*.yml")]
)
CASES = MIGRATIONS or [
    pytest.param(None, None, None, marks=pytest.mark.skip(reason=f"shared corpus {CORPUS} is not present"))
]


def _id(case: Any) -> str:
    return str(case.relative_to(CORPUS)) if isinstance(case, Path) else str(case)


def _migrate(fmt: str, layout: str | None, path: Path) -> Any:
    try:
        return translate(path, fmt, fmt, layout=layout)
    except InputError as exc:  # the plain migration refuses it too: nothing to preserve
        pytest.skip(f"{fmt}2{fmt} --layout {layout} refuses {path.name}: {exc}")


@pytest.mark.slow
@pytest.mark.parametrize(("fmt", "layout", "path"), CASES, ids=_id)
def test_migration_keeps_comments_and_touches_only_what_moved(fmt: str, layout: str | None, path: Path) -> None:
    result = _migrate(fmt, layout, path)
    source = path.read_text(encoding="utf-8")
    target = dict(result.config)
    rewrite = preserve(source, target, moves_from_report(result.report), "yaml", plain=result.dump)
    assert rewrite.preserved, rewrite.note

    # (3) the same document as the plain migration
    assert strictly_equal(yaml.safe_load(rewrite.text), target)

    # (1) every comment line is still there, but those of removed keys, which the rewrite names
    before, after = comment_texts(source), comment_texts(rewrite.text)
    assert sum(before.values()) > 0 or "#" not in source
    assert after - before == {}, "comments the source did not have"
    gone = before - after
    assert sorted(gone.elements()) == sorted(rewrite.dropped_comments)
    removed = {e.source_key for e in result.report.entries if e.source_key and not e.target_key}
    assert not gone - removed_key_comments(source, removed), "a comment went that no removed key owned"
    assert sum(after.values()) == sum(before.values()) - len(rewrite.dropped_comments)

    # (2) the diff touches only lines whose key moved, changed, was added or removed
    assert diff_problems(source, rewrite.text, target) == []


def test_the_corpus_has_what_the_tests_claim_to_cover() -> None:
    if not MIGRATIONS:
        pytest.skip(f"shared corpus {CORPUS} is not present")
    assert len([m for m in MIGRATIONS if m[0] == "veomni"]) >= 20
    assert len([m for m in MIGRATIONS if m[0] == "cerebras"]) >= 70
    assert len([m for m in MIGRATIONS if m[0] == "neox"]) >= 50
    comments = sum(sum(comment_texts(p.read_text()).values()) for _, _, p in MIGRATIONS)
    assert comments > 1000  # the count test above is not vacuous


DEEPSPEED = corpus_files("deepspeed", "*.json")


@pytest.mark.parametrize(
    "path",
    DEEPSPEED or [pytest.param(None, marks=pytest.mark.skip(reason=f"shared corpus {CORPUS} is not present"))],
    ids=_id,
)
def test_deepspeed_json_loads_to_the_plain_document_and_is_untouched_when_unchanged(path: Path) -> None:
    try:
        result = translate(path, "deepspeed", "deepspeed")
    except InputError as exc:  # the templates with shell placeholders are not JSON
        pytest.skip(f"deepspeed2deepspeed refuses {path.name}: {exc}")
    source = path.read_text(encoding="utf-8")
    target = dict(result.config)
    rewrite = preserve(source, target, moves_from_report(result.report), "json", plain=result.dump)
    assert rewrite.preserved, rewrite.note
    assert strictly_equal(json.loads(rewrite.text), target)
    if strictly_equal(json.loads(source), target):
        assert rewrite.text == source
