"""The CLI through click's runner: output streams, report files, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from neoconv.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_translation_to_stdout_and_report(runner, pythia160m: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = runner.invoke(main, ["neox2cerebras", str(pythia160m), "--world-size", "8", "--report", str(report)])
    assert result.exit_code == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    assert config["model"]["rotary_dim"] == 16
    assert "neoconv:" in result.stderr and "missing" in result.stderr  # vocab size
    data = json.loads(report.read_text())
    assert data["summary"]["missing"] == 3  # vocab size, and the data Model Zoo needs (processor, folder)
    assert data["target"]["model_family"] == "gpt-neox"


def test_output_file_and_strict(runner, pythia160m: Path, tmp_path: Path) -> None:
    out = tmp_path / "params.yaml"
    result = runner.invoke(main, ["neox2cerebras", str(pythia160m), "-o", str(out), "--strict", "-q"])
    assert result.exit_code == 1  # missing vocab size / global batch, lossy init
    # -q: no report, but the one line that says why the exit code is 1
    assert (
        out.exists()
        and result.stdout == ""
        and result.stderr.startswith("neoconv: exit 1: ")
        and result.stderr.count("\n") == 1
    )
    result = runner.invoke(
        main, ["convert", "--from", "neox", "--to", "cerebras", str(pythia160m), "-o", str(out), "-q"]
    )
    assert result.exit_code == 0


def test_set_values_and_bad_set(runner, pythia160m: Path) -> None:
    result = runner.invoke(
        main, ["neox2cerebras", str(pythia160m), "--set", "model.vocab_size=50304", "--set", "batch.global=1024", "-q"]
    )
    assert result.exit_code == 0
    config = yaml.safe_load(result.stdout)
    assert config["model"]["vocab_size"] == 50304 and config["train_input"]["batch_size"] == 1024
    result = runner.invoke(main, ["neox2cerebras", str(pythia160m), "--set", "model.vocab=5"])
    assert result.exit_code == 2 and "did you mean model.vocab_size" in result.stderr
    result = runner.invoke(main, ["neox2cerebras", str(pythia160m), "--set", "model.vocab_size=big"])
    assert result.exit_code == 2 and "expected a number" in result.stderr


def test_bad_inputs_get_one_line_and_exit_2(runner, tmp_path: Path) -> None:
    cases = {
        "missing": (tmp_path / "nope.yml", "no such file"),
        "invalid": (tmp_path / "bad.yml", "invalid YAML"),
        "list": (tmp_path / "list.yml", "top level is a list"),
        "type": (tmp_path / "type.yml", "expected integer"),
    }
    (tmp_path / "bad.yml").write_text("num_layers: [1, 2\n")
    (tmp_path / "list.yml").write_text("- 1\n- 2\n")
    (tmp_path / "type.yml").write_text("num_layers: 2\nhidden_size: big\n")
    for name, (path, message) in cases.items():
        result = runner.invoke(main, ["neox2cerebras", str(path)])
        assert result.exit_code == 2, name
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0] and str(path) in lines[0], (name, result.stderr)
        assert "Traceback" not in result.stderr
    result = runner.invoke(main, ["neox2cerebras", str(tmp_path / "type.yml")])
    assert ":2:" in result.stderr  # the line of hidden_size


def test_merge_conflict_names_both_files(runner, tmp_path: Path) -> None:
    (tmp_path / "a.yml").write_text("tensorboard-dir: tb\nnum_layers: 2\n")
    (tmp_path / "b.yml").write_text("tensorboard_dir: other\n")
    result = runner.invoke(main, ["neox2cerebras", str(tmp_path / "a.yml"), str(tmp_path / "b.yml")])
    assert result.exit_code == 2
    assert "a.yml" in result.stderr and "b.yml" in result.stderr and "two files" in result.stderr


def test_refuses_to_overwrite_input(runner, pythia160m: Path, tmp_path: Path) -> None:
    copy = tmp_path / "in.yml"
    copy.write_text(pythia160m.read_text())
    result = runner.invoke(main, ["neox2cerebras", str(copy), "-o", str(copy)])
    assert result.exit_code == 2 and "input" in result.stderr
    assert copy.read_text() == pythia160m.read_text()
    result = runner.invoke(main, ["neox2cerebras", str(copy), "-o", str(tmp_path / "no" / "out.yaml")])
    assert result.exit_code == 2 and "does not exist" in result.stderr


def test_help_version_explain_formats(runner) -> None:
    result = runner.invoke(main, ["--help"])
    assert result.exit_code == 0 and "neox2cerebras" in result.stdout
    assert runner.invoke(main, ["--version"]).stdout.startswith("neoconv")
    result = runner.invoke(main, ["explain", "neox:rotary_pct"])
    assert result.exit_code == 0 and "model.rotary_fraction" in result.stdout and "model.rotary_dim" in result.stdout
    result = runner.invoke(main, ["explain", "model.hidden_dropout", "--json"])
    data = json.loads(result.stdout)
    assert data["formats"]["neox"][0]["default"] == 0.0
    # NeoX's own default until #1107 (2023-12-26), from the key history
    assert data["formats"]["neox"][0]["version_defaults"] == {"2021-04-26..2023-12-22": 0.1}
    result = runner.invoke(main, ["explain", "model.hiden_size"])
    assert result.exit_code == 2 and "did you mean model.hidden_size" in result.stderr
    result = runner.invoke(main, ["formats"])
    assert "cerebras" in result.stdout and "legacy" in result.stdout
    assert "1.6.0 ... 2.10.0 (23 releases); also 1.6, 1.7" in result.stdout


# NeoX's table names DeepSpeed's formulas for the fp16 and zero_optimization blocks it hands on
NEOX_TO_CEREBRAS = [
    "neoconv.formats.cerebras.formulas",
    "neoconv.formats.deepspeed.formulas",
    "neoconv.formats.neox.formulas",
    "neoconv.knowledge.formula",
]


@pytest.mark.parametrize(
    "args, formulas, schema",
    [
        (["--help"], [], []),
        # the report piped (rich is imported only to draw the table on a terminal); the output is validated
        # as the target release would (jsonschema), unless the check is skipped
        (["neox2cerebras", "fixtures/inputs/neox/pythia-160m.yml", "-o", "{out}"], NEOX_TO_CEREBRAS, ["jsonschema"]),
        (["neox2cerebras", "fixtures/inputs/neox/pythia-160m.yml", "-o", "{out}", "--no-verify"], NEOX_TO_CEREBRAS, []),
    ],
    ids=["help", "one translation and its report", "one translation, not checked"],
)
def test_start_up_imports_only_what_it_uses(
    args: list[str], formulas: list[str], schema: list[str], tmp_path: Path
) -> None:
    """--help and a single translation (its report piped) must not pay for deepdiff, rich, the HF
    tables or the formulas of formats they do not use; jsonschema only to validate the output."""
    argv = [a.replace("{out}", str(tmp_path / "out.yaml")) for a in args]
    code = (
        "import sys\nfrom neoconv.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('jsonschema', 'deepdiff', 'hypothesis', 'rich') if m in sys.modules))\n"
        "print(sorted(m for m in sys.modules if m.startswith('neoconv.') and m.endswith('formulas')"
        " or m == 'neoconv.knowledge.formula'))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True, timeout=120
    )
    assert run.stdout.splitlines()[-2:] == [repr(schema), repr(formulas)], run.stdout + run.stderr
