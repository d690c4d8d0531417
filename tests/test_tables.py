"""Meta-tests over every mapping table, the catalogue and the generated schemas."""

from __future__ import annotations


import pytest
import yaml

from neoconv.knowledge.catalogue import catalogue
from neoconv.core.errors import MappingTableError
from neoconv.knowledge.mapping import _build_rule, load_table
from neoconv.knowledge.registry import FORMATS
from neoconv.knowledge.schema import schema_index

from conftest import ROOT


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_table_loads_and_every_rule_is_sound(fmt: str) -> None:
    table = load_table(fmt)
    assert table.rules, f"mappings/{fmt}.yaml has no rules"
    fields = catalogue()
    for rule in table.rules:
        for name in rule.fields:
            assert name in fields
        if (
            rule.key is None and not rule.is_const and not rule.formula and not rule.product
        ):  # (a product alone: a relation)
            assert rule.note, f"{fmt}: a rule without a key must say how the field is expressed (note:)"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_table_defaults_agree_with_the_format_schema(fmt: str) -> None:
    """A default in a mapping table must be the one the reference docs give (fix the table)."""
    index = schema_index(fmt)
    table = load_table(fmt)
    checked = 0
    for rule in table.rules:
        if not rule.key or not rule.has_default():
            continue
        node = index.node(rule.key)
        if node is None or "default" not in node or node["default"] is None:
            continue
        assert node["default"] == rule.default_for(), (
            f"{fmt}:{rule.key}: table {rule.default_for()!r} vs docs {node['default']!r}"
        )
        checked += 1
    # hf: each class's defaults are data of the class (mappings/hf.yaml data.model_types.*.defaults),
    # checked against transformers' own config classes by the oracle tier (tests/test_hf_oracle.py)
    assert checked >= 3 or fmt == "hf"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_mapped_key_is_a_known_key(fmt: str) -> None:
    from neoconv.knowledge.schema import release_index

    table = load_table(fmt)
    index = release_index(fmt, table.versions[0], table.title)  # the schema and every release's keys
    for rule in table.rules:
        for key in rule.keys:
            if fmt == "veomni" and rule.layouts == ("scoped",):  # a field only the model-scoped releases have
                from neoconv.formats.veomni.fields import fields

                key = fields().to_scoped(key, "#1125")
            assert index.known(key) or index.node(key) is not None, f"{fmt}: {key} is read by no release"


def test_table_typos_are_errors() -> None:
    with pytest.raises(MappingTableError, match="unknown canonical field"):
        _build_rule("t.yaml", 0, {"field": "model.hiden_size", "key": "x"})
    with pytest.raises(MappingTableError, match="unknown attributes"):
        _build_rule("t.yaml", 0, {"field": "model.hidden_size", "key": "x", "defualt": 1})
    with pytest.raises(MappingTableError, match="unknown formula"):
        _build_rule("t.yaml", 0, {"field": "model.hidden_size", "key": "x", "formula": "nope"})
    with pytest.raises(MappingTableError, match="reads"):
        _build_rule("t.yaml", 0, {"field": "model.rotary_fraction", "key": "x", "formula": "cerebras.rotary_dim"})


def test_catalogue_entries_have_meaning() -> None:
    for name, spec in catalogue().items():
        assert "." in name and spec.doc and len(spec.doc) > 10


def test_mapping_yaml_is_plain_yaml() -> None:
    for path in (ROOT / "mappings").glob("*.yaml"):
        assert isinstance(yaml.safe_load(path.read_text()), dict)


def test_generated_mapping_reference_is_fresh() -> None:
    from neoconv.services.docs import render

    current = (ROOT / "docs" / "mappings.md").read_text(encoding="utf-8")
    assert current == render(), "docs/mappings.md is stale: run `neoconv docs -o docs/mappings.md`"
