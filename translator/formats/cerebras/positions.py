"""Cerebras Model Zoo RoPE scaling and sliding windows (Release 2.10 layers/RotaryPositionEmbeddingHelper.py,
models/nlp/gpt2/gpt2_model.py, layers/TransformerDecoder.py).

pos_scaling_factor (2.1+; linear before 2.3.1), pos_scaling_type linear | yarn (YaRN) | llama3 |
longrope and pos_scaling_extra_args (2.3.1+); no dynamic NTK. YaRN's attention scale is
mscale_a * ln(factor) + mscale_b (defaults 0.1, 1: transformers' default attention_factor), with
extrapolation_factor (1) on the frequencies; longrope's long_mscale / short_mscale are transformers'
attention_factor. Windows count the query itself, as HF (attention_sliding_window_length, 2.1+);
sliding_window_every_other_decoder_layer (2.3.1+) windows the odd layers (layer 0 full) unless 2.10's
..._pattern is sliding_window_first (HF Gemma 2's order).
"""

from __future__ import annotations

import math
from typing import Any

from ...knowledge.formula import Absent, Approx, formula

TYPES = {"linear": "linear", "yarn": "yarn", "llama3": "llama3", "longrope": "longrope"}
# pos_scaling_extra_args key -> canonical field (the same names as HF's rope_scaling)
EXTRA = {"original_max_position_embeddings": "rope_original_max_positions", "low_freq_factor": "rope_low_freq_factor",
         "high_freq_factor": "rope_high_freq_factor", "beta_fast": "rope_yarn_beta_fast", "beta_slow": "rope_yarn_beta_slow",
         "truncate": "rope_yarn_truncate", "short_factor": "rope_short_factor", "long_factor": "rope_long_factor"}  # fmt: skip
FIELDS = ("rope_scaling_type", "rope_scaling_factor", "rope_original_max_positions", "rope_low_freq_factor",
          "rope_high_freq_factor", "rope_yarn_beta_fast", "rope_yarn_beta_slow", "rope_yarn_mscale",
          "rope_yarn_mscale_all_dim", "rope_yarn_truncate", "rope_attention_factor", "rope_short_factor", "rope_long_factor")  # fmt: skip


@formula("cerebras.rope_scaling")
class CerebrasRopeScaling:
    @staticmethod
    def read(model_pos_scaling_type: Any, model_pos_scaling_factor: Any, model_pos_scaling_extra_args: Any) -> Any:
        factor = 1.0 if model_pos_scaling_factor is None else float(model_pos_scaling_factor)
        kind = TYPES.get(str(model_pos_scaling_type or "linear").lower())
        if kind is None:
            raise ValueError(f"pos_scaling_type {model_pos_scaling_type!r}: Model Zoo takes linear, yarn, llama3 or longrope")
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
        rope_scaling_type: str | None, rope_scaling_factor: float | None, rope_original_max_positions: int | None,
        rope_low_freq_factor: float | None, rope_high_freq_factor: float | None, rope_yarn_beta_fast: float | None,
        rope_yarn_beta_slow: float | None, rope_yarn_mscale: float | None, rope_yarn_mscale_all_dim: float | None,
        rope_yarn_truncate: bool | None, rope_attention_factor: float | None, rope_short_factor: list[float] | None,
        rope_long_factor: list[float] | None,
    ) -> Any:  # fmt: skip
        kind = rope_scaling_type
        if kind is None:
            return {}
        if kind == "dynamic":
            return Approx({}, "Model Zoo has no dynamic (NTK) RoPE scaling: linear, yarn, llama3 and longrope only")
        values = dict(zip(FIELDS, (kind, rope_scaling_factor, rope_original_max_positions, rope_low_freq_factor,
                                   rope_high_freq_factor, rope_yarn_beta_fast, rope_yarn_beta_slow, rope_yarn_mscale,
                                   rope_yarn_mscale_all_dim, rope_yarn_truncate, rope_attention_factor, rope_short_factor,
                                   rope_long_factor)))  # fmt: skip
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
    def read(model_attention_sliding_window_length: Any, model_sliding_window_every_other_decoder_layer: Any,
             model_sliding_window_every_other_decoder_layer_pattern: Any, num_layers: int | None) -> Any:  # fmt: skip
        window = model_attention_sliding_window_length
        if window is None:  # null on purpose (Model Zoo's default): no window
            return Absent("attention_sliding_window_length is null: every layer attends to the whole context")
        if not model_sliding_window_every_other_decoder_layer or not num_layers:
            return {"sliding_window": window}
        first = "sliding" if model_sliding_window_every_other_decoder_layer_pattern == "sliding_window_first" else "full"
        other = "full" if first == "sliding" else "sliding"
        return {"sliding_window": window, "attention_layer_types": [first if i % 2 == 0 else other for i in range(num_layers)]}

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
            return Approx(out, "Model Zoo windows every layer or every other layer: this pattern is not expressible",
                          ("model.attention_layer_types",))  # fmt: skip
        out["model_sliding_window_every_other_decoder_layer"] = True
        if kinds[0] == "sliding":
            out["model_sliding_window_every_other_decoder_layer_pattern"] = "sliding_window_first"
            return Approx(out, "layer 0 windowed (HF Gemma 2's order) needs Model Zoo 2.10's "
                               "sliding_window_every_other_decoder_layer_pattern; before 2.10 the odd layers are",
                          ("model.attention_layer_types",))  # fmt: skip
        return out
