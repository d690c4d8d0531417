"""Megatron-LM formulas: mixture of experts (megatron/training/arguments.py _add_moe_args,
core/transformer/transformer_config.py at d98e8a64)."""

from __future__ import annotations

import ast
from typing import Any

from ...knowledge.formula import Approx, formula


@formula("megatron.moe")
class Moe:
    """--num-experts (0 = dense), --moe-router-topk (2), --moe-ffn-hidden-size (absent: --ffn-hidden-size),
    --moe-shared-expert-intermediate-size (the total width of the shared experts: one shared MLP),
    --moe-shared-expert-gate, --moe-aux-loss-coeff, --moe-z-loss-coeff, --moe-router-score-function, and
    --moe-layer-freq: N = layers 0, N, 2N, ... are MoE, or a pattern "([0]*1+[1]*23)" (1 = MoE)."""

    SCORES = {"softmax": "softmax", "sigmoid": "sigmoid"}

    @staticmethod
    def read(
        num_experts: int | None,
        moe_router_topk: int | None,
        moe_ffn_hidden_size: int | None,
        moe_shared_expert_intermediate_size: int | None,
        moe_shared_expert_gate: bool | None,
        moe_aux_loss_coeff: Any,
        moe_z_loss_coeff: float | None,
        moe_router_score_function: str | None,
        moe_router_load_balancing_type: Any,
        moe_layer_freq: Any,
        moe_router_pre_softmax: bool | None,
        num_layers: int | None,
    ) -> Any:
        if not num_experts:
            return {}
        if num_experts == 1 and not moe_shared_expert_intermediate_size:
            # one expert, routed to with weight 1: the dense MLP (Megatron-DeepSpeed's --num-experts 1 means dense)
            return {}
        out: dict[str, Any] = {
            "moe_num_experts": num_experts,
            "moe_experts_per_token": moe_router_topk or 2,
            "moe_ffn_hidden_size": moe_ffn_hidden_size,
        }
        if moe_shared_expert_intermediate_size:
            out.update(
                moe_shared_experts=1,
                moe_shared_ffn_hidden_size=moe_shared_expert_intermediate_size,
                moe_shared_expert_gate=bool(moe_shared_expert_gate),
            )
        balancing = _one(moe_router_load_balancing_type) or "aux_loss"
        aux = _one(moe_aux_loss_coeff)
        out["moe_aux_loss_coef"] = (
            float(aux or 0.0) if balancing in ("aux_loss", "seq_aux_loss", "global_aux_loss") else 0.0
        )
        if balancing in ("seq_aux_loss", "global_aux_loss") and aux:
            out["moe_aux_loss_coef"] = Approx(
                float(aux), f"{balancing}: the balancing loss is computed per sequence / globally, not per micro-batch"
            )
        if moe_z_loss_coeff:
            out["moe_z_loss_coef"] = float(moe_z_loss_coeff)
        score = moe_router_score_function or "softmax"
        # topk_routing_with_score_function: a softmax over the chosen logits (renormalised) unless
        # --moe-router-pre-softmax; sigmoid scores divided by their sum when more than one is chosen;
        # sinkhorn (router.py sinkhorn_load_balancing): the softmax over every expert, as it is
        topk = moe_router_topk or 2
        renormalised = not moe_router_pre_softmax if score == "softmax" else topk > 1
        out["moe_normalize_top_k"] = renormalised and balancing != "sinkhorn"
        out["moe_router_scoring"] = (
            "sinkhorn"
            if balancing == "sinkhorn"
            else Moe.SCORES.get(score) or Approx(None, f"router score function {score} has no canonical name")
        )
        out.update(_layers(moe_layer_freq, num_layers))
        return out

    @staticmethod
    def write(
        moe_num_experts: int | None,
        moe_experts_per_token: int | None,
        moe_ffn_hidden_size: int | None,
        moe_shared_experts: int | None,
        moe_shared_ffn_hidden_size: int | None,
        moe_shared_expert_gate: bool | None,
        moe_aux_loss_coef: float | None,
        moe_z_loss_coef: float | None,
        moe_router_scoring: str | None,
        moe_layer_interval: int | None,
        moe_first_dense_layers: int | None,
        moe_dense_layers: list[int] | None,
        moe_normalize_top_k: bool | None,
        num_layers: int | None,
        ffn_hidden_size: int | None,
    ) -> Any:
        if not moe_num_experts:
            return {}
        out: dict[str, Any] = {
            "num_experts": moe_num_experts,
            "moe_router_topk": moe_experts_per_token,
            "moe_ffn_hidden_size": moe_ffn_hidden_size,
            "moe_aux_loss_coeff": None if moe_aux_loss_coef is None else [moe_aux_loss_coef],  # nargs="+"
            "moe_z_loss_coeff": moe_z_loss_coef,
        }
        if moe_shared_experts:
            width = moe_shared_ffn_hidden_size or moe_ffn_hidden_size or ffn_hidden_size  # the canonical absences
            out["moe_shared_expert_intermediate_size"] = moe_shared_experts * width if width else None
            out["moe_shared_expert_gate"] = moe_shared_expert_gate or None
        if moe_router_scoring == "sinkhorn":
            out["moe_router_load_balancing_type"] = "sinkhorn"
        elif moe_router_scoring is not None:
            out["moe_router_score_function"] = moe_router_scoring
        out["moe_layer_freq"] = _freq(moe_layer_interval, moe_first_dense_layers, moe_dense_layers, num_layers)
        if moe_normalize_top_k is not False and moe_router_scoring == "sinkhorn":
            return Approx(
                out,
                "Megatron's sinkhorn routing weights the chosen experts by the softmax over every "
                "expert: renormalised weights are not expressible",
                ("model.moe_normalize_top_k",),
            )
        if moe_normalize_top_k is False and moe_router_scoring in (None, "softmax"):
            out["moe_router_pre_softmax"] = True  # softmax over every expert, the chosen weights as they are
        elif moe_normalize_top_k is False and moe_router_scoring == "sigmoid" and (moe_experts_per_token or 2) > 1:
            return Approx(
                out,
                "Megatron divides the chosen sigmoid scores by their sum: weights that are not "
                "renormalised are not expressible",
                ("model.moe_normalize_top_k",),
            )
        if moe_shared_experts and moe_shared_experts > 1 and out["moe_shared_expert_intermediate_size"]:
            # n MLPs summed over one input are one MLP n times as wide: the same function, said so
            return Approx(
                out,
                f"Megatron has one shared-expert MLP: {moe_shared_experts} shared experts are written "
                f"as one {out['moe_shared_expert_intermediate_size']} wide (the same sum)",
                ("model.moe_shared_experts", "model.moe_shared_ffn_hidden_size"),
            )
        return out


def _one(value: Any) -> Any:
    """--moe-aux-loss-coeff and --moe-router-load-balancing-type are lists; one item is unwrapped."""
    if isinstance(value, list):
        return value[0] if len(value) == 1 else value[0] if value else None
    return value


MAX_PATTERN = 100_000  # layers a pattern may list (a Megatron model has a few hundred at most)


def _size(value: Any) -> int:
    return len(value) if isinstance(value, list) else 1


def layer_pattern(text: str, option: str = "--moe-layer-freq") -> list[int]:
    """A per-layer pattern of 0 and 1 such as "([0]*3+[1]*29)" (--moe-layer-freq, --window-attn-skip-freq:
    Megatron's moe_freq_type evaluates it with eval) evaluated without eval: lists, *, +."""

    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.List):
            return [value(e) for e in node.elts]
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
            left, right = value(node.left), value(node.right)
            # the list made, not the factor, is bounded: ([1]*100000)*100000 is 10^10 layers
            made = (
                _size(left) * right
                if isinstance(node.op, ast.Mult) and isinstance(right, int)
                else _size(left) + _size(right)
            )
            if made > MAX_PATTERN:
                raise ValueError(f"{option} {text!r} gives more than {MAX_PATTERN:,} layers")
            if isinstance(node.op, ast.Mult) and isinstance(right, int) and 0 <= right:
                return left * right
            if isinstance(node.op, ast.Add) and isinstance(left, list) and isinstance(right, list):
                return left + right
        raise ValueError(f"{option} {text!r} is not a pattern of lists, * and + (like ([0]*3+[1]*29))")

    try:
        found = value(ast.parse(text.strip(), mode="eval").body)
    except SyntaxError:
        raise ValueError(f"{option} {text!r} is not a pattern like ([0]*3+[1]*29)") from None
    if not isinstance(found, list) or any(x not in (0, 1) for x in found):
        raise ValueError(f"{option} {text!r} must give a list of 0 and 1")
    return found


def _layers(freq: Any, num_layers: int | None) -> dict[str, Any]:
    # every layer MoE (interval 1, no dense layers first) is what leaving the fields out means
    if freq is None or isinstance(freq, int):
        if freq == 0:
            raise ValueError(
                "--moe-layer-freq 0: Megatron computes layer % 0 (ZeroDivisionError); give 1 for every layer"
            )
        # layer i is MoE when i % N == 0 (gpt_layer_specs.py), Python's modulo: -N picks the layers N does
        interval = abs(freq) if freq else None
        return {"moe_layer_interval": interval if interval != 1 else None}
    layers = layer_pattern(str(freq))
    if num_layers is not None and len(layers) != num_layers:
        raise ValueError(f"--moe-layer-freq gives {len(layers)} layers, --num-layers {num_layers}")
    first = next((i for i, x in enumerate(layers) if x), len(layers))
    dense = [i for i, x in enumerate(layers) if i >= first and not x]
    out: dict[str, Any] = {"moe_first_dense_layers": first or None}
    if dense:
        out["moe_dense_layers"] = dense
    return out


def _freq(interval: int | None, first: int | None, dense: list[int] | None, num_layers: int | None) -> Any:
    if not first and not dense:
        return interval if interval and interval != 1 else None
    if num_layers is None:
        return Approx(None, "the MoE layer pattern needs the number of layers", ("model.moe_first_dense_layers",))
    skip, every = first or 0, interval or 1
    return pattern_text(
        [int(i >= skip and (i - skip) % every == 0 and i not in (dense or ())) for i in range(num_layers)]
    )


def pattern_text(layers: list[int]) -> str:
    """A per-layer pattern as runs, "([0]*3+[1]*29)" (what layer_pattern reads back)."""
    runs: list[str] = []
    i = 0
    while i < len(layers):
        j = i
        while j < len(layers) and layers[j] == layers[i]:
            j += 1
        runs.append(f"[{layers[i]}]*{j - i}")
        i = j
    return "(" + "+".join(runs) + ")"
