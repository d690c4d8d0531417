"""The per-framework key histories in schemas/history/: well formed, and saying true things.

These tests read the committed files only, so they run everywhere. The histories are facts extracted
from each framework's git mirror; the `upstream` tier (tests/test_upstream_facts.py, `-m upstream`)
re-extracts them and compares byte for byte.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
HISTORY = ROOT / "schemas" / "history"

# format -> (the tool that extracts its history, the <owner+name> of the mirror it reads)
GENERATORS = {
    "neox": ("gen_neox_history.py", "EleutherAI+gpt-neox"),
    "veomni": ("gen_veomni_history.py", "ByteDance-Seed+VeOmni"),
    "deepspeed": ("gen_deepspeed_history.py", "deepspeedai+DeepSpeed"),
    "cerebras": ("gen_cerebras_history.py", "Cerebras+modelzoo"),
}


@cache
def history(fmt: str) -> dict[str, Any]:
    return json.loads((HISTORY / f"{fmt}.json").read_text(encoding="utf-8"))


def labels(fmt: str) -> list[str]:
    return [r["label"] for r in history(fmt)["releases"]]


def resolve(fmt: str, label: str) -> str:
    return history(fmt)["aliases"].get(label, label)


def has(fmt: str, key: str, label: str) -> bool:
    """Does release `label` (or an alias) read `key`?"""
    order = labels(fmt)
    record = history(fmt)["keys"].get(key)
    if record is None:
        return False
    at = order.index(resolve(fmt, label))
    return any(order.index(a) <= at <= order.index(b) for a, b in record["in"])


def value_at(fmt: str, key: str, field: str, label: str) -> Any:
    """The type or default in force at a release; raises KeyError for 'no default'."""
    order = labels(fmt)
    at = order.index(resolve(fmt, label))
    current: list[Any] | None = None
    for pair in history(fmt)["keys"][key][field]:
        if order.index(pair[0]) <= at:
            current = pair
    if current is None or len(current) == 1:
        raise KeyError(f"{key} has no {field} at {label}")
    return current[1]


# --------------------------------------------------------------------------
# Freshness and shape (every framework)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", sorted(GENERATORS))
def test_history_names_the_commits_it_was_read_at(fmt: str) -> None:
    """The histories are facts extracted from the frameworks' repositories (re-extracted by the
    `upstream` tier, tests/test_upstream_facts.py): each names the repository and, per release, the
    commit read."""
    doc = history(fmt)
    owner_name = GENERATORS[fmt][1].replace("+", "/")
    assert doc["source"] == owner_name
    for release in doc["releases"]:
        assert re.fullmatch(r"[0-9a-f]{8,40}", release["rev"]), release


@pytest.mark.parametrize("fmt", sorted(GENERATORS))
def test_history_is_well_formed(fmt: str) -> None:
    doc = history(fmt)
    order = labels(fmt)
    assert len(order) == len(set(order)) and order
    assert all(target in order for target in doc["aliases"].values())
    assert doc["keys"]
    for key, record in doc["keys"].items():
        runs = record["in"]
        positions = [(order.index(a), order.index(b)) for a, b in runs]
        assert all(a <= b for a, b in positions), key
        assert all(positions[i][1] + 1 < positions[i + 1][0] for i in range(len(positions) - 1)), key
        for field in ("type", "default"):
            pairs = record.get(field, [])
            steps = [order.index(p[0]) for p in pairs]
            assert steps == sorted(set(steps)), (key, field)
            assert all(len(p) in (1, 2) for p in pairs)
        assert record["default"], key
    for rename in doc["renames"]:
        assert rename["from"] in doc["keys"] and rename["to"] in doc["keys"]
        assert has(fmt, rename["to"], rename["release"])
        assert not has(fmt, rename["from"], rename["release"]) or rename.get("overlap")
    for change in doc["changes"]:
        assert has(fmt, change["key"], change["release"])


@pytest.mark.parametrize("fmt", sorted(GENERATORS))
def test_history_stays_small(fmt: str) -> None:
    assert (HISTORY / f"{fmt}.json").stat().st_size < 400_000


# --------------------------------------------------------------------------
# GPT-NeoX
# --------------------------------------------------------------------------


def test_neox_mlp_type_lived_from_llama_support_to_the_mlp_rework() -> None:
    assert has("neox", "mlp_type", "2023-05-02")
    assert has("neox", "mlp_type", "2024-03-10")
    assert not has("neox", "mlp_type", "v1.0")
    assert not has("neox", "mlp_type", "current")
    assert value_at("neox", "mlp_type", "default", "2023-12-26") == "regular"
    assert has("neox", "mlp_multiple_of", "current") and not has("neox", "mlp_multiple_of", "2024-03-10")


def test_neox_gas_and_save_interval_are_old_spellings() -> None:
    assert has("neox", "gas", "v1.0") and has("neox", "gas", "2024-01-26") and not has("neox", "gas", "2024-02-05")
    assert has("neox", "save_interval", "2022-02-10") and not has("neox", "save_interval", "v1.0")
    assert has("neox", "checkpoint_factor", "v1.0")
    renames = {(r["from"], r["to"]): r["release"] for r in history("neox")["renames"]}
    assert renames[("gas", "gradient_accumulation_steps")] == "2024-02-05"
    assert renames[("num_experts", "moe_num_experts")] == "2024-05-04"


def test_neox_dropout_default_changed_at_the_end_of_2023() -> None:
    assert value_at("neox", "hidden_dropout", "default", "v2.0") == 0.1
    assert value_at("neox", "hidden_dropout", "default", "current") == 0.0
    assert value_at("neox", "weight_decay", "default", "v1.0") == 0.01
    assert value_at("neox", "weight_decay", "default", "current") == 0.1


def test_neox_aliases_point_at_the_tags() -> None:
    aliases = history("neox")["aliases"]
    assert aliases["v1.0"] <= aliases["v2.0"] < "2023-04"
    assert aliases["current"] == labels("neox")[-1]
    assert value_at("neox", "num_layers", "type", "current") == "int"


# --------------------------------------------------------------------------
# VeOmni
# --------------------------------------------------------------------------


def test_veomni_mixed_precision_switch_lived_in_the_nested_layout_until_pr_627() -> None:
    key = "train.enable_mixed_precision"
    assert has("veomni", key, "#538") and has("veomni", key, "#603")
    assert not has("veomni", key, "#627")
    assert has("veomni", "train.accelerator.fsdp_config.mixed_precision.enable", "#627")
    assert has("veomni", "train.optimizer.lr", "#538") and not has("veomni", "train.lr", "#538")


def test_veomni_flat_fields_before_pr_458() -> None:
    for key in ("train.rmpad", "train.rmpad_with_pos_ids", "train.dyn_bsz_margin", "train.dyn_bsz_buffer_size"):
        assert has("veomni", key, "v0.1.6"), key
        assert not has("veomni", key, "#458"), key
    assert value_at("veomni", "train.rmpad", "default", "v0.1.6") is True
    assert has("veomni", "data.dyn_bsz_buffer_size", "#458")
    full_shard = "train.accelerator.fsdp_config.full_shard"
    assert has("veomni", "train.enable_full_shard", "#458") and has("veomni", full_shard, "#538")
    assert not has("veomni", full_shard, "current")


def test_veomni_fsdp_defaults_changed_when_fsdp1_was_dropped() -> None:
    mode = "train.accelerator.fsdp_config.fsdp_mode"
    assert value_at("veomni", mode, "default", "#538") == "ddp"
    assert value_at("veomni", mode, "default", "current") == "fsdp2"
    assert value_at("veomni", "train.init_device", "default", "v0.1.6") == "cuda"
    assert value_at("veomni", "train.init_device", "default", "current") == "meta"
    assert history("veomni")["aliases"]["v0.1.7"] == "#546"


# --------------------------------------------------------------------------
# DeepSpeed
# --------------------------------------------------------------------------


def test_deepspeed_alias_pairs_point_at_each_other() -> None:
    keys = history("deepspeed")["keys"]
    field = "zero_optimization.gather_16bit_weights_on_model_save"
    assert keys[field]["alias"] == "stage3_gather_16bit_weights_on_model_save"
    assert (
        keys["zero_optimization.stage3_gather_16bit_weights_on_model_save"]["alias_of"]
        == "gather_16bit_weights_on_model_save"
    )
    assert keys["zero_optimization.stage3_prefetch_bucket_size"]["alias_of"] == "prefetch_bucket_size"
    assert value_at("deepspeed", "zero_optimization.prefetch_bucket_size", "default", "current") == 50_000_000
    old = "zero_optimization.stage3_gather_fp16_weights_on_model_save"
    assert keys[old]["deprecated"] is True and keys[old]["new_param"] == "gather_16bit_weights_on_model_save"
    assert has("deepspeed", old, "0.3.14") and has("deepspeed", field, "0.7.0") and not has("deepspeed", field, "0.6.7")


def test_deepspeed_cpu_offload_is_the_old_spelling_of_offload_optimizer() -> None:
    keys = history("deepspeed")["keys"]
    assert has("deepspeed", "zero_optimization.cpu_offload", "0.3.0")
    assert not has("deepspeed", "zero_optimization.offload_optimizer", "0.3.14")
    assert has("deepspeed", "zero_optimization.offload_optimizer.device", "current")
    assert keys["zero_optimization.cpu_offload"]["new_param"] == "offload_optimizer"
    assert not has("deepspeed", "zero_optimization.cpu_offload_params", "0.7.0")


def test_deepspeed_defaults_that_changed() -> None:
    assert value_at("deepspeed", "gradient_clipping", "default", "0.19.2") == 0.0
    assert value_at("deepspeed", "gradient_clipping", "default", "current") == 1.0
    assert value_at("deepspeed", "fp16.initial_scale_power", "default", "0.10.0") == 16
    assert value_at("deepspeed", "scheduler.params.warmup_num_steps", "default", "current") == 1000
    assert "WarmupCosineLR" in history("deepspeed")["keys"]["scheduler.type"]["choices"]
    assert "adamw" in history("deepspeed")["keys"]["optimizer.type"]["choices"]


# --------------------------------------------------------------------------
# Cerebras Model Zoo
# --------------------------------------------------------------------------


def test_cerebras_labels_and_minor_aliases() -> None:
    order = labels("cerebras")
    assert order[0] == "1.6.0" and order[-1] == "2.10.0"
    assert order.index("2.9.0") < order.index("2.10.0")  # numeric, not text, order
    aliases = history("cerebras")["aliases"]
    assert aliases["1.9"] == "1.9.1" and aliases["2.0"] == "2.0.3" and aliases["2.10"] == "2.10.0"


def test_cerebras_optimizer_names_before_and_after_2_0() -> None:
    assert has("cerebras", "optimizer.weight_decay_rate", "1.9") and not has(
        "cerebras", "optimizer.weight_decay_rate", "2.0"
    )
    assert has("cerebras", "optimizer.weight_decay", "2.0")
    assert value_at("cerebras", "optimizer.weight_decay_rate", "default", "1.7") == 0.0
    assert value_at("cerebras", "optimizer.beta2", "default", "1.9") == 0.999
    assert has("cerebras", "optimizer.betas", "2.0") and not has("cerebras", "optimizer.beta1", "2.0")
    assert has("cerebras", "optimizer.learning_rate.*.steps", "1.9")
    assert has("cerebras", "optimizer.learning_rate.*.total_iters", "2.0")
    assert has("cerebras", "optimizer.learning_rate.alpha", "1.7")  # TensorFlow's Cosine schedule
    assert not has("cerebras", "optimizer.learning_rate.alpha", "1.9")


def test_cerebras_precision_keys_by_release() -> None:
    assert value_at("cerebras", "model.use_bfloat16", "default", "2.0") is True  # gpt2 set_defaults
    assert history("cerebras")["keys"]["model.use_bfloat16"].get("defaults_by_model", {}).get("*", False) is False
    assert has("cerebras", "model.fp16_type", "2.1") and not has("cerebras", "model.fp16_type", "2.0")
    assert has("cerebras", "model.use_rms_norm", "1.9") and not has("cerebras", "model.use_rms_norm", "2.0")
    assert value_at("cerebras", "model.norm_type", "default", "2.0") == "layernorm"
    assert history("cerebras")["keys"]["model.norm_type"]["defaults_by_model"]["t5"] == "rmsnorm"


def test_cerebras_trainer_layout_from_2_3_with_its_legacy_names() -> None:
    keys = history("cerebras")["keys"]
    assert has("cerebras", "trainer.init.loop.max_steps", "2.3") and not has(
        "cerebras", "trainer.init.loop.max_steps", "2.2"
    )
    assert keys["trainer.init.loop.max_steps"]["legacy"] == "runconfig.max_steps"
    assert keys["runconfig.checkpoint_steps"]["trainer"] == "trainer.init.checkpoint.steps"
    assert keys["trainer.init.precision.max_gradient_norm"]["legacy"] == "optimizer.max_gradient_norm"
    assert value_at("cerebras", "runconfig.checkpoint_steps", "default", "1.6") == 0
    for key in ("model.pos_scaling_factor", "model.fold_rope_consts", "model.moe", "model.mup_base_hidden_size"):
        assert has("cerebras", key, "2.4"), key
    assert "llama" in history("cerebras")["model_names"]["llama"]


def test_cerebras_family_keys_name_their_family() -> None:
    doc = history("cerebras")

    def models(key: str) -> list[str]:
        value = doc["keys"][key]["models"]
        return doc["model_sets"][value] if isinstance(value, str) else value

    assert "t5" in models("model.encoder_num_hidden_layers")
    assert "gpt2" not in models("model.encoder_num_hidden_layers")
    assert "gpt2" in models("model.use_rms_norm")


def test_cerebras_model_name_is_read_as_name_from_2_4() -> None:
    # 2.2/2.3: the DPO config's own key (the policy model's name); 2.4+: trainer/validate.py reads it as `name`
    record = history("cerebras")["keys"]["model.model_name"]
    for label in ("2.2", "2.3", "2.4", "2.10"):
        assert has("cerebras", "model.model_name", label), label
    assert not has("cerebras", "model.model_name", "2.1")
    assert record["alias_of"] == "name"
