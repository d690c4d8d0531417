"""The closed catalogue of report message kinds, each with one template (as pandoc's LogMessage):
an entry says `kind` and `values`, and its `detail` is rendered from them here, in one place.

A message is (kind, values); `values` is JSON-ready (it is what the JSON report carries), and a
value that is itself a message is {"kind": ..., "values": ...}. Text that tables, formulas,
readers and writers give (a table's `unsupported:` reason, a formula's Approx) is carried whole
in the value its kind names (`reason`, `note`, `text`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

Values = Mapping[str, Any]
Message = tuple[str, Values]  # (kind, values)


def short(value: Any) -> str:
    """A value as a message shows it: strings quoted, anything past 60 characters cut."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def short_repr(value: Any) -> str:
    """A value as a read-back message shows it (repr, cut at 60)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _names(values: Any) -> str:
    return ", ".join(values)


def nested(message: Any) -> str:
    """A message inside another's values, rendered ("" when there is none)."""
    return render(message["kind"], message["values"]) if message else ""


def _not_a_parameter(v: Values) -> str:
    if v.get("unsearched"):
        return f"not a {v['title']} parameter (no suggestion: the file has too many unknown keys)"
    return f"not a {v['title']} parameter" + (f"; did you mean {v['suggestion']}?" if v.get("suggestion") else "")


def _runtime_value(v: Values) -> str:
    fields: list[str] = list(v.get("fields") or ())
    hint = f"; give the value with --set {fields[0]}=VALUE" if len(fields) == 1 else (
        f"; give the values with --set (fields {_names(fields)})" if fields else "")  # fmt: skip
    return str(v["why"]) + hint


def _default_written(v: Values) -> str:
    defaults = v.get("target_defaults") or []
    if v.get("key_default") and defaults:
        tdef = f"; {v['target']} default is {short(defaults[0][1])}"
    else:
        tdef = "; ".join(f"{k}={short(d)}" for k, d in defaults)
        tdef = f"; {v['target']} default {tdef}" if tdef else ""
    shown = ", ".join(f"{k}={short(value)}" for k, value in v["written"])
    return f"{v['title']} default {v['field']}={short(v['value'])} (not in the file){tdef}: wrote {shown}"


def _value_lost(v: Values) -> str:
    shown = []
    for item in v["values"]:
        how = "not in the file" if item["origin"] == "default" else (
            f"from {_names(item['keys'])}" if item["keys"] else item["origin"])  # fmt: skip
        shown.append(f"{item['field']}={short(item['value'])} ({how})")
    return f"{v['title']} {', '.join(shown)}: {'; '.join(nested(m) for m in v['reasons'])}"


def _needs_value(v: Values) -> str:
    if v.get("elsewhere"):
        return f"{v['elsewhere']}, or --set {v['field']}=VALUE"
    return str(v.get("hint") or f"give it with --set {v['field']}=VALUE")


def _reads_back_differently(v: Values) -> str:
    written = v.get("written") or []
    what = "written as " + ", ".join(f"{k}={short_repr(x)}" for k, x in written) if written else "not written"
    back = "nothing" if v.get("read_back") is None else short_repr(v["read_back"]) + ("" if written else " (the target's default)")
    return f"{v['field']} is {short_repr(v['source_value'])} in the source, {what}; reads back as {back}"


def _only_when(v: Values) -> str:
    cond = ", ".join(f"{k}={'/'.join(map(str, allowed))}" for k, allowed in v["when"].items())
    return f"{v['rule']} only applies when {cond}"


@dataclass(frozen=True)
class Kind:
    doc: str  # what the message says, for the catalogue (README, tests)
    template: Callable[[Values], str]
    example: dict[str, Any]  # real values, rendered by the tests


KINDS: dict[str, Kind] = {
    # ---- a leaf a rule read, and what the target made of it
    "renamed": Kind("carried to the target key with the same value", lambda v: "", {}),
    "converted": Kind("written as another value", lambda v: f"= {short(v['value'])}" if "value" in v else "",
                      {"value": "AdamW"}),
    "expressed": Kind("expressed by the target's structure, as its table notes", lambda v: str(v["note"]),
                      {"note": "expressed by the model family: the GPT-J backbone (gptj, gpt-neox) is parallel, gpt2/llama sequential"}),
    "folded": Kind("a further key of a rule, folded into the rule's fields",
                   lambda v: f"folded into {_names(v['fields'])}", {"fields": ["precision.dtype"]}),
    "carried": Kind("a same-format translation carried the leaf as written", lambda v: "", {}),
    "carried_as_written": Kind("an unknown leaf a same-format translation carried as written",
                               lambda v: "carried as written", {}),
    "assumed": Kind("a key whose value the target assumes",
                    lambda v: f"{v['key']}={short(v['value'])} is what {v['title']} assumes",
                    {"key": "model.attention_type", "value": "scaled_dot_product", "title": "Cerebras Model Zoo"}),
    "not_assumed": Kind("a key whose value differs from what the other frameworks assume",
                        lambda v: f"{v['key']}={v['value']!r} is not expressible: the other frameworks assume {v['assumed']!r}",
                        {"key": "model.use_bias_in_output", "value": True, "assumed": False}),
    # ---- not written
    "no_counterpart": Kind("the target has no counterpart (for these fields)",
                           lambda v: f"{v['title']} has no counterpart" + (f" for {_names(v['fields'])}" if v.get("fields") else ""),
                           {"title": "DeepSpeed", "fields": ["model.num_layers"]}),
    "absent": Kind("the target cannot express the field; its table says why", lambda v: str(v["reason"]),
                   {"reason": "the PipelineModule in the model code decides pipeline stages; DeepSpeed's config has none", "field": "parallel.pipeline_size"}),
    "not_derived": Kind("no value for the fields could be derived",
                        lambda v: f"no value for {_names(v['fields'])} could be derived", {"fields": ["batch.global"]}),
    "only_when": Kind("the target rule applies under a condition the IR does not meet", _only_when,
                      {"rule": "fp16.loss_scale", "when": {"precision.dtype": ["fp16"]}}),
    "unexpressible": Kind("the target has the key but not this value (a formula's reason)", lambda v: str(v["reason"]),
                          {"reason": "Cerebras takes the sequence length from the preprocessed data: preprocess with max sequence length 2048"}),
    "no_counterpart_value": Kind("an enum value the target key lacks",
                                 lambda v: f"{v['field']}={short(v['value'])} has no counterpart in {v['key']}",
                                 {"field": "model.position_embedding", "value": "none", "key": "model.position_embedding_type"}),
    "no_place_in_layout": Kind("the target layout has no place for the leaf (the writer's reason)", lambda v: str(v["reason"]),
                               {"reason": "legacy configs name no model: the family is the run.py you launch (named in the file header)"}),
    "unsupported_key": Kind("a known key with no canonical meaning (the table's reason)", lambda v: str(v["reason"]),
                            {"reason": "NeoX dataset storage format"}),
    "framework_extension": Kind("a known key of the source framework with no canonical field (its group's reason)",
                                lambda v: str(v["reason"]), {"reason": "DeepSpeed gradient all-reduce detail (pre-scaling, predivide factor, all-reduce op)"}),
    "no_canonical_form": Kind("a value a formula reads as having no canonical form", lambda v: str(v["reason"]),
                              {"reason": "DeepSpeed's OneCycle schedule (cyclic lr) has no canonical form"}),
    "not_a_parameter": Kind("a key the source framework does not know", _not_a_parameter,
                            {"title": "GPT-NeoX", "suggestion": "fp16.fp16"}),
    # ---- lost on the way
    "approximated": Kind("the value is only approximated (a formula's, table's or reader's reason)", lambda v: str(v["reason"]),
                         {"reason": "apex AMP: fp16 mixed precision with apex's own casting and loss scaler, not DeepSpeed's fp16 mode"}),
    "cannot_express": Kind("the target cannot express some of a rule's fields",
                           lambda v: f"{v['title']} cannot express {_names(v['fields'])}" + (f": {nested(v['why'])}" if v.get("why") else ""),
                           {"title": "GPT-NeoX", "fields": ["model.norm_bias"], "why": {"kind": "unexpressible", "values": {"reason": "NeoX's layernorm always has a learned bias (use_bias_in_norms is never read)"}}}),
    "relative_to_missing": Kind("the target reads the value relative to a field the output does not hold",
                                lambda v: f"{v['title']} reads it relative to {v['field']}, which this output does not hold"
                                + (f" ({nested(v['why'])})" if v.get("why") else ""),
                                {"title": "DeepSpeed", "field": "parallel.tensor_size", "why": {"kind": "absent", "values": {"reason": "the model code's mpu (Megatron, NeoX) decides tensor parallelism; DeepSpeed only divides by it", "field": "parallel.tensor_size"}}}),
    "derived_by_target": Kind("the target derives the value from a product whose other values are not known",
                              lambda v: f"{v['title']} derives {v['field']} from {v['total']} = {' x '.join(v['factors'])}; "
                              f"{_names(v['unknown'])} is not known here",
                              {"title": "VeOmni", "field": "batch.grad_accum", "total": "batch.global",
                               "factors": ["batch.micro", "batch.grad_accum", "parallel.data_parallel_size"], "unknown": ["batch.global"]}),
    "fixed_value": Kind("the target hard-codes the field: another value cannot be set",
                        lambda v: f"{v['reason']}: {v['field']} {short(v['value'])} cannot be set",
                        {"reason": "veomni/optim/optimizer.py::build_optimizer hard-codes AdamW betas (0.9, 0.95) and eps 1e-8",
                         "field": "optim.eps", "value": 1e-06}),
    "no_flag_for_value": Kind("no switch of the target means this value",
                              lambda v: f"{v['field']}={short(v['value'])} has no counterpart among {_names(v['keys'])}",
                              {"field": "precision.dtype", "value": "cbf16", "keys": ["fp16.enabled", "bf16.enabled"]}),
    "wrong_length": Kind("a list the target's keys cannot hold item by item",
                         lambda v: f"{v['field']}={short(v['value'])}: {_names(v['keys'])} take exactly {len(v['keys'])} items",
                         {"field": "optim.betas", "value": [0.9], "keys": ["optimizer.beta1", "optimizer.beta2"]}),
    "picked_value": Kind("the one key the target has means other values for some fields",
                         lambda v: f"{v['key']} {short(v['choice'])} means "
                         + ", ".join(f"{f}={short(x)}" for f, x in v["means"]) + ": "
                         + ", ".join(f"{f}={short(x)}" for f, x in v["wanted"]) + " is not expressible",
                         {"key": "model.norm_type", "choice": "rmsnorm", "means": [["model.norm_bias", False]],
                          "wanted": [["model.norm_bias", True]]}),
    "value_lost": Kind("a value no source leaf carries (a default, a derived value) is lost", _value_lost,
                       {"title": "GPT-NeoX", "values": [{"field": "batch.global", "value": 256, "origin": "derived", "keys": []}], "reasons": [{"kind": "relative_to_missing", "values": {"title": "DeepSpeed", "field": "parallel.data_parallel_size", "why": None}}]}),
    # ---- defaults
    "default_written": Kind("the source's default, stated because the target's default differs", _default_written,
                            {"title": "GPT-NeoX", "field": "model.parallel_shared_norm", "value": False, "target": "Cerebras Model Zoo", "target_defaults": [["model.use_untied_layer_norm", False]], "key_default": True, "written": [["model.use_untied_layer_norm", True]]}),
    "default_not_kept": Kind("the source's default, not in the file, that the target cannot take",
                             lambda v: f"{v['title']} default {v['field']}={short(v['value'])}"
                             + (f" ({v['key']})" if v.get("key") else "") + f", not in the file, is not kept: {nested(v['reason'])}",
                             {"title": "DeepSpeed", "field": "batch.grad_accum", "value": 1, "key": "gradient_accumulation_steps", "reason": {"kind": "approximated", "values": {"reason": "VeOmni derives the accumulation from global / (micro x data-parallel size); the micro batch, data-parallel size (--world-size) is not known here"}}}),
    "derived_not_kept": Kind("a value derived from other settings that the target cannot take",
                             lambda v: f"{v['title']} {v['field']}={short(v['value'])} (derived from other settings) is not kept: "
                             f"{nested(v['reason'])}",
                             {"title": "GPT-NeoX", "field": "schedule.warmup_type", "value": "linear_clamped", "reason": {"kind": "approximated", "values": {"reason": "the first step gets the warmup start 0 (the other steps agree)"}}}),
    "needs_value": Kind("the target needs a value the source does not give", _needs_value,
                        {"field": "model.seq_length", "hint": None, "elsewhere": None}),
    # ---- values given on the command line
    "set_written": Kind("a --set value, written", lambda v: f"= {short(v['value'])}", {"field": "train.steps", "value": 1000}),
    "used_to_derive": Kind("a --set value the target has no key for, used to derive others",
                           lambda v: f"used to derive {_names(v['fields'])}", {"fields": ["parallel.data_parallel_size"]}),
    "overridden": Kind("a leaf whose value a --set replaced", lambda v: f"overridden by --set {v['field']}", {"field": "optim.lr"}),
    # ---- what the reading noticed about a leaf
    "coerced": Kind("the schema's type coercion of the raw value", lambda v: str(v["note"]),
                    {"note": "read '1e-8' as the number 1e-08 (YAML 1.1 needs a dot in floats)"}),
    "wrong_type": Kind("a key no rule reads whose value is not of the documented type",
                       lambda v: f"does not match the documented type ({v['message']}); not used by the translation",
                       {"message": "expected a list, got the string 'None'"}),
    "reader_note": Kind("what the reader did to the leaf", lambda v: str(v["note"]), {"note": "written as pipe-parallel-size"}),
    "runtime_value": Kind("a value only known at run time (HF's \"auto\")", _runtime_value,
                          {"why": "\"auto\" is filled in by the Hugging Face Trainer/Accelerate from their own arguments at run time; it is no DeepSpeed value", "fields": ["batch.global"]}),
    "read_with_runtime_value": Kind("a key read together with one whose value is only known at run time",
                                    lambda v: f"read together with {_names(v['keys'])}, whose value is only known at run time",
                                    {"keys": ["scheduler.params.warmup_min_lr", "scheduler.params.warmup_max_lr"]}),
    # ---- the translation's check of its own output
    "reads_back_differently": Kind("reading the output back gives another value than the source's", _reads_back_differently,
                                   {"field": "parallel.data_parallel_size", "source_value": 4, "written": [], "read_back": 8}),
    "unreadable_output": Kind("the written config cannot be read back",
                              lambda v: f"the written config cannot be read back: {v['message']}",
                              {"message": "cannot compute batch.global: train_batch_size 128 != micro batch 8 x gradient_accumulation_steps 4 x data-parallel size 8: DeepSpeed's batch assertion fails at this world size"}),
    # ---- prose from code that gives no kind (a format writer's entries)
    "text": Kind("free text", lambda v: str(v["text"]), {"text": "Model Zoo needs the data processor (e.g. GptHDF5MapDataProcessor for data preprocessed to HDF5)"}),
}


TEMPLATES: dict[str, Callable[[Values], str]] = {name: kind.template for name, kind in KINDS.items()}


def render(kind: str, values: Values) -> str:
    """The one place a message becomes text."""
    return TEMPLATES[kind](values)


class Said(str):
    """A reason rendered from a kind, that still knows its kind and values: what a formula or shape
    hands back where the engine takes text (Approx's detail, Unexpressible's message)."""

    kind: str
    values: Values

    def __new__(cls, kind: str, values: Values) -> "Said":
        made = super().__new__(cls, render(kind, values))
        made.kind, made.values = kind, values
        return made


def reason(kind: str, **values: Any) -> Said:
    """A reason of this kind, as text that keeps its kind (Approx(..., reason(...)))."""
    return Said(kind, values)


def as_message(reason: Any, kind: str = "approximated") -> Message:
    """A reason as a message: its own kind when it was Said, else `kind` carrying the text."""
    if isinstance(reason, Said):
        return reason.kind, reason.values
    return kind, {"reason": str(reason)}


def as_value(message: Message | None) -> dict[str, Any] | None:
    """A message as it sits inside another's values."""
    return None if message is None else {"kind": message[0], "values": dict(message[1])}
