"""More HF model types mapped (issue 27, item 5): what each reads as, with real published sizes, and
what a class cannot hold named. The count of every mapped type against transformers' own model is the
oracle tier (tests/test_hf_types_oracle.py); the sizes here are worked out by hand from the modeling code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from neoconv.api import read_ir, translate
from neoconv.core.report import Status
from neoconv.knowledge.model_size import count_parameters


def write(tmp_path: Path, config: dict[str, Any], name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(config, indent=2))
    return path


def read(tmp_path: Path, config: dict[str, Any]) -> dict[str, Any]:
    return read_ir([str(write(tmp_path, config))], "hf").ir.plain()


# ---- gpt_bigcode: StarCoder 1, SantaCoder --------------------------------------------------------------

STARCODER = {  # bigcode/starcoder's config.json (the sizes and the keys its class reads)
    "model_type": "gpt_bigcode",
    "architectures": ["GPTBigCodeForCausalLM"],
    "n_embd": 6144,
    "n_layer": 40,
    "n_head": 48,
    "n_inner": 24576,
    "vocab_size": 49152,
    "n_positions": 8192,
    "multi_query": True,
    "activation_function": "gelu_pytorch_tanh",
    "layer_norm_epsilon": 1e-05,
    "initializer_range": 0.02,
    "resid_pdrop": 0.1,
    "embd_pdrop": 0.1,
    "attn_pdrop": 0.1,
}


def starcoder_by_hand(h: int, layers: int, heads: int, inner: int, vocab: int, positions: int, kv_heads: int) -> int:
    """GPTBigCodeForCausalLM: wte + wpe; per block ln_1, c_attn (queries + kv_heads keys and values),
    c_proj, ln_2, c_fc, c_proj, all biased; ln_f; lm_head tied to wte."""
    kv = kv_heads * (h // heads)
    block = 2 * h + (h * (h + 2 * kv) + h + 2 * kv) + (h * h + h) + 2 * h + (h * inner + inner) + (inner * h + h)
    return (vocab + positions) * h + layers * block + 2 * h


def test_starcoder_reads_as_one_kv_head_and_its_published_size(tmp_path: Path) -> None:
    ir = read(tmp_path, STARCODER)
    assert (ir["model.family"], ir["model.num_kv_heads"], ir["model.position_embedding"]) == ("starcoder", 1, "learned")
    assert (ir["model.activation"], ir["model.output_init_method"]) == ("gelu_tanh", "scaled_normal")
    total = count_parameters(ir).total
    assert total == starcoder_by_hand(6144, 40, 48, 24576, 49152, 8192, 1) == 15_517_456_384  # "15.5B"


def test_multi_query_false_is_a_kv_head_per_head(tmp_path: Path) -> None:
    ir = read(tmp_path, {**STARCODER, "multi_query": False})
    assert ir["model.num_kv_heads"] == 48
    assert count_parameters(ir).total == starcoder_by_hand(6144, 40, 48, 24576, 49152, 8192, 48)


def test_a_file_without_multi_query_has_the_class_default_one_kv_head(tmp_path: Path) -> None:
    config = {k: v for k, v in STARCODER.items() if k != "multi_query"}
    assert read(tmp_path, config)["model.num_kv_heads"] == 1


def test_starcoder_hf2hf_is_the_same_file(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, STARCODER))], "hf", "hf")
    assert json.loads(result.dump()) == STARCODER
    assert {e.status for e in result.report.entries} == {Status.EXACT}


def test_starcoder_to_megatron_is_one_query_group(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, STARCODER))], "hf", "megatron")
    lines = result.dump().splitlines()
    assert "--group-query-attention" in lines and "--num-query-groups 1" in lines
    assert "--position-embedding-type learned_absolute" in lines


def test_grouped_query_attention_gpt_bigcode_cannot_hold_is_named(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, STARCODER))], "hf", "hf", set_values={"model.num_kv_heads": 4})
    entry = result.report.by_source()["multi_query"]
    assert entry.status is Status.LOSSY and "4 key/value heads of 48 is not expressible" in entry.detail


def test_a_learned_position_starcoder_from_another_format_is_written_as_gpt_bigcode(tmp_path: Path) -> None:
    megatron = translate([str(write(tmp_path, STARCODER))], "hf", "megatron", set_values={"model.seq_length": 8192})
    args = write(tmp_path, {}, "run.args")
    args.write_text(megatron.dump())
    back = translate([str(args)], "megatron", "hf", set_values={"model.family": "starcoder"})
    config = json.loads(back.dump())
    assert (config["model_type"], config["multi_query"], config["n_head"]) == ("gpt_bigcode", True, 48)


# ---- gpt_neo: GPT-Neo 125M, 1.3B, 2.7B -----------------------------------------------------------------

GPT_NEO_1_3B = {  # EleutherAI/gpt-neo-1.3B's config.json (the keys its class reads)
    "model_type": "gpt_neo",
    "architectures": ["GPTNeoForCausalLM"],
    "hidden_size": 2048,
    "num_layers": 24,
    "num_heads": 16,
    "vocab_size": 50257,
    "max_position_embeddings": 2048,
    "intermediate_size": None,
    "attention_types": [[["global", "local"], 12]],
    "window_size": 256,
    "activation_function": "gelu_new",
    "resid_dropout": 0,
    "embed_dropout": 0,
    "attention_dropout": 0,
    "layer_norm_epsilon": 1e-05,
    "initializer_range": 0.02,
}


def gpt_neo_by_hand(h: int, layers: int, vocab: int, positions: int) -> int:
    """GPTNeoForCausalLM: wte + wpe; per block ln_1, q/k/v without bias, out_proj with one, ln_2, c_fc
    and c_proj (4h, biased); ln_f; lm_head tied."""
    block = 2 * h + 3 * h * h + (h * h + h) + 2 * h + (h * 4 * h + 4 * h) + (4 * h * h + h)
    return (vocab + positions) * h + layers * block + 2 * h


def test_gpt_neo_reads_its_local_layers_unscaled_scores_and_published_size(tmp_path: Path) -> None:
    ir = read(tmp_path, GPT_NEO_1_3B)
    assert (ir["model.family"], ir["model.sliding_window"]) == ("gpt_neo", 256)
    assert ir["model.attention_layer_types"] == ["full", "sliding"] * 12
    assert ir["model.attention_logits_multiplier"] == 128**0.5  # scores q.k: sqrt(head_dim) over the standard 1/sqrt
    assert (ir["model.attention_bias"], ir["model.attention_output_bias"], ir["model.output_init_method"]) == (
        False,
        True,
        "normal",
    )
    assert count_parameters(ir).total == gpt_neo_by_hand(2048, 24, 50257, 2048) == 1_315_575_808


def test_gpt_neo_hf2hf_is_the_same_file(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, GPT_NEO_1_3B))], "hf", "hf")
    assert json.loads(result.dump()) == GPT_NEO_1_3B
    assert {e.status for e in result.report.entries} == {Status.EXACT}


def test_attention_types_without_local_layers_is_no_window(tmp_path: Path) -> None:
    ir = read(tmp_path, {**GPT_NEO_1_3B, "attention_types": [[["global"], 24]]})
    assert ir.get("model.sliding_window") is None and ir.get("model.attention_layer_types") is None


def test_a_pattern_is_written_as_its_repeating_unit(tmp_path: Path) -> None:
    config = {**GPT_NEO_1_3B, "num_layers": 6, "attention_types": [[["local", "local", "global"], 2]]}
    result = translate([str(write(tmp_path, config))], "hf", "hf", set_values={"model.sliding_window": 128})
    written = json.loads(result.dump())
    assert (written["attention_types"], written["window_size"]) == ([[["local", "local", "global"], 2]], 128)


def test_a_window_everywhere_from_another_class_is_written_as_local_layers(tmp_path: Path) -> None:
    result = translate(
        [str(write(tmp_path, GPT_NEO_1_3B))], "hf", "hf", set_values={"model.attention_layer_types": ["sliding"] * 24}
    )
    assert json.loads(result.dump())["attention_types"] == [[["local"], 24]]


def test_attention_types_of_the_wrong_length_is_refused(tmp_path: Path) -> None:
    import pytest

    from neoconv.core.errors import InputError

    with pytest.raises(InputError) as refused:  # a huge repeat count is summed, never expanded
        read(tmp_path, {**GPT_NEO_1_3B, "attention_types": [[["global", "local"], 10**12]]})
    assert "num_layers is 24" in str(refused.value)


def test_gpt_neo_s_unscaled_scores_are_named_where_a_target_scales_them(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, GPT_NEO_1_3B))], "hf", "neox", set_values={"model.seq_length": 2048})
    said = [e for e in result.report.entries if e.fields == ("model.attention_logits_multiplier",)]
    assert [e.status for e in said] == [Status.LOSSY] and said[0].values["value"] == 128**0.5


# ---- stablelm: StableLM 3B-4E1T, StableLM 2 ------------------------------------------------------------

STABLELM_2_1_6B = {  # stabilityai/stablelm-2-1_6b's config.json (the keys its class reads)
    "model_type": "stablelm",
    "architectures": ["StableLmForCausalLM"],
    "vocab_size": 100352,
    "hidden_size": 2048,
    "intermediate_size": 5632,
    "num_hidden_layers": 24,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "hidden_act": "silu",
    "max_position_embeddings": 4096,
    "rope_theta": 10000,
    "partial_rotary_factor": 0.25,
    "use_qkv_bias": True,
    "qk_layernorm": False,
    "use_parallel_residual": False,
    "layer_norm_eps": 1e-05,
    "tie_word_embeddings": False,
    "hidden_dropout": 0.0,
    "attention_dropout": 0.0,
    "initializer_range": 0.02,
}


def stablelm_by_hand(
    h: int, layers: int, heads: int, kv_heads: int, inner: int, vocab: int, qk_norm: bool, parallel: bool
) -> int:
    """StableLmForCausalLM: embed_tokens; per block input_layernorm (+ post_attention_layernorm unless
    parallel), q/k/v with biases (use_qkv_bias), o_proj without, per-head LayerNorms of queries and keys
    without bias, gate/up/down without bias; the final LayerNorm; an untied lm_head."""
    d = h // heads
    attention = (h * h + h) + 2 * (h * kv_heads * d + kv_heads * d) + h * h
    norms = 2 * h * (1 if parallel else 2) + ((heads + kv_heads) * d if qk_norm else 0)
    return vocab * h + layers * (attention + norms + 3 * h * inner) + 2 * h + vocab * h


def test_stablelm_2_reads_as_its_card_and_published_size(tmp_path: Path) -> None:
    ir = read(tmp_path, STABLELM_2_1_6B)
    assert (ir["model.family"], ir["model.rotary_fraction"], ir["model.norm"], ir["model.activation"]) == (
        "stablelm",
        0.25,
        "layernorm",
        "swiglu",
    )
    assert (ir["model.attention_bias"], ir["model.attention_output_bias"], ir.get("model.qk_norm_bias")) == (
        True,
        False,
        None,
    )
    assert count_parameters(ir).total == stablelm_by_hand(2048, 24, 32, 32, 5632, 100352, False, False) == 1_644_515_328


def test_stablelm_s_per_head_qk_norms_have_no_bias(tmp_path: Path) -> None:
    ir = read(
        tmp_path, {**STABLELM_2_1_6B, "qk_layernorm": True, "use_parallel_residual": True, "num_key_value_heads": 8}
    )
    assert (ir["model.qk_norm"], ir["model.qk_norm_span"], ir["model.qk_norm_bias"]) == (True, "head_weights", False)
    assert (ir["model.parallel_residual"], ir["model.parallel_shared_norm"]) == (True, True)
    assert count_parameters(ir).total == stablelm_by_hand(2048, 24, 32, 8, 5632, 100352, True, True)


def test_stablelm_hf2hf_is_the_same_file(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, STABLELM_2_1_6B))], "hf", "hf")
    assert json.loads(result.dump()) == STABLELM_2_1_6B
    assert {e.status for e in result.report.entries} == {Status.EXACT}


def test_stablelm_s_mlp_only_dropout_is_named_where_another_format_drops_out_both_branches(tmp_path: Path) -> None:
    config = write(tmp_path, {**STABLELM_2_1_6B, "hidden_dropout": 0.1})
    entry = translate([str(config)], "hf", "neox", set_values={"model.seq_length": 4096}).report.by_source()[
        "hidden_dropout"
    ]
    assert entry.status is Status.LOSSY and "drops out the MLP branch only" in entry.detail
    unset = translate([str(write(tmp_path, STABLELM_2_1_6B))], "hf", "neox", set_values={"model.seq_length": 4096})
    assert unset.report.by_source()["hidden_dropout"].status is not Status.LOSSY  # 0.0: no dropout either way


def test_a_residual_dropout_written_as_stablelm_is_named(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        {"model_type": "llama", "vocab_size": 101, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4},
    )
    result = translate([str(config)], "hf", "hf", set_values={"model.family": "stablelm", "model.hidden_dropout": 0.1})
    said = [e for e in result.report.entries if e.fields == ("model.hidden_dropout",) and e.status is Status.LOSSY]
    assert said and "drops out the MLP branch only" in said[0].detail
    assert json.loads(result.dump())["hidden_dropout"] == 0.1


def test_qk_norms_with_a_bias_cannot_be_stablelm_s(tmp_path: Path) -> None:
    phi = {
        "model_type": "phi",
        "vocab_size": 101,
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "qk_layernorm": True,
    }
    ir = read(tmp_path, phi)
    assert ir.get("model.qk_norm_bias") is None  # LayerNorm(head_dim) with a bias, as phi's other norms
    result = translate(
        [str(write(tmp_path, STABLELM_2_1_6B))],
        "hf",
        "hf",
        set_values={"model.qk_norm": True, "model.qk_norm_bias": True},
    )
    said = [e for e in result.report.entries if e.fields == ("model.qk_norm_bias",) and e.status is Status.LOSSY]
    assert said and "HF stablelm hard-wires model.qk_norm_bias=False" in said[0].detail
    assert json.loads(result.dump())["qk_layernorm"] is True


# ---- opt: OPT 125M - 66B ---------------------------------------------------------------------------------

OPT_125M = {  # facebook/opt-125m's config.json (the keys its class reads)
    "model_type": "opt",
    "architectures": ["OPTForCausalLM"],
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "ffn_dim": 3072,
    "num_attention_heads": 12,
    "vocab_size": 50272,
    "max_position_embeddings": 2048,
    "do_layer_norm_before": True,
    "word_embed_proj_dim": 768,
    "dropout": 0.1,
    "attention_dropout": 0.0,
    "activation_function": "relu",
    "init_std": 0.02,
    "layerdrop": 0.0,
    "enable_bias": True,
    "_remove_final_layer_norm": False,
}


def opt_by_hand(h: int, layers: int, ffn: int, vocab: int, positions: int) -> int:
    """OPTForCausalLM: embed_tokens, embed_positions with 2 rows before position 0's; per block
    self_attn_layer_norm, q/k/v/out_proj, final_layer_norm, fc1, fc2 (all biased); the final LayerNorm;
    lm_head tied."""
    block = 2 * h + 4 * (h * h + h) + 2 * h + (h * ffn + ffn) + (ffn * h + h)
    return vocab * h + (positions + 2) * h + layers * block + 2 * h


def test_opt_reads_with_its_position_offset_and_published_size(tmp_path: Path) -> None:
    ir = read(tmp_path, OPT_125M)
    assert (ir["model.family"], ir["model.position_embedding"], ir["model.position_embedding_offset"]) == (
        "opt",
        "learned",
        2,
    )
    assert (ir["model.activation"], ir["model.hidden_dropout"], ir["model.init_std"], ir["model.norm_eps"]) == (
        "relu",
        0.1,
        0.02,
        1e-5,
    )
    assert count_parameters(ir).total == opt_by_hand(768, 12, 3072, 50272, 2048) == 125_239_296


def test_opt_hf2hf_is_the_same_file(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, OPT_125M))], "hf", "hf")
    assert json.loads(result.dump()) == OPT_125M
    assert {e.status for e in result.report.entries} == {Status.EXACT}


def test_opt_350m_s_post_ln_and_projection_are_named_at_their_keys(tmp_path: Path) -> None:
    opt_350m = {
        **OPT_125M,
        "hidden_size": 1024,
        "num_hidden_layers": 24,
        "ffn_dim": 4096,
        "num_attention_heads": 16,
        "word_embed_proj_dim": 512,
        "do_layer_norm_before": False,
    }
    result = translate([str(write(tmp_path, opt_350m))], "hf", "megatron", set_values={"model.seq_length": 2048})
    said = result.report.by_source()
    assert said["do_layer_norm_before"].status is Status.LOSSY and "post-LN" in said["do_layer_norm_before"].detail
    assert "word_embed_proj_dim=512 projects embeddings" in said["word_embed_proj_dim"].detail
    plain = translate([str(write(tmp_path, OPT_125M))], "hf", "megatron", set_values={"model.seq_length": 2048})
    assert "post-LN" not in (plain.report.by_source()["do_layer_norm_before"].detail or "")


def test_the_position_offset_is_named_where_a_target_has_none(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, OPT_125M))], "hf", "megatron", set_values={"model.seq_length": 2048})
    said = [
        e for e in result.report.entries if "model.position_embedding_offset" in e.fields and e.status is Status.LOSSY
    ]
    assert said and "Megatron-LM has no counterpart for model.position_embedding_offset" in said[0].detail
    assert "--position-embedding-type learned_absolute" in result.dump().splitlines()


# ---- cohere2: Command R7B, Command A -----------------------------------------------------------------

COMMAND_R7B = {  # CohereForAI/c4ai-command-r7b-12-2024's config.json (the keys its class reads)
    "model_type": "cohere2",
    "architectures": ["Cohere2ForCausalLM"],
    "vocab_size": 256000,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "hidden_act": "silu",
    "max_position_embeddings": 8192,
    "layer_norm_eps": 1e-05,
    "logit_scale": 0.25,
    "rope_theta": 50000,
    "sliding_window": 4096,
    "sliding_window_pattern": 4,
    "attention_bias": False,
    "attention_dropout": 0.0,
    "tie_word_embeddings": True,
    "initializer_range": 0.02,
}


def cohere2_by_hand(h: int, layers: int, heads: int, kv_heads: int, inner: int, vocab: int) -> int:
    """Cohere2ForCausalLM: embed_tokens; per block one LayerNorm weight (no bias), q/k/v/o without bias,
    gate/up/down; the final norm's weight; lm_head tied."""
    d = h // heads
    return vocab * h + layers * (h + 2 * h * h + 2 * h * kv_heads * d + 3 * h * inner) + h


def test_command_r7b_reads_its_nope_full_layers_and_published_size(tmp_path: Path) -> None:
    ir = read(tmp_path, COMMAND_R7B)
    full = [3, 7, 11, 15, 19, 23, 27, 31]
    assert [i for i, k in enumerate(ir["model.attention_layer_types"]) if k == "full"] == full
    assert ir["model.nope_layers"] == full  # the full-attention layers rotate nothing
    assert (ir["model.parallel_residual"], ir["model.norm_bias"], ir["model.output_logits_multiplier"]) == (
        True,
        False,
        0.25,
    )
    assert ir.get("model.qk_norm") is None and ir.get("model.qk_norm_span") is None
    assert count_parameters(ir).total == cohere2_by_hand(4096, 32, 32, 8, 14336, 256000) == 8_028_033_024


def test_command_r7b_hf2hf_is_the_same_file(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, COMMAND_R7B))], "hf", "hf")
    assert json.loads(result.dump()) == COMMAND_R7B
    assert {e.status for e in result.report.entries} == {Status.EXACT}


def test_layer_types_wins_and_its_full_layers_have_no_rope(tmp_path: Path) -> None:
    kinds = ["sliding_attention", "full_attention"] * 16
    ir = read(tmp_path, {**COMMAND_R7B, "layer_types": kinds})
    assert ir["model.nope_layers"] == list(range(1, 32, 2))


def test_no_window_is_no_rope_in_any_layer(tmp_path: Path) -> None:
    ir = read(tmp_path, {**COMMAND_R7B, "sliding_window": None})
    assert ir.get("model.sliding_window") is None and ir["model.nope_layers"] == list(range(32))


def test_rope_where_cohere2_has_none_is_named(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, COMMAND_R7B))], "hf", "hf", set_values={"model.nope_layers": []})
    said = [e for e in result.report.entries if "model.nope_layers" in e.fields and e.status is Status.LOSSY]
    assert said and "applies RoPE in exactly its sliding-window layers" in said[0].detail


def test_a_rotary_model_written_as_cohere2_names_the_rope_it_loses(tmp_path: Path) -> None:
    run = tmp_path / "run.args"
    run.write_text(
        "--num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --max-position-embeddings 128\n"
        "--micro-batch-size 1 --lr 0.0003 --train-iters 10 --swiglu --padded-vocab-size 128\n"
    )
    result = translate([str(run)], "megatron", "hf", set_values={"model.family": "cohere2"})
    written = json.loads(result.dump())
    assert (
        written["model_type"] == "cohere2" and written["sliding_window"] is None
    )  # no window: the class's 4096 is not
    said = [e for e in result.report.entries if "model.nope_layers" in e.fields and e.status is Status.LOSSY]
    assert said and "[0, 1, 2, 3]" in said[0].detail  # without a window no layer rotates


# ---- dbrx: DBRX (Databricks) ---------------------------------------------------------------------------

DBRX = {  # databricks/dbrx-base's config.json (the keys its class reads; the file's normalize weight 1 is an int,
    # which transformers 5.23's strict DbrxFFNConfig refuses: a float here)
    "model_type": "dbrx",
    "architectures": ["DbrxForCausalLM"],
    "d_model": 6144,
    "n_heads": 48,
    "n_layers": 40,
    "max_seq_len": 32768,
    "vocab_size": 100352,
    "resid_pdrop": 0.0,
    "emb_pdrop": 0.0,
    "attn_config": {"kv_n_heads": 8, "clip_qkv": 8, "rope_theta": 500000, "attn_pdrop": 0.0},
    "ffn_config": {
        "ffn_hidden_size": 10752,
        "moe_num_experts": 16,
        "moe_top_k": 4,
        "ffn_act_fn": {"name": "silu"},
        "moe_jitter_eps": 0,
        "moe_loss_weight": 0.05,
        "moe_normalize_expert_weights": 1.0,
    },
    "initializer_range": 0.02,
    "output_router_logits": False,
    "tie_word_embeddings": False,
}


def dbrx_by_hand(h: int, layers: int, heads: int, kv_heads: int, ffn: int, experts: int, vocab: int) -> int:
    """DbrxForCausalLM: wte; per block norm_1, Wqkv, out_proj, norm_2 (LayerNorms without bias), the router
    (Linear(h, experts) without bias) and w1, v1, w2 of every expert; norm_f; an untied lm_head."""
    d = h // heads
    block = h + h * (h + 2 * kv_heads * d) + h * h + h + h * experts + experts * 3 * ffn * h
    return vocab * h + layers * block + h + vocab * h


def test_dbrx_reads_as_transformers_5_builds_it_and_its_published_size(tmp_path: Path) -> None:
    ir = read(tmp_path, DBRX)
    assert (ir["model.family"], ir["model.num_kv_heads"], ir["model.qkv_clip"], ir["model.activation"]) == (
        "dbrx",
        8,
        8.0,
        "swiglu",
    )
    assert (ir["model.moe_num_experts"], ir["model.moe_experts_per_token"], ir["model.moe_normalize_top_k"]) == (
        16,
        4,
        True,
    )
    assert (ir["model.norm"], ir["model.norm_bias"], ir["model.attention_bias"]) == ("layernorm", False, False)
    assert ir["model.rotary_base"] == 10000.0  # transformers 5.23 does not read attn_config.rope_theta
    assert count_parameters(ir).total == dbrx_by_hand(6144, 40, 48, 8, 10752, 16, 100352) == 131_596_523_520  # "132B"


def test_dbrx_s_nested_rope_theta_is_named_where_transformers_5_ignores_it(tmp_path: Path) -> None:
    said = translate(
        [str(write(tmp_path, DBRX))], "hf", "megatron", set_values={"model.seq_length": 4096}
    ).report.by_source()
    entry = said["attn_config.rope_theta"]
    assert (
        entry.status is Status.LOSSY
        and "attn_config.rope_theta=500000 is not read by transformers 5.23" in entry.detail
    )
    top = read(tmp_path, {**DBRX, "rope_theta": 500000})  # the top-level key is what it reads
    assert top["model.rotary_base"] == 500000.0
    config = {**DBRX, "attn_config": {"kv_n_heads": 8, "clip_qkv": 8}}  # type: ignore[dict-item]
    said = translate(
        [str(write(tmp_path, config))], "hf", "megatron", set_values={"model.seq_length": 4096}
    ).report.by_source()
    assert "without attn_config.rope_theta: transformers 5.23 cannot build it" in said["model_type"].detail


def test_dbrx_hf2hf_is_the_same_file(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, DBRX))], "hf", "hf")
    assert json.loads(result.dump()) == DBRX


def test_dbrx_s_p_norm_routing(tmp_path: Path) -> None:
    def ffn(**values: Any) -> dict[str, Any]:
        return {**DBRX, "ffn_config": {**DBRX["ffn_config"], **values}}  # type: ignore[dict-item]

    assert read(tmp_path, ffn(moe_normalize_expert_weights=None))["model.moe_normalize_top_k"] is False
    result = translate(
        [str(write(tmp_path, ffn(moe_normalize_expert_weights=2)))],
        "hf",
        "megatron",
        set_values={"model.seq_length": 4096},
    )
    entry = result.report.by_source()["ffn_config.moe_normalize_expert_weights"]
    assert entry.status is Status.LOSSY and "by their 2-norm, not their sum" in entry.detail


def test_dbrx_s_router_jitter_and_embedding_dropout_are_named(tmp_path: Path) -> None:
    config = {**DBRX, "emb_pdrop": 0.1, "ffn_config": {**DBRX["ffn_config"], "moe_jitter_eps": 0.01}}  # type: ignore[dict-item]
    said = translate(
        [str(write(tmp_path, config))], "hf", "megatron", set_values={"model.seq_length": 4096}
    ).report.by_source()
    assert (
        "moe_jitter_eps=0.01 (null or 0: none) multiplies the router's input"
        in said["ffn_config.moe_jitter_eps"].detail
    )
    assert "emb_pdrop=0.1 is never applied" in said["emb_pdrop"].detail
    plain = translate(
        [str(write(tmp_path, DBRX))], "hf", "megatron", set_values={"model.seq_length": 4096}
    ).report.by_source()
    assert "moe_jitter_eps" not in plain["ffn_config.moe_jitter_eps"].detail  # 0: no jitter


def test_dbrx_refuses_tied_embeddings(tmp_path: Path) -> None:
    import pytest

    from neoconv.core.errors import InputError

    with pytest.raises(InputError) as refused:
        read(tmp_path, {**DBRX, "tie_word_embeddings": True})
    assert "refuses tied embeddings" in str(refused.value)
    run = tmp_path / "run.args"  # Megatron ties the output to the embeddings unless told otherwise
    run.write_text(
        "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --max-position-embeddings 128\n"
        "--micro-batch-size 1 --lr 0.0003 --train-iters 10 --swiglu --num-experts 4 --moe-router-topk 2\n"
        "--position-embedding-type rope --padded-vocab-size 128\n"
    )
    result = translate([str(run)], "megatron", "hf", set_values={"model.family": "dbrx"})
    assert json.loads(result.dump())["tie_word_embeddings"] is False
    said = [e for e in result.report.entries if e.fields == ("model.tie_embeddings",) and e.status is Status.LOSSY]
    assert said and "written as tie_word_embeddings=False" in said[0].detail


def test_dbrx_is_written_with_both_rope_theta_keys(tmp_path: Path) -> None:
    run = tmp_path / "run.args"
    run.write_text(
        "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --max-position-embeddings 128\n"
        "--micro-batch-size 1 --lr 0.0003 --train-iters 10 --swiglu --num-experts 4 --moe-router-topk 2\n"
        "--position-embedding-type rope --rotary-base 500000 --padded-vocab-size 128 --untie-embeddings-and-output-weights\n"
    )
    config = json.loads(translate([str(run)], "megatron", "hf", set_values={"model.family": "dbrx"}).dump())
    assert (config["rope_theta"], config["attn_config"]["rope_theta"]) == (500000.0, 500000.0)
    assert read(tmp_path, config)["model.rotary_base"] == 500000.0


# ---- glm4_moe: GLM-4.5, GLM-4.6, GLM-4.5-Air; DeepSeek's router settings -------------------------------

GLM_4_5_AIR = {  # zai-org/GLM-4.5-Air's config.json (the keys its class reads)
    "model_type": "glm4_moe",
    "architectures": ["Glm4MoeForCausalLM"],
    "attention_bias": True,
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 4096,
    "partial_rotary_factor": 0.5,
    "initializer_range": 0.02,
    "intermediate_size": 10944,
    "max_position_embeddings": 131072,
    "num_attention_heads": 96,
    "num_hidden_layers": 46,
    "num_key_value_heads": 8,
    "n_shared_experts": 1,
    "n_routed_experts": 128,
    "routed_scaling_factor": 1.0,
    "n_group": 1,
    "topk_group": 1,
    "first_k_dense_replace": 1,
    "norm_topk_prob": True,
    "num_experts_per_tok": 8,
    "moe_intermediate_size": 1408,
    "rms_norm_eps": 1e-05,
    "rope_theta": 1000000,
    "tie_word_embeddings": False,
    "use_qk_norm": False,
    "vocab_size": 151552,
}


def glm4_moe_by_hand(
    h: int,
    layers: int,
    heads: int,
    kv_heads: int,
    d: int,
    dense: int,
    experts: int,
    width: int,
    shared: int,
    first_dense: int,
    vocab: int,
) -> int:
    """Glm4MoeForCausalLM: embed_tokens; per block two RMSNorms, q/k/v with biases, o_proj without; the
    first first_k_dense_replace blocks a dense gated MLP, the rest a sigmoid router (weight only: its
    correction bias is a buffer), the routed experts and one shared MLP n_shared_experts x as wide; the
    final norm; an untied lm_head."""
    attention = (h * heads * d + heads * d) + 2 * (h * kv_heads * d + kv_heads * d) + heads * d * h
    moe = experts * h + experts * 3 * h * width + 3 * h * shared * width
    return 2 * vocab * h + layers * (attention + 2 * h) + first_dense * 3 * h * dense + (layers - first_dense) * moe + h


def test_glm_4_5_air_reads_as_its_card_and_published_size(tmp_path: Path) -> None:
    ir = read(tmp_path, GLM_4_5_AIR)
    assert (ir["model.family"], ir["model.head_dim"], ir["model.rotary_fraction"], ir["model.moe_router_scoring"]) == (
        "glm4_moe",
        128,
        0.5,
        "sigmoid",
    )
    assert (ir["model.attention_bias"], ir["model.attention_output_bias"], ir["model.moe_first_dense_layers"]) == (
        True,
        False,
        1,
    )
    assert ir.get("model.mla_kv_lora_rank") is None
    total = count_parameters(ir).total
    assert total == glm4_moe_by_hand(4096, 46, 96, 8, 128, 10944, 128, 1408, 1, 1, 151552) == 106_852_245_504


def test_glm_4_5_air_hf2hf_is_the_same_file(tmp_path: Path) -> None:
    result = translate([str(write(tmp_path, GLM_4_5_AIR))], "hf", "hf")
    assert json.loads(result.dump()) == GLM_4_5_AIR
    assert {e.status for e in result.report.entries} == {Status.EXACT}


def test_glm_4_6_s_routed_scaling_is_named(tmp_path: Path) -> None:
    config = {**GLM_4_5_AIR, "routed_scaling_factor": 2.5}
    said = translate(
        [str(write(tmp_path, config))], "hf", "megatron", set_values={"model.seq_length": 4096}
    ).report.by_source()
    assert said["routed_scaling_factor"].status is Status.LOSSY
    assert "routed_scaling_factor=2.5 multiplies the chosen experts' weights" in said["routed_scaling_factor"].detail


def test_deepseek_v3_s_group_limited_routing_and_scaling_are_named_even_when_left_to_the_class(tmp_path: Path) -> None:
    config = {
        "model_type": "deepseek_v3",
        "vocab_size": 101,
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "n_routed_experts": 8,
        "num_experts_per_tok": 2,
        "topk_method": "noaux_tc",
    }
    said = translate(
        [str(write(tmp_path, config))], "hf", "megatron", set_values={"model.seq_length": 128}
    ).report.by_source()
    detail = said["model_type"].detail
    assert "routed_scaling_factor=2.5 multiplies" in detail and "n_group=8 routes each token within" in detail
    assert (
        "HF deepseek_v3 does not read topk_method" in said["topk_method"].detail
    )  # a remote-code key transformers ignores


def test_deepseek_v2_lite_s_greedy_router_has_nothing_to_name(tmp_path: Path) -> None:
    config = json.loads(
        (Path(__file__).parent.parent / "fixtures" / "inputs" / "hf" / "deepseek-v2-lite.json").read_text()
    )
    said = translate(
        [str(write(tmp_path, config))], "hf", "megatron", set_values={"model.seq_length": 128}
    ).report.by_source()
    assert (config["topk_method"], config["routed_scaling_factor"]) == ("greedy", 1.0)
    for key in ("topk_method", "n_group", "topk_group", "routed_scaling_factor"):
        assert "routes each token" not in said[key].detail and "multiplies the chosen" not in said[key].detail


# ---- gpt-sw3: GPT2Config under another model_type ---------------------------------------------------------


def test_gpt_sw3_is_gpt_2_s_class_and_is_written_back_as_it(tmp_path: Path) -> None:
    config = {
        "model_type": "gpt-sw3",
        "n_embd": 64,
        "n_layer": 2,
        "n_head": 4,
        "n_positions": 32,
        "vocab_size": 101,
        "activation_function": "gelu",
        "tie_word_embeddings": False,
    }
    ir = read(tmp_path, config)
    assert (ir["model.family"], ir["model.activation"], ir["model.position_embedding"]) == ("gpt2", "gelu", "learned")
    h = 64  # GPT2LMHeadModel: wte, wpe; per block ln_1, c_attn, c_proj, ln_2, c_fc, c_proj (biased); ln_f; untied lm_head
    block = 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + 2 * h + (h * 4 * h + 4 * h) + (4 * h * h + h)
    assert count_parameters(ir).total == (101 + 32) * h + 2 * block + 2 * h + 101 * h
    assert json.loads(translate([str(write(tmp_path, config))], "hf", "hf").dump()) == config
