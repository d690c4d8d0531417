"""`neoconv validate FILE`: one line per problem (schema types and enums, unknown keys, relations,
keys a release does not read), exit 0 valid / 1 problems / 2 unreadable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neoconv.cli import main
from neoconv.services.validate_file import validate_file

from conftest import CORPUS, FIXTURES


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


LLAMA = FIXTURES / "inputs" / "neox" / "llama-1b.yml"


def test_a_valid_config_exits_0_saying_so(runner) -> None:
    result = runner.invoke(main, ["validate", str(LLAMA)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and "valid neox config (release 2026-05-19)" in result.stderr


def test_a_float_the_frameworks_yaml_reads_as_text_is_a_problem_with_the_fix(runner, pythia160m: Path) -> None:
    result = runner.invoke(main, ["validate", str(pythia160m)])
    assert result.exit_code == 1
    assert result.stdout == (
        f"{pythia160m}:25: optimizer.params.eps: '1e-8' is text, expected a number (YAML 1.1, as the "
        "framework loads it, reads 1e-8 as text: write 1.0e-8)\n"
    )


def test_every_problem_is_one_line_with_file_line_and_key(runner, tmp_path: Path) -> None:
    bad = _write(
        tmp_path,
        "bad.yml",
        "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\n"
        "seq_length: 128\nactivation: gelux\nmax_position_embeddings: x\nnum_layerz: 3\n",
    )
    result = runner.invoke(main, ["validate", str(bad)])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{bad}:5: activation: 'gelux' is not a value it takes ('gelu', ")  # the schema's enum
    assert lines[1] == f"{bad}:6: max_position_embeddings: 'x' is text, expected an integer or null"
    assert lines[2] == f"{bad}:7: num_layerz: not a GPT-NeoX parameter; did you mean num_layers?"
    assert len(lines) == 3


def test_the_relations_every_framework_assumes_are_checked(tmp_path: Path) -> None:
    bad = _write(tmp_path, "heads.yml", "num_layers: 2\nhidden_size: 100\nnum_attention_heads: 8\nseq_length: 128\n")
    result = validate_file(str(bad))
    assert [(p.line, p.key) for p in result.problems] == [(2, "hidden_size")]
    assert "100 is not divisible by num_attention_heads=8" in result.problems[0].message


def test_a_release_checks_the_keys_its_code_reads(tmp_path: Path) -> None:
    old = _write(
        tmp_path,
        "old.yml",
        "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\nsave_interval: 1000\n",
    )
    now = validate_file(str(old), "neox", version="current")
    assert [p.key for p in now.problems] == ["save_interval"]
    assert "renamed to checkpoint_factor in 2022-12-14" in now.problems[0].message
    assert validate_file(str(old), "neox", version="2022-12-06").valid  # NeoX still read it then


def test_unreadable_is_exit_2_and_other_files_are_still_checked(runner, tmp_path: Path, pythia160m: Path) -> None:
    broken = _write(tmp_path, "broken.yml", "num_layers: [1\n")
    result = runner.invoke(main, ["validate", str(broken)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "invalid YAML" in result.stderr
    bad = _write(tmp_path, "bad.yml", "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 1.5\n")
    result = runner.invoke(main, ["validate", str(broken), str(bad), str(pythia160m), "--format", "neox"])
    assert result.exit_code == 2  # the worst: a file that could not be read
    assert "invalid YAML" in result.stderr and f"{bad}:4: seq_length" in result.stdout


def test_unknown_release_and_json(runner, pythia160m: Path) -> None:
    result = runner.invoke(main, ["validate", str(LLAMA), "--version", "v9"])
    assert result.exit_code == 2 and "not a GPT-NeoX release; known: 2021-04-26" in result.stderr
    assert "v1.0 (= 2023-02-03)" in result.stderr
    result = runner.invoke(main, ["validate", str(LLAMA), "--json"])
    data = json.loads(result.stdout)
    assert data == [
        {"file": str(LLAMA), "format": "neox", "layout": None, "release": "2026-05-19", "valid": True, "problems": []}
    ]


@pytest.mark.parametrize(
    "path, fmt",
    [
        (FIXTURES / "inputs" / "cerebras" / "llama-1b-trainer.yaml", "cerebras"),
        (FIXTURES / "inputs" / "cerebras" / "gpt2-small-legacy.yaml", "cerebras"),
        (FIXTURES / "inputs" / "veomni" / "tinyllama-nested.yaml", "veomni"),
        (FIXTURES / "inputs" / "deepspeed" / "warmup-cosine-lr-zero2.json", "deepspeed"),
    ],
)
def test_our_fixtures_are_valid_configs_of_their_layout(path: Path, fmt: str) -> None:
    result = validate_file(str(path))
    assert result.format == fmt and result.valid, [p.render() for p in result.problems]


def test_a_trainer_layout_file_is_checked_against_the_trainer_schema_keys_as_written(tmp_path: Path) -> None:
    text = (FIXTURES / "inputs" / "cerebras" / "llama-1b-trainer.yaml").read_text()
    bad = _write(tmp_path, "t.yaml", text.replace("hidden_size:", "hiden_size:", 1))
    result = validate_file(str(bad))
    keys = [p.key for p in result.problems]
    assert any(k and k.startswith("trainer.") and k.endswith("hiden_size") for k in keys), keys


def test_corpus_files_that_are_fine_validate() -> None:
    path = CORPUS / "neox" / "pythia" / "160M.yml"
    if not path.is_file():
        pytest.skip(f"the shared corpus {CORPUS} is not present (it lives beside the checkout)")
    assert validate_file(str(path)).valid


def test_schema_problems_are_worded_by_neoconv_whatever_jsonschema_says() -> None:
    """jsonschema's own texts change between its releases: validate words each kind of problem itself."""
    from neoconv.services.validate import in_words

    class Error:  # what jsonschema hands over: the value, the rule, the rule's value
        def __init__(self, instance: object, validator: str, validator_value: object) -> None:
            self.instance, self.validator, self.validator_value = instance, validator, validator_value

    assert in_words(Error("1e-8", "type", "number")) == "'1e-8' is text, expected a number"
    assert in_words(Error(True, "type", ["integer", "null"])) == "true is a boolean, expected an integer or null"
    assert in_words(Error("gelux", "enum", ["gelu", None])) == "'gelux' is not a value it takes ('gelu', null)"
    assert in_words(Error(-1, "minimum", 0)) == "-1 must be at least 0"
    assert in_words(Error({"a": 1}, "required", ["a", "b", "c"])) == "needs the keys b, c"
    either = [{"required": ["name"]}, {"required": ["model_name"]}]  # Model Zoo 2.4+: model_name stands for name
    assert in_words(Error({"a": 1}, "anyOf", either)) == "needs the key name or model_name"
    assert in_words(Error([1], "minItems", 2)) == "a list of 1 items; it takes at least 2"


def test_a_value_the_releases_code_takes_is_valid_where_the_reference_docs_lag(tmp_path: Path) -> None:
    # NeoX's norm Literal gained non_parametric_layernorm on 2025-02-18; the reference docs the schema
    # comes from still list the older names: the code's Literal at the release decides
    config = tmp_path / "np.yml"
    config.write_text("num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nnorm: non_parametric_layernorm\n")
    assert validate_file(str(config), "neox", version="2026-05-19").valid
    before = validate_file(str(config), "neox", version="2024-09-09")
    assert [p.key for p in before.problems] == ["norm"]
