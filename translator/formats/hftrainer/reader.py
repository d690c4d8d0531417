"""A Hugging Face TrainingArguments train file (YAML or JSON, as `HfArgumentParser.parse_yaml_file` /
`parse_json_file`, LLaMA-Factory, TRL and axolotl take them), read with the DeepSpeed config it runs with.

The DeepSpeed config is read only when the user names it (`--with ds_config.json`, or a `deepspeed:` mapping
written in the file): a `deepspeed:` path in the file is never opened (the report says how to give it). Read
together, the config's leaves sit under `deepspeed.` (the report names them as the JSON file spells them),
every "auto" gets the value transformers fills in (auto.py), and a stated value the TrainingArguments
contradict is refused, as transformers refuses it. An axolotl file's keys that are TrainingArguments under
another name (dialects.py) are read as those, named as axolotl spells them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.errors import InputError
from ...io.documents import flatten, key_line, parse_json, parse_yaml, read_text
from ...knowledge.source import Source, note_duplicates
from ...io.yamlread import Duplicate
from ..spec import ModelConfig, Reader
from .auto import AUTO, Mismatch, resolve
from .dialects import dialect_of, read_as, renamed, runtime, undeclared
from .schedule import BY_SAMPLES  # (the engine adds: or --set train.steps=VALUE)

FORMAT = "hftrainer"
DS_KEYS = frozenset(
    {
        "train_batch_size",
        "train_micro_batch_size_per_gpu",
        "zero_optimization",
        "optimizer",
        "scheduler",
        "fp16",
        "bf16",
        "gradient_clipping",
        "steps_per_print",
        "wall_clock_breakdown",
        "zero_allow_untested_optimizer",
        "gradient_accumulation_steps",
        "bfloat16",
        "amp",
        "activation_checkpointing",
    }
)
TA_MARKERS = frozenset(
    {
        "per_device_train_batch_size",
        "learning_rate",
        "num_train_epochs",
        "lr_scheduler_type",
        "output_dir",
        "max_steps",
        "warmup_ratio",
        "warmup_steps",
        "logging_steps",
        "save_steps",
        "micro_batch_size",
        "num_epochs",
        "base_model",
        "model_name_or_path",
        "finetuning_type",
        "eval_strategy",
        "deepspeed",
    }
)  # `deepspeed` names the DeepSpeed config: never a key of one
NOT_READ = (
    "names a DeepSpeed config, which is not read unless you name it: give it with --with {path} to read its ZeRO "
    "stage and an optimizer or scheduler block that replaces the Trainer's ('auto' values filled as transformers "
    "fills them); until then the run's batch and schedule are the TrainingArguments'"
)


@dataclass
class TrainerSource(Source):
    """A Source whose `deepspeed.*` leaves are found in the DeepSpeed file, spelled as it spells them."""

    ds_file: str | None = None
    ds_text: str = ""
    renames: dict[str, str] = field(default_factory=dict)  # TrainingArguments name -> as the file spells it

    def file_of(self, leaf: str) -> str | None:
        if self.ds_file and leaf.startswith("deepspeed.") and self.meta.get("deepspeed_file"):
            return self.ds_file
        return super().file_of(leaf)

    def line_of(self, leaf: str) -> int | None:
        if self.ds_file and leaf.startswith("deepspeed.") and self.meta.get("deepspeed_file"):
            return key_line(self.ds_text, leaf[len("deepspeed.") :]) if self.ds_text else None
        return super().line_of(leaf)


def is_deepspeed_config(tree: dict[str, Any]) -> bool:
    return bool(set(tree) & DS_KEYS) and not set(tree) & TA_MARKERS


def _parse(name: str) -> tuple[dict[str, Any], str, list[Duplicate]]:
    text = read_text(name)
    if name.endswith(".json"):
        return parse_json(text, name), text, []
    duplicates: list[
        Duplicate
    ] = []  # yaml.safe_load (HfArgumentParser.parse_yaml_file, TRL, LLaMA-Factory): the last wins
    return parse_yaml(text, name, duplicates=duplicates), text, duplicates


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


class TrainerReader(Reader):
    format = FORMAT

    def read(self, paths: list[str], *, layout: str | None = None, model_config: ModelConfig = None) -> Source:
        args: tuple[str, dict[str, Any], str] | None = None
        ds: tuple[str, dict[str, Any], str] | None = None
        repeated: list[Duplicate] = []
        for path in paths:
            name = str(path)
            tree, text, duplicates = _parse(name)
            if is_deepspeed_config(tree):
                if ds is not None:
                    raise InputError(f"two DeepSpeed configs ({ds[0]} and this one); a run has one", file=name)
                ds = (name, tree, text)
            elif args is not None:
                raise InputError(
                    f"two TrainingArguments files ({args[0]} and this one): give one, and its DeepSpeed "
                    "config with --with",
                    file=name,
                )
            else:
                args, repeated = (name, tree, text), duplicates
        if args is None:
            raise InputError(
                "a DeepSpeed config alone: give the TrainingArguments file it runs with, and this one with "
                "--with (or read it as deepspeed)",
                file=str(paths[0]),
            )
        name, tree, text = args
        source = self.build(tree, name, text, ds)
        if repeated:
            note_duplicates(source, tree, repeated, "HfArgumentParser's yaml.safe_load", name)
        return source

    def from_tree(
        self, tree: dict[str, Any], *, name: str = "<config>", text: str = "", model_config: ModelConfig = None
    ) -> Source:
        return self.build(tree, name, text, None)

    def build(self, tree: dict[str, Any], name: str, text: str, ds: tuple[str, dict[str, Any], str] | None) -> Source:
        written = dict(tree)
        dialect = dialect_of(written)
        tree, renames = renamed(written, dialect)
        notes: dict[str, str] = undeclared(tree, dialect, written)
        meta: dict[str, Any] = {"dialect": dialect}
        named = tree.get("deepspeed")
        ds_name, ds_text = None, ""
        if ds is not None:
            ds_name, ds_tree, ds_text = ds
            if isinstance(named, dict):
                raise InputError(
                    f"{ds_name} given with --with, and the file writes its DeepSpeed config inline: give one",
                    file=name,
                    line=key_line(text, "deepspeed") if text else None,
                )
            if isinstance(named, str) and Path(named).name != Path(ds_name).name:
                meta["deepspeed_named"] = named
            tree["deepspeed"] = copy.deepcopy(ds_tree)
            meta["deepspeed_file"] = ds_name
        elif isinstance(named, str):
            meta["deepspeed_named"] = named
            notes["deepspeed"] = NOT_READ.format(path=named)
        unresolved: dict[str, str] = runtime(dialect, tree)
        meant = read_as(dialect, tree)  # read as the value the tool turns it into; the rest is named lossy
        tree.update({key: value for key, (value, _) in meant.items()})
        if _positive(tree.get("max_steps")) and tree.get("num_train_epochs") is not None:
            notes["num_train_epochs"] = "the Trainer ignores it: max_steps > 0 is the run's length (trainer.py)"
        elif not _positive(tree.get("max_steps")):  # an epoch-based run: its steps need the dataset's size
            epochs = tree.get("num_train_epochs", 3.0)
            meta["unsupplied"] = {
                "train.steps": f"the Trainer trains num_train_epochs {epochs!r} x the update steps of an "
                f"epoch, which the dataset's size decides: {BY_SAMPLES}"
            }
        layout = "concrete"
        if isinstance(tree.get("deepspeed"), dict):
            inline = tree["deepspeed"] = copy.deepcopy(tree["deepspeed"])
            layout = "auto" if AUTO in flatten(inline).values() else layout
            try:
                filled, held = resolve(inline, tree)
            except Mismatch as exc:
                where = ds_name or name
                raise InputError(str(exc), file=where, line=key_line(ds_text, exc.key) if ds_text else None) from None
            notes.update({f"deepspeed.{k}": why for k, why in filled.items()})
            unresolved.update({f"deepspeed.{k}": why for k, why in held.items()})
            for leaf, value in flatten(inline, "deepspeed.").items():
                if value == "auto" and leaf not in unresolved and leaf not in notes:
                    unresolved[leaf] = (
                        '"auto": filled in by the launcher (accelerate) from its own arguments at run time'
                    )
        aliases = {leaf: renames.get(leaf, leaf) for leaf in flatten(tree) if leaf in renames}
        if ds_name:
            aliases.update({leaf: leaf[len("deepspeed.") :] for leaf in flatten(tree) if leaf.startswith("deepspeed.")})
        source = TrainerSource(
            FORMAT,
            tree,
            [name] + ([ds_name] if ds_name else []),
            {name: text} if text else {},
            {k: name for k in tree},
            notes=notes,
            meta=meta,
            aliases=aliases,
            unresolved=unresolved,
            placeholders=frozenset(unresolved),
            ds_file=ds_name,
            ds_text=ds_text,
            renames=renames,
        )
        if ds_name:
            source.texts[ds_name] = ds_text
        source.read_as = {key: why for key, (_, why) in meant.items()}
        source.layout = layout
        return source

    @staticmethod
    def _sniff(tree: dict[str, Any]) -> float | None:
        hits = len(set(tree) & TA_MARKERS)
        if hits >= 2 and isinstance(tree.get("deepspeed"), str):
            return 1.0  # the path of its DeepSpeed config: NeoX's `deepspeed` is a flag, DeepSpeed's JSON has none
        return min(1.0, 0.3 * hits) if hits >= 2 else None

    sniff = _sniff


READER = TrainerReader()
