"""DeepSpeed ZeRO fields under every name a release accepted: pydantic aliases (stage3_*), deprecated
spellings (cpu_offload, stage3_gather_fp16_weights_on_model_save) and the 0.3.12-0.6.7 cpu_offload_params,
which 0.7.0 (extra="forbid") refuses. Known keys (dropped with a reason), never unknown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neoconv import translate
from neoconv.core.errors import InputError

# deepspeedai/DeepSpeed@v0.6.7:deepspeed/runtime/zero/config.py:140 reads cpu_offload_params; v0.7.0's
# pydantic DeepSpeedZeroConfig has cpu_offload_param (config.py:93) and forbids other keys
OLD = {
    "train_batch_size": 32,
    "train_micro_batch_size_per_gpu": 4,
    "zero_optimization": {
        "stage": 3,
        "cpu_offload": True,
        "cpu_offload_params": True,
        "stage3_gather_fp16_weights_on_model_save": True,
        "stage3_prefetch_bucket_size": 5e8,
    },
}
# @v0.19.5:deepspeed/runtime/zero/config.py: gather_16bit_weights_on_model_save is the field,
# stage3_gather_16bit_weights_on_model_save its alias (populate_by_name accepts both)
NEW = {
    "train_batch_size": 32,
    "train_micro_batch_size_per_gpu": 4,
    "zero_optimization": {
        "stage": 3,
        "stage3_gather_16bit_weights_on_model_save": True,
        "stage3_param_persistence_threshold": 1e6,
        "stage3_max_live_parameters": 1e9,
        "offload_optimizer": {"device": "cpu"},
    },
    "bf16": {"enabled": True},
}


def _write(tmp_path: Path, config: dict) -> Path:  # type: ignore[type-arg]
    path = tmp_path / "ds_config.json"
    path.write_text(json.dumps(config))
    return path


def test_a_06_era_zero_block_is_known_and_dates_the_file(tmp_path: Path) -> None:
    result = translate(_write(tmp_path, OLD), "deepspeed", "neox", world_size=8)
    source = result.report.source
    assert source["version_range"][1] == "0.6.7"  # cpu_offload_params: read until 0.6.7
    entries = result.report.by_source()
    assert not [e for e in result.report.entries if e.status.value == "unknown"]
    for key in (
        "cpu_offload",
        "cpu_offload_params",
        "stage3_gather_fp16_weights_on_model_save",
        "stage3_prefetch_bucket_size",
    ):
        assert entries[f"zero_optimization.{key}"].status.value == "dropped"
    assert entries["zero_optimization.stage"].status.value == "exact"


def test_aliases_of_a_current_release_are_known(tmp_path: Path) -> None:
    result = translate(_write(tmp_path, NEW), "deepspeed", "neox", world_size=8)
    assert result.report.source["version_range"][1] == "0.19.5"
    assert not [e for e in result.report.entries if e.status.value == "unknown"]
    same = translate(_write(tmp_path, NEW), "deepspeed", "deepspeed", world_size=8)
    zero = json.loads(same.dump())["zero_optimization"]
    assert zero["stage3_gather_16bit_weights_on_model_save"] is True  # carried as the user spelled it
    assert zero["stage3_max_live_parameters"] == 1e9


def test_a_typo_in_the_zero_block_is_unknown(tmp_path: Path) -> None:
    config = {**NEW, "zero_optimization": {"stage": 3, "stage3_gather_16bit_weights_on_model_sav": True}}
    result = translate(_write(tmp_path, config), "deepspeed", "neox", world_size=8)
    entry = result.report.by_source()["zero_optimization.stage3_gather_16bit_weights_on_model_sav"]
    assert entry.status.value == "unknown" and "did you mean" in entry.detail


# What DeepSpeed runs though the value is not of the key's type (deepspeedai/DeepSpeed@v0.19.5):
# runtime/zero/config.py get_zero_config sends a bool to read_zero_config_deprecated (stage 1 if true);
# runtime/precision_config.py (from 0.17.1) reads "enabled" with pydantic's lax bool ("true" -> True);
# up to 0.17.0 runtime/config.py get_fp16_enabled returned get_scalar_param's value, the string itself.
def test_zero_optimization_true_is_stage_1(tmp_path: Path) -> None:
    config = {"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "zero_optimization": True}
    result = translate(_write(tmp_path, config), "deepspeed", "neox", world_size=8)
    assert result.config["zero_optimization"]["stage"] == 1
    entry = result.report.by_source()["zero_optimization.stage"]
    assert entry.status.value in ("exact", "converted") and "deprecated" in entry.detail
    off = translate(_write(tmp_path, {**config, "zero_optimization": False}), "deepspeed", "deepspeed", world_size=8)
    assert json.loads(off.dump())["zero_optimization"] == {"stage": 0}


def test_precision_switches_as_text_are_read_as_deepspeed_reads_them(tmp_path: Path) -> None:
    config = {
        "train_batch_size": 32,
        "train_micro_batch_size_per_gpu": 4,
        "bf16": {"enabled": "true"},
        "fp16": {"enabled": "false"},
    }
    result = translate(_write(tmp_path, config), "deepspeed", "neox", world_size=8)
    assert result.config["precision"] == "bfloat16"
    assert result.config["bf16"]["enabled"] is True
    note = result.report.source["note"]
    # the surprising one is named: "false" is true up to 0.17.0
    assert "fp16.enabled" in note and "0.17.0" in note and "TRUE" in note
    assert "bf16.enabled" not in note  # "true" is true at every release
    same = translate(_write(tmp_path, config), "deepspeed", "deepspeed", world_size=8)
    written = json.loads(same.dump())
    assert written["bf16"]["enabled"] is True and written["fp16"]["enabled"] is False


def test_a_precision_switch_that_is_no_bool_word_is_still_refused(tmp_path: Path) -> None:
    config = {"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": "maybe"}}
    with pytest.raises(InputError):
        translate(_write(tmp_path, config), "deepspeed", "neox", world_size=8)


def test_false_as_text_is_true_up_to_0_17_0(tmp_path: Path) -> None:
    config = {"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "fp16": {"enabled": "false"}}
    old = translate(_write(tmp_path, config), "deepspeed", "neox", world_size=8, source_version="0.9.0")
    assert old.config["precision"] == "fp16"  # v0.9.0 get_fp16_enabled: the string 'false', a true value
    assert "TRUE" in old.report.by_source()["fp16.enabled"].detail
    new = translate(_write(tmp_path, config), "deepspeed", "neox", world_size=8, source_version="0.17.1")
    assert new.config["precision"] == "fp32"
    both = {**config, "bf16": {"enabled": True}}
    with pytest.raises(InputError):  # 0.9.0: fp16 and bf16 both on, which DeepSpeed asserts against
        translate(_write(tmp_path, both), "deepspeed", "neox", world_size=8, source_version="0.9.0")


def test_every_switch_of_the_precision_blocks_is_read_so(tmp_path: Path) -> None:
    # SafeAILab/EAGLE's ds_config shape: fp16.auto_cast "true" (DeepSpeedFP16Config.auto_cast: bool)
    config = {
        "train_batch_size": 32,
        "train_micro_batch_size_per_gpu": 4,
        "fp16": {"enabled": "true", "auto_cast": "false"},
    }
    same = translate(_write(tmp_path, config), "deepspeed", "deepspeed", world_size=8)
    assert json.loads(same.dump())["fp16"] == {"enabled": True, "auto_cast": False}
    assert "fp16.auto_cast" in same.report.source["note"]  # "false": TRUE up to 0.17.0
