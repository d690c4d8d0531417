"""DeepSpeed JSON (ds_config.json): one JSON object, read strictly (reader.py), written in the
table's key order (writer.py); its formulas in formulas.py and schedule.py."""

from __future__ import annotations

from ..spec import FormatSpec

FORMAT = FormatSpec(
    name="deepspeed",
    title="DeepSpeed JSON",
    reader=f"{__name__}.reader",
    writer=f"{__name__}.writer",
    suffix=".json",
    comments=False,
    editor="json",
    globs=("*.json",),
    companions={".json": "deepspeed", "*": "neox"},  # beside a ds_config.json, a YAML file is NeoX's half of the run
)
