"""The `hf.<field>` formulas of the canonical fields a config.json holds one key for (or none): built
from the class tables (model_types.py), one per field. Keys are every spelling of the field over the
classes (`hf.num_hidden_layers`, `hf.n_layer`, `hf.n_layers`); reading takes the file's class's key
(its default when the file omits it), its hard-wired value or another field's; writing puts the
value under the key of the class chosen for the IR, or says why that class cannot hold it.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from ...knowledge.catalogue import absent_means, catalogue
from ...core.ir import values_equal
from ...knowledge.formula import Absent, Approx, Formula, field_ident, ident, is_close, parameters
from ...knowledge.formula import rotary_dim_for
from ...core.report import reason
from . import config_json
from . import model_types as _hf

# canonical fields another field's reading or writing needs (head width, 4h default, GQA default, a
# field the class uses for this one): they are the rule's `with` in mappings/hf.yaml
EXTRAS: dict[str, tuple[str, ...]] = {
    "model.num_kv_heads": ("model.num_heads",),
    "model.ffn_hidden_size": ("model.hidden_size",),
    "model.rotary_fraction": ("model.hidden_size", "model.num_heads", "model.head_dim"),
    "model.embedding_dropout": ("model.hidden_dropout",),
    "model.hidden_dropout": ("model.attention_dropout",),
    "model.parallel_shared_norm": ("model.parallel_residual",),
    "model.qk_norm_bias": ("model.qk_norm", "model.norm_bias"),
    "model.attention_output_bias": ("model.attention_bias",),
    "model.mlp_bias": ("model.attention_bias",),
    "model.moe_ffn_hidden_size": ("model.ffn_hidden_size",),
    "model.moe_shared_ffn_hidden_size": ("model.moe_ffn_hidden_size",),
}
# fields a codec formula (codecs.py) reads and writes: no generic formula of their own
CODEC_FIELDS = frozenset(
    {
        "model.num_heads",
        "model.head_dim",
        "model.query_pre_attention_scalar",
        "model.rotary_base",
        "model.sliding_window",
        "model.attention_layer_types",
        "model.moe_first_dense_layers",
        "model.moe_layer_interval",
        "model.moe_dense_layers",
        "model.moe_aux_loss_coef",
        "model.attention_scaling",
        "model.attention_logits_multiplier",
        "model.nope_layers",
    }
)


def signed(func: Callable[..., Any], params: list[str]) -> Callable[..., Any]:
    """Give a generic function the parameter list the mapping-table checks read from it."""
    func.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY) for p in dict.fromkeys(params)]
    )
    return func


def head_width(kw: dict[str, Any]) -> int | None:
    explicit = kw.get("head_dim")
    if explicit:
        return int(explicit)
    hidden, heads = kw.get("hidden_size"), kw.get("num_heads")
    return hidden // heads if hidden and heads else None


def neutral(name: str, kw: dict[str, Any] | None = None) -> Any:
    """What leaving the field out means (the catalogue's none_means; `=model.x`: that field's value)."""
    return absent_means(name, lambda other: (kw or {}).get(field_ident(other)))


def _plain(name: str, value: Any, kw: dict[str, Any]) -> Any:
    """None for what leaving the field out means: the IR keeps only what a config says."""
    meant = neutral(name, kw)
    return None if meant is not None and values_equal(value, meant) else value


def _read_value(name: str, mt: _hf.ModelType, raw: Any, kw: dict[str, Any]) -> Any:
    if name in mt.reciprocal:
        return 1.0 / raw if raw else raw
    if name == "model.activation":
        for canonical, names in mt.activations.items():
            if raw in names:
                return canonical
        return Approx(None, f"HF {mt.name} activation {raw!r} has no canonical name")
    if name == "model.moe_normalize_top_k" and (mt.keys.get(name) or "").endswith("moe_normalize_expert_weights"):
        # DBRX divides the top-k weights by their p-norm (null: not at all); p = 1 is the sum: renormalised
        if raw is None or raw == 1:
            return raw is not None
        return Approx(True, f"HF {mt.name} divides the top-k weights by their {raw:g}-norm, not their sum")
    if name == "model.rotary_fraction" and mt.keys.get(name) == "rotary_dim":
        head = head_width(kw)
        if raw is None:
            return 1.0  # GPTJ rotates the whole head when rotary_dim is null
        if not head:
            return None
        if raw > head:  # GPTJAttention slices [..., :rotary_dim]: the whole head at most
            return Approx(1.0, f"rotary_dim {raw} is larger than head_dim {head}: read as the whole head")
        return raw / head
    return raw


def _write_value(name: str, mt: _hf.ModelType, value: Any, kw: dict[str, Any]) -> Any:
    if name in mt.reciprocal:
        return 1.0 / value if value else value
    if name == "model.activation":
        names = mt.activations.get(value)
        if not names:
            gated = (
                "gated (act(gate) x up)"
                if "swiglu" in mt.activations or "geglu_tanh" in mt.activations
                else "not gated"
            )
            return Approx(None, f"HF {mt.name}'s MLP is {gated}: activation {value!r} is not expressible")
        return names[0]
    if name == "model.moe_normalize_top_k" and (mt.keys.get(name) or "").endswith("moe_normalize_expert_weights"):
        return 1.0 if value else None  # the 1-norm of positive weights is their sum; null: not renormalised
    if name == "model.rotary_fraction" and mt.keys.get(name) == "rotary_dim":
        head = head_width(kw)
        if not head:
            return Approx(None, "rotary_dim needs hidden_size and num_heads")
        return rotary_dim_for(value, head)
    return value


def _foreign(name: str, mt: _hf.ModelType, keys: list[str], kw: dict[str, Any], idents: dict[str, str]) -> list[str]:
    own = mt.keys.get(name)
    return [
        k
        for k in keys
        if k != own
        and k not in mt.ignored
        and kw.get(idents[k]) is not None
        and kw.get(idents[k]) != config_json.EXPLICIT_NULL
    ]


def read_field(name: str, mt: _hf.ModelType, keys: list[str], kw: dict[str, Any]) -> Any:
    """What a config.json of class `mt` means for field `name`."""
    idents = {k: ident(_hf.PREFIX + k) for k in keys}
    foreign = _foreign(name, mt, keys, kw, idents)
    if name == "model.parallel_shared_norm" and kw.get("parallel_residual") is False:
        return None  # one norm or two per block only means something in a parallel block
    if name == "model.qk_norm_bias" and not kw.get("qk_norm"):
        return None  # the qk-norms' bias only means something with qk-norms
    value = _read_known(name, mt, keys, kw, foreign)
    refused = (mt.refused or {}).get(name)
    if refused and _same(value, refused["value"]):
        raise ValueError(f"{mt.keys.get(name, name)}: {value!r}: HF {mt.name} {refused['why']}")
    said = (mt.partial or {}).get(name)
    if said and value and not isinstance(value, (Approx, Absent)):
        return Approx(value, f"HF {mt.name} {said}")  # the class does a near thing, not quite this
    return value


def _read_known(name: str, mt: _hf.ModelType, keys: list[str], kw: dict[str, Any], foreign: list[str]) -> Any:
    idents = {k: ident(_hf.PREFIX + k) for k in keys}
    own = mt.keys.get(name)
    if own is None:
        if name in mt.fixed:
            value = _hf.resolve(mt.fixed[name], _hf.values_of(kw))
        elif name in mt.same_as:
            value = kw.get(field_ident(mt.same_as[name]))
        elif name in _hf.table().must_hold:
            value = None  # the class has no such thing: what leaving the field out means
        else:
            return None  # does not apply to this class (rotary settings of GPT-2)
        if name in _hf.table().must_hold:
            value = _plain(name, value, kw)
        if foreign:
            return Approx(value, f"HF {mt.name} does not read {', '.join(foreign)}: it hard-wires {name}={value!r}")
        return value
    raw = kw.get(idents[own])
    if raw == config_json.EXPLICIT_NULL:
        value = _read_value(name, mt, None, kw)  # null on purpose: not the class default
        if value is None:
            return Absent(f"{own} is null (the class default {mt.default(own)!r} does not apply)")
    else:
        value = _read_value(name, mt, mt.default(own, _hf.values_of(kw)) if raw is None else raw, kw)
    if foreign and value is not None:
        return Approx(value, f"HF {mt.name} reads {own}, not {', '.join(foreign)}")
    return value


def write_field(name: str, mt: _hf.ModelType, value: Any, kw: dict[str, Any]) -> Any:
    """The config.json entry of class `mt` for field `name`, or why the class cannot hold the value."""
    own = mt.keys.get(name)
    refused = (mt.refused or {}).get(name)
    if own is not None and refused and _same(value, refused["value"]):
        kept = mt.default(own, _hf.values_of(kw))
        return Approx({ident(_hf.PREFIX + own): kept}, f"HF {mt.name} {refused['why']}: written as {own}={kept!r}")
    said = (mt.partial or {}).get(name)
    if own is not None and said and value:
        return Approx({ident(_hf.PREFIX + own): _write_value(name, mt, value, kw)}, f"HF {mt.name} {said}")
    if own is not None:
        return {ident(_hf.PREFIX + own): _write_value(name, mt, value, kw)}
    if name in mt.fixed:
        wired = mt.fixed[name]
        expected = _hf.resolve(wired, _hf.values_of(kw))
        if wired is None:
            return (
                {} if values_equal(value, neutral(name, kw)) else Approx({}, hard_wired(mt.why_not(name), name, value))
            )
        if expected is None or _same(value, expected):
            return {}
        return Approx({}, hard_wired(f"HF {mt.name} hard-wires {name}={expected!r}", name, value))
    if name in mt.same_as:
        expected = kw.get(field_ident(mt.same_as[name]))
        if expected is None or _same(value, expected):
            return {}
        return Approx(
            {}, hard_wired(f"HF {mt.name} hard-wires {name} equal to {mt.same_as[name]} ({expected!r})", name, value)
        )
    if name in _hf.table().must_hold and not values_equal(value, neutral(name, kw)):
        return Approx({}, hard_wired(mt.why_not(name), name, value))
    return {}  # does not apply (one norm per branch in a sequential block)


def hard_wired(why: str, name: str, value: Any) -> str:
    """The class hard-codes the field (or has no place for it): the report's fixed_value message."""
    return reason("fixed_value", reason=why, field=name, value=value)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(is_close(a, b))


def formula_name(name: str) -> str:
    return "hf." + field_ident(name)


def _build(name: str, keys: list[str]) -> Formula:
    def read(**kw: Any) -> Any:
        mt = _hf.table().types.get(str(kw.get("hf_model_type")))
        return None if mt is None else read_field(name, mt, keys, kw)

    def write(**kw: Any) -> Any:
        from .choose import chosen  # the class the IR is written as

        return write_field(name, chosen(kw, name), kw["value"], kw)

    extras = [field_ident(f) for f in EXTRAS.get(name, ())]
    blocks = [field_ident(f) for f in _hf.BLOCK_SELECTORS if f != name]
    read = signed(read, [ident(_hf.PREFIX + k) for k in keys] + ["hf_model_type", *extras])
    write = signed(write, ["value", "family", "position_embedding", *extras, *blocks])
    return Formula(formula_name(name), read, write, parameters(read), parameters(write))


def field_formulas() -> list[Formula]:
    """One formula per canonical field of mappings/hf.yaml's classes that no codec handles."""
    hf = _hf.table()
    return [_build(name, hf.spellings(name)) for name in hf.fields() if name not in CODEC_FIELDS]
