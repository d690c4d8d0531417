"""Cerebras Model Zoo YAML in its two layouts, legacy (2.0-2.2) and trainer (2.3+): reader.py reads
both into the legacy view the table is keyed on, writer.py writes either (layout.py, to_trainer.py,
from_trainer.py restructure); its formulas in formulas.py and schedule.py."""

from __future__ import annotations

from ..spec import FormatSpec

FORMAT = FormatSpec(
    name="cerebras",
    title="Cerebras Model Zoo YAML",
    reader=f"{__name__}.reader",
    writer=f"{__name__}.writer",
    suffix=".yaml",
    globs=("*.yaml", "*.yml"),
    # legacy stays the default: the layout of Model Zoo 2.0-2.2 and of the reference docs, and the
    # one earlier neoconv output has; `--layout trainer` writes what Model Zoo 2.3+ reads natively
    layouts=("legacy", "trainer"),
    default_layout="legacy",
    keeps_source_layout=True,  # a trainer file stays one: the legacy layout cannot hold all it runs
    companions={".json": "deepspeed"},
    schemas=("cerebras", "cerebras-trainer"),  # a trainer-layout file has `trainer:` at the top
)
