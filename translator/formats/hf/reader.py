"""A HuggingFace config.json (or the model folder holding one), read under `hf.`: the report names
its keys as the file spells them (`rope_parameters.rope_theta` for a transformers 5 file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import InputError
from ...io import flatten, key_line, parse_json, read_text
from ...source import Source
from ..spec import ModelConfig, Reader
from . import config_json
from .model_types import PREFIX, table

HF = PREFIX.rstrip(".")
CONFIG_JSON = "config.json"


class HfReader(Reader):
    format = "hf"

    def read(self, paths: list[str], *, layout: str | None = None, model_config: ModelConfig = None) -> Source:
        if len(paths) != 1:
            raise InputError(f"an HF config is one config.json; got {len(paths)} files", file=str(paths[-1]))
        path = Path(paths[0])
        if path.is_dir():
            path = path / CONFIG_JSON  # a model folder: transformers reads its config.json
        name = str(path)
        text = read_text(name)
        return self.from_tree(parse_json(text, name), name=name, text=text)

    def from_tree(
        self, tree: dict[str, Any], *, name: str = "<config>", text: str = "", model_config: ModelConfig = None
    ) -> Source:
        kind = tree.get("model_type")
        if not isinstance(kind, str):
            raise InputError("not an HF config.json: it has no model_type (transformers cannot load it)",
                             file=name, line=None, hint="give the config.json of a transformers model")  # fmt: skip
        if kind not in table().types:
            raise InputError(
                f"HF model_type {kind!r} is not one neoconv maps ({', '.join(table().types)})",
                file=name, line=key_line(text, "model_type") if text else None, key="model_type",
            )  # fmt: skip
        config, lifted = config_json.lift_rope_parameters(tree)
        config = config_json.mark_explicit_nulls(config)
        source = Source("hf", {HF: config}, [name], {name: text} if text else {}, {HF: name})
        for leaf in flatten({HF: config}):
            source.aliases[leaf] = config_json.written_as(leaf[len(HF) + 1 :], lifted)
        return source

    @staticmethod
    def _sniff(tree: dict[str, Any]) -> float | None:
        """A config.json names its model_type; a known one is surely ours."""
        kind = tree.get("model_type")
        if not isinstance(kind, str):
            return 0.0
        return 1.0 if kind in table().types else 0.6

    sniff = _sniff


READER = HfReader()
