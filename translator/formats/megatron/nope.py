"""Megatron-LM's layers without rotary embedding (core_v0.13.0+): --no-rope-freq (arguments.py
no_rope_freq_type; TransformerConfig.__post_init__ and Attention.forward at d98e8a64)."""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Approx, formula
from .moe import layer_pattern, pattern_text


@formula("megatron.nope_layers")
class NopeLayers:
    """--no-rope-freq N: the layers numbered N, 2N, ... from 1 skip RoPE ([0]*(N-1)+[1] repeated;
    TransformerConfig asserts N divides --num-layers); a pattern "([0]*3+[1]*1)*9": 1 = no RoPE, one
    per layer. Absent (or 0: `if self.no_rope_freq`), every layer rotates."""

    @staticmethod
    def read(no_rope_freq: Any, num_layers: int | None) -> Any:
        if no_rope_freq in (None, "", 0, "0"):
            return None
        if num_layers is None:
            return Approx(None, f"--no-rope-freq {no_rope_freq} needs --num-layers to lay out the layers without RoPE")
        if isinstance(no_rope_freq, int) or str(no_rope_freq).strip().lstrip("-").isdigit():
            every = int(no_rope_freq)
            if every < 1 or num_layers % every:
                raise ValueError(
                    f"--no-rope-freq {every}: give N >= 1 dividing --num-layers {num_layers} "
                    "(Megatron asserts num_layers % N == 0), or a pattern like ([0]*3+[1]*1)*N"
                )
            nope = list(range(every - 1, num_layers, every))
        else:
            flags = layer_pattern(str(no_rope_freq), "--no-rope-freq")
            if len(flags) != num_layers:
                raise ValueError(f"--no-rope-freq gives {len(flags)} layers, --num-layers {num_layers}")
            nope = [i for i, flag in enumerate(flags) if flag]
        return nope or None

    @staticmethod
    def write(value: list[int] | None, num_layers: int | None) -> Any:
        if not value:
            return {}
        if not num_layers:
            return Approx({}, "--no-rope-freq needs --num-layers (one flag per layer)")
        nope = sorted(set(value))
        beyond = [i for i in nope if i >= num_layers]
        if beyond:
            return Approx({}, f"layers {beyond} are past the last of {num_layers} layers: --no-rope-freq not written")
        every = nope[0] + 1
        if num_layers % every == 0 and nope == list(range(every - 1, num_layers, every)):
            return {"no_rope_freq": every}
        return {"no_rope_freq": pattern_text([int(i in nope) for i in range(num_layers)])}
