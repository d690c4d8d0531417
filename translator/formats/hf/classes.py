"""What transformers itself defines (schemas/hf-classes.json, extracted by tools/extract_hf_classes.py from
the transformers release it names): each model_type with a causal-LM class, its config class and
each field's own default. neoconv reads it to tell a model_type transformers defines from one it
does not (remote code), and which keys a class has; nothing of transformers is imported."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ...core.resources import data_dir


@dataclass(frozen=True)
class HfClass:
    model_type: str
    name: str  # the config class (LlamaConfig)
    causal_lm: str  # the class AutoModelForCausalLM builds (LlamaForCausalLM)
    fields: dict[str, Any]  # each dataclass field's own default
    aliases: dict[str, str]  # attribute_map: another name of a field
    sub_configs: tuple[str, ...]

    def has(self, key: str) -> bool:
        return key in self.fields or key in self.aliases or any(k.startswith(key + ".") for k in self.fields)


@dataclass(frozen=True)
class HfClasses:
    release: str  # the transformers release the facts are from
    common: frozenset[str]  # PreTrainedConfig's own fields, every class has them
    types: dict[str, HfClass]

    def keys(self) -> set[str]:
        """Every key some class (or every class) has."""
        out = set(self.common)
        for cls in self.types.values():
            out.update(cls.fields, cls.aliases)
        return out


@lru_cache(maxsize=1)
def classes() -> HfClasses:
    data = json.loads((data_dir("schemas") / "hf-classes.json").read_text(encoding="utf-8"))
    types = {
        name: HfClass(name, r["class"], r["causal_lm"], dict(r["fields"]), dict(r["aliases"]), tuple(r["sub_configs"]))
        for name, r in data["types"].items()
    }
    return HfClasses(str(data["transformers"]), frozenset(data["common"]), types)


@dataclass(frozen=True)
class HfType:
    """A model_type transformers defines (schemas/hf-types.json, tools/extract_hf_types.py): every config
    class of CONFIG_MAPPING_NAMES, not only the causal LMs."""

    model_type: str
    name: str  # the config class (Qwen2_5_VLConfig)
    kind: str  # multimodal, encoder-decoder, encoder, decoder, audio, vision, time-series, part, other
    releases: tuple[str, ...]  # the transformers releases that define it
    parts: dict[str, str | None]  # nested config -> its model_type (None: any config)
    of: str = ""  # a part: where it sits (qwen2_5_vl.text_config)


@dataclass(frozen=True)
class HfTypes:
    releases: tuple[str, ...]
    types: dict[str, HfType]
    common: frozenset[str] = frozenset()  # the keys some release's PreTrainedConfig writes into every config


@lru_cache(maxsize=1)
def defined() -> HfTypes:
    data = json.loads((data_dir("schemas") / "hf-types.json").read_text(encoding="utf-8"))
    releases = tuple(data["releases"])
    types = {
        name: HfType(
            name, r["class"], r["kind"], tuple(r.get("in") or releases), dict(r.get("parts") or {}), r.get("of", "")
        )
        for name, r in data["types"].items()
    }
    common = frozenset(key for keys in (data.get("common") or {}).values() for key in keys)
    return HfTypes(releases, types, common)
