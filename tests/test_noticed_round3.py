"""Defects noticed in round three (issues 31/32): a renamed key's read range, the status of a value a
rule with several spellings carries unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES, cli_runner

from neoconv.cli import main
from neoconv.knowledge.schema import load_history


def test_a_renamed_key_is_read_only_up_to_its_rename() -> None:
    # Model Zoo 2.1.0 renamed use_bfloat16 to fp16_type and looks for the old key until 2.3.1 only to
    # refuse it: those releases do not read it
    history = load_history("cerebras")
    assert history is not None
    assert history.runs("model.use_bfloat16") == "1.7.0..2.0.3"
    assert history.refuses("model.use_bfloat16", "2.3.1") and not history.refuses("model.use_bfloat16", "2.0.3")
    assert not history.refuses("model.use_bfloat16", "2.4.0")  # no longer looked for at all
    assert history.why_not("model.use_bfloat16", "2.3.1") == (
        "Cerebras Model Zoo 2.3.1 refuses model.use_bfloat16 (read by 1.7.0..2.0.3); renamed to model.fp16_type in 2.1.0"
    )


def test_validate_of_a_trainer_file_names_the_releases_that_read_the_old_key() -> None:
    path = FIXTURES / "inputs" / "cerebras" / "llama-trainer.yaml"
    result = cli_runner().invoke(main, ["validate", "--version", "2.3", str(path)])
    assert result.exit_code == 1
    line = next(line for line in result.stdout.splitlines() if "use_bfloat16" in line)
    assert "2.3.1 refuses model.use_bfloat16 (read by 1.7.0..2.0.3)" in line
    assert "read by 1.7.0..2.3.1" not in result.stdout


def _entries(tmp_path: Path, pair: str, source: Path) -> dict[str, dict]:
    report = tmp_path / "report.json"
    result = cli_runner().invoke(main, [pair, str(source), "-o", str(tmp_path / "out"), "--report", str(report)])
    assert result.exit_code in (0, 1), result.stderr
    return {e["source_key"]: e for e in json.loads(report.read_text())["entries"] if e.get("source_key")}


@pytest.mark.parametrize("pair", ["hf2neox", "hf2veomni"])
@pytest.mark.parametrize("key", ["num_key_value_heads", "initializer_range"])
def test_a_value_carried_unchanged_by_a_rule_of_several_spellings_is_exact(tmp_path: Path, pair: str, key: str) -> None:
    source = FIXTURES / "inputs" / "hf" / "llama-3.1-8b.json"
    entry = _entries(tmp_path, pair, source)[key]
    assert (entry["status"], entry["kind"]) == ("exact", "renamed")


def test_a_value_a_rule_of_several_spellings_changes_stays_converted(tmp_path: Path) -> None:
    # Megatron writes num_key_value_heads as two options (--group-query-attention --num-query-groups 8)
    source = FIXTURES / "inputs" / "hf" / "llama-3.1-8b.json"
    assert _entries(tmp_path, "hf2megatron", source)["num_key_value_heads"]["status"] == "converted"
