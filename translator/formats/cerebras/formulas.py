"""Cerebras Model Zoo formulas (legacy-layout keys; the trainer layout is read into that view).

The LR schedule (`learning_rate` phases) is in schedule.py.
"""

from __future__ import annotations

import math
from typing import Any

from ...knowledge.formula import Approx, Extension, formula
from ...knowledge.formulas_common import init_method_std, rotary_dim_for
from . import models, moe, positions, releases, schedule  # noqa: F401  (register cerebras.* model, MoE, RoPE, window, schedule, release formulas)
from .models import GPTJ_BACKBONE


@formula("cerebras.rotary_dim")
class RotaryDim:
    """rotary_dim = int(head_dim * rotary_fraction), head_dim = hidden / heads (Cerebras, GPT-J)."""

    @staticmethod
    def read(
        model_rotary_dim: int | None, hidden_size: int | None, num_heads: int | None, model_attention_inner_dim: Any = None
    ) -> Any:
        if model_rotary_dim is None or not hidden_size or not num_heads:
            return None
        # Cerebras' attention_inner_dim (Gemma 2: 4096 for hidden 3584) sets its own head size
        inner = model_attention_inner_dim if isinstance(model_attention_inner_dim, int) and model_attention_inner_dim > 0 else hidden_size
        fraction = model_rotary_dim / (inner // num_heads)
        if fraction > 1:
            return Extension(f"rotary_dim {model_rotary_dim} is more than the head size {inner // num_heads}")
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
        out["output_init_method"] = method_for(model_output_layer_initializer, "scaled_normal" if sequential else "normal")
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
