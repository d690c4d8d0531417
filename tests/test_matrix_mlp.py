"""Matrix: MLP width and activation (gated widths, NeoX's 3x convention, gelu vs its tanh form).

NeoX (megatron/model/transformer.py ParallelMLP, ea7aefd8): the width is intermediate_size, else 4h;
a gated activation builds int(I * 2/3) // 2 per branch, each rounded up to mlp_multiple_of, so the
NeoX value is about 3x the HF/Cerebras one (SEMANTICS.md 1.8): 16896 -> 5632 (TinyLlama), 32768 with
mlp_multiple_of 256 -> 11008 (NeoX's llama2/7B.yml = Llama-2-7B). Writing a gated width NeoX gets
3 x width with mlp_multiple_of 1 (the exact inverse). NeoX `gelu` is erf GELU unless
bias_gelu_fusion (the tanh form, megatron/model/activations.py); HF gelu / gelu_new and Cerebras
gelu / gelu_new (layers/activations.py, 2.10) name the two. HF GPT-2's n_inner null means 4h.
Megatron (d98e8a64): --ffn-hidden-size is one branch's width, absent 4h (int(8h/3 / 64) x 64 with
--swiglu); GELU is the fused tanh form while biases are on unless --no-bias-gelu-fusion
(argument_utils.py core_transformer_config_from_args, core/fusions/fused_bias_gelu.py)."""

from __future__ import annotations

from matrix import Cell, Lossy, No, Row, matrix

NO_MODEL = No("DeepSpeed JSON holds no model architecture")
ROPE = {"norm": "rmsnorm", "pos_emb": "rotary"}  # NeoX blocks that read as Llama's
CS_ROPE = {"norm_type": "rmsnorm", "position_embedding_type": "rotary"}


def cs(name: str, **model: object) -> dict:
    return {"trainer": {"init": {"model": {"name": name, **model}}}}


MG_ROPE = {"--normalization": "RMSNorm", "--position-embedding-type": "rope"}
# Megatron's activation is --swiglu / --squared-relu / --quick-geglu, else GELU (argument_utils.py
# core_transformer_config_from_args, d98e8a64; activation_func has no option): no plain ReLU
MG_NO_RELU = Lossy({}, "approximated")  # written with its default GELU


def gelu_row(name: str, canonical: str, neox: dict, cerebras: str, hf: str, megatron: Cell | Lossy) -> Row:
    """One activation of a GPT-2 block (4h MLP, learned positions)."""
    return Row(
        name,
        {"model.activation": canonical},
        {
            "neox": Cell(neox),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell({"model": {"nonlinearity": cerebras}}),
            "cerebras/trainer": Cell(cs("gpt2", nonlinearity=cerebras)),
            "veomni/nested": Cell({}, side={"model_type": "gpt2", "activation_function": hf}),
            "veomni/flat": Cell({}, side={"model_type": "gpt2", "activation_function": hf}),
            "megatron": megatron,
        },
    )


ROWS = [
    Row(
        "explicit 4h",
        {"model.ffn_hidden_size": 8192},
        {
            "neox": Cell({"intermediate_size": 8192}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell({"model": {"filter_size": 8192}}),
            "cerebras/trainer": Cell(cs("gpt2", filter_size=8192)),
            "veomni/nested": Cell({}, side={"model_type": "gpt2", "n_inner": 8192}),
            "veomni/flat": Cell({}, side={"model_type": "gpt2", "n_inner": 8192}),
            "megatron": Cell({"--ffn-hidden-size": 8192}),
        },
    ),
    Row(
        "default 4h",
        {"model.hidden_size": 2048, "model.num_heads": 16, "model.ffn_hidden_size": 8192},
        {
            "neox": Cell(
                {"hidden_size": 2048, "num_attention_heads": 16},
                writes={"hidden_size": 2048, "intermediate_size": 8192},
            ),
            "deepspeed": NO_MODEL,
            # Cerebras' default filter_size is 3072 whatever the width: it is always written
            "cerebras/legacy": Cell({"model": {"hidden_size": 2048, "num_heads": 16, "filter_size": 8192}}),
            "cerebras/trainer": Cell(cs("gpt2", hidden_size=2048, num_heads=16, filter_size=8192)),
            "veomni/nested": Cell(
                {},
                side={"model_type": "gpt2", "n_embd": 2048, "n_head": 16},
                writes_side={"n_embd": 2048, "n_head": 16, "n_inner": 8192},
            ),
            "veomni/flat": Cell(
                {},
                side={"model_type": "gpt2", "n_embd": 2048, "n_head": 16},
                writes_side={"n_embd": 2048, "n_head": 16, "n_inner": 8192},
            ),
            # validate_args derives 4h; the writer always states the width (its derivation depends on flags)
            "megatron": Cell(
                {"--hidden-size": 2048, "--num-attention-heads": 16},
                writes={"--hidden-size": 2048, "--num-attention-heads": 16, "--ffn-hidden-size": 8192},
            ),
        },
    ),
    Row(
        "swiglu, NeoX 3x",
        {"model.family": "llama", "model.activation": "swiglu", "model.ffn_hidden_size": 5632},
        {
            "neox": Cell({"intermediate_size": 16896, "activation": "swiglu", **ROPE}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell({"model": {"filter_size": 5632, "nonlinearity": "swiglu", **CS_ROPE}}),
            "cerebras/trainer": Cell(cs("llama", filter_size=5632, nonlinearity="swiglu", **CS_ROPE)),
            "veomni/nested": Cell({}, side={"model_type": "llama", "intermediate_size": 5632, "hidden_act": "silu"}),
            "veomni/flat": Cell({}, side={"model_type": "llama", "intermediate_size": 5632, "hidden_act": "silu"}),
            "megatron": Cell({"--ffn-hidden-size": 5632, "--swiglu": True, **MG_ROPE}),  # one branch's width
        },
        context=("model.family",),
    ),
    Row(
        "swiglu, mlp_multiple_of 256",
        {"model.family": "llama", "model.ffn_hidden_size": 11008},
        {
            "neox": Cell(
                {"intermediate_size": 32768, "mlp_multiple_of": 256, "activation": "swiglu", **ROPE},
                writes={"intermediate_size": 33024, "activation": "swiglu"},
            ),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell({"model": {"filter_size": 11008, "nonlinearity": "swiglu", **CS_ROPE}}),
            "cerebras/trainer": Cell(cs("llama", filter_size=11008, nonlinearity="swiglu", **CS_ROPE)),
            "veomni/nested": Cell({}, side={"model_type": "llama", "intermediate_size": 11008}),
            "veomni/flat": Cell({}, side={"model_type": "llama", "intermediate_size": 11008}),
            "megatron": Cell({"--ffn-hidden-size": 11008, "--swiglu": True, **MG_ROPE}),
        },
        context=("model.family",),
    ),
    # Megatron: exact GELU only without the fused bias_gelu_impl (tanh), its default while biases are on
    gelu_row("gelu (erf)", "gelu", {"activation": "gelu"}, "gelu", "gelu", Cell({"--no-bias-gelu-fusion": True})),
    gelu_row(
        "gelu (tanh)",
        "gelu_tanh",
        {"activation": "gelu", "bias_gelu_fusion": True},
        "gelu_new",
        "gelu_new",
        Cell({"--hidden-size": 768}, writes={}),
    ),  # Megatron's default: no option (the file needs one)
    gelu_row("relu", "relu", {"activation": "relu"}, "relu", "relu", MG_NO_RELU),
]

test_cells, test_read, test_write = matrix(ROWS)
