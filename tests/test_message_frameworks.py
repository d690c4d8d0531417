"""Every message speaks of the frameworks of its own translation (issue 18): a VeOmni source never
reads "NeoX samples N(0, std)", a DeepSpeed source is never told what "NeoX derives". A report
entry may name the source, the target, and the file each of them drives (NeoX's DeepSpeed
config, VeOmni's HuggingFace config.json), and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from neoconv import translate
from neoconv.knowledge.registry import FORMATS
from neoconv.core.errors import NothingToWrite

from conftest import FIXTURES

INPUTS = FIXTURES / "inputs"
SOURCES = {
    "neox": ["neox/llama-1b.yml", "neox/pythia-160m.yml"],
    "deepspeed": ["deepspeed/warmup-cosine-lr-zero2.json", "deepspeed/onecycle-zero3.json"],
    "cerebras": [
        "cerebras/gpt2-small-legacy.yaml",
        "cerebras/llama-1b-trainer.yaml",
        "cerebras/gptj-tiny-defaults.yaml",
    ],
    "veomni": ["veomni/tinyllama-nested.yaml", "veomni/tinyllama-flat.yaml"],
    "hf": ["hf/llama-3.1-8b.json", "hf/mixtral-8x7b-v0.1.json", "hf/gemma-2-9b.json", "hf/deepseek-v2-lite.json"],
}
# a framework's name as messages spell it; "GPT-NeoX" alone would also be HF's model name, so HF
# model types are written as model_type values (gpt_neox) in messages
NAMES = {
    "neox": r"\bNeoX\b",
    "deepspeed": r"\bDeepSpeed\b",
    "cerebras": r"\bCerebras\b|\bModel Zoo\b",
    "veomni": r"\bVeOmni\b",
    "megatron": r"\bMegatron\b",
    "hf": r"\bHuggingFace\b|\btransformers\b",
}
DRIVES = {"neox": {"deepspeed"}, "veomni": {"hf"}}


def _pairs() -> list[tuple[str, str, str]]:
    return [(src, dst, path) for src, paths in SOURCES.items() for dst in FORMATS if dst in NAMES for path in paths]


@pytest.mark.parametrize("src, dst, path", _pairs())
def test_messages_name_only_the_frameworks_of_the_translation(src: str, dst: str, path: str) -> None:
    try:
        result = translate([str(INPUTS / path)], src, dst, world_size=8)
        said = [(f"{e.source_key} -> {e.target_key}", e.detail) for e in result.report.entries]
    except NothingToWrite as exc:  # nothing of the source is the target's (a config.json into DeepSpeed): the refusal
        said = [("refused", str(exc))]
    allowed = {src, dst} | DRIVES.get(src, set()) | DRIVES.get(dst, set())
    strays = [
        f"[{fmt}] {where}: {detail}"
        for where, detail in said
        for fmt, name in NAMES.items()
        if fmt not in allowed and re.search(name, detail)
    ]
    assert strays == []


def test_the_sources_exist() -> None:
    assert all((INPUTS / p).is_file() for paths in SOURCES.values() for p in paths)
    assert set(SOURCES) <= set(FORMATS)


def test_a_neox_file_with_its_deepspeed_config_calls_neox_defaults_neox(tmp_path: Path) -> None:
    """Issue 18: with --with ds_config.json, NeoX's own defaults were labelled 'DeepSpeed default'."""
    model = tmp_path / "m.yml"
    model.write_text(
        "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\nmax_position_embeddings: 128\n"
    )
    ds = tmp_path / "ds.json"
    ds.write_text(
        '{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2, "zero_optimization": {"stage": 1}}'
    )
    result = translate([str(model), str(ds)], "neox", "cerebras")
    defaults = [e for e in result.report.entries if e.kind == "default_written" and e.fields[0].startswith("model.")]
    assert result.ir.get("batch.micro") == 4  # the DeepSpeed config was read with it
    assert defaults and all(e.detail.startswith("GPT-NeoX default ") for e in defaults)
