"""Formulas (and their helpers) every mapping table may share: named for the maths, naming no framework."""

from __future__ import annotations

import math
from typing import Any

from .batch_split import ranks
from .formula import Approx, formula

GATED_ACTIVATIONS = frozenset({"geglu", "reglu", "swiglu", "bilinear", "glu"})


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


@formula("decoder_family")
class DecoderFamily:
    """Model family from the block structure (model registries key on it)."""

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


