"""A HuggingFace config.json (or the model folder holding one), read under `hf.`: the report names
its keys as the file spells them (`rope_parameters.rope_theta` for a transformers 5 file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core.errors import InputError
from ...io.documents import flatten, key_line, parse_json, read_text
from ...knowledge.source import Source
from ..spec import ModelConfig, Reader
from . import config_json
from .model_types import PREFIX, Wrapper, table, unmapped_reason

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
            raise InputError(
                "not an HF config.json: it has no model_type (transformers cannot load it)",
                file=name,
                line=None,
                hint="give the config.json of a transformers model",
            )
        if kind not in table().known():
            return _unmapped(tree, kind, name, text)
        wrapper = table().wrappers.get(kind)
        nested: dict[str, str] = {}
        if wrapper is not None:
            tree, nested, clash = unwrap(tree, wrapper, name, text)
            warnings = [
                f"{k} is given beside {wrapper.text_config} and in it: the decoder's {k} is read" for k in clash
            ]
        config, lifted = config_json.lift_rope_parameters(tree)
        config = config_json.mark_explicit_nulls(config)
        source = Source("hf", {HF: config}, [name], {name: text} if text else {}, {HF: name})
        if wrapper is not None:
            source.warnings.extend(warnings)
        for leaf in flatten({HF: config}):
            key = leaf[len(HF) + 1 :]
            written = config_json.written_as(key, lifted)
            head = written.split(".", 1)[0]
            source.aliases[leaf] = f"{nested[head]}.{written}" if head in nested else written
        source.meta["class_defaults"] = config_json.left_to_class(config)  # for hf2hf (document)
        if any(where.startswith(config_json.PER_KIND) for where in lifted.values()):
            # hf2hf: rope_parameters per layer type are written again as the file has them (config_json.unlift): no
            # 4.x key says a dict per layer type; a flat rope_parameters becomes the 4.x pair both releases read
            source.meta["lifted"] = lifted
        if wrapper is not None:
            why = ("family_not_supported", {"what": wrapper.what})
            for key in wrapper.aside:
                if key in config:
                    source.set_aside[f"{HF}.{key}"] = why
            source.meta["blocks_aside"] = [f"{HF}.{key}" for key in wrapper.aside if isinstance(config.get(key), dict)]
            # for hf2hf: the file's own shape, nested again by the writer
            source.meta["wrapper"] = {
                "name": wrapper.name,
                "outer": [k for k in config if k not in nested and k != "model_type"],
            }
        return source

    @staticmethod
    def _sniff(tree: dict[str, Any]) -> float | None:
        """A config.json names its model_type; a known one is surely ours."""
        kind = tree.get("model_type")
        if not isinstance(kind, str):
            return 0.0
        return 1.0 if kind in table().known() else 0.6

    sniff = _sniff


def _unmapped(tree: dict[str, Any], kind: str, name: str, text: str) -> Source:
    """A model_type no row of mappings/hf.yaml maps: its config.json is set aside whole as a family the
    canonical fields do not describe (hf2hf carries it as written, saying it was not checked; another
    format with an architecture refuses it, naming why; one without drops it), `what` saying why."""
    source = Source("hf", {HF: dict(tree)}, [name], {name: text} if text else {}, {HF: name})
    for leaf in flatten({HF: tree}):
        source.aliases[leaf] = leaf[len(HF) + 1 :]
    what = unmapped_reason(kind)
    source.set_aside[HF] = ("family_not_supported", {"what": what})
    source.meta["unsupported_family"] = {"family": kind, "what": what, "name": kind}
    return source


def unwrap(
    tree: dict[str, Any], wrapper: Wrapper, name: str, text: str
) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """A multimodal config.json as its decoder's: text_config's keys at the top (the wrapper's shared keys
    where text_config leaves them out), the rest beside them as the file has it. Returns (config, key ->
    the block that holds it in the file, top-level keys text_config gives too: the decoder's is read)."""
    inner = tree.get(wrapper.text_config, {})  # none: the wrapper's default decoder, as transformers builds it
    if not isinstance(inner, dict):
        raise InputError(
            f"{wrapper.text_config} of HF model_type {wrapper.name!r} is not a JSON object",
            file=name,
            line=key_line(text, wrapper.text_config) if text else None,
            key=wrapper.text_config,
            hint=f"give the {wrapper.text} decoder's settings as an object",
        )
    outer = {k: v for k, v in tree.items() if k not in (wrapper.text_config, "model_type")}
    shared = {k: outer.pop(k) for k in wrapper.shared if k in outer and k not in inner}
    clash = sorted(k for k in set(outer) & set(inner) if outer[k] != inner[k])
    config = {"model_type": wrapper.text, **shared, **outer, **{k: v for k, v in inner.items() if k != "model_type"}}
    return config, {k: wrapper.text_config for k in inner if k != "model_type"}, clash


READER = HfReader()
