"""HuggingFace config.json (`hf`): the architecture of a model as transformers loads it, one class per
model_type. reader.py reads a config.json (or the folder holding it) under `hf.`, writer.py writes
one; the per-class tables (mappings/hf.yaml `data:`) are loaded by model_types.py and turned into
formulas by fields.py, codecs.py, rope.py and window.py. VeOmni keeps its architecture in such a
file and reads and writes it through the same modules (config_json.py)."""

from __future__ import annotations

from ..spec import FormatSpec

FORMAT = FormatSpec(
    name="hf",
    title="HF config.json",
    reader=f"{__name__}.reader",
    writer=f"{__name__}.writer",
    suffix=".json",
    comments=False,
    editor="json",
    globs=("config.json", "*.config.json"),
)
