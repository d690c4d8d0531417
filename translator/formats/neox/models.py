"""GPT-NeoX formulas for today's models (EleutherAI/gpt-neox ea7aefd8): qk layernorm, the sliding
window, mixture of experts and muP. What NeoX has no key for at all is a `fixed:` rule in
mappings/neox.yaml; here is what it has, with its own meaning.
"""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Absent, Approx, formula
from ...knowledge.formulas_common import GATED_ACTIVATIONS, family_formula

DENSE_TYPES = frozenset({"global", "flash"})


def _flash_only(attention_config: Any) -> bool | None:
    """Every layer is flash attention (None: no attention_config, NeoX's default global attention)."""
    if not isinstance(attention_config, list):
        return None
    kinds: set[str] = set()
    for item in attention_config:
        if isinstance(item, list) and item and isinstance(item[0], list):
            kinds.update(str(k) for k in item[0])
        elif isinstance(item, str):
            kinds.add(item)
    return kinds == {"flash"}


@formula("neox.sliding_window")
class NeoxSlidingWindow:
    """sliding_window_width W: flash attention's window_size=(W, -1) lets a query see the W keys before
    it and itself, W + 1 (transformer.py); HF and Cerebras count W including the query. NeoX windows
    every layer, and only flash attention applies the window."""

    @staticmethod
    def read(sliding_window_width: Any, attention_config: Any) -> Any:
        if sliding_window_width is None:  # null on purpose (NeoX's default): no window
            return Absent("sliding_window_width is null: every layer attends to the whole context")
        if not isinstance(sliding_window_width, int) or isinstance(sliding_window_width, bool) or sliding_window_width < 0:
            raise ValueError(f"sliding_window_width must be a whole number of tokens, got {sliding_window_width!r}")
        if not _flash_only(attention_config):
            return Approx({}, "NeoX applies sliding_window_width only with flash attention (attention_config "
                              "[[[\"flash\"], num_layers]]): this config attends to the whole context")  # fmt: skip
        return {"sliding_window": sliding_window_width + 1}

    @staticmethod
    def write(sliding_window: int | None, attention_layer_types: list[str] | None) -> Any:
        if sliding_window is None:
            if attention_layer_types and "sliding" in attention_layer_types:
                return Approx({}, "a per-layer pattern without a window size: not written")
            return {}
        out = {"sliding_window_width": sliding_window - 1}
        if attention_layer_types and any(kind != "sliding" for kind in attention_layer_types):
            windowed = sum(kind == "sliding" for kind in attention_layer_types)
            return Approx(out, f"NeoX windows every layer: the pattern of {windowed} windowed and "
                               f"{len(attention_layer_types) - windowed} full layers is not expressible",
                          ("model.attention_layer_types",))  # fmt: skip
        return out


def expert_width(intermediate_size: Any, hidden_size: int | None) -> int | None:
    """ParallelGroupedMLP (moe_mlp.py): intermediate_size as it stands, else 4h rounded up to 256."""
    if intermediate_size is not None:
        return int(intermediate_size)
    return None if not hidden_size else 256 * -(-4 * hidden_size // 256)


@formula("neox.moe")
class NeoxMoe:
    """moe_num_experts (> 1: megablocks dropless MoE), moe_top_k; moe_expert_interval (layer i is MoE
    when i % n == 0: layer 0 is) and moe_router_type (sinkhorn, or softmax top-k) are read as their
    defaults until the documented arguments know them (mappings/neox.yaml). NeoX's
    experts are ParallelGroupedMLP: plain (a gated activation runs ungated), no biases, as wide as
    intermediate_size itself; the router never renormalises its top-k weights and no auxiliary
    loss exists (moe.py, router.py)."""

    @staticmethod
    def read(
        moe_num_experts: Any, moe_top_k: Any, intermediate_size: Any, hidden_size: int | None, activation: str | None,
        ffn_hidden_size: int | None,
    ) -> Any:  # fmt: skip
        experts = moe_num_experts if moe_num_experts is not None else 1
        if experts <= 1:  # NeoX's default: one expert is the dense MLP, and moe_top_k means nothing
            return Absent(f"moe_num_experts {experts}: a dense MLP in every layer, no experts")
        width = expert_width(intermediate_size, hidden_size)
        out = {
            "moe_num_experts": experts, "moe_experts_per_token": moe_top_k if moe_top_k is not None else 1,
            "moe_router_scoring": "sinkhorn", "moe_normalize_top_k": False,  # every layer MoE, no aux loss: absent
            "moe_ffn_hidden_size": width if width != ffn_hidden_size else None,
        }  # fmt: skip
        if activation in GATED_ACTIVATIONS:
            return Approx(out, f"NeoX's experts are not gated (ParallelGroupedMLP): {activation} runs as its plain "
                               "activation there", ("model.activation",))  # fmt: skip
        return out

    @staticmethod
    def write(
        moe_num_experts: int | None, moe_experts_per_token: int | None, moe_ffn_hidden_size: int | None,
        moe_first_dense_layers: int | None, moe_layer_interval: int | None, moe_router_scoring: str | None,
        moe_normalize_top_k: bool | None, moe_aux_loss_coef: float | None, activation: str | None,
        ffn_hidden_size: int | None,
    ) -> Any:  # fmt: skip
        if not moe_num_experts or moe_num_experts <= 1:
            return {}
        out: dict[str, Any] = {"moe_num_experts": moe_num_experts, "moe_top_k": moe_experts_per_token or 1}
        losses: list[tuple[str, tuple[str, ...]]] = []
        first, interval = moe_first_dense_layers or 0, moe_layer_interval or 1
        if interval > 1:
            losses.append((f"every {interval}th layer MoE needs moe_expert_interval (NeoX 2025-05-09+), which "
                           "neoconv does not write yet: every layer is", ("model.moe_layer_interval",)))  # fmt: skip
        if first:
            losses.append((f"NeoX's MoE layers start at layer 0 (every moe_expert_interval-th): the first {first} "
                           "dense layers are not expressible", ("model.moe_first_dense_layers",)))  # fmt: skip
        if moe_router_scoring in ("softmax", "sigmoid"):
            losses.append((f"NeoX routes with sinkhorn (moe_router_type topk, 2025-05-09+, is not written): "
                           f"{moe_router_scoring} scoring is not expressible", ("model.moe_router_scoring",)))  # fmt: skip
        if moe_normalize_top_k:
            losses.append(("NeoX's top-k router does not renormalise the chosen experts' weights", ("model.moe_normalize_top_k",)))
        if moe_aux_loss_coef:
            losses.append(("NeoX's MoE has no load-balancing loss (sinkhorn routing balances instead)", ("model.moe_aux_loss_coef",)))
        if activation in GATED_ACTIVATIONS:
            losses.append((f"NeoX's experts are not gated (ParallelGroupedMLP): {activation} experts become plain",
                           ("model.activation",)))  # fmt: skip
        width = moe_ffn_hidden_size or ffn_hidden_size
        written = 3 * ffn_hidden_size if ffn_hidden_size and activation in GATED_ACTIVATIONS else ffn_hidden_size
        if width is not None and written is not None and width != written:
            losses.append((f"NeoX's experts are intermediate_size wide: {written} here, not the experts' {width}",
                           ("model.moe_ffn_hidden_size",)))  # fmt: skip
        if not losses:
            return out
        return Approx(out, "; ".join(d for d, _ in losses), tuple(f for _, names in losses for f in names),
                      tuple(losses))  # fmt: skip


@formula("neox.mup")
class NeoxMup:
    """use_mup: attention scores over head_dim instead of its square root, embeddings times
    mup_embedding_mult, output logits divided by the width multiplier (transformer.py,
    word_embeddings.py, gpt2_model.py). The base widths come from the mup library's base_shapes_file,
    never from a key; mup_attn_temp and mup_output_temp are never read."""

    @staticmethod
    def read(use_mup: Any, mup_embedding_mult: Any) -> Any:
        if not use_mup:
            return {}
        return {"attention_scaling": "inverse_head_dim", "embedding_multiplier": float(mup_embedding_mult or 1.0),
                "mup_output_logits_scaling": "width"}  # fmt: skip

    @staticmethod
    def write(attention_scaling: str | None, embedding_multiplier: float | None, mup_output_logits_scaling: str | None) -> Any:
        multiplier = 1.0 if embedding_multiplier is None else embedding_multiplier
        if attention_scaling == "inverse_head_dim" and mup_output_logits_scaling == "width":
            return {"use_mup": True, "mup_embedding_mult": multiplier}
        # use_mup brings 1/head_dim scores, the logits' width division and the multiplier together:
        # a source with only some of them cannot be written without inventing the others
        lost = [(f"NeoX scales attention by 1/head_dim only with use_mup, which also divides the logits by the width "
                 "multiplier", ("model.attention_scaling",)) if attention_scaling == "inverse_head_dim" else None,
                ("NeoX multiplies embeddings (mup_embedding_mult) only under use_mup, which also rescales attention and "
                 "logits", ("model.embedding_multiplier",)) if multiplier != 1.0 else None,
                (f"NeoX's use_mup divides the logits by the width multiplier itself, with 1/head_dim attention: "
                 f"{mup_output_logits_scaling} output scaling alone is not expressible", ("model.mup_output_logits_scaling",))
                if mup_output_logits_scaling is not None else None]  # fmt: skip
        parts = tuple(x for x in lost if x is not None)
        if not parts:
            return {}
        return Approx({}, "; ".join(d for d, _ in parts), tuple(f for _, n in parts for f in n), parts)


# what NeoX holds of the block structure (no sandwich norms, no latent attention, no embedding norm)
family_formula("neox.family", ("parallel_residual", "parallel_shared_norm", "norm", "activation", "moe_num_experts",
                               "sliding_window", "qk_norm", "position_embedding"))  # fmt: skip
