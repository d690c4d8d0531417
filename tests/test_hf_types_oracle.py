"""Oracle tier: every model type mappings/hf.yaml maps, built by transformers on the meta device.

For each type, a small config.json of that class (every size its table has a key for set small, and
for some types a variant that switches on what the small one leaves off) is read by neoconv and
built by transformers (AutoModelForCausalLM.from_config under torch.device("meta")); the parameter
count translator/model_size.py gives for what neoconv read must be what transformers builds. A type
added to the table is covered with no edit here: its keys pick the sizes. Runs
tests/oracle_checks/check_hf.py (`count` jobs) with the `hf-torch` oracle (tests/oracle.py), one process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import oracle
import pytest

from neoconv.api import read_ir
from neoconv.formats.hf import model_types as hf_types
from neoconv.knowledge.model_size import count_parameters

from test_hf_types import GPT_OSS_20B
from test_hf_types_more import COMMAND_R7B, DBRX, GLM_4_5_AIR, GPT_NEO_1_3B, OPT_125M, STABLELM_2_1_6B, STARCODER

pytestmark = pytest.mark.oracle

# canonical field -> a small value (the class's key for it comes from its table)
SIZES = {
    "model.vocab_size": 101,
    "model.hidden_size": 64,
    "model.num_layers": 4,
    "model.num_heads": 8,
    "model.num_kv_heads": 4,
    "model.ffn_hidden_size": 96,
    "model.moe_num_experts": 6,
    "model.moe_experts_per_token": 2,
    "model.moe_ffn_hidden_size": 32,
    "model.moe_shared_ffn_hidden_size": 48,
    "model.moe_shared_experts": 1,
    "model.mla_kv_lora_rank": 16,
    "model.mla_q_lora_rank": 24,
    "model.mla_qk_nope_head_dim": 8,
    "model.mla_qk_rope_head_dim": 4,
    "model.mla_v_head_dim": 8,
    "model.max_position_embeddings": 256,
}
# what a type needs beside its sizes to build small (a key the sizes above do not reach, a class check)
EXTRA: dict[str, dict[str, Any]] = {
    "deepseek_v2": {"n_group": 1, "topk_group": 1, "first_k_dense_replace": 1},
    "deepseek_v3": {"n_group": 1, "topk_group": 1, "first_k_dense_replace": 1},
    "gptj": {"rotary_dim": 4},
    "dbrx": {
        "attn_config": {"kv_n_heads": 4, "rope_theta": 10000.0}
    },  # 5.23's DbrxAttention reads attn_config.rope_theta
    "gpt_neo": {"attention_types": [[["global", "local"], 2]]},  # GPTNeoConfig: one kind per layer (24 by default)
    "helium": {"head_dim": 8},  # its o_proj reads hidden_size features: heads x head_dim must be hidden_size
    "falcon": {"new_decoder_architecture": True, "num_kv_heads": 2},
    "qwen2_moe": {"decoder_sparse_step": 2, "mlp_only_layers": [3]},
    "qwen3_moe": {"decoder_sparse_step": 3},
}
# further builds of a type: name -> (type, config.json values over its small config)
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "gpt-oss-20b": ("gpt_oss", GPT_OSS_20B),  # 20,914,757,184 (tests/test_hf_types.py)
    "gpt-oss-no-attention-bias": ("gpt_oss", {"attention_bias": False}),
    "falcon-multi-query-unbiased": ("falcon", {"multi_query": True, "parallel_attn": True, "bias": False}),
    "seed-oss-output-bias": ("seed_oss", {"attention_out_bias": True, "attention_bias": False}),
    "glm-partial-rotary": ("glm", {"partial_rotary_factor": 0.25, "attention_bias": False}),
    "cohere-qk-norm-head-weights": ("cohere", {"use_qk_norm": True, "num_key_value_heads": 2}),
    "olmo-clip": ("olmo", {"clip_qkv": 8.0, "attention_bias": True}),
    "olmoe-normalised-biased": ("olmoe", {"norm_topk_prob": True, "attention_bias": True}),
    "phi-qk-layernorm-gqa": ("phi", {"qk_layernorm": True, "num_key_value_heads": 2}),
    "nemotron-biased": ("nemotron", {"attention_bias": True, "mlp_bias": True}),
    "starcoder-15b": ("gpt_bigcode", STARCODER),  # 15,517,456,384 (tests/test_hf_types_more.py)
    "starcoder-multi-head": ("gpt_bigcode", {"multi_query": False}),
    "gpt-neo-1.3b": ("gpt_neo", GPT_NEO_1_3B),  # 1,315,575,808 (tests/test_hf_types_more.py)
    "stablelm-2-1.6b": ("stablelm", STABLELM_2_1_6B),
    "stablelm-qk-norm-parallel-gqa": (
        "stablelm",
        {"qk_layernorm": True, "use_parallel_residual": True, "num_key_value_heads": 2},
    ),
    "opt-125m": ("opt", OPT_125M),  # 125,239,296 (tests/test_hf_types_more.py)
    "opt-unbiased-gelu": ("opt", {"enable_bias": False, "activation_function": "gelu"}),
    "command-r7b": ("cohere2", COMMAND_R7B),  # 8,028,033,024 (tests/test_hf_types_more.py)
    "cohere2-biased-no-window": ("cohere2", {"attention_bias": True, "sliding_window": None}),
    "dbrx-132b": ("dbrx", DBRX),  # 131,596,523,520 (tests/test_hf_types_more.py)
    "dbrx-gelu-2-norm": (
        "dbrx",
        {
            "ffn_config": {
                "ffn_hidden_size": 40,
                "moe_num_experts": 3,
                "moe_top_k": 2,
                "moe_normalize_expert_weights": 2.0,
                "ffn_act_fn": {"name": "gelu"},
            }
        },
    ),
    "gpt-sw3-untied-gelu": ("gpt-sw3", {"tie_word_embeddings": False, "activation_function": "gelu"}),
    "glm-4.5-air": ("glm4_moe", GLM_4_5_AIR),  # 106,852,245,504 (tests/test_hf_types_more.py)
    "glm4-moe-qk-norm-biased": ("glm4_moe", {"use_qk_norm": True, "attention_bias": True, "n_shared_experts": 2}),
    "gpt-neo-global-4096-wide-mlp": ("gpt_neo", {"attention_types": [[["global"], 4]], "intermediate_size": 160}),
}


def small(model_type: str) -> dict[str, Any]:
    """A small config.json of the type: each size under the key its table gives the field."""
    mt = hf_types.table().types[model_type]
    config: dict[str, Any] = {"model_type": model_type, "pad_token_id": None}  # a class's own pad id may be past 101
    for name, value in SIZES.items():
        key = mt.keys.get(name)
        if key is not None and key not in ("head_dim",):
            node = config
            *parents, leaf = key.split(".")
            for part in parents:  # nested keys (DBRX's ffn_config.moe_num_experts)
                node = node.setdefault(part, {})
            node[leaf] = value
    if "model.head_dim" in mt.keys:
        config["head_dim"] = 16
    return {**config, **EXTRA.get(model_type, {})}


def test_the_snapshot_of_transformers_classes_is_what_transformers_defines() -> None:
    """schemas/hf-classes.json is what tools/extract_hf_classes.py reads from the oracle's transformers."""
    import subprocess
    import sys

    why = oracle.unavailable("hf")
    if why:
        pytest.skip(why)
    tool = Path(__file__).resolve().parent.parent / "tools" / "extract_hf_classes.py"
    done = subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def builds() -> dict[str, dict[str, Any]]:
    out = {name: small(name) for name in hf_types.table().types}
    for name, (model_type, values) in VARIANTS.items():
        out[name] = {**small(model_type), **values}
    return out


BUILDS = builds()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[oracle.Verdict, int]]:
    why = oracle.unavailable("hf-torch")
    if why:
        pytest.skip(why)
    folder = tmp_path_factory.mktemp("types")
    jobs, counts = [], {}
    for name, config in sorted(BUILDS.items()):
        path = folder / f"{name}.json"
        path.write_text(json.dumps(config))
        counts[name] = count_parameters(read_ir([str(path)], "hf").ir.plain()).total
        jobs.append({"id": name, "files": [str(path)], "count": True})
    verdicts = oracle.run("hf-torch", jobs)
    return {name: (verdicts[name], counts[name]) for name in counts}


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_each_mapped_type_counts_what_transformers_builds(name: str, built: dict[str, Any]) -> None:
    verdict, ours = built[name]
    assert verdict.accepted, verdict.error
    assert verdict.values["parameters"] == ours, json.dumps(BUILDS[name])
