"""Megatron-LM formulas: the model (megatron/training/arguments.py validate_args and
argument_utils.py core_transformer_config_from_args at d98e8a64, with the older releases where their
meaning differs)."""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Approx, formula, is_close
from ...knowledge.formula import family_formula
from .yarn import read_yarn, write_yarn
from .options import since

_GPT_TANH = "with biases on Megatron's default GELU is the fused bias_gelu_impl, the tanh approximation"


@formula("megatron.num_kv_heads")
class NumKvHeads:
    """--num-query-groups counts only with --group-query-attention (else plain multi-head attention:
    core_transformer_config_from_args sets num_query_groups None, TransformerConfig then num heads)."""

    @staticmethod
    def read(group_query_attention: bool | None, num_query_groups: int | None, num_heads: int | None) -> Any:
        if group_query_attention:
            return num_query_groups if num_query_groups is not None else 1
        if num_query_groups is not None and num_query_groups != num_heads and num_heads is not None:
            return Approx(
                num_heads,
                f"--num-query-groups {num_query_groups} without --group-query-attention is "
                f"ignored: Megatron runs {num_heads} key/value heads (plain multi-head attention)",
            )
        return num_heads

    @staticmethod
    def write(value: int, num_heads: int | None) -> dict[str, Any]:
        if num_heads is not None and value == num_heads:
            return {}
        return {"group_query_attention": True, "num_query_groups": value}


@formula("megatron.ffn_width")
class FfnWidth:
    """--ffn-hidden-size is one branch's width (a gated MLP's fc1 is twice as wide); absent, validate_args
    derives 4h, or int((4h * 2/3) / 64) * 64 with --swiglu. In 23.04-23.06 --swiglu overrode a given width."""

    @staticmethod
    def derived(hidden_size: int, activation: str | None) -> int:
        return int((4 * hidden_size * 2 / 3) / 64) * 64 if activation == "swiglu" else 4 * hidden_size

    @staticmethod
    def read(ffn_hidden_size: int | None, hidden_size: int | None, activation: str | None, version: str) -> Any:
        if hidden_size is None:
            return ffn_hidden_size
        derived = FfnWidth.derived(hidden_size, activation)
        if ffn_hidden_size is None:
            return derived
        if activation == "swiglu" and version == "23.04" and ffn_hidden_size != derived:
            return Approx(
                derived,
                f"Megatron-LM 23.04-23.06: --swiglu replaces --ffn-hidden-size {ffn_hidden_size} "
                f"with int((4 x {hidden_size} x 2/3) / 64) x 64 = {derived}",
            )
        return ffn_hidden_size

    @staticmethod
    def write(value: int, hidden_size: int | None, activation: str | None) -> dict[str, Any]:
        return {"ffn_hidden_size": value}  # always stated: the derivation depends on the flags


@formula("megatron.position_embedding")
class PositionEmbedding:
    """--position-embedding-type (core_v0.4.0+); 23.04-23.06's --use-rotary-position-embeddings added
    RoPE to the learned table unless --no-position-embedding (current Megatron: RoPE instead of it,
    and --no-position-embedding with any type but rope is an error)."""

    TYPES = {
        "learned_absolute": "learned",
        "rope": "rotary",
        "none": "none",
        "relative": "relative",
        "yarn": "rotary",
        "mrope": "rotary",
    }

    @staticmethod
    def read(
        position_embedding_type: str | None,
        use_rotary_position_embeddings: bool | None,
        add_position_embedding: bool | None,
        version: str,
    ) -> Any:
        learned_table = add_position_embedding is not False
        if not since(version, "core_v0.4"):  # before --position-embedding-type
            if use_rotary_position_embeddings:
                return (
                    "rotary"
                    if not learned_table
                    else Approx(
                        "rotary",
                        "Megatron-LM 23.04-23.06 adds RoPE to the learned absolute positions "
                        "(--no-position-embedding was not given): both are not expressible",
                    )
                )
            return "learned" if learned_table else "none"
        kind = position_embedding_type or "learned_absolute"
        if use_rotary_position_embeddings:
            kind = "rope"  # validate_args: the old flag sets position_embedding_type rope
        if not learned_table and kind != "rope":
            raise ValueError(
                "--no-position-embedding is deprecated: Megatron refuses it unless --position-embedding-type "
                "rope (read the file with --from-version 23.04 for its old meaning)"
            )
        value = PositionEmbedding.TYPES[kind]
        if kind == "mrope":  # (yarn's scaling is read by megatron.rope_scaling)
            return Approx(value, f"{kind} RoPE: its scaling (--mrope-section) is not carried")
        return value

    @staticmethod
    def write(value: str, rope_scaling_type: str | None) -> Any:
        names = {"learned": "learned_absolute", "rotary": "rope", "none": "none", "relative": "relative"}
        if value not in names:
            return Approx(
                {}, f"Megatron has no {value} position embedding: written with its default, learned positions"
            )
        if value == "rotary" and rope_scaling_type == "yarn":
            return {"position_embedding_type": "yarn"}  # its options: megatron.rope_scaling
        return {"position_embedding_type": names[value]}


@formula("megatron.norm")
class Norm:
    """--normalization LayerNorm (with a bias) | RMSNorm (none)."""

    @staticmethod
    def read(normalization: str | None) -> dict[str, Any]:
        kind = normalization or "LayerNorm"
        return {"norm": "rmsnorm" if kind == "RMSNorm" else "layernorm", "norm_bias": kind != "RMSNorm"}

    @staticmethod
    def write(norm: str | None, norm_bias: bool | None) -> Any:
        if norm not in ("layernorm", "rmsnorm", None):
            return Approx({}, f"Megatron has no {norm}: written with its default, LayerNorm")
        kind = "RMSNorm" if norm == "rmsnorm" else "LayerNorm"
        if norm_bias is not None and norm_bias != (kind == "LayerNorm"):
            has = "has a bias" if kind == "LayerNorm" else "has none"
            return Approx(
                {"normalization": kind},
                f"Megatron's {kind} {has}: norm_bias {norm_bias} is not expressible",
                ("model.norm_bias",),
            )
        return {"normalization": kind}


@formula("megatron.activation")
class Activation:
    """--swiglu (SiLU, gated), --squared-relu, --quick-geglu (core_v0.15.0+: gated, quick_gelu x * sigmoid(1.702x),
    the canonical quick_geglu; its linear half as it is: glu_linear_offset and activation_func_clamp_value
    are TransformerConfig fields no argument sets, mappings/megatron.yaml `absent:`); otherwise GELU:
    the fused bias_gelu_impl (tanh approximation) while biases are on and --no-bias-gelu-fusion is not
    given (v2.0+), exact erf GELU otherwise. v1.0 (no fusion flag): exact unless --openai-gelu. At the
    current release --openai-gelu and --onnx-safe have no effect on GPT models."""

    @staticmethod
    def read(
        swiglu: bool | None,
        squared_relu: bool | None,
        quick_geglu: bool | None,
        bias_gelu_fusion: bool | None,
        openai_gelu: bool | None,
        onnx_safe: bool | None,
        add_bias_linear: bool | None,
        version: str,
    ) -> Any:
        if swiglu and (squared_relu or quick_geglu):
            raise ValueError("--swiglu with --squared-relu or --quick-geglu: Megatron asserts only one")
        if swiglu:
            return "swiglu"
        if squared_relu:
            return "relu2"
        if quick_geglu:
            return "quick_geglu"
        if version == "v1":
            return "gelu_tanh" if openai_gelu else "gelu"
        fused = bias_gelu_fusion is not False and add_bias_linear is not False
        if not since(version, "core_v0.8") and not fused and (openai_gelu or onnx_safe):
            return "gelu_tanh" if openai_gelu else "gelu"  # legacy models' activation choice
        return "gelu_tanh" if fused else "gelu"

    @staticmethod
    def write(value: str, mlp_bias: bool | None) -> Any:
        biased = mlp_bias is not False
        if value == "swiglu":
            return {"swiglu": True}
        if value == "relu2":
            return {"squared_relu": True}
        if value == "quick_geglu":
            return {"quick_geglu": True}
        if value == "geglu":
            return Approx({"quick_geglu": True}, "Megatron's gated GELU is --quick-geglu: x * sigmoid(1.702x) gates")
        if value == "gelu_tanh":
            if biased:
                return {}
            return Approx({}, "without biases Megatron's GELU is exact (erf), not the tanh approximation")
        if value == "gelu":
            return {"bias_gelu_fusion": False} if biased else {}
        return Approx(
            {},
            f"Megatron has no {value} activation (GELU, SwiGLU, squared ReLU, quick-GEGLU): written "
            "with its default GELU",
        )


@formula("megatron.biases")
class Biases:
    """--disable-bias-linear removes every linear layer's bias; with --add-qkv-bias the query/key/value
    projection keeps one (Qwen2). Biases on force the QKV bias on (validate_args)."""

    @staticmethod
    def read(add_bias_linear: bool | None, add_qkv_bias: bool | None) -> dict[str, Any]:
        if add_bias_linear is not False:
            return {"attention_bias": True, "mlp_bias": True}
        if add_qkv_bias:
            return {"attention_bias": True, "attention_output_bias": False, "mlp_bias": False}
        return {"attention_bias": False, "mlp_bias": False}

    @staticmethod
    def write(attention_bias: bool | None, attention_output_bias: bool | None, mlp_bias: bool | None) -> Any:
        attn = attention_bias is not False
        out = attn if attention_output_bias is None else attention_output_bias
        mlp = mlp_bias is not False
        if attn and out and mlp:
            return {}
        if not (attn or out or mlp):
            return {"add_bias_linear": False}
        if attn and not out and not mlp:
            return {"add_bias_linear": False, "add_qkv_bias": True}
        lost = ("model.attention_bias", "model.attention_output_bias", "model.mlp_bias")
        return Approx(
            {},
            f"attention bias {attn}, output bias {out}, MLP bias {mlp}: Megatron has one switch for "
            "every linear layer (and a QKV-only bias): written with biases on",
            lost,
        )


@formula("megatron.embedding_dropout")
class EmbeddingDropout:
    """The embedding dropout is --hidden-dropout (LanguageModelEmbedding)."""

    @staticmethod
    def read(hidden_dropout: float | None) -> float | None:
        return hidden_dropout

    @staticmethod
    def write(value: float, hidden_dropout: float | None) -> Any:
        applied = 0.1 if hidden_dropout is None else hidden_dropout
        if is_close(value, applied):
            return {}
        return Approx({}, f"Megatron applies --hidden-dropout {applied:g} to the embeddings; {value:g} is lost")


@formula("megatron.init_method")
class InitMethod:
    """Weights N(0, --init-method-std); --init-method-xavier-uniform sets a keyword TransformerConfig does not
    take (TypeError at d98e8a64: the Megatron-Core path never ran with it)."""

    @staticmethod
    def read(init_method_xavier_uniform: bool | None) -> Any:
        if init_method_xavier_uniform:
            return Approx(
                "xavier_uniform",
                "--init-method-xavier-uniform: Megatron-Core's TransformerConfig refuses the "
                "scaled_init_method it sets (TypeError); only legacy models ran with it",
            )
        return "normal"

    @staticmethod
    def write(value: str) -> Any:
        if value != "normal":
            return Approx({}, f"Megatron initialises weights with N(0, --init-method-std), not {value}")
        return {}


@formula("megatron.output_init")
class OutputInit:
    """Output projections (attention dense, fc2) get N(0, sigma / sqrt(2 x num_layers))."""

    @staticmethod
    def read() -> str:
        return "scaled_normal"

    @staticmethod
    def write(value: str) -> Any:
        if value != "scaled_normal":
            return Approx({}, f"Megatron initialises the output projections with sigma / sqrt(2 x layers), not {value}")
        return {}


@formula("megatron.sequential")
class Sequential:
    """Megatron's blocks are sequential: attention, then the MLP."""

    @staticmethod
    def read() -> bool:
        return False

    @staticmethod
    def write(value: bool) -> Any:
        if value:
            return Approx({}, "Megatron has no parallel attention + MLP block (the GPT-J block)")
        return {}


# Megatron names no model family: its blocks tell it (RMSNorm or a gated MLP: llama; a window on those:
# mistral; experts: mixtral; qk-norm: qwen3); it has no parallel block or sandwich norm to tell the others by
family_formula(
    "megatron.family", ("norm", "activation", "moe_num_experts", "qk_norm", "position_embedding", "sliding_window")
)


@formula("megatron.vocab_size")
class VocabSize:
    """Rows of the embedding: --padded-vocab-size (core_v0.14.0+), or NullTokenizer's --vocab-size (+1 for
    its EOD up to core_v0.17.0) padded to a multiple of --make-vocab-size-divisible-by x tensor-parallel
    size; any other tokenizer's size is only known at run time (from its files)."""

    @staticmethod
    def read(
        padded_vocab_size: int | None,
        vocab_size: int | None,
        make_vocab_size_divisible_by: int | None,
        pad_vocab_size: bool | None,
        tokenizer_type: str | None,
        tensor_size: int | None,
        version: str,
    ) -> Any:
        if padded_vocab_size is not None:
            return padded_vocab_size
        if tokenizer_type != "NullTokenizer" or vocab_size is None:
            return None
        rows = vocab_size if since(version, "core_v0.18") else vocab_size + 1
        if pad_vocab_size is False:
            return rows
        multiple = (make_vocab_size_divisible_by or 128) * max(1, tensor_size or 1)
        return -(-rows // multiple) * multiple

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"padded_vocab_size": value}


@formula("megatron.attention_kind")
class AttentionKind:
    """Dense attention (windowed or not: megatron.window) unless multi-latent attention or a hybrid layer
    pattern is given."""

    @staticmethod
    def read(
        multi_latent_attention: bool | None,
        hybrid_layer_pattern: str | None,
        hybrid_override_pattern: str | None,
        experimental_attention_variant: Any,
    ) -> Any:
        if multi_latent_attention:
            return Approx(
                "mla",
                "multi-latent attention: its ranks and head sizes (--q-lora-rank, --kv-lora-rank, ...) are not carried",
            )
        pattern = hybrid_layer_pattern or hybrid_override_pattern
        if pattern:
            return Approx("hybrid", f"hybrid layer pattern {pattern} (Mamba / attention / MLP layers) is not carried")
        if experimental_attention_variant:
            return Approx(str(experimental_attention_variant), "an experimental attention variant is not carried")
        return "dense"

    @staticmethod
    def write(value: str) -> Any:
        if value != "dense":
            return Approx(
                {},
                f"{value} attention is not written by neoconv (Megatron: --multi-latent-attention, "
                "--hybrid-layer-pattern): written as dense attention",
            )
        return {}


@formula("megatron.rope_scaling")
class RopeScaling:
    """--use-rope-scaling (core_v0.10.0+): Llama 3.x's scaling, frequency factors 1 and 4 and 8192 original
    positions hard-coded, factor 8 for pretrain_gpt.py whatever --rope-scaling-factor (core_v0.11.0+) says:
    pretrain_gpt.py (core_v0.11-0.14), gpt_builders.py (core_v0.15+), gpt_config_from_args (HEAD) never pass
    it (only run_text_generation_server.py at core_v0.11-0.12 and pretrain_vlm.py do). RoPE: --position-
    embedding-type rope or the legacy --use-rotary-position-embeddings (validate_args sets rope)."""

    LLAMA3 = {
        "rope_scaling_type": "llama3",
        "rope_scaling_factor": 8.0,
        "rope_original_max_positions": 8192,
        "rope_low_freq_factor": 1.0,
        "rope_high_freq_factor": 4.0,
    }

    @staticmethod
    def read(
        use_rope_scaling: bool | None,
        rope_scaling_factor: float | None,
        position_embedding_type: str | None,
        use_rotary_position_embeddings: bool | None,
        rotary_scaling_factor: float | None,
        yarn_original_max_position_embeddings: int | None,
        yarn_beta_fast: float | None,
        yarn_beta_slow: float | None,
        yarn_correction_range_round_to_int: bool | None,
        mscale: float | None,
        mscale_all_dim: float | None,
    ) -> Any:
        if use_rotary_position_embeddings:
            position_embedding_type = "rope"  # validate_args: the legacy flag sets the type
        if position_embedding_type not in ("rope", "yarn"):
            if use_rope_scaling:
                return Approx(
                    {},
                    f"--use-rope-scaling has no effect with --position-embedding-type "
                    f"{position_embedding_type or 'learned_absolute'}",
                )
            return {}
        if position_embedding_type == "yarn":
            return read_yarn(
                {
                    "rotary_scaling_factor": rotary_scaling_factor,
                    "mscale": mscale,
                    "mscale_all_dim": mscale_all_dim,
                    "yarn_original_max_position_embeddings": yarn_original_max_position_embeddings,
                    "yarn_beta_fast": yarn_beta_fast,
                    "yarn_beta_slow": yarn_beta_slow,
                    "yarn_correction_range_round_to_int": yarn_correction_range_round_to_int,
                }
            )
        if not use_rope_scaling:
            return {}
        if rope_scaling_factor is not None and rope_scaling_factor != 8.0:
            return Approx(
                dict(RopeScaling.LLAMA3),
                f"--rope-scaling-factor {rope_scaling_factor:g} has no effect on "
                "pretrain_gpt.py's models: they scale by 8",
                ("model.rope_scaling_factor",),
            )
        return dict(RopeScaling.LLAMA3)

    @staticmethod
    def write(
        rope_scaling_type: str | None,
        rope_scaling_factor: float | None,
        rope_original_max_positions: int | None,
        rope_low_freq_factor: float | None,
        rope_high_freq_factor: float | None,
        rope_yarn_beta_fast: float | None,
        rope_yarn_beta_slow: float | None,
        rope_yarn_mscale: float | None,
        rope_yarn_mscale_all_dim: float | None,
        rope_yarn_truncate: bool | None,
        rope_attention_factor: float | None,
        max_position_embeddings: int | None,
    ) -> Any:
        if rope_scaling_type is None:
            return {}
        if rope_scaling_type == "yarn":  # --position-embedding-type yarn: written by megatron.position_embedding
            return write_yarn(
                {
                    "rope_scaling_factor": rope_scaling_factor,
                    "rope_yarn_beta_fast": rope_yarn_beta_fast,
                    # transformers' yarn fills the original length with max_position_embeddings; Megatron's default is 4096
                    "rope_original_max_positions": rope_original_max_positions or max_position_embeddings,
                    "rope_yarn_beta_slow": rope_yarn_beta_slow,
                    "rope_yarn_mscale": rope_yarn_mscale,
                    "rope_yarn_mscale_all_dim": rope_yarn_mscale_all_dim,
                    "rope_yarn_truncate": rope_yarn_truncate,
                    "rope_attention_factor": rope_attention_factor,
                }
            )
        given = {
            "rope_scaling_type": rope_scaling_type,
            "rope_scaling_factor": rope_scaling_factor,
            "rope_original_max_positions": rope_original_max_positions,
            "rope_low_freq_factor": rope_low_freq_factor,
            "rope_high_freq_factor": rope_high_freq_factor,
        }
        if all(is_close(given[k], v) if isinstance(v, float) else given[k] == v for k, v in RopeScaling.LLAMA3.items()):
            return {"use_rope_scaling": True}
        others = {k: v for k, v in RopeScaling.LLAMA3.items() if k != "rope_scaling_factor"}
        if (
            rope_scaling_type == "llama3"
            and rope_scaling_factor is not None
            and all(is_close(given[k], v) if isinstance(v, float) else given[k] == v for k, v in others.items())
        ):
            # Llama 3.2's 32: the option the later releases parse, which pretrain_gpt.py's builders do not read
            return Approx(
                {"use_rope_scaling": True, "rope_scaling_factor": rope_scaling_factor},
                f"--rope-scaling-factor {rope_scaling_factor:g} (an option since core_v0.11.0): pretrain_gpt.py's "
                "GPT builders never pass it on, its models scale by 8",
                ("model.rope_scaling_factor",),
            )
        if rope_scaling_type != "llama3":
            why = f"{rope_scaling_type} RoPE scaling is not written by neoconv (Megatron's --use-rope-scaling is Llama 3.1's)"
        else:
            why = (
                "Megatron's --use-rope-scaling hard-codes Llama 3.1's frequency factors 1 and 4 and 8192 original "
                "positions (and pretrain_gpt.py its factor 8): "
                + ", ".join(
                    f"{k.removeprefix('rope_')} {v:g}" if isinstance(v, float) else f"{k.removeprefix('rope_')} {v}"
                    for k, v in given.items()
                    if k != "rope_scaling_type" and v is not None
                )
                + " are not"
            )
        return Approx({}, why)
