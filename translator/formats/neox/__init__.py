"""GPT-NeoX YAML: files merged into one flat namespace (reader.py), written with what NeoX needs to
load them (writer.py); its formulas in formulas.py and training.py."""

from __future__ import annotations

from ..spec import FormatSpec


def _spelling(key: str) -> str:
    """NeoX treats `-` and `_` in its keys alike."""
    return key.replace("-", "_")


FORMAT = FormatSpec(
    name="neox",
    title="GPT-NeoX YAML",
    reader=f"{__name__}.reader",
    writer=f"{__name__}.writer",
    suffix=".yml",
    globs=("*.yml", "*.yaml"),
    key_spelling=_spelling,
    companions={".json": "deepspeed"},  # a NeoX run's DeepSpeed config (ds_config.json)
)
