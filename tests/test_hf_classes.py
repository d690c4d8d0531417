"""mappings/hf.yaml against what transformers defines (schemas/hf-classes.json, the classes of the
transformers release it names, extracted by tools/extract_hf_classes.py): every model type with a
causal-LM class is mapped, or named with why not; each mapped type's keys are its class's and its
defaults are the class's. The oracle tier checks the file against transformers itself
(tests/test_hf_classes_oracle.py) and builds every mapped type (tests/test_hf_types_oracle.py).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from neoconv.formats.hf import model_types as hf_types
from neoconv.formats.hf.classes import classes

TABLE = hf_types.table()
KNOWN = classes()
# keys the codecs read that a class spells in rope_parameters (transformers 5) or takes as a keyword
# argument only: not fields of the dataclass, read by neoconv all the same (formats/hf/config_json.py)
NOT_FIELDS = {
    "rope_theta",
    "rope_scaling",
    "partial_rotary_factor",
    "rotary_emb_base",
    "rotary_pct",
    "rope_local_base_freq",
    "sliding_window_pattern",
    "original_max_position_embeddings",
    "no_rope_layer_interval",
    "alibi",
}
# keys a class's modeling code reads with getattr(config, key, default) although its config class has
# no such field (or keeps it None): what the model uses when a file omits the key
FILLED_BY_MODEL = {
    ("qwen2", "head_dim"): "=model.hidden_size/model.num_heads",
    ("qwen2_moe", "head_dim"): "=model.hidden_size/model.num_heads",
    ("qwen3_moe", "head_dim"): "=model.hidden_size/model.num_heads",
    ("phi3", "head_dim"): "=model.hidden_size/model.num_heads",
    ("mixtral", "head_dim"): "=model.hidden_size/model.num_heads",
    ("starcoder2", "head_dim"): "=model.hidden_size/model.num_heads",
    ("olmo2", "head_dim"): "=model.hidden_size/model.num_heads",
    ("granite", "head_dim"): "=model.hidden_size/model.num_heads",
    ("smollm3", "head_dim"): "=model.hidden_size/model.num_heads",
    ("granitemoe", "head_dim"): "=model.hidden_size/model.num_heads",
    ("olmo3", "head_dim"): "=model.hidden_size/model.num_heads",
    ("glm4_moe", "head_dim"): "=model.hidden_size/model.num_heads",
    ("gptj", "n_inner"): "=4*model.hidden_size",
    ("gpt2", "n_inner"): "=4*model.hidden_size",
    ("gpt-sw3", "n_inner"): "=4*model.hidden_size",
    ("gpt_bigcode", "n_inner"): "=4*model.hidden_size",  # GPTBigCodeBlock: n_inner or 4 x hidden_size
    ("gpt_neo", "intermediate_size"): "=4*model.hidden_size",  # GPTNeoBlock: intermediate_size or 4 x hidden_size
}
# a default __post_init__ rewrites from another key: the table keeps the field's own default (what an
# omitted key means when the other key asks for it), compared with the dataclass field
REWRITTEN = {
    "sliding_window",
    "mlp_only_layers",
    "no_rope_layers",
    "layer_types",
    "attention_types",
    "word_embed_proj_dim",
}


def test_every_causal_lm_type_transformers_defines_is_mapped_or_named() -> None:
    listed = set(TABLE.types) | set(TABLE.wrappers) | set(TABLE.unmapped)
    assert sorted(set(KNOWN.types) - listed) == [], "add a row to mappings/hf.yaml data.model_types or data.unmapped"
    assert sorted(set(listed) - set(KNOWN.types)) == []


def _class_default(model_type: str, key: str) -> Any:
    record = KNOWN.types[model_type]
    fields = record.fields
    if key in REWRITTEN and key in fields:
        return fields[key]
    built = _built(model_type)
    if key in built and built[key] is not None:
        return built[key]
    if key in fields and fields[key] is not None:
        return fields[key]
    alias = record.aliases.get(key)
    if alias is not None:
        return _class_default(model_type, alias)
    rope = built.get("rope_parameters") or {}
    if "full_attention" in rope and key == "rope_theta":
        return rope["full_attention"].get("rope_theta")
    if "sliding_attention" in rope and key == "rope_local_base_freq":
        return rope["sliding_attention"].get("rope_theta")
    if key == "rope_scaling" and "rope_type" in rope:  # what the class scales by when a file says nothing
        scaling = {k: v for k, v in rope.items() if k not in ("rope_theta", "partial_rotary_factor")}
        return None if scaling.get("rope_type") == "default" else scaling
    inner = {"rotary_emb_base": "rope_theta", "rotary_pct": "partial_rotary_factor"}.get(
        key, key
    )  # GPT-NeoX's 4.x names
    if inner in ("rope_theta", "partial_rotary_factor") and inner in rope:
        return rope[inner]
    if inner == "partial_rotary_factor" and rope:  # the rotary embedding's rope_parameters.get(..., 1.0)
        return 1.0
    if key == "sliding_window_pattern" and built.get("layer_types"):
        return built["layer_types"].index("full_attention") + 1
    node: Any = {**fields, **built}
    for part in key.split("."):  # nested keys (MPT's attn_config.attn_pdrop)
        if not isinstance(node, dict) or part not in node:
            return fields.get(key, "<absent>")
        node = node[part]
    return node


def _built(model_type: str) -> dict[str, Any]:
    import json

    from neoconv.core.resources import data_dir

    global _RAW
    if _RAW is None:
        _RAW = json.loads((data_dir("schemas") / "hf-classes.json").read_text())["types"]
    return dict(_RAW[model_type].get("built") or {})


_RAW: dict[str, Any] | None = None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-12)
    return bool(a == b)


@pytest.mark.parametrize("model_type", sorted(TABLE.types))
def test_each_mapped_type_reads_keys_its_class_has(model_type: str) -> None:
    mt, record = TABLE.types[model_type], KNOWN.types[model_type]
    missing = [
        key
        for key in {*mt.keys.values(), *mt.defaults}
        if key.split(".")[0] not in NOT_FIELDS
        and not record.has(key.split(".")[0])
        and (model_type, key) not in FILLED_BY_MODEL
    ]
    assert missing == [], f"{record.name} has no such field"


@pytest.mark.parametrize("model_type", sorted(TABLE.types))
def test_each_mapped_type_s_defaults_are_its_class_s(model_type: str) -> None:
    mt = TABLE.types[model_type]
    canonical = {name: _class_default(model_type, key) for name, key in mt.keys.items()}
    wrong = {}
    for key, default in mt.defaults.items():
        theirs = (
            FILLED_BY_MODEL.get((model_type, key))
            if (model_type, key) in FILLED_BY_MODEL
            else _class_default(model_type, key)
        )
        if hf_types.derived(theirs):
            theirs = hf_types.resolve(theirs, canonical)
        ours = hf_types.resolve(default, canonical) if hf_types.derived(default) else default
        if not _same(theirs, ours):
            wrong[key] = (default, theirs)
    assert wrong == {}, f"hf.yaml {model_type} defaults (ours, transformers {KNOWN.release})"
