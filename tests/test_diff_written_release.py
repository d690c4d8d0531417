"""`neoconv diff SRC OUT --report R` reads OUT as the release the translation wrote it for (R's target), not
as the release its keys fit best: a Model Zoo 1.8 file migrated to 2.10.0's legacy layout keeps keys 2.10
does not read (each named in the report), and read by its keys alone it would be a 1.8 file, where
fp16_type is not read and mixed_precision means bfloat16 (Cerebras/modelzoo gpt3 params_gpt3_6p7b.yaml
at R_1.8: a float16 run reported as changed to bf16)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from conftest import cli_runner

from neoconv.cli import main

LEGACY_18 = """\
train_input:
    data_processor: "GptHDF5DataProcessor"
    data_dir: "./train"
    vocab_size: 50257
    max_sequence_length: 256
    batch_size: 8
model:
    hidden_size: 256
    position_embedding_type: "learned"
    max_position_embeddings: 256
    vocab_size: 50257
    num_hidden_layers: 2
    num_heads: 4
    filter_size: 1024
    nonlinearity: "gelu"
    mixed_precision: True
    attention_softmax_fp32: False
    use_bfloat16: False
    embedding_initializer: {name: "truncated_normal", mean: 0.0, std: 0.02, a: -0.04, b: 0.04}
optimizer:
    optimizer_type: "adamw"
    beta1: 0.9
    beta2: 0.95
    learning_rate: 6.0e-4
    loss_scaling_factor: "dynamic"
runconfig:
    max_steps: 100
    save_summary_steps: 1
    log_step_count_steps: 1
"""


def test_diff_reads_the_output_as_the_release_the_report_wrote_it_for(tmp_path: Path) -> None:
    src, out, report = tmp_path / "gpt3.yaml", tmp_path / "out.yaml", tmp_path / "r.json"
    src.write_text(LEGACY_18)
    runner = cli_runner()
    made = runner.invoke(
        main, ["cerebras2cerebras", str(src), "-o", str(out), "--report", str(report), "--layout", "legacy", "-q"]
    )
    assert made.exit_code == 0, made.stderr
    assert json.loads(report.read_text())["target"]["version"] == "2.10.0"
    assert yaml.safe_load(out.read_text())["model"]["fp16_type"] == "float16"
    compared = runner.invoke(main, ["diff", str(src), str(out), "--report", str(report), "--json"])
    assert compared.exit_code == 0, compared.stdout
    assert json.loads(compared.stdout)["changed"] == []


def test_diff_reads_both_files_as_the_formats_the_report_names(tmp_path: Path, monkeypatch) -> None:
    """An output whose keys two formats both know (a VeOmni file a Model Zoo file could also be) is read as
    the format the translation's report names, not detected again: with the report, detection is never asked."""
    src, out, report = tmp_path / "gpt3.yaml", tmp_path / "out.yaml", tmp_path / "r.json"
    src.write_text(LEGACY_18)
    runner = cli_runner()
    made = runner.invoke(
        main, ["cerebras2cerebras", str(src), "-o", str(out), "--report", str(report), "--layout", "legacy", "-q"]
    )
    assert made.exit_code == 0, made.stderr
    from neoconv.core.errors import InputError
    from neoconv.formats import detect

    def undecided(path: str) -> str:
        raise InputError("could be cerebras or veomni (both know all its keys); give the format with --from", file=path)

    monkeypatch.setattr(detect, "detect_file", undecided)
    compared = runner.invoke(main, ["diff", str(src), str(out), "--report", str(report), "--json"])
    assert compared.exit_code == 0, compared.stdout + compared.stderr
    assert json.loads(compared.stdout)["changed"] == []
    without = runner.invoke(main, ["diff", str(src), str(out), "--json"])  # no report: detection decides
    assert without.exit_code == 2 and "give the format with --from" in without.stderr
