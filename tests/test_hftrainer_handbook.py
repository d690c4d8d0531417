"""alignment-handbook train files (huggingface/alignment-handbook src/alignment/configs.py: v0.2/v0.3's
ModelArguments and DataArguments, main's ScriptArguments) are a dialect of the HF Trainer's train file
(mappings/hftrainer-dialects.yaml): its own keys are named as the handbook's, and a key neither it, another
tool nor TrainingArguments declares (a fork's: SimPO's gamma_beta_ratio) is `unknown` naming whose file it is."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from neoconv import Status, translate
from neoconv.cli import main

DPO_RECIPE = """\
model_name_or_path: org/tiny-sft
torch_dtype: null
model_code_revision: main
dataset_mixer:
  org/prefs: 1.0
dataset_splits:
- train_prefs
- test_prefs
preprocessing_num_workers: 4
bf16: true
beta: 0.05
gamma_beta_ratio: 0.5
gradient_accumulation_steps: 2
learning_rate: 5.0e-7
max_length: 256
max_prompt_length: 128
max_steps: 100
output_dir: out
per_device_train_batch_size: 2
"""


def _report(tmp_path: Path, text: str = DPO_RECIPE):
    path = tmp_path / "config_dpo.yaml"
    path.write_text(text)
    return translate([path], "hftrainer", "neox", world_size=4, set_values={"model.num_layers": 2})


def test_the_handbooks_own_keys_are_named_as_its_own(tmp_path: Path) -> None:
    result = _report(tmp_path)
    by = result.report.by_source()
    for key in ("dataset_splits", "model_code_revision", "dataset_mixer.org/prefs"):
        assert by[key].status is Status.DROPPED, key
        assert "alignment-handbook's" in by[key].detail, key
    assert "TRL" in by["beta"].detail  # the DPO loss's beta is TRL's field, which the handbook's DPOConfig extends
    assert result.ir.get("optim.lr") == 5e-7 and result.ir.get("batch.micro") == 2


def test_a_key_no_tool_declares_is_unknown_to_the_handbook(tmp_path: Path) -> None:
    entry = _report(tmp_path).report.by_source()["gamma_beta_ratio"]
    assert entry.status is Status.UNKNOWN
    assert "alignment-handbook's (told by dataset_mixer)" in entry.detail
    assert "0.3.0" in entry.detail  # the handbook versions whose classes were read


def test_a_plain_trainer_file_names_no_tool(tmp_path: Path) -> None:
    text = "output_dir: out\nper_device_train_batch_size: 2\nmax_steps: 10\ngamma_beta_ratio: 0.5\n"
    entry = _report(tmp_path, text).report.by_source()["gamma_beta_ratio"]
    assert entry.status is Status.UNKNOWN and "alignment-handbook" not in entry.detail


def test_validate_names_only_the_key_no_tool_declares(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "config_dpo.yaml"
    path.write_text(DPO_RECIPE)
    result = runner.invoke(main, ["validate", "--format", "hftrainer", str(path)])
    assert result.exit_code == 1
    problems = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith(str(path))]
    assert len(problems) == 1 and "gamma_beta_ratio" in problems[0]


def test_a_dialect_told_by_a_key_it_renames_names_that_key(tmp_path: Path) -> None:
    """axolotl is told by micro_batch_size, which it hands to TrainingArguments as per_device_train_batch_size:
    the key no tool declares is named as axolotl's, told by the key as the file writes it (not an internal
    error looking for it among the renamed keys)."""
    path = tmp_path / "axolotl.yaml"
    path.write_text("micro_batch_size: 2\nlearning_rate: 1.0e-5\nmax_steps: 10\nforks_own_knob: 3\n")
    by = translate([path], "hftrainer", "neox", world_size=1, set_values={"model.num_layers": 2}).report.by_source()
    assert by["micro_batch_size"].status in (Status.EXACT, Status.CONVERTED)
    assert by["forks_own_knob"].status is Status.UNKNOWN
    assert "the file is axolotl's (told by micro_batch_size)" in by["forks_own_knob"].detail
