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
from .model_types import PREFIX, table, unmapped_reason
from .multimodal import LEAF, carried, decoder_hint, mrope_leaves, nested_own, refusal, unwrap

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
        _refuse_diffusers(tree, name, text)
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
        original = tree
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
            for key in [*wrapper.aside, *(mrope_leaves(config) if wrapper.mrope else ()), *nested_own(config, wrapper)]:
                if key in config or "." in key:
                    source.set_aside[f"{HF}.{key}"] = why
            source.meta["blocks_aside"] = [f"{HF}.{key}" for key in wrapper.aside if isinstance(config.get(key), dict)]
            # for hf2hf: the file's own shape, nested again by the writer (flat: a 4.x file, the decoder's keys at the top)
            source.meta["wrapper"] = {
                "name": wrapper.name,
                "outer": [
                    k
                    for k in config
                    if config_json.written_as(k, lifted).split(".")[0] not in nested and k != "model_type"
                ],
                "flat": not nested,
            }
            if (
                not wrapper.alone
            ):  # one model: a format of decoder language models refuses it, one of held_by carries it
                source.meta["unsupported_family"] = refusal(wrapper, not nested)
                source.meta["any_target"] = carried(wrapper, original, source.aliases)
        return source

    @staticmethod
    def _sniff(tree: dict[str, Any]) -> float | None:
        """A config.json names its model_type; a known one is surely ours."""
        kind = tree.get("model_type")
        if not isinstance(kind, str):
            return 0.0
        return 1.0 if kind in table().known() else 0.6

    sniff = _sniff


# the keys diffusers' ConfigMixin writes into every config.json it saves (configuration_utils.py, to_json_string)
DIFFUSERS_KEYS = ("_class_name", "_diffusers_version")


def _refuse_diffusers(tree: dict[str, Any], name: str, text: str) -> None:
    """A diffusers model's config.json (a FluxTransformer, a Wan or UNet model) is not a transformers config:
    AutoConfig cannot load it, so nothing of it describes a language model neoconv could check or carry."""
    key = next((k for k in DIFFUSERS_KEYS if k in tree), None)
    if key is None:
        return
    cls, release = tree.get("_class_name"), tree.get("_diffusers_version")
    what = ", ".join(
        f"{label} {value}" for label, value in (("class", cls), ("diffusers", release)) if isinstance(value, str)
    )
    raise InputError(
        f"a diffusers model config ({what or key}), not a transformers model config: transformers' AutoConfig "
        "cannot load it and neoconv translates transformers configs only",
        file=name,
        line=key_line(text, key) if text else None,
        key=key,
        hint="give the config.json of a transformers model, one without _class_name",
    )


def _unmapped(tree: dict[str, Any], kind: str, name: str, text: str) -> Source:
    """A model_type no row of mappings/hf.yaml maps: its config.json is set aside whole as a family the
    canonical fields do not describe (hf2hf carries it as written, saying it was not checked; another
    format with an architecture refuses it, naming why; one without drops it), `what` saying why."""
    source = Source("hf", {HF: dict(tree)}, [name], {name: text} if text else {}, {HF: name})
    for leaf in flatten({HF: tree}):
        source.aliases[leaf] = leaf[len(HF) + 1 :]
    what = unmapped_reason(kind) + decoder_hint(kind, tree)
    source.set_aside[HF] = ("family_not_supported", {"what": what})
    source.meta["unsupported_family"] = {"family": kind, "what": what, "name": kind, "leaf": LEAF}
    return source


READER = HfReader()
