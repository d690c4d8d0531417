#!/usr/bin/env python3
"""Generate `schemas/hf.schema.json`: the config.json keys of the HF classes neoconv maps.

A config.json is read under `hf.` (neoconv's view: hf.hidden_size is config.json's hidden_size), so
the schema has one open object, `hf`: every key a class table of mappings/hf.yaml names (its keys and
defaults) with its JSON type (from the canonical field it maps, else from the class default), and
the keys every PreTrainedConfig carries, and (untyped) every field of every class transformers builds
a causal LM for (schemas/hf-classes.json): a key some class reads is a config.json parameter. The
object stays open: a class stores any other key as an attribute and ignores it, so such a key is
reported as a config.json setting with no canonical meaning (mappings/hf.yaml `extension_reasons`),
never refused; validate names it as no class's key.

Usage: python tools/gen_hf_schema.py [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neoconv.knowledge.catalogue import catalogue  # noqa: E402
from neoconv.formats.hf.classes import classes  # noqa: E402
from neoconv.formats.hf.config_json import EXPLICIT_NULL  # noqa: E402
from neoconv.formats.hf.model_types import table  # noqa: E402

JSON = {"int": "integer", "float": "number", "bool": "boolean", "str": "string", "list": "array", "dict": "object"}
# PreTrainedConfig keys every config.json may carry (transformers 5.23 configuration_utils.py)
COMMON = {
    "model_type": ["string"],
    "architectures": ["array", "null"],
    "torch_dtype": ["string", "null"],
    "dtype": ["string", "null"],
    "transformers_version": ["string"],
    "use_cache": ["boolean"],
    "bos_token_id": ["integer", "array", "null"],
    "eos_token_id": ["integer", "array", "null"],
    "pad_token_id": ["integer", "null"],
    "tie_word_embeddings": ["boolean"],
    "pretraining_tp": ["integer"],
    "rope_parameters": ["object", "null"],
    "output_router_logits": ["boolean"],
    "auto_map": ["object"],
}
# keys of the codecs (formats/hf/codecs.py, rope.py, window.py) and their types
CODEC = {
    "rope_theta": ["number", "integer"],
    "rotary_emb_base": ["number", "integer"],
    "rope_scaling": ["object", "null"],
    "original_max_position_embeddings": ["integer"],
    "rope_local_base_freq": ["number"],
    "rope_local_scaling": ["object"],
    "head_dim": ["integer", "null"],
    "query_pre_attn_scalar": ["number", "integer"],
    "sliding_window": ["integer", "null"],
    "use_sliding_window": ["boolean"],
    "max_window_layers": ["integer"],
    "layer_types": ["array", "null"],
    "sliding_window_pattern": ["integer"],
    "new_decoder_architecture": ["boolean"],
    "num_kv_heads": ["integer", "null"],
    "multi_query": ["boolean"],
    "parallel_attn": ["boolean"],
    "num_ln_in_parallel_attn": ["integer", "null"],
    "alibi": ["boolean"],
    "decoder_sparse_step": ["integer"],
    "mlp_only_layers": ["array", "null"],
    "first_k_dense_replace": ["integer"],
    "router_aux_loss_coef": ["number"],
    "num_attention_heads": ["integer"],
    "n_head": ["integer"],
    "n_heads": ["integer"],
    "attention_multiplier": ["number", "integer"],
    "no_rope_layers": ["array", "null"],
    "no_rope_layer_interval": ["integer"],
    "swiglu_alpha": ["number", "integer"],
    "window_size": ["integer"],
    "attention_types": ["array", "null"],
    # the model_type rule's `unheld` keys (OPT's)
    "do_layer_norm_before": ["boolean"],
    "word_embed_proj_dim": ["integer", "null"],
    "_remove_final_layer_norm": ["boolean"],
    "layerdrop": ["number", "integer"],
    "layer_norm_elementwise_affine": ["boolean"],
    # DBRX's nested keys of no canonical type
    "attn_config.rope_theta": ["number", "integer"],
    "ffn_config.moe_jitter_eps": ["number", "integer", "null"],
    "emb_pdrop": ["number", "integer"],
    "ffn_config.moe_normalize_expert_weights": ["number", "integer", "null"],
    "ffn_config.moe_loss_weight": ["number", "integer"],
}
NOT_CANONICAL_TYPE = {"swiglu_alpha"}  # keys whose value is not of their field's type (gpt_oss's activation: a gain)


def _block(properties: dict, key: str) -> dict:
    """The properties holding a (dotted) key's last part: nested keys (MPT's attn_config.attn_pdrop) live in
    open objects."""
    node = properties
    for part in key.split(".")[:-1]:
        if "properties" not in node.get(part, {}):
            node[part] = {"type": "object", "additionalProperties": True, "properties": {}}
        node = node[part]["properties"]
    return node


def build() -> dict:
    fields = catalogue()
    keys: dict[str, set[str]] = {k: set(v) for k, v in {**COMMON, **CODEC}.items()}
    for mt in table().types.values():
        for name, key in mt.keys.items():
            if key in NOT_CANONICAL_TYPE:
                continue
            kind = JSON[fields[name].type]
            keys.setdefault(key, set()).update({kind, "null"} | ({"integer"} if kind == "number" else set()))
        for key, default in mt.defaults.items():
            found = keys.setdefault(key, set())
            if default is None:
                found.add("null")
            elif not found - {"null"}:
                found.add(
                    {bool: "boolean", int: "integer", float: "number", str: "string"}.get(type(default), "object")
                )
    nulls = {key for mt in table().types.values() for key in mt.write_nulls}
    properties: dict[str, dict] = {}
    for key in sorted(classes().keys() - set(keys)):  # a field of some transformers class: known, its type the class's
        _block(properties, key).setdefault(key.split(".")[-1], {})
    for key in sorted(keys):
        leaf = key.split(".")[-1]
        node = _block(properties, key)
        node[leaf] = {"type": sorted(keys[key])}
        if key in nulls:  # an explicit null the reader marks (formats/hf/config_json.py EXPLICIT_NULL)
            node[leaf] = {"anyOf": [node[leaf], {"enum": [EXPLICIT_NULL]}]}
    properties = dict(sorted(properties.items()))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "HuggingFace config.json as neoconv reads it (generated by tools/gen_hf_schema.py from mappings/hf.yaml)",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "hf": {
                "type": "object",
                "additionalProperties": True,
                "x-group": "hf",
                "x-side-file": "config.json",
                "title": "the keys of config.json (any other key is stored by the class and ignored)",
                "properties": properties,
            },
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(ROOT / "schemas" / "hf.schema.json"))
    parser.add_argument("--check", action="store_true", help="fail if the file differs from what would be written")
    args = parser.parse_args()
    text = json.dumps(build(), indent=1, sort_keys=False) + "\n"
    path = Path(args.output)
    if args.check:
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            print(f"{path} is stale: run tools/gen_hf_schema.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
