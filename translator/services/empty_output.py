"""An output that would hold nothing a run needs is not written (issue 28): a DeepSpeed `{}` from a
config.json, a config.json with no model class from a DeepSpeed file. One rule for every format: the
writer's document holds no setting and nothing is written beside it; the refusal names what the target
misses (its `missing` entries) and how to give it."""

from __future__ import annotations

from typing import Any

from ..core.errors import NothingToWrite
from ..core.report import Report, Status
from ..formats.spec import WriteResult
from ..knowledge.source import Source


def refuse_empty(written: WriteResult, report: Report, source: Source, title: str, target_values: Any) -> None:
    """An output that would hold nothing a run needs (DeepSpeed `{}` from a config.json; a config.json with no
    model class from a DeepSpeed file) is not written: what the target misses, and how to give it."""
    if written.document or written.side_files or written.model_config or target_values:
        return
    needed = [e for e in report.entries if e.status is Status.MISSING and e.target_key]
    said = "; ".join(f"{e.target_key}: {e.detail}" for e in needed[:3]) + ("; ..." if len(needed) > 3 else "")
    raise NothingToWrite(
        f"the {title} output would hold no setting of the source" + (f": it needs {said}" if said else ""),
        file=source.files[0] if source.files else None,
        hint="give the values with --set, or the file that holds them with --with",
    )  # fmt: skip
