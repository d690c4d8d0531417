"""HF model types transformers defines (issue 27, item 5), the transformers 5 rope_parameters layout read
whole, outputs that would hold nothing (issue 28) and the HF messages of issue 32, with real values.

Counts of every mapped type against transformers itself: tests/test_hf_types_oracle.py (oracle tier);
the table against the classes of transformers 5.23: tests/test_hf_classes.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from neoconv.api import read_ir, translate
from neoconv.cli import main
from neoconv.core.errors import InputError, NothingToWrite, UnsupportedFamily
from neoconv.formats.hf import model_types as hf_types
from neoconv.io.documents import flatten
from neoconv.knowledge.model_size import count_parameters
from neoconv.core.report import Status
from neoconv.services.validate_file import validate_file

from conftest import FIXTURES

INPUTS = FIXTURES / "inputs"
SMALL = {"vocab_size": 101, "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 8}


def write(tmp_path: Path, config: dict[str, Any], name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(config, indent=2))
    return path


def leaves_named(result: Any, config: dict[str, Any]) -> list[str]:
    """The leaves of a config.json no report entry names (the report names each leaf once)."""
    named = {e.source_key for e in result.report.entries}
    return [leaf for leaf in flatten(config) if leaf not in named]


# ---- rope_parameters per layer type (transformers 5) --------------------------------------------

GEMMA3_5X = {
    "model_type": "gemma3_text",
    **SMALL,
    "num_hidden_layers": 6,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 96,
    "sliding_window": 128,
    "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
    "rope_parameters": {
        "full_attention": {"rope_type": "linear", "rope_theta": 1000000.0, "factor": 8.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
    },
}


def test_rope_parameters_per_layer_type_read_whole(tmp_path: Path) -> None:
    ir = read_ir([str(write(tmp_path, GEMMA3_5X))], "hf").ir.plain()
    assert {
        k: ir.get(k)
        for k in (
            "model.rotary_base",
            "model.rope_scaling_type",
            "model.rope_scaling_factor",
            "model.sliding_window_rotary_base",
        )
    } == {
        "model.rotary_base": 1000000.0,
        "model.rope_scaling_type": "linear",
        "model.rope_scaling_factor": 8.0,
        "model.sliding_window_rotary_base": 10000.0,
    }


@pytest.mark.parametrize("dst", ["neox", "megatron", "cerebras", "hf"])
def test_every_leaf_of_rope_parameters_per_layer_type_has_an_entry(dst: str, tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, GEMMA3_5X))], "hf", dst, set_values={"model.vocab_size": 101})
    assert leaves_named(result, GEMMA3_5X) == []
    rope = {e.source_key: e for e in result.report.entries if (e.source_key or "").startswith("rope_parameters.")}
    assert set(rope) == {
        "rope_parameters.full_attention.rope_type",
        "rope_parameters.full_attention.rope_theta",
        "rope_parameters.full_attention.factor",
        "rope_parameters.sliding_attention.rope_type",
        "rope_parameters.sliding_attention.rope_theta",
    }


def test_hf2hf_keeps_rope_parameters_per_layer_type(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, GEMMA3_5X))], "hf", "hf")
    assert json.loads(result.dump()) == GEMMA3_5X
    assert all(e.status is Status.EXACT for e in result.report.entries)


def test_the_sliding_layers_own_scaling_is_named_lossy(tmp_path: Path) -> None:
    config = json.loads(json.dumps(GEMMA3_5X))
    config["rope_parameters"]["sliding_attention"] = {"rope_type": "linear", "rope_theta": 10000.0, "factor": 2.0}
    result = translate([str(write(tmp_path, config))], "hf", "neox", set_values={"model.vocab_size": 101})
    said = result.report.by_source()["rope_parameters.sliding_attention.factor"]
    assert said.status is Status.LOSSY and "sliding-window layers' own RoPE scaling" in said.detail


def test_a_flat_rope_parameters_rope_type_default_is_read(tmp_path: Path) -> None:
    """An explicit rope_type: default had no entry (it was dropped while lifting the 5.x dict)."""
    config = {"model_type": "llama", **SMALL, "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}
    result = translate([str(write(tmp_path, config))], "hf", "megatron")
    assert leaves_named(result, config) == []
    assert result.ir.get("model.rotary_base") == 500000.0 and result.ir.get("model.rope_scaling_type") is None


# ---- model types transformers defines that no row maps ----------------------------------------------

QWEN3_NEXT = {
    "model_type": "qwen3_next",
    **SMALL,
    "linear_num_key_heads": 4,
    "linear_num_value_heads": 8,
    "decoder_sparse_step": 1,
    "num_experts": 8,
}


def test_hf2hf_keeps_an_unmapped_type_and_says_it_did_not_check_it(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, QWEN3_NEXT))], "hf", "hf")
    assert json.loads(result.dump()) == QWEN3_NEXT
    assert {e.status for e in result.report.entries} == {Status.EXACT}
    assert all(
        e.kind == "carried_unchecked" and "HF qwen3_next (Qwen3NextConfig)" in e.detail for e in result.report.entries
    )
    assert leaves_named(result, QWEN3_NEXT) == []


@pytest.mark.parametrize("dst", ["neox", "cerebras", "megatron", "veomni"])
def test_another_format_names_what_it_cannot_hold_of_an_unmapped_type(dst: str, tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFamily) as refused:
        translate([str(write(tmp_path, QWEN3_NEXT))], "hf", dst, output=str(tmp_path / "out.yaml"))
    assert "HF qwen3_next (Qwen3NextConfig): " in str(refused.value)
    assert hf_types.table().unmapped["qwen3_next"] in str(refused.value)


def test_a_remote_code_type_is_carried_by_hf2hf_and_named(tmp_path: Path) -> None:
    config = {"model_type": "internlm2", **SMALL, "auto_map": {"AutoConfig": "configuration_internlm2.InternLM2Config"}}
    result = translate([str(write(tmp_path, config))], "hf", "hf")
    assert json.loads(result.dump()) == config
    assert "which transformers 5.23.0 does not define (remote code" in result.report.entries[0].detail


@pytest.mark.parametrize(
    "model_type", ["gpt_oss", "dbrx", "seed_oss", "qwen3_5", "qwen3_5_moe", "glm_moe_dsa", "deepseek_v4"]
)
def test_the_types_issue_27_names_are_never_refused_by_hf2hf(model_type: str, tmp_path: Path) -> None:
    config = {"model_type": model_type, **SMALL}
    result = translate([str(write(tmp_path, config))], "hf", "hf")
    assert json.loads(result.dump())["model_type"] == model_type


# ---- outputs that would hold nothing (issue 28) ------------------------------------------------------


def test_a_config_json_from_a_deepspeed_file_is_not_written(runner, tmp_path: Path) -> None:
    out = tmp_path / "config.json"
    result = runner.invoke(
        main, ["deepspeed2hf", str(INPUTS / "deepspeed" / "warmup-cosine-lr-zero2.json"), "-o", str(out)]
    )
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr.count("\n") == 1
    assert "would hold no setting of the source: it needs hf.model_type" in result.stderr
    assert "--set model.family=NAME" in result.stderr


def test_a_deepspeed_json_from_a_config_json_is_not_written(runner, tmp_path: Path) -> None:
    out = tmp_path / "ds.json"
    result = runner.invoke(main, ["hf2deepspeed", str(INPUTS / "hf" / "llama-2-7b.json"), "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert "it needs train_batch_size" in result.stderr and "--set batch.global=N" in result.stderr


def test_the_value_the_refusal_asks_for_makes_the_output(tmp_path: Path) -> None:
    result = translate([str(INPUTS / "hf" / "llama-2-7b.json")], "hf", "deepspeed", set_values={"batch.global": 256})
    assert result.config["train_batch_size"] == 256
    with pytest.raises(NothingToWrite):
        translate([str(INPUTS / "hf" / "llama-2-7b.json")], "hf", "deepspeed")


def test_a_config_json_with_a_family_given_is_written(tmp_path: Path) -> None:
    result = translate(
        [str(INPUTS / "deepspeed" / "warmup-cosine-lr-zero2.json")],
        "deepspeed",
        "hf",
        set_values={"model.family": "llama"},
    )
    assert result.config["model_type"] == "llama" and result.config["architectures"] == ["LlamaForCausalLM"]


# ---- messages (issue 32) ---------------------------------------------------------------------------


def test_a_bad_rope_scaling_factor_is_named_at_its_key(tmp_path: Path) -> None:
    config = json.loads((INPUTS / "hf" / "llama-3.1-8b.json").read_text())
    config["rope_scaling"]["factor"] = -2.0
    path = write(tmp_path, config)
    with pytest.raises(InputError) as bad:
        read_ir([str(path)], "hf")
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if '"factor"' in text)
    assert str(bad.value) == f"{path}:{line}: rope_scaling.factor: must be above 0.0, got -2.0 (fix the value)"


def test_a_problem_inside_veomni_s_config_json_names_that_file(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    config = json.loads((INPUTS / "veomni" / "tinyllama" / "config.json").read_text())
    config["hidden_sise"] = 3
    config_json = write(tmp_path / "model", config)
    run = tmp_path / "run.yaml"
    run.write_text("model:\n  config_path: model\ndata:\n  train_path: x\ntrain:\n  global_batch_size: 8\n")
    problems = validate_file(str(run)).problems
    line = next(i for i, text in enumerate(config_json.read_text().splitlines(), 1) if "hidden_sise" in text)
    assert [(p.file, p.line, p.key) for p in problems] == [(str(config_json), line, "config.json:hidden_sise")]
    config["rope_scaling"] = {"rope_type": "linear", "factor": -2.0}
    del config["hidden_sise"]
    write(tmp_path / "model", config)
    problems = validate_file(str(run)).problems
    assert [(p.file, p.key) for p in problems] == [(str(config_json), "config.json:rope_scaling.factor")]


# ---- gpt-oss (gpt_oss): sinks, a biased router, the clamped and offset quick-GEGLU experts ------------

GPT_OSS_20B = {  # the published config.json of gpt-oss-20b (transformers 4.55)
    "architectures": ["GptOssForCausalLM"],
    "attention_bias": True,
    "attention_dropout": 0.0,
    "eos_token_id": 200002,
    "experts_per_token": 4,
    "head_dim": 64,
    "hidden_act": "silu",
    "hidden_size": 2880,
    "initial_context_length": 4096,
    "initializer_range": 0.02,
    "intermediate_size": 2880,
    "layer_types": ["sliding_attention", "full_attention"] * 12,
    "max_position_embeddings": 131072,
    "model_type": "gpt_oss",
    "num_attention_heads": 64,
    "num_experts_per_tok": 4,
    "num_hidden_layers": 24,
    "num_key_value_heads": 8,
    "num_local_experts": 32,
    "output_router_logits": False,
    "pad_token_id": 199999,
    "rms_norm_eps": 1e-05,
    "rope_scaling": {
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "factor": 32.0,
        "original_max_position_embeddings": 4096,
        "rope_type": "yarn",
        "truncate": False,
    },
    "rope_theta": 150000,
    "router_aux_loss_coef": 0.9,
    "sliding_window": 128,
    "swiglu_limit": 7.0,
    "tie_word_embeddings": False,
    "transformers_version": "4.55.0.dev0",
    "use_cache": True,
    "vocab_size": 201088,
}
GPT_OSS_FIELDS = {
    "model.family": "gpt_oss",
    "model.activation": "quick_geglu",
    "model.glu_linear_offset": 1.0,
    "model.activation_clamp": 7.0,
    "model.attention_sinks": True,
    "model.moe_router_bias": True,
    "model.mlp_bias": True,
    "model.attention_bias": True,
    "model.moe_num_experts": 32,
    "model.moe_experts_per_token": 4,
    "model.moe_normalize_top_k": True,
    "model.head_dim": 64,
    "model.num_kv_heads": 8,
    "model.sliding_window": 128,
    "model.attention_layer_types": ["sliding", "full"] * 12,
    "model.rope_scaling_type": "yarn",
    "model.rope_scaling_factor": 32.0,
    "model.rotary_base": 150000.0,
}


def test_gpt_oss_reads_as_its_card_and_as_transformers_builds_it(tmp_path: Path) -> None:
    ir = read_ir([str(write(tmp_path, GPT_OSS_20B))], "hf").ir.plain()
    assert {k: ir.get(k) for k in GPT_OSS_FIELDS} == GPT_OSS_FIELDS
    # transformers 5.23 builds 20,914,757,184 parameters on the meta device (tests/test_hf_types_oracle.py)
    assert count_parameters(ir).total == 20_914_757_184
    assert count_parameters(ir).active == 4_187_440_704  # 4 of 32 experts per token


def test_gpt_oss_hf2hf_is_the_same_file(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, GPT_OSS_20B))], "hf", "hf")
    assert json.loads(result.dump()) == GPT_OSS_20B


def test_gpt_oss_written_by_the_hf_writer_is_the_same_model(tmp_path: Path) -> None:
    """From the canonical values (a Megatron file given its family): the same fields and count back."""
    source = read_ir([str(write(tmp_path, GPT_OSS_20B))], "hf").ir.plain()
    values = {k: v for k, v in source.items() if k.startswith("model.")}
    result = translate({"model_type": "llama", **SMALL}, "hf", "hf", set_values=values)
    assert result.config["model_type"] == "gpt_oss"
    back = read_ir(dict(result.config), "hf").ir.plain()
    assert {k: back.get(k) for k in GPT_OSS_FIELDS} == GPT_OSS_FIELDS
    assert count_parameters(back).total == 20_914_757_184


@pytest.mark.parametrize("dst", ["neox", "megatron", "cerebras"])
def test_what_another_format_cannot_hold_of_gpt_oss_is_named(dst: str, tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, GPT_OSS_20B))], "hf", dst, output=str(tmp_path / "out"))
    lost = {f for e in result.report.entries if e.status in (Status.LOSSY, Status.DROPPED) for f in e.fields}
    assert {
        "model.attention_sinks",
        "model.moe_router_bias",
        "model.glu_linear_offset",
        "model.activation_clamp",
    } <= lost


def test_gpt_oss_scales_rope_by_default_so_none_is_written(tmp_path: Path) -> None:
    """GptOssConfig builds yarn (factor 32) when a file says nothing: a gpt_oss without scaling says so."""
    config = {k: v for k, v in GPT_OSS_20B.items() if k != "rope_scaling"}
    assert read_ir([str(write(tmp_path, config))], "hf").ir.get("model.rope_scaling_type") == "yarn"
    result = translate(
        [str(INPUTS / "neox" / "pythia-160m.yml")],
        "neox",
        "hf",
        set_values={"model.family": "gpt_oss", "model.vocab_size": 50304},
    )
    assert result.config["model_type"] == "gpt_oss" and result.config["rope_scaling"] == {"rope_type": "default"}
    assert read_ir(dict(result.config), "hf").ir.get("model.rope_scaling_type") is None


# ---- the class written for the blocks (issue 27, item 9, the HF writer's half) ------------------------

# a Model Zoo legacy Falcon (the GPT-J backbone: parallel blocks, one shared norm) that names no model,
# as Model Zoo 2.0-era Falcon configs do: multi-query attention, no biases; 4 layers of Falcon-7B's width
FALCON_LEGACY = """\
model:
    vocab_size: 65024
    position_embedding_type: "rotary"
    rotary_dim: 64
    embedding_dropout_rate: 0.0
    share_embedding_weights: True
    hidden_size: 4544
    filter_size: 18176
    num_heads: 71
    num_hidden_layers: 4
    max_position_embeddings: 2048
    attention_module: "multiquery_attention"
    attention_type: "scaled_dot_product"
    use_untied_layer_norm: False
    extra_attention_params:
        num_kv_groups: 1
    use_projection_bias_in_attention: False
    use_ffn_bias_in_attention: False
    use_ffn_bias: False
    nonlinearity: "gelu"
    attention_dropout_rate: 0.0
    residual_dropout_rate: 0.0
    layer_norm_epsilon: 1.0e-5
    use_bias_in_output: False
    initializer_range: 0.02
optimizer:
    optimizer_type: "adamw"
    learning_rate: 1.0e-4
"""


def test_a_model_zoo_falcon_without_a_name_is_written_as_hf_falcon(tmp_path: Path) -> None:
    path = tmp_path / "params_falcon.yaml"
    path.write_text(FALCON_LEGACY)
    source = read_ir([str(path)], "cerebras").ir.plain()
    assert source["model.family"] == "gptj" and source["model.num_kv_heads"] == 1 and source["model.mlp_bias"] is False
    result = translate([str(path)], "cerebras", "hf")
    assert {
        k: result.config.get(k)
        for k in (
            "model_type",
            "multi_query",
            "parallel_attn",
            "new_decoder_architecture",
            "bias",
            "num_attention_heads",
        )
    } == {
        "model_type": "falcon",
        "multi_query": True,
        "parallel_attn": True,
        "new_decoder_architecture": False,
        "bias": False,
        "num_attention_heads": 71,
    }
    back = read_ir(dict(result.config), "hf").ir.plain()
    assert (
        back["model.num_kv_heads"] == 1 and back["model.mlp_bias"] is False and back.get("model.lm_head_bias") is None
    )
    # as GPT-J it had 71 kv heads and biased MLPs and output: 18 % more; as Falcon the count is the source's
    assert (
        count_parameters(back).total == count_parameters(source).total == 1_123_758_464
    )  # transformers 5.23 builds it
    family = [e for e in result.report.entries if "model.family" in e.fields and e.status is Status.LOSSY]
    assert family and "written as falcon, which holds them" in family[0].detail


def test_a_gpt_neox_block_with_grouped_query_attention_is_written_as_falcon(tmp_path: Path) -> None:
    """NeoX's parallel block with two norms and num_kv_heads: HF gpt_neox has no kv heads; Falcon's new decoder."""
    path = tmp_path / "gqa.yml"
    path.write_text(
        "num_layers: 2\nhidden_size: 128\nnum_attention_heads: 8\nnum_kv_heads: 2\nseq_length: 256\n"
        "max_position_embeddings: 256\npos_emb: rotary\nrotary_pct: 1.0\ngpt_j_residual: true\n"
    )
    result = translate([str(path)], "neox", "hf", set_values={"model.vocab_size": 512})
    assert result.config["model_type"] == "falcon" and result.config["new_decoder_architecture"] is True
    assert result.config["num_kv_heads"] == 2


def test_a_family_the_writer_keeps_when_its_class_holds_the_blocks() -> None:
    result = translate([str(INPUTS / "neox" / "pythia-160m.yml")], "neox", "hf", set_values={"model.vocab_size": 50304})
    assert result.config["model_type"] == "gpt_neox"


def test_one_kv_head_per_head_is_written_where_the_class_defaults_to_fewer() -> None:
    """Pythia (multi-head attention) as Mistral: MistralConfig defaults to 8 kv heads, so 12 is written."""
    result = translate(
        [str(INPUTS / "neox" / "pythia-160m.yml")],
        "neox",
        "hf",
        set_values={"model.vocab_size": 50304, "model.family": "mistral"},
    )
    assert result.config["num_key_value_heads"] == 12
    added = next(e for e in result.report.entries if e.target_key == "num_key_value_heads")
    assert added.status is Status.DEFAULTED and "HF mistral's default is 8 kv heads" in added.detail
    assert read_ir(dict(result.config), "hf").ir.get("model.num_kv_heads") == 12
