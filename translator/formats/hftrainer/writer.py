"""TrainingArguments YAML (what `HfArgumentParser.parse_yaml_file`, LLaMA-Factory and TRL take) plus the DeepSpeed
config it runs with: the table's `deepspeed.*` leaves, concrete values the Trainer checks against its own
(trainer_config_process), written beside the output as `<output>.ds_config.json` and named by `deepspeed:`. Without
an output file (stdout) the DeepSpeed config is written inline (`deepspeed:` takes a mapping since 4.41).

The document keeps the DeepSpeed config as a mapping under `deepspeed`, so reading it back (and the library's
`translate(...).config`) sees the pair; only the text written to the output names the side file instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core.report import Status
from ...io.documents import dump_json, dump_yaml, unflatten
from ..spec import ExtraEntry, WriteContext, WriteResult, Writer, added_for_target
from .auto import placeholders, run_length
from .release import move_warmup, reschedule, unplaceable

DS = "deepspeed"
SUFFIX = ".ds_config.json"


def side_name(output: str | None) -> str | None:
    """The DeepSpeed config written beside an output is named after it (out/b.yaml: out/b.ds_config.json)."""
    if not output:
        return None
    stem, dot, _ = str(output).rpartition(".")
    return f"{stem if dot and stem else output}{SUFFIX}"


@dataclass
class TrainerWriteResult(WriteResult):
    side_name: str | None = None  # the DeepSpeed config's file name, which `deepspeed:` names in the text


class TrainerWriter(Writer):
    format = "hftrainer"

    def write(self, leaves: dict[str, Any], ctx: WriteContext) -> WriteResult:
        from ...knowledge.mapping import load_table

        leaves = {k: v for k, v in leaves.items() if v is not None}
        moved: dict[str, str] = {}
        amended: dict[str, tuple[Status, str]] = {}
        if ctx.source_format == self.format:  # another release of the same format: what that release takes
            amended = reschedule(leaves, ctx.version, ctx.source_version)
            moved, warmup = move_warmup(leaves, ctx.version)
            amended.update(warmup)
        tree = unflatten(leaves)
        extra = _accumulation(tree) if ctx.source_format != self.format else []
        order = load_table(self.format).order
        document = {key: tree.pop(key) for key in order if key in tree}
        document.update(tree)
        ds = document.pop(DS, None)
        name = side_name(ctx.output)
        if isinstance(ds, dict) and ds:
            ds.setdefault("zero_optimization", {"stage": 0})
            if ctx.layout == "auto":
                placeholders(ds, document, ctx.version)
            filled = run_length(ds, document, ctx.version, auto=ctx.layout == "auto")
            amended.update({f"{DS}.{key}": (Status.CONVERTED, why) for key, why in filled.items()})
            document[DS] = _ordered(ds)
            if name:
                extra.append(
                    added_for_target(
                        "the HF Trainer",
                        DS,
                        name,
                        "the DeepSpeed config, written beside this file, "
                        "that the Trainer runs with (its values are the TrainingArguments')",
                    )
                )
        elif isinstance(ds, str):
            document[DS] = ds
        header = self.header(document, ctx)
        side = {name: dump_json(document[DS])} if name and isinstance(document.get(DS), dict) else {}
        if side:
            header.append(f"# The DeepSpeed config is {name}, written beside this file")
        return TrainerWriteResult(
            document,
            header,
            side_files=side,
            extra_entries=extra,
            side_name=name if side else None,
            amended=amended,
            target_paths=moved,
        )

    def unplaceable(self, leaf: str, layout: str | None, version: str | None = None) -> str | None:
        """A field the target release's TrainingArguments does not have (same-format translation)."""
        return unplaceable(leaf, version)

    def header(self, document: dict[str, Any], ctx: WriteContext) -> list[str]:
        release = f" for transformers {ctx.version}" if ctx.version else ""  # what `neoconv validate --version` checks
        return [f"# HF TrainingArguments{release} written by neoconv" + (f" from {ctx.sources}" if ctx.sources else "")]

    def serialise(self, document: dict[str, Any]) -> str:
        return dump_yaml(document)

    def dump(self, result: WriteResult) -> str:
        document = result.document
        name = result.side_name if isinstance(result, TrainerWriteResult) else None
        if name and isinstance(document.get(DS), dict):
            document = {**document, DS: name}
        return "".join(line + "\n" for line in result.header) + self.serialise(document)


def _accumulation(tree: dict[str, Any]) -> list[ExtraEntry]:
    """A micro batch written without an accumulation the source states (a DeepSpeed config whose global batch is
    its micro batch, or that has none) runs with the Trainer's gradient_accumulation_steps 1: stated, so the file
    says the run the source meant (a global batch other than the micro batch, without the world size, leaves the
    accumulation missing instead)."""
    found = tree.get(DS)
    ds: dict[str, Any] = found if isinstance(found, dict) else {}
    micro, total = tree.get("per_device_train_batch_size"), ds.get("train_batch_size")
    if micro is None or "gradient_accumulation_steps" in tree or total not in (None, micro):
        return []
    tree["gradient_accumulation_steps"] = 1
    if ds:
        ds["gradient_accumulation_steps"] = 1
    return [
        added_for_target(
            "the HF Trainer",
            "gradient_accumulation_steps",
            1,
            "the Trainer's default: one micro batch per optimizer step on every GPU",
            ("batch.grad_accum",),
        )
    ]


def _ordered(ds: dict[str, Any]) -> dict[str, Any]:
    from ...knowledge.mapping import load_table

    out = {key: ds.pop(key) for key in load_table("deepspeed").order if key in ds}
    out.update(ds)
    return out


WRITER = TrainerWriter()
