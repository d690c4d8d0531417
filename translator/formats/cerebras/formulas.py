"""Cerebras Model Zoo formulas (legacy-layout keys; the trainer layout is read into that view).

The LR schedule (`learning_rate` phases) is in lr_render.py (its reading in scheduler.py), which importing
this module registers too.

models: Cerebras Model Zoo formulas for today's models (the GPT-2 backbone's keys, Release 2.10
src/cerebras/modelzoo/models/nlp/gpt2/gpt2_model.py; RoPE scaling in layers/RotaryPositionEmbeddingHelper.py;
MoE in layers/FeedForwardNetwork.py MoEConfig): head width, qk-norm, the score scale, the embedding
scale, RoPE scaling, windows, mixture of experts, muP's output logits, and the model name.

moe: Cerebras Model Zoo mixture of experts (`moe:`, 2.3+; Release 2.10 layers/FeedForwardNetwork.py
MoEConfig, layers/SparseMoEBlock.py): every decoder layer is MoE (one layer cloned num_hidden_layers
times), each expert filter_size wide (gated per nonlinearity), num_shared_experts more of the same
width added with weight 1 (2.4+), top_k experts per token weighted by the router's softmax (or
sigmoid, sinkhorn: router_selection_nonlinearity, 2.4+), renormalised unless
expert_weighting_normalization is false (2.5+), load_balancing_loss_coef (2.4+ default 0; 2.3: 0.01).

positions: Cerebras Model Zoo RoPE scaling and sliding windows (Release 2.10 layers/RotaryPositionEmbeddingHelper.py,
models/nlp/gpt2/gpt2_model.py, layers/TransformerDecoder.py).

releases: Cerebras Model Zoo formulas of settings whose keys changed between releases: Adam's betas
(beta1/beta2 before 2.0). Reading takes every spelling; writing uses the target release's. (The
precision, use_bfloat16 1.7-2.0.x and fp16_type from 2.1, and the norm, use_rms_norm /
use_biasless_norm in 1.9.1 and norm_type from 2.0, are `cases` rules of mappings/cerebras.yaml.)
"""

from __future__ import annotations

import math
from typing import Any

from ...knowledge.formula import Absent, Approx, Extension, formula
from ...knowledge.formula import family_formula, init_method_std, rotary_dim_for, structural_family
from ...knowledge.schema import older
from . import lr_render  # noqa: F401  (registers cerebras.lr_schedule)

# 2.10's registry names of decoder models; the GPT-J backbone ones are parallel blocks
NAMES = frozenset(
    {
        "gpt2",
        "gpt3",
        "gpt_backbone",
        "llama",
        "mistral",
        "mixtral",
        "btlm",
        "bloom",
        "jais",
        "santacoder",
        "starcoder",
        "gemma2",
        "gptj",
        "gpt-neox",
        "falcon",
    }
)
GPTJ_BACKBONE = frozenset({"gptj", "gpt-neox", "falcon"})
ALIASES = {"llamamodel": "llama"}  # deprecated registry aliases
# families 2.10 has no model of: written as the nearest name (the keys carry the structure)
NEAREST = {
    "qwen2": "llama",
    "qwen3": "llama",
    "seed_oss": "llama",
    "phi3": "mistral",
    "gemma": "gemma2",
    "gemma3": "gemma2",
    "qwen2_moe": "mixtral",
    "qwen3_moe": "mixtral",
    "deepseek_v2": "mixtral",
    "deepseek_v3": "mixtral",
    "gpt_oss": "mixtral",
    "starcoder2": "starcoder",
    "mpt": "gpt2",
    "olmo2": "llama",
    "granite": "llama",
    "smollm3": "llama",
}
MOE_FAMILIES = frozenset({"mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "gpt_oss"})
FAMILIES_OF_NAMES = frozenset(
    {"gpt2", "gptj", "gpt-neox", "llama", "mistral", "mixtral", "bloom", "jais", "starcoder", "gemma2", "falcon"}
)


@formula("cerebras.model_name")
class CerebrasModelName:
    """trainer.init.model.name <-> model.family. A name the catalogue has is the family, unless the
    blocks contradict it (experts under a dense name, none under an MoE one, parallel blocks under a
    sequential name); other decoder names (gpt3, btlm, santacoder) get the family of their blocks.
    Writing: the family's own name, or the nearest 2.10 has (said as lossy: it reads back as that)."""

    @staticmethod
    def read(
        model_name: Any,
        parallel_residual: bool | None,
        parallel_shared_norm: bool | None,
        norm: str | None,
        activation: str | None,
        moe_num_experts: int | None,
        sliding_window: int | None,
        qk_norm: bool | None,
        sandwich_norm: bool | None,
        position_embedding: str | None,
        embedding_norm: bool | None,
    ) -> Any:
        structural = structural_family(
            parallel_residual,
            parallel_shared_norm,
            norm,
            activation,
            moe_num_experts,
            sliding_window,
            qk_norm,
            sandwich_norm,
            None,
            position_embedding,
            embedding_norm,
        )
        if model_name is None:
            return structural
        name = ALIASES.get(str(model_name).lower(), str(model_name).lower())
        if name not in NAMES:
            return Extension(f"{model_name} is not a decoder language model: no other framework has its architecture")
        if name not in FAMILIES_OF_NAMES:
            return structural
        experts = bool(moe_num_experts and moe_num_experts > 1)
        if experts != (name in MOE_FAMILIES) or bool(parallel_residual) != (name in GPTJ_BACKBONE):
            return structural  # the name is a label: the keys say what the model is
        return name

    @staticmethod
    def write(value: str) -> Any:
        if value in FAMILIES_OF_NAMES:
            return {"model_name": value}
        near = NEAREST.get(value, "llama")
        return Approx(
            {"model_name": near},
            f"Model Zoo 2.10 has no {value} model: written as name {near} (a label; the keys carry the structure)",
        )


# Model Zoo 2.4 added trainer.init.model.name (validate.py: "Model configuration must have a 'name'
# key"); its legacy converter carries a legacy file's `model.*` block there, so from 2.4 on a legacy
# file names its model as `model.name`. Before 2.4 the run.py launched was the model.
FIRST_NAMED = "2.4.0"
# what Model Zoo holds of the block structure (everything but latent attention): the family of a file
# that names no model
STRUCTURAL = family_formula(
    "cerebras.family",
    (
        "parallel_residual",
        "parallel_shared_norm",
        "norm",
        "activation",
        "moe_num_experts",
        "sliding_window",
        "qk_norm",
        "sandwich_norm",
        "position_embedding",
        "embedding_norm",
    ),
)


@formula("cerebras.legacy_model_name")
class CerebrasLegacyModelName(CerebrasModelName):
    """legacy model.name <-> model.family: read like trainer.init.model.name (the same `read`); written
    from Model Zoo 2.4 on (older releases: the header names the run.py, and blocks that read as another
    family say so)."""

    @staticmethod
    def write(  # type: ignore[override]
        value: str,
        parallel_residual: bool | None,
        parallel_shared_norm: bool | None,
        norm: str | None,
        activation: str | None,
        moe_num_experts: int | None,
        sliding_window: int | None,
        qk_norm: bool | None,
        sandwich_norm: bool | None,
        position_embedding: str | None,
        embedding_norm: bool | None,
        version: str = "",
    ) -> Any:
        if not older("cerebras", version, FIRST_NAMED):
            return CerebrasModelName.write(value)
        return STRUCTURAL.write(
            value=value,
            parallel_residual=parallel_residual,
            parallel_shared_norm=parallel_shared_norm,
            norm=norm,
            activation=activation,
            moe_num_experts=moe_num_experts,
            sliding_window=sliding_window,
            qk_norm=qk_norm,
            sandwich_norm=sandwich_norm,
            position_embedding=position_embedding,
            embedding_norm=embedding_norm,
        )


@formula("cerebras.head_dim")
class CerebrasHeadDim:
    """attention_inner_dim = head width x heads (GPT-2 backbone, 2.3.1+); absent: hidden_size."""

    @staticmethod
    def read(model_attention_inner_dim: Any, num_heads: int | None, hidden_size: int | None) -> Any:
        if model_attention_inner_dim is None or not num_heads:
            return None
        if model_attention_inner_dim % num_heads:
            raise ValueError(
                f"attention_inner_dim {model_attention_inner_dim} is not divisible by num_heads {num_heads}"
            )
        if hidden_size and hidden_size % num_heads:  # MultiheadAttention asserts both, whatever the inner width
            raise ValueError(
                f"hidden_size {hidden_size} is not divisible by num_heads {num_heads}: Model Zoo's "
                "attention asserts it even with attention_inner_dim"
            )
        width = model_attention_inner_dim // num_heads
        return None if hidden_size and model_attention_inner_dim == hidden_size else width

    @staticmethod
    def write(value: int, num_heads: int | None, family: str | None) -> Any:
        if family in GPTJ_BACKBONE:
            return Approx(
                {}, "Model Zoo's GPT-J backbone has heads hidden_size / num_heads wide (no attention_inner_dim)"
            )
        return {"model_attention_inner_dim": value * num_heads} if num_heads else {}


@formula("cerebras.qk_norm")
class CerebrasQkNorm:
    """attention_qk_norm_layer (2.5+): a norm over head_dim for queries and one for keys (the model's
    norm type), with attention_qk_norm_eps (default 1e-5)."""

    @staticmethod
    def read(model_attention_qk_norm_layer: Any, model_attention_qk_norm_eps: Any, norm_eps: float | None) -> Any:
        if model_attention_qk_norm_layer is None:
            return None
        eps = 1e-5 if model_attention_qk_norm_eps is None else float(model_attention_qk_norm_eps)
        if norm_eps is not None and not math.isclose(eps, norm_eps):
            return Approx(
                True, f"the q/k norms' epsilon {eps:g} differs from the model's {norm_eps:g}: read as the model's"
            )
        return True

    @staticmethod
    def write(value: bool, norm: str | None, norm_eps: float | None) -> Any:
        if not value:
            return {}
        out: dict[str, Any] = {"model_attention_qk_norm_layer": norm or "rmsnorm"}
        if norm_eps is not None and norm_eps != 1e-5:  # HF Qwen3's q_norm/k_norm use rms_norm_eps
            out["model_attention_qk_norm_eps"] = norm_eps
        return out


@formula("cerebras.score_scale")
class CerebrasScoreScale:
    """scale_qk_dot_by_d (scores / head_dim, muP) and attention_logits_alpha (a factor on the scores).
    Without scale_qk_dot_by_d, alpha / sqrt(d) is 1 / sqrt(s) with s = d / alpha^2: Gemma's
    query_pre_attn_scalar (Cerebras' Gemma 2 converter writes alpha = sqrt(d / s))."""

    @staticmethod
    def read(
        model_scale_qk_dot_by_d: Any,
        model_attention_logits_alpha: Any,
        head_dim: int | None,
        hidden_size: int | None,
        num_heads: int | None,
    ) -> Any:
        alpha = 1.0 if model_attention_logits_alpha is None else float(model_attention_logits_alpha)
        if model_scale_qk_dot_by_d:
            return {
                "attention_scaling": "inverse_head_dim",
                "attention_logits_multiplier": None if alpha == 1.0 else alpha,
            }
        width = head_dim or (hidden_size // num_heads if hidden_size and num_heads else None)
        if alpha == 1.0 or not width:
            return {
                "attention_scaling": "inverse_sqrt_head_dim",
                "attention_logits_multiplier": None if alpha == 1.0 else alpha,
            }
        return {"attention_scaling": "inverse_sqrt_head_dim", "query_pre_attention_scalar": width / alpha**2}

    @staticmethod
    def write(
        attention_scaling: str | None,
        attention_logits_multiplier: float | None,
        query_pre_attention_scalar: float | None,
        head_dim: int | None,
        hidden_size: int | None,
        num_heads: int | None,
    ) -> Any:
        alpha = 1.0 if attention_logits_multiplier is None else attention_logits_multiplier
        out: dict[str, Any] = {}
        if attention_scaling == "inverse_head_dim":
            out["model_scale_qk_dot_by_d"] = True
            if query_pre_attention_scalar is not None:
                return Approx(
                    out,
                    "Model Zoo scales scores by 1/head_dim or alpha / sqrt(head_dim), not both",
                    ("model.query_pre_attention_scalar",),
                )
        elif query_pre_attention_scalar is not None:
            width = head_dim or (hidden_size // num_heads if hidden_size and num_heads else None)
            if not width:
                return Approx({}, "attention_logits_alpha needs the head width", ("model.query_pre_attention_scalar",))
            alpha *= math.sqrt(width / query_pre_attention_scalar)
        if alpha != 1.0:
            out["model_attention_logits_alpha"] = alpha
        return out


@formula("cerebras.embeddings_scale")
class CerebrasEmbeddingsScale:
    """embeddings_scale multiplies the embeddings: muP's multiplier, and Gemma's sqrt(hidden_size)
    folded in (Cerebras' Gemma 2 converter writes 59.8665 for 3584). A scale equal to sqrt(hidden_size)
    reads as Gemma's."""

    @staticmethod
    def read(model_embeddings_scale: Any, hidden_size: int | None) -> Any:
        if model_embeddings_scale is None:
            return {}
        scale = float(model_embeddings_scale)
        if hidden_size and math.isclose(scale, math.sqrt(hidden_size), rel_tol=1e-5):
            return {"embedding_scale_by_sqrt_hidden": True, "embedding_multiplier": None}
        return {"embedding_scale_by_sqrt_hidden": False, "embedding_multiplier": None if scale == 1.0 else scale}

    @staticmethod
    def write(
        embedding_multiplier: float | None, embedding_scale_by_sqrt_hidden: bool | None, hidden_size: int | None
    ) -> Any:
        scale = 1.0 if embedding_multiplier is None else embedding_multiplier
        if embedding_scale_by_sqrt_hidden:
            if not hidden_size:
                return Approx(
                    {},
                    "the sqrt(hidden_size) embedding scale needs hidden_size",
                    ("model.embedding_scale_by_sqrt_hidden",),
                )
            scale *= math.sqrt(hidden_size)
        return {"model_embeddings_scale": scale} if scale != 1.0 else {}


@formula("cerebras.mup_output")
class CerebrasMupOutput:
    """output_logits_alpha (2.3+; None = 1) and scale_output_logits_by_d (with muP base sizes: logits
    divided by hidden / base (true, the default) or its square root); before 2.3 output_logits_scale
    multiplied the logits directly (2.3+ refuses it beside base sizes)."""

    @staticmethod
    def read(
        model_output_logits_alpha: Any,
        model_scale_output_logits_by_d: Any,
        model_output_logits_scale: Any,
        mup_base_hidden_size: Any,
    ) -> Any:
        alpha = model_output_logits_alpha if model_output_logits_alpha is not None else model_output_logits_scale
        out: dict[str, Any] = {"output_logits_multiplier": None if alpha in (None, 1, 1.0) else float(alpha)}
        if mup_base_hidden_size is not None:
            out["mup_output_logits_scaling"] = "sqrt_width" if model_scale_output_logits_by_d is False else "width"
        return out

    @staticmethod
    def write(output_logits_multiplier: float | None, mup_output_logits_scaling: str | None) -> Any:
        out: dict[str, Any] = {}
        if output_logits_multiplier not in (None, 1.0):
            out["model_output_logits_alpha"] = output_logits_multiplier
        if mup_output_logits_scaling == "sqrt_width":
            out["model_scale_output_logits_by_d"] = False
        return out


MOE_FIELDS = (
    "moe_num_experts",
    "moe_experts_per_token",
    "moe_ffn_hidden_size",
    "moe_shared_experts",
    "moe_shared_ffn_hidden_size",
    "moe_shared_expert_gate",
    "moe_normalize_top_k",
    "moe_router_scoring",
    "moe_aux_loss_coef",
    "moe_z_loss_coef",
    "moe_first_dense_layers",
    "moe_layer_interval",
    "moe_dense_layers",
)


def all_layers(first: int | None, interval: int | None, dense: list[int] | None) -> bool:
    return not first and (interval or 1) == 1 and not dense


@formula("cerebras.moe")
class CerebrasMoe:
    @staticmethod
    def read(model_moe: Any) -> Any:
        if model_moe is None:
            return {}
        if not isinstance(model_moe, dict):
            raise ValueError(f"moe must be a mapping such as {{num_experts: 8, top_k: 2}}, got {model_moe!r}")
        experts, shared = model_moe.get("num_experts") or 0, model_moe.get("num_shared_experts") or 0
        if experts + shared <= 1:  # MoE iff num_experts + num_shared_experts > 1
            return Absent(f"moe with {experts + shared} expert: a dense MLP in every layer, no experts")
        scoring = str(model_moe.get("router_selection_nonlinearity") or "softmax").lower()
        out = {
            "moe_num_experts": experts,
            "moe_experts_per_token": model_moe.get("top_k") or 1,
            "moe_shared_experts": shared or None,
            "moe_normalize_top_k": model_moe.get("expert_weighting_normalization", True) is not False,
            "moe_router_scoring": scoring,
            "moe_aux_loss_coef": float(model_moe.get("load_balancing_loss_coef") or 0.0) or None,
        }
        if model_moe.get("routing_algorithm", "learned") != "learned":
            return Approx(
                out, f"routing_algorithm {model_moe['routing_algorithm']} (not a learned router) has no counterpart"
            )
        return out

    @staticmethod
    def write(
        moe_num_experts: int | None,
        moe_experts_per_token: int | None,
        moe_ffn_hidden_size: int | None,
        moe_shared_experts: int | None,
        moe_shared_ffn_hidden_size: int | None,
        moe_shared_expert_gate: bool | None,
        moe_normalize_top_k: bool | None,
        moe_router_scoring: str | None,
        moe_aux_loss_coef: float | None,
        moe_z_loss_coef: float | None,
        moe_first_dense_layers: int | None,
        moe_layer_interval: int | None,
        moe_dense_layers: list[int] | None,
    ) -> Any:
        if not moe_num_experts or moe_num_experts <= 1:
            return {}
        moe: dict[str, Any] = {"num_experts": moe_num_experts, "top_k": moe_experts_per_token or 1}
        losses: list[tuple[str, tuple[str, ...]]] = []
        if moe_aux_loss_coef:
            moe["load_balancing_loss_coef"] = moe_aux_loss_coef
        if moe_shared_experts:
            moe["num_shared_experts"] = moe_shared_experts  # as wide as the routed ones (cerebras.filter_size says)
            if moe_shared_expert_gate:
                losses.append(
                    (
                        "Model Zoo adds its shared experts with weight 1 (no sigmoid gate)",
                        ("model.moe_shared_expert_gate",),
                    )
                )
        if moe_normalize_top_k is False:
            moe["expert_weighting_normalization"] = False
        if moe_router_scoring not in (None, "softmax"):
            moe["router_selection_nonlinearity"] = moe_router_scoring
        if moe_z_loss_coef:
            losses.append(("Model Zoo has no router z-loss", ("model.moe_z_loss_coef",)))
        if not all_layers(moe_first_dense_layers, moe_layer_interval, moe_dense_layers):
            losses.append(
                (
                    "every Model Zoo decoder layer is MoE: dense layers (first, interval, list) are not expressible",
                    ("model.moe_first_dense_layers", "model.moe_layer_interval", "model.moe_dense_layers"),
                )
            )
        out = {"model_moe": moe}
        if not losses:
            return out
        return Approx(out, "; ".join(d for d, _ in losses), tuple(f for _, n in losses for f in n), tuple(losses))


@formula("cerebras.filter_size")
class CerebrasFilterSize:
    """filter_size: the MLP width of every layer, and each expert's when the layers are MoE (all are)."""

    @staticmethod
    def read(model_filter_size: Any) -> Any:
        return model_filter_size

    @staticmethod
    def write(
        value: int,
        moe_num_experts: int | None,
        moe_ffn_hidden_size: int | None,
        moe_first_dense_layers: int | None,
        moe_layer_interval: int | None,
        moe_dense_layers: list[int] | None,
        moe_shared_experts: int | None,
        moe_shared_ffn_hidden_size: int | None,
    ) -> Any:
        expert = moe_ffn_hidden_size or value
        if moe_num_experts and moe_shared_experts and moe_shared_ffn_hidden_size not in (None, expert):
            return Approx(
                {"model_filter_size": expert},
                f"Model Zoo's shared experts are as wide as the routed ones "
                f"({expert}), not {moe_shared_ffn_hidden_size}",
                ("model.moe_shared_ffn_hidden_size",),
            )
        if not moe_num_experts or moe_num_experts <= 1 or moe_ffn_hidden_size in (None, value):
            return {"model_filter_size": value}
        if all_layers(moe_first_dense_layers, moe_layer_interval, moe_dense_layers):  # no layer is dense
            return Approx(
                {"model_filter_size": moe_ffn_hidden_size},
                f"every layer is MoE: filter_size is the experts' {moe_ffn_hidden_size}; the dense width {value} "
                "is used by no layer",
            )
        return Approx(
            {"model_filter_size": moe_ffn_hidden_size},
            f"Model Zoo has one MLP width: the experts' {moe_ffn_hidden_size}; the dense layers' {value} is lost",
        )


TYPES = {"linear": "linear", "yarn": "yarn", "llama3": "llama3", "longrope": "longrope"}
# pos_scaling_extra_args key -> canonical field (the same names as HF's rope_scaling)
EXTRA = {
    "original_max_position_embeddings": "rope_original_max_positions",
    "low_freq_factor": "rope_low_freq_factor",
    "high_freq_factor": "rope_high_freq_factor",
    "beta_fast": "rope_yarn_beta_fast",
    "beta_slow": "rope_yarn_beta_slow",
    "truncate": "rope_yarn_truncate",
    "short_factor": "rope_short_factor",
    "long_factor": "rope_long_factor",
}
FIELDS = (
    "rope_scaling_type",
    "rope_scaling_factor",
    "rope_original_max_positions",
    "rope_low_freq_factor",
    "rope_high_freq_factor",
    "rope_yarn_beta_fast",
    "rope_yarn_beta_slow",
    "rope_yarn_mscale",
    "rope_yarn_mscale_all_dim",
    "rope_yarn_truncate",
    "rope_attention_factor",
    "rope_short_factor",
    "rope_long_factor",
)


@formula("cerebras.rope_scaling")
class CerebrasRopeScaling:
    @staticmethod
    def read(model_pos_scaling_type: Any, model_pos_scaling_factor: Any, model_pos_scaling_extra_args: Any) -> Any:
        factor = 1.0 if model_pos_scaling_factor is None else float(model_pos_scaling_factor)
        kind = TYPES.get(str(model_pos_scaling_type or "linear").lower())
        if kind is None:
            raise ValueError(
                f"pos_scaling_type {model_pos_scaling_type!r}: Model Zoo takes linear, yarn, llama3 or longrope"
            )
        extra = model_pos_scaling_extra_args if isinstance(model_pos_scaling_extra_args, dict) else {}
        if kind == "linear" and factor == 1.0:
            return Absent("linear scaling by 1.0 leaves the positions as they are: no RoPE scaling")
        out: dict[str, Any] = {"rope_scaling_type": kind, "rope_scaling_factor": factor}
        notes = []
        for key, value in extra.items():
            if key in EXTRA:
                out[EXTRA[key]] = value
            elif kind == "yarn" and key in ("mscale_a", "mscale_b"):
                continue
            elif kind == "longrope" and key in ("long_mscale", "short_mscale"):
                continue
            else:
                notes.append(f"pos_scaling_extra_args.{key} has no canonical meaning")
        if kind == "yarn":
            a, b = float(extra.get("mscale_a", 0.1)), float(extra.get("mscale_b", 1.0))
            if (a, b) != (0.1, 1.0):
                out["rope_attention_factor"] = a * math.log(factor) + b if factor > 1 else 1.0
            if float(extra.get("extrapolation_factor", 1.0)) != 1.0:
                notes.append("yarn's extrapolation_factor has no counterpart (transformers fixes it at 1)")
        if kind == "longrope":
            scales = [s for s in {extra.get("long_mscale"), extra.get("short_mscale")} if s is not None]
            if len(scales) == 1:
                out["rope_attention_factor"] = float(scales[0])
            elif scales:
                notes.append("different long_mscale and short_mscale: transformers has one attention_factor")
        if kind == "llama3":
            out.setdefault("rope_original_max_positions", 8192)  # _llama_3_update_inv_freq's default
        return Approx(out, "; ".join(notes)) if notes else out

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
        rope_short_factor: list[float] | None,
        rope_long_factor: list[float] | None,
    ) -> Any:
        kind = rope_scaling_type
        if kind is None:
            return {}
        if kind == "dynamic":
            return Approx({}, "Model Zoo has no dynamic (NTK) RoPE scaling: linear, yarn, llama3 and longrope only")
        values = dict(
            zip(
                FIELDS,
                (
                    kind,
                    rope_scaling_factor,
                    rope_original_max_positions,
                    rope_low_freq_factor,
                    rope_high_freq_factor,
                    rope_yarn_beta_fast,
                    rope_yarn_beta_slow,
                    rope_yarn_mscale,
                    rope_yarn_mscale_all_dim,
                    rope_yarn_truncate,
                    rope_attention_factor,
                    rope_short_factor,
                    rope_long_factor,
                ),
            )
        )
        factor = 1.0 if rope_scaling_factor is None else rope_scaling_factor
        out: dict[str, Any] = {"model_pos_scaling_factor": float(factor)}
        if kind != "linear":
            out["model_pos_scaling_type"] = kind
        extra = {key: values[name] for key, name in EXTRA.items() if values[name] is not None}
        losses = []
        if rope_yarn_mscale is not None or rope_yarn_mscale_all_dim is not None:
            losses.append("DeepSeek's yarn mscale / mscale_all_dim have no Model Zoo counterpart")
        if rope_attention_factor is not None:
            if kind == "yarn":
                extra.update(mscale_a=0.0, mscale_b=float(rope_attention_factor))
            elif kind == "longrope":
                extra.update(long_mscale=float(rope_attention_factor), short_mscale=float(rope_attention_factor))
        if extra:
            out["model_pos_scaling_extra_args"] = extra
        return Approx(out, "; ".join(losses)) if losses else out


@formula("cerebras.window")
class CerebrasWindow:
    @staticmethod
    def read(
        model_attention_sliding_window_length: Any,
        model_sliding_window_every_other_decoder_layer: Any,
        model_sliding_window_every_other_decoder_layer_pattern: Any,
        num_layers: int | None,
    ) -> Any:
        window = model_attention_sliding_window_length
        if window is None:  # null on purpose (Model Zoo's default): no window
            return Absent("attention_sliding_window_length is null: every layer attends to the whole context")
        if not model_sliding_window_every_other_decoder_layer or not num_layers:
            return {"sliding_window": window}
        first = (
            "sliding" if model_sliding_window_every_other_decoder_layer_pattern == "sliding_window_first" else "full"
        )
        other = "full" if first == "sliding" else "sliding"
        return {
            "sliding_window": window,
            "attention_layer_types": [first if i % 2 == 0 else other for i in range(num_layers)],
        }

    @staticmethod
    def write(sliding_window: int | None, attention_layer_types: list[str] | None) -> Any:
        if sliding_window is None:
            return {}
        out: dict[str, Any] = {"model_attention_sliding_window_length": sliding_window}
        kinds = attention_layer_types
        if kinds is None or all(k == "sliding" for k in kinds):
            return out
        every_other = all(kinds[i] != kinds[i - 1] for i in range(1, len(kinds)))
        if not every_other:
            return Approx(
                out,
                "Model Zoo windows every layer or every other layer: this pattern is not expressible",
                ("model.attention_layer_types",),
            )
        out["model_sliding_window_every_other_decoder_layer"] = True
        if kinds[0] == "sliding":
            out["model_sliding_window_every_other_decoder_layer_pattern"] = "sliding_window_first"
            return Approx(
                out,
                "layer 0 windowed (HF Gemma 2's order) needs Model Zoo 2.10's "
                "sliding_window_every_other_decoder_layer_pattern; before 2.10 the odd layers are",
                ("model.attention_layer_types",),
            )
        return out


@formula("cerebras.betas")
class CerebrasBetas:
    """optimizer.betas; before 2.0 beta1 and beta2 (0.9 and 0.999 when absent)."""

    DEFAULT = (0.9, 0.999)

    @staticmethod
    def read(optimizer_betas: Any, optimizer_beta1: Any, optimizer_beta2: Any) -> Any:
        old = [float(optimizer_beta1), float(optimizer_beta2)]
        # 2.0.x read both spellings: the old ones count when they say something (betas at its default)
        if optimizer_betas is not None and (
            list(optimizer_betas) != list(CerebrasBetas.DEFAULT) or old == list(CerebrasBetas.DEFAULT)
        ):
            return optimizer_betas
        return old

    @staticmethod
    def write(value: Any, version: str = "") -> dict[str, Any]:
        if older("cerebras", version, "2.0.2"):
            return {"optimizer_beta1": value[0], "optimizer_beta2": value[1]}
        return {"optimizer_betas": value}


@formula("cerebras.rotary_dim")
class RotaryDim:
    """rotary_dim = int(head_dim * rotary_fraction), head_dim = hidden / heads (Cerebras, GPT-J)."""

    @staticmethod
    def read(
        model_rotary_dim: int | None,
        hidden_size: int | None,
        num_heads: int | None,
        model_attention_inner_dim: Any = None,
    ) -> Any:
        if model_rotary_dim is None or not hidden_size or not num_heads:
            return None
        # Cerebras' attention_inner_dim (Gemma 2: 4096 for hidden 3584) sets its own head size
        inner = (
            model_attention_inner_dim
            if isinstance(model_attention_inner_dim, int) and model_attention_inner_dim > 0
            else hidden_size
        )
        fraction = model_rotary_dim / (inner // num_heads)
        if model_rotary_dim > inner / num_heads:  # GPT2LMHeadModelConfig.validate_rotary_dim refuses the file
            raise ValueError(
                f"rotary_dim {model_rotary_dim} is more than the head size {inner / num_heads:g} "
                "(attention_inner_dim, else hidden_size, / num_heads): Model Zoo refuses it"
            )
        return fraction

    @staticmethod
    def write(value: float, hidden_size: int | None, num_heads: int | None, head_dim: int | None) -> dict[str, Any]:
        if not hidden_size or not num_heads:
            return {}
        return {"model_rotary_dim": rotary_dim_for(value, head_dim or hidden_size // num_heads)}


@formula("cerebras.gqa")
class CerebrasGqa:
    """Grouped-query attention: multiquery_attention with extra_attention_params.num_kv_groups."""

    @staticmethod
    def read(model_attention_module: str | None, model_extra_attention_params: Any, num_heads: int | None) -> Any:
        if model_attention_module == "multiquery_attention":
            params = model_extra_attention_params if isinstance(model_extra_attention_params, dict) else {}
            return int(params.get("num_kv_groups", 1))
        return num_heads if model_attention_module is not None else None

    @staticmethod
    def write(value: int, num_heads: int | None) -> dict[str, Any]:
        if value == num_heads:
            return {"model_attention_module": "aiayn_attention"}
        return {
            "model_attention_module": "multiquery_attention",
            "model_extra_attention_params": {"num_kv_groups": value},
        }


def _truncated_normal(std: float) -> dict[str, Any]:
    # Cerebras' own GPT-NeoX configs write truncated normals cut at +-2 std.
    return {"name": "truncated_normal", "mean": 0.0, "std": std, "a": -2.0 * std, "b": 2.0 * std}


@formula("cerebras.initializers")
class CerebrasInitializers:
    """NeoX init method names -> Cerebras initializer dicts with the std each method implies."""

    TRUNCATION = "a plain normal N(0, std) becomes a normal truncated at +-2 std, as Model Zoo's own configs write it"
    GPTJ_FFN = "the GPT-J backbone initialises both MLP matrices with output_layer_initializer"

    @staticmethod
    def read(
        model_initializer_range: float | None,
        model_initializer: Any,
        model_output_layer_initializer: Any,
        model_embedding_initializer: Any,
        num_layers: int | None,
        hidden_size: int | None,
        family: str | None = None,
    ) -> dict[str, Any]:
        sigma = float(model_initializer_range) if model_initializer_range is not None else 0.02
        out: dict[str, Any] = {"init_std": sigma}

        def method_for(spec: Any, fallback: str) -> Any:
            if isinstance(spec, list) and len(spec) == 1 and isinstance(spec[0], dict):
                spec = spec[0]  # TensorFlow Model Zoo (1.6-1.8) gives one-element lists; set_initializers takes [0]
            if isinstance(spec, dict) and "stddev" in spec and "std" not in spec:
                spec = {**spec, "std": spec["stddev"]}  # TensorFlow's spelling
            if not isinstance(spec, dict):
                return fallback if spec is None else Approx(fallback, f"initializer {spec!r} has no NeoX name")
            std = spec.get("std")
            if std is None or not num_layers or not hidden_size:
                return Approx(fallback, f"initializer {spec.get('name')} without a std")
            for name in ("normal", "scaled_normal", "small_init", "wang_init", "single_residual_scaled_normal"):
                expected = init_method_std(name, sigma, num_layers, hidden_size)
                if expected and math.isclose(float(std), expected, rel_tol=1e-6):
                    if spec.get("name") == "truncated_normal":
                        return Approx(name, "Cerebras truncated normal read as NeoX's plain normal")
                    return name
            return Approx(fallback, f"std {std} matches no NeoX init method")

        out["init_method"] = method_for(model_initializer, "normal")
        # Cerebras' GPT-2 backbone (gpt2, llama, mistral) scales its default output-layer init by
        # 1/sqrt(2L) (NeoX scaled_normal); the GPT-J backbone uses initializer_range everywhere.
        sequential = family not in GPTJ_BACKBONE
        out["output_init_method"] = method_for(
            model_output_layer_initializer, "scaled_normal" if sequential else "normal"
        )
        return out

    @staticmethod
    def write(
        init_method: str | None,
        output_init_method: str | None,
        init_std: float | None,
        num_layers: int | None,
        hidden_size: int | None,
        family: str | None,
    ) -> dict[str, Any]:
        sigma = 0.02 if init_std is None else init_std
        out: dict[str, Any] = {"model_initializer_range": sigma}
        if not num_layers or not hidden_size:
            if (init_method or "normal") != "normal" or output_init_method not in (None, "normal"):
                why = f"init methods {init_method}/{output_init_method} need num_layers and hidden_size for their std"
                out["model_initializer_range"] = Approx(sigma, why)
            return out
        detail = CerebrasInitializers.TRUNCATION
        if family in GPTJ_BACKBONE:
            detail += "; " + CerebrasInitializers.GPTJ_FFN

        def spec(method: str | None) -> Any:
            name = method or "normal"
            std = init_method_std(name, sigma, num_layers, hidden_size)
            if std is None:
                return Approx({"name": name}, f"{name} uses each tensor's own fan-in/out; NeoX computes it per shard")
            return Approx(_truncated_normal(std), detail)

        hidden = spec(init_method)
        out["model_initializer"] = hidden
        out["model_embedding_initializer"] = hidden
        out["model_output_layer_initializer"] = spec(output_init_method)
        return out
