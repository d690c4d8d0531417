"""VeOmni files of the releases between the layouts: the nested layout of #538..#603 (mixed precision
still flat), and flat files before #458 (padding-free modes, dynamic-batch margin)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from neoconv import translate
from neoconv.core.errors import InputError

CONFIG = (
    '{"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 2, "num_attention_heads": 8, '
    '"vocab_size": 1000, "intermediate_size": 1376}'
)

# ByteDance-Seed/VeOmni@085f3c23 (#538): train.enable_mixed_precision is a field of the nested TrainingArguments
# (veomni/arguments/arguments_types.py:345), FSDP1's fsdp_config.full_shard too (:191)
NESTED_538 = """\
model: {model_path: m}
data: {train_path: d, max_seq_len: 2048}
train:
  optimizer: {lr: 3.0e-4, weight_decay: 0.01}
  accelerator: {fsdp_config: {fsdp_mode: fsdp1, full_shard: true}}
  enable_mixed_precision: false
  global_batch_size: 64
  micro_batch_size: 2
"""

# ByteDance-Seed/VeOmni@a11d28ca^ (before #458): rmpad (default True), rmpad_with_pos_ids, dyn_bsz_margin,
# train.dyn_bsz_buffer_size (veomni/arguments/arguments_types.py:401-430)
FLAT_457 = """\
model: {model_path: m}
data: {train_path: d, max_seq_len: 1024, train_size: 1000000}
train:
  lr: 1.0e-4
  output_dir: o
  rmpad: RMPAD
  rmpad_with_pos_ids: POS
  dyn_bsz_margin: 128
  dyn_bsz_buffer_size: 100
  global_batch_size: 16
  micro_batch_size: 4
"""


def _files(tmp_path: Path, text: str) -> tuple[Path, Path]:
    (tmp_path / "run.yaml").write_text(text)
    (tmp_path / "config.json").write_text(CONFIG)
    return tmp_path / "run.yaml", tmp_path / "config.json"


def test_a_nested_file_with_the_flat_mixed_precision_switch_is_a_538_to_603_file(tmp_path: Path) -> None:
    path, config = _files(tmp_path, NESTED_538)
    result = translate(path, "veomni", "neox", model_config=config)
    assert result.report.source["layout"] == "nested"
    assert result.report.source["version_range"] == ["#538", "#603"]
    entries = result.report.by_source()
    assert entries["train.enable_mixed_precision"].status.value == "lossy"  # read: mixed precision off
    assert "mixed precision off" in entries["train.enable_mixed_precision"].detail
    assert entries["train.accelerator.fsdp_config.full_shard"].status.value == "converted"
    assert not [e for e in result.report.entries if e.status.value == "unknown"]


def test_writing_for_a_538_to_603_release_keeps_the_switch_flat(tmp_path: Path) -> None:
    path, config = _files(tmp_path, NESTED_538)
    old = translate(path, "veomni", "veomni", model_config=config, target_version="#583").dump()
    assert "enable_mixed_precision: false" in old and "mixed_precision:\n" not in old
    new = translate(path, "veomni", "veomni", model_config=config).dump()
    assert "enable_mixed_precision" not in new and "mixed_precision:\n        enable: false" in new


def test_a_flat_file_before_458_counts_steps_with_the_margin(tmp_path: Path) -> None:
    path, config = _files(tmp_path, FLAT_457.replace("RMPAD", "false").replace("POS", "true"))
    result = translate(path, "veomni", "neox", model_config=config)
    assert result.report.source["version_range"][1] == "#498"  # the last release reading rmpad
    # compute_train_steps: ceil(train_size / (global_batch x max_seq_len x eff)), eff = (4x1024 - 128) / (4x1024)
    steps = math.ceil(1_000_000 / (16 * 1024 * (4 * 1024 - 128) / (4 * 1024)))
    assert steps == 64
    assert f"train_iters: {steps}\n" in result.dump()
    assert result.report.by_source()["train.dyn_bsz_margin"].status.value == "converted"


def test_without_a_padding_free_mode_dyn_bsz_packs_nothing(tmp_path: Path) -> None:
    # rmpad: false and rmpad_with_pos_ids: false = padded batches of micro_batch_size samples (no token budget)
    path, config = _files(tmp_path, FLAT_457.replace("RMPAD", "false").replace("POS", "false"))
    result = translate(path, "veomni", "neox", model_config=config)
    entries = result.report.by_source()
    assert entries["train.global_batch_size"].status.value in ("exact", "converted")  # samples, not token budgets
    assert "train_batch_size: 16" in result.dump()
    assert "\ntrain_iters:" not in result.dump()  # the dataset's length decides (no max_steps): asked for


def test_both_padding_free_modes_is_refused_as_veomni_does(tmp_path: Path) -> None:
    path, config = _files(tmp_path, FLAT_457.replace("RMPAD", "true").replace("POS", "true"))
    with pytest.raises(InputError, match="rmpad and rmpad_with_pos_ids are both true"):
        translate(path, "veomni", "neox", model_config=config)


def test_a_target_release_before_538_is_written_in_the_flat_layout() -> None:
    # before #538 (ByteDance-Seed/VeOmni@085f3c23^) TrainingArguments is flat: train.lr, train.output_dir;
    # VeOmni ignores keys it does not know, so a nested file would silently lose them there
    pythia = Path(__file__).parent.parent / "fixtures" / "inputs" / "neox" / "pythia-160m.yml"
    old = translate(pythia, "neox", "veomni", target_version="#458")
    assert old.report.target["layout"] == "flat" and old.config["train"]["lr"] == 0.0006
    assert "optimizer" not in old.config["train"] or isinstance(old.config["train"]["optimizer"], str)
    mid = translate(pythia, "neox", "veomni", target_version="#583")
    assert mid.report.target["layout"] == "nested" and mid.config["train"]["optimizer"]["lr"] == 0.0006
    assert mid.config["train"]["enable_mixed_precision"] is True  # flat in the nested layout until #627
    assert "mixed_precision" not in mid.config["train"]["accelerator"].get("fsdp_config", {})
    new = translate(pythia, "neox", "veomni")
    assert new.config["train"]["accelerator"]["fsdp_config"]["mixed_precision"]["enable"] is True


def test_a_pr_between_two_labels_is_the_release_in_force_once_it_was_merged() -> None:
    # ByteDance-Seed/VeOmni first-parent history: #589 merged after #586 (the last argument change before it)
    # and before #603 (the next one): a file for #589 is a #586 file
    pythia = Path(__file__).parent.parent / "fixtures" / "inputs" / "neox" / "pythia-160m.yml"
    result = translate(pythia, "neox", "veomni", target_version="#589")
    assert result.report.target["version"] == "#586" and result.report.target["version_asked"] == "#589"
    assert result.config["train"]["enable_mixed_precision"] is True  # #586 is in #538..#603: still flat
    # a PR merged right after the flat layout's last change (#458) and before #538 writes the flat layout
    flat = translate(pythia, "neox", "veomni", target_version="537")
    assert flat.report.target["version"] == "#458" and flat.report.target["layout"] == "flat"
    # a label itself is not reported as asked differently
    assert "version_asked" not in translate(pythia, "neox", "veomni", target_version="#603").report.target


@pytest.mark.parametrize("asked", ["#600", "#99999", "1.2"])
def test_a_pr_that_was_never_merged_or_is_in_the_future_is_a_usage_error(asked: str) -> None:
    from neoconv.core.errors import UsageError

    pythia = Path(__file__).parent.parent / "fixtures" / "inputs" / "neox" / "pythia-160m.yml"
    with pytest.raises(UsageError, match=r"not a VeOmni release.*known: fb1b0b2d, #22"):
        translate(pythia, "neox", "veomni", target_version=asked)


def test_a_neox_pr_or_day_between_labels_is_the_day_release_in_force() -> None:
    # EleutherAI/gpt-neox: #1131 (f36aed7f, intermediate_size) merged on 2024-02-23, a label's day; a day
    # between labels is the latest label at or before it
    from neoconv.knowledge.versions import resolve

    assert resolve("neox", "#1131", "--to-version") == "2024-02-23"
    assert resolve("neox", "1131", "--to-version") == "2024-02-23"
    assert resolve("neox", "2024-03-01", "--to-version") == "2024-02-23"
    from neoconv.core.errors import UsageError

    with pytest.raises(UsageError, match="not a GPT-NeoX release"):
        resolve("neox", "#99999", "--to-version")


def test_a_flat_file_before_458_keeps_its_padding_free_mode_and_margin_for_its_release(tmp_path: Path) -> None:
    path, config = _files(tmp_path, FLAT_457.replace("RMPAD", "false").replace("POS", "true"))
    same = translate(path, "veomni", "veomni", model_config=config, target_version="#498")
    train = same.config["train"]
    assert (train["rmpad"], train["rmpad_with_pos_ids"], train["dyn_bsz_margin"], train["dyn_bsz_buffer_size"]) == (
        False,
        True,
        128,
        100,
    )
    assert {e.status.value for e in same.report.entries} == {"exact"}
    # #458 removed them (ByteDance-Seed/VeOmni@a11d28ca): not written there, and said so
    later = translate(path, "veomni", "veomni", model_config=config, target_version="#458")
    assert not {"rmpad", "rmpad_with_pos_ids", "dyn_bsz_margin"} & set(later.config["train"])
    assert later.config["data"]["dyn_bsz_buffer_size"] == 100
    entries = later.report.by_source()
    for key in ("train.rmpad", "train.rmpad_with_pos_ids", "train.dyn_bsz_margin"):
        assert entries[key].status.value == "lossy" and "VeOmni #458 does not read" in entries[key].detail


def test_packing_written_for_a_release_before_458_names_its_padding_free_mode_and_margin() -> None:
    pythia = Path(__file__).parent.parent / "fixtures" / "inputs" / "neox" / "pythia-160m.yml"
    sets = {"batch.packed": True, "train.steps": 1000}
    old = translate(pythia, "neox", "veomni", target_version="#498", world_size=8, set_values=sets)
    train = old.config["train"]
    assert (train["dyn_bsz"], train["rmpad"], train["dyn_bsz_margin"]) == (True, True, 0)
    # 1000 steps of 256 x 2048 tokens: ceil(train_size / (global_batch x max_seq_len)) with no margin
    assert math.ceil(old.config["data"]["train_size"] / (256 * 2048)) == 1000
    assert old.report.by_source()["--set batch.packed"].target_key == "train.dyn_bsz, train.rmpad"
    new = translate(pythia, "neox", "veomni", target_version="#603", world_size=8, set_values=sets)
    assert new.config["train"]["dyn_bsz"] is True
    assert not {"rmpad", "dyn_bsz_margin"} & set(new.config["train"])


@pytest.mark.parametrize("version", ["#458", None])
def test_a_margin_the_target_release_lacks_is_folded_into_train_size(tmp_path: Path, version: str | None) -> None:
    # VeOmni@a11d28ca^ compute_train_steps: ceil(train_size / (16 x 1024 x eff)), eff = (4 x 1024 - 128) / (4 x 1024):
    # 64 steps; from #458 (and in the nested layout) eff is 1, so 1,000,000 tokens would be 62 steps
    path, config = _files(tmp_path, FLAT_457.replace("RMPAD", "false").replace("POS", "true"))
    result = translate(path, "veomni", "veomni", model_config=config, target_version=version)
    tokens = result.config["data"]["train_size"]
    assert math.ceil(tokens / (16 * 1024)) == 64 and math.ceil(1_000_000 / (16 * 1024)) == 62
    entry = result.report.by_source()["data.train_size"]
    assert entry.status.value == "converted" and "re-sized from 1000000 for the same 64 steps" in entry.detail
    assert "dyn_bsz_margin" not in result.config["train"]
    out = tmp_path / "out.yaml"
    out.write_text(result.dump())
    assert "train_iters: 64\n" in translate(out, "veomni", "neox", model_config=config).dump()
