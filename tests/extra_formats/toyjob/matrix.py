"""The toy job's cells in the shared read/write matrix rows (tests/matrix.py): how it expresses each
construct, or why it cannot (it names its model, and holds none of the model's settings)."""

from __future__ import annotations

from matrix import Column, No

NAMED = "a toy job names its model (model.name, model.flavor) and holds none of its settings"

CELLS: dict[str, Column] = {
    **{
        row: No(NAMED)
        for row in (
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
            "vocab",
        )
    },
}
