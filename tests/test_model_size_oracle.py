"""Oracle tier: transformers builds each model on the meta device and counts its parameters; the
count must be translator/knowledge/model_size.py's from the hand-filled canonical values.

Covers every fixture in fixtures/inputs/hf/ (the canonical values of tests/test_model_size.py) and
small variants that switch on what the published models leave off (biases, explicit head_dim,
query compression, shared-expert gates, sparse layer steps, learned positions, an output bias,
Falcon's new decoder). Runs tests/oracle_checks/check_hf.py (`count` jobs) with the `hf-torch`
oracle's interpreter (tests/oracle.py), in one process for all models.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import oracle
import pytest

from neoconv.knowledge.model_size import count_parameters

from test_model_size import FIXTURES, LLAMA, MODELS

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, oracle.Verdict]:
    """Every fixture and variant, built by transformers in one run of the check program."""
    why = oracle.unavailable("hf-torch")
    if why:
        pytest.skip(why)
    folder = tmp_path_factory.mktemp("variants")
    jobs = [{"id": name, "files": [decoder(name, folder)], "count": True} for name in sorted(MODELS)]
    for name, (model_type, config, _) in sorted(VARIANTS.items()):
        path = folder / f"{name}.json"
        path.write_text(json.dumps({"model_type": model_type, **config}))
        jobs.append({"id": name, "files": [str(path)], "count": True})
    verdicts = oracle.run("hf-torch", jobs)
    failed = {k: v.error for k, v in verdicts.items() if not v.accepted}
    assert not failed, f"transformers did not build: {failed}"
    return verdicts


def decoder(name: str, folder: Path) -> str:
    """The fixture, or the decoder of a multimodal one (its text_config: what neoconv reads and counts;
    AutoModelForCausalLM would build the vision tower too)."""
    config = json.loads((FIXTURES / f"{name}.json").read_text())
    if "text_config" not in config:
        return str(FIXTURES / f"{name}.json")
    path = folder / f"{name}.text.json"
    path.write_text(
        json.dumps(
            {k: v for k, v in config.items() if k not in ("text_config", "vision_config", "architectures")}
            | config["text_config"]
        )
    )
    return str(path)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_fixture_count_is_what_transformers_builds(name: str, built: dict[str, oracle.Verdict]) -> None:
    assert built[name].values["parameters"] == count_parameters(MODELS[name][0]).total


SMALL = {"vocab_size": 101, "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 8}
BASE = {"model.vocab_size": 101, "model.hidden_size": 64, "model.num_layers": 4, "model.num_heads": 8}

# name -> (model_type, config.json values, canonical values)
VARIANTS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "llama-biases-head-dim": (
        "llama",
        {
            **SMALL,
            "num_key_value_heads": 2,
            "head_dim": 16,
            "intermediate_size": 96,
            "attention_bias": True,
            "mlp_bias": True,
            "tie_word_embeddings": True,
        },
        {
            **LLAMA,
            **BASE,
            "model.num_kv_heads": 2,
            "model.head_dim": 16,
            "model.ffn_hidden_size": 96,
            "model.attention_bias": True,
            "model.mlp_bias": True,
            "model.tie_embeddings": True,
        },
    ),
    "qwen2-moe-shared-gate-sparse-step": (
        "qwen2_moe",
        {
            **SMALL,
            "num_key_value_heads": 2,
            "intermediate_size": 96,
            "moe_intermediate_size": 32,
            "num_experts": 6,
            "num_experts_per_tok": 2,
            "shared_expert_intermediate_size": 80,
            "decoder_sparse_step": 2,
            "mlp_only_layers": [3],
            "qkv_bias": True,
        },
        {
            **LLAMA,
            **BASE,
            "model.num_kv_heads": 2,
            "model.ffn_hidden_size": 96,
            "model.moe_ffn_hidden_size": 32,
            "model.moe_num_experts": 6,
            "model.moe_experts_per_token": 2,
            "model.moe_shared_experts": 1,
            "model.moe_shared_ffn_hidden_size": 80,
            "model.moe_shared_expert_gate": True,
            "model.moe_first_dense_layers": 1,
            "model.moe_layer_interval": 2,
            "model.moe_dense_layers": [3],
            "model.attention_bias": True,
            "model.attention_output_bias": False,
        },
    ),
    "qwen3-moe-every-third": (
        "qwen3_moe",
        {
            **SMALL,
            "num_key_value_heads": 4,
            "head_dim": 16,
            "intermediate_size": 96,
            "moe_intermediate_size": 24,
            "num_experts": 5,
            "num_experts_per_tok": 3,
            "decoder_sparse_step": 3,
        },
        {
            **LLAMA,
            **BASE,
            "model.num_kv_heads": 4,
            "model.head_dim": 16,
            "model.ffn_hidden_size": 96,
            "model.moe_ffn_hidden_size": 24,
            "model.moe_num_experts": 5,
            "model.moe_experts_per_token": 3,
            "model.moe_first_dense_layers": 2,
            "model.moe_layer_interval": 3,
            "model.qk_norm": True,
        },
    ),
    "gemma3-qk-norm-sandwich": (
        "gemma3_text",
        {**SMALL, "num_key_value_heads": 4, "head_dim": 32, "intermediate_size": 96},
        {
            **LLAMA,
            **BASE,
            "model.num_kv_heads": 4,
            "model.head_dim": 32,
            "model.ffn_hidden_size": 96,
            "model.activation": "geglu",
            "model.tie_embeddings": True,
            "model.qk_norm": True,
            "model.sandwich_norm": True,
        },
    ),
    "deepseek-v3-query-latent": (
        "deepseek_v3",
        {
            **SMALL,
            "num_key_value_heads": 8,
            "intermediate_size": 40,
            "moe_intermediate_size": 12,
            "n_routed_experts": 4,
            "num_experts_per_tok": 2,
            "n_shared_experts": 2,
            "first_k_dense_replace": 1,
            "n_group": 1,
            "topk_group": 1,
            "q_lora_rank": 24,
            "kv_lora_rank": 16,
            "qk_nope_head_dim": 8,
            "qk_rope_head_dim": 4,
            "v_head_dim": 8,
        },
        {
            **LLAMA,
            **BASE,
            "model.ffn_hidden_size": 40,
            "model.moe_ffn_hidden_size": 12,
            "model.moe_num_experts": 4,
            "model.moe_experts_per_token": 2,
            "model.moe_shared_experts": 2,
            "model.moe_first_dense_layers": 1,
            "model.mla_q_lora_rank": 24,
            "model.mla_kv_lora_rank": 16,
            "model.mla_qk_nope_head_dim": 8,
            "model.mla_qk_rope_head_dim": 4,
            "model.mla_v_head_dim": 8,
            "model.moe_router_scoring": "sigmoid",
        },
    ),
    "gpt2-learned-positions": (
        "gpt2",
        {"vocab_size": 101, "n_embd": 64, "n_layer": 4, "n_head": 8, "n_positions": 128},
        {
            **BASE,
            "model.position_embedding": "learned",
            "model.max_position_embeddings": 128,
            "model.activation": "gelu_tanh",
            "model.norm": "layernorm",
            "model.norm_bias": True,
            "model.attention_bias": True,
            "model.mlp_bias": True,
            "model.tie_embeddings": True,
            "model.ffn_hidden_size": 256,
        },
    ),
    "gptj-output-bias": (
        "gptj",
        {"vocab_size": 101, "n_embd": 64, "n_layer": 4, "n_head": 8, "rotary_dim": 4},
        {
            **BASE,
            "model.position_embedding": "rotary",
            "model.activation": "gelu_tanh",
            "model.norm": "layernorm",
            "model.norm_bias": True,
            "model.attention_bias": False,
            "model.mlp_bias": True,
            "model.tie_embeddings": False,
            "model.parallel_residual": True,
            "model.parallel_shared_norm": True,
            "model.lm_head_bias": True,
            "model.ffn_hidden_size": 256,
        },
    ),
    "falcon-new-decoder": (
        "falcon",
        {**SMALL, "new_decoder_architecture": True, "num_kv_heads": 2, "bias": True, "ffn_hidden_size": 100},
        {
            **BASE,
            "model.position_embedding": "rotary",
            "model.activation": "gelu",
            "model.norm": "layernorm",
            "model.norm_bias": True,
            "model.attention_bias": True,
            "model.mlp_bias": True,
            "model.tie_embeddings": True,
            "model.parallel_residual": True,
            "model.parallel_shared_norm": False,
            "model.num_kv_heads": 2,
            "model.ffn_hidden_size": 100,
        },
    ),
    "starcoder2-untied-no-bias": (
        "starcoder2",
        {**SMALL, "num_key_value_heads": 2, "intermediate_size": 96, "use_bias": False, "tie_word_embeddings": False},
        {
            **BASE,
            "model.position_embedding": "rotary",
            "model.activation": "gelu_tanh",
            "model.norm": "layernorm",
            "model.norm_bias": True,
            "model.attention_bias": False,
            "model.mlp_bias": False,
            "model.tie_embeddings": False,
            "model.num_kv_heads": 2,
            "model.ffn_hidden_size": 96,
        },
    ),
    "gpt-neox-sequential-untied": (
        "gpt_neox",
        {**SMALL, "intermediate_size": 96, "use_parallel_residual": False, "attention_bias": False},
        {
            **BASE,
            "model.position_embedding": "rotary",
            "model.activation": "gelu",
            "model.norm": "layernorm",
            "model.norm_bias": True,
            "model.attention_bias": False,
            "model.mlp_bias": True,
            "model.tie_embeddings": False,
            "model.parallel_residual": False,
            "model.ffn_hidden_size": 96,
        },
    ),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_count_is_what_transformers_builds(name: str, built: dict[str, oracle.Verdict]) -> None:
    assert built[name].values["parameters"] == count_parameters(VARIANTS[name][2]).total
