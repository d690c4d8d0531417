"""Fuzz / property tests over the loaders, the readers and the CLI (issue 7).

Only clean outcomes are allowed: a result, or a NeoconvError (the CLI: exit 0, 1 or 2 with no
traceback and no "internal error" line). Example counts are small and the runs derandomized so CI
is fast and repeatable (about 250 examples in all); set NEOCONV_FUZZ_EXAMPLES=5000 to search
harder locally (then with fresh random seeds).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import cli_runner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neoconv.api import translate
from neoconv.cli import main
from neoconv.core.errors import NeoconvError
from neoconv.knowledge.registry import FORMATS
from neoconv.io.documents import dump_yaml, flatten, parse_json, parse_yaml, read_text, unflatten
from neoconv.knowledge.schema import _types_of, schema_index

SCALE = int(os.environ.get("NEOCONV_FUZZ_EXAMPLES", "0"))


def budget(n: int) -> Any:
    """Settings for one property: n examples in CI (repeatable), SCALE examples when asked for."""
    return settings(
        max_examples=SCALE or n,
        deadline=None,
        derandomize=not SCALE,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


BASE_NEOX: dict[str, Any] = {
    "num_layers": 2,
    "hidden_size": 64,
    "num_attention_heads": 4,
    "seq_length": 128,
    "max_position_embeddings": 128,
    "pos_emb": "rotary",
}

# ---- strategies ------------------------------------------------------------------------------

# Pieces of YAML syntax (and traps: tags, anchors, merge keys, odd line breaks, a BOM) glued at random.
SYNTAX = list(":-[]{},&*!|>'\"#%@` \n\t?~.0123456789abex_") + [
    "<<",
    "!!",
    "---",
    "...",
    "\\",
    "\u2028",
    "\x85",
    "\ufeff",
    "&a ",
    "*a",
    "!!python/object/apply:os.system",
    "!!binary",
    "!!set",
    "0x1F",
    "0o7",
    ".nan",
    "-.inf",
    "1:20",
    "2024-02-30",
    "yes",
    "~",
    "? ",
    "'''",
]
yaml_soup = st.lists(st.sampled_from(SYNTAX) | st.characters(blacklist_categories=("Cs",)), max_size=80).map("".join)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=10),
    st.sampled_from(
        ["big", "true", "no", "1e-3", "1.0e_5", "", "Adam", "cosine", "rmsnorm", "swiglu", "bf16", "mamba"]
    ),
)
documents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
# what a library caller can hand over: numbers past the float range, keys that are not text, tuples, sets, objects
wild_scalars = scalars | st.sampled_from([10**400, -(10**309), 2**1024, 1e308, float("inf")]) | st.builds(object)
wild_keys = st.text(max_size=8) | st.integers(-3, 3) | st.floats(allow_nan=True) | st.none() | st.booleans()
wild_documents = st.recursive(
    wild_scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(wild_keys, inner, max_size=4)
        | st.frozensets(st.integers(), max_size=2)
    ),
    max_leaves=12,
)


def _typed_values(fmt: str) -> dict[str, st.SearchStrategy[Any]]:
    """For every key the format's schema knows: values of the right type, with edge cases, or
    anything at all, so the engine and the formulas see both plausible and absurd input."""
    index = schema_index(fmt)
    found: dict[str, st.SearchStrategy[Any]] = {}
    for key in index.all_keys():
        node = index.node(key) or {}
        types = _types_of(node)
        options: list[st.SearchStrategy[Any]] = [documents]
        if "enum" in node:
            options.append(st.sampled_from(node["enum"]))
        if "integer" in types:
            options.append(st.integers(-3, 3) | st.sampled_from([64, 4096, 2**31, 10**30]))
        if "number" in types:
            options.append(st.floats(-10.0, 1e6, allow_nan=False) | st.sampled_from([0.0, 1e-8, 0.5, 1.0, 3e-4]))
        if "boolean" in types:
            options.append(st.booleans())
        if "array" in types:
            options.append(st.lists(st.integers(0, 4) | st.floats(0, 1) | st.just([["global"], 2]), max_size=3))
        found[key] = st.one_of(options)
    return found


WRITABLE = sorted(name for name, spec in FORMATS.items() if spec.can_write)
NEOX_VALUES = _typed_values("neox")
CEREBRAS_VALUES = _typed_values("cerebras")


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any], values: dict[str, st.SearchStrategy[Any]]) -> dict[str, Any]:
    """A real-looking config with a few keys set to drawn values (or the base dropped entirely)."""
    leaves = flatten(base) if draw(st.booleans()) else {}
    for key in draw(st.lists(st.sampled_from(sorted(values)), max_size=8, unique=True)):
        leaves = {k: v for k, v in leaves.items() if not (k.startswith(key + ".") or key.startswith(k + "."))}
        leaves[key] = draw(values[key])
    return unflatten(leaves)


def _cerebras_base(tmp: Path) -> dict[str, Any]:
    src = tmp / "base.yml"
    src.write_text(dump_yaml(BASE_NEOX))
    return translate(str(src), "neox", "cerebras", set_values={"model.vocab_size": 50304, "batch.global": 8}).config


# ---- the loaders -----------------------------------------------------------------------------


def _clean_parse(text: str, parse: Any) -> None:
    try:
        data = parse(text, "fuzz.yml")
    except NeoconvError as exc:
        assert exc.file == "fuzz.yml"
        assert "\n" not in exc.message
        return
    assert isinstance(data, dict) and all(isinstance(k, str) for k in data)
    dump_yaml(data)
    try:
        flatten(data)  # what every reader's result goes through next
    except NeoconvError:
        pass  # e.g. a key with an empty part: refused there, with the reader's file attached


@budget(60)
@given(yaml_soup)
def test_parse_yaml_on_syntax_soup(text: str) -> None:
    _clean_parse(text, parse_yaml)


@budget(30)
@given(
    documents,
    st.sampled_from(["yaml", "json"]),
    st.integers(0, 200),
    st.sampled_from(["", "x", "\n", ": ", "&a ", "*a", "{", "]"]),
)
def test_parse_yaml_and_json_on_damaged_documents(doc: Any, how: str, where: int, damage: str) -> None:
    text = json.dumps(doc) if how == "json" else yaml.safe_dump(doc, allow_unicode=True)
    where = where % (len(text) + 1)
    text = text[:where] + damage + text[where:]
    _clean_parse(text, parse_yaml)
    _clean_parse(text, parse_json)


@budget(30)
@given(st.binary(max_size=300))
def test_read_text_and_parse_on_random_bytes(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("bytes") / "b.yml"
    path.write_bytes(data)
    try:
        text = read_text(path)
    except NeoconvError as exc:
        assert exc.file == str(path)
        return
    _clean_parse(text, parse_yaml)


# ---- the readers and the engine ------------------------------------------------------------------


def _clean_translation(path: Path, src: str, dst: str) -> None:
    try:
        result = translate(str(path), src, dst, world_size=8)
    except NeoconvError as exc:
        assert exc.file is None or exc.file == str(path), exc.file
        return
    result.dump()
    json.dumps(result.report.to_json())
    result.report.render_table(verbose=True)


@budget(40)
@given(st.data(), st.sampled_from(WRITABLE))
def test_neox_reader_and_engine_on_mutated_configs(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, dst: str
) -> None:
    config = data.draw(mutated(BASE_NEOX, NEOX_VALUES))
    path = tmp_path_factory.mktemp("neox") / "c.yml"
    path.write_text(dump_yaml(config) if config else "{}\n")
    _clean_translation(path, "neox", dst)


@budget(25)
@given(st.data(), st.sampled_from(WRITABLE))
def test_cerebras_reader_and_engine_on_mutated_configs(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, dst: str
) -> None:
    tmp = tmp_path_factory.mktemp("cerebras")
    config = data.draw(mutated(_cerebras_base(tmp), CEREBRAS_VALUES))
    path = tmp / "params.yaml"
    path.write_text(dump_yaml(config) if config else "{}\n")
    _clean_translation(path, "cerebras", dst)


# ---- the CLI -----------------------------------------------------------------------------------


def _clean_cli(path: Path, out: Path, extra: list[str] = (), dst: str = "cerebras") -> None:  # type: ignore[assignment]
    runner = cli_runner()
    result = runner.invoke(main, [f"neox2{dst}", str(path), "-o", str(out), "--report", str(out) + ".json", *extra])
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stderr + result.stdout
    assert "internal error" not in result.stderr, result.stderr
    if result.exit_code == 2:
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert not out.exists() and not Path(str(out) + ".json").exists()
    else:
        assert out.exists() and Path(str(out) + ".json").exists()
    leftovers = [p.name for p in out.parent.iterdir() if p.name.endswith(".tmp")]
    assert not leftovers


@budget(30)
@given(st.binary(max_size=200) | yaml_soup.map(lambda t: t.encode("utf-8")))
def test_cli_on_random_input(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "in.yml").write_bytes(data)
    _clean_cli(tmp / "in.yml", tmp / "out.yaml")


@budget(35)
@given(st.data(), st.lists(st.sampled_from(["--strict", "-q", "-v", "--set", "--world-size"]), max_size=3, unique=True))
def test_cli_on_mutated_configs(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, flags: list[str]
) -> None:
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "in.yml").write_text(dump_yaml(data.draw(mutated(BASE_NEOX, NEOX_VALUES))) or "{}\n")
    extra: list[str] = []
    for flag in flags:
        if flag == "--set":
            extra += [
                "--set",
                data.draw(st.sampled_from(["model.vocab_size", "batch.global", "optim.betas", "model.hidden_size"]))
                + "="
                + data.draw(yaml_soup),
            ]
        elif flag == "--world-size":
            extra += ["--world-size", str(data.draw(st.integers(1, 4096)))]
        else:
            extra.append(flag)
    _clean_cli(tmp / "in.yml", tmp / "out.yaml", extra, data.draw(st.sampled_from(WRITABLE)))


# ---- the library: mappings and documents built in Python ------------------------------------------


@budget(40)
@given(
    st.sampled_from(sorted(FORMATS)),
    st.sampled_from(WRITABLE),
    st.dictionaries(st.sampled_from(sorted(BASE_NEOX)) | st.text(max_size=8), wild_documents, max_size=6),
)
def test_translate_of_any_python_mapping_is_a_result_or_a_neoconv_error(
    src: str, dst: str, config: dict[str, Any]
) -> None:
    try:
        result = translate({**BASE_NEOX, **config} if src == "neox" else config, src, dst)
    except NeoconvError as exc:
        assert "\n" not in str(exc)
        return
    text = result.dump()
    if FORMATS[dst].suffix == ".json":
        json.loads(text, parse_constant=_refuse)
    result.report.render_table(verbose=True)
    json.dumps(result.report.to_json(), allow_nan=False)


@budget(40)
@given(st.sampled_from(WRITABLE), st.dictionaries(wild_keys, wild_documents, max_size=5))
def test_dump_of_any_python_mapping_is_text_or_a_neoconv_error(fmt: str, document: dict[Any, Any]) -> None:
    from neoconv import dump

    try:
        text = dump(document, fmt)
    except NeoconvError:
        return
    if FORMATS[fmt].suffix == ".json":
        json.loads(text, parse_constant=_refuse)
    else:
        assert "!!" not in text  # no YAML tag: a set or a tuple would need one
        yaml.safe_load(text)


def _refuse(word: str) -> None:
    raise AssertionError(f"JSON output holds {word}")
