"""DeepSpeed JSON writer: keys in the table's order; JSON has no comments, so provenance is in the report."""

from __future__ import annotations

from typing import Any

from ...io.documents import dump_json, unflatten
from ..spec import WriteContext, WriteResult, Writer

class DeepspeedWriter(Writer):
    format = "deepspeed"

    def write(self, leaves: dict[str, Any], ctx: WriteContext) -> WriteResult:
        from ...knowledge.mapping import load_table

        tree = unflatten(leaves)
        ordered = {key: tree.pop(key) for key in load_table("deepspeed").order if key in tree}
        ordered.update(tree)
        return WriteResult(ordered)

    def serialise(self, document: dict[str, Any]) -> str:
        return dump_json(document)


WRITER = DeepspeedWriter()
