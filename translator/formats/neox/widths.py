"""GPT-NeoX's MLP width arithmetic, and the widths with which NeoX cannot build a runnable MLP.

NeoX's ParallelMLP (megatron/model/transformer.py, EleutherAI/gpt-neox ea7aefd8, lines 88-160)
takes ffn = intermediate_size (else int(expansion_factor * hidden), else 4 * hidden). A gated
activation (swiglu, geglu, reglu, bilinear, glu) first scales it: ffn = int(ffn * 2 / 3) and the
second layer's input is ffn // 2. Then linear1's output rounds up to a multiple of
2 * mlp_multiple_of and linear2's input up to a multiple of mlp_multiple_of. The activation hands
linear2 all of linear1's output (plain) or half of it (gated: value and gate). When that is not
linear2's input width the model fails at its first forward pass: NeoX's own configs/mistral/7B.yml
(intermediate_size 14336, swiglu, mlp_multiple_of 1) builds a 4779-wide gate and a 4778-wide
second layer. Both widths are also split over the model-parallel ranks (mpu.divide asserts).

Pure arithmetic for the NeoX reader (formats/neox after the format refactor), which refuses such a
file with the one line `width_problem` gives. Expert MLPs of NeoX's MoE layers use
intermediate_size as is (no 2/3, no rounding): this concerns the dense MLP only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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
