"""Every formula with real values from real configs, and its inverse."""

from __future__ import annotations

import math

import pytest

from neoconv.knowledge.formula import structural_family
from neoconv.knowledge.formula import FORMULAS, Approx, Missing, unwrap
from neoconv.schedule.fields import parse, same, summaries
from neoconv.schedule.simple import simple
from neoconv.knowledge.mapping import load_table
from neoconv.knowledge.formula import init_method_std as neox_init_std

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
    assert ffn.read(intermediate, None, multiple, hidden, activation, 1, None) == expected


def test_neox_ffn_width_expansion_factor_and_inverse():
    assert ffn.read(None, 2.0, 1, 1024, "gelu", 1, None) == 2048
    for width in (11008, 14336, 28672, 2730):
        written = ffn.write(width, "swiglu")["intermediate_size"]
        assert ffn.read(written, None, 1, 4096, "swiglu", 1, None) == width


def test_rotary_dim_both_ways():
    rot = FORMULAS["cerebras.rotary_dim"]
    assert rot.write(0.25, 6144, 64, None) == {"model_rotary_dim": 24}  # NeoX-20B, as Cerebras wrote it
    assert rot.write(0.25, 2048, 16, None) == {"model_rotary_dim": 32}  # Pythia-1.4B
    assert rot.write(1.0, 4096, 32, None) == {"model_rotary_dim": 128}
    assert rot.write(1.0, 3584, 16, 256) == {"model_rotary_dim": 256}  # Gemma 2 9B: head_dim 256, not 3584 / 16
    assert rot.read(24, 6144, 64) == 0.25
    value, lossy = unwrap(rot.write(0.3, 768, 12, None)["model_rotary_dim"])  # 64 * 0.3 = 19.2
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


def test_neox_lr_schedule_reads_annealing_lr():
    sched = FORMULAS["neox.lr_schedule"]
    # Pythia: lr 6e-4, warmup 0.01 of lr_decay_iters 143000, cosine to 6e-5; NeoX gives steps 0 and 1 lr/W
    got = sched.read(6e-4, "cosine", 6e-5, 0.01, 143000, None, "Adam", 143000)
    s = parse(got["phases"])
    assert got["lr"] == 6e-4 and s.value(0) == s.value(1) == pytest.approx(6e-4 / 1430) and s.value(1430) == 6e-4
    assert s.value(143000) == pytest.approx(6e-5) and s.value(143000 + 70785) == pytest.approx(3.3e-4)  # rises again
    # warmup is a fraction of the decay span (lr_decay_iters, else train_iters x lr_decay_fraction)
    assert (
        summaries(parse(sched.read(1e-3, "linear", 0.0, 0.01, 100000, None, None, 320000)["phases"]), 320000)[
            "schedule.warmup_steps"
        ]
        == 1000.0
    )
    assert summaries(parse(sched.read(1e-3, "linear", 0.0, 0.1, None, 0.5, None, 1000)["phases"]), 1000) == {
        "schedule.warmup_steps": 50.0,
        "schedule.decay_steps": 500,
        "schedule.min_lr": 0.0,
    }
    # NeoX cannot build its scheduler without a step count: the phases are unknown, and said so
    unknown = sched.read(None, None, None, None, None, None, None, None)
    assert unknown["lr"] == 0.001 and unknown["phases"].value is None and "train.steps" in unknown["phases"].detail


def test_neox_cosine_trap_and_onebitadam():
    sched = FORMULAS["neox.lr_schedule"]
    trap = sched.read(1e-3, "Cosine", 0.0, 0.1, None, None, None, 1000)[
        "phases"
    ]  # passes NeoX's check, trains constant
    assert isinstance(trap, Approx) and "stays constant" in trap.detail
    assert [p["kind"] for p in trap.value] == ["constant", "linear", "constant"] and trap.value[-1]["start"] == 1e-3
    # OneBitAdam: DeepSpeed's WarmupDecayLR (log warmup over int(train_iters x warmup) steps, down to 0)
    one = parse(sched.read(1e-3, None, None, 0.02, None, None, "OneBitAdam", 1000)["phases"])
    assert [p.kind for p in one.phases] == ["constant", "log_warmup", "linear", "constant"]
    assert one.value(0) == 0.0 and one.value(21) == 1e-3 and one.value(1001) == 0.0


def test_neox_lr_schedule_writes_what_annealing_lr_runs():
    sched = FORMULAS["neox.lr_schedule"]
    read = sched.read(6e-4, "cosine", 6e-5, 0.01, 143000, None, "Adam", 143000)
    assert sched.write(6e-4, read["phases"], 143000) == {
        "optimizer_params_lr": 6e-4,
        "lr_decay_style": "cosine",
        "warmup": 0.01,
        "min_lr": 6e-5,
        "lr_decay_iters": 143000,
    }
    # Cerebras' warmup from 0 has no NeoX form (NeoX's first step is lr / W): the closest, and by how much
    cosine = simple(2e-4, 1430, "cosine", 143000, 2e-5).to_json()
    out, why = unwrap(sched.write(2e-4, cosine, 143000))
    assert out["lr_decay_style"] == "cosine" and out["lr_decay_iters"] == 143000 and out["min_lr"] == 2e-5
    assert "differs by at most" in why and why.endswith("instead of 0)")


def test_cerebras_schedule_round_trip():
    sched = FORMULAS["cerebras.lr_schedule"]
    cosine = simple(2e-4, 1430, "cosine", 143000, 2e-5).to_json()
    out = sched.write(2e-4, cosine, 143000)["optimizer_learning_rate"]
    assert out == [
        {"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": 2e-4, "total_iters": 1430},
        {"scheduler": "CosineDecay", "initial_learning_rate": 2e-4, "end_learning_rate": 2e-5, "total_iters": 141570},
        {"scheduler": "Constant", "learning_rate": 2e-5},
    ]
    assert sched.read(out) == {"lr": 2e-4, "phases": cosine}
    # NeoX linear decays towards 0 and clamps at min_lr: with min_lr = lr/10 it reaches the floor at 90%
    neox = FORMULAS["neox.lr_schedule"].read(1e-3, "linear", 1e-4, 100 / 1100, 1100, None, None, 1100)["phases"]
    out = sched.write(1e-3, neox, 1100)["optimizer_learning_rate"]
    assert [o["scheduler"] for o in out] == ["Constant", "Linear", "Linear", "Constant"]
    assert out[2]["total_iters"] in (900, 901) and out[3] == {"scheduler": "Constant", "learning_rate": 1e-4}
    assert same(sched.read(out)["phases"], neox, 1100, 1e-12)  # NeoX's own lrs at every step
    assert sched.write(3e-4, [{"kind": "constant", "length": 1, "start": 3e-4, "end": 3e-4}], 10) == {
        "optimizer_learning_rate": 3e-4
    }


def test_cerebras_schedule_reads_real_gptj_list():
    # Cerebras params_gptj_6B.yaml: Linear warmup, CosineDecay, then a Constant tail.
    spec = [
        {"total_iters": 12800, "scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": 5.809e-5},
        {
            "scheduler": "CosineDecay",
            "initial_learning_rate": 5.809e-5,
            "total_iters": 1280000,
            "end_learning_rate": 5.809e-6,
        },
        {"scheduler": "Constant", "learning_rate": 5.809e-6},
    ]
    got = FORMULAS["cerebras.lr_schedule"].read(spec)
    assert got["lr"] == 5.809e-5 and summaries(parse(got["phases"]), 1493333) == {
        "schedule.warmup_steps": 12800.0,
        "schedule.decay_steps": 1292800,
        "schedule.min_lr": 5.809e-6,
    }


# neox.precision is a `cases` rule: tests/test_table_cases.py


def test_loss_scale_transforms():
    for fmt in ("deepspeed", "neox"):  # fp16.loss_scale: a rename with `values: {0: dynamic}`
        rule = load_table(fmt).rules_for_field("precision.loss_scale")[0]
        assert rule.formula is not None
        assert rule.formula.read(fp16_loss_scale=0) == "dynamic" and rule.formula.read(fp16_loss_scale=0.0) == "dynamic"
        assert rule.formula.read(fp16_loss_scale=128) == 128.0 and rule.formula.read(fp16_loss_scale=None) is None
        assert rule.formula.write(value="dynamic") == {"fp16_loss_scale": 0}
        assert rule.formula.write(value=256.0) == {"fp16_loss_scale": 256.0}
    # fp16.initial_scale_power (`exponent_of: 2`): tests/test_table_modifiers.py


def test_activation_gelu_fusion_and_family():
    act = FORMULAS["neox.activation"]
    assert act.read("gelu", True, False) == "gelu_tanh"  # bias_gelu_fusion uses the tanh approximation
    assert act.read("gelu", True, True) == "gelu"  # onnx_safe keeps erf
    assert act.read("swish", False, False) == "silu"
    assert act.write("gelu_tanh") == {"activation": "gelu", "bias_gelu_fusion": True}
    fam = structural_family
    assert fam(True, False, "layernorm", "gelu") == "gpt-neox"
    assert fam(True, True, "layernorm", "gelu") == "gptj"
    assert fam(False, False, "rmsnorm", "swiglu") == "llama"
    assert fam(False, False, "layernorm", "gelu") == "gpt2"
    # today's models: the blocks tell experts, a window, qk-norm, sandwich norms, latent attention
    assert fam(False, False, "rmsnorm", "swiglu", moe_num_experts=8) == "mixtral"
    assert fam(False, False, "rmsnorm", "swiglu", sliding_window=4096) == "mistral"
    assert fam(False, False, "rmsnorm", "swiglu", qk_norm=True) == "qwen3"
    assert fam(False, False, "rmsnorm", "swiglu", moe_num_experts=128, qk_norm=True) == "qwen3_moe"
    assert fam(False, False, "rmsnorm", "geglu_tanh", sandwich_norm=True) == "gemma2"
    assert fam(False, False, "rmsnorm", "swiglu", mla_kv_lora_rank=512, moe_num_experts=64) == "deepseek_v2"
    assert fam(False, False, "layernorm", "gelu_tanh", position_embedding="alibi", embedding_norm=True) == "bloom"


def test_batch_and_parallel():
    dp = FORMULAS["data_parallel"]
    assert dp.read(96, 2, 4) == 12  # NeoX-20B on 96 GPUs
    assert dp.read(8, 1, 0) == 8  # pipe size 0 counts as 1
    with pytest.raises(ValueError):
        dp.read(10, 4, 1)
    batch = FORMULAS["neox.batch"]
    assert batch.read(None, 4, 32, 12) == {"global": 1536, "micro": 4, "grad_accum": 32}  # NeoX-20B on 96 GPUs
    assert batch.read(1024, None, 1, 8) == {"global": 1024, "micro": 128, "grad_accum": 1}  # NeoX's GA default 1
    assert batch.read(1024, 32, None, 8) == {"global": 1024, "micro": 32, "grad_accum": 4}  # null: NeoX derives it
    assert batch.read(None, 4, 32, None) == {"global": None, "micro": 4, "grad_accum": 32}
    assert batch.read(None, None, None, 8) == {}  # no batch: the file holding it is merged
    with pytest.raises(ValueError):
        batch.read(1000, 4, 32, 12)  # NeoX's check_batch_parameters


def test_batch_rederived_at_the_targets_data_parallel_size():
    # NeoX-20B's 1536 = 4 x 32 x 12 (96 GPUs, pipe 4 x model 2) into VeOmni at the same 96 GPUs: no tensor or
    # pipeline parallelism there, 96 data-parallel ranks: micro 4 x accumulation 4
    out, why = unwrap(FORMULAS["veomni.batch"].write(1536, 4, 32, True, 96, None))
    assert out == {"train_global_batch_size": 1536, "train_micro_batch_size": 4} and "accumulation 4" in why
    # VeOmni ulysses 4 at 8 GPUs (dp 2): 16 = 2 x 4 x 2; NeoX has no Ulysses: dp 8, accumulation 1
    out, why = unwrap(FORMULAS["neox.batch"].write(16, 2, 4, 8, None, None))
    assert out == {"train_batch_size": 16, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 1}
    # a micro batch that does not divide the per-rank batch becomes its largest divisor below it
    out, _ = unwrap(FORMULAS["deepspeed.batch"].write(96, 5, 1, 8, None, None, None))
    assert (out["train_micro_batch_size_per_gpu"], out["gradient_accumulation_steps"]) == (4, 3)
    # DeepSpeed with Ulysses divides the world by sequence_parallel_size
    assert FORMULAS["deepspeed.batch"].write(16, 2, 4, 8, None, None, 4) == {
        "train_batch_size": 16,
        "train_micro_batch_size_per_gpu": 2,
        "gradient_accumulation_steps": 4,
    }
    # a global batch that does not split over the ranks: missing, with the --set that makes it hold (never micro 0)
    missing = FORMULAS["neox.batch"].write(30, None, None, 8, None, None)["train_batch_size"]
    assert isinstance(missing, Missing) and "--set batch.global=24 or --set batch.global=32" in missing.hint
    assert isinstance(
        FORMULAS["deepspeed.batch"].write(4, None, None, 8, None, None, None)["train_batch_size"], Missing
    )


def test_gqa():  # (the attention biases are a cases rule: tests/test_table_cases.py)
    gqa = FORMULAS["cerebras.gqa"]
    assert gqa.write(8, 64) == {
        "model_attention_module": "multiquery_attention",
        "model_extra_attention_params": {"num_kv_groups": 8},
    }
    assert gqa.read("multiquery_attention", {"num_kv_groups": 8}, 64) == 8
    assert gqa.read("aiayn_attention", None, 32) == 32


def test_formula_parameters_are_read_as_inspect_reads_them() -> None:
    import inspect

    from neoconv.knowledge.formula import parameters

    FORMULAS.every()  # the generated HF ones too
    for name, formula in FORMULAS.items():
        for func in (formula.read, formula.write):
            assert parameters(func) == frozenset(inspect.signature(func).parameters), name
