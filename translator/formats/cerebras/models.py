"""Cerebras Model Zoo formulas for today's models (the GPT-2 backbone's keys, Release 2.10
src/cerebras/modelzoo/models/nlp/gpt2/gpt2_model.py; RoPE scaling in layers/RotaryPositionEmbeddingHelper.py;
MoE in layers/FeedForwardNetwork.py MoEConfig): head width, qk-norm, the score scale, the embedding
scale, RoPE scaling, windows, mixture of experts, muP's output logits, and the model name.

A Model Zoo `name:` is a label on one of two backbones (GPT-2, GPT-J): everything structural is an
explicit key, so a name selects no structure (FS §6.1). Keys by first release: pos_scaling_factor,
attention_sliding_window_length (2.1); muP base sizes, output_logits_alpha, moe (2.3);
pos_scaling_type/_extra_args, softcaps, norm_first_sandwich, attention_inner_dim, every-other-layer
windows (2.3.1); moe.num_shared_experts, router_selection_nonlinearity (2.4); attention_qk_norm_layer,
expert_weighting_normalization (2.5); sliding_window_every_other_decoder_layer_pattern (2.10).
"""

from __future__ import annotations

import math
from typing import Any

from ...knowledge.formula import Approx, Extension, formula
from ...knowledge.formulas_common import family_formula, structural_family
from ...knowledge.history import older

# 2.10's registry names of decoder models; the GPT-J backbone ones are parallel blocks
NAMES = frozenset({"gpt2", "gpt3", "gpt_backbone", "llama", "mistral", "mixtral", "btlm", "bloom", "jais", "santacoder",
                   "starcoder", "gemma2", "gptj", "gpt-neox", "falcon"})  # fmt: skip
GPTJ_BACKBONE = frozenset({"gptj", "gpt-neox", "falcon"})
ALIASES = {"llamamodel": "llama"}  # deprecated registry aliases
# families 2.10 has no model of: written as the nearest name (the keys carry the structure)
NEAREST = {"qwen2": "llama", "qwen3": "llama", "seed_oss": "llama", "phi3": "mistral", "gemma": "gemma2", "gemma3": "gemma2",
           "qwen2_moe": "mixtral", "qwen3_moe": "mixtral", "deepseek_v2": "mixtral", "deepseek_v3": "mixtral",
           "gpt_oss": "mixtral", "starcoder2": "starcoder", "mpt": "gpt2", "olmo2": "llama", "granite": "llama", "smollm3": "llama"}  # fmt: skip
MOE_FAMILIES = frozenset({"mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "gpt_oss"})
FAMILIES_OF_NAMES = frozenset({"gpt2", "gptj", "gpt-neox", "llama", "mistral", "mixtral", "bloom", "jais", "starcoder",
                               "gemma2", "falcon"})  # fmt: skip


@formula("cerebras.model_name")
class CerebrasModelName:
    """trainer.init.model.name <-> model.family. A name the catalogue has is the family, unless the
    blocks contradict it (experts under a dense name, none under an MoE one, parallel blocks under a
    sequential name); other decoder names (gpt3, btlm, santacoder) get the family of their blocks.
    Writing: the family's own name, or the nearest 2.10 has (said as lossy: it reads back as that)."""

    @staticmethod
    def read(
        model_name: Any, parallel_residual: bool | None, parallel_shared_norm: bool | None, norm: str | None,
        activation: str | None, moe_num_experts: int | None, sliding_window: int | None, qk_norm: bool | None,
        sandwich_norm: bool | None, position_embedding: str | None, embedding_norm: bool | None,
    ) -> Any:  # fmt: skip
        structural = structural_family(parallel_residual, parallel_shared_norm, norm, activation, moe_num_experts,
                                       sliding_window, qk_norm, sandwich_norm, None, position_embedding, embedding_norm)  # fmt: skip
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
        return Approx({"model_name": near}, f"Model Zoo 2.10 has no {value} model: written as name {near} "
                                            "(a label; the keys carry the structure)")  # fmt: skip


# Model Zoo 2.4 added trainer.init.model.name (validate.py: "Model configuration must have a 'name'
# key"); its legacy converter carries a legacy file's `model.*` block there, so from 2.4 on a legacy
# file names its model as `model.name`. Before 2.4 the run.py launched was the model.
FIRST_NAMED = "2.4.0"
# what Model Zoo holds of the block structure (everything but latent attention): the family of a file
# that names no model
STRUCTURAL = family_formula("cerebras.family", ("parallel_residual", "parallel_shared_norm", "norm", "activation",
                            "moe_num_experts", "sliding_window", "qk_norm", "sandwich_norm", "position_embedding",
                            "embedding_norm"))  # fmt: skip


@formula("cerebras.legacy_model_name")
class CerebrasLegacyModelName(CerebrasModelName):
    """legacy model.name <-> model.family: read like trainer.init.model.name (the same `read`); written
    from Model Zoo 2.4 on (older releases: the header names the run.py, and blocks that read as another
    family say so)."""

    @staticmethod
    def write(  # type: ignore[override]
        value: str, parallel_residual: bool | None, parallel_shared_norm: bool | None, norm: str | None,
        activation: str | None, moe_num_experts: int | None, sliding_window: int | None, qk_norm: bool | None,
        sandwich_norm: bool | None, position_embedding: str | None, embedding_norm: bool | None, version: str = "",
    ) -> Any:  # fmt: skip
        if not older("cerebras", version, FIRST_NAMED):
            return CerebrasModelName.write(value)
        return STRUCTURAL.write(value=value, parallel_residual=parallel_residual, parallel_shared_norm=parallel_shared_norm,
                                norm=norm, activation=activation, moe_num_experts=moe_num_experts,
                                sliding_window=sliding_window, qk_norm=qk_norm, sandwich_norm=sandwich_norm,
                                position_embedding=position_embedding, embedding_norm=embedding_norm)  # fmt: skip


@formula("cerebras.head_dim")
class CerebrasHeadDim:
    """attention_inner_dim = head width x heads (GPT-2 backbone, 2.3.1+); absent: hidden_size."""

    @staticmethod
    def read(model_attention_inner_dim: Any, num_heads: int | None, hidden_size: int | None) -> Any:
        if model_attention_inner_dim is None or not num_heads:
            return None
        if model_attention_inner_dim % num_heads:
            raise ValueError(f"attention_inner_dim {model_attention_inner_dim} is not divisible by num_heads {num_heads}")
        width = model_attention_inner_dim // num_heads
        return None if hidden_size and model_attention_inner_dim == hidden_size else width

    @staticmethod
    def write(value: int, num_heads: int | None, family: str | None) -> Any:
        if family in GPTJ_BACKBONE:
            return Approx({}, "Model Zoo's GPT-J backbone has heads hidden_size / num_heads wide (no attention_inner_dim)")
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
            return Approx(True, f"the q/k norms' epsilon {eps:g} differs from the model's {norm_eps:g}: read as the model's")
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
    def read(model_scale_qk_dot_by_d: Any, model_attention_logits_alpha: Any, head_dim: int | None,
             hidden_size: int | None, num_heads: int | None) -> Any:  # fmt: skip
        alpha = 1.0 if model_attention_logits_alpha is None else float(model_attention_logits_alpha)
        if model_scale_qk_dot_by_d:
            return {"attention_scaling": "inverse_head_dim", "attention_logits_multiplier": None if alpha == 1.0 else alpha}
        width = head_dim or (hidden_size // num_heads if hidden_size and num_heads else None)
        if alpha == 1.0 or not width:
            return {"attention_scaling": "inverse_sqrt_head_dim", "attention_logits_multiplier": None if alpha == 1.0 else alpha}
        return {"attention_scaling": "inverse_sqrt_head_dim", "query_pre_attention_scalar": width / alpha**2}

    @staticmethod
    def write(attention_scaling: str | None, attention_logits_multiplier: float | None, query_pre_attention_scalar: float | None,
              head_dim: int | None, hidden_size: int | None, num_heads: int | None) -> Any:  # fmt: skip
        alpha = 1.0 if attention_logits_multiplier is None else attention_logits_multiplier
        out: dict[str, Any] = {}
        if attention_scaling == "inverse_head_dim":
            out["model_scale_qk_dot_by_d"] = True
            if query_pre_attention_scalar is not None:
                return Approx(out, "Model Zoo scales scores by 1/head_dim or alpha / sqrt(head_dim), not both",
                              ("model.query_pre_attention_scalar",))  # fmt: skip
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
    def write(embedding_multiplier: float | None, embedding_scale_by_sqrt_hidden: bool | None, hidden_size: int | None) -> Any:
        scale = 1.0 if embedding_multiplier is None else embedding_multiplier
        if embedding_scale_by_sqrt_hidden:
            if not hidden_size:
                return Approx({}, "the sqrt(hidden_size) embedding scale needs hidden_size", ("model.embedding_scale_by_sqrt_hidden",))
            scale *= math.sqrt(hidden_size)
        return {"model_embeddings_scale": scale} if scale != 1.0 else {}


@formula("cerebras.mup_output")
class CerebrasMupOutput:
    """output_logits_alpha (2.3+; None = 1) and scale_output_logits_by_d (with muP base sizes: logits
    divided by hidden / base (true, the default) or its square root); before 2.3 output_logits_scale
    multiplied the logits directly (2.3+ refuses it beside base sizes)."""

    @staticmethod
    def read(model_output_logits_alpha: Any, model_scale_output_logits_by_d: Any, model_output_logits_scale: Any,
             mup_base_hidden_size: Any) -> Any:  # fmt: skip
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
