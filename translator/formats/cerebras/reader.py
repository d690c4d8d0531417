"""Cerebras Model Zoo YAML reader, both layouts.

The mapping table is keyed on the legacy layout, as Cerebras' own converter is. A trainer file is
read into that legacy view (Source.aliases keep the trainer path of every leaf, so reports and
errors name what the user wrote; from_trainer.py, data in mappings/cerebras-layouts.yaml). What the
view cannot say about the file's own shape (trainer places it leaves out, the schedule as spelled)
goes to Source.meta for a same-format write.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ...core.errors import InputError
from ...io.documents import flatten, parse_yaml, read_text, unflatten
from ...knowledge.source import Source, note_duplicates
from ...io.yamlread import Duplicate
from ..spec import ModelConfig, Reader
from .from_trainer import View, from_trainer

_SHARED = ("model.", "train_input.", "eval_input.")  # one history record for both layouts
SECTIONS = ("train_input", "eval_input", "model", "optimizer", "runconfig", "sparsity", "wandb")


class CerebrasReader(Reader):
    format = "cerebras"

    def read(self, paths: list[str], *, layout: str | None = None, model_config: ModelConfig = None) -> Source:
        if len(paths) != 1:
            raise InputError(f"a Cerebras config is one file; got {len(paths)}", file=str(paths[-1]))
        name = str(paths[0])
        text = read_text(name)
        duplicates: list[Duplicate] = []
        tree = parse_yaml(text, name, duplicates=duplicates)
        source = self.from_tree(tree, name=name, text=text)
        if duplicates:  # Model Zoo up to 2.4 loads params with yaml.safe_load: the last value wins (versions.settle)
            note_duplicates(source, tree, duplicates, "Model Zoo up to 2.4 (yaml.safe_load)")
        if layout is not None and layout != source.layout:
            raise InputError(f"this is a Cerebras {source.layout}-layout file, not {layout}", file=name, line=1)
        return source

    def from_tree(
        self, tree: dict[str, Any], *, name: str = "<config>", text: str = "", model_config: ModelConfig = None
    ) -> Source:
        """The legacy view of a parsed Cerebras config."""
        if self.detect_layout(tree) == "trainer":
            return _trainer_source(tree, name, text)
        for section in SECTIONS:
            if section in tree and tree[section] is not None and not isinstance(tree[section], dict):
                raise InputError(f"section {section!r} must be a mapping", file=name)
        texts = {name: text} if text else {}
        notes = _read_as_tf(tree)
        return Source("cerebras", tree, [name], texts, {k: name for k in tree}, layout="legacy", notes=notes)

    def detect_layout(self, tree: dict[str, Any]) -> str:
        return "trainer" if "trainer" in tree else "legacy"

    @staticmethod
    def history_key(view: str, written: str | None) -> tuple[str, ...]:
        """The history keys model and data settings by their legacy names in both layouts (the
        trainer's own settings by their trainer paths)."""
        if written is None or view.startswith(_SHARED):
            return (view,) if written is None else (view, written)
        return (written, view)

    @staticmethod
    def release_keys(tree: dict[str, Any], release: str, leaves: list[str]) -> dict[str, str]:
        """Model Zoo 2.4+ reads a legacy file through convert_legacy_params_to_trainer_params: each leaf
        by the trainer key it goes to, an optimizer's settings as its class's arguments (which
        cerebras.pytorch reads: `optimizer.weight_decay` is trainer.init.optimizer.AdamW.weight_decay)."""
        from ...knowledge.schema import older
        from .formulas import FIRST_NAMED

        if "trainer" in tree or older("cerebras", release, FIRST_NAMED):
            return {}
        optimizer = tree.get("optimizer")
        cls = optimizer.get("optimizer_type") if isinstance(optimizer, dict) else None
        out = {}
        for leaf in leaves:
            place = _trainer_place(leaf)
            if place is not None and place.startswith(_OPTIMIZER) and isinstance(cls, str):
                place = f"{_OPTIMIZER}{cls}.{place[len(_OPTIMIZER) :]}"  # as to_trainer's optimizer class
            if place is not None:
                out[leaf] = place
        return out


_OPTIMIZER = "trainer.init.optimizer."


@lru_cache(maxsize=1024)  # every output's validation asks it of the same few keys (an optimizer's settings)
def _trainer_place(leaf: str) -> str | None:
    from .to_trainer import trainer_place

    return trainer_place(leaf)


READER = CerebrasReader()

# Model Zoo 1.x's TensorFlow models (their data processors read TFRecords/TFDS) pass these keys through
# float() in set_defaults (R_1.6.0..1.9 transformers/tf/{bert,gpt2,gptj,linformer,transformer}/utils.py):
# a YAML 1.1 text such as `1e-5` is the number there. The PyTorch models take the text as it is.
_TF_PROCESSOR_ENDS = ("TfRecordsProcessor", "TfdsTextDataProcessor")
_TF_FLOATED = ("layer_norm_epsilon",)
_FLOAT_TEXT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)$")


def _read_as_tf(tree: dict[str, Any]) -> dict[str, str]:
    """A TensorFlow model's float()-read key written as text, read as the number its code makes of it."""
    processor = (
        (tree.get("train_input") or {}).get("data_processor") if isinstance(tree.get("train_input"), dict) else None
    )
    model = tree.get("model")
    if not (isinstance(processor, str) and processor.endswith(_TF_PROCESSOR_ENDS) and isinstance(model, dict)):
        return {}
    notes: dict[str, str] = {}
    for key in _TF_FLOATED:
        value = model.get(key)
        if isinstance(value, str) and _FLOAT_TEXT.match(value.strip()):
            model[key] = float(value)
            notes[f"model.{key}"] = (
                f"the text {value!r} (YAML 1.1 reads a float without a dot as text): read as {float(value)!r}, "
                f"as the TensorFlow model's set_defaults reads it (float())"
            )
    return notes


def _trainer_source(data: dict[str, Any], name: str, text: str) -> Source:
    trainer = data["trainer"]
    if isinstance(trainer, list):
        raise InputError(
            f"`trainer` is a list of {len(trainer)} trainer configs (multi-phase training); neoconv "
            "translates one phase at a time: put each list item in a file of its own",
            file=name,
            line=1,
        )
    if not isinstance(trainer, dict) or not isinstance(trainer.get("init", {}), dict):
        raise InputError("`trainer` must be a mapping with an `init` section", file=name, line=1)
    others = [k for k in data if k not in ("trainer", "runconfig")]
    if others:
        raise InputError(
            f"top-level {', '.join(map(repr, others))} beside `trainer`: a trainer-layout file has only "
            "`trainer` and a `runconfig` (legacy sections belong in a legacy-layout file)",
            file=name,
            line=1,
        )
    runconfig = data.get("runconfig")
    if runconfig is not None and not isinstance(runconfig, dict):
        raise InputError("section 'runconfig' must be a mapping", file=name, key="runconfig")
    view = from_trainer(trainer)
    if runconfig:
        _merge_runconfig(view, runconfig)
    tree = unflatten(view.leaves)
    texts = {name: text} if text else {}
    return Source(
        "cerebras",
        tree,
        [name],
        texts,
        {k: name for k in tree},
        layout="trainer",
        notes=view.notes,
        aliases=view.aliases,
        meta={"absent_places": view.absent, "schedule": view.schedule, "class_order": view.class_order},
        written=data,
    )


def _merge_runconfig(view: View, runconfig: dict[str, Any]) -> None:
    """A `runconfig` beside `trainer` is run as Model Zoo 2.3+ runs it (run_utils, the CLI's
    inject_cli_args_to_trainer_params): converted to its trainer places and merged over the trainer's
    (merge_recursively: its values win, lists are joined). In the legacy view it is read as written."""
    for rel, value in flatten(runconfig).items():
        leaf = f"runconfig.{rel}"
        if leaf in view.leaves:
            trainer_path = view.aliases.get(leaf, leaf)
            if isinstance(value, list) and isinstance(view.leaves[leaf], list):
                value = [*view.leaves[leaf], *value]
                view.notes[leaf] = f"joined with {trainer_path}'s items, as Model Zoo merges the runconfig"
            else:
                view.notes[leaf] = (
                    f"over {trainer_path}'s {view.leaves[leaf]!r}: Model Zoo merges the runconfig over the trainer"
                )
        view.leaves[leaf] = value
        view.aliases.pop(leaf, None)  # as written
