"""Matrix: biases, embedding tying and dropouts.

NeoX: use_bias_in_attn_linear / use_bias_in_mlp (default true), no_weight_tying (default false:
tied), hidden_dropout / attention_dropout (default 0.0; neox_args.py), and hidden_dropout on the
embeddings too (EmbeddingPipe). Cerebras GPT-2 models (llama inherits them): biases on,
share_embedding_weights true, dropout_rate 0.1; attention/embedding dropout default to dropout_rate
in 2.0-2.3, but from 2.4 attention_dropout_rate defaults to 0.1 whatever dropout_rate is
(models/nlp/gpt2/gpt2_model.py:238 at 2.10; 2.3's config.py:151 still said None -> dropout_rate).
HF GPT-2: resid/attn/embd_pdrop 0.1, tied, biases hard-wired; Llama: attention_bias / mlp_bias.
Megatron (d98e8a64): biases on unless --disable-bias-linear, tied unless
--untie-embeddings-and-output-weights, --hidden-dropout (also on the embeddings) and
--attention-dropout default 0.1."""

from __future__ import annotations

from matrix import Cell, Lossy, No, Row, matrix

NO_MODEL = No("DeepSpeed JSON holds no model architecture")
LLAMA = {"norm": "rmsnorm", "activation": "swiglu", "pos_emb": "rotary"}
CS_LLAMA = {"norm_type": "rmsnorm", "nonlinearity": "swiglu", "position_embedding_type": "rotary"}
MG_LLAMA = {"--normalization": "RMSNorm", "--swiglu": True, "--position-embedding-type": "rope"}
MG_DEFAULT = {"--hidden-size": 768}  # a Megatron file of defaults needs one option
ATTN_DROPOUT_24 = "B3: Cerebras 2.4+ attention_dropout_rate defaults to 0.1, read as dropout_rate"


def cs(name: str, **model: object) -> dict:
    return {"trainer": {"init": {"model": {"name": name, **model}}}}


def gpt2(**hf: object) -> Cell:
    return Cell({}, side={"model_type": "gpt2", **hf})


def dropouts(hidden: float, attention: float, embedding: float) -> dict[str, float]:
    return {"model.hidden_dropout": hidden, "model.attention_dropout": attention, "model.embedding_dropout": embedding}


ROWS = [
    Row(
        "no biases",
        {"model.family": "llama", "model.attention_bias": False, "model.mlp_bias": False},
        {
            "neox": Cell({"use_bias_in_attn_linear": False, "use_bias_in_mlp": False, **LLAMA}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell(
                {
                    "model": {
                        "use_projection_bias_in_attention": False,
                        "use_ffn_bias_in_attention": False,
                        "use_ffn_bias": False,
                        **CS_LLAMA,
                    }
                }
            ),
            "cerebras/trainer": Cell(
                cs(
                    "llama",
                    use_projection_bias_in_attention=False,
                    use_ffn_bias_in_attention=False,
                    use_ffn_bias=False,
                    **CS_LLAMA,
                )
            ),
            "veomni/nested": Cell({}, side={"model_type": "llama", "attention_bias": False, "mlp_bias": False}),
            "veomni/flat": Cell({}, side={"model_type": "llama", "attention_bias": False, "mlp_bias": False}),
            "megatron": Cell({"--disable-bias-linear": True, **MG_LLAMA}),
        },
        context=("model.family",),
    ),
    Row(
        "biases (GPT-2)",
        {"model.attention_bias": True, "model.mlp_bias": True},
        {
            # NeoX's default: written when the source states it, left to the default when the source has it fixed
            "neox": Cell({"use_bias_in_attn_linear": True, "use_bias_in_mlp": True}, writes={}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell(
                {
                    "model": {
                        "use_projection_bias_in_attention": True,
                        "use_ffn_bias_in_attention": True,
                        "use_ffn_bias": True,
                    }
                }
            ),
            "cerebras/trainer": Cell(
                cs("gpt2", use_projection_bias_in_attention=True, use_ffn_bias_in_attention=True, use_ffn_bias=True)
            ),
            "veomni/nested": gpt2(),  # GPT2Attention / GPT2MLP always have biases
            "veomni/flat": gpt2(),
            "megatron": Cell(MG_DEFAULT, writes={}),  # biases on every linear layer: Megatron's default
        },
    ),
    Row(
        "untied embeddings",
        {"model.tie_embeddings": False},
        {
            "neox": Cell({"no_weight_tying": True}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell({"model": {"share_embedding_weights": False}}),
            "cerebras/trainer": Cell(cs("gpt2", share_embedding_weights=False)),
            "veomni/nested": gpt2(tie_word_embeddings=False),
            "veomni/flat": gpt2(tie_word_embeddings=False),
            "megatron": Cell({"--untie-embeddings-and-output-weights": True}),
        },
    ),
    Row(
        "tied embeddings (every default)",
        {"model.tie_embeddings": True},
        {
            # written when the source states it; Megatron can only rely on its default (no --tie option)
            "neox": Cell({"no_weight_tying": False}, writes={}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell({"model": {"share_embedding_weights": True}}),
            "cerebras/trainer": Cell(cs("gpt2", share_embedding_weights=True)),
            "veomni/nested": gpt2(tie_word_embeddings=True),
            "veomni/flat": gpt2(tie_word_embeddings=True),
            "megatron": Cell(MG_DEFAULT, writes={}),
        },
    ),
    Row(
        "dropouts",
        dropouts(0.1, 0.05, 0.1),
        {
            "neox": Cell({"hidden_dropout": 0.1, "attention_dropout": 0.05}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell(
                {"model": {"dropout_rate": 0.1, "attention_dropout_rate": 0.05, "embedding_dropout_rate": 0.1}}
            ),
            "cerebras/trainer": Cell(
                cs("gpt2", dropout_rate=0.1, attention_dropout_rate=0.05, embedding_dropout_rate=0.1)
            ),
            "veomni/nested": gpt2(resid_pdrop=0.1, attn_pdrop=0.05, embd_pdrop=0.1),
            "veomni/flat": gpt2(resid_pdrop=0.1, attn_pdrop=0.05, embd_pdrop=0.1),
            "megatron": Cell(
                {"--hidden-dropout": 0.1, "--attention-dropout": 0.05}
            ),  # --hidden-dropout on the embeddings too
        },
    ),
    Row(
        "GPT-2 default dropouts",
        dropouts(0.1, 0.1, 0.1),
        {
            "neox": Cell({"hidden_dropout": 0.1, "attention_dropout": 0.1}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell(
                {"model": {"hidden_size": 768}},
                writes={"model": {"dropout_rate": 0.1, "attention_dropout_rate": 0.1, "embedding_dropout_rate": 0.1}},
            ),
            "cerebras/trainer": Cell(
                cs("gpt2", hidden_size=768),
                writes=cs("gpt2", dropout_rate=0.1, attention_dropout_rate=0.1, embedding_dropout_rate=0.1),
            ),
            "veomni/nested": Cell(
                {}, side={"model_type": "gpt2"}, writes_side={"resid_pdrop": 0.1, "attn_pdrop": 0.1, "embd_pdrop": 0.1}
            ),
            "veomni/flat": Cell(
                {}, side={"model_type": "gpt2"}, writes_side={"resid_pdrop": 0.1, "attn_pdrop": 0.1, "embd_pdrop": 0.1}
            ),
            "megatron": Cell(MG_DEFAULT, writes={}),  # Megatron's defaults too: a source relying on its own writes none
        },
    ),
    Row(
        "no dropout (NeoX default)",
        dropouts(0.0, 0.0, 0.0),
        {
            "neox": Cell({"hidden_dropout": 0.0, "attention_dropout": 0.0}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell(
                {"model": {"dropout_rate": 0.0, "attention_dropout_rate": 0.0, "embedding_dropout_rate": 0.0}}
            ),
            "cerebras/trainer": Cell(
                cs("gpt2", dropout_rate=0.0, attention_dropout_rate=0.0, embedding_dropout_rate=0.0)
            ),
            "veomni/nested": gpt2(resid_pdrop=0.0, attn_pdrop=0.0, embd_pdrop=0.0),
            "veomni/flat": gpt2(resid_pdrop=0.0, attn_pdrop=0.0, embd_pdrop=0.0),
            "megatron": Cell({"--hidden-dropout": 0.0, "--attention-dropout": 0.0}),
        },
    ),
    Row(
        "embedding dropout apart",
        dropouts(0.1, 0.1, 0.0),
        {
            "neox": Lossy(
                {"hidden_dropout": 0.1, "attention_dropout": 0.1}, "approximated"
            ),  # hidden_dropout on the embeddings too
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell(
                {"model": {"dropout_rate": 0.1, "attention_dropout_rate": 0.1, "embedding_dropout_rate": 0.0}}
            ),
            "cerebras/trainer": Cell(
                cs("gpt2", dropout_rate=0.1, attention_dropout_rate=0.1, embedding_dropout_rate=0.0)
            ),
            "veomni/nested": gpt2(resid_pdrop=0.1, attn_pdrop=0.1, embd_pdrop=0.0),
            "veomni/flat": gpt2(resid_pdrop=0.1, attn_pdrop=0.1, embd_pdrop=0.0),
            "megatron": Lossy(
                {"--hidden-dropout": 0.1, "--attention-dropout": 0.1}, "approximated"
            ),  # no embedding dropout apart
        },
    ),
    Row(
        "Cerebras 2.4+ attention dropout default",
        dropouts(0.0, 0.1, 0.0),
        {
            "neox": Cell({"hidden_dropout": 0.0, "attention_dropout": 0.1}),
            "deepspeed": NO_MODEL,
            "cerebras/legacy": Cell(
                {"model": {"dropout_rate": 0.0, "attention_dropout_rate": 0.1}},
                writes={"model": {"dropout_rate": 0.0, "attention_dropout_rate": 0.1, "embedding_dropout_rate": 0.0}},
            ),
            "cerebras/trainer": Cell(
                cs("gpt2", dropout_rate=0.0),
                writes=cs("gpt2", dropout_rate=0.0, attention_dropout_rate=0.1, embedding_dropout_rate=0.0),
            ),
            "veomni/nested": gpt2(resid_pdrop=0.0, attn_pdrop=0.1, embd_pdrop=0.0),
            "veomni/flat": gpt2(resid_pdrop=0.0, attn_pdrop=0.1, embd_pdrop=0.0),
            "megatron": Cell({"--hidden-dropout": 0.0}, writes={"--hidden-dropout": 0.0, "--attention-dropout": 0.1}),
        },
        bugs={"read cerebras/trainer": ATTN_DROPOUT_24, "cerebras/trainer -> +": ATTN_DROPOUT_24},
    ),
]

test_cells, test_read, test_write = matrix(ROWS)
