"""neoconv.io.yamlread builds plain data from parser events: it must give exactly what
yaml.safe_load gives (with the same parser: libyaml's when PyYAML has it) for every document
safe_load accepts and neoconv does not refuse on purpose."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neoconv.core.errors import InputError
from neoconv.io.yamlread import load

from conftest import CORPUS

SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str) -> Any:
    return yaml.load(text, Loader=SAFE)  # noqa: S506 - the safe loader, C or pure like neoconv's


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN and bool never equal to int (1 vs true matters in a config)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def corpus_yaml() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yml", ".yaml", ".json"))


@pytest.mark.parametrize("path", corpus_yaml() or [None], ids=lambda p: str(p.relative_to(CORPUS)) if p else "none")
def test_corpus_files_load_as_safe_load_does(path: Path | None) -> None:
    if path is None:
        pytest.skip(f"shared corpus {CORPUS} is not present (it lives beside the checkout)")
    text = path.read_text(encoding="utf-8")
    try:
        expected = safe_load(text)
    except yaml.YAMLError:
        with pytest.raises((yaml.YAMLError, InputError)):
            load(text)
        return
    try:
        got = load(text)
    except InputError as exc:  # refused on purpose: a duplicate key (safe_load keeps the last one) ...
        assert "duplicate key" in exc.message, exc.message
        got = load(text, duplicates=[])  # ... unless the caller collects them: then read as safe_load reads it
    assert same(got, expected)


SCALARS = [
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "n",
    "true",
    "False",
    "~",
    "null",
    "Null",
    "",
    "017",
    "0o17",
    "0x1F",
    "0b101",
    "1_000",
    "-1_000.5",
    "1:20",
    "1:20.5",
    "+12",
    "-0",
    ".inf",
    "-.Inf",
    ".NaN",
    "1e5",
    "1.0e+5",
    "1.5E-3",
    "6.",
    ".5",
    "0.",
    "1e-05",
    "12abc",
    "1.",
    "-2.5e+10",
    "1.5e3",
    "+0.5",
    "00",
    "0",
    "-0.0",
    "1_0.5",
    "9" * 30,
    "a: b",
    "- x",
    "'q'",
    '"dq"',
    "<<",
    "=",
    "2024-01-02",
    "2001-12-14t21:59:43.10-05:00",
]


@pytest.mark.parametrize("scalar", SCALARS)
def test_yaml11_scalars_resolve_as_safe_load(scalar: str) -> None:
    for text in (f"k: {scalar}\n", f"k: [{scalar}]\n", f"k: '{scalar}'\n", f"k: !!str {scalar}\n"):
        try:
            expected = safe_load(text)
        except yaml.YAMLError:
            with pytest.raises((yaml.YAMLError, InputError)):
                load(text)
            continue
        if any(hasattr(v, "isoformat") for v in _leaves(expected)):
            expected = yaml.load(text, Loader=yaml.BaseLoader)  # dates stay text in neoconv
        assert same(load(text), expected), text


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value]


# YAML 1.1's merge spec, as neoconv reads it (fixed expectations, not whatever PyYAML is installed:
# its releases differ in the order of merged keys): a key written in the mapping wins over a merged
# one, a mapping earlier in a merge list wins over a later one; merged keys come first, in list order.
MERGES = [
    ("base: &b {x: 1, y: 2}\nk:\n  <<: *b\n  y: 3\n", {"x": 1, "y": 3}),
    ("a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\nk:\n  <<: [*a, *b]\n  w: 0\n", {"x": 1, "y": 1, "z": 2, "w": 0}),
    ("a: &a {x: 1, <<: {q: 9}}\nk: {<<: *a, x: 5}\n", {"q": 9, "x": 5}),
    ("k: {=: 1}\n", {"=": 1}),
]


@pytest.mark.parametrize(("text", "merged"), MERGES)
def test_merge_keys_follow_the_yaml_merge_spec(text: str, merged: dict[str, Any]) -> None:
    got = load(text)["k"]
    assert got == merged
    assert list(got) == list(merged)  # the order is neoconv's own rule


def test_aliases_read_as_the_anchored_values() -> None:
    assert load("a: &a [1, 2]\nb: *a\nc: &s text\nd: *s\n") == {"a": [1, 2], "b": [1, 2], "c": "text", "d": "text"}


def test_a_second_merge_key_in_one_mapping_is_refused_with_its_line() -> None:
    with pytest.raises(InputError, match="given twice") as info:
        load("a: &a {x: 1}\nb: &b {x: 2}\nk:\n  <<: *a\n  <<: *b\n")
    assert info.value.line == 5


def test_aliases_share_one_object() -> None:
    data = load("a: &a {x: 1}\nb: *a\n")
    assert data["a"] is data["b"]


def test_settings_mode_refuses_non_text_top_level_keys() -> None:
    assert load("1: a\n") == {1: "a"}
    for text, shown in (("1: a\n", "int"), ("true: a\n", "bool"), ("2024-01-02: a\n", "timestamp"), ("~: a\n", "null")):
        with pytest.raises(InputError, match=f"is read as {shown}"):
            load(text, settings=True)


@pytest.mark.parametrize("text", ["a: <<\n", "- <<\n", "<<\n"])
def test_merge_marker_as_a_value_is_refused(text: str) -> None:
    with pytest.raises(yaml.YAMLError):
        safe_load(text)
    with pytest.raises(InputError, match="merge marker"):
        load(text)


def test_no_document_is_none_and_two_are_refused() -> None:
    assert load("# only a comment\n") is None
    with pytest.raises(InputError, match="one YAML document") as info:
        load("a: 1\n---\nb: 2\n")
    assert info.value.line == 2


scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(values, st.booleans())
def test_dumped_documents_read_back_as_safe_load(value: Any, flow: bool) -> None:
    text = yaml.safe_dump({"root": value, "again": value}, default_flow_style=flow, allow_unicode=True)
    assert same(load(text), safe_load(text))


def _composed_key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Key lines the slow way: PyYAML's node tree (mappings only, lists not descended)."""
    lines: dict[tuple[str, ...], int] = {}
    stack: list[tuple[Any, tuple[str, ...]]] = [(yaml.compose(text, Loader=SAFE), ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    here = path + (str(key_node.value),)
                    lines.setdefault(here, key_node.start_mark.line + 1)
                    stack.append((value_node, here))
    return lines


def test_key_lines_match_the_node_tree() -> None:
    texts = [
        "a: 1\nb:\n  c: 2\n  d: {e: 3}\nlist:\n- x: 1\n'quoted': 2\ntrain.lr: 3\n",
        "model:\n  config:\n    hidden_size: 8\n  name: x\ntrain:\n  lr: 0.1\n",
    ]
    texts += [
        p.read_text(encoding="utf-8") for p in corpus_yaml() if p.suffix in (".yml", ".yaml") and "veomni" in str(p)
    ]
    for text in texts:
        try:
            expected = _composed_key_lines(text)
        except yaml.YAMLError:
            continue
        lines: dict[tuple[str, ...], int] = {}
        try:
            load(text, key_lines=lines)
        except InputError:
            continue
        assert lines == expected


@pytest.mark.parametrize(
    "text,shown",
    [("a: !!seq {b: 1}\n", "!!seq does not fit a mapping"), ("a: !!map [1]\n", "!!map does not fit a list")],
)
def test_collection_tag_that_does_not_fit(text: str, shown: str) -> None:
    with pytest.raises(yaml.YAMLError):
        safe_load(text)
    with pytest.raises(InputError, match=shown):
        load(text)


def test_explicit_tag_that_does_not_fit_its_text() -> None:
    with pytest.raises(KeyError):  # PyYAML's own loader fails without saying where
        safe_load("k: !!bool maybe\n")
    with pytest.raises(InputError, match="cannot read 'maybe' as bool: not a YAML boolean") as info:
        load("a: 1\nk: !!bool maybe\n")
    assert info.value.line == 2
