"""GPT-NeoX formulas (megatron/neox_arguments at EleutherAI/gpt-neox ea7aefd8): the architecture, today's
models, the MLP widths and the batch; the learning rate's is in scheduler.py, which importing this
module registers too (the registry imports the format's `formulas` module).

models: GPT-NeoX formulas for today's models (EleutherAI/gpt-neox ea7aefd8): qk layernorm, the sliding
window, mixture of experts and muP. What NeoX has no key for at all is a `fixed:` rule in
mappings/neox.yaml; here is what it has, with its own meaning.

training: GPT-NeoX formulas: the batch (the lr schedule: scheduler.py; gradient clipping and the precision are
rules of mappings/neox.yaml).

widths: GPT-NeoX's MLP width arithmetic, and the widths with which NeoX cannot build a runnable MLP.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from typing import Any

from ...knowledge.formula import ranks, split, written
from ...knowledge.formula import Absent, Approx, UnknownValue, Unexpressible, Unrunnable, formula
from ...knowledge.formula import GATED_ACTIVATIONS, family_formula
from ..deepspeed.formulas import DEEPSPEED_BATCH_KEYS
from . import scheduler  # noqa: F401  (registers neox.lr_schedule)

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
        if (
            not isinstance(sliding_window_width, int)
            or isinstance(sliding_window_width, bool)
            or sliding_window_width < 0
        ):
            raise ValueError(f"sliding_window_width must be a whole number of tokens, got {sliding_window_width!r}")
        if not _flash_only(attention_config):
            return Approx(
                {},
                "NeoX applies sliding_window_width only with flash attention (attention_config "
                '[[["flash"], num_layers]]): this config attends to the whole context',
            )
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
            return Approx(
                out,
                f"NeoX windows every layer: the pattern of {windowed} windowed and "
                f"{len(attention_layer_types) - windowed} full layers is not expressible",
                ("model.attention_layer_types",),
            )
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
        moe_num_experts: Any,
        moe_top_k: Any,
        intermediate_size: Any,
        hidden_size: int | None,
        activation: str | None,
        ffn_hidden_size: int | None,
    ) -> Any:
        experts = moe_num_experts if moe_num_experts is not None else 1
        if experts <= 1:  # NeoX's default: one expert is the dense MLP, and moe_top_k means nothing
            return Absent(f"moe_num_experts {experts}: a dense MLP in every layer, no experts")
        width = expert_width(intermediate_size, hidden_size)
        out = {
            "moe_num_experts": experts,
            "moe_experts_per_token": moe_top_k if moe_top_k is not None else 1,
            "moe_router_scoring": "sinkhorn",
            "moe_normalize_top_k": False,  # every layer MoE, no aux loss: absent
            "moe_ffn_hidden_size": width if width != ffn_hidden_size else None,
        }
        if activation in GATED_ACTIVATIONS:
            return Approx(
                out,
                f"NeoX's experts are not gated (ParallelGroupedMLP): {activation} runs as its plain activation there",
                ("model.activation",),
            )
        return out

    @staticmethod
    def write(
        moe_num_experts: int | None,
        moe_experts_per_token: int | None,
        moe_ffn_hidden_size: int | None,
        moe_first_dense_layers: int | None,
        moe_layer_interval: int | None,
        moe_router_scoring: str | None,
        moe_normalize_top_k: bool | None,
        moe_aux_loss_coef: float | None,
        activation: str | None,
        ffn_hidden_size: int | None,
    ) -> Any:
        if not moe_num_experts or moe_num_experts <= 1:
            return {}
        out: dict[str, Any] = {"moe_num_experts": moe_num_experts, "moe_top_k": moe_experts_per_token or 1}
        losses: list[tuple[str, tuple[str, ...]]] = []
        first, interval = moe_first_dense_layers or 0, moe_layer_interval or 1
        if interval > 1:
            losses.append(
                (
                    f"every {interval}th layer MoE needs moe_expert_interval (NeoX 2025-05-09+), which "
                    "neoconv does not write yet: every layer is",
                    ("model.moe_layer_interval",),
                )
            )
        if first:
            losses.append(
                (
                    f"NeoX's MoE layers start at layer 0 (every moe_expert_interval-th): the first {first} "
                    "dense layers are not expressible",
                    ("model.moe_first_dense_layers",),
                )
            )
        if moe_router_scoring in ("softmax", "sigmoid"):
            losses.append(
                (
                    f"NeoX routes with sinkhorn (moe_router_type topk, 2025-05-09+, is not written): "
                    f"{moe_router_scoring} scoring is not expressible",
                    ("model.moe_router_scoring",),
                )
            )
        if moe_normalize_top_k:
            losses.append(
                ("NeoX's top-k router does not renormalise the chosen experts' weights", ("model.moe_normalize_top_k",))
            )
        if moe_aux_loss_coef:
            losses.append(
                (
                    "NeoX's MoE has no load-balancing loss (sinkhorn routing balances instead)",
                    ("model.moe_aux_loss_coef",),
                )
            )
        if activation in GATED_ACTIVATIONS:
            losses.append(
                (
                    f"NeoX's experts are not gated (ParallelGroupedMLP): {activation} experts become plain",
                    ("model.activation",),
                )
            )
        width = moe_ffn_hidden_size or ffn_hidden_size
        written = 3 * ffn_hidden_size if ffn_hidden_size and activation in GATED_ACTIVATIONS else ffn_hidden_size
        if width is not None and written is not None and width != written:
            losses.append(
                (
                    f"NeoX's experts are intermediate_size wide: {written} here, not the experts' {width}",
                    ("model.moe_ffn_hidden_size",),
                )
            )
        if not losses:
            return out
        return Approx(
            out, "; ".join(d for d, _ in losses), tuple(f for _, names in losses for f in names), tuple(losses)
        )


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
        return {
            "attention_scaling": "inverse_head_dim",
            "embedding_multiplier": float(mup_embedding_mult or 1.0),
            "mup_output_logits_scaling": "width",
        }

    @staticmethod
    def write(
        attention_scaling: str | None, embedding_multiplier: float | None, mup_output_logits_scaling: str | None
    ) -> Any:
        multiplier = 1.0 if embedding_multiplier is None else embedding_multiplier
        if attention_scaling == "inverse_head_dim" and mup_output_logits_scaling == "width":
            return {"use_mup": True, "mup_embedding_mult": multiplier}
        # use_mup brings 1/head_dim scores, the logits' width division and the multiplier together:
        # a source with only some of them cannot be written without inventing the others
        lost = [
            (
                f"NeoX scales attention by 1/head_dim only with use_mup, which also divides the logits by the width "
                "multiplier",
                ("model.attention_scaling",),
            )
            if attention_scaling == "inverse_head_dim"
            else None,
            (
                "NeoX multiplies embeddings (mup_embedding_mult) only under use_mup, which also rescales attention and "
                "logits",
                ("model.embedding_multiplier",),
            )
            if multiplier != 1.0
            else None,
            (
                f"NeoX's use_mup divides the logits by the width multiplier itself, with 1/head_dim attention: "
                f"{mup_output_logits_scaling} output scaling alone is not expressible",
                ("model.mup_output_logits_scaling",),
            )
            if mup_output_logits_scaling is not None
            else None,
        ]
        parts = tuple(x for x in lost if x is not None)
        if not parts:
            return {}
        return Approx({}, "; ".join(d for d, _ in parts), tuple(f for _, n in parts for f in n), parts)


# what NeoX holds of the block structure (no sandwich norms, no latent attention, no embedding norm)
family_formula(
    "neox.family",
    (
        "parallel_residual",
        "parallel_shared_norm",
        "norm",
        "activation",
        "moe_num_experts",
        "sliding_window",
        "qk_norm",
        "position_embedding",
    ),
)


@formula("neox.batch")
class NeoxBatch:
    """train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps (default 1, not
    None: NeoX's trap) at dp = global_num_gpus / (pipe x model parallel), checked as NeoX checks them;
    written at NeoX's own dp for the same global batch (knowledge/formula.py, the batch identities)."""

    @staticmethod
    def read(
        train_batch_size: int | None,
        train_micro_batch_size_per_gpu: int | None,
        gradient_accumulation_steps: int | None,
        data_parallel_size: int | None,
    ) -> dict[str, Any]:
        tb, mb, ga, dp = (
            train_batch_size,
            train_micro_batch_size_per_gpu,
            gradient_accumulation_steps,
            data_parallel_size,
        )
        if tb is None and mb is None:  # NeoX refuses it alone; the file that holds the batch is merged with it
            return {}
        # calculate_batch_parameters: the one missing value derived (accumulation only when written null)
        if ga is None and tb and mb and dp:
            ga = tb // mb // dp
        if tb is not None and mb is None and dp:
            mb = tb // dp // (ga or 1)
        if tb is None and mb and dp and ga is not None:
            tb = mb * ga * dp
        # check_batch_parameters: NeoX asserts the identity
        if tb is not None and mb and dp and ga is not None and tb != mb * ga * dp:
            raise ValueError(f"train_batch_size {tb} != micro {mb} x grad_accum {ga} x data-parallel size {dp}")
        return {"global": tb, "micro": mb, "grad_accum": ga}

    @staticmethod
    def write(
        value: int | None,
        micro: int | None,
        grad_accum: int | None,
        world: int | None,
        tensor: int | None,
        pipeline: int | None,
    ) -> Any:
        dp, where = ranks(world, [("model parallel", tensor), ("pipe parallel", pipeline)])
        return written(split(value, micro, grad_accum, dp, where), DEEPSPEED_BATCH_KEYS)


GATED = frozenset({"swiglu", "geglu", "geglu_tanh", "reglu", "bilinear", "glu"})


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


@dataclass(frozen=True)
class MlpShape:
    """What ParallelMLP builds for one intermediate_size."""

    fused: int  # linear1's output (value and gate side by side when gated)
    down_in: int  # linear2's input
    gated: bool
    model_parallel: int = 1

    @property
    def activated(self) -> int:
        """Width the activation hands to linear2 (the gate's width when gated)."""
        return self.fused // 2 if self.gated else self.fused

    @property
    def split_evenly(self) -> bool:
        """Both layers divide over the model-parallel ranks (and a gated half-split stays whole)."""
        per_rank = self.fused // self.model_parallel
        return (
            self.fused % self.model_parallel == 0
            and self.down_in % self.model_parallel == 0
            and (not self.gated or per_rank % 2 == 0)
        )

    @property
    def runs(self) -> bool:
        return self.split_evenly and self.activated == self.down_in


def mlp_shape(ffn: int, gated: bool, multiple_of: int = 1, model_parallel: int = 1) -> MlpShape:
    """The layer widths NeoX builds from `ffn` (intermediate_size, or the width it defaults to)."""
    multiple = multiple_of or 1
    down_in = ffn
    if gated:
        ffn = int(ffn * 2 / 3)  # NeoX computes in floats: keep its rounding
        down_in = ffn // 2
    return MlpShape(_round_up(ffn, 2 * multiple), _round_up(down_in, multiple), gated, model_parallel)


def intermediate_size_for(width: int, gated: bool, multiple_of: int = 1) -> int | None:
    """The intermediate_size that builds a runnable MLP `width` wide (HF intermediate_size /
    Cerebras filter_size): 3 * width when gated, width itself when plain; None when no value
    gives exactly that width (it is not a multiple of mlp_multiple_of, or of twice it when plain)."""
    size = 3 * width if gated else width
    shape = mlp_shape(size, gated, multiple_of)
    return size if shape.runs and shape.activated == width else None


def width_problem(
    intermediate_size: int,
    activation: str | None,
    multiple_of: int = 1,
    model_parallel: int = 1,
    key: str = "intermediate_size",
) -> str | None:
    """None when NeoX builds a runnable MLP from these settings, else one line naming the key, the
    widths NeoX would build and the values that give a runnable MLP. A gated width is ambiguous: the
    number as written may be the HF/Cerebras width (Mistral's 14336: 43008 gives it) or already
    NeoX's 3x convention (then the width NeoX's output layer has is meant): both are offered."""
    gated = activation in GATED
    multiple = multiple_of or 1
    shape = mlp_shape(intermediate_size, gated, multiple, model_parallel)
    if shape.runs:
        return None
    rounding = f" and rounds to multiples of mlp_multiple_of={multiple}" if multiple > 1 else ""
    if not shape.split_evenly:
        halves = " (with the value/gate halves)" if gated else ""
        built = (
            f"{key}: {intermediate_size} builds MLP layers {shape.fused} and {shape.down_in} wide, which do not "
            f"divide evenly over model_parallel_size={model_parallel}{halves}"
        )
        wanted = [shape.down_in]
    elif gated:
        built = (
            f"{key}: {intermediate_size} with the gated activation {activation} builds a {shape.activated}-wide gate "
            f"but a {shape.down_in}-wide output layer (NeoX scales a gated width by 2/3{rounding})"
        )
        wanted = [intermediate_size, shape.down_in]
    else:
        built = (
            f"{key}: {intermediate_size} builds a {shape.fused}-wide first MLP layer but a {shape.down_in}-wide "
            f"second one (NeoX rounds them to multiples of {2 * multiple} and {multiple})"
        )
        wanted = [intermediate_size]
    fixes: list[str] = []
    offered: set[int] = set()
    for width in wanted:
        found = runnable_at_least(width, gated, multiple, model_parallel)
        if found is not None and found[0] not in offered:
            offered.add(found[0])
            fixes.append(f"{key}: {found[0]} gives a {found[1]}-wide {'gated ' if gated else ''}MLP")
    return f"{built}: NeoX cannot run it" + (f"; {', or '.join(fixes)}" if fixes else "")


def runnable_at_least(width: int, gated: bool, multiple_of: int = 1, model_parallel: int = 1) -> tuple[int, int] | None:
    """(intermediate_size, width) of the narrowest runnable MLP at least `width` wide."""
    # A width runs when it is a multiple of the rounding step and splits over the ranks (2 per rank
    # when gated, which a gated width's 2x fused layer gives): the multiples of their lcm. Stepping
    # by it keeps the search a few tries for any model_parallel_size a file may hold.
    step = math.lcm(multiple_of if gated else 2 * multiple_of, model_parallel)
    candidate = _round_up(width, step)
    for _ in range(4):
        size = intermediate_size_for(candidate, gated, multiple_of)
        if size is not None and mlp_shape(size, gated, multiple_of, model_parallel).runs:
            return size, candidate
        candidate += step
    return None


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
                raise Unrunnable(
                    problem.split(": ", 1)[1]
                    if key == "intermediate_size"
                    else f"gives the width {ffn} (x hidden_size); {problem}"
                )
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
            return Approx(
                name,
                f"mlp_type: llama gates {name} (act(w1 x) * w3 x), which has no canonical name: read as plain {name}",
            )
        if name == "gelu" and bias_gelu_fusion and not onnx_safe:
            return "gelu_tanh"
        return name

    # what NeoX's get_activation builds (megatron/model/activations.py; the schema's enum, swish = silu)
    WRITTEN = frozenset({"gelu", "geglu", "relu", "softsign", "mish", "silu", "reglu", "swiglu", "bilinear", "glu"})

    @staticmethod
    def write(value: str) -> Any:
        if value == "gelu_tanh":
            return {"activation": "gelu", "bias_gelu_fusion": True}
        if value == "geglu_tanh":  # activations.py: geglu gates with F.gelu, the exact GELU
            return Approx({"activation": "geglu"}, "NeoX's geglu gates with the exact GELU, not its tanh approximation")
        if value not in NeoxActivation.WRITTEN:  # relu2 (Megatron's --squared-relu): no NeoX activation squares
            raise Unexpressible(f"NeoX has no {value} activation ({', '.join(sorted(NeoxActivation.WRITTEN))})")
        return {"activation": value}


@formula("neox.attention_kind")
class NeoxAttentionKind:
    """attention_config -> "dense" when every layer is global/flash attention, else the pattern."""

    DENSE = frozenset({"global", "flash"})
    # NeoX's ATTENTION_TYPE_CHOICES (megatron/neox_arguments/neox_args.py)
    TYPES = frozenset(
        {
            "global",
            "local",
            "sparse_fixed",
            "sparse_variable",
            "bigbird",
            "bslongformer",
            "gmlp",
            "amlp",
            "flash",
            "rwkv",
            "mamba",
        }
    )

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
                        raise ValueError(
                            f"num_layers {num_layers} is not divisible by the pattern {item[0]!r} (NeoX asserts it)"
                        )
                    layers = num_layers if num_layers is not None else -1
                    break
                if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 0:
                    raise ValueError(
                        f"attention_config entry {item!r}: the repeat count must be a whole number or 'all'"
                    )
                layers += len(item[0]) * repeat
            else:
                raise ValueError(f"attention_config entry {item!r} is not [[types...], repeat]")
        unknown = sorted(kinds - NeoxAttentionKind.TYPES)
        if unknown:
            raise UnknownValue(unknown[0], sorted(NeoxAttentionKind.TYPES), "attention_config")  # a fork's (hyena)
        if num_layers is not None and layers >= 0 and layers != num_layers:
            raise ValueError(
                f"it covers {layers} layers but num_layers is {num_layers}: NeoX asserts one attention type per layer"
            )
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
