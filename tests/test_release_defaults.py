"""Issue #27 items 4 and 8: values the framework derives before it checks, and defaults that depend on
the release. Small NeoX files written here with the constructs real forks use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from neoconv.api import translate
from neoconv.core.report import Status

MODEL = """\
num_layers: 4
hidden_size: 256
num_attention_heads: 4
seq_length: 512
max_position_embeddings: 512
pos_emb: rotary
optimizer: {type: Adam, params: {lr: 0.0006}}
train_micro_batch_size_per_gpu: 4
gradient_accumulation_steps: 2
train_iters: 1000
"""


def _file(tmp_path: Path, text: str, name: str = "model.yml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _entry(result: Any, key: str) -> Any:
    return next(e for e in result.report.entries if e.source_key == key)


# ---- item 4: derive, then check, in the framework's order -------------------------------------------


@pytest.mark.parametrize("mp,pp", [(0, 1), (-1, 1), (1, -1), (0, 0)])
def test_neox_derives_parallel_sizes_before_its_checks(tmp_path: Path, mp: int, pp: int) -> None:
    """calculate_derived (before validate_values): mp_size if mp_size >= 1 else 1, pp_size likewise: the
    file runs with one tensor and one pipeline rank, so the data-parallel size is the world size."""
    path = _file(tmp_path, MODEL + f"model_parallel_size: {mp}\npipe_parallel_size: {pp}\n")
    done = translate(path, "neox", "deepspeed", world_size=8)
    assert done.ir.get("parallel.tensor_size") == 1 and done.ir.get("parallel.pipeline_size") == 1
    assert done.ir.get("parallel.data_parallel_size") == 8
    written = yaml.safe_load(done.dump())
    assert written["train_batch_size"] == 4 * 2 * 8
    if mp < 1:
        assert _entry(done, "model_parallel_size").status is not Status.UNKNOWN


def test_a_tensor_size_the_framework_refuses_after_deriving_is_still_refused(tmp_path: Path) -> None:
    """A value the derivation leaves wrong stays bad input: 3 heads do not split over 2 ranks of 256."""
    from neoconv.core.errors import InputError

    path = _file(tmp_path, MODEL.replace("hidden_size: 256", "hidden_size: 250") + "model_parallel_size: 0\n")
    with pytest.raises(InputError, match="250 is not divisible by num_attention_heads=4"):
        translate(path, "neox", "cerebras", world_size=8)


# ---- item 8: a default the releases a file fits disagree on ------------------------------------------


def test_weight_decay_depends_on_the_release_and_the_report_says_so(tmp_path: Path) -> None:
    """A NeoX fork's file without weight_decay whose keys fit 2022-12-14..today (checkpoint_factor) reads as
    today's release (0.1); releases before 2023-12-26 meant 0.01: the entry names that, and --from-version."""
    path = _file(tmp_path, MODEL + "checkpoint_factor: 1000\nsave: ck\n")
    done = translate(path, "neox", "cerebras", world_size=8)
    assert done.report.source["version_range"] == ["2022-12-14", "2026-05-19"]
    entry = _entry(done, "weight_decay")
    assert entry.status is Status.DEFAULTED and yaml.safe_load(done.dump())["optimizer"]["weight_decay"] == 0.1
    said = next(m for m in entry.values["also"] if m["kind"] == "release_default")["values"]
    assert said["runs"] == [["2022-12-14", "2023-12-22", 0.01], ["2023-12-26", "2026-05-19", 0.1]]
    assert said["read_as"] == "2026-05-19" and "--from-version" in entry.detail
    # given the release, there is nothing to choose: 0.01, and no such note
    old = translate(path, "neox", "cerebras", world_size=8, source_version="2023-06-01")
    assert yaml.safe_load(old.dump())["optimizer"]["weight_decay"] == 0.01
    assert not any(e.kind == "release_default" or "depends on the release" in e.detail for e in old.report.entries)


def test_the_dependence_is_named_when_nothing_is_written_for_it(tmp_path: Path) -> None:
    """neox2neox to today's release leaves weight_decay out (the same default): the value still depends on
    the release the file was meant for, named in an entry of its own."""
    path = _file(tmp_path, MODEL + "checkpoint_factor: 1000\nsave: ck\n")
    done = translate(path, "neox", "neox")
    own = [e for e in done.report.entries if e.kind == "release_default" and e.values["key"] == "weight_decay"]
    assert len(own) == 1 and own[0].source_key is None and own[0].fields == ("optim.weight_decay",)
    assert "weight_decay" not in done.dump()


def test_a_migration_between_releases_states_the_defaults_that_moved(tmp_path: Path) -> None:
    """A file of a release before 2022-12-06 (save_interval) relied on dropouts 0.1 and weight decay 0.01;
    migrated to today's NeoX (dropouts 0.0, weight decay 0.1) those are written, not silently changed."""
    path = _file(tmp_path, MODEL + "save_interval: 500\nsave: ck\n")
    done = translate(path, "neox", "neox")
    written = yaml.safe_load(done.dump())
    assert written["checkpoint_factor"] == 500 and "save_interval" not in written
    assert (written["hidden_dropout"], written["attention_dropout"], written["weight_decay"]) == (0.1, 0.1, 0.01)
    assert written["gradient_clipping"] == 0.0  # (no clipping before 2023-03-26)
    decay = _entry(done, "weight_decay")
    assert decay.status is Status.DEFAULTED and decay.values["title"] == f"GPT-NeoX {done.report.source['version']}"
    assert done.report.target["added_by_verification"] == 0  # every difference is said by the migration itself


def test_an_old_spelling_kept_as_an_alias_has_no_default_of_its_own(tmp_path: Path) -> None:
    """transformers 5.23 renamed gradient_checkpointing to activation_checkpointing and still reads the old
    name (None: the new key decides): its None there is no release's default, so a Trainer file fitting
    4.36.2..5.23.0 is not said to depend on the release for it (false before the rename)."""
    path = _file(
        tmp_path,
        '{"output_dir": "out", "per_device_train_batch_size": 16, "learning_rate": 0.0003, "max_steps": 2000}',
        "args.json",
    )
    done = translate(path, "hftrainer", "deepspeed")
    assert done.report.source["version_range"][0] == "4.36.2"
    moved = [e.values["key"] for e in done.report.entries if e.kind == "release_default"]
    moved += [
        m["values"]["key"]
        for e in done.report.entries
        for m in (e.values or {}).get("also", ())
        if m["kind"] == "release_default"
    ]
    assert "gradient_checkpointing" not in moved


# ---- item 4, Model Zoo: the model config's checks after its defaults (gpt2_model.py, AttentionLayer.py) --

CEREBRAS = """\
train_input: {{data_processor: GptHDF5MapDataProcessor, data_dir: ./data, batch_size: 32}}
model:
  hidden_size: {hidden}
  num_heads: 16
  attention_inner_dim: 1024
  num_hidden_layers: 4
  filter_size: 4096
  vocab_size: 32000
  max_position_embeddings: 1024
  position_embedding_type: rotary
  rotary_dim: {rotary}
optimizer: {{optimizer_type: AdamW, learning_rate: 0.0001}}
runconfig: {{max_steps: 1000}}
"""


def test_model_zoo_checks_the_width_and_rotary_dim_after_attention_inner_dim(tmp_path: Path) -> None:
    """attention_inner_dim (2.3.1+) sets the head width (1024 / 16 = 64) that validate_rotary_dim checks
    rotary_dim against; MultiheadAttention still asserts hidden_size % num_heads. Width 1008 with rotary 64
    runs; rotary 128 and width 1000 are refused, naming the value at fault."""
    from neoconv.core.errors import InputError

    ok = translate(_file(tmp_path, CEREBRAS.format(hidden=1008, rotary=64), "m.yaml"), "cerebras", "neox")
    assert ok.ir.get("model.head_dim") == 64 and ok.ir.get("model.rotary_fraction") == 1.0
    with pytest.raises(InputError, match="rotary_dim 128 is more than the head size 64"):
        translate(_file(tmp_path, CEREBRAS.format(hidden=1008, rotary=128), "m.yaml"), "cerebras", "neox")
    with pytest.raises(InputError, match="hidden_size 1000 is not divisible by num_heads 16"):
        translate(_file(tmp_path, CEREBRAS.format(hidden=1000, rotary=64), "m.yaml"), "cerebras", "neox")
