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
    """A value that only approximates the source's meaning, with the reason.

    `fields`: the canonical fields that lose something, when a multi-field formula knows (the
    cosine's missing clamp concerns the decay, not the peak lr); empty = all of the rule's fields.
    """

    value: Any
    detail: str
    fields: tuple[str, ...] = ()
    parts: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (why, its fields) when the reasons differ per field

    def detail_for(self, name: str) -> str:
        """The reasons that concern canonical field `name` ("" when none does)."""
        if self.parts:
            return "; ".join(why for why, names in self.parts if not names or name in names)
        return self.detail if not self.fields or name in self.fields else ""


@dataclass(frozen=True)
class Extension:
    """A formula's reading of a value with no canonical form (DeepSpeed's OneCycle schedule, ...).

    The rule's leaves stay framework extensions: carried by a same-format translation, dropped
    with this detail elsewhere.
    """

    detail: str


class Unexpressible(Exception):
    """The target has the key but not this value (e.g. an enum member it lacks); a write may raise it."""


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


class _Registry(dict):  # type: ignore[type-arg]
    """Named formulas. The generated HF ones read mappings/hf.yaml, so they are built on first use:
    a translation that never touches an HF config does not pay for them at start-up."""

    hf_built = False

    def __missing__(self, name: str) -> Formula:
        if name.startswith("hf_") and not self.hf_built:
            self.hf_built = True
            for built in field_formulas():
                self[built.name] = built
            return self[name]  # type: ignore[no-any-return]
        raise KeyError(name)

    def every(self) -> list[str]:
        """All names, the generated ones included."""
        try:
            self["hf_"]  # a miss that builds the generated ones
        except KeyError:
            pass
        return sorted(self)


FORMULAS: _Registry = _Registry()


def formula(name: str) -> Callable[[type], type]:
    """Register a class holding static ``read`` and ``write`` functions as a named formula."""

    def register(cls: type) -> type:
        read, write = cls.read, cls.write  # type: ignore[attr-defined]
        FORMULAS[name] = Formula(name, read, write, parameters(read), parameters(write))
        return cls

    return register


def parameters(func: Callable[..., Any]) -> frozenset[str]:
    """A function's parameter names, read from its code object (inspect.signature costs ~30 µs a
    call, paid for ~140 functions at every start); a generated function's declared signature wins."""
    if hasattr(func, "__signature__"):
        return frozenset(inspect.signature(func).parameters)
    code = func.__code__
    return frozenset(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])


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
        try:
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        except OverflowError:  # an int beyond any float: only exact equality can hold
            return bool(a == b)
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


@formula("neox_norm_bias")
class NeoxNormBias:
    """NeoX's LayerNorm always has a bias (use_bias_in_norms is never read); its RMSNorm and
    ScaleNorm have none."""

    @staticmethod
    def read(norm: str | None) -> bool | None:
        return None if norm is None else norm == "layernorm"

    @staticmethod
    def write(value: bool, norm: str | None) -> dict[str, Any]:
        if norm is not None and value != (norm == "layernorm"):
            raise Unexpressible(f"NeoX's {norm} {'always' if norm == 'layernorm' else 'never'} has a learned bias "
                                "(use_bias_in_norms is never read)")  # fmt: skip
        return {}


@formula("neox_attention_kind")
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
    def write(value: float, hidden_dropout: float | None) -> Any:
        applied = 0.0 if hidden_dropout is None else hidden_dropout  # NeoX's default hidden_dropout
        if is_close(value, applied):
            return {}
        return Approx({}, f"NeoX applies hidden_dropout {applied:g} to the embeddings; embedding dropout {value:g} is lost")


# Model Zoo's GPT-2-derived models (gpt2, llama, mistral: gpt2/model.py 2.0-2.2, gpt2_model.py since)
# default embedding_dropout_rate and attention_dropout_rate to dropout_rate; the GPT-J backbone
# (gptj/model.py) defaults each to 0.1 on its own.
CEREBRAS_OWN_DROPOUT_DEFAULTS = frozenset({"gptj", "gpt-neox"})


def _cerebras_dropout(value: Any, hidden_dropout: float | None, family: str | None) -> Any:
    if value is not None:
        return value
    if family in CEREBRAS_OWN_DROPOUT_DEFAULTS:
        return 0.1
    return hidden_dropout


@formula("cerebras_embedding_dropout")
class CerebrasEmbeddingDropout:
    """embedding_dropout_rate; absent: dropout_rate (GPT-2-derived models) or 0.1 (GPT-J)."""

    @staticmethod
    def read(model_embedding_dropout_rate: float | None, hidden_dropout: float | None, family: str | None) -> Any:
        return _cerebras_dropout(model_embedding_dropout_rate, hidden_dropout, family)

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        return {"model_embedding_dropout_rate": value}


@formula("cerebras_attention_dropout")
class CerebrasAttentionDropout:
    """attention_dropout_rate; absent: dropout_rate (GPT-2-derived models) or 0.1 (GPT-J)."""

    @staticmethod
    def read(model_attention_dropout_rate: float | None, hidden_dropout: float | None, family: str | None) -> Any:
        return _cerebras_dropout(model_attention_dropout_rate, hidden_dropout, family)

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        return {"model_attention_dropout_rate": value}


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
    def write(
        value: str, parallel_residual: bool | None, parallel_shared_norm: bool | None, norm: str | None,
        activation: str | None,
    ) -> Any:  # fmt: skip
        structural = DecoderFamily.read(parallel_residual, parallel_shared_norm, norm, activation)
        if structural != value:  # a name the blocks alone do not tell (mistral is llama's blocks)
            return Approx({}, f"no key names the model family: its blocks read as {structural}, not {value}")
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
    def read(gradient_clipping: float | None, deepspeed_extra_args_gradient_clipping: float | None = None) -> Any:
        if deepspeed_extra_args_gradient_clipping is not None:  # merged last: DeepSpeed gets exactly this
            return float(deepspeed_extra_args_gradient_clipping)
        if gradient_clipping is None:
            return None
        if float(gradient_clipping) == 1.0:
            return Approx(float(gradient_clipping), NeoxGradClip.TRAP)
        return float(gradient_clipping)

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        if float(value) == 1.0:  # the only place NeoX forwards a clip of 1.0 from
            return {"deepspeed_extra_args_gradient_clipping": 1.0}
        return {"gradient_clipping": float(value)}


@formula("neox_schedule_steps")
class NeoxScheduleSteps:
    """N = lr_decay_iters, else floor(train_iters*lr_decay_fraction), else train_iters; warmup = warmup*N."""

    @staticmethod
    def read(
        warmup: float | None, lr_decay_iters: int | None, lr_decay_fraction: float | None, steps: int | None,
        decay_style: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        if lr_decay_iters is not None:
            decay = int(lr_decay_iters)
        elif lr_decay_fraction is not None and steps is not None:
            decay = math.floor(steps * lr_decay_fraction)
        elif steps is not None:
            decay = steps
        else:
            return {"warmup_steps": 0.0} if not warmup else {}
        decay = max(1, decay)
        if decay_style == "constant":  # the decay span only measures the warmup: no decay to end
            return {"warmup_steps": (warmup or 0.0) * decay}
        return {"warmup_steps": (warmup or 0.0) * decay, "decay_steps": decay}

    @staticmethod
    def write(warmup_steps: float | None, decay_steps: int | None, steps: int | None) -> Any:
        if not decay_steps:
            # no decay span (a constant lr): NeoX measures warmup against train_iters, and its
            # default warmup is 0.01, so even no warmup is stated
            if warmup_steps is None:
                return {}
            if not warmup_steps:
                return {"warmup": 0.0}
            if steps:
                return {"warmup": warmup_steps / steps}
            return Approx({}, f"a warmup of {warmup_steps:g} steps needs train_iters in NeoX: give --set train.steps=N")
        out: dict[str, Any] = {"lr_decay_iters": decay_steps}
        if warmup_steps is not None:
            out["warmup"] = warmup_steps / decay_steps
        return out


@formula("neox_min_lr")
class NeoxMinLr:
    """min_lr: the floor AnnealingLR clamps a decay at; with lr_decay_style constant the lr never
    goes below the peak, so it has no effect (and no canonical value)."""

    @staticmethod
    def read(min_lr: float | None, decay_style: str | None) -> Any:
        if decay_style == "constant":
            return Extension(f"min_lr {min_lr or 0.0:g} has no effect: the lr is constant after the warmup (lr_decay_style constant)")
        return min_lr

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        return {"min_lr": value}


@formula("neox_pipeline_size")
class NeoxPipelineSize:
    """pipe_parallel_size: 0 (the default, no PipelineModule) and 1 (a PipelineModule of one stage)
    both run the model in one stage: canonical 1. More stages are written as given."""

    @staticmethod
    def read(pipe_parallel_size: int | None) -> int | None:
        return None if pipe_parallel_size is None else max(1, pipe_parallel_size)

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"pipe_parallel_size": value} if value > 1 else {}


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
        if fp16_initial_scale_power is None:
            return None
        power = int(fp16_initial_scale_power)
        if not -1000 <= power <= 1000:  # 2**p of a huge p would be computed as an exact integer first
            raise ValueError(f"initial_scale_power {power} is no usable power of two")
        return math.ldexp(1.0, power)

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
        family: str | None = None,
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
        # Cerebras' GPT-2 backbone (gpt2, llama, mistral) scales its default output-layer init by
        # 1/sqrt(2L) (NeoX scaled_normal); the GPT-J backbone uses initializer_range everywhere.
        sequential = family in ("gpt2", "llama", "mistral")
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


@formula("cerebras_seq_length")
class CerebrasSeqLength:
    """train_input.max_sequence_length: the samples' length when the data processor takes one; a
    translation into Cerebras cannot rely on it (GptHDF5DataProcessor ignores it, with a warning)."""

    @staticmethod
    def read(train_input_max_sequence_length: int | None) -> int | None:
        return train_input_max_sequence_length

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        raise Unexpressible(f"Cerebras takes the sequence length from the preprocessed data: preprocess with max "
                            f"sequence length {value}")  # fmt: skip


@formula("cerebras_optimizer_type")
class CerebrasOptimizerType:
    """optimizer_type (case-insensitive) <-> canonical optimizer. Adam without weight decay is the
    same algorithm as AdamW: read as adamw, as every other framework's reading of it is."""

    NAMES = {"adamw": "adamw", "adam": "adam", "sgd": "sgd", "lamb": "lamb", "lion": "lion", "adafactor": "adafactor",
             "adagrad": "adagrad", "muon": "muon"}  # fmt: skip
    WRITE = {"adamw": "AdamW", "adam": "Adam", "sgd": "SGD", "lamb": "Lamb", "lion": "Lion", "adafactor": "AdaFactor",
             "adagrad": "Adagrad", "muon": "Muon"}  # fmt: skip

    @staticmethod
    def read(optimizer_optimizer_type: Any, weight_decay: float | None) -> Any:
        if optimizer_optimizer_type is None:
            return None
        name = CerebrasOptimizerType.NAMES.get(str(optimizer_optimizer_type).lower())
        if name is None:
            raise ValueError(f"unknown value {optimizer_optimizer_type!r}; expected one of {', '.join(CerebrasOptimizerType.WRITE.values())}")
        return "adamw" if name == "adam" and not weight_decay else name

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        if value not in CerebrasOptimizerType.WRITE:
            raise Unexpressible(f"optim.type={value!r} has no counterpart in optimizer.optimizer_type")
        return {"optimizer_optimizer_type": CerebrasOptimizerType.WRITE[value]}


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
        if model_use_bfloat16 is False:
            return "fp16"
        # neither given: the GPT-2/GPT-J set_defaults of 2.0.2 (use_bfloat16 True), of 2.1+
        # (fp16_type bfloat16) and the 2.10 trainer (MixedPrecision fp16_type="bfloat16") all mean bf16
        return "bf16"

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        if value == "fp32":
            return {"model_mixed_precision": False}
        return {"model_mixed_precision": True, "model_fp16_type": CerebrasPrecision.TYPES[value]}


@formula("cerebras_clip")
class CerebrasClip:
    """max_gradient_norm; 0 means no clipping, which Cerebras expresses by leaving the key out."""

    @staticmethod
    def read(optimizer_max_gradient_norm: float | None) -> float:
        # no max_gradient_norm means no clipping (0 in canonical terms), so a target whose default
        # clips (NeoX, DeepSpeed: 1.0) gets an explicit 0
        return 0.0 if optimizer_max_gradient_norm is None else float(optimizer_max_gradient_norm)

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        return {} if value == 0 else {"optimizer_max_gradient_norm": value}


# NeoX exponential decay is lr * exp(-0.693 * m / E): the rate per decay span, exactly.
NEOX_EXP_RATE = math.exp(-0.693)


def approx_of(value: Any, losses: list[tuple[str, tuple[str, ...]]]) -> Any:
    """`value`, or an Approx naming every loss and the fields they concern (all, if one does not say)."""
    if not losses:
        return value
    fields = () if any(not names for _, names in losses) else tuple(dict.fromkeys(n for _, names in losses for n in names))
    return Approx(value, "; ".join(dict.fromkeys(why for why, _ in losses)), fields, tuple(losses))


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
        warmup_start_lr: float | None = None,
        warmup_type: str | None = None,
        lag_steps: int | None = None,
    ) -> dict[str, Any]:
        if lr is None:
            return {}
        style = decay_style or "constant"
        floor = min_lr or 0.0
        lossy: list[tuple[str, tuple[str, ...]]] = []  # (why, the fields it concerns)
        phases: list[dict[str, Any]] = []
        warm = warmup_steps or 0.0
        warm_i = int(round(warm))
        if warm_i != warm:
            lossy.append((f"warmup of {warm:g} steps rounded to {warm_i}", ("schedule.warmup_steps",)))
        if warm_i > 0:
            start = warmup_start_lr or 0.0
            if warmup_type == "linear_clamped":
                lossy.append((clamped_warmup_loss(start, lr, warm), ("schedule.warmup_type",)))
            elif warmup_type not in (None, "linear"):
                lossy.append((f"{warmup_type} warmup (schedule.warmup_type) written as Cerebras' linear warmup",
                              ("schedule.warmup_type",)))  # fmt: skip
            phases.append({"scheduler": "Linear", "initial_learning_rate": start, "end_learning_rate": lr, "total_iters": warm_i})
        end = decay_steps if decay_steps is not None else steps
        span = (end - warm_i) if end is not None else None
        if style == "constant" or span is None or span <= 0:
            if style != "constant":
                lossy.append((f"{style} decay without a decay length; kept the lr constant",
                              ("schedule.decay_style", "schedule.decay_steps", "schedule.lag_steps")))  # fmt: skip
            phases.append({"scheduler": "Constant", "learning_rate": lr})
        elif style == "cosine":
            phases.append({"scheduler": "CosineDecay", "initial_learning_rate": lr, "end_learning_rate": floor, "total_iters": span})
            if steps is not None and end is not None and steps > end:
                lossy.append((f"NeoX cosine rises again after step {end} (no clamp); Cerebras holds {floor:g}",
                              ("schedule.decay_style",)))  # fmt: skip
        elif style == "linear":
            if floor == 0 or floor >= lr:
                phases.append({"scheduler": "Linear", "initial_learning_rate": lr, "end_learning_rate": min(floor, lr), "total_iters": span})
            else:
                # NeoX decays towards 0 and clamps at min_lr: it reaches the floor early.
                hit = span * (1.0 - floor / lr)
                hit_i = max(1, int(round(hit)))
                if hit_i != hit:
                    lossy.append((f"the decay reaches min_lr after {hit:g} steps, rounded to {hit_i}", ("schedule.decay_steps",)))
                phases.append({"scheduler": "Linear", "initial_learning_rate": lr, "end_learning_rate": floor, "total_iters": hit_i})
                phases.append({"scheduler": "Constant", "learning_rate": floor})
        elif style == "exponential":
            phases.append({"scheduler": "Exponential", "initial_learning_rate": lr, "decay_rate": NEOX_EXP_RATE, "total_iters": span})
            if floor > 0:
                lossy.append((f"Cerebras ExponentialLR has no floor; NeoX clamps at min_lr {floor:g}", ("schedule.min_lr",)))
        value: Any = phases[0] if len(phases) == 1 else phases
        if len(phases) == 1 and phases[0]["scheduler"] == "Constant":
            value = lr
        elif lag_steps:
            lossy.append((lag_loss(lag_steps, lr, warm), ("schedule.lag_steps",)))
        return {"optimizer_learning_rate": approx_of(value, lossy)}

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
        if not phases or not all(isinstance(p, dict) for p in phases):
            raise ValueError("every learning_rate phase must be a mapping with a `scheduler`")
        names = [_scheduler_name(p) for p in phases]
        out: dict[str, Any] = {"warmup_steps": 0.0}
        i = 0
        first = phases[0]
        # a rising first Linear phase is the warmup (alone, it holds the peak afterwards: constant)
        if names[0] == "linear" and float(first.get("initial_learning_rate", 0.0)) < float(first.get("end_learning_rate", 0.0)):
            out["warmup_steps"] = float(first.get("total_iters", 0))
            out["lr"] = float(first["end_learning_rate"])
            out["warmup_start_lr"] = float(first.get("initial_learning_rate", 0.0))
            out["warmup_type"] = "linear"
            i = 1
        warm = int(out["warmup_steps"])
        rest = phases[i:]
        kinds = names[i:]
        unsupported = Approx(None, f"schedule {' -> '.join(names)} has no canonical form")
        if not rest:
            out.update(decay_style="constant")
            if out["warmup_steps"]:
                out["lag_steps"] = 0
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
        if schedule_varies(out["warmup_steps"], out["decay_style"] if isinstance(out["decay_style"], str) else None):
            out["lag_steps"] = 0
        return out


# Cerebras model names (trainer.init.model.name) whose model is the GPT-J backbone (parallel residual)
CEREBRAS_PARALLEL_MODELS = frozenset({"gptj", "gpt-neox", "falcon"})


@formula("cerebras_parallel_residual")
class CerebrasParallelResidual:
    """Legacy Cerebras files name no model: the GPT-J backbone (parallel residual) shows in its keys."""

    @staticmethod
    def read(model_use_untied_layer_norm: Any, model_residual_dropout_rate: Any, model_rotary_dim: Any, model_name: Any) -> bool:
        if isinstance(model_name, str) and model_name:  # trainer layout: the model class says it
            return model_name.lower() in CEREBRAS_PARALLEL_MODELS
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
    def write(value: str) -> Any:
        if value != "dense":  # the output describes attention layers where the source has other blocks
            return Approx({}, f"Cerebras models only have dense causal attention: the {value} blocks become "
                              "attention layers")  # fmt: skip
        return {}


# --------------------------------------------------------------------------------------------
# DeepSpeed (deepspeed/runtime/config.py, engine.py and lr_schedules.py at deepspeedai/DeepSpeed
# edaa722; version boundaries from the release tags that first contain each change)


def deepspeed_batch(
    tb: int | None, mb: int | None, ga: int | None, dp: int | None
) -> tuple[int | None, int | None, int | None]:
    """DeepSpeedConfig._set_batch_related_parameters, then its _batch_assertion when dp is known.

    dp is the data-parallel size (DeepSpeed's `world_size`); None when unknown, in which case only
    what needs no dp is resolved (train_batch_size or micro batch alone means GA 1).
    """
    if tb is None and mb is None:
        return None, None, ga  # DeepSpeed alone refuses this; a NeoX file beside it may hold the batch
    if tb is not None and mb is not None and ga is not None:
        pass
    elif tb is not None and mb is not None:
        ga = tb // mb // dp if dp else None
    elif tb is not None and ga is not None:
        mb = tb // dp // ga if dp else None
    elif mb is not None and ga is not None:
        tb = mb * ga * dp if dp else None
    elif tb is not None:
        ga, mb = 1, (tb // dp if dp else None)
    else:
        assert mb is not None
        ga, tb = 1, (mb * dp if dp else None)
    if dp and tb is not None and mb is not None and ga is not None:
        for name, n in (("train_batch_size", tb), ("train_micro_batch_size_per_gpu", mb), ("gradient_accumulation_steps", ga)):
            if n <= 0:
                raise ValueError(f"{name} resolves to {n} at data-parallel size {dp}; DeepSpeed needs it > 0")
        if tb != mb * ga * dp:
            raise ValueError(
                f"train_batch_size {tb} != micro batch {mb} x gradient_accumulation_steps {ga} x data-parallel "
                f"size {dp}: DeepSpeed's batch assertion fails at this world size"
            )
    return tb, mb, ga


@formula("deepspeed_global_batch")
class DeepspeedGlobalBatch:
    """train_batch_size, else micro x GA x dp (DeepSpeed's resolution; the other two keys are peeked)."""

    @staticmethod
    def read(
        train_batch_size: int | None,
        train_micro_batch_size_per_gpu: int | None,
        gradient_accumulation_steps: int | None,
        data_parallel_size: int | None,
    ) -> int | None:
        return deepspeed_batch(train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps, data_parallel_size)[0]

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"train_batch_size": value}


@formula("deepspeed_micro_batch")
class DeepspeedMicroBatch:
    """train_micro_batch_size_per_gpu, else train_batch_size // dp // GA (DeepSpeed's resolution)."""

    @staticmethod
    def read(
        train_micro_batch_size_per_gpu: int | None,
        train_batch_size: int | None,
        gradient_accumulation_steps: int | None,
        data_parallel_size: int | None,
    ) -> int | None:
        return deepspeed_batch(train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps, data_parallel_size)[1]

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"train_micro_batch_size_per_gpu": value}


@formula("deepspeed_grad_accum")
class DeepspeedGradAccum:
    """gradient_accumulation_steps (DeepSpeed default None), else train_batch_size // micro // dp, else 1."""

    @staticmethod
    def read(
        gradient_accumulation_steps: int | None,
        train_batch_size: int | None,
        train_micro_batch_size_per_gpu: int | None,
        data_parallel_size: int | None,
    ) -> int | None:
        return deepspeed_batch(train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps, data_parallel_size)[2]

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"gradient_accumulation_steps": value}


# DeepSpeed's own optimizers, compared lower-case (config.py DEEPSPEED_OPTIMIZERS); "adam" is decoupled
# (AdamW) unless params.adam_w_mode is false (engine._configure_basic_optimizer, ADAM_W_MODE_DEFAULT).
_DS_OPTIMIZERS = {
    "adamw": "adamw", "onebitadam": "onebitadam", "zerooneadam": "zerooneadam", "lamb": "lamb",
    "onebitlamb": "onebitlamb", "lion": "lion", "adagrad": "adagrad", "muon": "muon",
}  # fmt: skip
_DS_MUP = {"muadam": "adam", "muadamw": "adamw", "musgd": "sgd"}  # mup wraps torch Adam / AdamW / SGD
# Any other name is getattr(torch.optim, name): case-sensitive. None: no canonical optimizer.
_TORCH_OPTIMIZERS: dict[str, str | None] = {
    "SGD": "sgd", "Adafactor": "adafactor", "ASGD": None, "Adadelta": None, "Adamax": None, "LBFGS": None,
    "NAdam": None, "RAdam": None, "RMSprop": None, "Rprop": None, "SparseAdam": None,
}  # fmt: skip
_DS_OPTIMIZER_NAMES = {
    "adamw": "AdamW", "sgd": "SGD", "lamb": "Lamb", "lion": "Lion", "onebitadam": "OneBitAdam",
    "zerooneadam": "ZeroOneAdam", "onebitlamb": "OneBitLamb", "adagrad": "Adagrad", "adafactor": "Adafactor",
    "muon": "Muon",
}  # fmt: skip


@formula("deepspeed_optimizer")
class DeepspeedOptimizer:
    """optimizer.type (+ params.adam_w_mode) <-> canonical optimizer; DeepSpeed "Adam" is AdamW by default."""

    @staticmethod
    def read(optimizer_type: Any, optimizer_params_adam_w_mode: Any, optimizer_params_weight_decay: Any = None) -> Any:
        if optimizer_type is None:
            return None
        if not isinstance(optimizer_type, str):
            raise ValueError(f"optimizer.type must be a name, got {optimizer_type!r}")
        low = optimizer_type.lower()
        if low == "adam":  # coupled Adam without weight decay is AdamW (FusedAdam's default is 0)
            coupled = optimizer_params_adam_w_mode is False and bool(optimizer_params_weight_decay)
            return "adam" if coupled else "adamw"
        if low in _DS_OPTIMIZERS:
            return _DS_OPTIMIZERS[low]
        if low in _DS_MUP:
            return Approx(_DS_MUP[low], f"{optimizer_type} is muP's {_DS_MUP[low]}: its per-layer lr scaling is not carried")
        if optimizer_type in _TORCH_OPTIMIZERS:
            canonical = _TORCH_OPTIMIZERS[optimizer_type]
            return canonical or Extension(f"torch.optim.{optimizer_type} has no canonical optimizer")
        raise ValueError(
            f"unknown optimizer type {optimizer_type!r}: DeepSpeed takes Adam, AdamW, Lamb, Lion, OneBitAdam, "
            "ZeroOneAdam, OneBitLamb, Adagrad, Muon (any case) or a torch.optim class name (exact case)"
        )

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        if value == "adam":  # coupled L2 weight decay: DeepSpeed's Adam with AdamW mode off
            return {"optimizer_type": "Adam", "optimizer_params_adam_w_mode": False}
        if value not in _DS_OPTIMIZER_NAMES:
            raise Unexpressible(f"optimizer {value!r} has no DeepSpeed counterpart")
        return {"optimizer_type": _DS_OPTIMIZER_NAMES[value]}


# Which optimizers take a parameter, so that its documented default applies (the constructors'
# signatures: FusedAdam/DeepSpeedCPUAdam, OnebitAdam, ZeroOneAdam, FusedLamb, OnebitLamb take betas
# (0.9, 0.999), eps 1e-8, weight_decay 0; FusedLion betas and weight_decay; torch SGD/Adagrad weight_decay).
_ADAM_LIKE = frozenset({"adam", "adamw", "onebitadam", "zerooneadam", "lamb", "onebitlamb"})
_TAKES = {
    "betas": _ADAM_LIKE | {"lion"},
    "eps": _ADAM_LIKE,
    "weight_decay": _ADAM_LIKE | {"lion", "sgd", "adagrad", "muon"},  # MuonWithAuxAdam: both its groups
}


def _optimizer_param(name: str, value: Any, optimizer: str | None) -> Any:
    """An optimizer parameter only means something when the optimizer block exists and takes it."""
    if optimizer is None or optimizer not in _TAKES[name]:
        return None
    return value


@formula("deepspeed_betas")
class DeepspeedBetas:
    @staticmethod
    def read(optimizer_params_betas: Any, optimizer: str | None) -> Any:
        return _optimizer_param("betas", optimizer_params_betas, optimizer)

    @staticmethod
    def write(value: list[float]) -> dict[str, Any]:
        return {"optimizer_params_betas": value}


@formula("deepspeed_eps")
class DeepspeedEps:
    @staticmethod
    def read(optimizer_params_eps: Any, optimizer: str | None) -> Any:
        return _optimizer_param("eps", optimizer_params_eps, optimizer)

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        return {"optimizer_params_eps": value}


@formula("deepspeed_weight_decay")
class DeepspeedWeightDecay:
    """DeepSpeed takes weight decay from optimizer.params (NeoX from its top-level weight_decay)."""

    @staticmethod
    def read(optimizer_params_weight_decay: Any, optimizer: str | None) -> Any:
        return _optimizer_param("weight_decay", optimizer_params_weight_decay, optimizer)

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        return {"optimizer_params_weight_decay": value}


_REQUIRED = object()
# Each scheduler's parameters and defaults: DeepSpeed's own (the constructors in lr_schedules.py)
# and the two torch.optim.lr_scheduler classes that express a decay without warmup exactly
# (DeepSpeed builds any torch scheduler named in `type` with `params` as keyword arguments).
# WarmupLR's warmup_max_lr default became the optimizer's lr in 0.17.2 (#7360); it was 0.001.
_SCHEDULERS: dict[str, dict[str, Any]] = {
    "WarmupLR": {"warmup_min_lr": 0.0, "warmup_max_lr": None, "warmup_num_steps": 1000, "warmup_type": "log"},
    "WarmupDecayLR": {"total_num_steps": _REQUIRED, "warmup_min_lr": 0.0, "warmup_max_lr": 0.001,
                      "warmup_num_steps": 1000, "warmup_type": "log"},
    "WarmupCosineLR": {"total_num_steps": _REQUIRED, "warmup_min_ratio": 0.0, "warmup_num_steps": 1000,
                       "cos_min_ratio": 0.0001, "warmup_type": "log"},
    "CosineAnnealingLR": {"T_max": _REQUIRED, "eta_min": 0.0},
    "LinearLR": {"start_factor": 1.0 / 3, "end_factor": 1.0, "total_iters": 5},
}  # fmt: skip
# Schedules with no canonical form: DeepSpeed's cyclic ones, and the other torch schedulers.
_DS_CYCLIC = ("OneCycle", "LRRangeTest")
_TORCH_SCHEDULERS = frozenset({
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "ExponentialLR",
    "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts",
    "OneCycleLR", "PolynomialLR",
})  # fmt: skip
_OLD_WARMUP_MAX = ("0.17.1",)  # documented versions in which WarmupLR still defaulted to 0.001


def _whole(value: float, what: str) -> Any:
    """An int for DeepSpeed's integer step counts; Approx when the canonical value was fractional."""
    n = int(round(value))
    return n if n == value else Approx(n, f"{what} {value:g} rounded to {n}")


def _linear_zero_crossing(warm: int, total: int, peak: float | None, floor: float) -> Any:
    """Where the canonical linear decay (to 0, clamped at min_lr) must end to hit `floor` at `total`."""
    if peak is None or floor == 0 or floor >= peak:
        return total
    return _whole(warm + (total - warm) * peak / (peak - floor), "the decay's zero crossing at step")


def _read_torch_schedule(kind: str, p: dict[str, Any], lr: float | None) -> Any:
    if lr is None:
        return {}  # factors of an optimizer lr this file does not hold
    # torch's schedulers evaluate t = 0 when built and DeepSpeed steps them after each optimizer
    # step: step k gets t = k - 1, on time (lag 0)
    if kind == "CosineAnnealingLR":  # eta_min + (lr - eta_min)(1 + cos(pi t / T_max)) / 2
        return {"lr": lr, "decay_style": "cosine", "warmup_steps": 0.0, "decay_steps": int(p["T_max"]),
                "min_lr": float(p["eta_min"]), "lag_steps": 0}  # fmt: skip
    start, end, span = float(p["start_factor"]), float(p["end_factor"]), int(p["total_iters"])
    if start == 1.0 and end <= 1.0:  # a linear decay to end_factor x lr at total_iters, then held
        if end == 1.0:
            return {"lr": lr, "decay_style": "constant", "warmup_steps": 0.0}
        return {"lr": lr, "decay_style": "linear", "warmup_steps": 0.0, "lag_steps": 0,
                "decay_steps": _linear_zero_crossing(0, span, lr, end * lr), "min_lr": end * lr}  # fmt: skip
    if end == 1.0 and start < 1.0:  # a linear warmup from start_factor x lr, then constant
        return {"lr": lr, "decay_style": "constant", "warmup_steps": float(span), "warmup_type": "linear",
                "warmup_start_lr": start * lr, "lag_steps": 0}  # fmt: skip
    return Extension(f"torch LinearLR from {start:g} to {end:g} x lr has no canonical form")


@formula("deepspeed_lr_schedule")
class DeepspeedLrSchedule:
    """DeepSpeed's scheduler block <-> peak lr, warmup and decay (deepspeed/runtime/lr_schedules.py).

    With t = the scheduler's step and W = max(2, warmup_num_steps) (DeepSpeed never warms up for
    fewer than 2 steps; a 1 is read as written and reported):
    * warmup (all three): lr = start + (peak - start) * g, g = t/W ("linear") or log(t+1)/log(W)
      ("log", DeepSpeed's default: no other framework has it, so it is schedule.warmup_type);
    * WarmupLR: peak after warmup (decay_style constant);
    * WarmupDecayLR: linearly down to warmup_min_lr at total_num_steps T, then held. The
      canonical linear decay (NeoX's) heads for 0 at decay_steps D and is clamped at min_lr, so
      D = W + (T - W) * peak / (peak - min) and T = W + (D - W) * (1 - min/peak);
    * WarmupCosineLR: ratios of the optimizer's lr: warmup from warmup_min_ratio, cosine down to
      cos_min_ratio at T (min_lr = cos_min_ratio * lr). Releases before 0.19.3 do not clamp the
      cosine after T (it rises again, as NeoX's does); 0.19.3 and later hold the floor.
    A decay without warmup has no exact DeepSpeed scheduler (they warm up for 2 steps at least):
    it is written as torch's CosineAnnealingLR or LinearLR, which DeepSpeed builds by name.
    One-step offsets between frameworks' scheduler counters are not modelled.
    """

    @staticmethod
    def read(
        scheduler_type: Any,
        scheduler_params_warmup_min_lr: Any,
        scheduler_params_warmup_max_lr: Any,
        scheduler_params_warmup_num_steps: Any,
        scheduler_params_warmup_type: Any,
        scheduler_params_total_num_steps: Any,
        scheduler_params_warmup_min_ratio: Any,
        scheduler_params_cos_min_ratio: Any,
        scheduler_params_T_max: Any,
        scheduler_params_eta_min: Any,
        scheduler_params_start_factor: Any,
        scheduler_params_end_factor: Any,
        scheduler_params_total_iters: Any,
        optimizer_lr: float | None,
        version: str,
    ) -> Any:
        given = {
            "warmup_min_lr": scheduler_params_warmup_min_lr, "warmup_max_lr": scheduler_params_warmup_max_lr,
            "warmup_num_steps": scheduler_params_warmup_num_steps, "warmup_type": scheduler_params_warmup_type,
            "total_num_steps": scheduler_params_total_num_steps, "warmup_min_ratio": scheduler_params_warmup_min_ratio,
            "cos_min_ratio": scheduler_params_cos_min_ratio, "T_max": scheduler_params_T_max,
            "eta_min": scheduler_params_eta_min, "start_factor": scheduler_params_start_factor,
            "end_factor": scheduler_params_end_factor, "total_iters": scheduler_params_total_iters,
        }  # fmt: skip
        given = {k: v for k, v in given.items() if v is not None}
        if scheduler_type is None:
            if given:
                return Extension("scheduler params without a scheduler type: DeepSpeed builds no scheduler")
            # no scheduler: DeepSpeed keeps the optimizer's lr (a client scheduler may replace it)
            return {"decay_style": "constant", "warmup_steps": 0.0} if optimizer_lr is not None else {}
        if scheduler_type in _DS_CYCLIC:
            return Extension(f"DeepSpeed's {scheduler_type} schedule (cyclic lr) has no canonical form")
        if scheduler_type in _TORCH_SCHEDULERS:
            return Extension(f"torch.optim.lr_scheduler.{scheduler_type} has no canonical form")
        if scheduler_type not in _SCHEDULERS:
            known = ", ".join([*_SCHEDULERS, *_DS_CYCLIC])
            raise ValueError(f"DeepSpeed does not recognize LR scheduler {scheduler_type!r}: {known} or a torch.optim.lr_scheduler class")
        spec = _SCHEDULERS[scheduler_type]
        foreign = sorted(set(given) - set(spec))
        if foreign:
            raise ValueError(f"{scheduler_type} takes no {', '.join(foreign)} (DeepSpeed fails with an unexpected keyword)")
        p = {**spec, **given}
        for name, value in p.items():
            if value is _REQUIRED:
                raise ValueError(f"{scheduler_type} needs {name}")
        if "warmup_num_steps" not in spec:
            return _read_torch_schedule(scheduler_type, p, optimizer_lr)
        steps = p["warmup_num_steps"]
        if isinstance(steps, bool) or not isinstance(steps, int) or steps <= 0:
            raise ValueError(f"warmup_num_steps must be a positive integer, got {steps!r}")
        warm = max(2, steps)  # what DeepSpeed runs
        out: dict[str, Any] = {"warmup_steps": float(steps), "lag_steps": 1}  # one step late (see above)
        if steps < 2:
            out["warmup_steps"] = Approx(float(steps), f"DeepSpeed warms up over {warm} steps, not {steps}")
        kind = p["warmup_type"]
        if kind in ("log", "linear"):
            out["warmup_type"] = kind
        else:
            out["warmup_type"] = Approx("log", f"unknown warmup_type {kind!r}: DeepSpeed falls back to log")
        if scheduler_type == "WarmupCosineLR":
            if optimizer_lr is None:
                return out  # the ratios apply to the lr of an optimizer this file does not hold
            out.update(lr=optimizer_lr, decay_style="cosine", decay_steps=int(p["total_num_steps"]),
                       min_lr=float(p["cos_min_ratio"]) * optimizer_lr,
                       warmup_start_lr=float(p["warmup_min_ratio"]) * optimizer_lr)  # fmt: skip
            return out
        peak = p["warmup_max_lr"]
        if peak is None:  # WarmupLR: the optimizer's lr since 0.17.2, 0.001 before
            peak = 0.001 if version in _OLD_WARMUP_MAX else optimizer_lr
        floor = float(p["warmup_min_lr"])
        if peak is not None:
            out["lr"] = float(peak)
        out["warmup_start_lr"] = floor
        if scheduler_type == "WarmupLR":
            out["decay_style"] = "constant"
            return out
        out.update(decay_style="linear", min_lr=floor)
        out["decay_steps"] = _linear_zero_crossing(warm, int(p["total_num_steps"]), peak, floor)
        return out

    @staticmethod
    def write(
        lr: float | None,
        decay_style: str | None,
        warmup_steps: float | None,
        decay_steps: int | None,
        min_lr: float | None,
        warmup_type: str | None,
        warmup_start_lr: float | None,
        lag_steps: int | None,
        steps: int | None,
    ) -> Any:
        if lr is None:
            return {}
        style = decay_style or "constant"
        start = warmup_start_lr or 0.0
        floor = min_lr or 0.0
        lossy: list[tuple[str, tuple[str, ...]]] = []  # (why, the fields it concerns)
        warm = warmup_steps or 0.0
        warm_i = int(round(warm))
        if warm_i != warm:
            lossy.append((f"warmup of {warm:g} steps rounded to {warm_i}", ("schedule.warmup_steps",)))
        end = decay_steps if decay_steps is not None else steps
        out: dict[str, Any] = {}
        if style == "constant" and warm_i == 0:
            return {}  # no scheduler: DeepSpeed keeps the optimizer's lr
        if warm_i == 0 and end is None:
            return Approx({}, f"a {style} decay without a decay length (no step count): no scheduler written, the lr "
                              "stays constant", ("schedule.decay_style", "schedule.min_lr", "schedule.lag_steps"))  # fmt: skip
        if warm_i == 0 and end is not None and style == "cosine":
            out.update(scheduler_type="CosineAnnealingLR", scheduler_params_T_max=end, scheduler_params_eta_min=floor)
        elif warm_i == 0 and end is not None and style == "linear":
            ratio = min(floor, lr) / lr if lr else 0.0
            out.update(scheduler_type="LinearLR", scheduler_params_start_factor=1.0, scheduler_params_end_factor=ratio,
                       scheduler_params_total_iters=_whole(end * (1.0 - ratio), "the step the decay reaches min_lr"))  # fmt: skip
        else:
            if warm_i == 1:
                lossy.append(("DeepSpeed warms up over at least 2 steps, not 1", ("schedule.warmup_steps",)))
            out.update(scheduler_params_warmup_num_steps=max(1, warm_i),
                       scheduler_params_warmup_type="linear" if warmup_type in (None, "linear_clamped") else warmup_type)  # fmt: skip
            if warmup_type == "linear_clamped":
                lossy.append((clamped_warmup_loss(start, lr, warm), ("schedule.warmup_type",)))
            if style in ("constant", "exponential") or end is None:
                if style != "constant":
                    what = "exponential decay" if style == "exponential" else f"{style} decay without a decay length"
                    lossy.append((f"DeepSpeed has no {what}: the lr stays at the peak after warmup",
                                  ("schedule.decay_style", "schedule.decay_steps", "schedule.min_lr")))  # fmt: skip
                out.update(scheduler_type="WarmupLR", scheduler_params_warmup_min_lr=start, scheduler_params_warmup_max_lr=lr)
            elif style == "linear":
                total: Any = end
                if 0 < floor < lr:  # the canonical line heads for 0 at `end`; DeepSpeed's ends at the floor
                    total = _whole(warm_i + (end - warm_i) * (1.0 - floor / lr), "the step the decay reaches min_lr")
                if start != floor:
                    lossy.append((f"DeepSpeed's WarmupDecayLR starts its warmup at warmup_min_lr {floor:g}, not {start:g}",
                                  ("schedule.warmup_start_lr",)))  # fmt: skip
                out.update(scheduler_type="WarmupDecayLR", scheduler_params_warmup_min_lr=floor,
                           scheduler_params_warmup_max_lr=lr, scheduler_params_total_num_steps=total)  # fmt: skip
            elif style == "cosine":
                out.update(scheduler_type="WarmupCosineLR", scheduler_params_total_num_steps=end,
                           scheduler_params_warmup_min_ratio=start / lr if lr else 0.0,
                           scheduler_params_cos_min_ratio=floor / lr if lr else 0.0)  # fmt: skip
            else:
                raise Unexpressible(f"DeepSpeed has no {style} schedule")
            if lag_steps != 1:
                lossy.append((lag_loss(None, lr, warm, out["scheduler_type"]), ("schedule.lag_steps",)))
        if lag_steps and out["scheduler_type"] in _TORCH_SCHEDULERS | {"CosineAnnealingLR", "LinearLR"}:
            lossy.append((lag_loss(lag_steps, lr, warm), ("schedule.lag_steps",)))
        kind = out.pop("scheduler_type")
        return {"scheduler_type": approx_of(kind, lossy), **out}  # type first


@formula("deepspeed_precision")
class DeepspeedPrecision:
    """fp16 / bf16 (old name: bfloat16) / apex amp / torch_autocast blocks <-> the compute dtype.

    DeepSpeed refuses fp16 and bf16 together. DeeperSpeed (NeoX's fork) also reads fp16.type:
    "bfloat16" there means bf16 training (the Pythia configs).
    """

    @staticmethod
    def read(
        fp16_enabled: Any,
        fp16_type: Any,
        bf16_enabled: Any,
        bfloat16_enabled: Any,
        amp_enabled: Any,
        torch_autocast_enabled: Any,
        torch_autocast_dtype: Any,
    ) -> Any:
        bf16 = bf16_enabled if bf16_enabled is not None else bfloat16_enabled
        if fp16_enabled and bf16:
            raise ValueError("fp16 and bf16 are both enabled; DeepSpeed refuses that (bfloat16 and fp16 modes cannot be simultaneously enabled)")
        if fp16_enabled:
            if str(fp16_type).lower() in ("bfloat16", "bf16"):
                return Approx("bf16", "fp16.type bfloat16 is DeeperSpeed's bf16 (DeepSpeed proper has no fp16.type): read as bf16")
            return "fp16"
        if bf16:
            return "bf16"
        if amp_enabled:
            return Approx("fp16", "apex AMP: fp16 mixed precision with apex's own casting and loss scaler, not DeepSpeed's "
                          "fp16 mode (DeepSpeed 0.19.8 refuses the amp block: use fp16, bf16 or torch_autocast)")
        if torch_autocast_enabled:
            # no dtype: torch.autocast's device default, float16 on CUDA
            dtype = str(torch_autocast_dtype or "float16").replace("torch.", "").lower()
            name = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "half": "fp16"}.get(dtype)
            if name is None:
                raise ValueError(f"torch_autocast.dtype {torch_autocast_dtype!r} is not fp16 or bf16")
            return Approx(name, "torch.autocast mixed precision (only the listed module types run in lower precision)")
        return "fp32"

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        if value == "fp16":
            return {"fp16_enabled": True}
        if value == "bf16":
            return {"bf16_enabled": True}
        if value == "cbf16":
            return {"bf16_enabled": Approx(True, "cbfloat16 is Cerebras-only; bf16 is the closest DeepSpeed mode")}
        return {"fp16_enabled": False}


@formula("deepspeed_zero_stage")
class DeepspeedZeroStage:
    """zero_optimization.stage 0-3; a list of stages or "all" is the autotuner's search space."""

    @staticmethod
    def read(zero_optimization_stage: Any) -> Any:
        stage = zero_optimization_stage
        if isinstance(stage, list) or stage == "all":
            return Extension("a search space for DeepSpeed's autotuner, which picks the ZeRO stage at run time")
        if isinstance(stage, bool) or not isinstance(stage, int) or not 0 <= stage <= 3:
            raise ValueError(f"zero_optimization.stage must be 0, 1, 2 or 3, got {stage!r}")
        return stage

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"zero_optimization_stage": value}


# Cerebras Model Zoo registry names (release 2.10, registry.yaml) of decoder language models: the
# GPT-2 backbone ones and the GPT-J backbone ones (CEREBRAS_PARALLEL_MODELS).
CEREBRAS_DECODERS = frozenset(
    {"gpt2", "gpt3", "gpt_backbone", "llama", "mistral", "mixtral", "btlm", "bloom", "jais", "santacoder",
     "starcoder", "gemma2", "gptj", "gpt-neox", "falcon"}
)  # fmt: skip
_CEREBRAS_ALIASES = {"llamamodel": "llama"}  # deprecated registry aliases


@formula("cerebras_model_name")
class CerebrasModelName:
    """trainer.init.model.name <-> model family. Names the catalogue has are the family; other
    decoder names (gpt3, falcon, btlm, ...) get the family of their block structure; the writer
    writes the family (the name is required from Model Zoo 2.4 on)."""

    @staticmethod
    def read(
        model_name: Any,
        parallel_residual: bool | None,
        parallel_shared_norm: bool | None,
        norm: str | None,
        activation: str | None,
    ) -> Any:
        structural = DecoderFamily.read(parallel_residual, parallel_shared_norm, norm, activation)
        if model_name is None:
            return structural
        name = _CEREBRAS_ALIASES.get(str(model_name).lower(), str(model_name).lower())
        if name in ("gpt2", "gptj", "gpt-neox", "llama", "mistral"):
            return name
        if name in CEREBRAS_DECODERS:
            return structural
        return Extension(f"{model_name} is not a decoder language model: no other framework has its architecture")

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        return {"model_name": value}


@formula("cerebras_norm")
class CerebrasNorm:
    """Cerebras norm_type (layers/norms.py) <-> norm kind plus whether it has a bias."""

    NAMES = {"layernorm": "layernorm", "rmsnorm": "rmsnorm", "nonparametric-layernorm": "non_parametric_layernorm"}

    @staticmethod
    def read(model_norm_type: Any) -> Any:
        if model_norm_type is None:
            return {}
        name = str(model_norm_type).lower()
        if name == "biasless-layernorm":
            return {"norm": "layernorm", "norm_bias": False}
        if name in CerebrasNorm.NAMES:  # torch.nn.LayerNorm has a learned bias; RMSNorm, no parameters: none
            return {"norm": CerebrasNorm.NAMES[name], "norm_bias": name == "layernorm"}
        return Extension(f"norm_type {model_norm_type!r} has no counterpart outside Cerebras")

    @staticmethod
    def write(norm: str | None, norm_bias: bool | None) -> Any:
        if norm == "layernorm" and norm_bias is False:
            return {"model_norm_type": "biasless-layernorm"}
        names = {v: k for k, v in CerebrasNorm.NAMES.items()}
        if norm not in names:
            raise Unexpressible(f"Cerebras has no {norm} norm_type")
        if norm != "layernorm" and norm_bias:
            return Approx({"model_norm_type": names[norm]}, f"Cerebras' {names[norm]} has no bias", ("model.norm_bias",))
        return {"model_norm_type": names[norm]}


# --------------------------------------------------------------------------------------------
# VeOmni (ByteDance-Seed/VeOmni d9774494: veomni/arguments/arguments_types.py, optim/lr_scheduler.py,
# optim/optimizer.py, trainer/base.py, distributed/torch_parallelize.py; the flat layout at ac3b9f01)

VEOMNI_DYN_BSZ = (
    "VeOmni's dyn_bsz packs variable-length samples into micro-batches of up to micro_batch_size x "
    "max_seq_len tokens, so its batch sizes are token budgets in units of max_seq_len: the same as that "
    "many samples only when every sample is max_seq_len long (packed pretraining data)"
)
VEOMNI_LINEAR_FLOOR = 1e-7  # get_linear_schedule_with_warmup is called without lr_min: its default floor
VEOMNI_MAX_SEQ_LEN = 2048  # DataArguments.max_seq_len's default (mappings/veomni.yaml)


def _dyn_bsz(value: Any, packed: bool | None, writing: bool) -> Any:
    """Batch sizes are token budgets when dyn_bsz is on (VeOmni's default)."""
    if value is None or packed is False or (writing and packed is True):
        return value
    return Approx(value, VEOMNI_DYN_BSZ + ("; the source counted samples" if writing else ""))


@formula("veomni_micro_batch")
class VeomniMicroBatch:
    """train.micro_batch_size: samples per micro-batch, or (dyn_bsz) a budget of that many x max_seq_len tokens."""

    @staticmethod
    def read(train_micro_batch_size: int | None, packed: bool | None) -> Any:
        return _dyn_bsz(train_micro_batch_size, packed, writing=False)

    @staticmethod
    def write(value: int, packed: bool | None) -> dict[str, Any]:
        return {"train_micro_batch_size": _dyn_bsz(value, packed, writing=True)}


@formula("veomni_global_batch")
class VeomniGlobalBatch:
    """global_batch_size, else micro_batch_size x dp (TrainingArguments._derive_batch_config)."""

    @staticmethod
    def read(train_global_batch_size: int | None, micro: int | None, data_parallel_size: int | None, packed: bool | None) -> Any:
        value = train_global_batch_size
        if value is None and micro and data_parallel_size:
            value = micro * data_parallel_size
        return _dyn_bsz(value, packed, writing=False)

    @staticmethod
    def write(value: int, packed: bool | None) -> dict[str, Any]:
        return {"train_global_batch_size": _dyn_bsz(value, packed, writing=True)}


@formula("veomni_grad_accum")
class VeomniGradAccum:
    """VeOmni derives gradient accumulation: global_batch_size / (micro_batch_size x dp), which must divide."""

    @staticmethod
    def read(global_batch: int | None, micro: int | None, data_parallel_size: int | None) -> int | None:
        if not (global_batch and micro and data_parallel_size):
            return None
        step = micro * data_parallel_size
        if global_batch % step:
            raise ValueError(f"global_batch_size {global_batch} is not a multiple of micro_batch_size x "
                             f"data-parallel size = {step}: VeOmni refuses it")  # fmt: skip
        return global_batch // step

    @staticmethod
    def write(value: int, global_batch: int | None, micro: int | None, data_parallel_size: int | None) -> Any:
        if not (global_batch and micro and data_parallel_size):
            unknown = [n for n, v in (("global batch", global_batch), ("micro batch", micro),
                                      ("data-parallel size (--world-size)", data_parallel_size)) if not v]  # fmt: skip
            return Approx({}, f"VeOmni derives the accumulation from global / (micro x data-parallel size); the "
                              f"{', '.join(unknown)} is not known here")  # fmt: skip
        return {}


@formula("veomni_data_parallel")
class VeomniDataParallel:
    """dp = WORLD_SIZE / (ulysses_size x tp x pp x cp); tp, pp and cp are 1 at HEAD."""

    @staticmethod
    def read(world_size: int | None, sequence_size: int | None) -> int | None:
        if world_size is None:
            return None
        sp = sequence_size or 1
        if world_size % sp:
            raise ValueError(f"world size {world_size} is not a multiple of ulysses_size {sp}")
        return world_size // sp

    @staticmethod
    def write(value: int, world_size: int | None, sequence_size: int | None) -> dict[str, Any]:
        return {}


@formula("veomni_model_parallel")
class VeomniModelParallel:
    """tp_size / pp_size / cp_size: TrainingArguments asserts tp == pp == 1 (and cp == 1 at HEAD)."""

    @staticmethod
    def read(train_accelerator_tp_size: int | None, train_accelerator_pp_size: int | None,
             train_accelerator_cp_size: int | None) -> dict[str, Any]:  # fmt: skip
        for name, size in (("tp_size", train_accelerator_tp_size), ("pp_size", train_accelerator_pp_size),
                           ("cp_size", train_accelerator_cp_size)):  # fmt: skip
            if size is not None and size != 1:
                raise ValueError(f"{name} {size}: VeOmni asserts it is 1 (not supported yet); this config cannot run")
        return {"tensor_size": 1, "pipeline_size": 1}  # the defaults, and the only values VeOmni runs

    @staticmethod
    def write(tensor_size: int | None, pipeline_size: int | None) -> dict[str, Any]:
        if (tensor_size or 1) > 1 or (pipeline_size or 1) > 1:
            raise Unexpressible(
                f"VeOmni has no tensor or pipeline parallelism (tp_size = pp_size = 1 at HEAD): run the "
                f"tensor {tensor_size or 1} x pipeline {pipeline_size or 1} ranks data-parallel; the global batch carries over"
            )
        return {}


@formula("veomni_zero_stage")
class VeomniZeroStage:
    """fsdp_mode (flat: data_parallel_mode) <-> ZeRO stage.

    ddp = 0; FSDP1 (flat only) FULL_SHARD = 3, else NO_SHARD = 0 (parallelize_model_fsdp1); FSDP2
    reshards parameters after forward = 3, keeps them gathered until backward = 2. FSDP2 requires
    init_device meta and DDP cuda/npu (build_parallelize_model), so the device is written with it.
    """

    @staticmethod
    def read(
        train_accelerator_fsdp_config_fsdp_mode: str | None,
        train_accelerator_fsdp_config_reshard_after_forward: bool | None,
        train_enable_full_shard: bool | None,
        train_init_device: str | None,
    ) -> Any:
        mode = train_accelerator_fsdp_config_fsdp_mode
        if mode == "ddp":
            return 0
        if mode == "fsdp1":
            return 3 if train_enable_full_shard is not False else 0
        if mode == "fsdp2":
            return 3 if train_accelerator_fsdp_config_reshard_after_forward is not False else 2
        raise ValueError(f"unknown data-parallel mode {mode!r}; expected ddp, fsdp1 (flat layout) or fsdp2")

    @staticmethod
    def write(value: int) -> Any:
        if value == 0:
            return {"train_accelerator_fsdp_config_fsdp_mode": "ddp", "train_init_device": "cuda"}
        out: dict[str, Any] = {"train_accelerator_fsdp_config_fsdp_mode": "fsdp2", "train_init_device": "meta"}
        if value <= 2:
            out["train_accelerator_fsdp_config_reshard_after_forward"] = False
        if value == 1:
            return Approx(out, "ZeRO-1 shards only the optimizer states; FSDP2 shards parameters and gradients too "
                               "(reshard_after_forward false keeps them gathered like ZeRO-2)")  # fmt: skip
        return out


VEOMNI_PARAM_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
VEOMNI_PURE_BF16 = (
    "mixed precision off: VeOmni loads the model in bf16 (trainer/base.py) and keeps the weights, gradients "
    "and AdamW states in bf16, with no fp32 master copy"
)
VEOMNI_NO_LOSS_SCALER = "VeOmni has no loss scaler: fp16 trains without loss scaling"


@formula("veomni_precision")
class VeomniPrecision:
    """fsdp_config.mixed_precision.{enable, param_dtype}: fp32 master weights computing in param_dtype."""

    @staticmethod
    def read(train_accelerator_fsdp_config_mixed_precision_enable: bool | None,
             train_accelerator_fsdp_config_mixed_precision_param_dtype: str | None) -> Any:  # fmt: skip
        if train_accelerator_fsdp_config_mixed_precision_enable is False:
            return Approx("bf16", VEOMNI_PURE_BF16)
        dtype = train_accelerator_fsdp_config_mixed_precision_param_dtype or "bfloat16"
        if dtype not in VEOMNI_PARAM_DTYPES:
            raise ValueError(f"param_dtype {dtype!r}: VeOmni accepts bfloat16, float16 or float32")
        return VEOMNI_PARAM_DTYPES[dtype]

    @staticmethod
    def write(value: str) -> Any:
        names = {v: k for k, v in VEOMNI_PARAM_DTYPES.items()}
        out = {"train_accelerator_fsdp_config_mixed_precision_enable": True,
               "train_accelerator_fsdp_config_mixed_precision_param_dtype": names.get(value, "bfloat16")}  # fmt: skip
        if value == "cbf16":
            return Approx(out, "Cerebras cbfloat16 has no GPU counterpart; wrote bf16")
        if value == "fp16":
            return Approx(out, VEOMNI_NO_LOSS_SCALER)
        return out


@formula("veomni_precision_flat")
class VeomniPrecisionFlat:
    """Flat layout: enable_mixed_precision only; the compute dtype is bf16 (MixedPrecision param_dtype)."""

    @staticmethod
    def read(train_accelerator_fsdp_config_mixed_precision_enable: bool | None) -> Any:
        if train_accelerator_fsdp_config_mixed_precision_enable is False:
            return Approx("bf16", VEOMNI_PURE_BF16)
        return "bf16"

    @staticmethod
    def write(value: str) -> Any:
        out = {"train_accelerator_fsdp_config_mixed_precision_enable": True}
        if value != "bf16":
            return Approx(out, f"the flat layout (before PR #538) always computes in bf16: {value} is not expressible")
        return out


@formula("veomni_grad_clip")
class VeomniGradClip:
    """max_grad_norm: clip_grad_norm_ always runs, so "no clipping" is an infinite norm (.inf), not 0."""

    @staticmethod
    def read(train_optimizer_max_grad_norm: float | None) -> Any:
        if train_optimizer_max_grad_norm is None:
            return None
        norm = float(train_optimizer_max_grad_norm)
        if math.isinf(norm) and norm > 0:
            return 0.0
        if norm == 0:
            return Approx(0.0, "max_grad_norm 0 makes VeOmni's clip_grad_norm_ scale every gradient to zero; read as no clipping")
        return norm

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        return {"train_optimizer_max_grad_norm": math.inf if value == 0 else value}


VEOMNI_ADAMW = "veomni/optim/optimizer.py::build_optimizer hard-codes AdamW betas (0.9, 0.95) and eps 1e-8"


@formula("veomni_betas")
class VeomniBetas:
    @staticmethod
    def read() -> list[float]:
        return [0.9, 0.95]

    @staticmethod
    def write(value: list[float]) -> Any:
        if len(value) == 2 and all(is_close(a, b) for a, b in zip(value, [0.9, 0.95])):
            return {}
        return Approx({}, f"{VEOMNI_ADAMW}: betas {list(value)} cannot be set")


@formula("veomni_eps")
class VeomniEps:
    @staticmethod
    def read() -> float:
        return 1e-8

    @staticmethod
    def write(value: float) -> Any:
        if is_close(value, 1e-8):
            return {}
        return Approx({}, f"{VEOMNI_ADAMW}: eps {value:g} cannot be set")


@formula("veomni_optimizer")
class VeomniOptimizer:
    """train.optimizer.type (flat: train.optimizer): adamw (torch AdamW), anyprecision_adamw, muon."""

    @staticmethod
    def read(train_optimizer_type: str | None) -> Any:
        if train_optimizer_type is None or train_optimizer_type in ("adamw", "muon"):
            return train_optimizer_type
        if train_optimizer_type == "anyprecision_adamw":
            return Approx("adamw", "AnyPrecisionAdamW (bf16 states, Kahan-compensated updates) is read as AdamW")
        raise ValueError(f"unknown optimizer {train_optimizer_type!r}; VeOmni has adamw, anyprecision_adamw and muon")

    @staticmethod
    def write(value: str) -> dict[str, Any]:
        if value in ("adamw", "muon"):
            return {"train_optimizer_type": value}
        raise Unexpressible(f"VeOmni has adamw, anyprecision_adamw and muon only: {value} is not expressible")


def veomni_ratio(count: float, total: int) -> float:
    """The shortest ratio r with int(total * r) == count (VeOmni multiplies and truncates)."""
    target = int(count)
    for digits in range(1, 18):
        ratio = round(target / total, digits)
        if int(total * ratio) == target:
            return ratio
    ratio = target / total
    while int(total * ratio) < target:
        ratio = math.nextafter(ratio, math.inf)
    return ratio


@formula("veomni_schedule")
class VeomniSchedule:
    """lr_warmup_ratio / lr_decay_ratio <-> warmup and decay steps (build_lr_scheduler).

    S = steps; warmup W = int(S x lr_warmup_ratio). cosine decays to lr_min at D = int(S x
    lr_decay_ratio) and holds it; linear always reaches its floor at S (lr_decay_ratio is not passed);
    constant has no decay.
    """

    @staticmethod
    def read(train_optimizer_lr_warmup_ratio: float | None, train_optimizer_lr_decay_ratio: float | None,
             steps: int | None, decay_style: str | None) -> Any:  # fmt: skip
        warmup_ratio = float(train_optimizer_lr_warmup_ratio or 0.0)
        if steps is None:  # ratios of an unknown step count; no warmup is no warmup whatever the count
            return {} if warmup_ratio else {"warmup_steps": 0.0}
        decay_ratio = 1.0 if train_optimizer_lr_decay_ratio is None else float(train_optimizer_lr_decay_ratio)
        out: dict[str, Any] = {"warmup_steps": float(int(steps * warmup_ratio))}
        if decay_style == "cosine":
            out["decay_steps"] = int(steps * decay_ratio)
        elif decay_style == "linear":  # constant has no decay to end
            out["decay_steps"] = steps
            if decay_ratio != 1.0:
                out["decay_steps"] = Approx(steps, f"lr_decay_ratio {decay_ratio} has no effect: VeOmni uses it for cosine only")
        return out

    @staticmethod
    def write(warmup_steps: float | None, decay_steps: int | None, steps: int | None, decay_style: str | None) -> Any:
        if not steps:
            raise Unexpressible("VeOmni gives warmup and decay as ratios of the total steps: give --set train.steps=N")
        out: dict[str, Any] = {}
        notes: list[str] = []
        if warmup_steps is not None:
            whole = int(round(warmup_steps))
            if whole != warmup_steps:
                notes.append(f"warmup of {warmup_steps:g} steps rounded to {whole}")
            out["train_optimizer_lr_warmup_ratio"] = veomni_ratio(whole, steps) if whole else 0.0
        if decay_style == "cosine" and decay_steps is not None:
            out["train_optimizer_lr_decay_ratio"] = veomni_ratio(decay_steps, steps)
        elif decay_style == "linear" and decay_steps is not None and decay_steps != steps:
            notes.append(f"VeOmni's linear schedule always reaches its floor at the last step ({steps}), "
                         f"not at step {decay_steps} (lr_decay_ratio is used for cosine only)")  # fmt: skip
        return Approx(out, "; ".join(notes)) if notes else out


@formula("veomni_min_lr")
class VeomniMinLr:
    """lr_min: the floor of cosine; linear ignores it (its floor is 1e-7); constant has none."""

    @staticmethod
    def read(train_optimizer_lr_min: float | None, decay_style: str | None) -> Any:
        floor = 1e-7 if train_optimizer_lr_min is None else float(train_optimizer_lr_min)
        if decay_style == "linear":
            if not is_close(floor, VEOMNI_LINEAR_FLOOR):
                return Approx(VEOMNI_LINEAR_FLOOR, f"lr_min {floor:g} is ignored by VeOmni's linear schedule (floor 1e-7)")
            return VEOMNI_LINEAR_FLOOR
        if decay_style in (None, "constant"):
            return Extension(f"lr_min {floor:g} has no effect: the lr is constant after the warmup (lr_decay_style constant)")
        return floor

    @staticmethod
    def write(value: float, decay_style: str | None) -> Any:
        if decay_style == "cosine":
            return {"train_optimizer_lr_min": value}
        if decay_style == "linear" and not is_close(value, VEOMNI_LINEAR_FLOOR):
            return Approx({}, f"VeOmni's linear schedule ignores lr_min: its floor is 1e-7, not {value:g}")
        return {}


def veomni_tokens_for(steps: int, batch_tokens: int, warmup_ratio: float) -> int:
    """The roundest data.train_size (tokens) for which VeOmni computes exactly `steps` per epoch:
    ceil(int(T * (1 + bsz_warmup_ratio / 2)) / (global_batch_size * max_seq_len)) == steps."""
    factor = 1 + warmup_ratio / 2

    def count(tokens: int) -> int:
        return math.ceil(int(tokens * factor) / batch_tokens)

    hi = int(steps * batch_tokens / factor) + 2
    while count(hi) > steps:
        hi -= 1
    lo = hi
    step = 1
    while lo - step >= 0 and count(lo - step) == steps:  # walk down to the lowest T that still gives `steps`
        lo -= step
        step *= 2
    while step > 1:
        step //= 2
        if lo - step >= 0 and count(lo - step) == steps:
            lo -= step
    for power in range(len(str(hi)), -1, -1):
        unit = 10**power
        candidate = hi // unit * unit
        if candidate >= lo and count(candidate) == steps:
            return candidate
    return hi


@formula("veomni_train_steps")
class VeomniTrainSteps:
    """Total optimizer steps (VeOmniArguments.compute_train_steps x num_train_epochs).

    dyn_bsz: per epoch ceil(int(train_size x (1 + bsz_warmup_ratio / 2)) / (global_batch_size x
    max_seq_len)), train_size counting tokens; without dyn_bsz an iterable dataset gives
    ceil(train_sample / (global_batch_size / dp)) and a mapping dataset its length (not in the
    config). max_steps caps the steps per epoch.
    """

    @staticmethod
    def read(
        data_train_size: int | None,
        train_max_steps: int | None,
        data_train_sample: int | None,
        data_datasets_type: str | None,
        global_batch: int | None,
        seq_length: int | None,
        warmup_ratio: float | None,
        epochs: int | None,
        packed: bool | None,
        data_parallel_size: int | None,
    ) -> int | None:
        if not global_batch:
            return None
        if packed is False:
            if (data_datasets_type or "mapping") != "iterable" or not data_parallel_size:
                return None  # the dataset length (or the world size) decides
            per_epoch = math.ceil((data_train_sample or 10_000) / (global_batch // data_parallel_size))
        else:
            if not seq_length:
                return None
            tokens = 10_000_000 if data_train_size is None else data_train_size
            per_epoch = math.ceil(int(tokens * (1 + (warmup_ratio or 0.0) / 2)) / (global_batch * seq_length))
        if train_max_steps is not None and per_epoch >= train_max_steps:
            per_epoch = train_max_steps
        return per_epoch * (epochs or 1)

    @staticmethod
    def write(value: int, global_batch: int | None, seq_length: int | None, warmup_ratio: float | None,
              epochs: int | None, packed: bool | None) -> Any:  # fmt: skip
        if not global_batch:
            raise Unexpressible("VeOmni counts steps from data.train_size tokens / (global_batch_size x max_seq_len): "
                                "give the global batch")  # fmt: skip
        # without a sequence length (reported missing) the output runs with VeOmni's default max_seq_len:
        # train_size is sized for that, so VeOmni's own step count is still the source's
        per_epoch, rest = divmod(value, epochs or 1)
        tokens = veomni_tokens_for(per_epoch, global_batch * (seq_length or VEOMNI_MAX_SEQ_LEN), warmup_ratio or 0.0)
        out = {"data_train_size": tokens}
        if rest:
            return Approx(out, f"{value} steps are not a whole number of steps per epoch over {epochs} epochs")
        if packed is False:
            return Approx(out, "without dyn_bsz VeOmni counts steps from the dataset, not from train_size")
        return out


@formula("veomni_save_steps")
class VeomniSaveSteps:
    """save_steps / eval_steps: 0 turns it off."""

    @staticmethod
    def read(train_checkpoint_save_steps: int | None) -> int | None:
        return train_checkpoint_save_steps or None

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"train_checkpoint_save_steps": value}


@formula("veomni_eval_steps")
class VeomniEvalSteps:
    """eval_steps: 0 turns it off."""

    @staticmethod
    def read(train_eval_steps: int | None) -> int | None:
        return train_eval_steps or None

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"train_eval_steps": value}


# --------------------------------------------------------------------------------------------
# HuggingFace config.json (VeOmni's architecture file): one formula per canonical field, built from
# the per-model_type tables in mappings/hf.yaml (loaded by translator/formats/hf_config.py). Keys are
# `hf.<config.json key>`, every spelling of the field; the written model_type follows model.family
# and model.position_embedding (hf.yaml `choose`).

from .formats.hf import model_types as _hf  # (data only: it imports nothing from here)

HF_NO_FAMILY = "no decoder family (model.family) to choose an HF model_type from: no config.json is written"


def _resolve(fixed: Any, kw: dict[str, Any]) -> Any:
    """`=model.num_heads` in hf.yaml: the value of another canonical field."""
    if isinstance(fixed, str) and fixed.startswith("="):
        return kw.get(field_ident(fixed[1:]))
    return fixed


def _head_dim(kw: dict[str, Any]) -> int | None:
    hidden, heads = kw.get("hidden_size"), kw.get("num_heads")
    return hidden // heads if hidden and heads else None


def _read_value(name: str, mt: _hf.ModelType, raw: Any, kw: dict[str, Any]) -> Any:
    if name == "model.activation":
        for canonical, names in mt.activations.items():
            if raw in names:
                return canonical
        return Approx(None, f"HF {mt.name} activation {raw!r} has no canonical name")
    if name == "model.rotary_fraction" and mt.keys.get(name) == "rotary_dim":
        head = _head_dim(kw)
        if raw is None:
            return 1.0  # GPTJ rotates the whole head when rotary_dim is null
        if not head:
            return None
        if raw > head:  # GPTJAttention slices [..., :rotary_dim]: the whole head at most
            return Approx(1.0, f"rotary_dim {raw} is larger than head_dim {head}: read as the whole head")
        return raw / head
    if name == "model.ffn_hidden_size" and raw is None:
        hidden = kw.get("hidden_size")
        return _hf.FFN_DEFAULT_MULTIPLE * hidden if hidden else None
    if name == "model.num_kv_heads" and raw is None:
        return kw.get("num_heads")
    if name == "model.attention_kind":
        return "dense" if raw is None else f"sliding_window_{raw}"
    if name == "model.rotary_base" and raw is not None:
        return float(raw)
    return raw


def _write_value(name: str, mt: _hf.ModelType, value: Any, kw: dict[str, Any]) -> Any:
    if name == "model.activation":
        names = mt.activations.get(value)
        if not names:
            gated = "gated (act(gate) x up)" if "swiglu" in mt.activations else "not gated"
            return Approx(None, f"HF {mt.name}'s MLP is {gated}: activation {value!r} is not expressible")
        return names[0]
    if name == "model.rotary_fraction" and mt.keys.get(name) == "rotary_dim":
        head = _head_dim(kw)
        if not head:
            return Approx(None, "rotary_dim needs hidden_size and num_heads")
        exact = head * value
        if int(exact) != exact:
            return Approx(int(exact), f"{value} x head_dim {head} = {exact} truncated to {int(exact)}")
        return int(exact)
    if name == "model.attention_kind":
        if value == "dense":
            return None  # written as null (hf.yaml write_nulls)
        return Approx(None, f"attention pattern {value!r} has no HF {mt.name} counterpart")
    return value


def _reader(name: str, keys: list[str]) -> Callable[..., Any]:
    idents = {k: ident(_hf.PREFIX + k) for k in keys}

    def read(**kw: Any) -> Any:
        mt = _hf.table().types.get(str(kw.get("hf_model_type")))
        if mt is None:
            return None
        own = mt.keys.get(name)
        foreign = [k for k in keys if k != own and k not in _hf.READ_ONLY_KEYS.get(name, ()) and kw.get(idents[k]) is not None]
        if name == "model.parallel_shared_norm" and kw.get("parallel_residual") is False:
            return None  # one norm or two per block only means something in a parallel block
        if name in mt.fixed or name in mt.same_as:
            value = _resolve(mt.fixed[name], kw) if name in mt.fixed else kw.get(field_ident(mt.same_as[name]))
            if foreign:
                return Approx(value, f"HF {mt.name} does not read {', '.join(foreign)}: it hard-wires {name}={value!r}")
            return value
        if own is None:
            return None
        raw = kw.get(idents[own])
        if raw == _hf.EXPLICIT_NULL:
            value = _read_value(name, mt, None, kw)  # null on purpose: not the class default
        else:
            value = _read_value(name, mt, mt.default(own) if raw is None else raw, kw)
        if name == "model.num_heads" and kw.get(idents.get("head_dim", "")) is not None and value:
            head_dim, hidden = kw[idents["head_dim"]], kw.get("hidden_size")
            if hidden and hidden // value != head_dim:
                return Approx(value, f"head_dim {head_dim} is not hidden_size / num_attention_heads = {hidden // value}: "
                                     "the canonical model has no separate head width")  # fmt: skip
        return value

    return read


def _writer(name: str) -> Callable[..., Any]:
    def write(**kw: Any) -> Any:
        value = kw["value"]
        mt = _hf.table().model_type(kw.get("family"), kw.get("position_embedding"))
        if mt is None:
            raise Unexpressible(HF_NO_FAMILY)
        if name in mt.fixed or name in mt.same_as:
            expected = _resolve(mt.fixed[name], kw) if name in mt.fixed else kw.get(field_ident(mt.same_as[name]))
            if expected is None or is_close(value, expected):
                return {}
            what = f"={expected!r}" if name in mt.fixed else f" equal to {mt.same_as[name]} ({expected!r})"
            return Approx({}, f"HF {mt.name} hard-wires {name}{what}: {value!r} is not expressible")
        own = mt.keys.get(name)
        if own is None:
            return {}  # hf.yaml leaves out what does not apply (one norm per branch in a sequential block)
        return {ident(_hf.PREFIX + own): _write_value(name, mt, value, kw)}

    return write


def _signed(func: Callable[..., Any], params: list[str]) -> Callable[..., Any]:
    """Give a generic function the parameter list the mapping-table checks read from it."""
    func.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY) for p in dict.fromkeys(params)]
    )
    return func


def formula_name(name: str) -> str:
    return "hf_" + field_ident(name)


def field_formulas() -> list[Formula]:
    """One formula per canonical architecture field of mappings/hf.yaml."""
    out = []
    hf = _hf.table()
    for name in hf.fields():
        keys = hf.spellings(name)
        extras = [field_ident(f) for f in _hf.EXTRAS.get(name, ())]
        read = _signed(_reader(name, keys), [ident(_hf.PREFIX + k) for k in keys] + ["hf_model_type", *extras])
        write = _signed(_writer(name), ["value", "family", "position_embedding", *extras])
        out.append(Formula(formula_name(name), read, write, parameters(read), parameters(write)))
    return out


@formula("hf_model_type")
class HfModelType:
    """model_type (+ architectures) <-> model.family and the position embedding the class hard-wires."""

    @staticmethod
    def read(hf_model_type: str | None, hf_architectures: Any, hf_use_parallel_residual: Any) -> Any:
        if hf_model_type is None:
            return {}
        mt = _hf.table().types.get(str(hf_model_type))
        if mt is None:
            return Extension(f"HF model_type {hf_model_type!r}: neoconv maps {', '.join(_hf.table().types)}")
        family = mt.family
        if mt.name == "gpt_neox" and hf_use_parallel_residual is False:
            family = "gpt2"  # a sequential GPT-NeoX block is what the other frameworks call GPT-2 style
        return {"family": family, "position_embedding": mt.fixed.get("model.position_embedding")}

    @staticmethod
    def write(family: str | None, position_embedding: str | None) -> Any:
        mt = _hf.table().model_type(family, position_embedding)
        if mt is None:
            raise Unexpressible(HF_NO_FAMILY)
        out = {"hf_model_type": mt.name, "hf_architectures": list(mt.architectures)}
        fixed = mt.fixed.get("model.position_embedding")
        if position_embedding is not None and position_embedding != fixed:
            return Approx(out, f"HF {mt.name} has {fixed} position embeddings: {position_embedding} is not expressible")
        return out


@formula("neox_save")
class NeoxSave:
    """NeoX `save` needs a checkpoint interval (validate_values refuses save without checkpoint_factor)."""

    @staticmethod
    def read(save: str | None) -> str | None:
        return save

    @staticmethod
    def write(value: str, interval: int | None) -> Any:
        if interval is None:
            return Approx({}, f"save: {value} not written: NeoX refuses `save` without checkpoint_factor; "
                              "give --set checkpoint.interval=N")  # fmt: skip
        return {"save": value}


@formula("neox_optimizer_type")
class NeoxOptimizerType:
    """NeoX optimizer.type (a case-insensitive Literal, neox_args.py) <-> canonical optimizer.

    NeoX's "Adam" is FusedAdam with adam_w_mode=True (decoupled weight decay). NeoX has no coupled
    Adam and no AdaFactor/Lamb/...: they become "Adam" so the config loads (NeoX exits without an
    optimizer), reported lossy; coupled Adam without weight decay is the same algorithm.
    """

    NAMES = {"adam": "adamw", "cpu_adam": "adamw", "cpu_torch_adam": "adamw", "onebitadam": "onebitadam", "sgd": "sgd",
             "lion": "lion", "sm3": "sm3", "madgrad_wd": "madgrad_wd"}  # fmt: skip
    WRITE = {"adamw": "Adam", "onebitadam": "onebitadam", "sgd": "sgd", "lion": "lion"}

    @staticmethod
    def read(optimizer_type: str | None) -> Any:
        if optimizer_type is None:
            return None
        name = NeoxOptimizerType.NAMES.get(str(optimizer_type).lower())
        if name is None:
            raise ValueError(f"unknown optimizer type {optimizer_type!r}; NeoX accepts {', '.join(NeoxOptimizerType.NAMES)}")
        if name in ("sm3", "madgrad_wd"):
            return Extension(f"NeoX optimizer {optimizer_type} has no counterpart elsewhere")
        return name

    @staticmethod
    def write(value: str, weight_decay: float | None) -> Any:
        if value in NeoxOptimizerType.WRITE:
            return {"optimizer_type": NeoxOptimizerType.WRITE[value]}
        if value == "adam" and not weight_decay:
            return {"optimizer_type": "Adam"}  # without weight decay Adam and AdamW are one algorithm
        why = ("adds weight decay to the gradient (L2); NeoX's Adam decouples it (AdamW)" if value == "adam"
               else "is not a NeoX optimizer")  # fmt: skip
        return {"optimizer_type": Approx("Adam", f"{value} {why}: wrote NeoX's Adam so the config loads; choose a NeoX optimizer")}


# Warmup conventions. The canonical schedule gives the k-th optimizer step (k = 1, 2, ...) the lr of
# scheduler step t = k - 1, as Cerebras' LinearLR and VeOmni's LambdaLR do (both evaluated at t = 0
# for the first step). GPT-NeoX's AnnealingLR gives warmup steps peak * max(1, t) / W: its first
# step gets peak / W, not the start (warmup_type linear_clamped). DeepSpeed's Warmup* schedulers are
# one step late (lag_steps 1): the engine steps them after each optimizer step, starting from
# last_batch_iteration -1, so step k gets t = k - 2 (the first two steps the warmup start).


def first_step_gap(lr: float | None, warmup_steps: float | None) -> str:
    """The size of a one-step difference during a warmup, for the report: lr / W."""
    if lr is None or not warmup_steps:
        return "one warmup step's increase of the lr"
    return f"lr/W = {lr:g}/{warmup_steps:g} = {lr / warmup_steps:.3g}"


def clamped_warmup_loss(start: float | None, lr: float | None, warmup_steps: float | None) -> str:
    return (f"the source's warmup (GPT-NeoX's) gives its first step {first_step_gap(lr, warmup_steps)}; here the "
            f"first step gets the warmup start {start or 0.0:g} (the other steps agree)")  # fmt: skip


def unclamped_warmup_loss(start: float | None, lr: float | None, warmup_steps: float | None) -> str:
    return (f"GPT-NeoX gives the first warmup step {first_step_gap(lr, warmup_steps)}, not the source's "
            f"warmup start {start or 0.0:g} (lr x max(1, t) / W; the other steps agree)")  # fmt: skip


def lag_loss(lag: int | None, lr: float | None, warmup_steps: float | None, kind: str = "") -> str:
    """Why a schedule run `lag` steps late (or on time) differs from the source's."""
    gap = first_step_gap(lr, warmup_steps)
    if lag:
        return (f"the source's schedule (DeepSpeed's Warmup*) runs {lag} step late: its first two steps get the "
                f"warmup start and its step k the lr of step k-1 here; written as a schedule that starts at the "
                f"first step, every lr comes one step earlier (at most {gap} higher during the warmup)")  # fmt: skip
    return (f"DeepSpeed's {kind or 'warmup scheduler'} runs one step late: its first two steps get the warmup "
            f"start and its step k the lr the source gives step k-1 (at most {gap} lower during the warmup)")  # fmt: skip


def schedule_varies(warmup_steps: float | None, decay_style: str | None) -> bool:
    return bool(warmup_steps) or decay_style not in (None, "constant")


@formula("linear_warmup")
class LinearWarmup:
    """Frameworks whose warmup is linear from its start at t = 0 (VeOmni): no warmup, no type."""

    @staticmethod
    def read(warmup_steps: float | None) -> str | None:
        return "linear" if warmup_steps else None

    @staticmethod
    def write(value: str, warmup_steps: float | None, lr: float | None, warmup_start_lr: float | None) -> Any:
        if value == "linear_clamped":
            return Approx({}, clamped_warmup_loss(warmup_start_lr, lr, warmup_steps), ("schedule.warmup_type",))
        if value != "linear":
            raise Unexpressible(f"a {value} warmup: this framework only warms up linearly")
        return {}


@formula("neox_warmup_type")
class NeoxWarmupType:
    """NeoX's AnnealingLR warms up as peak * max(1, t) / W (learning_rates.py): linear_clamped."""

    @staticmethod
    def read(warmup_steps: float | None) -> str | None:
        return "linear_clamped" if warmup_steps else None

    @staticmethod
    def write(value: str, warmup_steps: float | None, lr: float | None, warmup_start_lr: float | None) -> Any:
        if value == "linear":
            return Approx({}, unclamped_warmup_loss(warmup_start_lr, lr, warmup_steps), ("schedule.warmup_type",))
        if value != "linear_clamped":
            raise Unexpressible(f"a {value} warmup: GPT-NeoX only warms up linearly")
        return {}


@formula("no_lag")
class NoLag:
    """Frameworks whose schedule starts at the first optimizer step (all but DeepSpeed's Warmup*)."""

    @staticmethod
    def read(warmup_steps: float | None, decay_style: str | None) -> int | None:
        return 0 if schedule_varies(warmup_steps, decay_style) else None

    @staticmethod
    def write(value: int, warmup_steps: float | None, decay_style: str | None, lr: float | None) -> Any:
        if value:
            return Approx({}, lag_loss(value, lr, warmup_steps), ("schedule.lag_steps",))
        return {}


@formula("warmup_from_zero")
class WarmupFromZero:
    """NeoX's warmup starts at (about) zero: lr * max(1, n) / warmup_iters."""

    @staticmethod
    def read() -> float:
        return 0.0

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        if value:
            raise Unexpressible(f"a warmup starting at {value:g}: NeoX's warmup starts at lr / warmup_iters")
        return {}
