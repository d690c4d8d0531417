"""VeOmni's model-scoped layout (PR ByteDance-Seed/VeOmni#1090, after the pinned mirror): accelerator and
optimizer under model.*, and init_device, broadcast_model_weights_from_rank0, ep_sharded_stream_load,
gradient_checkpointing, torch_compile and chunk_mbs_config on model.accelerator (VeOmni@4c0964cd:
veomni/arguments/arguments_types.py; VeOmni@0196ddbe:veomni/arguments/parser.py `_RELOCATED_KEYS`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

from neoconv import translate
from neoconv.core.errors import InputError
from neoconv.formats.veomni.fields import fields
from neoconv.knowledge.schema import load_history
from neoconv.io.documents import flatten

ROOT = Path(__file__).resolve().parent.parent
INPUTS = ROOT / "fixtures" / "inputs" / "veomni"
SCOPED = INPUTS / "tinyllama-scoped.yaml"
NESTED = INPUTS / "tinyllama-nested.yaml"


def history_generator():  # type: ignore[no-untyped-def]
    """tools/gen_veomni_history.py as a module (its tables are what the layout table must agree with)."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        spec = importlib.util.spec_from_file_location("gen_veomni_history", ROOT / "tools" / "gen_veomni_history.py")
        assert spec and spec.loader
        gen = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gen)
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return gen


def test_the_layout_table_and_the_history_generator_move_the_same_keys() -> None:
    gen = history_generator()
    assert dict(fields().scoped) == gen.SCOPED_MOVES
    history = load_history("veomni")
    assert history is not None
    moved = {r.old: r.new for r in history.renames if r.release == "#1090"}
    assert moved["train.optimizer.lr"] == "model.optimizer.lr"
    assert moved["train.init_device"] == "model.accelerator.init_device"
    assert moved["train.gradient_checkpointing.enable"] == "model.accelerator.gradient_checkpointing.enable"
    assert (
        moved["train.accelerator.fsdp_config.mixed_precision.enable"]
        == "model.accelerator.fsdp_config.mixed_precision.enable"
    )
    assert all(fields().to_scoped(old) == new for old, new in moved.items())
    # #1090 reads the new names only, and the tables are still written for the pinned (nested) release
    assert history.reads("model.accelerator.ulysses_size", "#1090") and not history.reads(
        "train.accelerator.ulysses_size", "#1090"
    )
    assert not history.reads("model.accelerator.ulysses_size", "#1021")
    assert history.newest == "#1021" and history.labels[-2:] == ("#1090", "#1125")
    assert history.keys["model.accelerator.init_device"]["group"] == "AcceleratorConfig"


def test_a_scoped_file_reads_as_1090_with_the_values_of_the_nested_one() -> None:
    scoped = translate(SCOPED, "veomni", "neox")
    # its keys fit #1090 and #1125 (which moved none of them): read as the newest of the two
    assert scoped.report.source["layout"] == "scoped" and scoped.report.source["version"] == "#1125"
    assert scoped.report.source["version_range"] == ["#1090", "#1125"]
    nested = translate(NESTED, "veomni", "neox")
    assert nested.report.source["layout"] == "nested" and nested.report.source["version"] == "#1021"
    assert scoped.config == nested.config  # the same run
    config = scoped.config
    assert config["optimizer"]["params"]["lr"] == 4.0e-4 and config["min_lr"] == 4.0e-5
    assert config["checkpoint_activations"] is True and config["train_batch_size"] == 1024
    # the report speaks of the keys as the file wrote them, each with the nested file's status
    entries = {k: e.status for k, e in scoped.report.by_source().items() if k}
    # ... but the betas: a #1125 field whose default (0.9, 0.95) the file leaves to VeOmni (hard-coded before)
    assert entries.pop("train.optimizer.betas").value == "defaulted"
    assert entries == {fields().to_scoped(k): e.status for k, e in nested.report.by_source().items() if k}
    assert "model.optimizer.lr" in entries and "model.accelerator.gradient_checkpointing.enable" in entries
    assert not [e for e in scoped.report.entries if e.status.value == "unknown"]


def test_writing_for_1090_gives_the_scoped_file() -> None:
    result = translate(NESTED, "veomni", "veomni", target_version="#1090")
    assert result.report.target["layout"] == "scoped" and result.report.target["version"] == "#1090"
    assert flatten(dict(result.config)) == flatten(yaml.safe_load(SCOPED.read_text()))
    assert all(e.status.value == "exact" for e in result.report.entries)
    # and back: the scoped file migrates to exactly the nested one
    back = translate(SCOPED, "veomni", "veomni", layout="nested")
    assert flatten(dict(back.config)) == flatten(yaml.safe_load(NESTED.read_text()))
    # without --to-version the nested layout of the pinned release is written
    plain = translate(SCOPED, "veomni", "veomni", target_version="current")
    assert plain.report.target["layout"] == "nested" and plain.report.target["version"] == "#1021"


def test_another_framework_written_for_1090_puts_optimizer_and_accelerator_under_model(pythia160m: Path) -> None:
    result = translate(pythia160m, "neox", "veomni", target_version="#1090", world_size=8)
    model, train = result.config["model"], result.config["train"]
    assert model["optimizer"]["lr"] == 0.0006 and model["optimizer"]["lr_decay_style"] == "cosine"
    assert model["accelerator"]["init_device"] == "meta"
    assert model["accelerator"]["fsdp_config"]["mixed_precision"]["param_dtype"] == "float16"
    assert model["accelerator"]["gradient_checkpointing"]["enable"] is False
    assert not {"optimizer", "accelerator", "init_device", "gradient_checkpointing"} & set(train)
    assert train["global_batch_size"] == 256
    assert result.report.target["verified"] is True and result.report.target["added_by_verification"] == 0


def test_old_paths_beside_the_scoped_ones_are_refused_as_veomni_does(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text(
        "model:\n  config_path: c\n  optimizer: {lr: 1.0e-4}\ndata: {train_path: d}\ntrain:\n  init_device: meta\n"
    )
    with pytest.raises(InputError, match=r"train\.init_device has moved to model\.accelerator\.init_device") as caught:
        translate(path, "veomni", "neox")
    assert caught.value.line == 6
    path.write_text(
        "model:\n  config_path: c\n  accelerator: {ulysses_size: 2}\ndata: {train_path: d}\ntrain:\n  lr: 1.0e-4\n"
    )
    with pytest.raises(InputError, match=r"mixes the flat layout \(train\.lr\) with the model-scoped one"):
        translate(path, "veomni", "neox")


def test_a_flat_file_migrates_to_the_scoped_layout() -> None:
    flat = INPUTS / "tinyllama-flat.yaml"
    result = translate(flat, "veomni", "veomni", layout="scoped")
    assert result.report.target["version"] == "#1125"  # --layout alone: the layout's last release
    model = result.config["model"]
    assert model["optimizer"]["lr"] == 4.0e-4 and model["accelerator"]["fsdp_config"]["fsdp_mode"] == "fsdp2"
    assert "lr" not in result.config["train"] and "optimizer" not in result.config["train"]


def test_validate_knows_the_scoped_keys_and_which_release_reads_them() -> None:
    from neoconv.services.validate_file import validate_file

    assert validate_file(str(SCOPED)).valid and validate_file(str(SCOPED), version="#1090").valid
    old = validate_file(str(SCOPED), version="#1021")
    said = {p.key: p.message for p in old.problems}
    assert "VeOmni #1021 does not read model.optimizer.lr (read by #1090..#1125)" in said["model.optimizer.lr"]
    nested = validate_file(str(NESTED), version="#1090")
    assert "renamed to model.optimizer.lr in #1090" in {p.key: p.message for p in nested.problems}["train.optimizer.lr"]
