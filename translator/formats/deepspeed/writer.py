"""DeepSpeed JSON writer: keys in the table's order; JSON has no comments, so provenance is in the report."""

from __future__ import annotations

from typing import Any

from ...io.documents import dump_json, unflatten
from ...core.report import Status
from ..spec import ExtraEntry, WriteContext, WriteResult, Writer

# DeepSpeed builds an optimizer only from a block with its type (get_optimizer_name); without one the
# training script's optimizer runs and the block's params are never read
UNTYPED = (
    "DeepSpeed builds no optimizer from a block without its type (the script's own runs, ignoring these "
    "params) and the source's optimizer is none DeepSpeed names: give --set optim.type=NAME"
)


class DeepspeedWriter(Writer):
    format = "deepspeed"

    def write(self, leaves: dict[str, Any], ctx: WriteContext) -> WriteResult:
        from ...knowledge.mapping import load_table

        tree = unflatten(leaves)
        ordered = {key: tree.pop(key) for key in load_table("deepspeed").order if key in tree}
        ordered.update(tree)
        optimizer = ordered.get("optimizer")
        untyped = isinstance(optimizer, dict) and "type" not in optimizer
        return WriteResult(
            ordered, extra_entries=[ExtraEntry("optimizer.type", Status.MISSING, UNTYPED, ("optim.type",))] * untyped
        )

    def serialise(self, document: dict[str, Any]) -> str:
        return dump_json(document)


WRITER = DeepspeedWriter()
