"""Megatron-LM's sliding window (core_v0.15.0+): --window-size and --window-attn-skip-freq
(megatron/core/transformer/utils.py is_layer_window_attention, TransformerConfig.window_size at d98e8a64)."""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Absent, Approx, formula
from .moe import layer_pattern, pattern_text


@formula("megatron.window")
class Window:
    """--window-size L,R (core_v0.15.0+): flash attention's window, keys from q - L to q + R, so L + 1
    tokens with the query itself (the canonical window, as HF counts it); -1 is no bound
    (TransformerConfig.window_size). --window-attn-skip-freq: N = the layers numbered N, 2N, ... from 1
    attend fully, or a pattern ([1]*3+[0]*1)*8 with 1 = windowed (transformer/utils.py
    is_layer_window_attention); absent, every layer is windowed."""

    @staticmethod
    def read(window_size: Any, window_attn_skip_freq: Any, num_layers: int | None) -> Any:
        if window_size is None or window_size == "":
            return {}
        try:
            left, right = (int(x) for x in str(window_size).strip("()").split(","))
        except ValueError:
            raise ValueError(f"--window-size {window_size!r}: give the left and right window, e.g. 4095,0") from None
        if left < 0:
            return Absent(
                f"--window-size {window_size}: a left window of {left} is no bound (every key before the query)"
            )
        out: dict[str, Any] = {"sliding_window": left + 1}
        if window_attn_skip_freq not in (None, ""):
            if num_layers is None:
                return Approx(
                    out,
                    f"--window-attn-skip-freq {window_attn_skip_freq} needs --num-layers to lay out the "
                    "windowed layers",
                    ("model.attention_layer_types",),
                )
            out["attention_layer_types"] = _window_layers(window_attn_skip_freq, num_layers)
            if out["attention_layer_types"] == ["full"] * num_layers:
                return Absent(f"--window-attn-skip-freq {window_attn_skip_freq}: every layer attends fully")
        if right != 0:
            return Approx(
                out,
                f"--window-size {window_size}: a right window of {right} lets queries see keys after "
                "them; the canonical window is causal (0)",
                ("model.sliding_window",),
            )
        return out

    @staticmethod
    def write(sliding_window: int | None, attention_layer_types: list[str] | None, num_layers: int | None) -> Any:
        if sliding_window is None:
            return {}
        out: dict[str, Any] = {"window_size": f"{sliding_window - 1},0"}
        if attention_layer_types is None or all(k == "sliding" for k in attention_layer_types):
            return out
        layers = [int(k == "sliding") for k in attention_layer_types]
        every = next(
            (n for n in range(2, len(layers) + 1) if layers == [int((i + 1) % n != 0) for i in range(len(layers))]),
            None,
        )
        out["window_attn_skip_freq"] = every if every is not None else pattern_text(layers)
        return out


def _window_layers(freq: Any, num_layers: int) -> list[str] | None:
    """The per-layer pattern of --window-attn-skip-freq (None: every layer windowed)."""
    if isinstance(freq, int) or str(freq).strip().isdigit():
        every = int(freq)
        if every < 1:
            raise ValueError(f"--window-attn-skip-freq {freq}: give N >= 1 (every N-th layer attends fully)")
        kinds = ["full" if (i + 1) % every == 0 else "sliding" for i in range(num_layers)]
    else:
        layers = layer_pattern(str(freq), "--window-attn-skip-freq")
        if len(layers) != num_layers:
            raise ValueError(f"--window-attn-skip-freq gives {len(layers)} layers, --num-layers {num_layers}")
        kinds = ["sliding" if x else "full" for x in layers]
    return None if all(k == "sliding" for k in kinds) else kinds
