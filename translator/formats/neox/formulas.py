"""GPT-NeoX formulas (megatron/neox_arguments at EleutherAI/gpt-neox ea7aefd8): the architecture.

The training side (optimizer, schedule, batch, precision, checkpoint) is in training.py; importing
this module registers both (the registry imports `translator.formats.neox.formulas`).
"""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Approx, Unrunnable, formula
from ...knowledge.formulas_common import GATED_ACTIVATIONS
from . import models, schedule, training  # noqa: F401  (register neox.* model, lr_schedule and training formulas)
from .widths import width_problem


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


@formula("neox.ffn_width")
class NeoxFfnWidth:
    """NeoX ParallelMLP width -> the real MLP hidden width (the HF/Cerebras intermediate size).

    NeoX: ffn = intermediate_size, else int(expansion_factor*h), else 4h. Gated activations use
    int(ffn*2/3) as the fused gate+up width (rounded up to 2*mlp_multiple_of) and half of it as
    the hidden width (rounded up to mlp_multiple_of). Writing 3*F with multiple 1 reads back as F.
    """

    @staticmethod
    def read(
        intermediate_size: int | None,
        expansion_factor: float | None,
        mlp_multiple_of: int | None,
        hidden_size: int | None,
        activation: str | None,
        tensor_size: int | None,
        moe_num_experts: Any,
        mlp_type: str | None = None,
    ) -> int | None:
        if mlp_type == "llama":  # LLaMAParallelMLP: the width itself, no 2/3 (2023-05-02 .. 2024-09-09)
            if intermediate_size is not None:
                return int(intermediate_size)
            return _round_up(int(2 * hidden_size * 4 / 3), 256) if hidden_size else None
        multiple = mlp_multiple_of or 1
        if intermediate_size is not None:
            ffn, key = int(intermediate_size), "intermediate_size"
        elif expansion_factor is not None and hidden_size:
            ffn, key = int(expansion_factor * hidden_size), "expansion_factor"
        elif hidden_size:
            ffn, key = 4 * hidden_size, ""
        else:
            return None
        every_layer_moe = (moe_num_experts or 1) > 1  # moe_expert_interval: 1, the only one read (neox.yaml)
        if not every_layer_moe:  # else the dense MLP is never built (experts take intermediate_size as is)
            problem = width_problem(ffn, activation, multiple, max(1, tensor_size or 1))
            if problem is not None:  # the key is named by the error; intermediate_size is the one to set
                raise Unrunnable(problem.split(": ", 1)[1] if key == "intermediate_size" else
                                 f"gives the width {ffn} (x hidden_size); {problem}")  # fmt: skip
        if activation in GATED_ACTIVATIONS:
            fused = _round_up(int(ffn * 2 / 3), 2 * multiple)
            return _round_up(fused // 2, multiple)
        return _round_up(ffn, multiple)

    @staticmethod
    def write(value: int, activation: str | None) -> dict[str, Any]:
        if activation in GATED_ACTIVATIONS:
            return {"intermediate_size": 3 * value}
        return {"intermediate_size": value}


@formula("neox.activation")
class NeoxActivation:
    """NeoX activation name -> canonical; plain gelu uses the tanh approximation under bias_gelu_fusion."""

    NAMES = {"swish": "silu"}
    GATED = {"silu": "swiglu", "gelu": "geglu", "relu": "reglu"}  # LLaMAParallelMLP's act(w1 x) * w3 x

    @staticmethod
    def read(
        activation: str | None, bias_gelu_fusion: bool | None, onnx_safe: bool | None, mlp_type: str | None = None
    ) -> Any:
        name = (activation or "gelu").lower()
        name = NeoxActivation.NAMES.get(name, name)
        if mlp_type == "llama":
            if name in NeoxActivation.GATED:
                return NeoxActivation.GATED[name]
            return Approx(name, f"mlp_type: llama gates {name} (act(w1 x) * w3 x), which has no canonical name: read as plain {name}")
        if name == "gelu" and bias_gelu_fusion and not onnx_safe:
            return "gelu_tanh"
        return name

    @staticmethod
    def write(value: str) -> Any:
        if value == "gelu_tanh":
            return {"activation": "gelu", "bias_gelu_fusion": True}
        if value == "geglu_tanh":  # activations.py: geglu gates with F.gelu, the exact GELU
            return Approx({"activation": "geglu"}, "NeoX's geglu gates with the exact GELU, not its tanh approximation")
        return {"activation": value}


@formula("neox.attention_kind")
class NeoxAttentionKind:
    """attention_config -> "dense" when every layer is global/flash attention, else the pattern."""

    DENSE = frozenset({"global", "flash"})
    # NeoX's ATTENTION_TYPE_CHOICES (megatron/neox_arguments/neox_args.py)
    TYPES = frozenset({"global", "local", "sparse_fixed", "sparse_variable", "bigbird", "bslongformer", "gmlp", "amlp",
                       "flash", "rwkv", "mamba"})  # fmt: skip

    @staticmethod
    def read(attention_config: Any, num_layers: int | None) -> str | None:
        if attention_config is None:
            return "dense"
        kinds: set[str] = set()
        if not isinstance(attention_config, list):
            raise ValueError("attention_config must be a list such as [[['global'], 24]]")
        layers = 0  # as NeoX's expand_attention_types counts them (megatron/utils.py)
        for item in attention_config:
            if isinstance(item, str):
                kinds.add(item)
                layers += 1
            elif isinstance(item, list) and len(item) == 2 and isinstance(item[0], list) and item[0]:
                kinds.update(str(k) for k in item[0])
                repeat = item[1]
                if repeat == "all":  # NeoX repeats this pattern over every layer and ignores the other entries
                    if num_layers is not None and num_layers % len(item[0]):
                        raise ValueError(f"num_layers {num_layers} is not divisible by the pattern {item[0]!r} (NeoX asserts it)")
                    layers = num_layers if num_layers is not None else -1
                    break
                if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 0:
                    raise ValueError(f"attention_config entry {item!r}: the repeat count must be a whole number or 'all'")
                layers += len(item[0]) * repeat
            else:
                raise ValueError(f"attention_config entry {item!r} is not [[types...], repeat]")
        unknown = sorted(kinds - NeoxAttentionKind.TYPES)
        if unknown:
            raise ValueError(f"attention type {unknown[0]!r} is not one NeoX knows ({', '.join(sorted(NeoxAttentionKind.TYPES))})")
        if num_layers is not None and layers >= 0 and layers != num_layers:
            raise ValueError(f"it covers {layers} layers but num_layers is {num_layers}: NeoX asserts one attention type per layer")
        if kinds <= NeoxAttentionKind.DENSE:
            return "dense"
        return "+".join(sorted(kinds))

    @staticmethod
    def write(value: str, num_layers: int | None, sliding_window: int | None) -> dict[str, Any]:
        if value == "dense":
            if sliding_window is not None and num_layers:  # only flash attention applies NeoX's window
                return {"attention_config": [[["flash"], num_layers]]}
            return {}
        return {"attention_config": Approx(None, f"attention pattern {value} is not written back")}
