"""Matrix: position encoding (learned vs rotary), the rotary fraction and base.

NeoX: pos_emb (default learned), rotary_pct of each head's dimensions (default 1.0), rotary_emb_base
(default 10000; neox_args.py). Cerebras: position_embedding_type (GPT-2 default learned), rotary_dim
= head_dim x fraction, required with rotary (layers/EmbeddingLayer.py, 2.10), rope_theta. HF:
GPTNeoX rotary_pct / rotary_emb_base, Llama rope_theta with every dimension rotated, GPT-2 learned
only (n_positions). Megatron: --position-embedding-type (learned_absolute default, rope), --rotary-percent
(1.0), --rotary-base (10000; core_v0.8.0+)."""

from __future__ import annotations

from matrix import Cell, No, Row, matrix

NO_MODEL = No("DeepSpeed JSON holds no model architecture")
HEADS = {"model.hidden_size": 2048, "model.num_heads": 16}  # head_dim 128


def cs(name: str, **model: object) -> dict:
    return {"trainer": {"init": {"model": {"name": name, **model}}}}


ROWS = [
    Row(
        "rotary 25%, base 1e4",
        {**HEADS, "model.position_embedding": "rotary", "model.rotary_fraction": 0.25, "model.rotary_base": 10000},
        {
            "neox": Cell(
                {
                    "hidden_size": 2048,
                    "num_attention_heads": 16,
                    "pos_emb": "rotary",
                    "rotary_pct": 0.25,
                    "rotary_emb_base": 10000,
                }
            ),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell(
                {
                    "model": {
                        "hidden_size": 2048,
                        "num_heads": 16,
                        "position_embedding_type": "rotary",
                        "rotary_dim": 32,
                        "rope_theta": 10000,
                    }
                }
            ),
            "cerebras/trainer": Cell(
                cs(
                    "gpt2",
                    hidden_size=2048,
                    num_heads=16,
                    position_embedding_type="rotary",
                    rotary_dim=32,
                    rope_theta=10000,
                )
            ),
            "veomni/nested": Cell(
                {},
                side={
                    "model_type": "gpt_neox",
                    "hidden_size": 2048,
                    "num_attention_heads": 16,
                    "rotary_pct": 0.25,
                    "rotary_emb_base": 10000,
                    "use_parallel_residual": False,
                },
            ),
            "veomni/flat": Cell(
                {},
                side={
                    "model_type": "gpt_neox",
                    "hidden_size": 2048,
                    "num_attention_heads": 16,
                    "rotary_pct": 0.25,
                    "rotary_emb_base": 10000,
                    "use_parallel_residual": False,
                },
            ),
            "megatron": Cell(
                {
                    "--hidden-size": 2048,
                    "--num-attention-heads": 16,
                    "--position-embedding-type": "rope",
                    "--rotary-percent": 0.25,
                    "--rotary-base": 10000,
                }
            ),
        },
    ),
    Row(
        "rotary full, base 5e5",
        {
            **HEADS,
            "model.family": "llama",
            "model.position_embedding": "rotary",
            "model.rotary_fraction": 1.0,
            "model.rotary_base": 500000,
        },
        {
            # mlp_multiple_of 256: the 4h default gated MLP NeoX builds at width 2048 otherwise does not run
            # (a 2731-wide gate, a 2730-wide output layer): NeoX's own configs set it
            "neox": Cell(
                {
                    "hidden_size": 2048,
                    "num_attention_heads": 16,
                    "pos_emb": "rotary",
                    "rotary_emb_base": 500000,
                    "norm": "rmsnorm",
                    "activation": "swiglu",
                    "mlp_multiple_of": 256,
                },
                writes={
                    "hidden_size": 2048,
                    "num_attention_heads": 16,
                    "pos_emb": "rotary",
                    "rotary_emb_base": 500000,
                    "norm": "rmsnorm",
                    "activation": "swiglu",
                },
            ),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell(
                {
                    "model": {
                        "hidden_size": 2048,
                        "num_heads": 16,
                        "position_embedding_type": "rotary",
                        "rotary_dim": 128,
                        "rope_theta": 500000,
                        "norm_type": "rmsnorm",
                        "nonlinearity": "swiglu",
                    }
                }
            ),
            "cerebras/trainer": Cell(
                cs(
                    "llama",
                    hidden_size=2048,
                    num_heads=16,
                    position_embedding_type="rotary",
                    rotary_dim=128,
                    rope_theta=500000,
                    norm_type="rmsnorm",
                    nonlinearity="swiglu",
                )
            ),
            "veomni/nested": Cell(
                {}, side={"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 16, "rope_theta": 500000}
            ),
            "veomni/flat": Cell(
                {}, side={"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 16, "rope_theta": 500000}
            ),
            "megatron": Cell(
                {
                    "--hidden-size": 2048,
                    "--num-attention-heads": 16,
                    "--position-embedding-type": "rope",
                    "--rotary-base": 500000,
                    "--normalization": "RMSNorm",
                    "--swiglu": True,
                }
            ),
        },
        context=("model.family",),
    ),
    Row(
        "learned",
        {"model.position_embedding": "learned", "model.max_position_embeddings": 2048},
        {
            "neox": Cell({"pos_emb": "learned", "max_position_embeddings": 2048}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell({"model": {"position_embedding_type": "learned", "max_position_embeddings": 2048}}),
            "cerebras/trainer": Cell(cs("gpt2", position_embedding_type="learned", max_position_embeddings=2048)),
            "veomni/nested": Cell({}, side={"model_type": "gpt2", "n_positions": 2048}),
            "veomni/flat": Cell({}, side={"model_type": "gpt2", "n_positions": 2048}),
            "megatron": Cell({"--position-embedding-type": "learned_absolute", "--max-position-embeddings": 2048}),
        },
    ),
]

test_cells, test_read, test_write = matrix(ROWS)
