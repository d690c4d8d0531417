"""A HuggingFace config.json: model_type and architectures first, the class's keys, an explicit null
where the class default would change the model (Mistral's window); JSON has no comments, so no
header."""

from __future__ import annotations

from typing import Any

from ..spec import WriteContext, WriteResult, Writer
from . import config_json
from .reader import HF


class HfWriter(Writer):
    format = "hf"

    def write(self, leaves: dict[str, Any], ctx: WriteContext) -> WriteResult:
        config = {k[len(HF) + 1 :]: v for k, v in leaves.items() if k.startswith(HF + ".")}
        if "model_type" not in config:  # no class: transformers cannot load any of it, so there is nothing to write
            return WriteResult({})
        wrapper = ctx.source_shape.get("wrapper")
        if isinstance(wrapper, dict):  # hf2hf of a multimodal file: its decoder nested again, the rest carried
            document, moved = config_json.rewrap(
                config, str(wrapper["name"]), list(wrapper["outer"]), ctx.source_shape.get("class_defaults")
            )
            return WriteResult(document, target_paths=moved)
        # a model with a kv head per head, as a class whose default has fewer (not hf2hf: the file says what it says)
        extra = config_json.every_head_its_own(config) if not ctx.source_shape else []
        lifted = ctx.source_shape.get("lifted")
        if isinstance(lifted, dict):  # hf2hf of a transformers 5 file: its rope_parameters put back where they were
            config, moved = config_json.unlift(config, lifted)
        else:
            moved = {f"{HF}.{key}": key for key in config}
        return WriteResult(
            config_json.document(config, ctx.source_shape.get("class_defaults")),
            target_paths=moved,
            extra_entries=extra,
        )

    def serialise(self, document: dict[str, Any]) -> str:
        return config_json.dump(document)


WRITER = HfWriter()
