"""VeOmni formulas (ByteDance-Seed/VeOmni d9774494: veomni/arguments/arguments_types.py,
optim/lr_scheduler.py, optim/optimizer.py, trainer/base.py, distributed/torch_parallelize.py; the flat
layout at ac3b9f01). The schedule and step counts are in schedule.py.
"""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import ranks, split
from ...knowledge.formula import Approx, Missing, formula
from ...knowledge.formula import ranks_differ
from . import schedule  # noqa: F401  (registers veomni.lr_schedule, veomni.train_steps, ...)


VEOMNI_DYN_BSZ = (
    "VeOmni's dyn_bsz packs variable-length samples into micro-batches of up to micro_batch_size x "
    "max_seq_len tokens, so its batch sizes are token budgets in units of max_seq_len: the same as that "
    "many samples only when every sample is max_seq_len long (packed pretraining data)"
)


def _dyn_bsz(value: Any, packed: bool | None, writing: bool) -> Any:
    """Batch sizes are token budgets when dyn_bsz is on (VeOmni's default)."""
    if value is None or packed is False or (writing and packed is True):
        return value
    return Approx(value, VEOMNI_DYN_BSZ + ("; the source counted samples" if writing else ""))


@formula("veomni.batch")
class VeomniBatch:
    """train.global_batch_size (else micro_batch_size x dp) and train.micro_batch_size (token budgets
    with dyn_bsz); VeOmni derives the accumulation, global / (micro x dp), which must divide
    (TrainingArguments._derive_batch_config). Written at VeOmni's dp = world / ulysses_size for the
    same global batch (knowledge/formula.py, the batch identities)."""

    @staticmethod
    def read(
        train_global_batch_size: int | None,
        train_micro_batch_size: int | None,
        packed: bool | None,
        data_parallel_size: int | None,
    ) -> dict[str, Any]:
        micro, dp = train_micro_batch_size or 1, data_parallel_size  # micro_batch_size defaults to 1
        total = train_global_batch_size if train_global_batch_size is not None else (micro * dp if dp else None)
        accum = None
        if total is not None and not dp and total % micro:  # the same check at dp 1, so at every dp
            raise ValueError(
                f"global_batch_size {total} is not a multiple of micro_batch_size {micro}: VeOmni "
                "refuses it at every world size (global = micro x accumulation x dp)"
            )
        if total and micro and dp:
            if total % (micro * dp):
                raise ValueError(
                    f"global_batch_size {total} is not a multiple of micro_batch_size x "
                    f"data-parallel size = {micro * dp}: VeOmni refuses it"
                )
            accum = total // (micro * dp)
        given = train_micro_batch_size  # the default 1 is left to VeOmni: it is what every reading assumes
        return {
            "global": _dyn_bsz(total, packed, writing=False),
            "micro": _dyn_bsz(given, packed, writing=False),
            "grad_accum": accum,
        }

    @staticmethod
    def write(
        value: int | None,
        micro: int | None,
        grad_accum: int | None,
        packed: bool | None,
        world: int | None,
        sequence: int | None,
    ) -> Any:
        dp, where = ranks(world, [("ulysses", sequence)])
        done = split(value, micro, grad_accum, dp, where)
        if isinstance(done, str):
            return {"train_global_batch_size": Missing(done)}
        out = {
            "train_global_batch_size": _dyn_bsz(done.global_batch, packed, writing=True),
            "train_micro_batch_size": _dyn_bsz(done.micro, packed, writing=True),
        }
        notes = [done.note] if done.note else []
        if done.global_batch is None and (done.accum or 1) > 1:
            notes.append(
                f"VeOmni derives the accumulation from global / (micro x data-parallel size); the global "
                f"batch is not known here (--world-size), so its accumulation {done.accum} is not kept"
            )
        return Approx(out, "; ".join(notes), ("batch.micro", "batch.grad_accum")) if notes else out


@formula("veomni.data_parallel")
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
    def write(value: int, world_size: int | None, sequence_size: int | None) -> Any:
        return ranks_differ(value, *ranks(world_size, [("ulysses", sequence_size)]))
