"""Cerebras Model Zoo YAML. Legacy layout: train_input / eval_input / model / optimizer / runconfig.

Legacy files do not name their model: it is the run.py you launch. The writer states the model
family it chose in a header comment (and the report); the reader infers it from the block shape.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from ..io import dump_yaml, parse_yaml, read_text, unflatten
from ..source import Source

SECTIONS = ("train_input", "eval_input", "model", "optimizer", "runconfig", "sparsity", "wandb")

# Where each family's legacy run.py lives in Model Zoo 2.x (the family picks the model class).
RUN_SCRIPTS = {
    "gpt2": "transformers/pytorch/gpt2/run.py",
    "gptj": "transformers/pytorch/gptj/run.py",
    "gpt-neox": "transformers/pytorch/gptj/run.py (GPT-NeoX configs live under gptj)",
    "llama": "transformers/pytorch/llama/run.py",
    "mistral": "transformers/pytorch/mistral/run.py",
}


def detect_layout(data: dict[str, Any]) -> str:
    return "trainer" if "trainer" in data else "legacy"


def read(paths: list[str], *, layout: str | None = None) -> Source:
    if len(paths) != 1:
        raise InputError(f"a Cerebras config is one file; got {len(paths)}", file=str(paths[-1]))
    name = str(paths[0])
    text = read_text(name)
    data = parse_yaml(text, name)
    found = detect_layout(data)
    if found == "trainer":
        raise InputError(
            "Cerebras trainer layout (trainer: init/fit) is not read yet; only the legacy layout is",
            file=name, line=1,
        )  # fmt: skip
    for section in SECTIONS:
        if section in data and data[section] is not None and not isinstance(data[section], dict):
            raise InputError(f"section {section!r} must be a mapping", file=name)
    return Source("cerebras", data, [name], {name: text}, {k: name for k in data}, layout=found)


def write(leaves: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    tree = unflatten(leaves)
    ordered = {section: tree.pop(section) for section in SECTIONS if section in tree}
    ordered.update(tree)
    return ordered


def dump(document: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = ["# Cerebras Model Zoo config (legacy layout) written by neoconv" + (f" from {meta['from']}" if meta.get("from") else "")]
    family = meta.get("model_family")
    if family:
        lines.append(f"# Model family: {family}; run it with modelzoo/{RUN_SCRIPTS.get(family, family)}")
    return "\n".join(lines) + "\n" + dump_yaml(document)
