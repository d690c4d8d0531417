"""VeOmni and HF formulas, each with real values and its inverse."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neoconv.formats.veomni.schedule import veomni_ratio, veomni_tokens_for
from neoconv.knowledge.formula import FORMULAS, Approx, Unexpressible, unwrap
from neoconv.schedule.fields import parse
from neoconv.schedule.simple import simple


def read(name: str, **kwargs):  # type: ignore[no-untyped-def]
    return FORMULAS[name].read(**kwargs)


def write(name: str, **kwargs):  # type: ignore[no-untyped-def]
    return FORMULAS[name].write(**kwargs)


def veomni_steps(tokens: int, batch_tokens: int, warmup_ratio: float) -> int:
    """VeOmniArguments.compute_train_steps with dyn_bsz, as VeOmni writes it."""
    return math.ceil(int(tokens * (1 + warmup_ratio / 2)) / batch_tokens)


@settings(max_examples=300, deadline=None)
@given(
    steps=st.integers(1, 2_000_000),
    batch=st.sampled_from([1, 8, 512, 1024, 1536]),
    seq=st.sampled_from([512, 2048, 4096, 8192]),
    ratio=st.sampled_from([0.0, 0.007, 0.01, 0.1]),
)
def test_train_size_gives_back_the_steps(steps: int, batch: int, seq: int, ratio: float) -> None:
    tokens = veomni_tokens_for(steps, batch * seq, ratio)
    assert veomni_steps(tokens, batch * seq, ratio) == steps


def test_train_size_keeps_round_numbers() -> None:
    # llama3.yaml: 1e12 tokens, 512 x 8192, bsz_warmup_ratio 0.007 -> 239254 steps; 1e12 comes back
    assert veomni_steps(10**12, 512 * 8192, 0.007) == 239254
    assert veomni_tokens_for(239254, 512 * 8192, 0.007) == 10**12
    # qwen3.yaml: 750000 tokens, 8 x 2048 -> 46 steps per epoch
    assert veomni_tokens_for(46, 8 * 2048, 0.007) == 750000
    # Pythia: 143000 steps of 1024 x 2048 tokens
    assert veomni_tokens_for(143000, 1024 * 2048, 0.0) == 299_892_000_000


@pytest.mark.parametrize("count, total", [(1430, 143000), (2002, 47684), (1674, 239254), (27000, 30000), (7, 3)])
def test_ratio_truncates_back_to_the_count(count: int, total: int) -> None:
    ratio = veomni_ratio(count, total)
    assert int(total * ratio) == count
    assert len(repr(ratio)) <= 20


def test_train_steps_read_and_write() -> None:
    # qwen3.yaml: 750000 tokens, GBS 8, 2048 tokens, bsz warmup 0.007, 3 epochs -> 46 x 3
    assert (
        read(
            "veomni.train_steps",
            data_train_size=750000,
            train_max_steps=None,
            data_train_sample=None,
            data_datasets_type="iterable",
            global_batch=8,
            seq_length=2048,
            warmup_ratio=0.007,
            epochs=3,
            packed=True,
            data_parallel_size=None,
        )
        == 138
    )
    # max_steps caps each epoch (veomni's debug cap): 500 x 2
    assert (
        read(
            "veomni.train_steps",
            data_train_size=10**12,
            train_max_steps=500,
            data_train_sample=None,
            data_datasets_type="iterable",
            global_batch=8,
            seq_length=2048,
            warmup_ratio=0.0,
            epochs=2,
            packed=True,
            data_parallel_size=None,
        )
        == 1000
    )
    # without dyn_bsz an iterable dataset counts train_sample / (GBS / dp)
    assert (
        read(
            "veomni.train_steps",
            data_train_size=None,
            train_max_steps=None,
            data_train_sample=10000,
            data_datasets_type="iterable",
            global_batch=32,
            seq_length=512,
            warmup_ratio=0.0,
            epochs=1,
            packed=False,
            data_parallel_size=8,
        )
        == 2500
    )
    out = write(
        "veomni.train_steps", value=138, global_batch=8, seq_length=2048, warmup_ratio=0.007, epochs=3, packed=True
    )
    assert out == {"data_train_size": 750000}
    with pytest.raises(Unexpressible, match="global batch"):
        write(
            "veomni.train_steps", value=100, global_batch=None, seq_length=2048, warmup_ratio=0.0, epochs=1, packed=None
        )


def test_lr_schedule_read_and_write() -> None:
    lr = "veomni.lr_schedule"
    # llama3.yaml's warmup ratio 0.007 of 239254 steps: int() = 1674; lr 3e-4 int(239254 x 0.007) = 1674, cosine to lr_min at the end
    got = read(
        lr,
        train_optimizer_lr=3e-4,
        train_optimizer_lr_min=3e-5,
        train_optimizer_lr_start=None,
        train_optimizer_lr_warmup_ratio=0.007,
        train_optimizer_lr_decay_style="cosine",
        train_optimizer_lr_decay_ratio=1.0,
        steps=239254,
    )
    s = parse(got["phases"])
    assert got["lr"] == 3e-4 and s.value(0) == 0.0 and s.value(1674) == 3e-4 and s.value(239254) == 3e-5
    # Pythia's cosine (Cerebras' warmup from 0, no NeoX lr / W): exact, with the shortest ratios
    out = write(lr, lr=2e-4, phases=simple(2e-4, 1430, "cosine", 143000, 2e-5).to_json(), steps=143000)
    assert out == {
        "train_optimizer_lr": 2e-4,
        "train_optimizer_lr_start": 0.0,
        "train_optimizer_lr_warmup_ratio": 0.01,
        "train_optimizer_lr_decay_style": "cosine",
        "train_optimizer_lr_min": 2e-5,
        "train_optimizer_lr_decay_ratio": 1.0,
    }
    # ratios of an unknown step count: the schedule is unknown, and the reading says how to give it
    unknown = read(
        lr,
        train_optimizer_lr=3e-4,
        train_optimizer_lr_min=None,
        train_optimizer_lr_start=None,
        train_optimizer_lr_warmup_ratio=0.01,
        train_optimizer_lr_decay_style=None,
        train_optimizer_lr_decay_ratio=None,
        steps=None,
    )
    assert unknown["phases"].value is None and "--set train.steps=N" in unknown["phases"].detail
    # a constant lr without warmup needs no step count
    assert read(
        lr,
        train_optimizer_lr=None,
        train_optimizer_lr_min=None,
        train_optimizer_lr_start=None,
        train_optimizer_lr_warmup_ratio=None,
        train_optimizer_lr_decay_style=None,
        train_optimizer_lr_decay_ratio=None,
        steps=None,
    ) == {"lr": 5e-5, "phases": [{"kind": "constant", "length": 1, "start": 5e-5, "end": 5e-5}]}


# zero_stage and precision are `cases` rules (tests/test_table_cases.py); max_grad_norm (`values: {.inf: 0.0}`,
# `warn_values`): tests/test_table_modifiers.py


def test_hf_gptj_rotary_dim_and_llama_gqa() -> None:
    # GPT-J 6B: rotary_dim 64 of head_dim 256 (4096 / 16)
    assert (
        read(
            "hf.rotary_fraction",
            hf_partial_rotary_factor=None,
            hf_rotary_dim=64,
            hf_rotary_pct=None,
            hf_model_type="gptj",
            hidden_size=4096,
            num_heads=16,
        )
        == 0.25
    )
    assert write(
        "hf.rotary_fraction", value=0.25, family="gptj", position_embedding="rotary", hidden_size=4096, num_heads=16
    ) == {"hf_rotary_dim": 64}
    # a Llama config without num_key_value_heads is multi-head attention
    assert read("hf.num_kv_heads", hf_num_key_value_heads=None, hf_model_type="llama", num_heads=32) == 32
    # GPT-NeoX has no GQA: a GQA model is written as falcon (its new decoder holds kv heads), whose block codec
    # writes them; as a class with no kv heads at all (gpt2's) they are lost
    assert write("hf.num_kv_heads", value=8, family="gpt-neox", position_embedding="rotary", num_heads=64) == {}
    assert (
        write(
            "hf.falcon_block",
            num_kv_heads=8,
            parallel_residual=True,
            parallel_shared_norm=False,
            family="gpt-neox",
            position_embedding="rotary",
            num_heads=64,
        )["hf_num_kv_heads"]
        == 8
    )
    assert isinstance(
        write("hf.num_kv_heads", value=8, family="gpt2", position_embedding="learned", num_heads=64), Approx
    )
    # NeoX's fused tanh GELU is HF gelu_new; Llama's MLP is gated, so SwiGLU is its silu
    assert write("hf.activation", value="gelu_tanh", family="gpt-neox", position_embedding="rotary") == {
        "hf_hidden_act": "gelu_new"
    }
    assert write("hf.activation", value="swiglu", family="llama", position_embedding="rotary") == {
        "hf_hidden_act": "silu"
    }
    assert (
        read("hf.activation", hf_hidden_act="gelu_pytorch_tanh", hf_activation_function=None, hf_model_type="gpt_neox")
        == "gelu_tanh"
    )
    with pytest.raises(Unexpressible, match="no decoder family"):
        write("hf.hidden_size", value=768, family=None, position_embedding=None)
