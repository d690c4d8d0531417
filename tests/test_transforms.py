"""Every formula with real values from real configs, and its inverse."""

from __future__ import annotations

import math

import pytest

from translator.formula import FORMULAS, Approx, unwrap
from translator.formulas_common import EXP_DECAY_RATE as NEOX_EXP_RATE
from translator.mapping import load_table
from translator.formulas_common import init_method_std as neox_init_std

ffn = FORMULAS["neox.ffn_width"]


@pytest.mark.parametrize(
    "intermediate, multiple, activation, hidden, expected",
    [
        (32768, 256, "swiglu", 4096, 11008),  # Llama-2-7B (NeoX llama2/7B.yml)
        (86016, 256, "swiglu", 8192, 28672),  # Llama-2-70B
        (33024, 1, "swiglu", 4096, 11008),  # 3 x 11008 reads back exactly
        (None, 1, "gelu", 6144, 24576),  # NeoX-20B: 4h default
        (None, 1, "gelu", 768, 3072),
    ],
)
def test_neox_ffn_width(intermediate, multiple, activation, hidden, expected):
    assert ffn.read(intermediate, None, multiple, hidden, activation) == expected


def test_neox_ffn_width_expansion_factor_and_inverse():
    assert ffn.read(None, 2.0, 1, 1024, "gelu") == 2048
    for width in (11008, 14336, 28672, 2730):
        written = ffn.write(width, "swiglu")["intermediate_size"]
        assert ffn.read(written, None, 1, 4096, "swiglu") == width


def test_rotary_dim_both_ways():
    rot = FORMULAS["cerebras.rotary_dim"]
    assert rot.write(0.25, 6144, 64) == {"model_rotary_dim": 24}  # NeoX-20B, as Cerebras wrote it
    assert rot.write(0.25, 2048, 16) == {"model_rotary_dim": 32}  # Pythia-1.4B
    assert rot.write(1.0, 4096, 32) == {"model_rotary_dim": 128}
    assert rot.read(24, 6144, 64) == 0.25
    value, lossy = unwrap(rot.write(0.3, 768, 12)["model_rotary_dim"])  # 64 * 0.3 = 19.2
    assert value == 19 and "truncated" in lossy


@pytest.mark.parametrize(
    "method, expected",
    [
        ("normal", 0.02),
        ("scaled_normal", 0.02 / math.sqrt(2 * 44)),
        ("small_init", math.sqrt(2 / (5 * 6144))),  # 0.008068715...
        ("wang_init", 2 / (44 * math.sqrt(6144))),  # 0.000579898...
    ],
)
def test_init_std_neox_20b(method, expected):
    assert neox_init_std(method, 0.02, 44, 6144) == pytest.approx(expected, rel=1e-12)


def test_initializers_match_cerebras_own_neox_20b_values():
    # Cerebras' params_gpt_neox_20B.yaml: small_init std 0.00806871530459878, wang std 0.000579898139863442
    out = FORMULAS["cerebras.initializers"].write("small_init", "wang_init", 0.02, 44, 6144, "gpt-neox")
    init, lossy = unwrap(out["model_initializer"])
    assert init["name"] == "truncated_normal"
    assert init["std"] == pytest.approx(0.00806871530459878, rel=1e-9)
    assert init["a"] == pytest.approx(-2 * init["std"]) and init["b"] == pytest.approx(2 * init["std"])
    assert unwrap(out["model_output_layer_initializer"])[0]["std"] == pytest.approx(0.000579898139863442, rel=1e-9)
    assert "truncated" in lossy and "GPT-J" in lossy
    back = FORMULAS["cerebras.initializers"].read(
        0.02, init, unwrap(out["model_output_layer_initializer"])[0], init, 44, 6144
    )
    assert unwrap(back["init_method"])[0] == "small_init"
    assert unwrap(back["output_init_method"])[0] == "wang_init"


def test_neox_schedule_steps():
    sched = FORMULAS["neox.schedule_steps"]
    # Pythia: warmup 0.01 of lr_decay_iters 143000
    assert sched.read(0.01, 143000, None, 143000) == {"warmup_steps": 1430.0, "decay_steps": 143000}
    # warmup is a fraction of the decay span, not of train_iters
    assert sched.read(0.01, 100000, None, 320000) == {"warmup_steps": 1000.0, "decay_steps": 100000}
    assert sched.read(0.1, None, 0.5, 1000) == {"warmup_steps": 50.0, "decay_steps": 500}
    assert sched.read(0.01, None, None, 320000)["decay_steps"] == 320000
    assert sched.write(1430.0, 143000, 143000) == {"lr_decay_iters": 143000, "warmup": 0.01}


def test_cerebras_schedule_cosine_round_trip():
    sched = FORMULAS["cerebras.lr_schedule"]
    out = sched.write(2e-4, "cosine", 1430.0, 143000, 2e-5, 143000)["optimizer_learning_rate"]
    assert out == [
        {"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": 2e-4, "total_iters": 1430},
        {"scheduler": "CosineDecay", "initial_learning_rate": 2e-4, "end_learning_rate": 2e-5, "total_iters": 141570},
    ]
    back = sched.read(out, 143000)
    assert back == {"warmup_steps": 1430.0, "lr": 2e-4, "decay_style": "cosine", "min_lr": 2e-5, "decay_steps": 143000,
                    "warmup_start_lr": 0.0, "warmup_type": "linear", "lag_steps": 0}


def test_cerebras_schedule_linear_reaches_min_lr_early():
    sched = FORMULAS["cerebras.lr_schedule"]
    # NeoX linear decays towards 0 and clamps at min_lr: with min_lr = lr/10 it hits the floor at 90%.
    out = sched.write(1e-3, "linear", 100.0, 1100, 1e-4, 1100)["optimizer_learning_rate"]
    assert out[1] == {"scheduler": "Linear", "initial_learning_rate": 1e-3, "end_learning_rate": 1e-4, "total_iters": 900}
    assert out[2] == {"scheduler": "Constant", "learning_rate": 1e-4}
    assert sched.read(out, 1100)["decay_steps"] == 1100


def test_cerebras_schedule_lossy_cases():
    sched = FORMULAS["cerebras.lr_schedule"]
    value, lossy = unwrap(sched.write(1e-3, "cosine", 10.5, 100, 0.0, 200)["optimizer_learning_rate"])
    assert "rounded" in lossy and "rises again" in lossy
    value, lossy = unwrap(sched.write(1e-3, "exponential", 0.0, 100, 1e-5, 100)["optimizer_learning_rate"])
    assert value["decay_rate"] == pytest.approx(NEOX_EXP_RATE) and "floor" in lossy
    assert sched.write(3e-4, "constant", 0.0, None, 0.0, 10)["optimizer_learning_rate"] == 3e-4


def test_cerebras_schedule_reads_real_gptj_list():
    # Cerebras params_gptj_6B.yaml: Linear warmup, CosineDecay, then a Constant tail.
    spec = [
        {"total_iters": 12800, "scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": 5.809e-5},
        {"scheduler": "CosineDecay", "initial_learning_rate": 5.809e-5, "total_iters": 1280000, "end_learning_rate": 5.809e-6},
        {"scheduler": "Constant", "learning_rate": 5.809e-6},
    ]
    got = FORMULAS["cerebras.lr_schedule"].read(spec, 1493333)
    assert got == {"warmup_steps": 12800.0, "lr": 5.809e-5, "decay_style": "cosine", "min_lr": 5.809e-6, "decay_steps": 1292800,
                   "warmup_start_lr": 0.0, "warmup_type": "linear", "lag_steps": 0}


def test_warmup_start_and_type_reach_cerebras():
    sched = FORMULAS["cerebras.lr_schedule"]
    out = sched.write(1e-3, "cosine", 100.0, 1000, 0.0, 1000, 1e-5, "linear")["optimizer_learning_rate"]
    assert out[0]["initial_learning_rate"] == 1e-5  # e.g. DeepSpeed warmup_min_lr
    value, lossy = unwrap(sched.write(1e-3, "cosine", 100.0, 1000, 0.0, 1000, 0.0, "log")["optimizer_learning_rate"])
    assert "log warmup" in lossy
    # NeoX's first warmup step gets lr / W: a Cerebras warmup from 0 differs there, by that much
    value, lossy = unwrap(sched.write(1e-3, "cosine", 100.0, 1000, 0.0, 1000, 0.0, "linear_clamped")["optimizer_learning_rate"])
    assert value[0]["initial_learning_rate"] == 0.0 and "lr/W = 0.001/100 = 1e-05" in lossy
    assert sched.write(1e-3, "cosine", 100.0, 1000, 0.0, 1000, 0.0, "linear_clamped")["optimizer_learning_rate"].fields == (
        "schedule.warmup_type",)  # fmt: skip
    with pytest.raises(Exception, match="only warms up linearly"):
        FORMULAS["linear_warmup"].write("log", 100.0, 1e-3, 0.0)
    with pytest.raises(Exception, match="lr / warmup_iters"):
        FORMULAS["neox.warmup_from_zero"].write(1e-5)


def test_neox_precision_follows_what_neox_does():
    prec = FORMULAS["neox.precision"]
    assert prec.read(None, True, None, True, None) == "fp16"  # Pythia {"fp16": true, "enabled": true}
    bf16 = prec.read(None, True, "bfloat16", None, None)  # Pythia 1B's DeeperSpeed block
    assert isinstance(bf16, Approx) and bf16.value == "bf16"
    assert prec.read("bfloat16", None, None, None, None) == "bf16"
    assert prec.read(None, None, None, None, True) == "bf16"
    assert prec.read(None, False, None, None, None) == "fp32"
    with pytest.raises(ValueError):
        prec.read("fp8", None, None, None, None)


def test_loss_scale_transforms():
    for fmt in ("deepspeed", "neox"):  # fp16.loss_scale: a rename with `values: {0: dynamic}`
        rule = load_table(fmt).rules_for_field("precision.loss_scale")[0]
        assert rule.formula is not None
        assert rule.formula.read(fp16_loss_scale=0) == "dynamic" and rule.formula.read(fp16_loss_scale=0.0) == "dynamic"
        assert rule.formula.read(fp16_loss_scale=128) == 128.0 and rule.formula.read(fp16_loss_scale=None) is None
        assert rule.formula.write(value="dynamic") == {"fp16_loss_scale": 0}
        assert rule.formula.write(value=256.0) == {"fp16_loss_scale": 256.0}
    assert FORMULAS["deepspeed.initial_scale_power"].read(12) == 4096.0
    assert FORMULAS["deepspeed.initial_scale_power"].write(65536.0) == {"fp16_initial_scale_power": 16}
    assert unwrap(FORMULAS["deepspeed.initial_scale_power"].write(1000.0)["fp16_initial_scale_power"])[1]


def test_activation_gelu_fusion_and_family():
    act = FORMULAS["neox.activation"]
    assert act.read("gelu", True, False) == "gelu_tanh"  # bias_gelu_fusion uses the tanh approximation
    assert act.read("gelu", True, True) == "gelu"  # onnx_safe keeps erf
    assert act.read("swish", False, False) == "silu"
    assert act.write("gelu_tanh") == {"activation": "gelu", "bias_gelu_fusion": True}
    fam = FORMULAS["decoder_family"]
    assert fam.read(True, False, "layernorm", "gelu") == "gpt-neox"
    assert fam.read(True, True, "layernorm", "gelu") == "gptj"
    assert fam.read(False, False, "rmsnorm", "swiglu") == "llama"
    assert fam.read(False, False, "layernorm", "gelu") == "gpt2"


def test_batch_and_parallel():
    dp = FORMULAS["data_parallel"]
    assert dp.read(96, 2, 4) == 12  # NeoX-20B on 96 GPUs
    assert dp.read(8, 1, 0) == 8  # pipe size 0 counts as 1
    with pytest.raises(ValueError):
        dp.read(10, 4, 1)
    gb = FORMULAS["neox.global_batch"]
    assert gb.read(None, 4, 32, 12) == 1536
    assert gb.read(1024, None, None, None) == 1024
    assert gb.read(None, 4, 32, None) is None
    with pytest.raises(ValueError):
        gb.read(1000, 4, 32, 12)


def test_gqa_and_attention_bias():
    gqa = FORMULAS["cerebras.gqa"]
    assert gqa.write(8, 64) == {"model_attention_module": "multiquery_attention", "model_extra_attention_params": {"num_kv_groups": 8}}
    assert gqa.read("multiquery_attention", {"num_kv_groups": 8}, 64) == 8
    assert gqa.read("aiayn_attention", None, 32) == 32
    bias = FORMULAS["cerebras.attention_bias"]
    assert bias.read(False, False) is False
    assert isinstance(bias.read(True, False), Approx)


def test_formula_parameters_are_read_as_inspect_reads_them() -> None:
    import inspect

    from translator.formula import parameters

    FORMULAS.every()  # the generated HF ones too
    for name, formula in FORMULAS.items():
        for func in (formula.read, formula.write):
            assert parameters(func) == frozenset(inspect.signature(func).parameters), name
