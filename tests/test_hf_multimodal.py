"""The multimodal model types transformers defines (issue 27 item 5, judge W2): the six VeOmni trains (its
MODELING_REGISTRY: qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_vl_moe, qwen2_5_omni, qwen3_omni_moe) are read with their
decoder (text_config, the thinker's text_config, or a transformers 4 file's top-level keys), carried whole by hf2hf
and by a format that trains them (VeOmni), and refused by a decoder-only format with what they are and the decoder
they could be; every other type transformers defines is named by its kind, never "remote code".

The config.json files here are written for the tests, shaped as transformers' config classes
(configuration_qwen2_5_vl.py, configuration_qwen2_5_omni.py, configuration_qwen3_vl_moe.py at 5.23) save them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from neoconv import Status
from neoconv.api import read_ir, translate
from neoconv.cli import main
from neoconv.core.errors import UnsupportedFamily
from neoconv.formats.hf.classes import defined
from neoconv.knowledge.model_size import count_parameters

from conftest import cli_runner

# Qwen2.5-VL-7B's language model has Qwen2.5-7B's shape (hidden 3584, 28 layers, 28 heads, 4 kv heads, MLP 18944,
# vocabulary 152064, untied): per layer q/k/v with biases, o without, a gated MLP, two RMSNorms
TEXT = {
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "vocab_size": 152064,
    "rms_norm_eps": 1e-06,
    "max_position_embeddings": 128000,
    "hidden_act": "silu",
    "use_sliding_window": False,
    "sliding_window": 32768,
    "max_window_layers": 28,
}
# 28 x (2 x 3584^2 + 3584 + 2 x (3584 x 512 + 512) + 3 x 3584 x 18944 + 2 x 3584) + 2 x 152064 x 3584 + 3584
QWEN25_7B_DECODER = 7_615_616_512
VISION = {
    "depth": 32,
    "hidden_size": 1280,
    "intermediate_size": 3420,
    "num_heads": 16,
    "out_hidden_size": 3584,
    "window_size": 112,
    "fullatt_block_indexes": [7, 15, 23, 31],
    "spatial_merge_size": 2,
}
TOKENS = {
    "image_token_id": 151655,
    "video_token_id": 151656,
    "vision_start_token_id": 151652,
    "vision_end_token_id": 151653,
}


def qwen25vl_v5() -> dict[str, Any]:
    """transformers 5's layout: the decoder in text_config, rope_parameters with the multimodal sections."""
    rope = {"rope_type": "default", "rope_theta": 1000000.0, "mrope_section": [16, 24, 24]}
    text = {"model_type": "qwen2_5_vl_text", **TEXT, "rope_parameters": rope}
    return {
        "architectures": ["Qwen2_5_VLForConditionalGeneration"],
        "model_type": "qwen2_5_vl",
        "text_config": text,
        "vision_config": {"model_type": "qwen2_5_vl_vision", **VISION},
        **TOKENS,
        "tie_word_embeddings": False,
    }


def qwen25vl_v4() -> dict[str, Any]:
    """transformers 4's layout (the released checkpoints'): the decoder's keys at the top, rope_scaling type mrope."""
    return {
        "architectures": ["Qwen2_5_VLForConditionalGeneration"],
        "model_type": "qwen2_5_vl",
        **TEXT,
        **TOKENS,
        "rope_theta": 1000000.0,
        "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]},
        "tie_word_embeddings": False,
        "vision_config": VISION,
    }


def qwen25omni() -> dict[str, Any]:
    """Qwen2.5-Omni: the thinker's language model at thinker_config.text_config, a talker and token2wav beside it."""
    text = {
        "model_type": "qwen2_5_omni_text",
        **TEXT,
        "tie_word_embeddings": False,
        "rope_theta": 1000000.0,
        "rope_scaling": {"mrope_section": [16, 24, 24], "rope_type": "default", "type": "default"},
    }
    thinker = {
        "model_type": "qwen2_5_omni_thinker",
        "text_config": text,
        "audio_config": {"d_model": 1280},
        "vision_config": {"depth": 32},
        "audio_token_index": 151646,
        "image_token_index": 151655,
    }
    return {
        "architectures": ["Qwen2_5OmniModel"],
        "model_type": "qwen2_5_omni",
        "thinker_config": thinker,
        "talker_config": {"hidden_size": 896},
        "token2wav_config": {"dit_config": {"dim": 1024}},
        "enable_audio_output": True,
    }


def qwen3vlmoe() -> dict[str, Any]:
    """Qwen3-VL-30B-A3B's shape: a Qwen3-MoE decoder in text_config (128 experts, 8 per token)."""
    text = {
        "model_type": "qwen3_vl_moe_text",
        "hidden_size": 2048,
        "intermediate_size": 6144,
        "num_hidden_layers": 48,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "vocab_size": 151936,
        "moe_intermediate_size": 768,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "decoder_sparse_step": 1,
        "rope_scaling": {"mrope_interleaved": True, "mrope_section": [24, 20, 20], "rope_type": "default"},
        "rope_theta": 5000000.0,
    }
    return {
        "architectures": ["Qwen3VLMoeForConditionalGeneration"],
        "model_type": "qwen3_vl_moe",
        "text_config": text,
        "vision_config": {"depth": 27},
        "image_token_id": 151655,
        "tie_word_embeddings": False,
    }


def write(tmp_path: Path, config: dict[str, Any], name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(config, indent=2))
    return path


def model_type_line(path: Path) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.strip().startswith('"model_type"'))


@pytest.mark.parametrize("layout", [qwen25vl_v5, qwen25vl_v4, qwen25omni])
def test_the_decoder_is_read_wherever_the_file_keeps_it(tmp_path: Path, layout: Any) -> None:
    ir = read_ir([str(write(tmp_path, layout()))], "hf").ir.plain()
    wanted = {
        "model.hidden_size": 3584,
        "model.num_layers": 28,
        "model.num_heads": 28,
        "model.num_kv_heads": 4,
        "model.ffn_hidden_size": 18944,
        "model.vocab_size": 152064,
        "model.rotary_base": 1000000.0,
        "model.attention_bias": True,
        "model.tie_embeddings": False,
    }
    assert {k: ir.get(k) for k in wanted} == wanted
    assert ir.get("model.rope_scaling_type") in (None, "none")  # mrope is plain RoPE to the decoder
    assert count_parameters(ir).total == QWEN25_7B_DECODER


def test_a_moe_decoder_of_qwen3_vl_moe(tmp_path: Path) -> None:
    ir = read_ir([str(write(tmp_path, qwen3vlmoe()))], "hf").ir.plain()
    assert (ir.get("model.moe_num_experts"), ir.get("model.moe_experts_per_token"), ir.get("model.head_dim")) == (
        128,
        8,
        128,
    )
    assert ir.get("model.moe_normalize_top_k") is True  # Qwen3VLMoeTextTopKRouter always renormalises
    assert ir.get("model.qk_norm") is True and ir.get("model.rotary_base") == 5000000.0


@pytest.mark.parametrize("layout", [qwen25vl_v5, qwen25vl_v4, qwen25omni, qwen3vlmoe])
def test_hf2hf_carries_the_whole_model(tmp_path: Path, layout: Any) -> None:
    config = layout()
    result = translate([write(tmp_path, config)], "hf", "hf")
    written = json.loads(result.dump())
    if layout is qwen25vl_v5:  # transformers 5's rope_parameters as the 4.x pair, which both releases read
        params = config["text_config"].pop("rope_parameters")
        config["text_config"]["rope_theta"] = params.pop("rope_theta")
        config["text_config"]["rope_scaling"] = params
    assert written == config
    by = {e.source_key: e for e in result.report.entries}
    assert all(e.status is Status.EXACT for e in result.report.entries), [
        e for e in by.values() if e.status is not Status.EXACT
    ]
    aside = [k for k, e in by.items() if e.kind == "carried_unchecked"]
    assert aside and all(
        k.split(".")[0]
        in (
            "vision_config",
            "rope_scaling",
            "rope_parameters",
            "text_config",
            *TOKENS,
            "thinker_config",
            "talker_config",
            "token2wav_config",
            "enable_audio_output",
        )
        for k in aside
    )


@pytest.mark.parametrize("dst", ["neox", "megatron", "cerebras"])
def test_a_decoder_only_format_refuses_it_naming_the_decoder_it_could_be(tmp_path: Path, dst: str) -> None:
    path = write(tmp_path, qwen25vl_v5())
    with pytest.raises(UnsupportedFamily) as caught:
        translate([path], "hf", dst, world_size=8)
    message = str(caught.value)
    assert "a multimodal model" in message and "Qwen2_5_VLConfig" in message and "remote code" not in message
    assert "could be translated alone as a qwen2 config.json of the keys of text_config" in message
    assert caught.value.line == model_type_line(path) == 5  # "model_type": "qwen2_5_vl", after the architectures


def test_the_cli_refusal_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    path, out = write(tmp_path, qwen25vl_v4()), tmp_path / "out.yml"
    result = cli_runner().invoke(main, ["hf2neox", str(path), "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    lines = result.stderr.strip().splitlines()
    assert (
        len(lines) == 1
        and f"{path}:{model_type_line(path)}:" in lines[0]
        and "the decoder's top-level keys" in lines[0]
    )


def test_veomni_trains_it_whole_its_config_json_carried(tmp_path: Path) -> None:
    config = qwen25omni()
    out = tmp_path / "run.yaml"
    result = translate([write(tmp_path, config)], "hf", "veomni", output=str(out))
    side = json.loads(result.side_files["run.config.json"])
    assert side == config
    by = {e.source_key: e for e in result.report.entries}
    assert by["thinker_config.audio_config.d_model"].status is Status.EXACT
    assert by["thinker_config.audio_config.d_model"].target_key == "run.config.json:thinker_config.audio_config.d_model"
    assert (
        by["thinker_config.text_config.hidden_size"].target_key
        == "run.config.json:thinker_config.text_config.hidden_size"
    )
    assert not [e for e in result.report.entries if e.status in (Status.LOSSY, Status.DROPPED, Status.UNKNOWN)]
    assert result.report.target.get("verified") is True


def test_a_veomni_run_of_it_reads_its_decoder_and_refuses_a_decoder_only_target(tmp_path: Path) -> None:
    write(tmp_path, qwen3vlmoe())
    run = tmp_path / "run.yaml"
    run.write_text("model:\n  config_path: config.json\ndata:\n  train_path: x\ntrain:\n  global_batch_size: 64\n")
    same = translate([run], "veomni", "veomni")
    assert same.ir.get("model.moe_num_experts") == 128
    assert not [e for e in same.report.entries if e.status in (Status.LOSSY, Status.DROPPED, Status.UNKNOWN)]
    with pytest.raises(UnsupportedFamily) as caught:
        translate([run], "veomni", "megatron", world_size=8)
    assert caught.value.file == str(tmp_path / "config.json") and caught.value.line == model_type_line(
        tmp_path / "config.json"
    )
    assert "as a qwen3_moe config.json" in str(caught.value)


# ---- every type transformers defines: by its kind, never remote code --------------------------------------------
@pytest.mark.parametrize(
    "config,said",
    [
        ({"model_type": "llava", "text_config": {"model_type": "llama"}}, "HF llava (LlavaConfig): a multimodal model"),
        ({"model_type": "mllama"}, "HF mllama (MllamaConfig): a multimodal model"),
        ({"model_type": "t5", "d_model": 512}, "HF t5 (T5Config): an encoder-decoder model"),
        ({"model_type": "vit", "hidden_size": 768}, "HF vit (ViTConfig): a vision model"),
        ({"model_type": "wav2vec2"}, "HF wav2vec2 (Wav2Vec2Config): an audio model"),
        ({"model_type": "qwen2_vl_vision"}, "a nested config of another model (qwen2_vl.vision_config)"),
        ({"model_type": "my_lab_lm"}, "which no transformers release neoconv reads (4.57.6, 5.9.0, 5.23.0) defines"),
    ],
)
def test_each_type_is_named_by_what_transformers_defines_it_as(
    tmp_path: Path, config: dict[str, Any], said: str
) -> None:
    result = translate([write(tmp_path, config)], "hf", "hf")
    assert said in result.report.entries[0].detail
    assert ("remote code" in result.report.entries[0].detail) == (config["model_type"] == "my_lab_lm")


def test_a_multimodal_type_no_wrapper_reads_names_its_decoder(tmp_path: Path) -> None:
    path = write(tmp_path, {"model_type": "llava", "text_config": {"model_type": "llama", "hidden_size": 4096}})
    with pytest.raises(UnsupportedFamily) as caught:
        translate([path], "hf", "neox", world_size=8)
    assert "its decoder could be translated alone as a llama config.json" in str(caught.value)


def test_the_types_are_every_release_s() -> None:
    found = defined()
    assert found.releases == ("4.57.6", "5.9.0", "5.23.0")
    assert (found.types["llama"].kind, found.types["bert"].kind, found.types["whisper"].kind) == (
        "decoder",
        "encoder",
        "encoder-decoder",
    )
    vl = found.types["qwen2_5_vl"]
    assert (vl.name, vl.kind, vl.parts["text_config"]) == ("Qwen2_5_VLConfig", "multimodal", "qwen2_5_vl_text")
    assert found.types["qwen3_5"].releases == ("5.9.0", "5.23.0")  # Qwen3.5 came with transformers 5


def test_the_keys_transformers_4_writes_into_every_config_are_known(tmp_path: Path) -> None:
    """4.57's PretrainedConfig.to_dict() writes its generation settings into every config (and every nested one):
    settings with no canonical meaning, not unknown keys."""
    assert {"typical_p", "use_bfloat16", "torchscript", "_name_or_path"} <= defined().common
    config = {**qwen25omni()}
    config["thinker_config"]["text_config"].update({"typical_p": 1.0, "use_bfloat16": False, "_name_or_path": ""})
    path = write(tmp_path, config)
    assert not [e for e in translate([path], "hf", "hf").report.entries if e.status is not Status.EXACT]
    llama = write(
        tmp_path, {"model_type": "llama", "hidden_size": 64, "typical_p": 1.0, "torchscript": False}, "l.json"
    )
    by = translate([llama], "hf", "neox", world_size=8).report.by_source()
    assert by["typical_p"].status is Status.DROPPED and by["torchscript"].status is Status.DROPPED


def test_a_veomni_release_before_its_registry_builds_the_model_refuses_it(tmp_path: Path) -> None:
    """VeOmni registered qwen3_vl_moe with #178, in the release labelled #164 (VeOmni's git history): an older
    --to-version cannot train it; #164 and later carry it."""
    path = write(tmp_path, qwen3vlmoe())
    with pytest.raises(UnsupportedFamily) as caught:
        translate([path], "hf", "veomni", output=str(tmp_path / "r.yaml"), target_version="#123")
    assert "VeOmni #123 does not build HF qwen3_vl_moe (its MODELING_REGISTRY has it from #164)" in str(caught.value)
    carried = translate([path], "hf", "veomni", output=str(tmp_path / "r.yaml"), target_version="#164")
    assert json.loads(carried.side_files["r.config.json"]) == qwen3vlmoe()


@pytest.mark.parametrize("given,status", [(True, Status.EXACT), (False, Status.LOSSY)])
def test_a_key_the_decoder_does_not_read_loses_nothing_when_it_says_what_it_hard_wires(
    tmp_path: Path, given: bool, status: Status
) -> None:
    """Qwen3VLMoeTextTopKRouter always renormalises; a (4.x) norm_topk_prob saying so loses nothing, false does."""
    config = qwen3vlmoe()
    config["text_config"]["norm_topk_prob"] = given
    out = tmp_path / "run.yaml"
    entry = translate([write(tmp_path, config)], "hf", "veomni", output=str(out)).report.by_source()[
        "text_config.norm_topk_prob"
    ]
    assert entry.status is status
