"""VeOmni YAML (`model.* / data.* / train.*`) in its two key layouts, nested (since PR #538) and flat,
with the HF config.json beside it: reader.py (settings.py, options.py, architecture.py) reads a YAML
file and option files into the nested view, writer.py writes either layout; fields.py holds the
dataclass fields of both; its formulas in formulas.py and schedule.py."""

from __future__ import annotations

from ..spec import FormatSpec

FORMAT = FormatSpec(
    name="veomni",
    title="VeOmni YAML",
    reader=f"{__name__}.reader",
    writer=f"{__name__}.writer",
    suffix=".yaml",
    globs=("*.yaml", "*.yml"),
    # nested is VeOmni since PR #538 (2026-03); flat is the seed docs' layout; `veomni2veomni
    # --layout nested` migrates a flat file; scoped is PR #1090's (model.accelerator, model.optimizer), written
    # for --layout scoped or --to-version #1090. Writing into VeOmni also writes config.json beside it.
    layouts=("nested", "flat", "scoped"),
    default_layout="nested",
    companions={".json": "deepspeed"},
    takes_model_config=True,  # --model-config: the HF config.json holding the architecture
)
