"""Cerebras Model Zoo YAML, in its two layouts.

* legacy (Model Zoo 2.0-2.2): top-level train_input / eval_input / model / optimizer / runconfig.
  Legacy files do not name their model: it is the run.py you launch. The writer states the model
  family it chose in a header comment (and the report); the reader infers it from the block shape.
* trainer (Model Zoo 2.3+): trainer.init.{backend, model, optimizer, schedulers, precision, loop,
  checkpoint, logging, callbacks, ...} and trainer.fit.{train_dataloader, val_dataloader}.

The mapping table is keyed on the legacy layout, as Cerebras' own converter is. A trainer file is
read into that legacy view (Source.aliases keep the trainer path of every leaf, so reports and
errors name what the user wrote); the writer restructures legacy leaves into the trainer layout
(layout.py, to_trainer.py, from_trainer.py; data in mappings/cerebras-layouts.yaml).
"""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from ...io import dump_yaml, parse_yaml, read_text, unflatten
from ...source import Source
from . import from_trainer as trainer_view
from . import layout as cerebras_layout
from . import to_trainer as trainer_writer

SECTIONS = ("train_input", "eval_input", "model", "optimizer", "runconfig", "sparsity", "wandb")
LAYOUTS = ("legacy", "trainer")

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
    source = source_from_tree(parse_yaml(text, name), name, text)
    if layout is not None and layout != source.layout:
        raise InputError(f"this is a Cerebras {source.layout}-layout file, not {layout}", file=name, line=1)
    return source


def source_from_tree(data: dict[str, Any], name: str = "<config>", text: str = "") -> Source:
    """A parsed Cerebras config as the mapping table sees it (the legacy view)."""
    if detect_layout(data) == "trainer":
        return _trainer_source(data, name, text)
    for section in SECTIONS:
        if section in data and data[section] is not None and not isinstance(data[section], dict):
            raise InputError(f"section {section!r} must be a mapping", file=name)
    texts = {name: text} if text else {}
    return Source("cerebras", data, [name], texts, {k: name for k in data}, layout="legacy")


def _trainer_source(data: dict[str, Any], name: str, text: str) -> Source:
    trainer = data["trainer"]
    if isinstance(trainer, list):
        raise InputError(
            f"`trainer` is a list of {len(trainer)} trainer configs (multi-phase training); neoconv "
            "translates one phase at a time: put each list item in a file of its own",
            file=name, line=1,
        )  # fmt: skip
    if not isinstance(trainer, dict) or not isinstance(trainer.get("init", {}), dict):
        raise InputError("`trainer` must be a mapping with an `init` section", file=name, line=1)
    others = [k for k in data if k != "trainer"]
    if others:
        raise InputError(
            f"top-level {', '.join(map(repr, others))} beside `trainer`: a trainer-layout file has only "
            "`trainer` (legacy sections belong in a legacy-layout file)",
            file=name, line=1,
        )  # fmt: skip
    view = trainer_view.from_trainer(trainer)
    tree = unflatten(view.leaves)
    texts = {name: text} if text else {}
    return Source(
        "cerebras", tree, [name], texts, {k: name for k in tree}, layout="trainer",
        notes=view.notes, aliases=view.aliases, meta={"absent_places": view.absent, "schedule": view.schedule},
    )  # fmt: skip


def unplaceable(leaf: str, layout: str | None) -> str | None:
    """Why a layout has no place for a legacy-view leaf (same-format translation), or None."""
    if layout == "trainer":
        if cerebras_layout.holds(leaf):
            return None
        if leaf in cerebras_layout.layout().ignore:
            return "Cerebras' trainer conversion ignores it"
        return ("the trainer layout has no place for it: Cerebras' own convert_legacy_params_to_trainer_params "
                "drops it too (\"Found extra keys in the params\")")  # fmt: skip
    if leaf.startswith(cerebras_layout.RESIDUE + "."):
        return "a trainer-layout setting with no legacy key: the legacy layout has no place for it"
    if leaf == "model.name":
        return "legacy configs name no model: the family is the run.py you launch (named in the file header)"
    return None


# Keys Model Zoo cannot run without and no canonical field gives (gpt2/utils.py set_defaults reads
# train_input["data_processor"]; HDF5IterableDataset reads params["data_dir"]: KeyError without them)
NEEDED = {
    "data_processor": "Model Zoo needs the data processor (e.g. GptHDF5MapDataProcessor for data preprocessed "
                      "to HDF5): add train_input.data_processor",
    "data_dir": "Model Zoo needs the preprocessed data: add train_input.data_dir (the HDF5 folder; a "
                "GptHDF5MapDataProcessor also takes a mixture)",
}  # fmt: skip


def _needed(leaves: dict[str, Any], layout: str | None) -> list[tuple[str | None, str | None, str, str]]:
    section = "trainer.fit.train_dataloader" if layout == "trainer" else "train_input"
    missing: list[tuple[str | None, str | None, str, str]] = []
    for key, why in NEEDED.items():
        if f"train_input.{key}" not in leaves and not (key == "data_dir" and "train_input.mixture" in leaves):
            missing.append((None, f"{section}.{key}", "missing", why.replace("train_input.", section + ".")))
    return missing


def write(leaves: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    if meta.get("source_format") != "cerebras":
        meta.setdefault("extra_entries", []).extend(_needed(leaves, meta.get("layout")))
    if meta.get("layout") == "trainer":
        shape = meta.get("source") or {}  # same-format: what the trainer source left out or spelled its way
        document, moved, reshaped, inferred = trainer_writer.to_trainer(
            leaves, meta.get("model_family"), shape.get("absent_places"), shape.get("schedule")
        )  # fmt: skip
        meta["target_paths"] = moved
        meta["reshaped"] = reshaped
        meta["model_name_inferred"] = inferred
        return document
    tree = unflatten({k: v for k, v in leaves.items() if unplaceable(k, "legacy") is None})
    ordered = {section: tree.pop(section) for section in SECTIONS if section in tree}
    ordered.update(tree)
    return ordered


def dump(document: dict[str, Any], meta: dict[str, Any]) -> str:
    source = f" from {meta['from']}" if meta.get("from") else ""
    family = meta.get("model_family")
    if "trainer" in document:
        lines = [f"# Cerebras Model Zoo config (trainer layout, Model Zoo 2.3+) written by neoconv{source}"]
        if meta.get("model_name_inferred"):
            lines.append(f"# trainer.init.model.name {family!r} is inferred from the block structure (legacy configs name no model)")
        return "\n".join(lines) + "\n" + dump_yaml(document)
    lines = [f"# Cerebras Model Zoo config (legacy layout) written by neoconv{source}"]
    if family:
        lines.append(f"# Model family: {family}; run it with modelzoo/{RUN_SCRIPTS.get(family, family)}")
    return "\n".join(lines) + "\n" + dump_yaml(document)
