"""The HF Trainer's cells in the shared read/write matrix rows (tests/matrix.py): TrainingArguments hold no model
architecture (the model is a checkpoint the train file names), in either layout of the DeepSpeed config beside them."""

from __future__ import annotations

from matrix import Column, No

NO_MODEL = No("TrainingArguments hold no model architecture (the model is a checkpoint the train file names)")
ROWS = (
    "no biases",
    "biases (GPT-2)",
    "untied embeddings",
    "tied embeddings (every default)",
    "dropouts",
    "GPT-2 default dropouts",
    "no dropout (NeoX default)",
    "embedding dropout apart",
    "Cerebras 2.4+ attention dropout default",
    "explicit 4h",
    "default 4h",
    "swiglu, NeoX 3x",
    "swiglu, mlp_multiple_of 256",
    "gelu (erf)",
    "gelu (tanh)",
    "relu",
    "dims",
    "vocab",
    "grouped-query kv heads",
    "layernorm 1e-6",
    "rmsnorm 1e-6",
    "rmsnorm, NeoX default 1e-8",
    "rmsnorm, a layernorm eps has no effect",
    "layernorm without bias",
    "non-parametric layernorm",
    "rotary 25%, base 1e4",
    "rotary full, base 5e5",
    "learned",
)

CELLS: dict[str, Column | dict[str, Column]] = {
    row: {"hftrainer/concrete": NO_MODEL, "hftrainer/auto": NO_MODEL} for row in ROWS
}
