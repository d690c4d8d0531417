"""The catalogue's fields for today's models (schemas/canonical.yaml): bounds, enums, relations."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from neoconv.knowledge.catalogue import AtMost, Length, Relation, broken_relations, catalogue, constraints, relations
from neoconv.core.errors import MappingTableError

from conftest import ROOT

# field -> (values it takes, values it refuses)
FIELDS: dict[str, tuple[list[Any], list[Any]]] = {
    "model.head_dim": ([64, 256], [0, -1, 64.5, "64"]),
    "model.num_kv_heads": ([1, 8], [0]),
    "model.attention_bias": ([True, False], [1, "yes"]),
    "model.attention_output_bias": ([False], [0]),
    "model.mlp_bias": ([True], ["true"]),
    "model.lm_head_bias": ([True], [1]),
    "model.tie_embeddings": ([True], [1]),
    "model.qk_norm": ([True], ["on"]),
    "model.qk_norm_bias": ([True, False], [1, "no"]),
    "model.position_embedding_offset": ([0, 2], [-1, 1.5]),
    "model.mla_kv_lora_rank": ([512], [0]),
    "model.mla_q_lora_rank": ([1536], [0]),
    "model.mla_qk_nope_head_dim": ([128], [0]),
    "model.mla_qk_rope_head_dim": ([64], [0]),
    "model.mla_v_head_dim": ([128], [0]),
    "model.attention_scaling": (["inverse_sqrt_head_dim", "inverse_head_dim"], ["sqrt", "1/d"]),
    "model.query_pre_attention_scalar": ([256.0, 224], [0.0, -1.0]),
    "model.attention_logits_multiplier": ([1.0, 0.5], [0.0]),
    "model.attention_logit_softcap": ([50.0], [0.0, -50.0]),
    "model.final_logit_softcap": ([30.0], [0.0]),
    "model.embedding_multiplier": ([14.6], [0.0, -1.0]),
    "model.embedding_scale_by_sqrt_hidden": ([True], [1.0]),
    "model.embedding_norm": ([True], ["no"]),
    "model.norm_unit_offset": ([True], [1]),
    "model.sandwich_norm": ([False], [0]),
    "model.rope_scaling_type": (["linear", "dynamic", "yarn", "llama3", "longrope"], ["YaRN", "ntk", "default", "su"]),
    "model.rope_scaling_factor": ([8.0, 40], [0.0, -2.0]),
    "model.rope_original_max_positions": ([8192, 4096], [0, 8192.5]),
    "model.rope_low_freq_factor": ([1.0], [0.0]),
    "model.rope_high_freq_factor": ([4.0], [-4.0]),
    "model.rope_yarn_beta_fast": ([32.0], [0.0]),
    "model.rope_yarn_beta_slow": ([1.0], [0.0]),
    "model.rope_yarn_mscale": ([0.707, 0.0], [-0.1]),
    "model.rope_yarn_mscale_all_dim": ([0.707], [-1.0]),
    "model.rope_yarn_truncate": ([False], ["false"]),
    "model.rope_attention_factor": ([1.19], [0.0]),
    "model.rope_short_factor": ([[1.0, 1.05]], [[1.0, 0.0], [1.0, "x"], [1.0, None], 1.0]),
    "model.rope_long_factor": ([[1.0, 47.7]], [[-1.0]]),
    "model.sliding_window": ([4096, 1], [0, -4096]),
    "model.attention_layer_types": ([["sliding", "full"], []], [["sliding_attention"], ["global"], "sliding", [None]]),
    "model.sliding_window_rotary_base": ([10000.0], [0.0]),
    "model.moe_num_experts": ([8, 1], [0]),
    "model.moe_experts_per_token": ([2], [0]),
    "model.moe_ffn_hidden_size": ([1408], [0]),
    "model.moe_shared_experts": ([0, 2], [-1]),
    "model.moe_shared_ffn_hidden_size": ([5632], [0]),
    "model.moe_shared_expert_gate": ([True], [1]),
    "model.moe_normalize_top_k": ([True], ["true"]),
    "model.moe_router_scoring": (["softmax", "sigmoid", "sinkhorn"], ["topk", "greedy"]),
    "model.moe_aux_loss_coef": ([0.0, 0.02], [-0.01]),
    "model.moe_z_loss_coef": ([0.001], [-0.001]),
    "model.moe_first_dense_layers": ([0, 3], [-1]),
    "model.moe_layer_interval": ([1, 2], [0]),
    "model.moe_dense_layers": ([[], [0, 5]], [[-1], [1.5]]),
    "model.mup_base_hidden_size": ([256], [0]),
    "model.mup_base_ffn_hidden_size": ([682.65], [0.0]),
    "model.output_logits_multiplier": ([2.22], [0.0]),
    "model.mup_output_logits_scaling": (["width", "sqrt_width"], ["d", "sqrt"]),
    "model.input_norm": ([False, True], [0, "no"]),
    "model.residual_multiplier": ([0.22, 1.0], [0.0, -1.0]),
    "model.qk_norm_span": (["head", "projection", "head_weights"], ["per_head", "whole"]),
    "model.nope_layers": ([[], [3, 7, 11]], [[-1], [1.5], ["3"]]),
}

FAMILIES = [
    "gpt2",
    "gptj",
    "gpt-neox",
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "gemma",
    "gemma2",
    "gemma3",
    "phi3",
    "falcon",
    "starcoder",
    "starcoder2",
    "mpt",
    "bloom",
    "jais",
    "deepseek_v2",
    "deepseek_v3",
    "gpt_oss",
    "seed_oss",
    "olmo2",
    "granite",
    "smollm3",
    "internlm3",
    "iquestcoder",
    "helium",
    "arcee",
    "jais2",
    "glm",
    "glm4",
    "ministral",
    "hunyuan_v1_dense",
    "ernie4_5",
    "olmoe",
    "granitemoe",
    "phi",
    "olmo3",
    "flex_olmo",
    "minimax_m2",
    "vaultgemma",
    "cohere",
    "olmo",
    "nemotron",
    "gpt_neo",
    "stablelm",
    "opt",
    "cohere2",
    "dbrx",
    "glm4_moe",
]


def test_the_catalogue_loads_with_every_model_field() -> None:
    fields = catalogue()
    assert set(FIELDS) <= set(fields)
    for name in FIELDS:
        assert len(fields[name].doc) > 20, f"{name} needs a line of meaning"


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_bounds_and_enums(name: str) -> None:
    field = catalogue()[name]
    good, bad = FIELDS[name]
    for value in good:
        field.check(value)
    for value in bad:
        with pytest.raises(ValueError):
            field.check(value)


def test_integers_read_as_floats_where_a_float_is_meant() -> None:
    assert catalogue()["model.rope_scaling_factor"].check(8) == (8.0, "")
    assert catalogue()["model.head_dim"].check(128.0) == (128, "")


def test_model_families() -> None:
    enum = catalogue()["model.family"].enum
    assert list(enum) == FAMILIES  # the original five keep their spelling and come first
    with pytest.raises(ValueError, match="expected one of"):
        catalogue()["model.family"].check("gpt_neox")  # the catalogue spells it gpt-neox


def test_relations_load_with_their_kinds() -> None:
    found = constraints()
    assert [type(c) for c in found] == [Relation, Relation, AtMost, Length]
    assert [c.fields for c in found] == [
        ("model.num_heads", "model.hidden_size"),
        ("model.num_kv_heads", "model.num_heads"),
        ("model.moe_experts_per_token", "model.moe_num_experts"),
        ("model.attention_layer_types", "model.num_layers"),
    ]
    assert relations() == tuple(found[:2])  # what the reader checks after each read


@pytest.mark.parametrize(
    "values, broken",
    [
        ({"model.hidden_size": 4096, "model.num_heads": 32}, []),
        ({"model.hidden_size": 4544, "model.num_heads": 71}, []),  # Falcon-7B: 64 each
        (
            {"model.hidden_size": 100, "model.num_heads": 8},
            ["model.hidden_size=100 is not divisible by model.num_heads=8"],
        ),
        ({"model.hidden_size": 100, "model.num_heads": 8, "model.head_dim": 16}, []),  # an explicit head size
        ({"model.hidden_size": 100, "model.num_heads": 8, "model.attention_kind": "mamba"}, []),
        ({"model.num_heads": 32, "model.num_kv_heads": 8}, []),
        (
            {"model.num_heads": 32, "model.num_kv_heads": 5},
            ["model.num_heads=32 is not divisible by model.num_kv_heads=5"],
        ),
        ({"model.moe_num_experts": 8, "model.moe_experts_per_token": 8}, []),
        (
            {"model.moe_num_experts": 8, "model.moe_experts_per_token": 9},
            ["model.moe_experts_per_token=9 is more than model.moe_num_experts=8"],
        ),
        ({"model.moe_experts_per_token": 9}, []),  # nothing to compare with
        ({"model.attention_layer_types": ["sliding", "full"] * 21, "model.num_layers": 42}, []),
        (
            {"model.attention_layer_types": ["sliding", "full"], "model.num_layers": 42},
            ["model.attention_layer_types has 2 entries but model.num_layers=42"],
        ),
        (
            {"model.hidden_size": 100, "model.num_heads": 8, "model.num_kv_heads": 3},
            [
                "model.hidden_size=100 is not divisible by model.num_heads=8",
                "model.num_heads=8 is not divisible by model.num_kv_heads=3",
            ],
        ),
    ],
)
def test_broken_relations(values: dict[str, Any], broken: list[str]) -> None:
    got = [reason for _, reason in broken_relations(values)]
    assert len(got) == len(broken)
    for reason, start in zip(got, broken):
        assert reason.startswith(start) and "(" in reason  # the why follows


def test_relation_typos_are_table_errors(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relation the catalogue cannot check is refused when the catalogue loads."""
    import neoconv.knowledge.catalogue as module

    original = (ROOT / "schemas" / "canonical.yaml").read_text()
    bad_relations = [
        "  - {at_most: [model.moe_experts_per_token, model.moe_nm_experts], why: x}\n",
        "  - {length: [model.num_layers, model.num_layers], why: x}\n",
        "  - {at_most: [model.moe_experts_per_token, model.moe_num_experts], why: x, unless_given: [model.head_dim]}\n",
        "  - {divides: [model.num_heads, model.hidden_size], why: x, unless_given: [model.head_dm]}\n",
        "  - {divides: [model.num_heads, model.hidden_size], at_most: [model.num_heads, model.hidden_size], why: x}\n",
    ]
    for line in bad_relations:
        folder = tmp_path / str(bad_relations.index(line)) / "schemas"
        folder.mkdir(parents=True)
        (folder / "canonical.yaml").write_text(original.replace("relations:\n", "relations:\n" + line, 1))
        monkeypatch.setattr(module, "data_dir", lambda name, folder=folder: folder)
        module.catalogue.cache_clear()
        module.constraints.cache_clear()
        try:
            with pytest.raises(MappingTableError):
                module.constraints()
        finally:
            module.catalogue.cache_clear()
            module.constraints.cache_clear()
    monkeypatch.undo()
    assert len(module.constraints()) == 4


def test_an_explicit_head_dim_lifts_the_heads_relation_on_read(tmp_path: Any) -> None:
    """The reader's relation check sees an explicit head size (here given by --set)."""
    src = ROOT / "fixtures" / "inputs" / "neox" / "llama-1b.yml"
    base = [
        sys.executable,
        "-m",
        "neoconv",
        "neox2cerebras",
        str(src),
        "--set",
        "model.num_heads=30",
        "--set",
        "model.num_kv_heads=5",
    ]
    refused = subprocess.run([*base, "-o", str(tmp_path / "a.yaml")], capture_output=True, text=True, cwd=ROOT)
    assert refused.returncode == 2 and "not divisible by --set model.num_heads=30" in refused.stderr
    assert not (tmp_path / "a.yaml").exists()
    lifted = subprocess.run(
        [*base, "--set", "model.head_dim=64", "-o", str(tmp_path / "b.yaml")], capture_output=True, text=True, cwd=ROOT
    )
    assert lifted.returncode == 0, lifted.stderr
    assert "attention_inner_dim: 1920" in (tmp_path / "b.yaml").read_text()  # 30 heads x 64: Cerebras holds it
