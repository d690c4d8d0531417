"""Named transforms between framework values and canonical values, each with its inverse.

Simple transforms (rename, invert, enum map, scale) are declared in the mapping tables and built
here. A formula is a pair of pure functions registered under a name:

* ``read(**kwargs)`` gets the rule's framework keys (dots become ``_``: ``fp16.type`` ->
  ``fp16_type``) and its ``with`` canonical fields (by last segment: ``model.hidden_size`` ->
  ``hidden_size``) and returns the canonical value, or a dict of values for multi-field rules.
* ``write(**kwargs)`` gets the canonical value as ``value`` (or each field by last segment) plus
  the ``with`` fields, and returns ``{key_ident: framework_value}``.

Either side may wrap a result in :class:`Approx` to say the value is only approximated; the
report then marks the entry ``lossy`` with the reason.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Approx:
    """A value that only approximates the source's meaning, with the reason."""

    value: Any
    detail: str


def unwrap(value: Any) -> tuple[Any, str | None]:
    if isinstance(value, Approx):
        return value.value, value.detail
    return value, None


def ident(name: str) -> str:
    """Python identifier a formula sees for a framework key path."""
    return name.replace(".", "_").replace("-", "_")


def field_ident(name: str) -> str:
    """Python identifier a formula sees for a canonical field."""
    return name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Formula:
    name: str
    read: Callable[..., Any]
    write: Callable[..., dict[str, Any]]
    # signatures are read once at registration: the engine asks for them on every file
    _read_params: frozenset[str] = frozenset()
    _write_params: frozenset[str] = frozenset()

    def read_params(self) -> frozenset[str]:
        return self._read_params

    def write_params(self) -> frozenset[str]:
        return self._write_params


FORMULAS: dict[str, Formula] = {}


def formula(name: str) -> Callable[[type], type]:
    """Register a class holding static ``read`` and ``write`` functions as a named formula."""

    def register(cls: type) -> type:
        read, write = cls.read, cls.write  # type: ignore[attr-defined]
        FORMULAS[name] = Formula(
            name, read, write,
            frozenset(inspect.signature(read).parameters), frozenset(inspect.signature(write).parameters),
        )  # fmt: skip
        return cls

    return register


# --------------------------------------------------------------------------------------------
# Architecture


GATED_ACTIVATIONS = frozenset({"geglu", "reglu", "swiglu", "bilinear", "glu"})


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


@formula("neox_ffn_width")
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
    ) -> int | None:
        multiple = mlp_multiple_of or 1
        if intermediate_size is not None:
            ffn = int(intermediate_size)
        elif expansion_factor is not None and hidden_size:
            ffn = int(expansion_factor * hidden_size)
        elif hidden_size:
            ffn = 4 * hidden_size
        else:
            return None
        if activation in GATED_ACTIVATIONS:
            fused = _round_up(int(ffn * 2 / 3), 2 * multiple)
            return _round_up(fused // 2, multiple)
        return _round_up(ffn, multiple)

    @staticmethod
    def write(value: int, activation: str | None) -> dict[str, Any]:
        if activation in GATED_ACTIVATIONS:
            return {"intermediate_size": 3 * value}
        return {"intermediate_size": value}


@formula("rotary_dim")
class RotaryDim:
    """rotary_dim = int(head_dim * rotary_fraction), head_dim = hidden / heads (Cerebras, GPT-J)."""

    @staticmethod
    def read(model_rotary_dim: int | None, hidden_size: int | None, num_heads: int | None) -> float | None:
        if model_rotary_dim is None or not hidden_size or not num_heads:
            return None
        return model_rotary_dim / (hidden_size // num_heads)

    @staticmethod
    def write(value: float, hidden_size: int | None, num_heads: int | None) -> dict[str, Any]:
        if not hidden_size or not num_heads:
            return {}
        head_dim = hidden_size // num_heads
        exact = head_dim * value
        dim = int(exact)
        if dim != exact:
            return {"model_rotary_dim": Approx(dim, f"{value} x head_dim {head_dim} = {exact} truncated to {dim}")}
        return {"model_rotary_dim": dim}


# --------------------------------------------------------------------------------------------
# Simple transforms declared inline in the tables


@dataclass(frozen=True)
class Simple:
    """One key <-> one field: rename, boolean inversion, enum map or scaling."""

    kind: str  # rename | invert | enum | scale
    table: tuple[tuple[Any, Any], ...] = ()  # enum pairs (framework, canonical)
    factor: float = 1.0
    case_insensitive: bool = False

    def read(self, raw: Any) -> Any:
        if raw is None:
            return None
        if self.kind == "invert":
            if not isinstance(raw, bool):
                raise ValueError(f"expected true or false, got {raw!r}")
            return not raw
        if self.kind == "enum":
            probe = raw.lower() if self.case_insensitive and isinstance(raw, str) else raw
            for framework, canonical in self.table:
                fw = framework.lower() if self.case_insensitive and isinstance(framework, str) else framework
                if fw == probe:
                    return canonical
            allowed = ", ".join(str(f) for f, _ in self.table)
            raise ValueError(f"unknown value {raw!r}; expected one of {allowed}")
        if self.kind == "scale":
            if isinstance(raw, bool) or not isinstance(raw, (int, float)):
                raise ValueError(f"expected a number, got {raw!r}")
            return raw * self.factor
        return raw

    def write(self, value: Any) -> Any:
        if value is None:
            return None
        if self.kind == "invert":
            return not value
        if self.kind == "enum":
            for framework, canonical in self.table:
                if canonical == value:
                    return framework
            raise LookupError(value)
        if self.kind == "scale":
            out = value / self.factor
            return int(out) if isinstance(out, float) and out.is_integer() and isinstance(value, int) else out
        return value


def is_close(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return bool(a == b)


@formula("neox_activation")
class NeoxActivation:
    """NeoX activation name -> canonical; plain gelu uses the tanh approximation under bias_gelu_fusion."""

    NAMES = {"swish": "silu"}

    @staticmethod
    def read(activation: str | None, bias_gelu_fusion: bool | None, onnx_safe: bool | None) -> Any:
        name = (activation or "gelu").lower()
        name = NeoxActivation.NAMES.get(name, name)
        if name == "gelu" and bias_gelu_fusion and not onnx_safe:
            return "gelu_tanh"
        return name

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        if value == "gelu_tanh":
            return {"activation": "gelu", "bias_gelu_fusion": True}
        return {"activation": value}


@formula("neox_norm_eps")
class NeoxNormEps:
    """NeoX keeps one epsilon per norm kind; the active norm decides which one counts."""

    @staticmethod
    def read(
        layernorm_epsilon: float | None, rms_norm_epsilon: float | None, scalenorm_epsilon: float | None, norm: str | None
    ) -> float | None:
        if norm == "rmsnorm":
            return rms_norm_epsilon
        if norm == "scalenorm":
            return scalenorm_epsilon
        return layernorm_epsilon

    @staticmethod
    def write(value: float, norm: str | None) -> dict[str, Any]:
        key = {"rmsnorm": "rms_norm_epsilon", "scalenorm": "scalenorm_epsilon"}.get(norm or "", "layernorm_epsilon")
        return {key: value}


@formula("neox_attention_kind")
class NeoxAttentionKind:
    """attention_config -> "dense" when every layer is global/flash attention, else the pattern."""

    DENSE = frozenset({"global", "flash"})

    @staticmethod
    def read(attention_config: Any, num_layers: int | None) -> str | None:
        if attention_config is None:
            return "dense"
        kinds: set[str] = set()
        if not isinstance(attention_config, list):
            raise ValueError("attention_config must be a list such as [[['global'], 24]]")
        for item in attention_config:
            if isinstance(item, str):
                kinds.add(item)
            elif isinstance(item, list) and item and isinstance(item[0], list):
                kinds.update(str(k) for k in item[0])
            else:
                raise ValueError(f"attention_config entry {item!r} is not [[types...], repeat]")
        if kinds <= NeoxAttentionKind.DENSE:
            return "dense"
        return "+".join(sorted(kinds))

    @staticmethod
    def write(value: str, num_layers: int | None) -> dict[str, Any]:
        if value == "dense":
            return {}
        return {"attention_config": Approx(None, f"attention pattern {value} is not written back")}


@formula("same_as_hidden_dropout")
class SameAsHiddenDropout:
    """NeoX applies hidden_dropout to the embeddings too; it has no separate embedding dropout."""

    @staticmethod
    def read(hidden_dropout: float | None) -> float | None:
        return hidden_dropout

    @staticmethod
    def write(value: float, hidden_dropout: float | None) -> dict[str, Any]:
        return {}


@formula("decoder_family")
class DecoderFamily:
    """Model family from the block structure (the Cerebras and HF model registries key on it)."""

    @staticmethod
    def read(
        parallel_residual: bool | None, parallel_shared_norm: bool | None, norm: str | None, activation: str | None
    ) -> str:
        if parallel_residual:
            return "gptj" if parallel_shared_norm else "gpt-neox"
        if norm == "rmsnorm" or activation in GATED_ACTIVATIONS:
            return "llama"
        return "gpt2"

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        return {}


# --------------------------------------------------------------------------------------------
# Optimizer, schedule, batch, precision


@formula("neox_grad_clip")
class NeoxGradClip:
    """NeoX forwards gradient_clipping to DeepSpeed only when it differs from NeoX's default 1.0."""

    TRAP = (
        "NeoX only passes gradient_clipping to DeepSpeed when it is not 1.0; its pinned DeeperSpeed "
        "then defaults to 0.0, so the NeoX run had no clipping at all. Kept 1.0 as written; "
        "give --set optim.grad_clip=0 to reproduce the run exactly"
    )

    @staticmethod
    def read(gradient_clipping: float | None) -> Any:
        if gradient_clipping is None:
            return None
        if float(gradient_clipping) == 1.0:
            return Approx(float(gradient_clipping), NeoxGradClip.TRAP)
        return float(gradient_clipping)

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        return {"gradient_clipping": value}


@formula("neox_schedule_steps")
class NeoxScheduleSteps:
    """N = lr_decay_iters, else floor(train_iters*lr_decay_fraction), else train_iters; warmup = warmup*N."""

    @staticmethod
    def read(
        warmup: float | None, lr_decay_iters: int | None, lr_decay_fraction: float | None, steps: int | None
    ) -> dict[str, Any]:
        if lr_decay_iters is not None:
            decay = int(lr_decay_iters)
        elif lr_decay_fraction is not None and steps is not None:
            decay = math.floor(steps * lr_decay_fraction)
        elif steps is not None:
            decay = steps
        else:
            return {}
        decay = max(1, decay)
        return {"warmup_steps": (warmup or 0.0) * decay, "decay_steps": decay}

    @staticmethod
    def write(warmup_steps: float | None, decay_steps: int | None, steps: int | None) -> dict[str, Any]:
        if not decay_steps:
            return {}
        out: dict[str, Any] = {"lr_decay_iters": decay_steps}
        if warmup_steps is not None:
            out["warmup"] = warmup_steps / decay_steps
        return out


@formula("neox_data_parallel")
class NeoxDataParallel:
    """dp = world / pipe / model parallel sizes (a size below 1 counts as 1); must divide evenly."""

    @staticmethod
    def read(world_size: int | None, tensor_size: int | None, pipeline_size: int | None) -> int | None:
        if world_size is None:
            return None
        model_ranks = max(1, tensor_size or 1) * max(1, pipeline_size or 1)
        if world_size % model_ranks:
            raise ValueError(
                f"world size {world_size} is not divisible by pipe x model parallel size {model_ranks}"
            )
        return world_size // model_ranks

    @staticmethod
    def write(value: int, world_size: int | None, tensor_size: int | None, pipeline_size: int | None) -> dict[str, Any]:
        return {}


@formula("neox_global_batch")
class NeoxGlobalBatch:
    """train_batch_size, else micro x grad_accum x data-parallel size (needs the world size)."""

    @staticmethod
    def read(
        train_batch_size: int | None, micro: int | None, grad_accum: int | None, data_parallel_size: int | None
    ) -> int | None:
        if train_batch_size is not None:
            if micro and data_parallel_size and train_batch_size != micro * (grad_accum or 1) * data_parallel_size:
                raise ValueError(
                    f"train_batch_size {train_batch_size} != micro {micro} x grad_accum {grad_accum or 1} "
                    f"x data-parallel size {data_parallel_size}"
                )
            return int(train_batch_size)
        if micro and data_parallel_size:
            return micro * (grad_accum or 1) * data_parallel_size
        return None

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"train_batch_size": value}


@formula("neox_precision")
class NeoxPrecision:
    """What NeoX trains in: `precision`, else the fp16/bf16 blocks; fp16.type=bfloat16 is DeeperSpeed bf16."""

    NAMES = {"fp16": "fp16", "float16": "fp16", "half": "fp16", "bfloat16": "bf16", "bf16": "bf16", "fp32": "fp32"}

    @staticmethod
    def read(
        precision: str | None,
        fp16_enabled: Any,
        fp16_type: str | None,
        fp16_fp16: Any,
        bf16_enabled: Any,
    ) -> Any:
        if precision is not None:
            name = NeoxPrecision.NAMES.get(str(precision).lower())
            if name is None:
                raise ValueError(f"unknown precision {precision!r}; expected fp16, bfloat16 or fp32")
            return name
        if fp16_enabled is True or (fp16_enabled is None and fp16_fp16 is True):
            if fp16_type is not None and str(fp16_type).lower() in ("bfloat16", "bf16"):
                return Approx(
                    "bf16",
                    "fp16.type=bfloat16 is a DeeperSpeed (2021) extension: that run trained in bf16, "
                    "but current NeoX/DeepSpeed ignore `type` and would train in fp16",
                )
            return "fp16"
        if bf16_enabled is True:
            return "bf16"
        return "fp32"

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        if value == "fp16":
            return {"precision": "fp16", "fp16_enabled": True}
        if value in ("bf16", "cbf16"):
            out: dict[str, Any] = {"precision": "bfloat16", "bf16_enabled": True}
            if value == "cbf16":
                out["bf16_enabled"] = Approx(True, "Cerebras cbfloat16 has no GPU counterpart; wrote bf16")
            return out
        return {"precision": "fp32"}


@formula("zero_is_dynamic")
class ZeroIsDynamic:
    """DeepSpeed loss_scale: 0 means dynamic loss scaling, any other value a fixed scale."""

    @staticmethod
    def read(fp16_loss_scale: float | None) -> Any:
        if fp16_loss_scale is None:
            return None
        return "dynamic" if float(fp16_loss_scale) == 0 else float(fp16_loss_scale)

    @staticmethod
    def write(value: Any) -> dict[str, Any]:
        return {"fp16_loss_scale": 0 if value == "dynamic" else value}


@formula("power_of_two")
class PowerOfTwo:
    """DeepSpeed initial_scale_power p <-> initial loss scale 2**p."""

    @staticmethod
    def read(fp16_initial_scale_power: int | None) -> float | None:
        return None if fp16_initial_scale_power is None else float(2 ** int(fp16_initial_scale_power))

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        power = math.log2(value) if value > 0 else 0.0
        if not power.is_integer():
            return {"fp16_initial_scale_power": Approx(round(power), f"{value} is not a power of two")}
        return {"fp16_initial_scale_power": int(power)}


# --------------------------------------------------------------------------------------------
# Cerebras Model Zoo


@formula("cerebras_gqa")
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


@formula("cerebras_attention_bias")
class CerebrasAttentionBias:
    """Cerebras has separate flags for the QKV and output projection biases; NeoX and HF have one."""

    @staticmethod
    def read(model_use_projection_bias_in_attention: Any, model_use_ffn_bias_in_attention: Any) -> Any:
        qkv, out = model_use_projection_bias_in_attention, model_use_ffn_bias_in_attention
        if qkv is None or out is None or qkv == out:
            return qkv if qkv is not None else out
        return Approx(qkv, f"QKV bias {qkv} and output-projection bias {out} differ; one flag keeps the QKV one")

    @staticmethod
    def write(value: bool) -> dict[str, Any]:
        return {"model_use_projection_bias_in_attention": value, "model_use_ffn_bias_in_attention": value}


def neox_init_std(method: str, sigma: float, num_layers: int, hidden_size: int) -> float | None:
    """Standard deviation each NeoX init method implies (megatron/model/init_functions.py)."""
    if method == "normal":
        return sigma
    if method == "scaled_normal":
        return sigma / math.sqrt(2.0 * num_layers)
    if method == "single_residual_scaled_normal":
        return sigma / math.sqrt(num_layers)
    if method == "small_init":
        return math.sqrt(2.0 / (5.0 * hidden_size))
    if method == "wang_init":
        return 2.0 / (num_layers * math.sqrt(hidden_size))
    return None  # xavier/orthogonal depend on each tensor's shape


def _truncated_normal(std: float) -> dict[str, Any]:
    # Cerebras' own GPT-NeoX configs write truncated normals cut at +-2 std.
    return {"name": "truncated_normal", "mean": 0.0, "std": std, "a": -2.0 * std, "b": 2.0 * std}


@formula("cerebras_initializers")
class CerebrasInitializers:
    """NeoX init method names -> Cerebras initializer dicts with the std each method implies."""

    TRUNCATION = "NeoX samples N(0, std); Cerebras gets a normal truncated at +-2 std, as in its own NeoX configs"
    GPTJ_FFN = "the GPT-J backbone initialises both MLP matrices with output_layer_initializer"

    @staticmethod
    def read(
        model_initializer_range: float | None,
        model_initializer: Any,
        model_output_layer_initializer: Any,
        model_embedding_initializer: Any,
        num_layers: int | None,
        hidden_size: int | None,
    ) -> dict[str, Any]:
        sigma = float(model_initializer_range) if model_initializer_range is not None else 0.02
        out: dict[str, Any] = {"init_std": sigma}

        def method_for(spec: Any, fallback: str) -> Any:
            if not isinstance(spec, dict):
                return fallback if spec is None else Approx(fallback, f"initializer {spec!r} has no NeoX name")
            std = spec.get("std")
            if std is None or not num_layers or not hidden_size:
                return Approx(fallback, f"initializer {spec.get('name')} without a std")
            for name in ("normal", "scaled_normal", "small_init", "wang_init", "single_residual_scaled_normal"):
                expected = neox_init_std(name, sigma, num_layers, hidden_size)
                if expected and math.isclose(float(std), expected, rel_tol=1e-6):
                    if spec.get("name") == "truncated_normal":
                        return Approx(name, "Cerebras truncated normal read as NeoX's plain normal")
                    return name
            return Approx(fallback, f"std {std} matches no NeoX init method")

        out["init_method"] = method_for(model_initializer, "normal")
        out["output_init_method"] = method_for(model_output_layer_initializer, "normal")
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
            return out
        detail = CerebrasInitializers.TRUNCATION
        if family in ("gptj", "gpt-neox"):
            detail += "; " + CerebrasInitializers.GPTJ_FFN

        def spec(method: str | None) -> Any:
            name = method or "normal"
            std = neox_init_std(name, sigma, num_layers, hidden_size)
            if std is None:
                return Approx({"name": name}, f"{name} uses each tensor's own fan-in/out; NeoX computes it per shard")
            return Approx(_truncated_normal(std), detail)

        hidden = spec(init_method)
        out["model_initializer"] = hidden
        out["model_embedding_initializer"] = hidden
        out["model_output_layer_initializer"] = spec(output_init_method)
        return out


@formula("cerebras_precision")
class CerebrasPrecision:
    """mixed_precision + fp16_type (release 2.1+; use_bfloat16 before) <-> compute dtype."""

    TYPES = {"fp16": "float16", "bf16": "bfloat16", "cbf16": "cbfloat16"}

    @staticmethod
    def read(model_mixed_precision: Any, model_fp16_type: str | None, model_use_bfloat16: Any) -> str | None:
        if model_mixed_precision is None and model_fp16_type is None and model_use_bfloat16 is None:
            return None
        if model_mixed_precision is False:
            return "fp32"
        if model_use_bfloat16 is True:
            return "bf16"
        names = {v: k for k, v in CerebrasPrecision.TYPES.items()}
        if model_fp16_type is not None:
            if model_fp16_type not in names:
                raise ValueError(f"unknown fp16_type {model_fp16_type!r}; expected float16, bfloat16 or cbfloat16")
            return names[model_fp16_type]
        return "fp16"

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        if value == "fp32":
            return {"model_mixed_precision": False}
        return {"model_mixed_precision": True, "model_fp16_type": CerebrasPrecision.TYPES[value]}


@formula("cerebras_clip")
class CerebrasClip:
    """max_gradient_norm; 0 means no clipping, which Cerebras expresses by leaving the key out."""

    @staticmethod
    def read(optimizer_max_gradient_norm: float | None) -> float | None:
        return None if optimizer_max_gradient_norm is None else float(optimizer_max_gradient_norm)

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        return {} if value == 0 else {"optimizer_max_gradient_norm": value}


# NeoX exponential decay is lr * exp(-0.693 * m / E): the rate per decay span, exactly.
NEOX_EXP_RATE = math.exp(-0.693)


def _scheduler_name(phase: dict[str, Any]) -> str:
    name = str(phase.get("scheduler", "")).lower()
    return name[:-2] if name.endswith("lr") and name not in ("lr",) else name


@formula("cerebras_lr_schedule")
class CerebrasLrSchedule:
    """Peak lr + warmup + decay <-> Cerebras `learning_rate`: a number, one phase, or a list of phases.

    Cerebras phases hold their end value after total_iters (LinearLR, CosineDecayLR); the last
    phase runs for the rest of training.
    """

    @staticmethod
    def write(
        lr: float | None,
        decay_style: str | None,
        warmup_steps: float | None,
        decay_steps: int | None,
        min_lr: float | None,
        steps: int | None,
    ) -> dict[str, Any]:
        if lr is None:
            return {}
        style = decay_style or "constant"
        floor = min_lr or 0.0
        lossy: list[str] = []
        phases: list[dict[str, Any]] = []
        warm = warmup_steps or 0.0
        warm_i = int(round(warm))
        if warm_i != warm:
            lossy.append(f"warmup of {warm:g} steps rounded to {warm_i}")
        if warm_i > 0:
            phases.append({"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": lr, "total_iters": warm_i})
        end = decay_steps if decay_steps is not None else steps
        span = (end - warm_i) if end is not None else None
        if style == "constant" or span is None or span <= 0:
            if style != "constant":
                lossy.append(f"{style} decay without a decay length; kept the lr constant")
            phases.append({"scheduler": "Constant", "learning_rate": lr})
        elif style == "cosine":
            phases.append({"scheduler": "CosineDecay", "initial_learning_rate": lr, "end_learning_rate": floor, "total_iters": span})
            if steps is not None and end is not None and steps > end:
                lossy.append(f"NeoX cosine rises again after step {end} (no clamp); Cerebras holds {floor:g}")
        elif style == "linear":
            if floor == 0 or floor >= lr:
                phases.append({"scheduler": "Linear", "initial_learning_rate": lr, "end_learning_rate": min(floor, lr), "total_iters": span})
            else:
                # NeoX decays towards 0 and clamps at min_lr: it reaches the floor early.
                hit = span * (1.0 - floor / lr)
                hit_i = max(1, int(round(hit)))
                if hit_i != hit:
                    lossy.append(f"the decay reaches min_lr after {hit:g} steps, rounded to {hit_i}")
                phases.append({"scheduler": "Linear", "initial_learning_rate": lr, "end_learning_rate": floor, "total_iters": hit_i})
                phases.append({"scheduler": "Constant", "learning_rate": floor})
        elif style == "exponential":
            phases.append({"scheduler": "Exponential", "initial_learning_rate": lr, "decay_rate": NEOX_EXP_RATE, "total_iters": span})
            if floor > 0:
                lossy.append(f"Cerebras ExponentialLR has no floor; NeoX clamps at min_lr {floor:g}")
        value: Any = phases[0] if len(phases) == 1 else phases
        if len(phases) == 1 and phases[0]["scheduler"] == "Constant":
            value = lr
        return {"optimizer_learning_rate": Approx(value, "; ".join(lossy)) if lossy else value}

    @staticmethod
    def read(optimizer_learning_rate: Any, steps: int | None) -> dict[str, Any]:
        spec = optimizer_learning_rate
        if spec is None:
            return {}
        if isinstance(spec, bool) or not isinstance(spec, (int, float, dict, list)):
            raise ValueError(f"learning_rate must be a number, a scheduler or a list of schedulers, got {spec!r}")
        if isinstance(spec, (int, float)):
            return {"lr": float(spec), "decay_style": "constant", "warmup_steps": 0.0}
        phases = [spec] if isinstance(spec, dict) else list(spec)
        if not all(isinstance(p, dict) for p in phases):
            raise ValueError("every learning_rate phase must be a mapping with a `scheduler`")
        names = [_scheduler_name(p) for p in phases]
        out: dict[str, Any] = {"warmup_steps": 0.0}
        i = 0
        first = phases[0]
        if len(phases) > 1 and names[0] == "linear" and float(first.get("initial_learning_rate", 0.0)) < float(first.get("end_learning_rate", 0.0)):
            out["warmup_steps"] = float(first.get("total_iters", 0))
            out["lr"] = float(first["end_learning_rate"])
            i = 1
        warm = int(out["warmup_steps"])
        rest = phases[i:]
        kinds = names[i:]
        unsupported = Approx(None, f"schedule {' -> '.join(names)} has no canonical form")
        if not rest:
            out.update(decay_style="constant")
            return out
        phase = rest[0]
        peak = float(phase.get("initial_learning_rate", phase.get("learning_rate", out.get("lr", 0.0))))
        out.setdefault("lr", peak)
        tail_ok = all(k == "constant" for k in kinds[1:]) and len(kinds) <= 2
        if kinds[0] == "constant" and len(kinds) == 1:
            out["decay_style"] = "constant"
        elif kinds[0] in ("cosinedecay", "cosine") and tail_ok:
            out.update(decay_style="cosine", min_lr=float(phase.get("end_learning_rate", 0.0)))
            out["decay_steps"] = warm + int(phase.get("total_iters", 0))
        elif kinds[0] == "linear" and tail_ok:
            floor = float(phase.get("end_learning_rate", 0.0))
            span = int(phase.get("total_iters", 0))
            out.update(decay_style="linear", min_lr=floor)
            if floor > 0 and floor < peak:
                full = span / (1.0 - floor / peak)
                out["decay_steps"] = Approx(warm + int(round(full)), "") if not float(full).is_integer() else warm + int(full)
                if isinstance(out["decay_steps"], Approx):
                    out["decay_steps"] = Approx(out["decay_steps"].value, f"linear decay span {full:g} rounded")
            else:
                out["decay_steps"] = warm + span
        elif kinds[0] == "exponential" and tail_ok:
            out.update(decay_style="exponential", decay_steps=warm + int(phase.get("total_iters", 0)))
            rate = float(phase.get("decay_rate", 0.5))
            if not math.isclose(rate, NEOX_EXP_RATE, rel_tol=1e-6):
                out["decay_style"] = Approx("exponential", f"decay_rate {rate} per span is not NeoX's exp(-0.693)")
        else:
            out["decay_style"] = unsupported
        return out


@formula("cerebras_parallel_residual")
class CerebrasParallelResidual:
    """Legacy Cerebras files name no model: the GPT-J backbone (parallel residual) shows in its keys."""

    @staticmethod
    def read(model_use_untied_layer_norm: Any, model_residual_dropout_rate: Any, model_rotary_dim: Any) -> bool:
        return model_use_untied_layer_norm is not None or model_residual_dropout_rate is not None

    @staticmethod
    def write(value: bool) -> dict[str, Any]:
        return {}


@formula("dense_attention")
class DenseAttention:
    """A framework whose models only have dense causal attention: reading gives "dense"."""

    @staticmethod
    def read() -> str:
        return "dense"

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        return {}
