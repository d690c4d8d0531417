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
