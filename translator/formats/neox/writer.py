"""GPT-NeoX YAML writer: the target leaves as one file, plus what NeoX needs to load it that no
canonical value gives (said in the header and, as `defaulted` entries, in the report)."""

from __future__ import annotations

from typing import Any

from ...core.errors import InputError
from ...io.documents import dump_yaml, unflatten
from ...knowledge.schema import schema_index
from ...core.report import Status
from ..spec import ExtraEntry, WriteContext, WriteResult, Writer, added_for_target

TITLE = "GPT-NeoX"


class NeoxWriter(Writer):
    format = "neox"

    def write(self, leaves: dict[str, Any], ctx: WriteContext) -> WriteResult:
        document = unflatten({key: _typed(key, value) for key, value in leaves.items()})
        _refused(document)
        added = _loadable(document)
        # said twice: in the file for its readers, and in the report, where every difference is named
        header = self.header(document, ctx) + [
            f"# added for NeoX to load it: {e.target_key}: {_shown(e)}" for e in added
        ]
        return WriteResult(document, header=header, extra_entries=added + _unloadable(document))

    def header(self, document: dict[str, Any], ctx: WriteContext) -> list[str]:
        return ["# GPT-NeoX config written by neoconv" + (f" from {ctx.sources}" if ctx.sources else "")]

    def serialise(self, document: dict[str, Any]) -> str:
        return dump_yaml(document)


WRITER = NeoxWriter()


def _refused(document: dict[str, Any]) -> None:
    """A model NeoX refuses to build is not written: NeoXArgs.validate_values asserts the heads divide
    hidden_size (but for Mamba), where a source with its own head width (Megatron's --kv-channels,
    multi-latent attention) need not."""
    hidden, heads = document.get("hidden_size"), document.get("num_attention_heads")
    if isinstance(hidden, int) and isinstance(heads, int) and heads > 0 and hidden % heads:
        # NeoX exempts Mamba; RWKV and gMLP blocks are left to the relation canonical.yaml gives them
        if not any(kind in str(document.get("attention_config", "")) for kind in ("mamba", "rwkv", "gmlp")):
            raise InputError(
                f"GPT-NeoX cannot build this model: hidden_size {hidden} is not divisible by num_attention_heads "
                f"{heads}, which NeoX asserts (validate_values; its heads are hidden_size / num_attention_heads wide)",
                key="num_attention_heads",
                hint="a source whose heads have their own width (--kv-channels, multi-latent attention) has no "
                "GPT-NeoX form",
            )


def _typed(key: str, value: Any) -> Any:
    """NeoX's validate_types refuses a float in an int field (rotary_emb_base: 10000.0 crashes)."""
    node = schema_index("neox").node(key)
    kinds = node.get("type") if node else None
    kinds = {kinds} if isinstance(kinds, str) else set(kinds or ())
    if isinstance(value, float) and value.is_integer() and "integer" in kinds and "number" not in kinds:
        return int(value)
    return value


def _shown(entry: ExtraEntry) -> str:
    values = entry.values or {}
    value = next(iter(values["written"].values()))
    return f"{'null' if value is None else value} ({values['why']})"


def _loadable(document: dict[str, Any]) -> list[ExtraEntry]:
    """What NeoX needs to load a config that no canonical value gives (NeoXArgs.from_ymls,
    arguments.py), added to the document; an entry per addition for the report (and the header)."""
    added: list[ExtraEntry] = []
    if "train_batch_size" in document and "gradient_accumulation_steps" not in document:
        # NeoX's accumulation default is 1, not "derive it": with a micro batch that would fail its
        # batch check; null lets NeoX derive it from train_batch_size / micro / data-parallel size
        derive = "train_micro_batch_size_per_gpu" in document
        document["gradient_accumulation_steps"] = None if derive else 1
        why = (
            "NeoX derives it from the global and micro batch"
            if derive
            else "the global batch is the micro batch x data-parallel size"
        )
        added.append(
            added_for_target(
                TITLE,
                "gradient_accumulation_steps",
                document["gradient_accumulation_steps"],
                why,
                ("batch.grad_accum",),
            )
        )
    bf16 = str(document.get("precision", "")).lower() in ("bfloat16", "bf16") or (document.get("bf16") or {}).get(
        "enabled"
    )
    if bf16 and not isinstance(document.get("zero_optimization"), dict):
        # NeoX reads zero_optimization["stage"] for bf16 before filling its ZeRO defaults; stage 0 shards nothing
        document["zero_optimization"] = {"stage": 0}
        added.append(
            added_for_target(
                TITLE,
                "zero_optimization.stage",
                0,
                "NeoX needs a ZeRO block to load a bf16 config",
                ("parallel.zero_stage",),
            )
        )
    return added


def _unloadable(document: dict[str, Any]) -> list[ExtraEntry]:
    """What NeoX refuses to load without and only the user can give: an optimizer block without its
    type (validate_types: "must contain key 'type'"), when the source's optimizer is none NeoX has a
    name for (a fork's, which the report names `unknown`)."""
    optimizer = document.get("optimizer")
    if isinstance(optimizer, dict) and "type" not in optimizer:
        why = (
            "NeoX refuses an optimizer block without its type (validate_types) and the source's optimizer is "
            "none NeoX names: give --set optim.type=NAME (adamw for NeoX's Adam)"
        )
        return [ExtraEntry("optimizer.type", Status.MISSING, why, ("optim.type",))]
    return []
