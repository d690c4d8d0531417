"""Matrix: the size of the model (layers, width, heads, positions, vocabulary, key/value heads).

NeoX stores no vocabulary size (it pads the tokenizer's at run time: SEMANTICS.md 1.11); VeOmni keeps
the architecture in the HF config.json beside its YAML (`side`), spelled as its model_type spells it
(GPT-2: n_layer/n_embd/n_head/n_positions; Llama: num_hidden_layers/...). Cerebras' grouped-query
attention is the multi-query layer with num_kv_groups (layers/MultiQueryAttentionLayer.py, 2.10).
Megatron: the embedding's rows are --padded-vocab-size (core_v0.14.0+); key/value heads are
--num-query-groups with --group-query-attention (d98e8a64 argument_utils.py)."""

from __future__ import annotations

from matrix import Cell, No, Row, matrix

NO_MODEL = No("DeepSpeed JSON holds no model architecture")
LLAMA = {"model.family": "llama"}  # the family that has key/value heads in every format

ROWS = [
    Row(
        "dims",
        {
            "model.num_layers": 24,
            "model.hidden_size": 2048,
            "model.num_heads": 16,
            "model.max_position_embeddings": 2048,
        },
        {
            "neox": Cell(
                {"num_layers": 24, "hidden_size": 2048, "num_attention_heads": 16, "max_position_embeddings": 2048}
            ),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell(
                {
                    "model": {
                        "num_hidden_layers": 24,
                        "hidden_size": 2048,
                        "num_heads": 16,
                        "max_position_embeddings": 2048,
                    }
                }
            ),
            "cerebras/trainer": Cell(
                {
                    "trainer": {
                        "init": {
                            "model": {
                                "name": "gpt2",
                                "num_hidden_layers": 24,
                                "hidden_size": 2048,
                                "num_heads": 16,
                                "max_position_embeddings": 2048,
                            }
                        }
                    }
                }
            ),
            "veomni/nested": Cell(
                {}, side={"model_type": "gpt2", "n_layer": 24, "n_embd": 2048, "n_head": 16, "n_positions": 2048}
            ),
            "veomni/flat": Cell(
                {}, side={"model_type": "gpt2", "n_layer": 24, "n_embd": 2048, "n_head": 16, "n_positions": 2048}
            ),
            "megatron": Cell(
                {
                    "--num-layers": 24,
                    "--hidden-size": 2048,
                    "--num-attention-heads": 16,
                    "--max-position-embeddings": 2048,
                }
            ),
        },
    ),
    Row(
        "vocab",
        {"model.vocab_size": 50304},
        {
            "neox": No("NeoX pads the tokenizer's vocabulary at run time", kind="absent"),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell({"model": {"vocab_size": 50304}}),
            "cerebras/trainer": Cell({"trainer": {"init": {"model": {"name": "gpt2", "vocab_size": 50304}}}}),
            "veomni/nested": Cell({}, side={"model_type": "gpt2", "vocab_size": 50304}),
            "veomni/flat": Cell({}, side={"model_type": "gpt2", "vocab_size": 50304}),
            "megatron": Cell({"--padded-vocab-size": 50304}),  # core_v0.14.0+: the embedding's rows
        },
    ),
    Row(
        "grouped-query kv heads",
        {**LLAMA, "model.num_heads": 16, "model.num_kv_heads": 4},
        {
            "neox": Cell(
                {
                    "num_attention_heads": 16,
                    "num_kv_heads": 4,
                    "norm": "rmsnorm",
                    "activation": "swiglu",
                    "pos_emb": "rotary",
                }
            ),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell(
                {
                    "model": {
                        "num_heads": 16,
                        "attention_module": "multiquery_attention",
                        "extra_attention_params": {"num_kv_groups": 4},
                        "norm_type": "rmsnorm",
                        "nonlinearity": "swiglu",
                        "position_embedding_type": "rotary",
                    }
                }
            ),
            "cerebras/trainer": Cell(
                {
                    "trainer": {
                        "init": {
                            "model": {
                                "name": "llama",
                                "num_heads": 16,
                                "attention_module": "multiquery_attention",
                                "extra_attention_params": {"num_kv_groups": 4},
                                "norm_type": "rmsnorm",
                                "nonlinearity": "swiglu",
                                "position_embedding_type": "rotary",
                            }
                        }
                    }
                }
            ),
            "veomni/nested": Cell(
                {}, side={"model_type": "llama", "num_attention_heads": 16, "num_key_value_heads": 4}
            ),
            "veomni/flat": Cell({}, side={"model_type": "llama", "num_attention_heads": 16, "num_key_value_heads": 4}),
            # --num-query-groups counts only with --group-query-attention
            "megatron": Cell(
                {
                    "--num-attention-heads": 16,
                    "--group-query-attention": True,
                    "--num-query-groups": 4,
                    "--normalization": "RMSNorm",
                    "--swiglu": True,
                    "--position-embedding-type": "rope",
                }
            ),
        },
        context=("model.family",),
    ),
]

test_cells, test_read, test_write = matrix(ROWS)
