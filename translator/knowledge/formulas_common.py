"""Formulas (and their helpers) every mapping table may share: named for the maths, naming no framework."""

from __future__ import annotations

import inspect
import math
from typing import TYPE_CHECKING, Any

from .batch_split import ranks
from .formula import FORMULAS, Approx, Formula, formula

if TYPE_CHECKING:
    from ..schedule.framework import Reading, Rendering

GATED_ACTIVATIONS = frozenset({"geglu", "geglu_tanh", "reglu", "swiglu", "bilinear", "glu"})


def rotary_dim_for(fraction: float, head_dim: int) -> Any:
    """The rotary dimension of a fraction of the head width: truncated as int() does (Approx then)."""
    exact = head_dim * fraction
    dim = int(exact)
    if dim != exact:
        return Approx(dim, f"{fraction} x head_dim {head_dim} = {exact} truncated to {dim}")
    return dim


def init_method_std(method: str, sigma: float, num_layers: int, hidden_size: int) -> float | None:
    """Standard deviation each canonical init method (GPT-NeoX's names, megatron/model/init_functions.py)
    implies."""
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


def structural_family(
    parallel_residual: bool | None, parallel_shared_norm: bool | None, norm: str | None, activation: str | None,
    moe_num_experts: int | None = None, sliding_window: int | None = None, qk_norm: bool | None = None,
    sandwich_norm: bool | None = None, mla_kv_lora_rank: int | None = None, position_embedding: str | None = None,
    embedding_norm: bool | None = None,
) -> str:  # fmt: skip
    """The family a block structure is known by when no key names one: the parallel GPT-J/NeoX blocks;
    latent attention (DeepSeek); Gemma's sandwich norms (Gemma 3 with qk-norm); experts (Qwen3-MoE
    with qk-norm, else Mixtral); qk-norm (Qwen3); a window on a Llama block (Mistral); Llama's RMSNorm
    or gated MLP; BLOOM's ALiBi with an embedding norm; else GPT-2."""
    if parallel_residual:
        return "gptj" if parallel_shared_norm else "gpt-neox"
    if mla_kv_lora_rank:
        return "deepseek_v2"
    if sandwich_norm:
        return "gemma3" if qk_norm else "gemma2"
    if moe_num_experts and moe_num_experts > 1:
        return "qwen3_moe" if qk_norm else "mixtral"
    llama = norm == "rmsnorm" or activation in GATED_ACTIVATIONS
    if llama and qk_norm:
        return "qwen3"
    if llama:
        return "mistral" if sliding_window else "llama"
    if position_embedding == "alibi" and embedding_norm:
        return "bloom"
    return "gpt2"


STRUCTURE = ("parallel_residual", "parallel_shared_norm", "norm", "activation", "moe_num_experts", "sliding_window",
             "qk_norm", "sandwich_norm", "mla_kv_lora_rank", "position_embedding", "embedding_norm")  # fmt: skip


def family_formula(name: str, features: tuple[str, ...]) -> Formula:
    """model.family from the block structure a format holds (`features`, canonical field names without
    `model.`): a family whose telling feature the format cannot hold reads back as another, said on
    writing (NeoX has no sandwich norms: Gemma 2 is Llama's blocks there)."""

    def structural(kw: dict[str, Any]) -> str:
        return structural_family(**{f: kw.get(f) for f in STRUCTURE})

    def read(**kw: Any) -> str:
        return structural(kw)

    def write(**kw: Any) -> Any:
        blocks = structural(kw)
        if blocks != kw["value"]:  # a name the blocks alone do not tell (qwen2 is llama's blocks)
            return Approx({}, f"no key names the model family: its blocks read as {blocks}, not {kw['value']}")
        return {}

    for func, params in ((read, features), (write, ("value", *features))):
        setattr(func, "__signature__", inspect.Signature([inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY) for p in params]))
    built = Formula(name, read, write, frozenset(features), frozenset({"value", *features}))
    FORMULAS[name] = built
    return built


# the whole structure (a format that holds every telling feature)
DecoderFamily = family_formula("decoder_family", STRUCTURE)


@formula("data_parallel")
class DataParallel:
    """dp = world size / (tensor x pipeline parallel sizes) (a size below 1 counts as 1); must divide evenly."""

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
    def write(value: int, world_size: int | None, tensor_size: int | None, pipeline_size: int | None) -> Any:
        return ranks_differ(value, *ranks(world_size, [("tensor", tensor_size), ("pipeline", pipeline_size)]))


def ranks_differ(source: int | None, target: int | None, where: str) -> Any:
    """Nothing to write for a derived data-parallel size; a loss when the target splits the world
    differently (the batch rules re-derive micro batch and accumulation for it)."""
    if source is None or target is None or source == target:
        return {}
    return Approx({}, f"the target runs {target} data-parallel ranks ({where}), the source {source}: micro batch and "
                      "accumulation are re-derived for the same global batch")  # fmt: skip


# ---- a format's scheduler readings and renderings as formula results (schedule.phases)


def as_written(out: dict[str, Any], rendering: Rendering, phases: Any, title: str) -> Any:
    """A writer's keys for a rendering: as they are when exact, else lossy with the largest lr
    difference over the run, where, both lrs (and what the framework does past its own limits)."""
    if rendering.exact:
        return out
    from ..schedule.fields import parse

    detail = "; ".join([rendering.detail(parse(phases), title), *rendering.notes])
    return Approx(out, detail, ("schedule.phases",))


def read_phases(reading: Reading) -> Any:
    """A scheduler's reading as a formula gives schedule.phases: approximate, with the reader's notes,
    when the framework does something its config does not say."""
    phases: Any = reading.schedule.to_json()
    return Approx(phases, "; ".join(reading.notes), ("schedule.phases",)) if reading.notes else phases


def lr_only(out: dict[str, Any], lr: float | None, title: str) -> Any:
    """A writer's keys for an lr whose schedule the source does not determine (its reading says why)."""
    if lr is None:
        return {}
    return Approx(out, f"the source's lr schedule is unknown: only its lr {lr:g} is written to {title}",
                  ("optim.lr", "schedule.phases"))
