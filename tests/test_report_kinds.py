"""Structured report entries: every entry says a kind from the closed catalogue
(translator/core/report/kinds.py) and its values, and its detail is rendered from them in one place.

Each kind renders its catalogue example (values taken from real translations) to pinned text;
real translations (fixtures, small hand-made inputs, the shape tables) reach every kind, and in
every entry they make the detail is the rendering of its messages and the JSON matches the
report schema."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from neoconv.services import pipeline as api  # the pipeline (its check too), whose table lookups the tests patch
from neoconv.api import translate
from neoconv.core.errors import NeoconvError
from neoconv.io.documents import dump_json
from neoconv.knowledge.mapping import load_table, load_table_file
from neoconv.knowledge.registry import FORMATS
from neoconv.core.report import KINDS, Entry, Status, render, said
from neoconv.services.validate import schema_errors

from test_table_shapes import overlay
from conftest import FIXTURES, ROOT

# real values (from translations of the fixtures and the corpus) for every kind
EXAMPLES: dict[str, dict[str, Any]] = {
    "renamed": {},
    "converted": {"value": "AdamW"},
    "expressed": {
        "note": "expressed by the model family: the GPT-J backbone (gptj, gpt-neox) is parallel, gpt2/llama sequential"
    },
    "folded": {"fields": ["precision.dtype"]},
    "carried": {},
    "carried_unchecked": {
        "what": "HF qwen3_next (Qwen3NextConfig): Gated DeltaNet linear-attention layers beside gated attention"
    },
    "carried_as_written": {},
    "assumed": {"key": "model.attention_type", "value": "scaled_dot_product", "title": "Cerebras Model Zoo"},
    "not_assumed": {"key": "model.attention_type", "value": "dot_product", "assumed": "scaled_dot_product"},
    "no_counterpart": {"title": "DeepSpeed", "fields": ["model.num_layers"]},
    "absent": {
        "reason": "the PipelineModule in the model code decides pipeline stages; DeepSpeed's config has none",
        "field": "parallel.pipeline_size",
    },
    "not_derived": {"fields": ["batch.global"]},
    "means_absent": {"fields": ["model.sliding_window"], "why": "sliding_window is null"},
    "only_when": {"rule": "fp16.loss_scale", "when": {"precision.dtype": ["fp16"]}},
    "unexpressible": {
        "reason": "Cerebras takes the sequence length from the preprocessed data: preprocess with max sequence length 2048"
    },
    "no_counterpart_value": {
        "field": "model.position_embedding",
        "value": "none",
        "key": "model.position_embedding_type",
    },
    "no_place_in_layout": {
        "reason": "legacy configs name no model: the family is the run.py you launch (named in the file header)"
    },
    "derived_dropped": {
        "title": "GPT-NeoX",
        "own_entry": True,
        "values": [
            {"field": "model.family", "value": "gpt-neox", "from": ["gpt_j_residual", "bias_gelu_fusion", "pos_emb"]}
        ],
    },
    "unsupported_key": {"reason": "NeoX dataset storage format"},
    "not_read_by_release": {
        "title": "VeOmni",
        "release": "#1021",
        "key": "train.dyn_bsz_margin",
        "runs": "fb1b0b2d..#498",
    },
    "family_not_supported": {"what": "T5 (encoder-decoder)"},
    "framework_extension": {
        "reason": "DeepSpeed gradient all-reduce detail (pre-scaling, predivide factor, all-reduce op)"
    },
    "no_canonical_form": {"reason": "DeepSpeed's OneCycle schedule (cyclic lr) has no canonical form"},
    "not_a_parameter": {"title": "GPT-NeoX", "suggestion": "fp16.fp16"},
    "approximated": {
        "reason": "apex AMP: fp16 mixed precision with apex's own casting and loss scaler, not DeepSpeed's fp16 mode"
    },
    "cannot_express": {
        "title": "GPT-NeoX",
        "fields": ["model.norm_bias"],
        "why": {
            "kind": "unexpressible",
            "values": {"reason": "NeoX's layernorm always has a learned bias (use_bias_in_norms is never read)"},
        },
    },
    "relative_to_missing": {
        "title": "DeepSpeed",
        "field": "parallel.tensor_size",
        "why": {
            "kind": "absent",
            "values": {
                "reason": "the model code's mpu (Megatron, NeoX) decides tensor parallelism; DeepSpeed only divides by it",
                "field": "parallel.tensor_size",
            },
        },
    },
    "derived_by_target": {
        "title": "VeOmni",
        "field": "batch.grad_accum",
        "total": "batch.global",
        "factors": ["batch.micro", "batch.grad_accum", "parallel.data_parallel_size"],
        "unknown": ["batch.global"],
    },
    "fixed_value": {
        "reason": "veomni/optim/optimizer.py::build_optimizer hard-codes AdamW betas (0.9, 0.95) and eps 1e-8",
        "field": "optim.eps",
        "value": 1e-06,
    },
    "no_flag_for_value": {"field": "precision.dtype", "value": "cbf16", "keys": ["fp16.enabled", "bf16.enabled"]},
    "wrong_length": {"field": "optim.betas", "value": [0.9], "keys": ["optimizer.beta1", "optimizer.beta2"]},
    "picked_value": {
        "key": "model.norm_type",
        "choice": "rmsnorm",
        "means": {"model.norm_bias": False},
        "wanted": {"model.norm_bias": True},
    },
    "value_lost": {
        "title": "GPT-NeoX",
        "values": [{"field": "batch.global", "value": 256, "origin": "derived", "keys": []}],
        "reasons": [
            {
                "kind": "relative_to_missing",
                "values": {"title": "DeepSpeed", "field": "parallel.data_parallel_size", "why": None},
            }
        ],
    },
    "default_written": {
        "title": "GPT-NeoX",
        "field": "model.parallel_shared_norm",
        "value": False,
        "target": "Cerebras Model Zoo",
        "target_defaults": {"model.use_untied_layer_norm": False},
        "key_default": True,
        "written": {"model.use_untied_layer_norm": True},
        "field_default": True,  # the inverted flag's default, as the field's
    },
    "release_default": {
        "title": "GPT-NeoX",
        "key": "weight_decay",
        "value": 0.1,
        "read_as": "2026-05-19",
        "first": "2022-12-14",
        "last": "2026-05-19",
        "runs": [["2022-12-14", "2023-12-22", 0.01], ["2023-12-26", "2026-05-19", 0.1]],
    },
    "default_not_kept": {
        "title": "DeepSpeed",
        "field": "batch.grad_accum",
        "value": 1,
        "key": "gradient_accumulation_steps",
        "reason": {
            "kind": "approximated",
            "values": {
                "reason": "VeOmni derives the accumulation from global / (micro x data-parallel size); the micro batch, data-parallel size (--world-size) is not known here"
            },
        },
    },
    "derived_not_kept": {
        "title": "GPT-NeoX",
        "field": "schedule.warmup_type",
        "value": "linear_clamped",
        "reason": {
            "kind": "approximated",
            "values": {"reason": "the first step gets the warmup start 0 (the other steps agree)"},
        },
    },
    "added_for_target": {
        "title": "GPT-NeoX",
        "written": {"gradient_accumulation_steps": 1},
        "why": "NeoX needs it to load the config: the global batch is the micro batch x data-parallel size",
    },
    "target_value": {
        "title": "DeepSpeed",
        "field": "batch.grad_accum",
        "value": 1,
        "keys": ["train_batch_size"],
        "source": "Cerebras Model Zoo",
        "why": "Cerebras accumulates gradients automatically; the global batch is what carries over",
    },
    "needs_value": {"field": "model.seq_length", "hint": None, "elsewhere": None},
    "set_written": {"field": "train.steps", "value": 1000},
    "used_to_derive": {"fields": ["parallel.data_parallel_size"]},
    "overridden": {"field": "optim.lr"},
    "coerced": {"note": "read '1e-8' as the number 1e-08 (YAML 1.1 needs a dot in floats)"},
    "wrong_type": {"message": "expected a list, got the string 'None'"},
    "reader_note": {"note": "written as pipe-parallel-size"},
    "runtime_value": {
        "why": '"auto" is filled in by the Hugging Face Trainer/Accelerate from their own arguments at run time; it is no DeepSpeed value',
        "fields": ["batch.global"],
    },
    "not_a_value": {
        "title": "GPT-NeoX",
        "release": "2024-09-09",
        "key": "norm",
        "value": "flash_rmsnorm",
        "known": ["layernorm", "rmsnorm", "scalenorm", "te_rmsnorm", "te_layernorm"],
        "fields": ["model.norm"],
    },
    "read_with_unknown_value": {"key": "lr_decay_style", "value": "infinite_cosine", "fields": ["schedule.phases"]},
    "read_with_runtime_value": {"keys": ["scheduler.params.warmup_min_lr", "scheduler.params.warmup_max_lr"]},
    "reads_back_differently": {
        "field": "parallel.data_parallel_size",
        "source_value": 4,
        "written": {},
        "read_back": 8,
    },
    "refused_by_release": {
        "title": "DeepSpeed",
        "release": "0.19.5",
        "problems": {"fp16.min_loss_scale": "1e-10 is not of type 'integer'"},
    },
    "unreadable_output": {
        "message": "cannot compute batch.global: train_batch_size 128 != micro batch 8 x gradient_accumulation_steps 4 x data-parallel size 8: DeepSpeed's batch assertion fails at this world size"
    },
    "text": {"text": "Model Zoo needs the data processor (e.g. GptHDF5MapDataProcessor for data preprocessed to HDF5)"},
}

RENDERED = [
    ("renamed", ""),
    ("converted", "= 'AdamW'"),
    (
        "expressed",
        "expressed by the model family: the GPT-J backbone (gptj, gpt-neox) is parallel, gpt2/llama sequential",
    ),
    ("folded", "folded into precision.dtype"),
    ("carried", ""),
    (
        "carried_unchecked",
        "carried as written, not checked: HF qwen3_next (Qwen3NextConfig): Gated DeltaNet "
        "linear-attention layers beside gated attention",
    ),
    ("carried_as_written", "carried as written"),
    ("assumed", "model.attention_type='scaled_dot_product' is what Cerebras Model Zoo assumes"),
    (
        "not_assumed",
        "model.attention_type='dot_product' is not expressible: the other frameworks assume 'scaled_dot_product'",
    ),
    ("no_counterpart", "DeepSpeed has no counterpart for model.num_layers"),
    ("absent", "the PipelineModule in the model code decides pipeline stages; DeepSpeed's config has none"),
    ("not_derived", "no value for batch.global could be derived"),
    ("means_absent", "no model.sliding_window: sliding_window is null"),
    ("only_when", "fp16.loss_scale only applies when precision.dtype=fp16"),
    (
        "unexpressible",
        "Cerebras takes the sequence length from the preprocessed data: preprocess with max sequence length 2048",
    ),
    ("no_counterpart_value", "model.position_embedding='none' has no counterpart in model.position_embedding_type"),
    (
        "no_place_in_layout",
        "legacy configs name no model: the family is the run.py you launch (named in the file header)",
    ),
    (
        "derived_dropped",
        "GPT-NeoX derives model.family='gpt-neox' (from gpt_j_residual, bias_gelu_fusion, pos_emb) with no "
        "key of its own",
    ),
    ("unsupported_key", "NeoX dataset storage format"),
    ("not_read_by_release", "VeOmni #1021 does not read train.dyn_bsz_margin (read by fb1b0b2d..#498)"),
    (
        "family_not_supported",
        "family not supported: T5 (encoder-decoder); the canonical fields describe decoder-only language models",
    ),
    ("framework_extension", "DeepSpeed gradient all-reduce detail (pre-scaling, predivide factor, all-reduce op)"),
    ("no_canonical_form", "DeepSpeed's OneCycle schedule (cyclic lr) has no canonical form"),
    ("not_a_parameter", "not a GPT-NeoX parameter; did you mean fp16.fp16?"),
    (
        "approximated",
        "apex AMP: fp16 mixed precision with apex's own casting and loss scaler, not DeepSpeed's fp16 mode",
    ),
    (
        "cannot_express",
        "GPT-NeoX cannot express model.norm_bias: NeoX's layernorm always has a learned bias (use_bias_in_norms "
        "is never read)",
    ),
    (
        "relative_to_missing",
        "DeepSpeed reads it relative to parallel.tensor_size, which this output does not hold (the model "
        "code's mpu (Megatron, NeoX) decides tensor parallelism; DeepSpeed only divides by it)",
    ),
    (
        "derived_by_target",
        "VeOmni derives batch.grad_accum from batch.global = batch.micro x batch.grad_accum x "
        "parallel.data_parallel_size; batch.global is not known here",
    ),
    (
        "fixed_value",
        "veomni/optim/optimizer.py::build_optimizer hard-codes AdamW betas (0.9, 0.95) and eps 1e-8: optim.eps "
        "1e-06 cannot be set",
    ),
    ("no_flag_for_value", "precision.dtype='cbf16' has no counterpart among fp16.enabled, bf16.enabled"),
    ("wrong_length", "optim.betas=[0.9]: optimizer.beta1, optimizer.beta2 take exactly 2 items"),
    ("picked_value", "model.norm_type 'rmsnorm' means model.norm_bias=false: model.norm_bias=true is not expressible"),
    (
        "value_lost",
        "GPT-NeoX batch.global=256 (derived): DeepSpeed reads it relative to parallel.data_parallel_size, which "
        "this output does not hold",
    ),
    (
        "default_written",
        "GPT-NeoX default model.parallel_shared_norm=false (not in the file); Cerebras Model Zoo default is "
        "true: wrote model.use_untied_layer_norm=true",
    ),
    (
        "release_default",
        "GPT-NeoX's default weight_decay depends on the release (0.01 in 2022-12-14..2023-12-22; 0.1 in "
        "2023-12-26..2026-05-19): the file's keys fit 2022-12-14..2026-05-19, read as 2026-05-19 (0.1); give "
        "--from-version RELEASE to read it as another",
    ),
    (
        "default_not_kept",
        "DeepSpeed default batch.grad_accum=1 (gradient_accumulation_steps), not in the file, is not kept: "
        "VeOmni derives the accumulation from global / (micro x data-parallel size); the micro batch, "
        "data-parallel size (--world-size) is not known here",
    ),
    (
        "derived_not_kept",
        "GPT-NeoX schedule.warmup_type='linear_clamped' (derived from other settings) is not kept: the first "
        "step gets the warmup start 0 (the other steps agree)",
    ),
    (
        "added_for_target",
        "not in the source, added for GPT-NeoX: wrote gradient_accumulation_steps=1 (NeoX needs it to load "
        "the config: the global batch is the micro batch x data-parallel size)",
    ),
    (
        "target_value",
        "DeepSpeed runs with batch.grad_accum=1 (from train_batch_size): Cerebras Model Zoo has no value for it "
        "(Cerebras accumulates gradients automatically; the global batch is what carries over)",
    ),
    ("needs_value", "give it with --set model.seq_length=VALUE"),
    ("set_written", "= 1000"),
    ("used_to_derive", "used to derive parallel.data_parallel_size"),
    ("overridden", "overridden by --set optim.lr"),
    ("coerced", "read '1e-8' as the number 1e-08 (YAML 1.1 needs a dot in floats)"),
    (
        "wrong_type",
        "does not match the documented type (expected a list, got the string 'None'); not used by the translation",
    ),
    ("reader_note", "written as pipe-parallel-size"),
    (
        "runtime_value",
        '"auto" is filled in by the Hugging Face Trainer/Accelerate from their own arguments at run time; it is '
        "no DeepSpeed value; give the value with --set batch.global=VALUE",
    ),
    (
        "not_a_value",
        "'flash_rmsnorm' is not a value of GPT-NeoX 2024-09-09 (it knows layernorm, rmsnorm, scalenorm, "
        "te_rmsnorm, te_layernorm): a fork's?; model.norm left without a value",
    ),
    (
        "read_with_unknown_value",
        "read together with lr_decay_style='infinite_cosine', which the file's release does not "
        "know: schedule.phases not read",
    ),
    (
        "read_with_runtime_value",
        "read together with scheduler.params.warmup_min_lr, scheduler.params.warmup_max_lr, whose "
        "value is only known at run time",
    ),
    (
        "reads_back_differently",
        "parallel.data_parallel_size is 4 in the source, not written; reads back as 8 (the target's default)",
    ),
    ("refused_by_release", "not valid in DeepSpeed 0.19.5: 1e-10 is not of type 'integer'"),
    (
        "unreadable_output",
        "the written config cannot be read back: cannot compute batch.global: train_batch_size 128 != micro "
        "batch 8 x gradient_accumulation_steps 4 x data-parallel size 8: DeepSpeed's batch assertion fails "
        "at this world size",
    ),
    ("text", "Model Zoo needs the data processor (e.g. GptHDF5MapDataProcessor for data preprocessed to HDF5)"),
]


def test_the_catalogue_is_closed_and_pinned() -> None:
    assert [k for k, _ in RENDERED] == list(KINDS) == list(EXAMPLES)
    schema = json.loads((ROOT / "schemas" / "report.schema.json").read_text())
    assert schema["properties"]["entries"]["items"]["properties"]["kind"]["enum"] == sorted(KINDS)


@pytest.mark.parametrize("kind,text", RENDERED, ids=[k for k, _ in RENDERED])
def test_every_kind_renders_its_example(kind: str, text: str) -> None:
    assert render(kind, EXAMPLES[kind]) == text
    assert KINDS[kind].doc


# ---- real translations reach every kind -----------------------------------------------------

PAIRS_OF_FIXTURES = {
    "neox": sorted((FIXTURES / "inputs" / "neox").glob("*.yml")),
    "deepspeed": sorted((FIXTURES / "inputs" / "deepspeed").glob("*.json")),
    "cerebras": sorted((FIXTURES / "inputs" / "cerebras").glob("*.yaml")),
}
HAND_MADE = {
    # a typo, an unknown key, an enum value without counterpart, a warmup fraction without train_iters
    "odd.yml": (
        "neox",
        "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\nmax_position_embeddings: 128\n"
        "hiden_dropout: 0.1\nmy_own_knob: 3\nlr_decay_style: exponential\nwarmup: 0.01\n"
        "optimizer: {type: Adam, params: {lr: 0.001}}\n",
    ),
    # what Cerebras assumes, said otherwise; a documented key of the wrong type
    "zoo.yaml": (
        "cerebras",
        "model: {hidden_size: 64, num_hidden_layers: 2, num_heads: 4, filter_size: 256, vocab_size: 1000,\n"
        "  max_position_embeddings: 128, use_bias_in_output: true, attention_type: dot_product}\n"
        "optimizer: {optimizer_type: adamw, learning_rate: 0.001}\n"
        "runconfig: {max_steps: 10, save_losses: [1]}\n",
    ),
    # DeepSpeed keys with no canonical field, of a documented group
    "ds.json": ("deepspeed", '{"train_batch_size": 8, "steps_per_print": 10, "prescale_gradients": true}'),
    # a torch optimizer and a torch scheduler with no canonical form
    "torch.json": (
        "deepspeed",
        '{"train_batch_size": 8, "optimizer": {"type": "RMSprop", "params": {"lr": 0.001}}, '
        '"scheduler": {"type": "LambdaLR", "params": {}}}',
    ),
    # a scheduler with no canonical form and no optimizer lr: nothing of the schedule could be derived
    "lambda.json": ("deepspeed", '{"train_batch_size": 8, "scheduler": {"type": "LambdaLR", "params": {}}}'),
    # a fork's values (LorrinWWW/gpt-neox-llama's flash_rmsnorm, zainsarwar865/gpt-neox's infinite_cosine)
    "fork.yml": (
        "neox",
        "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\n"
        "max_position_embeddings: 128\nnorm: flash_rmsnorm\nlr_decay_style: infinite_cosine\n"
        "warmup: 0.01\ntrain_iters: 100\noptimizer: {type: Adam, params: {lr: 0.001}}\n",
    ),
    # a position encoding Cerebras has no value for
    "nopos.yml": (
        "neox",
        "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\n"
        "max_position_embeddings: 128\npos_emb: none\n",
    ),
    # a T5 (a family the canonical fields do not describe), in the style of Model Zoo R_1.7.1's t5_base.yaml
    "t5.yaml": (
        "cerebras",
        "train_input: {data_processor: T5DynamicDataProcessor, batch_size: 216}\n"
        "model: {src_vocab_size: 32001, encoder_num_hidden_layers: 12, d_model: 768, mixed_precision: true}\n"
        "optimizer: {optimizer_type: AdamW, learning_rate: 0.0001}\nrunconfig: {max_steps: 10}\n",
    ),
    # a config.json that says on purpose it has no sliding window (Mixtral's published file)
    "mixtral.json": (
        "hf",
        '{"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, '
        '"num_key_value_heads": 2, "vocab_size": 1000, "sliding_window": null}',
    ),
    # a nested VeOmni file with the flat-era dyn_bsz_margin, which the release it fits (#1021) does not read
    "margin.yaml": (
        "veomni",
        "model: {model_path: m}\ndata: {train_path: d, max_seq_len: 128, train_size: 100000}\n"
        "train: {optimizer: {lr: 1.0e-4, lr_min: 1.0e-6}, checkpoint: {output_dir: o, save_steps: 10}, dyn_bsz_margin: 10}\n",
    ),
}


def _entries(tmp_path: Path) -> list[Entry]:
    found: list[Entry] = []
    for src, paths in PAIRS_OF_FIXTURES.items():
        for path in paths:
            for dst in FORMATS:
                for options in ({"world_size": 8}, {}):
                    try:
                        found += translate([str(path)], src, dst, **options).report.entries
                    except NeoconvError:
                        pass
    for name, (src, text) in HAND_MADE.items():
        (tmp_path / name).write_text(text)
        for dst in FORMATS:
            try:
                found += translate([str(tmp_path / name)], src, dst, world_size=8).report.entries
            except NeoconvError:
                pass
    pythia = str(FIXTURES / "inputs" / "neox" / "pythia-160m.yml")
    found += translate([pythia], "neox", "cerebras", set_values={"optim.lr": 0.001}).report.entries
    return found


def _shape_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Entry]:
    """Kinds the grammar's shapes say (tests/tables/), through real translations."""
    # mappings/veomni.yaml's own `fixed:` rules (AdamW betas, eps)
    found: list[Entry] = list(translate([str(_other_adam(tmp_path))], "neox", "veomni", world_size=8).report.entries)
    for name, src, dst, path, options in (
        ("veomni-product", "neox", "veomni", _accumulating(tmp_path), {}),
        ("deepspeed-flags", "cerebras", "deepspeed", _cbfloat16(tmp_path), {}),
    ):
        table = overlay(name, tmp_path)
        with monkeypatch.context() as patch:
            patch.setattr(api, "load_table", lambda f, t=table: t if f == t.format else load_table(f))
            found += translate([str(path)], src, dst, **options).report.entries  # type: ignore[arg-type]
    return found


def _accumulating(tmp_path: Path) -> Path:
    """Pythia with accumulation 2 and no global batch: VeOmni cannot get 2 back without a world size."""
    text = (FIXTURES / "inputs" / "neox" / "pythia-160m.yml").read_text()
    path = tmp_path / "accumulating.yml"
    path.write_text(text.replace('"gradient_accumulation_steps": 1', '"gradient_accumulation_steps": 2'))
    return path


def _cbfloat16(tmp_path: Path) -> Path:
    text = (FIXTURES / "inputs" / "cerebras" / "llama-tiny-defaults.yaml").read_text()
    path = tmp_path / "cbf16.yaml"
    path.write_text(
        text.replace(
            "  nonlinearity: swiglu\n", "  nonlinearity: swiglu\n  mixed_precision: true\n  fp16_type: cbfloat16\n"
        )
    )
    return path


def _other_adam(tmp_path: Path) -> Path:
    text = (FIXTURES / "inputs" / "neox" / "pythia-160m.yml").read_text()
    path = tmp_path / "adam.yml"
    path.write_text(text.replace('"betas": [0.9, 0.95], "eps": 1e-8', '"betas": [0.9, 0.999], "eps": 1e-6'))
    return path


def _all_kinds(entries: list[Entry]) -> set[str]:
    return {kind for e in entries for kind, _ in e.messages()} | {
        n["kind"] for e in entries for _, values in e.messages() for n in _nested(values)
    }


def _nested(values: Any) -> list[dict[str, Any]]:
    found = []
    for value in values.values() if isinstance(values, dict) else ():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and set(item) == {"kind", "values"}:
                found += [item, *_nested(item["values"])]
            elif isinstance(item, dict):
                found += _nested(item)
    return found


# kinds no translation reaches (EXAMPLES and the shape tests render them): a list
# of one item, a flags table's unknown value, and a pick whose one key means another value
ONLY_BY_FORMULA = {"wrong_length", "picked_value"}
# the read-back's safety net: said only when no entry names a difference (a gap in neoconv, which the
# loss-proof tests keep at zero); its template is checked with the catalogue's example values
# the same for the output's validation at the target release (a writer that writes what the release refuses:
# test_output_valid.py)
SAFETY_NET = {"reads_back_differently", "refused_by_release"}
# a model family's block, named once where the target holds no architecture (DeepSpeed:
# test_families); a target with one refuses the file, and a same-format migration carries the block
IN_REFUSALS = {"family_not_supported"}


def test_real_translations_say_every_kind_and_render_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = _entries(tmp_path) + _shape_entries(tmp_path, monkeypatch)
    kinds = _all_kinds(entries)
    assert set(KINDS) - ONLY_BY_FORMULA - SAFETY_NET - IN_REFUSALS - kinds == set()
    assert not ONLY_BY_FORMULA & kinds  # (when one is reached, take it off the list)
    for entry in entries:
        parts = [render(kind, values) for kind, values in entry.messages()]
        assert entry.detail == "; ".join(p for p in parts if p), entry
        assert entry.kind in KINDS or entry.kind == ""


def test_json_entries_carry_kind_and_values_and_match_the_schema(tmp_path: Path) -> None:
    done = translate([str(FIXTURES / "inputs" / "deepspeed" / "hf-auto.json")], "deepspeed", "neox", world_size=8)
    data = json.loads(dump_json(done.report.to_json()))
    assert schema_errors(data, "report") == []
    auto = next(e for e in data["entries"] if e["kind"] == "runtime_value")
    assert auto["values"]["fields"] and render(auto["kind"], auto["values"]) == auto["detail"]
    lossy = [e for e in data["entries"] if e["values"].get("also")]
    assert lossy and all(
        render(e["kind"], {k: v for k, v in e["values"].items() if k != "also"}) in e["detail"] for e in lossy
    )


# ---- Entry: prose callers, typed changes ----------------------------------------------------


def test_an_entry_given_as_prose_reads_as_kind_text() -> None:
    entry = Entry(
        None, "train_input.data_processor", Status.MISSING, "Model Zoo needs the data processor", ("model.vocab_size",)
    )
    assert entry.to_json()["kind"] == "text" and entry.to_json()["values"] == {
        "text": "Model Zoo needs the data processor"
    }
    assert entry.messages() == (("text", {"text": "Model Zoo needs the data processor"}),)
    assert entry.targets == ("train_input.data_processor",)


def test_amended_and_relocated_entries_stay_rendered_from_their_messages() -> None:
    entry = said(
        "optimizer.params.lr",
        "optimizer.learning_rate, optimizer.lr",
        Status.CONVERTED,
        (("converted", {"value": 0.001}),),
        ("optim.lr",),
        ("optimizer.learning_rate", "optimizer.lr"),
    )
    assert entry.targets == ("optimizer.learning_rate", "optimizer.lr")  # never split from the text
    amended = entry.amended(Status.LOSSY, ("approximated", {"reason": "the writer moved it"}))
    assert amended.status is Status.LOSSY and amended.detail == "the writer moved it; = 0.001"
    assert amended.kind == "approximated" and amended.values["also"] == [
        {"kind": "converted", "values": {"value": 0.001}}
    ]
    prose = entry.amended(Status.LOSSY, "a writer's own words", first=False)
    assert prose.detail == "= 0.001; a writer's own words" and prose.kind == "converted"
    moved = entry.relocated({"optimizer.lr": "trainer.init.optimizer.lr"})
    assert moved.target_key == "optimizer.learning_rate, trainer.init.optimizer.lr"
    assert moved.targets == ("optimizer.learning_rate", "trainer.init.optimizer.lr") and moved.detail == entry.detail
    default = said(
        None,
        "runconfig.seed",
        Status.DEFAULTED,
        (
            (
                "default_written",
                {
                    "title": "GPT-NeoX",
                    "field": "train.seed",
                    "value": 1234,
                    "target": "Cerebras Model Zoo",
                    "target_defaults": {},
                    "key_default": False,
                    "written": {"runconfig.seed": 1234},
                },
            ),
        ),
        ("train.seed",),
    )
    there = default.relocated({"runconfig.seed": "trainer.init.seed"})
    assert there.target_key == "trainer.init.seed" and there.detail.endswith("wrote trainer.init.seed=1234")
    assert default.relocated({"runconfig.seed": "--seed"}, lambda key: key).detail == default.detail


def test_values_json_cannot_hold_are_written_as_text() -> None:
    entry = said("max_grad_norm", "gradient_clipping", Status.CONVERTED, (("converted", {"value": math.inf}),))
    assert entry.detail == "= inf"
    assert json.loads(dump_json({"e": entry.to_json()}))["e"]["values"] == {"value": "inf"}


def test_the_docs_name_every_kind() -> None:
    section = (ROOT / "docs" / "report.md").read_text()
    assert {k for k in KINDS if f"`{k}`" not in section} == set()


def test_an_inverted_flags_default_is_said_as_the_fields(pythia160m: Path) -> None:
    """Issue 18's contradiction: 'both defaults are False, then wrote True'. Cerebras'
    use_untied_layer_norm defaults to false, which is parallel_shared_norm true."""
    done = translate([str(pythia160m)], "neox", "cerebras")
    entry = next(e for e in done.report.entries if e.fields == ("model.parallel_shared_norm",))
    assert entry.status is Status.DEFAULTED
    assert entry.detail == (
        "GPT-NeoX default model.parallel_shared_norm=false (not in the file); Cerebras Model Zoo "
        "default is true: wrote model.use_untied_layer_norm=true"
    )
    assert done.config["model"]["use_untied_layer_norm"] is True
