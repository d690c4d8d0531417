"""Matrix: normalisation type, epsilon and bias.

NeoX reads the epsilon of the norm it builds: layernorm_epsilon (1e-5), rms_norm_epsilon (1e-8!),
scalenorm_epsilon (1e-8) (megatron/model/norms.py get_norm, neox_args.py); a layernorm_epsilon
beside `norm: rmsnorm` has no effect. Its LayerNorm always has a bias and its RMSNorm none
(use_bias_in_norms is never read). Cerebras has one layer_norm_epsilon (1e-5) and names the
bias-free forms biasless-layernorm / nonparametric-layernorm (layers/norms.py, 2.10). HF: the
model_type fixes the norm (GPT-2 LayerNorm with bias, Llama RMSNorm) and its epsilon key. Megatron:
--normalization LayerNorm (always with a bias) or RMSNorm (none), one --norm-epsilon (1e-5)
(core/transformer/transformer_config.py `normalization: Literal['LayerNorm', 'RMSNorm']`,
core/fusions/fused_layer_norm.py; d98e8a64)."""

from __future__ import annotations

from matrix import Cell, Lossy, No, Row, matrix

NO_MODEL = No("DeepSpeed JSON holds no model architecture")
LLAMA = {"activation": "swiglu", "pos_emb": "rotary"}  # with rmsnorm: NeoX blocks that read as Llama's
CS_LLAMA = {"nonlinearity": "swiglu", "position_embedding_type": "rotary"}


def cs(name: str, **model: object) -> dict:
    return {"trainer": {"init": {"model": {"name": name, **model}}}}


MG_LLAMA = {"--swiglu": True, "--position-embedding-type": "rope"}


def rms(eps: float, neox: dict, writes: dict | None = None) -> dict:
    """The cells of an RMSNorm (Llama) block with this epsilon."""
    return {
        "neox": Cell({"norm": "rmsnorm", **neox, **LLAMA}, writes=writes),
        "deepspeed": NO_MODEL,
        "cerebras/legacy": Cell({"model": {"norm_type": "rmsnorm", "layer_norm_epsilon": eps, **CS_LLAMA}}),
        "cerebras/trainer": Cell(cs("llama", norm_type="rmsnorm", layer_norm_epsilon=eps, **CS_LLAMA)),
        "veomni/nested": Cell({}, side={"model_type": "llama", "rms_norm_eps": eps}),
        "veomni/flat": Cell({}, side={"model_type": "llama", "rms_norm_eps": eps}),
        "megatron": Cell({"--normalization": "RMSNorm", "--norm-epsilon": eps, **MG_LLAMA}),  # one epsilon
    }


RMS = {"model.family": "llama", "model.norm": "rmsnorm", "model.norm_bias": False}
ROWS = [
    Row(
        "layernorm 1e-6",
        {"model.norm": "layernorm", "model.norm_bias": True, "model.norm_eps": 1e-6},
        {
            "neox": Cell({"norm": "layernorm", "layernorm_epsilon": 1e-6}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell({"model": {"norm_type": "layernorm", "layer_norm_epsilon": 1e-6}}),
            "cerebras/trainer": Cell(cs("gpt2", norm_type="layernorm", layer_norm_epsilon=1e-6)),
            "veomni/nested": Cell({}, side={"model_type": "gpt2", "layer_norm_epsilon": 1e-6}),
            "veomni/flat": Cell({}, side={"model_type": "gpt2", "layer_norm_epsilon": 1e-6}),
            "megatron": Cell({"--normalization": "LayerNorm", "--norm-epsilon": 1e-6}),
        },
    ),
    Row(
        "rmsnorm 1e-6",
        {**RMS, "model.norm_eps": 1e-6},
        rms(1e-6, {"rms_norm_epsilon": 1e-6}),
        context=("model.family",),
    ),
    Row(
        "rmsnorm, NeoX default 1e-8",
        {**RMS, "model.norm_eps": 1e-8},
        rms(1e-8, {}, writes={"norm": "rmsnorm", "rms_norm_epsilon": 1e-8}),
        context=("model.family",),
    ),
    Row(
        "rmsnorm, a layernorm eps has no effect",
        {**RMS, "model.norm_eps": 1e-8},
        rms(1e-8, {"layernorm_epsilon": 1e-5}, writes={"norm": "rmsnorm", "rms_norm_epsilon": 1e-8}),
        context=("model.family",),
    ),
    Row(
        "layernorm without bias",
        {"model.norm": "layernorm", "model.norm_bias": False},
        {
            "neox": Lossy({"norm": "layernorm"}, "cannot_express"),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell({"model": {"norm_type": "biasless-layernorm"}}),
            "cerebras/trainer": Cell(cs("gpt2", norm_type="biasless-layernorm")),
            "veomni/nested": Lossy({}, "fixed_value", side={"model_type": "gpt2"}),
            "veomni/flat": Lossy({}, "fixed_value", side={"model_type": "gpt2"}),
            "megatron": Lossy({"--normalization": "LayerNorm"}, "approximated"),  # its LayerNorm has a bias
        },
    ),
    Row(
        "non-parametric layernorm",
        {"model.norm": "non_parametric_layernorm", "model.norm_bias": False, "model.norm_eps": 1e-5},
        {
            "neox": Cell({"norm": "non_parametric_layernorm", "layernorm_epsilon": 1e-5}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell({"model": {"norm_type": "nonparametric-layernorm", "layer_norm_epsilon": 1e-5}}),
            "cerebras/trainer": Cell(cs("gpt2", norm_type="nonparametric-layernorm", layer_norm_epsilon=1e-5)),
            "veomni/nested": Lossy({}, "fixed_value", side={"model_type": "gpt2"}),
            "veomni/flat": Lossy({}, "fixed_value", side={"model_type": "gpt2"}),
            "megatron": Lossy({}, "approximated"),  # written with its default LayerNorm
        },
    ),
]

test_cells, test_read, test_write = matrix(ROWS)
