"""Batch identities: global batch = micro batch x accumulation x data-parallel size. A target whose
data-parallel size differs from the source's at the same world size (a parallel dimension it lacks
or adds: Ulysses sequence, tensor, pipeline) keeps the global batch, the meaning of the run, and
re-derives micro batch and accumulation; when the global batch does not split over its ranks, the
exact --set that makes it hold is the answer. Names no framework: each target says how its
data-parallel size is made (its formulas)."""

from __future__ import annotations

from typing import Any, NamedTuple


class Split(NamedTuple):
    global_batch: int | None
    micro: int | None
    accum: int | None
    note: str = ""  # why micro or accumulation differ from the source's (the report's words)


def ranks(world: int | None, parts: list[tuple[str, int | None]]) -> tuple[int | None, str]:
    """The data-parallel size world / (product of the parts) and how it was made ("world 8 / tensor 2").
    None when the world size is unknown or the parts do not divide it."""
    if not world:
        return None, ""
    used = [(name, size) for name, size in parts if size and size > 1]
    divisor = 1
    for _, size in used:
        divisor *= size  # type: ignore[operator]
    where = " / ".join([f"world {world}", *(f"{name} {size}" for name, size in used)])
    if world % divisor:
        return None, where
    return world // divisor, where


def split(global_batch: int | None, micro: int | None, accum: int | None, dp: int | None, where: str) -> Split | str:
    """The target's micro batch and accumulation for the same global batch at dp data-parallel ranks;
    a str says why no whole split exists (with the --set that makes one). Unknown dp or global batch:
    the values as they are."""
    if dp is None or global_batch is None:
        return Split(global_batch, micro, accum)
    if micro and accum and micro * accum * dp == global_batch:
        return Split(global_batch, micro, accum)
    if global_batch % dp:
        low = global_batch // dp * dp
        options = " or ".join(f"--set batch.global={n}" for n in dict.fromkeys((low, low + dp)) if n > 0)
        return (f"the global batch {global_batch} does not split over {dp} data-parallel ranks ({where}): give "
                f"{options} (a multiple of {dp}), or --world-size N of a run it splits over")  # fmt: skip
    per_rank = global_batch // dp
    if micro:
        m = next(d for d in range(min(micro, per_rank), 0, -1) if per_rank % d == 0)
    elif accum and per_rank % accum == 0:
        m = per_rank // accum
    else:
        m = per_rank
    ga = per_rank // m
    if m == micro and ga == accum:
        return Split(global_batch, m, ga)
    was = f"micro {micro} x accumulation {accum}" if micro or accum else "no micro batch"
    return Split(global_batch, m, ga, f"the global batch {global_batch} at {dp} data-parallel ranks ({where}) is micro {m} x "
                                      f"accumulation {ga} (the source: {was})")  # fmt: skip


def written(done: Split | str, keys: tuple[str, str, str]) -> Any:
    """A split as a target's (global, micro, accumulation) keys: the reason as the global key's
    missing value when there is no whole split; an approximation when micro or accumulation changed."""
    from .formula import Approx, Missing

    total, micro, accum = keys
    if isinstance(done, str):
        return {total: Missing(done)}
    out = {total: done.global_batch, micro: done.micro, accum: done.accum}
    return Approx(out, done.note, ("batch.micro", "batch.grad_accum")) if done.note else out
