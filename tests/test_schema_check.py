"""The schemas compiled into plain Python checks (knowledge/schema.py, issue 26: jsonschema walked
each output's schema object by object) give jsonschema's verdict: a document they pass has no
jsonschema error, one they fail has one. jsonschema is the reference here: on every schema of
neoconv and of the test-only formats, on the outputs and inputs the project and the corpus have, on
documents hypothesis makes from each schema's own keys, types and enums, and on a schema written
to hold every keyword the compiler knows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import CORPUS, EXTRA_FORMATS, FIXTURES, ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neoconv.knowledge.schema import NotCompiled, Unsure, compile_schema, compiled_check, load_schema

SCHEMAS = sorted(p.name[: -len(".schema.json")] for p in (ROOT / "schemas").glob("*.schema.json"))
EXTRA = {
    name: json.loads(p.read_text())
    for name in EXTRA_FORMATS
    for p in (ROOT / "tests" / "extra_formats" / name).glob("*.schema.json")
}


_VALIDATORS: dict[int, Any] = {}


def jsonschema_valid(schema: dict[str, Any], document: Any) -> bool:
    validator = _VALIDATORS.get(id(schema))
    if validator is None:
        validator = _VALIDATORS[id(schema)] = jsonschema.validators.validator_for(schema)(schema)
    return not any(True for _ in validator.iter_errors(document))


def same_verdict(schema: dict[str, Any], document: Any) -> None:
    """The compiled check's verdict is jsonschema's (a value it leaves to jsonschema aside)."""
    check = compile_schema(schema)
    try:
        verdict = check(document)
    except Unsure:
        return  # (the wrapped check says False: jsonschema is asked)
    assert verdict == jsonschema_valid(schema, document), json.dumps(document, default=str)[:300]


def test_every_schema_of_the_formats_compiles() -> None:
    """neoconv's own format schemas and the test-only formats' use only keywords the compiler knows
    (a keyword it does not know would send every output to jsonschema, the slow way)."""
    for name in SCHEMAS:
        if name not in ("report",):  # (uniqueItems: the report's schema is the tests' to check)
            assert compiled_check(name) is not None, name
    for name, schema in EXTRA.items():
        compile_schema(schema)


def test_a_keyword_it_does_not_know_is_left_to_jsonschema() -> None:
    for schema in (
        {"type": "string", "minLength": 2},
        {"items": [{"type": "string"}]},
        {"$schema": "http://json-schema.org/draft-04/schema#"},
        {"$ref": "other.json#/x"},
        {"type": "colour"},
    ):
        with pytest.raises(NotCompiled):
            compile_schema(schema)
    assert compiled_check("report") is None  # uniqueItems


# a schema holding every keyword the compiler knows, and the documents that trip each one
ALL_KEYWORDS: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}, "n": {"type": "integer"}}}},
    "type": "object",
    "required": ["name"],
    "dependentRequired": {"lr": ["steps"]},
    "minProperties": 1,
    "maxProperties": 8,
    "additionalProperties": False,
    "patternProperties": {"^x_": {"type": "number"}},
    "properties": {
        "name": {"type": "string", "enum": ["a", "b", "1"]},
        "lr": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "steps": {"type": "integer", "minimum": 1, "exclusiveMaximum": 100},
        "flag": {"const": True},
        "level": {"enum": [0, 1.5, None, False]},
        "dims": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
        "either": {"anyOf": [{"type": "string"}, {"type": "array"}]},
        "one": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]},
        "both": {"allOf": [{"type": "number"}, {"not": {"const": 3}}]},
        "chain": {"$ref": "#/$defs/node"},
        "never": False,
        "anything": True,
        "block": {"type": "object", "additionalProperties": {"type": "boolean"}},
    },
}


@pytest.mark.parametrize(
    "document",
    [
        {"name": "a"},
        {"name": "c"},
        {"name": 1},
        {},
        {"name": "a", "lr": 0.5},
        {"name": "a", "lr": 0.5, "steps": 10},
        {"name": "a", "lr": 0, "steps": 10},
        {"name": "a", "lr": 1.0, "steps": 100},
        {"name": "a", "steps": 10.0},
        {"name": "a", "steps": 10.5},
        {"name": "a", "steps": True},
        {"name": "a", "flag": True},
        {"name": "a", "flag": 1},
        {"name": "a", "level": 0},
        {"name": "a", "level": False},
        {"name": "a", "level": 0.0},
        {"name": "a", "level": 1.5},
        {"name": "a", "level": None},
        {"name": "a", "level": True},
        {"name": "a", "dims": []},
        {"name": "a", "dims": [1, 2, 3, 4]},
        {"name": "a", "dims": [1, True]},
        {"name": "a", "dims": "1"},
        {"name": "a", "either": 3},
        {"name": "a", "either": ["x"]},
        {"name": "a", "one": 2},
        {"name": "a", "one": -2},
        {"name": "a", "one": 2.5},
        {"name": "a", "both": 3},
        {"name": "a", "both": 3.0},
        {"name": "a", "both": 4},
        {"name": "a", "chain": {"n": 1, "next": {"n": 2, "next": {"n": "3"}}}},
        {"name": "a", "chain": {"n": 1, "next": {"n": 2}}},
        {"name": "a", "never": None},
        {"name": "a", "anything": [{}]},
        {"name": "a", "other": 1},
        {"name": "a", "x_1": 1.5},
        {"name": "a", "x_1": "1.5"},
        {"name": "a", "block": {"p": True, "q": 1}},
        {"name": "a", "block": {"p": True}},
        dict.fromkeys("abcdefghij", 1),
        [],
        None,
    ],
)
def test_every_keyword_gives_jsonschemas_verdict(document: Any) -> None:
    check = compile_schema(ALL_KEYWORDS)
    assert check(document) == jsonschema_valid(ALL_KEYWORDS, document)


def _documents(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Documents made of the schema's own keys (nested blocks too), each value of its type, one of its
    enum, a boundary, or anything else: the checks meet the values they meet in outputs and their near misses."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.sampled_from([0.0, 1.0, 0.5, -1.5, 1e-8, 2.0**40]),
        st.text(max_size=4),
    )
    anything = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=6,
    )
    root = schema

    def resolve(node: Any) -> Any:
        for _ in range(5):  # a $ref to a $ref: followed a few steps (enough for our schemas)
            if isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
                target: Any = root
                for part in node["$ref"][2:].split("/"):
                    target = target.get(part, {}) if isinstance(target, dict) else {}
                node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return node

    def value_for(node: Any, depth: int) -> st.SearchStrategy[Any]:
        node = resolve(node)
        if not isinstance(node, dict):
            return anything
        options = [anything]
        if node.get("enum"):
            options.append(st.sampled_from(node["enum"]))
        types = node.get("type")
        types = [types] if isinstance(types, str) else list(types or [])
        for kind in types:
            options.append(
                {
                    "integer": st.integers(-2, 10**6),
                    "number": st.floats(-1e6, 1e6, allow_nan=False),
                    "string": st.text(max_size=6),
                    "boolean": st.booleans(),
                    "null": st.none(),
                    "array": st.lists(value_for(node.get("items", {}), depth + 1), max_size=3),
                    "object": block(node, depth + 1),
                }.get(kind, anything)
            )
        for bound in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if bound in node:
                options.append(st.sampled_from([node[bound], node[bound] - 1, node[bound] + 0.5]))
        for sub in node.get("anyOf", []) + node.get("oneOf", []) + node.get("allOf", []):
            if depth < 3:
                options.append(value_for(sub, depth + 1))
        return st.one_of(*options)

    def block(node: Any, depth: int) -> st.SearchStrategy[Any]:
        node = resolve(node)
        props = node.get("properties", {}) if isinstance(node, dict) else {}
        if depth > 3 or not props:
            return st.dictionaries(st.text(max_size=4), anything, max_size=3)
        names = sorted(props)
        return st.lists(st.sampled_from(names), max_size=8, unique=True).flatmap(
            lambda keys: st.fixed_dictionaries({k: value_for(props[k], depth) for k in keys})
        ) | st.dictionaries(st.sampled_from(names) | st.text(max_size=4), anything, max_size=4)

    return block(schema, 0)


ALL = [(name, load_schema(name)) for name in SCHEMAS if name != "report"] + sorted(EXTRA.items())


@pytest.mark.parametrize("name, schema", ALL, ids=[name for name, _ in ALL])
def test_documents_made_from_each_schema_get_jsonschemas_verdict(name: str, schema: dict[str, Any]) -> None:
    @settings(max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(_documents(schema))
    def run(document: Any) -> None:
        same_verdict(schema, document)

    run()


def _real_documents() -> list[tuple[str, Path]]:
    """The project's hand-written inputs and outputs, and the corpus's configs, by the schema they are of."""
    found: list[tuple[str, Path]] = []
    folders = {
        "neox": ["neox"],
        "cerebras": ["cerebras-legacy"],
        "cerebras-trainer": ["cerebras-trainer"],
        "deepspeed": ["deepspeed"],
        "veomni": ["veomni"],
    }
    for name, subs in folders.items():
        for sub in subs:
            for base in (FIXTURES / "inputs" / sub, CORPUS / sub):
                found += [(name, p) for p in sorted(base.rglob("*")) if p.suffix in (".yml", ".yaml", ".json")]
    for p in sorted((FIXTURES / "cases").rglob("expected.out.*")):
        dst = p.parent.parent.name.partition("2")[2]
        if dst in SCHEMAS and p.suffix in (".yaml", ".yml", ".json"):
            found.append((dst, p))
    return found


def test_real_configs_get_jsonschemas_verdict() -> None:
    checked = 0
    for name, path in _real_documents():
        try:
            document = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue
        same_verdict(load_schema(name), document)
        checked += 1
    assert checked >= 20  # (the fixtures alone hold that many)


DRAFT7: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "definitions": {"n": {"type": "integer"}},
    "properties": {"a": {"$ref": "#/definitions/n", "type": "string"}, "b": {"type": "integer"}},
}


@pytest.mark.parametrize("document", [{"a": 1}, {"a": "1"}, {"b": 1.0}, {"b": "x"}, {"a": 1.5}])
def test_a_draft_7_schema_gets_its_drafts_verdict(document: Any) -> None:
    """draft 7 (the test-only format's schema): a $ref's siblings are not checked."""
    assert compile_schema(DRAFT7)(document) == jsonschema_valid(DRAFT7, document)
