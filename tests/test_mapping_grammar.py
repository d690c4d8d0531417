"""The table grammar is defined once, by the meta-schema schemas/mapping.schema.json: every table
validates against it (with jsonschema), the loader's attribute set and checks come from it and
refuse what jsonschema refuses, and `extends:` merges a base table as documented."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from neoconv.core.errors import MappingTableError
from neoconv.knowledge.mapping import RULE_ATTRIBUTES, build_rule, grammar, load_table_file
from neoconv.knowledge.mapping.grammar import check_table

from conftest import ROOT

META = json.loads((ROOT / "schemas" / "mapping.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(META)
TABLES = Path(__file__).resolve().parent / "tables"
# files under mappings/ that formats read with their own grammar (each says so in its header)
NOT_RULE_TABLES = {"cerebras-layouts.yaml", "veomni-layouts.yaml", "hftrainer-dialects.yaml"}


def test_the_meta_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(META)


@pytest.mark.parametrize(
    "path",
    sorted((ROOT / "mappings").glob("*.yaml")) + sorted(TABLES.glob("*.yaml")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_every_table_matches_the_meta_schema(path: Path) -> None:
    raw = yaml.safe_load(path.read_text())
    if path.name in NOT_RULE_TABLES:
        assert "rules" not in raw and "Not " in path.read_text()[:600], f"{path.name}: say it is not a rule table"
        return
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(raw)]
    assert not errors, errors


def test_rule_attributes_come_from_the_meta_schema() -> None:
    assert RULE_ATTRIBUTES == set(META["$defs"]["rule"]["properties"])
    spec = grammar()
    assert "formula" in spec.transforms and "fixed" in spec.transforms and "product" not in spec.transforms
    assert ("field", "fields") in spec.exclusive and spec.needs["otherwise"] == ("flags",)


# the keywords the loader's checker reads (grammar.py); a keyword outside this set would be
# checked by jsonschema only, and the two readings of the meta-schema would part
UNDERSTOOD = {
    "$schema",
    "$id",
    "$defs",
    "$ref",
    "title",
    "description",
    "type",
    "required",
    "additionalProperties",
    "properties",
    "items",
    "minItems",
    "minProperties",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "const",
    "dependentRequired",
}


def _keywords(node: Any, inside_properties: bool = False) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if not inside_properties:
                found.add(key)
            found |= _keywords(value, key in ("properties", "$defs", "dependentRequired"))
    elif isinstance(node, list):
        for item in node:
            found |= _keywords(item)
    return found


def test_the_meta_schema_uses_only_keywords_the_loader_checks() -> None:
    assert _keywords(META) <= UNDERSTOOD, _keywords(META) - UNDERSTOOD


BAD_RULES = [
    ({"field": "model.hidden_size", "key": "x", "defualt": 1}, "unknown attributes"),
    (
        {"field": "model.hidden_size", "fields": ["model.hidden_size"], "key": "x"},
        "give either field or fields, not both",
    ),
    ({"field": "model.hidden_size", "key": "x", "scale": 2, "invert": True}, "choose one transform"),
    ({"field": "model.hidden_size", "key": "x", "always": "yes"}, "always: must be boolean"),
    ({"field": "model.hidden_size", "key": "x", "case_insensitive": True}, "case_insensitive needs enum"),
    ({"field": "optim.eps", "key": "eps", "fixed": 1e-8, "fixed_reason": "r"}, "give either fixed or key, not both"),
    ({"field": "optim.eps", "fixed": 1e-8, "default": 1e-8, "fixed_reason": "r"}, "give either fixed or default"),
    ({"field": "precision.dtype", "flags": {}}, "flags: needs at least 1 entries"),
    ({"field": "precision.dtype", "flags": {"a": "fp16"}, "key": "a"}, "give either flags or key, not both"),
    ({"field": "optim.betas", "list": ["beta1"]}, "list: needs at least 2 items"),
    ({"field": "batch.global", "key": "tb", "product": ["batch.micro"]}, "product: needs at least 2 items"),
    ({"field": "batch.global", "key": "tb", "fill": {"batch.micro": 1}}, "fill needs product"),
    ({"field": "model.norm", "key": "n", "pick": {"model.norm": "value"}}, "pick needs fields and key"),
    ({"field": "model.hidden_size", "key": "x", "invert": False}, "invert: must be true"),
    ({"field": "model.hidden_size", "key": "x", "also": ["a", 3]}, "also: item 3: must be string"),
    (
        {"field": "optim.eps", "key": "eps", "off_value": 0, "formula": "x"},
        "give either off_value or formula, not both",
    ),
    (
        {"field": "optim.eps", "key": "eps", "read_when": {"optim.type": "adam"}, "enum": {"a": 1}},
        "give either read_when or enum, not both",
    ),
    ({"field": "model.seq_length", "read_only": "r"}, "read_only needs key"),
    ({"field": "precision.loss_scale", "key": "l", "values": {}}, "values: needs at least 1 entries"),
    (
        {"field": "model.embedding_dropout", "key": "e", "same_as": {"field": "model.hidden_dropout", "reason": "r"}},
        "give either same_as or key, not both",
    ),
    (
        {"field": "precision.loss_scale", "key": "l", "values": {0: "dynamic"}, "scale": 2},
        "give either values or scale",
    ),
    ({"field": "optim.grad_clip", "key": "c", "omit": 0, "formula": "x"}, "give either omit or formula, not both"),
    ({"field": "optim.grad_clip", "omit": 0}, "omit needs key"),
    (
        {"field": "model.attention_dropout", "key": "a", "default_from": "model.hidden_dropout", "formula": "x"},
        "give either default_from or formula, not both",
    ),
    ({"field": "model.attention_dropout", "default_by": {"model.family": {"gptj": 0.1}}}, "default_by needs key"),
    ({"field": "optim.grad_clip", "key": "c", "warn_values": {}}, "warn_values: needs at least 1 entries"),
    (
        {"field": "precision.initial_loss_scale", "key": "p", "exponent_of": 2, "scale": 2},
        "give either exponent_of or scale",
    ),
    ({"field": "precision.initial_loss_scale", "key": "p", "exponent_of": "two"}, "exponent_of: must be integer"),
]


@pytest.mark.parametrize("raw,message", BAD_RULES, ids=[m for _, m in BAD_RULES])
def test_the_loader_and_jsonschema_refuse_the_same_rules(raw: dict[str, Any], message: str) -> None:
    table = {"format": "t", "rules": [raw]}
    assert list(VALIDATOR.iter_errors(table)), "jsonschema accepts it"
    with pytest.raises(MappingTableError, match=message):
        build_rule("t.yaml", 0, raw)


SEMANTIC = [
    (
        {"field": "batch.global", "key": "tb", "product": ["batch.micro", "batch.macro"]},
        "unknown canonical field 'batch.macro' in product",
    ),
    (
        {"field": "batch.global", "key": "tb", "product": ["batch.micro", "batch.grad_accum"], "fill": {"optim.lr": 1}},
        "fill names factors of the product",
    ),
    (
        {"fields": ["batch.global", "batch.micro"], "key": "tb", "product": ["batch.micro", "batch.grad_accum"]},
        "a product rule maps one field",
    ),
    (
        {"fields": ["model.norm", "model.norm_bias"], "key": "n", "pick": {"model.norm": {"a": "layernorm"}}},
        "pick gives each of the rule's fields",
    ),
    (
        {
            "fields": ["model.norm", "model.norm_bias"],
            "key": "n",
            "pick": {"model.norm": {"a": "layernorm", "b": "rmsnorm"}, "model.norm_bias": {"b": False, "a": True}},
        },
        "every pick mapping lists the same framework values",
    ),
    ({"field": "optim.eps", "fixed": 1e-8}, "fixed needs fixed_reason"),
    ({"field": "optim.eps", "key": "e", "read_when": {"optim.typo": "adam"}}, "unknown canonical field in read_when"),
    (
        {"fields": ["optim.eps", "optim.lr"], "key": "e", "off_value": 0},
        "off_value modifies a rename: one key, one field",
    ),
    ({"field": "optim.eps", "key": "e", "also": ["f"], "read_only": "r"}, "read_only modifies a rename"),
    (
        {"field": "model.embedding_dropout", "same_as": {"field": "model.hiden_dropout", "reason": "r"}},
        "same_as names one known canonical field",
    ),
    ({"field": "precision.initial_loss_scale", "key": "p", "exponent_of": 1}, "exponent_of is a base of 2 or more"),
    (
        {"field": "precision.initial_loss_scale", "key": "p", "exponent_of": 2, "values": {0: 1.0}},
        "exponent_of is a base of 2 or more, on a rename without values",
    ),
    ({"fields": ["optim.grad_clip", "optim.lr"], "key": "c", "omit": 0}, "omit modifies a rename: one key, one field"),
    (
        {"field": "model.attention_dropout", "key": "a", "default_from": "model.hiden_dropout"},
        "default_by and default_from name known canonical fields",
    ),
    (
        {"field": "model.attention_dropout", "key": "a", "default_by": {"model.famly": {"gptj": 0.1}}},
        "default_by and default_from name known canonical fields",
    ),
    (
        {"field": "model.attention_dropout", "key": "a", "default_from": "model.hidden_dropout", "default": 0.1},
        "an absent key's value comes from default_by / default_from, or from default or omit",
    ),
    (
        {"field": "parallel.zero_stage", "key": "s", "enum": {0: 0}, "types": {"dict": {"error": "e"}}},
        "types names null or list",
    ),
    (
        {
            "field": "optim.grad_clip",
            "key": "c",
            "also": ["o"],
            "overridden_by": {"key": "o", "values": {1: 1.0}, "as_is": True},
        },
        r"overridden_by gives values \(what its key's values decide\) or as_is",
    ),
    (
        {"field": "optim.grad_clip", "key": "c", "also": ["o"], "overridden_by": {"key": "o"}},
        "overridden_by gives values",
    ),
    (
        {"field": "parallel.zero_stage", "key": "s", "enum": {0: 0}, "types": {"null": {"error": "e"}}},
        "types' null needs the rule's default",
    ),
    (
        {
            "field": "parallel.zero_stage",
            "key": "s",
            "enum": {0: 0},
            "types": {"list": {"error": "e", "extension": "x"}},
        },
        "each of types is {error: message} or {extension: reason}, not both",
    ),
]


@pytest.mark.parametrize("raw,message", SEMANTIC, ids=[m for _, m in SEMANTIC])
def test_what_needs_the_catalogue_is_refused_by_the_loader(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(MappingTableError, match=message):
        build_rule("t.yaml", 0, raw)


def test_table_level_entries_are_checked() -> None:
    with pytest.raises(MappingTableError, match=r"unknown top-level entries \['rulez'\]"):
        check_table("t.yaml", {"format": "t", "rules": [], "rulez": []})
    with pytest.raises(MappingTableError, match="lenient_types: must be boolean"):
        check_table("t.yaml", {"format": "t", "rules": [], "lenient_types": "yes"})
    with pytest.raises(MappingTableError, match="needs `format: <id>` and a `rules:` list"):
        check_table("t.yaml", {"format": "t", "rules": {}})


# ---- extends ---------------------------------------------------------------------------------


def test_a_table_extends_its_base(tmp_path: Path) -> None:
    tiny = load_table_file(TABLES / "tiny.yaml")
    assert tiny.title == "Tiny" and tiny.versions == ("current",)  # the base's versions, its own title
    layers = tiny.rules_for_field("model.num_layers")
    assert [r.key for r in layers] == ["n_layers"] and layers[0].default == 12  # replaced
    assert [r.fields[0] for r in tiny.rules[:2]] == ["model.hidden_size", "model.num_layers"]  # in the base's place
    assert tiny.rules_for_field("optim.eps") == [] and "optim.eps" in tiny.absent  # dropped by `absent`
    assert tiny.rules_for_field("parallel.data_parallel_size")[0].note.startswith("the world over")  # inherited
    assert tiny.rules[-1].key == "tp"  # its own new rules follow the base's
    assert tiny.unsupported == {"seed_of_the_launcher": "a launcher setting"}
    assert tiny.absent["parallel.world_size"] == "taken from the launcher"
    order = [r.label for r in tiny.read_order]
    assert order.index("parallel.data_parallel_size") > order.index("tp")  # a formula after its `with` fields


def test_extends_errors_name_the_table(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("format: a\nextends: nowhere\nrules: []\n")
    with pytest.raises(MappingTableError, match="a.yaml: extends 'nowhere', but there is no nowhere.yaml beside it"):
        load_table_file(tmp_path / "a.yaml")
    (tmp_path / "b.yaml").write_text("format: b\nextends: b\nrules: []\n")
    with pytest.raises(MappingTableError, match="b.yaml: a table cannot extend itself"):
        load_table_file(tmp_path / "b.yaml")
    shutil.copy(TABLES / "base.yaml", tmp_path / "base.yaml")
    (tmp_path / "c.yaml").write_text("format: c\nextends: base\nrules:\n  - {field: optim.lr, key: hidden_size}\n")
    with pytest.raises(MappingTableError, match="key 'hidden_size' is claimed by two rules"):
        load_table_file(tmp_path / "c.yaml")


def test_the_docs_grammar_names_every_attribute() -> None:
    section = (ROOT / "docs" / "table-grammar.md").read_text()
    named = set(re.findall(r"`([a-z_]+)", section))
    assert set(META["properties"]) - named == set()
    assert set(META["$defs"]["rule"]["properties"]) - named == set()
