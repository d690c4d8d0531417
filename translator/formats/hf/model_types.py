"""HuggingFace config.json: the architecture file VeOmni loads from `model.config_path`.

mappings/hf.yaml holds one table per HF model_type (key spellings, what the class hard-wires, its
defaults, activation names). This module loads that data; the `hf.*` formulas (formulas.py), one per
canonical architecture field, use it: their keys are every spelling of the field (`hf.num_hidden_layers`
and `hf.n_layer`); reading picks the spelling of the file's model_type, writing the one of the
model_type chosen for the IR. config_json.py converts between a config.json file and `hf.*` leaves.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any


from ...resources import data_dir
from ...yamlread import load as load_yaml


PREFIX = "hf."  # where mappings/veomni.yaml keeps config.json keys
SELECTORS = ("model.family", "model.position_embedding")  # what the written model_type depends on

# canonical fields another field's reading or writing needs (head width, 4h default, GQA default)
EXTRAS: dict[str, tuple[str, ...]] = {
    "model.num_heads": ("model.hidden_size",),
    "model.num_kv_heads": ("model.num_heads",),
    "model.ffn_hidden_size": ("model.hidden_size",),
    "model.rotary_fraction": ("model.hidden_size", "model.num_heads"),
    "model.embedding_dropout": ("model.hidden_dropout",),
    "model.parallel_shared_norm": ("model.parallel_residual",),
}
# config.json keys a field's reading checks although no model_type maps the field to them
READ_ONLY_KEYS: dict[str, tuple[str, ...]] = {"model.num_heads": ("head_dim",)}
FFN_DEFAULT_MULTIPLE = 4  # GPT2/GPTJ: n_inner null means 4 x n_embd


@dataclass(frozen=True)
class ModelType:
    name: str
    family: str
    architectures: tuple[str, ...]
    keys: dict[str, str]
    fixed: dict[str, Any]
    same_as: dict[str, str]
    defaults: dict[str, Any]
    activations: dict[str, tuple[str, ...]]
    write_nulls: tuple[str, ...] = ()

    def default(self, key: str) -> Any:
        return self.defaults.get(key)


@dataclass(frozen=True)
class HfTable:
    choose: tuple[dict[str, Any], ...]
    types: dict[str, ModelType]

    def model_type(self, family: str | None, position_embedding: str | None) -> ModelType | None:
        """The model_type written for an IR (first matching `choose` entry); None without a family."""
        if family is None:
            return None
        for entry in self.choose:
            if "family" in entry and family not in entry["family"]:
                continue
            if "position_embedding" in entry and position_embedding not in entry["position_embedding"]:
                continue
            return self.types[entry["model_type"]]
        return None

    def spellings(self, name: str) -> list[str]:
        """Every config.json key of a canonical field over all model types (first: the most common)."""
        counts: dict[str, int] = {}
        for mt in self.types.values():
            if name in mt.keys:
                counts[mt.keys[name]] = counts.get(mt.keys[name], 0) + 1
        ordered = sorted(counts, key=lambda k: (-counts[k], k))
        return ordered + [k for k in READ_ONLY_KEYS.get(name, ()) if k not in ordered]

    def fields(self) -> list[str]:
        names: dict[str, None] = {}
        for mt in self.types.values():
            for name in (*mt.keys, *mt.fixed, *mt.same_as):
                names.setdefault(name, None)
        return [n for n in names if n not in SELECTORS]  # those two are the model_type rule's


@lru_cache(maxsize=None)
def table() -> HfTable:
    raw = load_yaml((data_dir("mappings") / "hf.yaml").read_text(encoding="utf-8"))
    types: dict[str, ModelType] = {}
    for name, spec in raw["model_types"].items():
        types[name] = ModelType(
            name=name,
            family=spec["family"],
            architectures=tuple(spec["architectures"]),
            keys=dict(spec.get("keys") or {}),
            fixed=dict(spec.get("fixed") or {}),
            same_as=dict(spec.get("same_as") or {}),
            defaults=dict(spec.get("defaults") or {}),
            activations={k: tuple(v) for k, v in (spec.get("activations") or {}).items()},
            write_nulls=tuple(spec.get("write_nulls") or ()),
        )
    choose = tuple(raw["choose"])
    for entry in choose:
        if entry["model_type"] not in types:
            raise ValueError(f"hf.yaml: choose names unknown model_type {entry['model_type']!r}")
    return HfTable(choose, types)
