"""Cerebras Model Zoo mixture of experts (`moe:`, 2.3+; Release 2.10 layers/FeedForwardNetwork.py
MoEConfig, layers/SparseMoEBlock.py): every decoder layer is MoE (one layer cloned num_hidden_layers
times), each expert filter_size wide (gated per nonlinearity), num_shared_experts more of the same
width added with weight 1 (2.4+), top_k experts per token weighted by the router's softmax (or
sigmoid, sinkhorn: router_selection_nonlinearity, 2.4+), renormalised unless
expert_weighting_normalization is false (2.5+), load_balancing_loss_coef (2.4+ default 0; 2.3: 0.01).
"""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Absent, Approx, formula

MOE_FIELDS = ("moe_num_experts", "moe_experts_per_token", "moe_ffn_hidden_size", "moe_shared_experts",
              "moe_shared_ffn_hidden_size", "moe_shared_expert_gate", "moe_normalize_top_k", "moe_router_scoring",
              "moe_aux_loss_coef", "moe_z_loss_coef", "moe_first_dense_layers", "moe_layer_interval", "moe_dense_layers")  # fmt: skip


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
            "moe_num_experts": experts, "moe_experts_per_token": model_moe.get("top_k") or 1,
            "moe_shared_experts": shared or None, "moe_normalize_top_k": model_moe.get("expert_weighting_normalization", True) is not False,
            "moe_router_scoring": scoring, "moe_aux_loss_coef": float(model_moe.get("load_balancing_loss_coef") or 0.0) or None,
        }  # fmt: skip
        if model_moe.get("routing_algorithm", "learned") != "learned":
            return Approx(out, f"routing_algorithm {model_moe['routing_algorithm']} (not a learned router) has no counterpart")
        return out

    @staticmethod
    def write(
        moe_num_experts: int | None, moe_experts_per_token: int | None, moe_ffn_hidden_size: int | None,
        moe_shared_experts: int | None, moe_shared_ffn_hidden_size: int | None, moe_shared_expert_gate: bool | None,
        moe_normalize_top_k: bool | None, moe_router_scoring: str | None, moe_aux_loss_coef: float | None,
        moe_z_loss_coef: float | None, moe_first_dense_layers: int | None, moe_layer_interval: int | None,
        moe_dense_layers: list[int] | None,
    ) -> Any:  # fmt: skip
        if not moe_num_experts or moe_num_experts <= 1:
            return {}
        moe: dict[str, Any] = {"num_experts": moe_num_experts, "top_k": moe_experts_per_token or 1}
        losses: list[tuple[str, tuple[str, ...]]] = []
        if moe_aux_loss_coef:
            moe["load_balancing_loss_coef"] = moe_aux_loss_coef
        if moe_shared_experts:
            moe["num_shared_experts"] = moe_shared_experts  # as wide as the routed ones (cerebras.filter_size says)
            if moe_shared_expert_gate:
                losses.append(("Model Zoo adds its shared experts with weight 1 (no sigmoid gate)", ("model.moe_shared_expert_gate",)))
        if moe_normalize_top_k is False:
            moe["expert_weighting_normalization"] = False
        if moe_router_scoring not in (None, "softmax"):
            moe["router_selection_nonlinearity"] = moe_router_scoring
        if moe_z_loss_coef:
            losses.append(("Model Zoo has no router z-loss", ("model.moe_z_loss_coef",)))
        if not all_layers(moe_first_dense_layers, moe_layer_interval, moe_dense_layers):
            losses.append(("every Model Zoo decoder layer is MoE: dense layers (first, interval, list) are not expressible",
                           ("model.moe_first_dense_layers", "model.moe_layer_interval", "model.moe_dense_layers")))  # fmt: skip
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
    def write(value: int, moe_num_experts: int | None, moe_ffn_hidden_size: int | None, moe_first_dense_layers: int | None,
              moe_layer_interval: int | None, moe_dense_layers: list[int] | None, moe_shared_experts: int | None,
              moe_shared_ffn_hidden_size: int | None) -> Any:  # fmt: skip
        expert = moe_ffn_hidden_size or value
        if moe_num_experts and moe_shared_experts and moe_shared_ffn_hidden_size not in (None, expert):
            return Approx({"model_filter_size": expert}, f"Model Zoo's shared experts are as wide as the routed ones "
                          f"({expert}), not {moe_shared_ffn_hidden_size}", ("model.moe_shared_ffn_hidden_size",))  # fmt: skip
        if not moe_num_experts or moe_num_experts <= 1 or moe_ffn_hidden_size in (None, value):
            return {"model_filter_size": value}
        if all_layers(moe_first_dense_layers, moe_layer_interval, moe_dense_layers):  # no layer is dense
            return Approx({"model_filter_size": moe_ffn_hidden_size},
                          f"every layer is MoE: filter_size is the experts' {moe_ffn_hidden_size}; the dense width {value} "
                          "is used by no layer")  # fmt: skip
        return Approx({"model_filter_size": moe_ffn_hidden_size},
                      f"Model Zoo has one MLP width: the experts' {moe_ffn_hidden_size}; the dense layers' {value} is lost")
