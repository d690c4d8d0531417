"""The `hf` format (HF config.json) on the published models of fixtures/inputs/hf/: each model type
reads as its card's numbers (the canonical values typed by hand in tests/test_model_size.py) and as
the parameter total published for it; writes back as the same model; and today's constructs (RoPE
scaling, sliding windows, experts) go through every other format and back, kept or named as lost.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from neoconv.api import read_ir, translate
from neoconv.knowledge.catalogue import absent_means
from neoconv.services.diff import diff_ir
from neoconv.core.errors import InputError, NothingToWrite
from neoconv.core.ir import Origin
from neoconv.knowledge.model_size import count_parameters
from neoconv.knowledge.mapping import load_table
from neoconv.knowledge.registry import FORMATS
from neoconv.core.report import Status

from conftest import CORPUS
from test_model_size import FIXTURES, MODELS

NAMING = (Status.LOSSY, Status.DROPPED, Status.MISSING)


def hf_ir(config: Any, **options: Any) -> dict[str, Any]:
    return read_ir(config if isinstance(config, dict) else [str(config)], "hf", **options).ir.plain()


def meant(ir: dict[str, Any], name: str) -> Any:
    """The field's value, or what leaving it out means (absent head_dim: hidden / heads)."""
    value = ir.get(name)
    return absent_means(name, ir.get) if value is None else value


def mismatches(ir: dict[str, Any], expected: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    return {name: (want, meant(ir, name)) for name, want in expected.items() if meant(ir, name) != want}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_model_type_reads_as_its_card(name: str) -> None:
    values, published = MODELS[name]
    ir = hf_ir(FIXTURES / f"{name}.json")
    assert mismatches(ir, values) == {}
    assert count_parameters(ir).total == published


FAMILY = {  # model_type -> the family it reads as (the HF spelling, gpt-neox keeps its dash)
    "gpt_neox": "gpt-neox",
    "llama": "llama",
    "mistral": "mistral",
    "mixtral": "mixtral",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "qwen3_moe": "qwen3_moe",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "phi3": "phi3",
    "falcon": "falcon",
    "starcoder2": "starcoder2",
    "mpt": "mpt",
    "bloom": "bloom",
    "deepseek_v2": "deepseek_v2",
    "gemma3": "gemma3",
    "olmo2": "olmo2",
    "granite": "granite",
    "smollm3": "smollm3",
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_each_model_type_writes_back_as_the_same_model(name: str) -> None:
    """Written by the hf writer from the canonical values (not carried as the file was) and read
    again: the same model type, the same values, the same parameter total."""
    source = json.loads((FIXTURES / f"{name}.json").read_text())
    written = translate([str(FIXTURES / f"{name}.json")], "hf", "hf").config
    assert written["model_type"] == source["model_type"]
    ir = hf_ir(dict(written))
    assert ir["model.family"] == FAMILY[source["model_type"]]
    values, published = MODELS[name]
    assert mismatches(ir, values) == {}
    assert count_parameters(ir).total == published


# ---- today's constructs through every format ------------------------------------------------

# the other formats that hold a model's architecture (DeepSpeed JSON holds none: its table has no width)
OTHERS = [f for f in FORMATS if f != "hf" and load_table(f).rules_for_field("model.hidden_size")]
SUFFIX = {"megatron": ".args", "hf": ".json"}


def round_trip(name: str, via: str, tmp_path: Path, **options: Any) -> tuple[Any, dict[str, Any]]:
    """hf -> `via` (written to a file as the CLI would) -> read back by `via`'s reader."""
    out = tmp_path / f"out{SUFFIX.get(via, '.yaml')}"
    result = translate([str(FIXTURES / f"{name}.json")], "hf", via, output=str(out))
    out.write_text(result.dump())
    for side, text in result.side_files.items():
        (tmp_path / side).write_text(text)
    return result, read_ir([str(out)], via, **options).ir.plain()


def named(result: Any, *fields: str) -> bool:
    """The report names a loss of one of the fields."""
    return any(e.status in NAMING and set(fields) & set(e.fields) for e in result.report.entries)


MOE = ("model.moe_num_experts", "model.moe_experts_per_token")


@pytest.mark.parametrize("via", OTHERS)
@pytest.mark.parametrize("name", ["mixtral-8x7b-v0.1", "qwen3-30b-a3b", "deepseek-v2-lite"])
def test_experts_go_through_every_format(name: str, via: str, tmp_path: Path) -> None:
    values, published = MODELS[name]
    vocab = {"model.vocab_size": values["model.vocab_size"]}  # NeoX stores no vocabulary
    result, back = round_trip(name, via, tmp_path, set_values=vocab)
    assert {f: back.get(f) for f in MOE} == {f: values[f] for f in MOE}
    counted = count_parameters(back).total
    if counted != published:  # an expert width or a layer the target cannot build: said, never silent
        assert named(
            result,
            "model.moe_ffn_hidden_size",
            "model.moe_shared_experts",
            "model.moe_first_dense_layers",
            "model.activation",
            "model.mla_kv_lora_rank",
            "model.head_dim",
        ), (counted, published)


KEPT_COUNT = {  # (model, format) whose read-back total is the published one
    ("mixtral-8x7b-v0.1", "cerebras"),
    ("mixtral-8x7b-v0.1", "megatron"),
    ("mixtral-8x7b-v0.1", "veomni"),
    ("qwen3-30b-a3b", "cerebras"),
    ("qwen3-30b-a3b", "megatron"),
    ("qwen3-30b-a3b", "veomni"),
    ("deepseek-v2-lite", "veomni"),
}


@pytest.mark.parametrize(("name", "via"), sorted(KEPT_COUNT))
def test_experts_keep_the_parameter_total(name: str, via: str, tmp_path: Path) -> None:
    values, published = MODELS[name]
    _, back = round_trip(name, via, tmp_path, set_values={"model.vocab_size": values["model.vocab_size"]})
    assert count_parameters(back).total == published


LLAMA3_ROPE = {
    "model.rope_scaling_type": "llama3",
    "model.rope_scaling_factor": 8.0,
    "model.rope_low_freq_factor": 1.0,
    "model.rope_high_freq_factor": 4.0,
    "model.rope_original_max_positions": 8192,
    "model.rotary_base": 500000.0,
}


def test_llama3_rope_scaling_reads_from_the_card() -> None:
    assert {f: hf_ir(FIXTURES / "llama-3.1-8b.json").get(f) for f in LLAMA3_ROPE} == LLAMA3_ROPE


@pytest.mark.parametrize("via", OTHERS)
def test_llama3_rope_scaling_goes_through_every_format(via: str, tmp_path: Path) -> None:
    result, back = round_trip("llama-3.1-8b", via, tmp_path, set_values={"model.vocab_size": 128256})
    kept = {f: back.get(f) for f in LLAMA3_ROPE}
    if via in ("cerebras", "veomni", "megatron"):  # pos_scaling_*, the config.json, --use-rope-scaling
        assert kept == LLAMA3_ROPE
        assert not named(result, *LLAMA3_ROPE)
    else:  # NeoX has a rotary base but no scaling: the scaling is lossy, with why
        assert kept["model.rotary_base"] == 500000.0 and kept["model.rope_scaling_type"] is None
        assert named(result, "model.rope_scaling_type")
    if via == "megatron":
        assert result.config["--use-rope-scaling"] is True  # the writer's document holds the options as written


def test_megatron_rope_scaling_other_than_llama3_s_is_named(tmp_path: Path) -> None:
    """--use-rope-scaling is Llama 3.1's scaling: pretrain_gpt.py never passes --rope-scaling-factor (core_v0.11.0+)
    on, so another factor is written for the entry points that read it and named lossy."""
    card = json.loads((FIXTURES / "llama-3.1-8b.json").read_text())
    card["rope_scaling"] = {**card["rope_scaling"], "factor": 32.0}  # Llama 3.2's
    result = translate(card, "hf", "megatron")
    assert result.config["--use-rope-scaling"] is True and result.config["--rope-scaling-factor"] == 32.0
    lossy = [e for e in result.report.entries if e.status is Status.LOSSY and "model.rope_scaling_factor" in e.fields]
    assert lossy and "factor 32" in lossy[0].detail


WINDOWS = {  # model -> (window, per-layer pattern) its card gives
    "mistral-7b-v0.1": (4096, None),
    "gemma-2-9b": (4096, ["sliding", "full"] * 21),
}


@pytest.mark.parametrize("via", OTHERS)
@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_sliding_windows_go_through_every_format(name: str, via: str, tmp_path: Path) -> None:
    window, pattern = WINDOWS[name]
    vocab = MODELS[name][0]["model.vocab_size"]
    result, back = round_trip(name, via, tmp_path, set_values={"model.vocab_size": vocab})
    assert back.get("model.sliding_window") == window  # NeoX and Megatron write 4095: the same keys
    # Model Zoo 2.10 windows every other layer (first); Megatron's --window-attn-skip-freq 2 the odd ones from 1
    if pattern is None or via in ("cerebras", "veomni", "megatron"):
        assert back.get("model.attention_layer_types") == pattern
    else:
        assert named(result, "model.attention_layer_types")


def test_neox_writes_the_window_one_less(tmp_path: Path) -> None:
    """NeoX's sliding_window_width counts the keys before the query (HF's window less one)."""
    result, _ = round_trip("mistral-7b-v0.1", "neox", tmp_path, set_values={"model.vocab_size": 32000})
    assert result.config["sliding_window_width"] == 4095


def test_megatron_writes_the_window_as_flash_attention_s_left_and_right(tmp_path: Path) -> None:
    """--window-size L,R: keys from q - L to q + R (flash attention's window): HF's 4096 is 4095,0;
    --window-attn-skip-freq 2: the layers 2, 4, ... (from 1) attend fully, Gemma 2's pattern."""
    mistral, _ = round_trip("mistral-7b-v0.1", "megatron", tmp_path, set_values={"model.vocab_size": 32000})
    assert mistral.config["--window-size"] == "4095,0" and "--window-attn-skip-freq" not in mistral.config
    gemma, _ = round_trip("gemma-2-9b", "megatron", tmp_path, set_values={"model.vocab_size": 256000})
    assert gemma.config["--window-size"] == "4095,0" and gemma.config["--window-attn-skip-freq"] == 2


# ---- Pythia: neox2hf gives the paper's totals ---------------------------------------------

PYTHIA = {  # corpus file -> (fixture with the paper's total, padded vocabulary)
    "70M.yml": "pythia-70m",
    "160M.yml": "pythia-160m",
    "410M.yml": "pythia-410m",
    "1B.yml": "pythia-1b",
    "1-4B.yml": "pythia-1.4b",
    "2-8B.yml": "pythia-2.8b",
    "6-9B.yml": "pythia-6.9b",
    "12B.yml": "pythia-12b",
}


@pytest.mark.parametrize("config", sorted(PYTHIA))
def test_neox2hf_on_pythia_gives_the_papers_total(config: str, tmp_path: Path) -> None:
    path = CORPUS / "neox" / "pythia" / config
    if not path.exists():
        pytest.skip(f"the shared corpus {CORPUS} is not present (it lives beside the checkout)")
    values, published = MODELS[PYTHIA[config]]
    result = translate([str(path)], "neox", "hf", set_values={"model.vocab_size": values["model.vocab_size"]})
    assert result.config["model_type"] == "gpt_neox"
    ir = hf_ir(dict(result.config))
    # bias_gelu_fusion: NeoX's fused bias GELU is the tanh approximation (the hub's config.json says
    # gelu); the card's other numbers are the config's
    assert ir["model.activation"] == "gelu_tanh" and result.config["hidden_act"] == "gelu_new"
    same = {k: v for k, v in values.items() if k not in ("model.max_position_embeddings", "model.activation")}
    assert mismatches(ir, same) == {}
    assert count_parameters(ir).total == published


# ---- the corpus's Llama 3.1, Mistral and Mixtral into every format ----------------------------

CORPUS_MODELS = {  # Model Zoo's own configs -> the construct each is about, as Model Zoo reads it
    "cerebras-trainer/llama/params_llama3p1_8b_msl_128k.yaml": {
        "model.rope_scaling_type": "llama3",
        "model.rope_scaling_factor": 8.0,
        "model.rope_low_freq_factor": 1.0,
        "model.rope_high_freq_factor": 4.0,
        "model.rope_original_max_positions": 8192,
    },
    "cerebras-trainer/mistral/params_mistral_7B_msl128k.yaml": {"model.sliding_window": 4096, "model.num_kv_heads": 8},
    "cerebras-trainer/mixtral/params_mixtral_8x7b.yaml": {"model.moe_num_experts": 8, "model.moe_experts_per_token": 2},
}
TARGETS = [f for f in FORMATS if f != "cerebras"]


def _there_and_read_back(path: Path, dst: str, tmp_path: Path) -> tuple[Any, Any]:
    """A Cerebras corpus file translated into `dst`, written with its side files, and read back."""
    out = tmp_path / f"out{SUFFIX.get(dst, '.json' if dst == 'deepspeed' else '.yaml')}"
    result = translate([str(path)], "cerebras", dst, output=str(out))
    out.write_text(result.dump())
    for side, text in result.side_files.items():
        (tmp_path / side).write_text(text)
    return result, read_ir([str(out)], dst).ir


@pytest.mark.parametrize("dst", TARGETS)
@pytest.mark.parametrize("config", sorted(CORPUS_MODELS))
def test_todays_corpus_models_keep_their_construct_or_say_so(config: str, dst: str, tmp_path: Path) -> None:
    path = CORPUS / config
    if not path.exists():
        pytest.skip(f"the shared corpus {CORPUS} is not present (it lives beside the checkout)")
    construct = CORPUS_MODELS[config]
    assert {f: read_ir([str(path)], "cerebras").ir.get(f) for f in construct} == construct
    result, back = _there_and_read_back(path, dst, tmp_path)
    kept = {f for f, v in construct.items() if back.get(f) == v}
    lost = {f for f in construct if f not in kept}
    assert all(named(result, f) for f in lost), f"{sorted(lost)} neither kept nor named"
    if dst in ("hf", "veomni"):  # a config.json of the model's own class holds all of it
        assert lost == set()


@pytest.mark.parametrize(
    ("name", "pre_softmax"), [("mixtral-8x7b-v0.1", False), ("qwen3-30b-a3b", False), ("deepseek-v2-lite", True)]
)
def test_megatron_keeps_whether_the_top_k_weights_are_renormalised(name: str, pre_softmax: bool) -> None:
    """Mixtral and Qwen3 (norm_topk_prob) renormalise the chosen experts' weights, as Megatron's default
    softmax over the chosen logits does; DeepSeek-V2-Lite (norm_topk_prob false) does not: Megatron's
    --moe-router-pre-softmax."""
    result = translate([str(FIXTURES / f"{name}.json")], "hf", "megatron")
    assert bool(result.config.get("--moe-router-pre-softmax")) is pre_softmax
    # (the DeepSeek card's norm_topk_prob is a key its class never reads: the reading says so)
    said = [e.detail for e in result.report.entries if e.status in NAMING and "model.moe_normalize_top_k" in e.fields]
    assert not any("Megatron" in why for why in said)


# ---- each construct of today's models, from an HF card, through every format ------------------


def card(name: str, **changes: Any) -> dict[str, Any]:
    return {**json.loads((FIXTURES / f"{name}.json").read_text()), **changes}


LONG = {"short_factor": [1.0] * 48, "long_factor": [2.0] * 48}  # one per rotated pair of Phi-3-mini's 96-wide heads
CONSTRUCTS: dict[str, tuple[dict[str, Any], dict[str, Any], set[str]]] = {
    # name: (config.json, its canonical values, the formats that keep them all; the others name the loss)
    "linear RoPE": (
        card("llama-2-7b", rope_scaling={"rope_type": "linear", "factor": 4.0}),
        {"model.rope_scaling_type": "linear", "model.rope_scaling_factor": 4.0},
        {"cerebras", "veomni"},
    ),
    "dynamic RoPE": (
        card("llama-2-7b", rope_scaling={"rope_type": "dynamic", "factor": 2.0}),
        {"model.rope_scaling_type": "dynamic", "model.rope_scaling_factor": 2.0},
        {"veomni"},
    ),
    "yarn": (
        card(
            "qwen2.5-7b", rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
        ),
        {
            "model.rope_scaling_type": "yarn",
            "model.rope_scaling_factor": 4.0,
            "model.rope_original_max_positions": 32768,
        },
        {"cerebras", "megatron", "veomni"},
    ),
    "longrope": (
        card(
            "phi-3-mini-4k",
            max_position_embeddings=131072,
            original_max_position_embeddings=4096,
            rope_scaling={"type": "longrope", **LONG},
        ),
        {
            "model.rope_scaling_type": "longrope",
            "model.rope_short_factor": LONG["short_factor"],
            "model.rope_long_factor": LONG["long_factor"],
            "model.rope_original_max_positions": 4096,
        },
        {"cerebras", "veomni"},
    ),
    "partial rotary": (
        card("pythia-160m"),
        {"model.rotary_fraction": 0.25, "model.rotary_base": 10000.0},
        {"cerebras", "megatron", "neox", "veomni"},
    ),
    "grouped-query attention": (
        card("llama-3.1-8b"),
        {"model.num_kv_heads": 8},
        {"cerebras", "megatron", "neox", "veomni"},
    ),
    "explicit head_dim": (
        card("gemma-7b"),
        {"model.head_dim": 256, "model.tie_embeddings": True},
        {"cerebras", "megatron", "veomni"},
    ),
    "qk-norm": (card("qwen3-8b"), {"model.qk_norm": True}, {"cerebras", "megatron", "neox", "veomni"}),
    "logit soft-capping": (
        card("gemma-2-9b"),
        {"model.attention_logit_softcap": 50.0, "model.final_logit_softcap": 30.0},
        {"cerebras", "veomni"},
    ),
    "output-only norms, qk-norm over the projections (OLMo 2)": (
        card("olmo-2-1124-7b"),
        {
            "model.input_norm": False,
            "model.sandwich_norm": True,
            "model.qk_norm": True,
            "model.qk_norm_span": "projection",
        },
        {"veomni"},
    ),
    "muP multipliers (Granite)": (
        card("granite-3.1-8b-base"),
        {
            "model.attention_scaling": "inverse_head_dim",
            "model.embedding_multiplier": 12.0,
            "model.residual_multiplier": 0.22,
            "model.output_logits_multiplier": 0.0625,
        },
        {"veomni"},
    ),
    "layers without RoPE (SmolLM3)": (
        card("smollm3-3b"),
        {"model.nope_layers": [3, 7, 11, 15, 19, 23, 27, 31, 35]},
        {"megatron", "veomni"},
    ),
    "query/key/value biases only": (
        card("qwen2.5-7b"),
        {"model.attention_bias": True, "model.attention_output_bias": False, "model.mlp_bias": False},
        {"cerebras", "megatron", "veomni"},
    ),
}


@pytest.mark.parametrize("via", OTHERS)
@pytest.mark.parametrize("construct", sorted(CONSTRUCTS))
def test_todays_constructs_are_kept_or_named(construct: str, via: str, tmp_path: Path) -> None:
    config, values, holders = CONSTRUCTS[construct]
    assert {f: hf_ir(config).get(f) for f in values} == values
    out = tmp_path / f"out{SUFFIX.get(via, '.yaml')}"
    result = translate(config, "hf", via, output=str(out))
    out.write_text(result.dump())
    for side, text in result.side_files.items():
        (tmp_path / side).write_text(text)
    back = read_ir([str(out)], via, set_values={"model.vocab_size": config["vocab_size"]}).ir
    lost = sorted(f for f, v in values.items() if back.get(f) != v)
    if via in holders:
        assert lost == []
    else:
        assert lost and all(named(result, f) for f in lost), lost


MUP = {
    "model.attention_scaling": "inverse_head_dim",
    "model.embedding_multiplier": 10.0,
    "model.mup_base_hidden_size": 256,
    "model.mup_base_ffn_hidden_size": 1024.0,
    "model.mup_output_logits_scaling": "width",
}
# NeoX's use_mup holds the multipliers; its base widths live in the mup library's base_shapes_file
MUP_KEPT = {"neox": {"model.attention_scaling", "model.embedding_multiplier", "model.mup_output_logits_scaling"}}


@pytest.mark.parametrize("dst", TARGETS)
def test_cerebras_gpt_mup_is_kept_or_named(dst: str, tmp_path: Path) -> None:
    path = CORPUS / "cerebras-trainer" / "gpt3" / "Cerebras_GPT" / "111m_mup.yaml"
    if not path.exists():
        pytest.skip(f"the shared corpus {CORPUS} is not present (it lives beside the checkout)")
    assert {f: read_ir([str(path)], "cerebras").ir.get(f) for f in MUP} == MUP
    result, back = _there_and_read_back(path, dst, tmp_path)
    kept = {f for f, v in MUP.items() if back.get(f) == v}
    assert kept == MUP_KEPT.get(dst, set())
    assert all(named(result, f) for f in set(MUP) - kept)


# ---- defaults a class computes, and keys that say "no window" on purpose ----------------------------


def test_a_default_the_class_computes_is_worked_out_from_the_file() -> None:
    """mappings/hf.yaml's `=model.x` defaults (transformers 5.23's __post_init__s and model code)."""
    gpt2 = {"model_type": "gpt2", "vocab_size": 101, "n_embd": 64, "n_layer": 2, "n_head": 4, "n_inner": None}
    assert hf_ir(gpt2)["model.ffn_hidden_size"] == 256  # GPT2Block: n_inner null is 4 x n_embd
    falcon = {
        "model_type": "falcon",
        "vocab_size": 101,
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 8,
        "new_decoder_architecture": True,
    }
    ir = hf_ir(falcon)  # FalconConfig.__post_init__: num_kv_heads = heads, ffn_hidden_size = 4 x hidden
    assert ir["model.num_kv_heads"] == 8 and ir["model.ffn_hidden_size"] == 256
    llama = {
        "model_type": "llama",
        "vocab_size": 101,
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 8,
    }
    ir = hf_ir(llama)  # LlamaConfig.__post_init__: kv heads = heads, head_dim = hidden / heads
    assert ir["model.num_kv_heads"] == 8 and ir.get("model.head_dim") is None
    # Qwen3Config's head_dim defaults to 128; Qwen3MoeConfig has no head_dim: its attention takes hidden / heads
    grouped = {**llama, "num_key_value_heads": 2}  # (the Qwen3 classes' kv-head defaults, 32 and 4, do not divide 8)
    assert hf_ir({**grouped, "model_type": "qwen3"})["model.head_dim"] == 128
    assert hf_ir({**grouped, "model_type": "qwen3_moe"}).get("model.head_dim") is None


def test_a_head_width_the_class_would_not_default_to_is_written() -> None:
    """Llama's class computes hidden / heads (not written); Qwen3's would take 128 (written)."""
    llama = FIXTURES.parent / "neox" / "llama-1b.yml"  # hidden 2048, 32 heads: 64 wide
    written = {
        fam: translate([str(llama)], "neox", "hf", set_values={"model.family": fam, "model.vocab_size": 32000}).config
        for fam in ("llama", "qwen3")
    }
    assert "head_dim" not in written["llama"]
    assert written["qwen3"]["model_type"] == "qwen3" and written["qwen3"]["head_dim"] == 64


def entry(result: Any, key: str) -> Any:
    return next(e for e in result.report.entries if e.source_key == key)


@pytest.mark.parametrize("via", OTHERS)
def test_an_explicit_null_window_is_carried_as_no_window(via: str, tmp_path: Path) -> None:
    """Mixtral's published config.json says "sliding_window": null: no window, which every format
    holds by leaving its window out (not a value nothing could be derived from)."""
    result, back = round_trip("mixtral-8x7b-v0.1", via, tmp_path, set_values={"model.vocab_size": 32000})
    said = entry(result, "sliding_window")
    assert said.status is Status.CONVERTED and said.kind == "means_absent", said
    assert "sliding_window is null" in said.detail
    assert result.ir.get("model.sliding_window") is None and back.get("model.sliding_window") is None


def test_mistral_s_null_window_is_not_its_class_default() -> None:
    config = card("mistral-7b-v0.1", sliding_window=None)
    result = translate(config, "hf", "neox", set_values={"model.seq_length": 4096, "train.steps": 10})
    assert result.ir.get("model.sliding_window") is None  # MistralConfig's default 4096 is not what null means
    assert entry(result, "sliding_window").kind == "means_absent"
    assert "sliding_window_width" not in result.config
    windowed = translate(
        card("mistral-7b-v0.1"), "hf", "neox", set_values={"model.seq_length": 4096, "train.steps": 10}
    )
    assert windowed.ir.get("model.sliding_window") == 4096 and windowed.config["sliding_window_width"] == 4095


def test_qwen_s_window_switch_decides_whether_sliding_window_counts() -> None:
    """Qwen2Config.__post_init__ keeps sliding_window only with use_sliding_window: true; then the
    layers from max_window_layers on are windowed (4096 when the file omits the width)."""
    off = translate(card("qwen2.5-7b"), "hf", "neox", set_values={"train.steps": 10})
    assert off.ir.get("model.sliding_window") is None
    for key in ("use_sliding_window", "sliding_window", "max_window_layers"):
        said = entry(off, key)
        assert said.status is Status.CONVERTED and "use_sliding_window is false" in said.detail, said
    on = card("qwen2.5-7b", use_sliding_window=True, max_window_layers=26)
    on.pop("sliding_window")
    ir = hf_ir(on)
    assert ir["model.sliding_window"] == 4096
    assert ir["model.attention_layer_types"] == ["full"] * 26 + ["sliding"] * 2


# ---- what an HF class hard-wires is visible to diff ---------------------------------------------------

# Gemma 2's class: pre- and post-norms around attention and MLP, embeddings scaled by sqrt(hidden),
# (1 + weight) norms, soft-capping 50 / 30 when config.json omits it (Gemma2Config's defaults)
GEMMA2_WIRED = {
    "model.sandwich_norm": True,
    "model.embedding_scale_by_sqrt_hidden": True,
    "model.norm_unit_offset": True,
    "model.attention_logit_softcap": 50.0,
    "model.final_logit_softcap": 30.0,
}
# what each target keeps (Model Zoo 2.3.1+ has them all but the unit offset, which it folds into the weights)
GEMMA2_KEPT = {
    "neox": set(),
    "cerebras": set(GEMMA2_WIRED) - {"model.norm_unit_offset"},
    "megatron": {"model.norm_unit_offset"},
}  # layernorm_zero_centered_gamma


@pytest.mark.parametrize("dst", sorted(GEMMA2_KEPT))
def test_what_gemma2_s_class_hard_wires_is_diffed_and_named(dst: str, tmp_path: Path) -> None:
    config = {
        k: v for k, v in card("gemma-2-9b").items() if k not in ("attn_logit_softcapping", "final_logit_softcapping")
    }
    source = tmp_path / "config.json"
    source.write_text(json.dumps(config))
    a = read_ir([str(source)], "hf")
    assert {f: a.ir.get(f) for f in GEMMA2_WIRED} == GEMMA2_WIRED
    assert all(a.ir.fields[f].origin is not Origin.DEFAULT for f in GEMMA2_WIRED)  # the class's model, not a default
    out = tmp_path / f"out{SUFFIX.get(dst, '.yaml')}"
    result = translate(
        [str(source)], "hf", dst, output=str(out), set_values={"model.seq_length": 8192, "train.steps": 10}
    )
    out.write_text(result.dump())
    b = read_ir([str(out)], dst)
    differences = diff_ir(a, b)
    differ = {
        c.field for c in (*differences.changed, *differences.only_a, *differences.only_b, *differences.inexpressible)
    }
    kept = {f for f, v in GEMMA2_WIRED.items() if b.ir.get(f) == v}
    assert kept == GEMMA2_KEPT[dst]
    assert set(GEMMA2_WIRED) - kept <= differ  # diff shows every one the target lost
    assert not kept & differ
    assert all(named(result, f) for f in set(GEMMA2_WIRED) - kept)  # and the report names it


def test_an_explicit_null_is_what_the_class_does_with_none_not_its_default() -> None:
    """GPT-J's rotary_dim null rotates the whole head (the default is 64); Qwen's sliding_window null is no
    window even with use_sliding_window: true (the default is 4096)."""
    gptj = {"model_type": "gptj", "vocab_size": 101, "n_embd": 256, "n_layer": 2, "n_head": 2}
    assert hf_ir({**gptj, "rotary_dim": None})["model.rotary_fraction"] == 1.0
    assert hf_ir(gptj)["model.rotary_fraction"] == 0.5  # 64 of 128
    for model_type in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe"):
        on = card("qwen2.5-7b", model_type=model_type, use_sliding_window=True, max_window_layers=0)
        assert hf_ir({**on, "sliding_window": None}).get("model.sliding_window") is None, model_type
        on.pop("sliding_window")
        assert hf_ir(on)["model.sliding_window"] == 4096, model_type


# ---- multimodal wrappers: Gemma 3 (model_type gemma3: text_config + vision_config) ------------------

GEMMA3 = FIXTURES / "gemma-3-4b-it.json"
VISION = ["boi_token_index", "eoi_token_index", "image_token_index", "mm_tokens_per_image", "vision_config"]
GEMMA3_KEPT = {  # target -> the decoder's constructs it keeps (the others are named as lost)
    "neox": {"model.qk_norm", "model.sliding_window"},
    "cerebras": {
        "model.qk_norm",
        "model.sandwich_norm",
        "model.sliding_window",
        "model.rope_scaling_type",
        "model.rope_scaling_factor",
    },
    "megatron": {"model.qk_norm", "model.sliding_window"},
    "veomni": {
        "model.qk_norm",
        "model.sandwich_norm",
        "model.sliding_window",
        "model.rope_scaling_type",
        "model.rope_scaling_factor",
        "model.sliding_window_rotary_base",
    },
}
GEMMA3_DECODER = {
    "model.qk_norm": True,
    "model.sandwich_norm": True,
    "model.sliding_window": 1024,
    "model.rope_scaling_type": "linear",
    "model.rope_scaling_factor": 8.0,
    "model.sliding_window_rotary_base": 10000.0,
}


def test_gemma3_s_decoder_is_read_with_its_keys_named_as_nested() -> None:
    read = read_ir([str(GEMMA3)], "hf")
    assert read.ir.get("model.family") == "gemma3" and read.ir.get("model.hidden_size") == 2560
    assert read.source is not None
    assert read.source.aliases["hf.hidden_size"] == "text_config.hidden_size"
    assert read.source.line_of("hf.hidden_size") == 18  # text_config's hidden_size (vision_config's is line 33)


@pytest.mark.parametrize("dst", [f for f in FORMATS if f != "hf"])  # those without an architecture too
def test_gemma3_s_vision_tower_is_one_dropped_entry(dst: str, tmp_path: Path) -> None:
    suffix = SUFFIX.get(dst, ".json" if dst == "deepspeed" else ".yaml")
    batch = {"batch.global": 8} if dst == "deepspeed" else {}  # DeepSpeed holds nothing of a config.json but a batch
    try:
        result = translate([str(GEMMA3)], "hf", dst, output=str(tmp_path / f"out{suffix}"), set_values=batch)
    except NothingToWrite:  # a format with no architecture and more than a batch to be given (the HF Trainer's)
        assert not load_table(dst).rules_for_field("model.hidden_size")
        return
    aside = [e for e in result.report.entries if e.kind == "family_not_supported"]
    assert sorted(e.source_key for e in aside) == VISION  # the block vision_config as one entry
    assert all(e.status is Status.DROPPED and "SigLIP vision tower" in e.detail for e in aside)


@pytest.mark.parametrize("via", OTHERS)
def test_gemma3_s_decoder_goes_through_every_format(via: str, tmp_path: Path) -> None:
    result, back = round_trip("gemma-3-4b-it", via, tmp_path, set_values={"model.vocab_size": 262208})
    kept = {f for f, v in GEMMA3_DECODER.items() if back.get(f) == v}
    assert kept == GEMMA3_KEPT[via]
    assert all(named(result, f) for f in set(GEMMA3_DECODER) - kept)


def test_gemma3_hf2hf_is_the_same_file() -> None:
    result = translate([str(GEMMA3)], "hf", "hf")
    assert result.config == json.loads(GEMMA3.read_text())
    assert all(e.status is Status.EXACT for e in result.report.entries)


@pytest.mark.parametrize("name, inner", [("mistral-7b-v0.1", None), ("gemma-3-4b-it", "text_config")])
def test_hf2hf_leaves_a_window_the_file_left_to_its_class(name: str, inner: str | None, tmp_path: Path) -> None:
    # Mistral's class default is a 4096 window (Gemma 3's 4096 too): a file without sliding_window has
    # one, so hf2hf must not pin the key to null (which turns the window off)
    config = json.loads((FIXTURES / f"{name}.json").read_text())
    (config[inner] if inner else config).pop("sliding_window")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    result = translate([str(path)], "hf", "hf")
    assert result.config == config
    assert all(e.status is Status.EXACT for e in result.report.entries)
    assert read_ir([str(path)], "hf").ir.get("model.sliding_window") == 4096


def test_a_window_the_source_has_not_is_still_pinned_to_null_in_mistral(tmp_path: Path) -> None:
    # the same class from a llama file (no window): without the null, Mistral's default would add one
    written = translate([str(FIXTURES / "llama-2-7b.json")], "hf", "hf", set_values={"model.family": "mistral"}).config
    assert written["model_type"] == "mistral" and written["sliding_window"] is None


def test_a_gemma3_decoder_from_another_format_is_written_as_gemma3_text(tmp_path: Path) -> None:
    out = tmp_path / "g.yaml"
    result = translate([str(GEMMA3)], "hf", "veomni", output=str(out))
    out.write_text(result.dump())
    for side, text in result.side_files.items():
        (tmp_path / side).write_text(text)
    written = translate([str(out)], "veomni", "hf").config
    assert (written["model_type"], written["architectures"]) == ("gemma3_text", ["Gemma3ForCausalLM"])
    assert "vision_config" not in written and "text_config" not in written
    assert count_parameters(hf_ir(dict(written))).total == MODELS["gemma-3-4b-it"][1]


def test_gemma3_s_transformers5_rope_parameters_read_as_the_4x_keys() -> None:
    config = json.loads(GEMMA3.read_text())
    text = {k: v for k, v in config["text_config"].items() if k != "rope_scaling"}
    text["rope_parameters"] = {
        "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0},
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
    }
    ir = hf_ir({**config, "text_config": text})
    assert {f: ir.get(f) for f in GEMMA3_DECODER} == GEMMA3_DECODER


def test_gemma3_without_text_config_is_the_class_s_default_decoder() -> None:
    ir = hf_ir({"model_type": "gemma3", "vision_config": {"hidden_size": 1152}})
    assert (ir["model.family"], ir["model.vocab_size"], ir["model.hidden_size"]) == ("gemma3", 262208, 2304)


def test_a_text_config_that_is_no_object_is_refused() -> None:
    with pytest.raises(InputError, match="text_config of HF model_type 'gemma3' is not a JSON object"):
        hf_ir({"model_type": "gemma3", "text_config": [1]})


# ---- Granite: the score scale is attention_multiplier itself; logits are divided by logits_scaling ----


@pytest.mark.parametrize(
    ("multiplier", "values"),
    [
        (
            0.0078125,
            {"model.attention_scaling": "inverse_head_dim", "model.attention_logits_multiplier": None},
        ),  # 1/128
        (
            0.0883883476483184,
            {"model.attention_scaling": None, "model.attention_logits_multiplier": None},
        ),  # 1/sqrt(128)
        (0.02, {"model.attention_scaling": None, "model.attention_logits_multiplier": pytest.approx(0.02 * 128**0.5)}),
    ],
)
def test_granite_s_attention_multiplier_reads_as_the_canonical_scale(multiplier: float, values: dict[str, Any]) -> None:
    config = card("granite-3.1-8b-base", attention_multiplier=multiplier)
    ir = hf_ir(config)
    assert {f: ir.get(f) for f in values} == values
    written = translate(config, "hf", "hf").config
    assert written["attention_multiplier"] == pytest.approx(multiplier)
    assert written["logits_scaling"] == 16.0 and hf_ir(config)["model.output_logits_multiplier"] == 0.0625


def test_granite_s_multipliers_are_named_when_written_as_llama(tmp_path: Path) -> None:
    ir = hf_ir(card("granite-3.1-8b-base"))
    result = translate(
        card("granite-3.1-8b-base"),
        "hf",
        "veomni",
        output=str(tmp_path / "run.yaml"),
        set_values={"model.family": "llama"},
    )
    written = json.loads(result.side_files["run.config.json"])
    assert written["model_type"] == "llama" and "attention_multiplier" not in written
    assert all(
        named(result, f)
        for f in (
            "model.attention_scaling",
            "model.embedding_multiplier",
            "model.residual_multiplier",
            "model.output_logits_multiplier",
        )
    )
    assert ir["model.residual_multiplier"] == 0.22
