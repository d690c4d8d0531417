#!/usr/bin/env python3
"""Generate `schemas/cerebras.schema.json`: JSON Schema for Cerebras Model Zoo legacy-layout configs.

Legacy layout = top-level `train_input`, `eval_input`, `model`, `optimizer`, `runconfig` (+ optional
`sparsity`, `wandb`). The per-section properties come from two renderings of the Model Zoo
parameter docs (release "r1": markdown tables, release "r2": plain text), merged per key: the rows
tools/extract_cerebras_facts.py read from them, committed in --facts (tools/facts/cerebras-params-
r1.json, -r2.json); this tool reads nothing outside the repository. A small
table of facts read from the Cerebras modelzoo source (SOURCE_FACTS below) then adds keys that real
configs use but the docs omit, and widens a few types where the source accepts more than the docs
say. Nothing is rejected for being unknown: `additionalProperties` is true everywhere, because
neoconv reports unknown keys itself.

Annotations (all optional, never used for validation):
    x-versions        which sources document the key: "r1", "r2" (the two doc releases), "source"
    x-models          supported models as the doc lists them; x-devices for runconfig's
                      "Supported mode" column (All/CSX/GPU); x-models-source: models the source adds
    x-required        the doc's type hint says "required"
    x-default-text    a default the doc gives only in words ("varies per model", "same as dropout")
    x-defaults        {release or "source": value} where an older doc or the source disagrees with
                      "default" (which is r2's); x-default-texts likewise for worded defaults
    x-types, x-enums  per-source type / value list when the sources disagree (the schema takes the union)
    x-known-values    values seen in the source code (informational, not an enum)
    x-source          "release:path" of the modelzoo files a source fact was read from
    x-ignored-by      releases whose code never reads the key (it only triggers an "unused" warning)
    x-replaced-by     the key that took over in a later release

The output is deterministic (sorted keys, indent 2, trailing newline), so a test can regenerate it
and compare; `--check` does exactly that and exits 1 when the checked-in file is stale.

It also writes schemas/cerebras-trainer.schema.json beside the output (the trainer layout, built
by tools/cerebras_trainer_schema.py from this schema and mappings/cerebras-layouts.yaml).

Usage:
    python tools/gen_cerebras_schema.py [--facts DIR] [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from facts_file import FACTS_DIR, load  # tools/ is on sys.path when run as a script

from neoconv.formats.cerebras.formulas import NAMES as MODEL_NAMES  # 2.10's registry names of decoder models

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / "schemas" / "cerebras.schema.json"
R1_FILE = "cerebras-modelzoo-params-r1.md"
R2_FILE = "cerebras-modelzoo-params-r2.txt"
# release -> (the document its facts were read from, the facts file)
DOCUMENTS = {"r1": (R1_FILE, "cerebras-params-r1.json"), "r2": (R2_FILE, "cerebras-params-r2.json")}
RELEASES = ("r1", "r2")  # documentation order: r2's view wins where they disagree

# Config sections in schema order; the docs' "data loader" tables apply to both input sections.
SECTIONS = ("train_input", "eval_input", "model", "optimizer", "runconfig")
OPEN_SECTIONS = ("sparsity", "wandb")

_MISSING: Any = object()  # "the doc gives no literal default" (None is a real default: JSON null)


# --------------------------------------------------------------------------------------------
# One release's view of a parameter (the facts rows), then the cross-release merge
# --------------------------------------------------------------------------------------------


@dataclass
class TypeInfo:
    """JSON types named by a doc's `(type, optional)` hint."""

    types: set[str] = field(default_factory=set)
    literals: list[str] = field(default_factory=list)  # string values from Literal[...]
    items: set[str] = field(default_factory=set)  # JSON types of list elements, when named

    def merge(self, other: TypeInfo) -> None:
        self.types |= other.types
        self.literals += [v for v in other.literals if v not in self.literals]
        self.items |= other.items


@dataclass
class Spec:
    """What one release documents for one (section, key), duplicate rows already merged."""

    type: TypeInfo | None
    enum: list[Any] | None
    default: Any
    default_text: str | None
    required: bool | None
    scope: list[str] | None
    scope_kind: str | None


def spec_to_json(spec: Spec) -> dict[str, Any]:
    """A Spec as a facts row holds it (no `default` key: the doc gives no literal default)."""
    row: dict[str, Any] = {}
    if spec.type is not None:
        row["type"] = {
            "types": sorted(spec.type.types),
            "literals": spec.type.literals,
            "items": sorted(spec.type.items),
        }
    else:
        row["type"] = None
    row["enum"] = spec.enum
    if spec.default is not _MISSING:
        row["default"] = spec.default
    row.update(default_text=spec.default_text, required=spec.required, scope=spec.scope, scope_kind=spec.scope_kind)
    return row


def spec_from_json(row: dict[str, Any]) -> Spec:
    kind = row["type"]
    return Spec(
        type=None if kind is None else TypeInfo(set(kind["types"]), list(kind["literals"]), set(kind["items"])),
        enum=row["enum"],
        default=row.get("default", _MISSING),
        default_text=row["default_text"],
        required=row["required"],
        scope=row["scope"],
        scope_kind=row["scope_kind"],
    )


def _describe_default(spec: Spec) -> str | None:
    if spec.default is not _MISSING:
        return json.dumps(spec.default)
    return spec.default_text


def _union_types(infos: list[TypeInfo | None]) -> TypeInfo | None:
    """A fresh union of the named types; None (any type) when one source names no type."""
    union = TypeInfo()
    for info in infos:
        if info is None:
            return None
        union.merge(info)
    return union


def _union_enums(enums: list[list[Any] | None]) -> list[Any] | None:
    """All listed values, in order; None when any source leaves the values open."""
    union: list[Any] = []
    for enum in enums:
        if enum is None:
            return None
        union += [v for v in enum if v not in union]
    return union


def merge_rows(specs: list[Spec]) -> Spec:
    """Several rows for one key in one release (e.g. `nonlinearity` for transformers and UNet)."""
    if len(specs) == 1:
        return specs[0]
    merged_type = _union_types([spec.type for spec in specs])
    enum = _union_enums([spec.enum for spec in specs])
    described = {_describe_default(s) for s in specs}
    first = specs[0]
    if len(described) == 1:
        default, default_text = first.default, first.default_text
    else:
        default = _MISSING
        default_text = "; ".join(
            f"{_describe_default(s) or 'none given'} ({', '.join(s.scope or ['?'])})" for s in specs
        )
    scope: list[str] = []
    for spec in specs:
        scope += [m for m in spec.scope or [] if m not in scope]
    return Spec(
        type=merged_type,
        enum=enum or None,
        default=default,
        default_text=default_text,
        required=all(bool(s.required) for s in specs),
        scope=scope or None,
        scope_kind=first.scope_kind,
    )


def type_fragment(info: TypeInfo | None, enum: list[Any] | None) -> dict[str, Any]:
    """JSON Schema keywords for a TypeInfo (+ enum)."""
    if info is None:
        return {"enum": enum} if enum else {}
    fragment: dict[str, Any] = {}
    names = set(info.types)
    if enum and None in enum and names:
        names.add("null")  # the doc lists None among the accepted values
    types = sorted(names)
    if info.literals and "string" not in info.types:
        # Union[None, int, Literal["auto", ...]]: only those strings are allowed.
        options: list[dict[str, Any]] = [{"type": "string", "enum": list(info.literals)}]
        if types:
            options.insert(0, {"type": types[0] if len(types) == 1 else types})
        fragment["anyOf"] = options
    elif types:
        fragment["type"] = types[0] if len(types) == 1 else types
    if info.items and "array" in info.types:
        items = sorted(info.items)
        fragment["items"] = {"type": items[0] if len(items) == 1 else items}
    if enum:
        fragment["enum"] = enum
    return fragment


def build_property(by_release: dict[str, Spec]) -> dict[str, Any]:
    """Merge the releases' views: validation accepts what any release accepts; defaults are r2's."""
    releases = [r for r in RELEASES if r in by_release]
    newest = by_release[releases[-1]]
    prop: dict[str, Any] = {"x-versions": releases}

    # Type: the union, so a config valid under either release validates.
    union = _union_types([by_release[r].type for r in releases])
    enum = _union_enums([by_release[r].enum for r in releases])
    if union is not None and any(by_release[r].default is None for r in releases):
        union.types.add("null")  # a documented default of None must itself validate
    prop.update(type_fragment(union, enum))
    per_release_types = {r: type_fragment(by_release[r].type, None) for r in releases}
    if len({json.dumps(t, sort_keys=True) for t in per_release_types.values()}) > 1:
        prop["x-types"] = per_release_types
    per_release_enums = {r: by_release[r].enum for r in releases}
    if len({json.dumps(e) for e in per_release_enums.values()}) > 1:
        prop["x-enums"] = per_release_enums

    # Default: the newest documenting release; older differing literals go to x-defaults.
    if newest.default is not _MISSING:
        prop["default"] = newest.default
    if newest.default_text:
        prop["x-default-text"] = newest.default_text
    older = {r: by_release[r] for r in releases[:-1]}
    x_defaults = {
        r: s.default
        for r, s in older.items()
        if s.default is not _MISSING
        and (newest.default is _MISSING or s.default != newest.default or type(s.default) is not type(newest.default))
    }
    if x_defaults:
        prop["x-defaults"] = x_defaults
    x_texts = {r: s.default_text for r, s in older.items() if s.default_text and s.default_text != newest.default_text}
    if x_texts:
        prop["x-default-texts"] = x_texts

    if newest.required:
        prop["x-required"] = True
    scope_key = "x-devices" if newest.scope_kind == "devices" else "x-models"
    if newest.scope:
        prop[scope_key] = newest.scope
    scopes = {r: by_release[r].scope for r in releases if by_release[r].scope}
    if len({json.dumps(s) for s in scopes.values()}) > 1:
        prop[scope_key + "-by-version"] = scopes
    return prop


# --------------------------------------------------------------------------------------------
# Facts from the Cerebras modelzoo source (github.com/Cerebras/modelzoo)
# --------------------------------------------------------------------------------------------
# Keys the corpus uses but neither doc release lists, plus a few documented keys whose accepted
# values the source shows to be wider than the docs say. Each entry names the release and file the
# fact was read from ("x-source"); nothing here is copied code. Releases: 1.8.0 = a1f6f51,
# 1.9.1 = 97bdaf4, 2.0.2 = c1ef453, 2.1.0 = e2a52f1, 2.2.0 = 244523a, 2.3.0 = cc48e20,
# 2.3.1 = e8ab064, 2.10.0 = f1fd1e0.
# Value lists read from code go to "x-known-values" (informational), not "enum": later releases
# add values, so validation should not reject them; neoconv can report unknown ones instead.

_MZ202 = "2.0.2:modelzoo/"
_GPT2_202 = _MZ202 + "transformers/pytorch/gpt2/model.py"
_GPT2CFG_231 = "2.3.1:src/cerebras/modelzoo/models/nlp/gpt2/config.py"
_GPT2_210 = "2.10.0:src/cerebras/modelzoo/models/nlp/gpt2/gpt2_model.py"
_ROPE_210 = "2.10.0:src/cerebras/modelzoo/layers/RotaryPositionEmbeddingHelper.py"
_FFN_210 = "2.10.0:src/cerebras/modelzoo/layers/FeedForwardNetwork.py (MoEConfig)"
_RUNFLOW_202 = _MZ202 + "common/pytorch/run_cstorch_flow.py"
_RUNCFG_231 = "2.3.1:src/cerebras/modelzoo/config_manager/config_classes/base/run_config.py"
_OPTCFG_231 = "2.3.1:src/cerebras/modelzoo/config_manager/config_classes/base/optimizer_config.py"
_ADAM_191 = "1.9.1:modelzoo/common/pytorch/optim/AdamBase.py"
_BERT_202 = _MZ202 + "transformers/pytorch/bert/"
_INPUTS = ("train_input", "eval_input")

# Reusable shapes, emitted under "$defs".
DEFS: dict[str, dict[str, Any]] = {
    "initializer": {
        # A name, or a dict with the name plus the distribution's parameters; TensorFlow Model Zoo
        # (1.6-1.8) wrote a one-element list of that dict (set_initializers takes item 0).
        "type": ["string", "object", "array"],
        "items": {"type": "object"},
        "properties": {
            "name": {"type": "string"},
            "mean": {"type": "number"},
            "std": {"type": "number"},
            "a": {"type": "number"},
            "b": {"type": "number"},
            "val": {"type": "number"},
            "gain": {"type": "number"},
            "scale": {"type": "number"},
            "mode": {"type": "string"},
            "nonlinearity": {"type": "string"},
            "distribution": {"type": "string"},
        },
        "required": ["name"],
        "x-known-values": [
            "constant",
            "ones",
            "zeros",
            "eye",
            "uniform",
            "normal",
            "xavier_normal",
            "xavier_uniform",
            "glorot_normal",
            "glorot_uniform",
            "kaiming_normal",
            "kaiming_uniform",
            "truncated_normal",
            "variance_scaling",
            "lecun_normal",
            "lecun_uniform",
        ],
        "x-source": [_MZ202 + "common/pytorch/model_utils/create_initializer.py"],
    },
    "lr_scheduler": {
        # One phase of the learning-rate schedule; names match case-insensitively, "LR" suffix optional.
        "type": "object",
        "properties": {
            "scheduler": {"type": "string"},
            "initial_learning_rate": {"type": "number"},
            "end_learning_rate": {"type": "number"},
            "learning_rate": {"type": "number"},
            "total_iters": {"type": "integer"},
            "steps": {"type": "integer"},
            "decay_steps": {"type": "integer"},
            "decay_rate": {"type": "number"},
            "warmup_steps": {"type": "integer"},
            "main_scheduler": {"type": "string"},
        },
        "required": ["scheduler"],
        "x-known-values": [
            "Constant",
            "Exponential",
            "PiecewiseConstant",
            "Polynomial",
            "Linear",
            "InverseExponentialTimeDecay",
            "InverseSquareRootDecay",
            "CosineDecay",
        ],
        "x-source": ["1.9.1:modelzoo/common/pytorch/PyTorchBaseModel.py", _OPTCFG_231],
    },
}

_INIT_REF = {"$ref": "#/$defs/initializer"}

SOURCE_FACTS: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    # ---- model: the trainer layout's model class (legacy files name none: the run.py decides) ----
    (
        ("model",),
        "name",
        {
            "type": "string",
            "x-note": "trainer layout only (trainer.init.model.name, required from 2.4); a legacy file names no model",
            "x-known-values": sorted(MODEL_NAMES),  # the writer's own list: one source
            "x-source": [
                "2.10:src/cerebras/modelzoo/registry/registry.yaml",
                "2.10:src/cerebras/modelzoo/trainer/validate.py",
            ],
        },
    ),
    # ---- model: GPT-2 family (gpt2, gpt3, llama, mistral, ... all run gpt2/model.py) ----
    (
        ("model",),
        "use_bfloat16",
        {
            "type": "boolean",
            "x-default-text": "True when gpt2/gptj set_defaults ran (GPT-2/3, GPT-J, NeoX, LLaMA); otherwise False",
            "x-replaced-by": "model.fp16_type (2.1: True -> bfloat16, False -> float16)",
            "x-source": [
                _MZ202 + "transformers/pytorch/gpt2/utils.py",
                _RUNFLOW_202,
                "2.1.0:modelzoo/common/pytorch/model_utils/checkpoint_converters/base_converter.py",
            ],
        },
    ),
    (
        ("model",),
        "norm_type",
        {
            "type": "string",
            "default": "layernorm",
            "x-known-values": [
                "layernorm",
                "rmsnorm",
                "biasless-layernorm",
                "batchnorm1d",
                "batchnorm2d",
                "batchnorm3d",
                "batchchannel2d",
                "frozenbatchnorm2d",
                "group",
                "group_instance",
                "instance1d",
                "instance2d",
                "instance3d",
                "adalayer",
            ],
            "x-models-source": ["GPT2", "GPT3", "GPTJ", "LLaMA"],
            "x-source": [_GPT2_202, _MZ202 + "common/pytorch/model_utils/norms.py"],
        },
    ),
    (
        ("model",),
        "fp16_type",
        {
            "enum": ["bfloat16", "float16", "cbfloat16"],
            "default": None,
            "x-ignored-by": ["2.0.2"],
            "x-source": [
                "2.1.0:modelzoo/common/pytorch/model_utils/checkpoint_converters/base_converter.py",
                "2.3.1:src/cerebras/modelzoo/config_manager/config_classes/base/model_config.py",
            ],
        },
    ),
    (
        ("model",),
        "mixed_precision",
        {
            "default": False,
            "x-source": [
                _RUNFLOW_202,
                "2.3.1:src/cerebras/modelzoo/config_manager/config_classes/base/model_config.py",
            ],
        },
    ),
    (
        ("model",),
        "attention_kernel",
        {
            # gpt2/gptj set_defaults fill in "default" and test for "compatible".
            "enum": ["compatible"],
            "default": "default",
            "x-source": [_MZ202 + "transformers/pytorch/gpt2/utils.py"],
        },
    ),
    (
        ("model",),
        "position_embedding_type",
        {
            "enum": ["alibi"],
            "x-source": [_MZ202 + "common/pytorch/layers/EmbeddingLayer.py"],
        },
    ),
    (("model",), "embedding_initializer", {**_INIT_REF, "x-source": [_GPT2_202]}),
    (("model",), "initializer", {**_INIT_REF, "x-source": [_GPT2_202]}),
    (("model",), "output_layer_initializer", {**_INIT_REF, "x-source": [_GPT2_202]}),
    (
        ("model",),
        "attention_module",
        {
            "type": "string",
            "default": "aiayn_attention",
            "x-known-values": ["aiayn_attention", "multiquery_attention"],
            "x-source": [_GPT2_202, _MZ202 + "common/pytorch/layers/AttentionHelper.py"],
        },
    ),
    (
        ("model",),
        "extra_attention_params",
        {
            "type": "object",
            "default": {},
            "properties": {"num_kv_groups": {"type": "integer", "default": 1}},
            "x-source": [_GPT2_202, _MZ202 + "common/pytorch/layers/MultiQueryAttentionLayer.py"],
        },
    ),
    (
        ("model",),
        "rope_theta",
        {
            "type": "number",
            "default": 10000,
            "x-ignored-by": ["2.0.2"],
            "x-source": ["2.1.0:modelzoo/transformers/pytorch/gpt2/model.py", _GPT2CFG_231],
        },
    ),
    (("model",), "alibi_trainable_slopes", {"type": "boolean", "default": False, "x-source": [_GPT2_202]}),
    (
        ("model",),
        "alibi_implementation",
        {
            "type": "string",
            "default": "expand",
            "x-known-values": ["embedding", "expand"],
            "x-ignored-by": ["2.0.2"],
            "x-source": ["1.9.1:modelzoo/common/pytorch/layers/AlibiPositionEmbeddingLayer.py"],
        },
    ),
    (("model",), "embedding_layer_norm", {"type": "boolean", "default": False, "x-source": [_GPT2_202]}),
    (("model",), "embeddings_scale", {"type": "number", "default": 1.0, "x-source": [_GPT2_202]}),
    (
        ("model",),
        "output_logits_scale",
        {"type": ["null", "number"], "default": None, "x-source": [_GPT2_202]},
    ),
    (
        ("model",),
        "scale_qk_dot_by_d",
        {"type": ["boolean", "null"], "default": None, "x-source": [_GPT2_202]},
    ),
    (("model",), "scale_qk_dot_by_layer_idx", {"type": "boolean", "default": False, "x-source": [_GPT2_202]}),
    (
        ("model",),
        "scale_by_layer_index",
        {
            "type": "boolean",
            "x-ignored-by": ["2.1.0"],
            "x-source": ["2.1.0:modelzoo/common/pytorch/model_utils/checkpoint_converters/santacoder.py"],
        },
    ),
    (
        ("model",),
        "attention_inner_dim",
        {"type": ["integer", "null"], "default": None, "x-source": [_GPT2CFG_231]},
    ),
    (
        ("model",),
        "attention_logit_softcapping",
        {"type": ["null", "number"], "default": None, "x-source": [_GPT2CFG_231]},
    ),
    (
        ("model",),
        "final_logit_softcapping",
        {"type": ["null", "number"], "default": None, "x-source": [_GPT2CFG_231]},
    ),
    (
        ("model",),
        "attention_logits_alpha",
        {"type": ["null", "number"], "default": 1.0, "x-source": [_GPT2CFG_231]},
    ),
    (
        ("model",),
        "attention_sliding_window_length",
        {"type": ["integer", "null"], "default": None, "x-source": [_GPT2CFG_231]},
    ),
    (
        ("model",),
        "sliding_window_every_other_decoder_layer",
        {"type": "boolean", "default": False, "x-source": [_GPT2CFG_231]},
    ),
    (("model",), "norm_first_sandwich", {"type": "boolean", "default": False, "x-source": [_GPT2CFG_231]}),
    # ---- model: keys of today's models (RoPE scaling, windows, qk-norm, muP, MoE), issue 14 ----
    (("model",), "pos_scaling_factor", {"type": "number", "default": 1.0, "x-source": [_GPT2CFG_231]}),
    (
        ("model",),
        "pos_scaling_type",
        {
            "type": "string",
            "default": "linear",
            "x-known-values": ["linear", "yarn", "YaRN", "llama3", "longrope"],
            "x-source": [_GPT2CFG_231, _GPT2_210, _ROPE_210],
        },
    ),
    (
        ("model",),
        "pos_scaling_extra_args",
        {"type": ["null", "object"], "default": None, "x-source": [_GPT2CFG_231, _ROPE_210]},
    ),
    (
        ("model",),
        "sliding_window_every_other_decoder_layer_pattern",
        {
            "type": ["null", "string"],
            "default": "full_attention_first",
            "x-known-values": ["full_attention_first", "sliding_window_first"],
            "x-source": [_GPT2_210],
        },
    ),
    (("model",), "attention_sink_tokens", {"type": ["integer", "null"], "default": None, "x-source": [_GPT2_210]}),
    (("model",), "attention_qk_norm_layer", {"type": ["null", "string"], "default": None, "x-source": [_GPT2_210]}),
    (("model",), "attention_qk_norm_eps", {"type": "number", "default": 1.0e-5, "x-source": [_GPT2_210]}),
    (("model",), "mup_base_hidden_size", {"type": ["null", "number"], "default": None, "x-source": [_GPT2CFG_231]}),
    (("model",), "mup_base_filter_size", {"type": ["null", "number"], "default": None, "x-source": [_GPT2CFG_231]}),
    (
        ("model",),
        "output_logits_alpha",
        {"type": ["null", "number"], "default": None, "x-source": [_GPT2CFG_231, _GPT2_210]},
    ),
    (
        ("model",),
        "scale_output_logits_by_d",
        {"type": ["boolean", "null"], "default": True, "x-source": [_GPT2CFG_231, _GPT2_210]},
    ),
    (
        ("model",),
        "moe",
        {
            "type": ["null", "object"],
            "default": None,
            "properties": {
                "num_experts": {"type": "integer", "default": 1},
                "top_k": {"type": ["integer", "null"], "default": None},
                "load_balancing_loss_coef": {"type": ["null", "number"], "default": 0.01},
                "router_fp32": {"type": "boolean", "default": True},
                # 2.4+ (2.5: expert_weighting_normalization): MoEConfig
                "num_shared_experts": {"type": ["integer", "null"], "default": None},
                "expert_weighting_normalization": {"type": ["boolean", "null"], "default": True},
                "router_selection_nonlinearity": {"type": ["null", "string"], "default": "softmax"},
                "routing_algorithm": {"type": "string", "default": "learned"},
            },
            "x-source": [_GPT2CFG_231, "2.3.0:src/cerebras/modelzoo/layers/FeedForwardNetwork.py", _FFN_210],
        },
    ),
    (
        ("model",),
        "compute_eval_metrics",
        {
            "type": "boolean",
            "x-default-text": "True for GPT-2/GPT-J/BERT pre-training; False for the BERT fine-tuning models",
            "x-source": [_GPT2_202, _BERT_202 + "model.py", _BERT_202 + "fine_tuning/classifier/model.py"],
        },
    ),
    # TF-era keys (<= 1.8) that some 2.0 configs still carry; the PyTorch code never reads them.
    (
        ("model",),
        "boundary_casting",
        {
            "type": "boolean",
            "default": False,
            "x-ignored-by": ["2.0.2"],
            "x-source": [
                "1.8.0:modelzoo/common/tf/layers/AddLayer.py",
                "2.3.1:src/cerebras/modelzoo/config_manager/config_classes/base/model_config.py",
            ],
        },
    ),
    (
        ("model",),
        "tf_summary",
        {
            "type": "boolean",
            "default": False,
            "x-ignored-by": ["2.0.2"],
            "x-source": ["1.8.0:modelzoo/common/tf/layers/AddLayer.py"],
        },
    ),
    # ---- model: BERT family ----
    (
        ("model",),
        "mask_padding_in_positional_embed",
        {
            "type": "boolean",
            "default": False,
            "x-models": ["BERT (pre-training)"],
            "x-source": [_BERT_202 + "model.py"],
        },
    ),
    (
        ("model",),
        "pooler_nonlinearity",
        {
            "type": ["null", "string"],
            "default": None,
            "x-models": ["BERT (pre-training, fine-tuning)"],
            "x-default-text": "None means the encoder_nonlinearity",
            "x-source": [_BERT_202 + "model.py", _BERT_202 + "fine_tuning/classifier/model.py"],
        },
    ),
    (
        ("model",),
        "num_classes",
        {
            "type": "integer",
            "x-models": ["BERT (pre-training)", "BERT (token classifier)"],
            "x-default-text": "2 for BERT pre-training (NSP); required for the token classifier",
            "x-source": [_BERT_202 + "model.py", _BERT_202 + "fine_tuning/token_classifier/model.py"],
        },
    ),
    (
        ("model",),
        "num_labels",
        {
            "type": "integer",
            "x-required": True,
            "x-models": ["BERT (classifier)"],
            "x-source": [_BERT_202 + "fine_tuning/classifier/model.py"],
        },
    ),
    (
        ("model",),
        "problem_type",
        {
            "type": "string",
            "x-required": True,
            "x-models": ["BERT (classifier)"],
            "x-known-values": ["regression", "single_label_classification", "multi_label_classification"],
            "x-source": [
                _BERT_202 + "fine_tuning/classifier/model.py",
                _BERT_202 + "bert_finetune_models.py",
            ],
        },
    ),
    (
        ("model",),
        "task_dropout",
        {
            "type": "number",
            "x-required": True,
            "x-models": ["BERT (classifier)"],
            "x-source": [_BERT_202 + "fine_tuning/classifier/model.py"],
        },
    ),
    (
        ("model",),
        "encoder_output_dropout_rate",
        {
            "type": "number",
            "x-required": True,
            "x-models": ["BERT (token classifier)"],
            "x-source": [_BERT_202 + "fine_tuning/token_classifier/model.py"],
        },
    ),
    (
        ("model",),
        "include_padding_in_loss",
        {
            "type": "boolean",
            "x-required": True,
            "x-models": ["BERT (token classifier)"],
            "x-source": [_BERT_202 + "fine_tuning/token_classifier/model.py"],
        },
    ),
    (
        ("model",),
        "use_cls_bias",
        {
            "type": "boolean",
            "x-required": True,
            "x-models": ["BERT (summarization)"],
            "x-source": [_BERT_202 + "fine_tuning/extractive_summarization/model.py"],
        },
    ),
    # ---- optimizer ----
    (
        ("optimizer",),
        "optimizer_type",
        {
            "x-known-values": [
                "sgd",
                "adam",
                "adamw",
                "adamax",
                "adadelta",
                "adafactor",
                "adagrad",
                "asgd",
                "lamb",
                "lion",
                "radam",
                "nadam",
                "rmsprop",
                "rprop",
            ],
            "x-source": ["1.9.1:modelzoo/common/pytorch/PyTorchBaseModel.py"],
        },
    ),
    (
        ("optimizer",),
        "learning_rate",
        {
            # A constant, one scheduler dict, or a list of scheduler dicts run one after another.
            "anyOf": [
                {"type": "number"},
                {"$ref": "#/$defs/lr_scheduler"},
                {"type": "array", "items": {"$ref": "#/$defs/lr_scheduler"}},
            ],
            "x-source": ["1.9.1:modelzoo/common/pytorch/PyTorchBaseModel.py", _OPTCFG_231],
        },
    ),
    (
        ("optimizer",),
        "loss_scaling_factor",
        {
            "x-known-values": ["dynamic"],
            "x-source": [_RUNFLOW_202],
        },
    ),
    (
        ("optimizer",),
        "initial_loss_scale",
        {"type": "number", "default": 32768.0, "x-source": [_RUNFLOW_202]},
    ),
    (("optimizer",), "steps_per_increase", {"type": "integer", "default": 2000, "x-source": [_RUNFLOW_202]}),
    (
        ("optimizer",),
        "max_gradient_value",
        {"type": ["null", "number"], "default": None, "x-source": [_RUNFLOW_202]},
    ),
    (
        ("optimizer",),
        "grad_accum_steps",
        {
            "type": "integer",
            "default": 1,
            # On CSX, 2.0.2 drops it in favour of runconfig.use_cs_grad_accum.
            "x-devices": ["CPU", "GPU"],
            "x-source": [_RUNFLOW_202],
        },
    ),
    (
        ("optimizer",),
        "betas",
        {
            "type": "array",
            "items": {"type": "number"},
            "minItems": 2,
            "maxItems": 2,
            "default": [0.9, 0.999],
            "x-source": [_ADAM_191],
        },
    ),
    (("optimizer",), "eps", {"type": "number", "default": 1e-06, "x-source": [_ADAM_191]}),
    (("optimizer",), "correct_bias", {"type": "boolean", "default": True, "x-source": [_ADAM_191]}),
    # SGD's momentum is passed through to cstorch.optim.SGD like every other optimizer kwarg.
    (("optimizer",), "momentum", {"type": "number", "default": 0.0, "x-source": [_OPTCFG_231]}),
    (
        ("optimizer",),
        "weight_decay",
        {"type": "number", "default": 0.0, "x-source": [_ADAM_191, _OPTCFG_231]},
    ),
    (
        ("optimizer",),
        "adjust_learning_rate",
        {
            # muP: per-parameter-group learning-rate multipliers.
            "type": ["null", "object"],
            "default": None,
            "properties": {"decoder_kernel": {"type": "number"}},
            "x-source": [_RUNFLOW_202, _OPTCFG_231],
        },
    ),
    (
        ("optimizer",),
        "ws_summary",
        {
            "type": "boolean",
            "default": False,
            "x-ignored-by": ["2.0.2"],
            "x-source": ["1.8.0:modelzoo/common/tf/optimizers/Trainer.py"],
        },
    ),
    # ---- runconfig ----
    *[
        (
            ("runconfig",),
            key,
            {
                "type": ["integer", "null"],
                "default": None,
                "x-source": [_MZ202 + "common/input/utils.py", _RUNCFG_231],
            },
        )
        for key in (
            "compile_crd_memory_gi",
            "execute_crd_memory_gi",
            "wrk_memory_gi",
            "act_memory_gi",
            "cmd_memory_gi",
            "wgt_memory_gi",
        )
    ],
    (
        ("runconfig",),
        "max_checkpoints",
        {"type": ["integer", "null"], "default": 5, "x-source": [_RUNFLOW_202]},
    ),
    (
        ("runconfig",),
        "keep_checkpoint_max",
        {
            "type": "integer",
            "default": 5,
            "x-ignored-by": ["2.0.2"],
            "x-replaced-by": "runconfig.max_checkpoints",
            "x-source": [
                "1.8.0:modelzoo/transformers/tf/gpt2/utils.py",
                "2.1.0:modelzoo/common/pytorch/model_utils/checkpoint_converters/base_converter.py",
            ],
        },
    ),
    (
        ("runconfig",),
        "use_appliance_data",
        {
            "type": "boolean",
            "default": True,
            "x-ignored-by": ["2.0.2"],
            "x-source": [
                "1.9.1:modelzoo/common/pytorch/pytorch_base_runner.py",
                "2.1.0:modelzoo/common/pytorch/model_utils/checkpoint_converters/base_converter.py",
            ],
        },
    ),
    (
        ("runconfig",),
        "transfer_processes",
        {"type": ["integer", "null"], "x-source": [_RUNFLOW_202, _RUNCFG_231]},
    ),
    (
        ("runconfig",),
        "job_time_sec",
        {"type": ["integer", "null"], "default": None, "x-source": [_RUNFLOW_202, _RUNCFG_231]},
    ),
    (
        ("runconfig",),
        "disable_version_check",
        {"type": "boolean", "default": False, "x-source": [_RUNFLOW_202, _RUNCFG_231]},
    ),
    (
        ("runconfig",),
        "mgmt_namespace",
        {"type": ["null", "string"], "default": None, "x-source": [_RUNFLOW_202, _RUNCFG_231]},
    ),
    (("runconfig",), "drop_data", {"type": "boolean", "default": False, "x-source": [_RUNFLOW_202]}),
    (
        ("runconfig",),
        "log_input_summaries",
        {"type": "boolean", "default": False, "x-source": [_RUNFLOW_202, _RUNCFG_231]},
    ),
    (
        ("runconfig",),
        "main_process_id",
        {"type": "integer", "default": 0, "x-source": [_RUNFLOW_202, _RUNCFG_231]},
    ),
    (
        ("runconfig",),
        "summary_dir",
        {
            "type": ["null", "string"],
            "x-default-text": "<model_dir>/train (training), <model_dir>/eval (eval)",
            "x-source": [_RUNFLOW_202, _RUNCFG_231],
        },
    ),
    (
        ("runconfig",),
        "dump_activations",
        {"type": "boolean", "default": False, "x-source": [_RUNFLOW_202, _RUNCFG_231]},
    ),
    (
        ("runconfig",),
        "retrace_every_iteration",
        {"type": "boolean", "default": False, "x-source": [_RUNFLOW_202, _RUNCFG_231]},
    ),
    (
        ("runconfig",),
        "use_cstorch_optimizer_step",
        {"type": "boolean", "default": False, "x-source": [_RUNFLOW_202]},
    ),
    # ---- sparsity (otherwise an open section) ----
    (
        ("sparsity",),
        "type",
        {
            # 2.0.2 refuses a sparsity block without an explicit algorithm type ("sideband" is gone).
            "type": "string",
            "x-required": True,
            "x-source": [_RUNFLOW_202],
        },
    ),
    # ---- train_input / eval_input ----
    (
        _INPUTS,
        "label_vocab_file",
        {
            "type": "string",
            "x-required": True,
            "x-models": ["BERT (token classifier)"],
            "x-source": [_BERT_202 + "fine_tuning/token_classifier/input/BertTokenClassifierDataProcessor.py"],
        },
    ),
    (
        _INPUTS,
        "max_cls_tokens",
        {
            "type": "integer",
            "x-required": True,
            "x-models": ["BERT (summarization)"],
            "x-source": [_BERT_202 + "fine_tuning/extractive_summarization/input/BertSumCSVDataProcessor.py"],
        },
    ),
    (
        _INPUTS,
        "mixture",
        {
            # Weighted blend of datasets; exclusive with data_dir.
            "type": ["array", "null"],
            "default": None,
            "items": {
                "type": "object",
                "properties": {"data_dir": {"type": "string"}, "weight": {"type": "number"}},
                "required": ["data_dir", "weight"],
            },
            "x-source": ["2.2.0:src/cerebras/modelzoo/data/common/h5_map_dataset/dataset.py"],
        },
    ),
    (
        _INPUTS,
        "num_examples",
        {
            "type": ["integer", "null"],
            "default": None,
            "x-default-text": "read by the synthetic data processors only",
            "x-source": ["2.3.1:src/cerebras/modelzoo/data/common/config.py"],
        },
    ),
    (
        _INPUTS,
        "repeat",
        {
            "type": "boolean",
            "default": False,
            "x-ignored-by": ["2.0.2"],
            "x-source": ["1.8.0:modelzoo/transformers/pytorch/bert/input/BertCSVDynamicMaskDataProcessor.py"],
        },
    ),
    (
        _INPUTS,
        "whole_word_masking",
        {
            # Declared without a type and marked deprecated where it appears at all.
            "default": None,
            "x-ignored-by": ["2.0.2"],
            "x-source": ["2.10.0:src/cerebras/modelzoo/data/nlp/bert/BertCSVDataProcessor.py"],
        },
    ),
]


# --------------------------------------------------------------------------------------------
# Assembly
# --------------------------------------------------------------------------------------------


def documented_properties(facts: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """section -> dotted key -> property schema, from both documentation releases' facts."""
    grouped: dict[tuple[str, str], dict[str, list[Spec]]] = {}
    for release in RELEASES:
        for row in load(facts / DOCUMENTS[release][1])["rows"]:
            spec = spec_from_json(row)
            for section in row["sections"]:
                grouped.setdefault((section, row["name"]), {}).setdefault(release, []).append(spec)
    result: dict[str, dict[str, dict[str, Any]]] = {s: {} for s in SECTIONS}
    for (section, name), per_release in grouped.items():
        merged = {release: merge_rows(specs) for release, specs in per_release.items()}
        result[section][name] = build_property(merged)
    return result


def _types_of(fragment: dict[str, Any]) -> dict[str, Any]:
    """The type-describing keywords of a fragment (for the per-version x-types record)."""
    return {k: fragment[k] for k in ("type", "anyOf", "$ref", "items") if k in fragment}


def _type_names(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def apply_source_fact(prop: dict[str, Any] | None, fact: dict[str, Any]) -> dict[str, Any]:
    """Add a source fact to a documented property (widening only), or make a source-only one."""
    if prop is None:
        return {**fact, "x-versions": ["source"]}
    merged = dict(prop)
    merged["x-versions"] = prop["x-versions"] + ["source"]
    doc_types = _types_of(prop)
    new_types = _types_of(fact)
    if new_types and new_types != doc_types:
        # Record what each release said before widening.
        per_version = dict(prop.get("x-types") or {r: doc_types for r in prop["x-versions"]})
        per_version["source"] = new_types
        merged["x-types"] = per_version
        if "type" in fact and "type" in prop and not ({"anyOf", "$ref"} & fact.keys()):
            names = set(_type_names(prop["type"])) | set(_type_names(fact["type"]))
            if "number" in names:
                names.discard("integer")  # JSON Schema "number" already admits integers
            union = sorted(names)
            merged["type"] = union[0] if len(union) == 1 else union
        else:
            for key in ("type", "anyOf", "$ref", "items"):
                merged.pop(key, None)
            if "$ref" in fact and "type" in prop:
                # A documented scalar form stays valid next to the source's richer form.
                merged["anyOf"] = [{"type": prop["type"]}, {"$ref": fact["$ref"]}]
            else:
                merged.update(new_types)
    if "enum" in fact and "enum" in prop:
        extra = [v for v in fact["enum"] if v not in prop["enum"]]
        merged["enum"] = prop["enum"] + extra
        per_version = dict(prop.get("x-enums") or {r: prop["enum"] for r in prop["x-versions"]})
        per_version["source"] = fact["enum"]
        merged["x-enums"] = per_version
    if "default" in fact and prop.get("default", _MISSING) != fact["default"]:
        merged.setdefault("x-defaults", {})
        merged["x-defaults"] = {**merged["x-defaults"], "source": fact["default"]}
    for key, value in fact.items():
        if key in ("type", "anyOf", "$ref", "items", "enum", "default"):
            continue
        if key == "x-models":
            merged["x-models-source"] = value
        elif key not in merged:
            merged[key] = value
    return merged


def _nest(flat: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Turn dotted keys (`vae.act_fn`) into nested object properties."""
    nested: dict[str, dict[str, Any]] = {}
    for name in sorted(flat, key=lambda n: n.count(".")):
        *parents, leaf = name.split(".")
        level = nested
        for parent in parents:
            holder = level.setdefault(parent, {"x-versions": flat[name]["x-versions"]})
            holder.setdefault("type", "object")
            level = holder.setdefault("properties", {})
        if leaf in level:
            level[leaf] = {**flat[name], **level[leaf]}
        else:
            level[leaf] = dict(flat[name])
    return nested


def _open_objects(node: Any) -> None:
    """additionalProperties: true on every object schema that lists properties."""
    if isinstance(node, dict):
        if "properties" in node:
            node["additionalProperties"] = True
        for value in node.values():
            _open_objects(value)
    elif isinstance(node, list):
        for value in node:
            _open_objects(value)


def build_schema(facts: Path) -> dict[str, Any]:
    sections = documented_properties(facts)
    for section in OPEN_SECTIONS:
        sections[section] = {}
    for targets, key, fact in SOURCE_FACTS:
        for section in targets:
            sections[section][key] = apply_source_fact(sections[section].get(key), fact)
    properties: dict[str, Any] = {}
    for section, props in sections.items():
        properties[section] = {"type": "object"}
        if props:
            properties[section]["properties"] = _nest(props)
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": (
            "Generated by tools/gen_cerebras_schema.py from the Cerebras Model Zoo parameter docs "
            f"({R1_FILE} = r1, {R2_FILE} = r2) and facts read from the modelzoo source; do not edit."
        ),
        "type": "object",
        "properties": properties,
        "additionalProperties": True,
        "$defs": DEFS,
        "x-layout": "legacy",
        "x-generated-by": "tools/gen_cerebras_schema.py",
        "x-versions": [*RELEASES, "source"],
    }
    schema = copy.deepcopy(schema)  # the tables above stay untouched by the next step
    _open_objects(schema)
    return schema


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--facts",
        type=Path,
        default=FACTS_DIR,
        help="folder with the facts of the two Model Zoo parameter docs (default: %(default)s)",
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="schema file (default: %(default)s)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if the output file differs from a fresh generation",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from cerebras_trainer_schema import build_trainer_schema  # the trainer layout, from the same facts

    try:
        legacy = build_schema(args.facts)
        outputs = {args.output: render(legacy)}
        outputs[args.output.with_name("cerebras-trainer.schema.json")] = render(build_trainer_schema(legacy))
    except OSError as exc:
        print(f"gen_cerebras_schema: {exc}", file=sys.stderr)
        return 2
    if args.check:
        stale = [
            out for out, text in outputs.items() if (out.read_text(encoding="utf-8") if out.exists() else "") != text
        ]
        for out in stale:
            print(f"gen_cerebras_schema: {out} is stale; rerun without --check", file=sys.stderr)
        return 1 if stale else 0
    for out, text in outputs.items():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)  # atomic: a reader never sees a half-written schema
    return 0


if __name__ == "__main__":
    sys.exit(main())
