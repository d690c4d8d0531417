"""DeepSpeed JSON writer: keys in the table's order; JSON has no comments, so provenance is in the report."""

from __future__ import annotations

from typing import Any

from ...io import dump_json, unflatten
from ...report import Status
from ..spec import ExtraEntry, WriteContext, WriteResult, Writer

BATCH_NEEDED = (
    "DeepSpeed refuses a config without a batch ('Either train_batch_size or train_micro_batch_size_per_gpu "
    "needs to be provided'): give --set batch.micro=N (per GPU), or --set batch.global=N, or translate the "
    "file that holds the batch with this one (--with)"
)


class DeepspeedWriter(Writer):
    format = "deepspeed"

    def write(self, leaves: dict[str, Any], ctx: WriteContext) -> WriteResult:
        from ...mapping import load_table

        extra: list[ExtraEntry] = []
        if ctx.source_format != self.format and not {"train_batch_size", "train_micro_batch_size_per_gpu"} & set(leaves):
            extra.append(ExtraEntry("train_batch_size", Status.MISSING, BATCH_NEEDED, ("batch.global", "batch.micro")))
        tree = unflatten(leaves)
        ordered = {key: tree.pop(key) for key in load_table("deepspeed").order if key in tree}
        ordered.update(tree)
        return WriteResult(ordered, extra_entries=extra)

    def serialise(self, document: dict[str, Any]) -> str:
        return dump_json(document)


WRITER = DeepspeedWriter()
