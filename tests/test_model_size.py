"""translator/knowledge/model_size.py: parameter counts of published models from canonical values.

The canonical values of each model are filled in by hand from its hand-written config.json in
fixtures/inputs/hf/ (no config.json reader exists yet); the expected totals are the published
figures (fixtures/inputs/hf/README.md gives the source of each), which transformers reproduces when
it builds the same config on the meta device (tests/test_model_size_oracle.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from neoconv.knowledge.model_size import count_parameters, moe_layers

from conftest import ROOT

FIXTURES = ROOT / "fixtures" / "inputs" / "hf"

# Shared shapes: what a config.json of the type means in canonical fields (the class hard-wires
# the rest: see the per-type notes in fixtures/inputs/hf/README.md).
NEOX = {
    "model.position_embedding": "rotary",
    "model.activation": "gelu",
    "model.norm": "layernorm",
    "model.norm_bias": True,
    "model.attention_bias": True,
    "model.mlp_bias": True,
    "model.parallel_residual": True,
    "model.parallel_shared_norm": False,
    "model.tie_embeddings": False,
}
LLAMA = {
    "model.position_embedding": "rotary",
    "model.activation": "swiglu",
    "model.norm": "rmsnorm",
    "model.norm_bias": False,
    "model.attention_bias": False,
    "model.mlp_bias": False,
    "model.tie_embeddings": False,
}


def pythia(layers: int, hidden: int, heads: int, vocab: int = 50304) -> dict[str, Any]:
    return {
        **NEOX,
        "model.num_layers": layers,
        "model.hidden_size": hidden,
        "model.num_heads": heads,
        "model.ffn_hidden_size": 4 * hidden,
        "model.vocab_size": vocab,
        "model.max_position_embeddings": 2048,
    }


# fixture -> (canonical values, published total)
MODELS: dict[str, tuple[dict[str, Any], int]] = {
    # Pythia paper (Biderman et al. 2023), Table 1 totals with NeoX's padded vocabularies
    "pythia-70m": (pythia(6, 512, 8), 70_426_624),
    "pythia-160m": (pythia(12, 768, 12), 162_322_944),
    "pythia-410m": (pythia(24, 1024, 16), 405_334_016),
    "pythia-1b": (pythia(16, 2048, 8), 1_011_781_632),
    "pythia-1.4b": (pythia(24, 2048, 16), 1_414_647_808),
    "pythia-2.8b": (pythia(32, 2560, 32), 2_775_208_960),
    "pythia-6.9b": (pythia(32, 4096, 32, vocab=50432), 6_857_302_016),
    "pythia-12b": (pythia(36, 5120, 40, vocab=50688), 11_846_072_320),
    "llama-2-7b": (
        {
            **LLAMA,
            "model.num_layers": 32,
            "model.hidden_size": 4096,
            "model.num_heads": 32,
            "model.num_kv_heads": 32,
            "model.ffn_hidden_size": 11008,
            "model.vocab_size": 32000,
        },
        6_738_415_616,
    ),
    "llama-3.1-8b": (
        {
            **LLAMA,
            "model.num_layers": 32,
            "model.hidden_size": 4096,
            "model.num_heads": 32,
            "model.num_kv_heads": 8,
            "model.head_dim": 128,
            "model.ffn_hidden_size": 14336,
            "model.vocab_size": 128256,
        },
        8_030_261_248,
    ),
    "mistral-7b-v0.1": (
        {
            **LLAMA,
            "model.num_layers": 32,
            "model.hidden_size": 4096,
            "model.num_heads": 32,
            "model.num_kv_heads": 8,
            "model.ffn_hidden_size": 14336,
            "model.vocab_size": 32000,
            "model.sliding_window": 4096,
        },
        7_241_732_096,
    ),
    "mixtral-8x7b-v0.1": (
        {
            **LLAMA,
            "model.num_layers": 32,
            "model.hidden_size": 4096,
            "model.num_heads": 32,
            "model.num_kv_heads": 8,
            "model.ffn_hidden_size": 14336,
            "model.vocab_size": 32000,
            "model.moe_num_experts": 8,
            "model.moe_experts_per_token": 2,
            "model.moe_normalize_top_k": True,
        },
        46_702_792_704,
    ),
    # Qwen2: query/key/value biased, output projection not (hard-wired)
    "qwen2.5-7b": (
        {
            **LLAMA,
            "model.num_layers": 28,
            "model.hidden_size": 3584,
            "model.num_heads": 28,
            "model.num_kv_heads": 4,
            "model.ffn_hidden_size": 18944,
            "model.vocab_size": 152064,
            "model.attention_bias": True,
            "model.attention_output_bias": False,
        },
        7_615_616_512,
    ),
    "qwen3-8b": (
        {
            **LLAMA,
            "model.num_layers": 36,
            "model.hidden_size": 4096,
            "model.num_heads": 32,
            "model.num_kv_heads": 8,
            "model.head_dim": 128,
            "model.ffn_hidden_size": 12288,
            "model.vocab_size": 151936,
            "model.qk_norm": True,
        },
        8_190_735_360,
    ),
    "qwen3-30b-a3b": (
        {
            **LLAMA,
            "model.num_layers": 48,
            "model.hidden_size": 2048,
            "model.num_heads": 32,
            "model.num_kv_heads": 4,
            "model.head_dim": 128,
            "model.ffn_hidden_size": 6144,
            "model.vocab_size": 151936,
            "model.qk_norm": True,
            "model.moe_num_experts": 128,
            "model.moe_experts_per_token": 8,
            "model.moe_ffn_hidden_size": 768,
            "model.moe_normalize_top_k": True,
            "model.moe_layer_interval": 1,
            "model.moe_dense_layers": [],
        },
        30_532_122_624,
    ),
    # Gemma: tied, (1 + w) RMSNorm and sqrt(hidden) embedding scale change no count; tanh GELU gated
    # (gelu_pytorch_tanh: transformers 4 and 5 both run Gemma's MLP with it, whatever hidden_act says)
    "gemma-7b": (
        {
            **LLAMA,
            "model.num_layers": 28,
            "model.hidden_size": 3072,
            "model.num_heads": 16,
            "model.num_kv_heads": 16,
            "model.head_dim": 256,
            "model.ffn_hidden_size": 24576,
            "model.vocab_size": 256000,
            "model.activation": "geglu_tanh",
            "model.tie_embeddings": True,
            "model.norm_unit_offset": True,
            "model.embedding_scale_by_sqrt_hidden": True,
        },
        8_537_680_896,
    ),
    "gemma-2-9b": (
        {
            **LLAMA,
            "model.num_layers": 42,
            "model.hidden_size": 3584,
            "model.num_heads": 16,
            "model.num_kv_heads": 8,
            "model.head_dim": 256,
            "model.ffn_hidden_size": 14336,
            "model.vocab_size": 256000,
            "model.activation": "geglu_tanh",
            "model.tie_embeddings": True,
            "model.norm_unit_offset": True,
            "model.embedding_scale_by_sqrt_hidden": True,
            "model.sandwich_norm": True,
            "model.query_pre_attention_scalar": 256.0,
            "model.attention_logit_softcap": 50.0,
            "model.final_logit_softcap": 30.0,
            "model.sliding_window": 4096,
            "model.attention_layer_types": ["sliding", "full"] * 21,
        },
        9_241_705_984,
    ),
    # Gemma 3 4B (multimodal wrapper): its gemma3_text decoder (the SigLIP vision tower is not counted);
    # qk-norm and four norms a layer, 5 windowed layers (1024) to 1 global; rope_scaling linear 8
    "gemma-3-4b-it": (
        {
            **LLAMA,
            "model.num_layers": 34,
            "model.hidden_size": 2560,
            "model.num_heads": 8,
            "model.num_kv_heads": 4,
            "model.head_dim": 256,
            "model.ffn_hidden_size": 10240,
            "model.vocab_size": 262208,
            "model.activation": "geglu_tanh",
            "model.tie_embeddings": True,
            "model.norm_unit_offset": True,
            "model.embedding_scale_by_sqrt_hidden": True,
            "model.sandwich_norm": True,
            "model.qk_norm": True,
            "model.query_pre_attention_scalar": 256.0,
            "model.sliding_window": 1024,
            "model.attention_layer_types": (["sliding"] * 5 + ["full"]) * 5 + ["sliding"] * 4,
        },
        3_880_263_168,
    ),
    # OLMo 2 7B: norms after attention and after the MLP only, q/k RMSNorm over the whole projections
    "olmo-2-1124-7b": (
        {
            **LLAMA,
            "model.num_layers": 32,
            "model.hidden_size": 4096,
            "model.num_heads": 32,
            "model.num_kv_heads": 32,
            "model.ffn_hidden_size": 11008,
            "model.vocab_size": 100352,
            "model.input_norm": False,
            "model.sandwich_norm": True,
            "model.qk_norm": True,
            "model.qk_norm_span": "projection",
        },
        7_298_617_344,
    ),
    # Granite 3.1 8B: muP-style multipliers (no parameters), GQA 8, tied embeddings
    "granite-3.1-8b-base": (
        {
            **LLAMA,
            "model.num_layers": 40,
            "model.hidden_size": 4096,
            "model.num_heads": 32,
            "model.num_kv_heads": 8,
            "model.ffn_hidden_size": 12800,
            "model.vocab_size": 49155,
            "model.tie_embeddings": True,
        },
        8_170_848_256,
    ),
    # SmolLM3-3B: no RoPE in every 4th layer (no parameters either way), GQA 4, tied embeddings
    "smollm3-3b": (
        {
            **LLAMA,
            "model.num_layers": 36,
            "model.hidden_size": 2048,
            "model.num_heads": 16,
            "model.num_kv_heads": 4,
            "model.ffn_hidden_size": 11008,
            "model.vocab_size": 128256,
            "model.tie_embeddings": True,
            "model.rotary_base": 5000000.0,
            "model.nope_layers": [3, 7, 11, 15, 19, 23, 27, 31, 35],
        },
        3_075_098_624,
    ),
    "phi-3-mini-4k": (
        {
            **LLAMA,
            "model.num_layers": 32,
            "model.hidden_size": 3072,
            "model.num_heads": 32,
            "model.num_kv_heads": 32,
            "model.ffn_hidden_size": 8192,
            "model.vocab_size": 32064,
            "model.sliding_window": 2047,
        },
        3_821_079_552,
    ),
    # Falcon-7B: multi-query (one kv head), one shared LayerNorm for the parallel branches, no linear biases
    "falcon-7b": (
        {
            "model.position_embedding": "rotary",
            "model.activation": "gelu",
            "model.norm": "layernorm",
            "model.norm_bias": True,
            "model.attention_bias": False,
            "model.mlp_bias": False,
            "model.parallel_residual": True,
            "model.parallel_shared_norm": True,
            "model.tie_embeddings": True,
            "model.num_layers": 32,
            "model.hidden_size": 4544,
            "model.num_heads": 71,
            "model.num_kv_heads": 1,
            "model.ffn_hidden_size": 4 * 4544,
            "model.vocab_size": 65024,
        },
        6_921_720_704,
    ),
    # StarCoder2-7B omits tie_word_embeddings: the class default (true) ties it
    "starcoder2-7b": (
        {
            "model.position_embedding": "rotary",
            "model.activation": "gelu_tanh",
            "model.norm": "layernorm",
            "model.norm_bias": True,
            "model.attention_bias": True,
            "model.mlp_bias": True,
            "model.tie_embeddings": True,
            "model.num_layers": 32,
            "model.hidden_size": 4608,
            "model.num_heads": 36,
            "model.num_kv_heads": 4,
            "model.ffn_hidden_size": 18432,
            "model.vocab_size": 49152,
            "model.sliding_window": 4096,
        },
        7_173_923_840,
    ),
    # MPT (HF port): ALiBi, bias-free LayerNorm and linears, MLP 4 x d_model
    "mpt-7b": (
        {
            "model.position_embedding": "alibi",
            "model.activation": "gelu",
            "model.norm": "layernorm",
            "model.norm_bias": False,
            "model.attention_bias": False,
            "model.mlp_bias": False,
            "model.tie_embeddings": True,
            "model.num_layers": 32,
            "model.hidden_size": 4096,
            "model.num_heads": 32,
            "model.ffn_hidden_size": 16384,
            "model.vocab_size": 50432,
        },
        6_649_286_656,
    ),
    # BLOOM: ALiBi, a LayerNorm on the embeddings, every linear and norm biased, MLP 4H
    "bloom-7b1": (
        {
            "model.position_embedding": "alibi",
            "model.activation": "gelu_tanh",
            "model.norm": "layernorm",
            "model.norm_bias": True,
            "model.attention_bias": True,
            "model.mlp_bias": True,
            "model.embedding_norm": True,
            "model.tie_embeddings": True,
            "model.num_layers": 30,
            "model.hidden_size": 4096,
            "model.num_heads": 32,
            "model.ffn_hidden_size": 16384,
            "model.vocab_size": 250880,
        },
        7_069_016_064,
    ),
    # DeepSeek-V2-Lite: latent attention without query compression, layer 0 dense, 2 shared experts
    "deepseek-v2-lite": (
        {
            **LLAMA,
            "model.num_layers": 27,
            "model.hidden_size": 2048,
            "model.num_heads": 16,
            "model.num_kv_heads": 16,
            "model.ffn_hidden_size": 10944,
            "model.vocab_size": 102400,
            "model.mla_kv_lora_rank": 512,
            "model.mla_qk_nope_head_dim": 128,
            "model.mla_qk_rope_head_dim": 64,
            "model.mla_v_head_dim": 128,
            "model.moe_num_experts": 64,
            "model.moe_experts_per_token": 6,
            "model.moe_ffn_hidden_size": 1408,
            "model.moe_shared_experts": 2,
            "model.moe_first_dense_layers": 1,
            "model.moe_normalize_top_k": False,
        },
        15_706_484_224,
    ),
}


def test_every_fixture_has_a_count() -> None:
    assert {p.stem for p in FIXTURES.glob("*.json")} == set(MODELS)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_published_parameter_count(name: str) -> None:
    values, published = MODELS[name]
    assert count_parameters(values).total == published


@pytest.mark.parametrize("name", sorted(MODELS))
def test_hand_filled_values_match_the_fixture(name: str) -> None:
    """The numbers typed above are the fixture's (a typo in either would count another model)."""
    config = json.loads((FIXTURES / f"{name}.json").read_text())
    config = {**config, **config.get("text_config", {})}  # a multimodal wrapper: its decoder's numbers
    values, _ = MODELS[name]
    spelled = {
        "model.num_layers": ("num_hidden_layers", "n_layer", "n_layers"),
        "model.hidden_size": ("hidden_size", "d_model"),
        "model.num_heads": ("num_attention_heads", "n_head", "n_heads"),
        "model.num_kv_heads": ("num_key_value_heads",),
        "model.head_dim": ("head_dim",),
        "model.ffn_hidden_size": ("intermediate_size",),
        "model.vocab_size": ("vocab_size",),
        "model.sliding_window": ("sliding_window",),
        "model.moe_num_experts": ("num_local_experts", "num_experts", "n_routed_experts"),
        "model.moe_experts_per_token": ("num_experts_per_tok",),
        "model.moe_ffn_hidden_size": ("moe_intermediate_size",),
        "model.moe_shared_experts": ("n_shared_experts",),
        "model.moe_first_dense_layers": ("first_k_dense_replace",),
        "model.mla_kv_lora_rank": ("kv_lora_rank",),
        "model.mla_qk_nope_head_dim": ("qk_nope_head_dim",),
        "model.mla_qk_rope_head_dim": ("qk_rope_head_dim",),
        "model.mla_v_head_dim": ("v_head_dim",),
        "model.tie_embeddings": ("tie_word_embeddings",),
    }
    checked = 0
    for field, keys in spelled.items():
        present = [k for k in keys if k in config and config[k] is not None]
        if field in values and present:
            assert values[field] == config[present[0]], f"{name}: {field} {values[field]} vs {present[0]}"
            checked += 1
    assert checked >= 4


def test_pythia_1_4b_breakdown() -> None:
    """Pythia-1.4B by hand: 2 x 50304 x 2048 embeddings + 24 blocks of 50,358,272 + the final LayerNorm."""
    count = count_parameters(MODELS["pythia-1.4b"][0])
    assert count.embeddings == 50304 * 2048 and count.head == 50304 * 2048
    assert count.layers == 24 * 50_358_272 and count.final_norm == 2 * 2048
    assert count.idle_experts == 0 and count.active == count.total


def test_active_parameters_of_mixtures_of_experts() -> None:
    # Mixtral: "46.7B total, 12.9B active"; Qwen3-30B-A3B: "3.3B activated"
    assert count_parameters(MODELS["mixtral-8x7b-v0.1"][0]).active == 12_879_925_248
    assert count_parameters(MODELS["qwen3-30b-a3b"][0]).active == 3_353_032_704


def test_moe_layer_choice() -> None:
    base = {**MODELS["mixtral-8x7b-v0.1"][0], "model.num_layers": 8}
    assert moe_layers(base) == list(range(8))
    # HF Qwen decoder_sparse_step 2 = layers 1, 3, 5, 7; NeoX moe_expert_interval 2 = layers 0, 2, 4, 6
    assert moe_layers({**base, "model.moe_first_dense_layers": 1, "model.moe_layer_interval": 2}) == [1, 3, 5, 7]
    assert moe_layers({**base, "model.moe_layer_interval": 2}) == [0, 2, 4, 6]
    assert moe_layers({**base, "model.moe_first_dense_layers": 3, "model.moe_dense_layers": [5]}) == [3, 4, 6, 7]
    assert moe_layers(MODELS["deepseek-v2-lite"][0]) == list(range(1, 27))
    assert moe_layers(MODELS["llama-2-7b"][0]) == []


# Small shapes whose counts are written out term by term (H hidden, V vocab, I MLP width).
SMALL = {
    "model.vocab_size": 10,
    "model.hidden_size": 8,
    "model.num_layers": 1,
    "model.num_heads": 2,
    "model.ffn_hidden_size": 16,
    "model.position_embedding": "rotary",
    "model.activation": "gelu",
    "model.norm": "layernorm",
    "model.norm_bias": True,
    "model.attention_bias": False,
    "model.mlp_bias": False,
    "model.tie_embeddings": True,
}
SMALL_TOTAL = 10 * 8 + (4 * 8 * 8) + (2 * 8 * 16) + 2 * (2 * 8) + 2 * 8  # emb, qkvo, MLP, 2 norms, final norm


@pytest.mark.parametrize(
    "change, delta",
    [
        ({}, 0),
        ({"model.tie_embeddings": False}, 10 * 8),
        ({"model.lm_head_bias": True}, 10),
        ({"model.position_embedding": "learned", "model.max_position_embeddings": 32}, 32 * 8),
        ({"model.embedding_norm": True}, 2 * 8),
        ({"model.attention_bias": True}, 4 * 8),
        ({"model.attention_bias": True, "model.attention_output_bias": False}, 3 * 8),
        ({"model.mlp_bias": True}, 16 + 8),
        ({"model.activation": "swiglu"}, 8 * 16),  # a third matrix
        ({"model.activation": "swiglu", "model.mlp_bias": True}, 8 * 16 + 2 * 16 + 8),
        ({"model.norm_bias": False}, -3 * 8),
        ({"model.norm": "rmsnorm", "model.norm_bias": False}, -3 * 8),
        ({"model.norm": "non_parametric_layernorm"}, -3 * 2 * 8),
        ({"model.norm": "scalenorm"}, -3 * 2 * 8 + 3),
        ({"model.sandwich_norm": True}, 2 * 2 * 8),
        ({"model.input_norm": False, "model.sandwich_norm": True}, 0),  # OLMo 2: the two norms after, none before
        ({"model.input_norm": False}, -2 * 2 * 8),
        ({"model.parallel_residual": True, "model.parallel_shared_norm": True}, -2 * 8),
        ({"model.parallel_residual": True, "model.parallel_shared_norm": False}, 0),
        ({"model.num_kv_heads": 1}, -2 * 8 * 4),  # k and v shrink to one 4-wide head
        ({"model.head_dim": 8}, 4 * 8 * 8),  # 2 heads x 8 = 16-wide q, k, v, o
        ({"model.qk_norm": True}, 2 * 2 * 4),  # q and k LayerNorm over head_dim 4
        ({"model.qk_norm": True, "model.qk_norm_span": "projection"}, 2 * 2 * 8),  # over 2 heads x 4 each
        (
            {"model.qk_norm": True, "model.qk_norm_span": "projection", "model.num_kv_heads": 1},
            2 * 8 + 2 * 4 - 2 * 8 * 4,
        ),  # q over 8, k over one 4-wide head; k and v shrink
        ({"model.num_layers": 3}, 2 * ((4 * 8 * 8) + (2 * 8 * 16) + 2 * (2 * 8))),
    ],
)
def test_each_piece_counts(change: dict[str, Any], delta: int) -> None:
    assert count_parameters({**SMALL, **change}).total == SMALL_TOTAL + delta


def test_mixture_of_experts_pieces() -> None:
    moe = {**SMALL, "model.moe_num_experts": 4, "model.moe_experts_per_token": 2, "model.moe_ffn_hidden_size": 6}
    expert = 2 * 8 * 6
    dense = 2 * 8 * 16
    assert count_parameters(moe).total == SMALL_TOTAL - dense + 4 * expert + 4 * 8  # experts + router
    assert count_parameters(moe).idle_experts == 2 * expert
    shared = {**moe, "model.moe_shared_experts": 2}
    assert count_parameters(shared).total == count_parameters(moe).total + 2 * expert
    wide = {**shared, "model.moe_shared_ffn_hidden_size": 10, "model.moe_shared_expert_gate": True}
    assert count_parameters(wide).total == count_parameters(moe).total + 2 * (2 * 8 * 10) + 8
    # every layer is MoE here: biases land on the four experts (the router has none)
    assert count_parameters({**moe, "model.mlp_bias": True}).total == count_parameters(moe).total + 4 * (6 + 8)


def test_latent_attention_with_query_compression() -> None:
    mla = {
        **SMALL,
        "model.norm": "rmsnorm",
        "model.norm_bias": False,
        "model.mla_kv_lora_rank": 6,
        "model.mla_q_lora_rank": 5,
        "model.mla_qk_nope_head_dim": 3,
        "model.mla_qk_rope_head_dim": 2,
        "model.mla_v_head_dim": 4,
    }
    query = 8 * 5 + 5 + 5 * 2 * (3 + 2)
    key_value = 8 * (6 + 2) + 6 + 6 * 2 * (3 + 4)
    out = 2 * 4 * 8
    norms = 10 * 8 + 2 * 8 + 8 + 2 * 8 * 16  # embeddings, two block norms, final norm, MLP
    assert count_parameters(mla).total == query + key_value + out + norms


@pytest.mark.parametrize(
    "missing",
    [
        "model.vocab_size",
        "model.hidden_size",
        "model.num_layers",
        "model.num_heads",
        "model.activation",
        "model.norm",
        "model.attention_bias",
        "model.mlp_bias",
        "model.tie_embeddings",
        "model.ffn_hidden_size",
        "model.position_embedding",
        "model.norm_bias",
    ],
)
def test_a_missing_field_is_named(missing: str) -> None:
    values = {k: v for k, v in SMALL.items() if k != missing}
    with pytest.raises(ValueError, match=missing.replace(".", r"\.")):
        count_parameters(values)


def test_uneven_heads_need_an_explicit_head_dim() -> None:
    with pytest.raises(ValueError, match="head_dim"):
        count_parameters({**SMALL, "model.num_heads": 3})
    assert count_parameters({**SMALL, "model.num_heads": 3, "model.head_dim": 4}).total > 0
    with pytest.raises(ValueError, match="parallel_shared_norm"):
        count_parameters({**SMALL, "model.parallel_residual": True})
    with pytest.raises(ValueError, match="max_position_embeddings"):
        count_parameters({**SMALL, "model.position_embedding": "learned"})
