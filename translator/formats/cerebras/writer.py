"""Cerebras Model Zoo YAML writer, both layouts.

* legacy (Model Zoo 2.0-2.2): top-level train_input / eval_input / model / optimizer / runconfig.
  Before 2.4 a legacy file names no model: it is the run.py you launch. From 2.4 on Model Zoo
  converts it to the trainer layout, whose model name validate.py requires: `model.name` (written
  by the table, or `missing`). The header states the model family too.
* trainer (Model Zoo 2.3+): trainer.init.{backend, model, optimizer, schedulers, precision, loop,
  checkpoint, logging, callbacks, ...} and trainer.fit.{train_dataloader, val_dataloader}, built from
  the legacy view as Cerebras' own converter builds it (to_trainer.py).
"""

from __future__ import annotations

from typing import Any, Mapping

from ...io.documents import dump_yaml, unflatten
from ...core.report import Status
from ..spec import ExtraEntry, WriteContext, WriteResult, Writer, added_for_target
from ...knowledge.schema import older
from .layout import RESIDUE, holds, layout
from .formulas import FIRST_NAMED
from .reader import SECTIONS
from .respell import respell, respell_loss_scale
from .to_trainer import to_trainer, trainer_place

# Where each family's legacy run.py lives in Model Zoo 2.x (the family picks the model class).
RUN_SCRIPTS = {
    "gpt2": "transformers/pytorch/gpt2/run.py",
    "gptj": "transformers/pytorch/gptj/run.py",
    "gpt-neox": "transformers/pytorch/gptj/run.py (GPT-NeoX configs live under gptj)",
    "llama": "transformers/pytorch/llama/run.py",
    "mistral": "transformers/pytorch/mistral/run.py",
}

# Keys Model Zoo cannot run without and no canonical field gives (gpt2/utils.py set_defaults reads
# train_input["data_processor"]; HDF5IterableDataset reads params["data_dir"]: KeyError without them)
NEEDED = {
    "data_processor": "Model Zoo needs the data processor (e.g. GptHDF5MapDataProcessor for data preprocessed "
    "to HDF5): give --set cerebras:train_input.data_processor=NAME",
    "data_dir": "Model Zoo needs the preprocessed data (the HDF5 folder; a GptHDF5MapDataProcessor also "
    "takes a mixture): give --set cerebras:train_input.data_dir=PATH",
}
UNNAMED = (
    f"Model Zoo {FIRST_NAMED}+ builds the model its name gives (the registry name, e.g. gpt2, llama) and nothing "
    "in the source names one: give --set model.family=NAME"
)


class CerebrasWriter(Writer):
    format = "cerebras"

    def write(self, leaves: dict[str, Any], ctx: WriteContext) -> WriteResult:
        extra = _needed(leaves, ctx.layout) if ctx.source_format != self.format else []
        amended = _respelled(leaves, ctx) if ctx.source_format == self.format else {}
        if ctx.source_format == self.format:  # what the target release wants stated, or refuses
            from .migrations import migrate  # (same-format only: kept off other translations' path)

            added, left_out = migrate(leaves, ctx.source_version, ctx.version, ctx.model_family)
            extra += added
            amended.update(left_out)
        shape = ctx.source_shape  # same-format: what the source left out or spelled its way
        other = shape.get("unsupported_family")  # a family whose architecture was carried, not read
        if (
            not other
            and not ctx.model_family
            and "model.name" not in leaves
            and not older("cerebras", ctx.version, FIRST_NAMED)
        ):
            extra.append(
                ExtraEntry("model.name", Status.MISSING, UNNAMED, ("model.family",))
            )  # nothing in the source tells the model
        if ctx.layout == "trainer":
            name = (other["name"] if other else ctx.model_family) or None
            document, moved, reshaped, inferred = to_trainer(
                leaves,
                name,
                shape.get("absent_places"),
                shape.get("schedule"),
                shape.get("class_order"),
                model_name_names=not other,
            )
            header = self.header(document, ctx)
            if inferred:
                why = f"the {other['family']} model's name" if other else "inferred from the block structure"
                header.append(f"# trainer.init.model.name {name!r} is {why} (legacy configs name no model)")
                # Model Zoo 2.4+ builds the model its name gives: a value the source never said, in the report too
                extra.append(
                    added_for_target(
                        "Cerebras Model Zoo",
                        "trainer.init.model.name",
                        name,
                        f"Model Zoo {FIRST_NAMED}+ builds the model its name gives; the source names none: {why}",
                        ("model.family",),
                    )
                )
            if other and not other["name"] and "model" in document.get("trainer", {}).get("init", {}):
                extra.append(ExtraEntry("trainer.init.model.name", Status.MISSING, _unnamed(other["what"])))
            return WriteResult(
                document,
                header,
                extra_entries=extra,
                target_paths=moved,
                reshaped=reshaped,
                place_of=trainer_place,
                amended=amended,
            )
        amended.update(_one_eval_input(leaves))
        if other and "model.name" not in leaves and not older("cerebras", ctx.version, FIRST_NAMED):
            extra += _family_name(leaves, other)  # Model Zoo 2.4+ converts the file and builds the model its name gives
        tree = unflatten({k: v for k, v in leaves.items() if self.unplaceable(k, "legacy", ctx.version) is None})
        ordered = {section: tree.pop(section) for section in SECTIONS if section in tree}
        ordered.update(tree)
        return WriteResult(ordered, self.header(ordered, ctx), extra_entries=extra, amended=amended)

    def header(self, document: dict[str, Any], ctx: WriteContext) -> list[str]:
        source = f" from {ctx.sources}" if ctx.sources else ""
        if "trainer" in document:
            return [f"# Cerebras Model Zoo config (trainer layout, Model Zoo 2.3+) written by neoconv{source}"]
        lines = [f"# Cerebras Model Zoo config (legacy layout) written by neoconv{source}"]
        family = ctx.model_family
        if family:
            lines.append(f"# Model family: {family}; run it with modelzoo/{RUN_SCRIPTS.get(family, family)}")
        return lines

    def serialise(self, document: dict[str, Any]) -> str:
        return dump_yaml(document)

    def unplaceable(self, leaf: str, layout_name: str | None, version: str | None = None) -> str | None:
        """Why a layout has no place for a legacy-view leaf (same-format translation), or None."""
        if layout_name == "trainer":
            if holds(leaf):
                return None
            if leaf in layout().ignore:
                return "Cerebras' trainer conversion ignores it"
            return (
                "the trainer layout has no place for it: Cerebras' own convert_legacy_params_to_trainer_params "
                'drops it too ("Found extra keys in the params")'
            )
        if leaf.startswith(RESIDUE + "."):
            return "a trainer-layout setting with no legacy key: the legacy layout has no place for it"
        if leaf == "model.name" and older("cerebras", version, FIRST_NAMED):
            return (
                f"legacy configs before Model Zoo {FIRST_NAMED} name no model: the family is the run.py you "
                "launch (named in the file header)"
            )
        return None


WRITER = CerebrasWriter()


def _one_eval_input(leaves: dict[str, Any]) -> dict[str, tuple[Status, str]]:
    """The legacy layout holds one eval_input (a mapping; the trainer's val_dataloader may be a list): the
    first is written, the others are said lost."""
    evals = leaves.get("eval_input")
    if not isinstance(evals, list) or not evals:
        return {}
    leaves["eval_input"] = evals[0]
    rest = [e.get("data_dir", f"#{i}") if isinstance(e, dict) else f"#{i}" for i, e in enumerate(evals[1:], 2)]
    return {
        "eval_input": (
            Status.LOSSY,
            f"the legacy layout holds one eval_input (a mapping): wrote the first of "
            f"{len(evals)} val_dataloaders; not written: {', '.join(map(str, rest))}",
        )
    }


def _respelled(leaves: dict[str, Any], ctx: WriteContext) -> dict[str, tuple[Status, str]]:
    """A same-format migration writes the learning_rate in the target release's spellings (Model Zoo
    2.2+ refuses 1.x's steps, decay_steps, ...): changed in `leaves`, and what changed, for the report."""
    amended: dict[str, tuple[Status, str]] = {}
    scale = "optimizer.loss_scaling_factor"
    if scale in leaves and respell_loss_scale(leaves[scale], ctx.version) != leaves[scale]:
        leaves[scale] = respell_loss_scale(leaves[scale], ctx.version)
        amended[scale] = (
            Status.LOSSY,
            f"written as {leaves[scale]!r}, Model Zoo {ctx.version}'s dynamic loss scaling "
            "(1.x's TensorFlow tf_dynamic had no min/max bounds)",
        )
    key = "optimizer.learning_rate"
    done = respell(leaves.get(key), ctx.version)
    if not (done.renamed or done.dropped):
        return amended
    leaves[key] = done.value
    said = f"written in Model Zoo {ctx.version}'s spellings: {', '.join(done.renamed)}" if done.renamed else ""
    # a key its class takes under no name was ignored by the releases that ran the file (gpt2 small's alpha)
    left = (
        (
            f"left out, no argument of its class (ignored by the releases that read it; {ctx.version} refuses extra "
            f"keys): {', '.join(done.dropped)}"
        )
        if done.dropped
        else ""
    )
    return {**amended, key: (Status.CONVERTED, "; ".join(filter(None, (said, left))))}


def _family_name(leaves: dict[str, Any], other: Mapping[str, Any]) -> list[ExtraEntry]:
    """A legacy file of a family the canonical fields do not cover, written for Model Zoo 2.4+: the model name
    its family's model takes (as the trainer layout writes it), or `missing` when no model takes it."""
    if not any(k.startswith("model.") for k in leaves):
        return []
    if not other["name"]:
        return [ExtraEntry("model.name", Status.MISSING, _unnamed(other["what"]))]
    leaves["model.name"] = other["name"]
    why = f"Model Zoo {FIRST_NAMED}+ converts a legacy file and builds the model its name gives; the source names none"
    return [
        added_for_target(
            "Cerebras Model Zoo",
            "model.name",
            other["name"],
            f"{why}: the {other['family']} model's name",
            ("model.family",),
        )
    ]


def _unnamed(what: str) -> str:
    return f"cannot tell the model name: {what} has no Model Zoo 2.4+ model; add it by hand if a release has one"


def _needed(leaves: dict[str, Any], layout_name: str | None) -> list[ExtraEntry]:
    section = "trainer.fit.train_dataloader" if layout_name == "trainer" else "train_input"
    missing: list[ExtraEntry] = []
    for key, why in NEEDED.items():
        if f"train_input.{key}" not in leaves and not (key == "data_dir" and "train_input.mixture" in leaves):
            missing.append(ExtraEntry(f"{section}.{key}", Status.MISSING, why.replace("train_input.", section + ".")))
    return missing
