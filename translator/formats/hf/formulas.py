"""HuggingFace config.json formulas (VeOmni's architecture file): one per canonical field, built
from the per-model_type tables in mappings/hf.yaml (model_types.py). Keys are `hf.<config.json key>`,
every spelling of the field; the written model_type follows model.family and
model.position_embedding (hf.yaml `choose`). Importing this module builds them.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from ...formula import FORMULAS, Approx, Extension, Formula, Unexpressible, field_ident, formula, ident, is_close, parameters
from ...formulas_common import rotary_dim_for
from . import config_json
from . import model_types as _hf


HF_NO_FAMILY = "no decoder family (model.family) to choose an HF model_type from: no config.json is written"


def _resolve(fixed: Any, kw: dict[str, Any]) -> Any:
    """`=model.num_heads` in hf.yaml: the value of another canonical field."""
    if isinstance(fixed, str) and fixed.startswith("="):
        return kw.get(field_ident(fixed[1:]))
    return fixed


def _head_dim(kw: dict[str, Any]) -> int | None:
    hidden, heads = kw.get("hidden_size"), kw.get("num_heads")
    return hidden // heads if hidden and heads else None


def _read_value(name: str, mt: _hf.ModelType, raw: Any, kw: dict[str, Any]) -> Any:
    if name == "model.activation":
        for canonical, names in mt.activations.items():
            if raw in names:
                return canonical
        return Approx(None, f"HF {mt.name} activation {raw!r} has no canonical name")
    if name == "model.rotary_fraction" and mt.keys.get(name) == "rotary_dim":
        head = _head_dim(kw)
        if raw is None:
            return 1.0  # GPTJ rotates the whole head when rotary_dim is null
        if not head:
            return None
        if raw > head:  # GPTJAttention slices [..., :rotary_dim]: the whole head at most
            return Approx(1.0, f"rotary_dim {raw} is larger than head_dim {head}: read as the whole head")
        return raw / head
    if name == "model.ffn_hidden_size" and raw is None:
        hidden = kw.get("hidden_size")
        return _hf.FFN_DEFAULT_MULTIPLE * hidden if hidden else None
    if name == "model.num_kv_heads" and raw is None:
        return kw.get("num_heads")
    if name == "model.attention_kind":
        return "dense" if raw is None else f"sliding_window_{raw}"
    if name == "model.rotary_base" and raw is not None:
        return float(raw)
    return raw


def _write_value(name: str, mt: _hf.ModelType, value: Any, kw: dict[str, Any]) -> Any:
    if name == "model.activation":
        names = mt.activations.get(value)
        if not names:
            gated = "gated (act(gate) x up)" if "swiglu" in mt.activations else "not gated"
            return Approx(None, f"HF {mt.name}'s MLP is {gated}: activation {value!r} is not expressible")
        return names[0]
    if name == "model.rotary_fraction" and mt.keys.get(name) == "rotary_dim":
        head = _head_dim(kw)
        if not head:
            return Approx(None, "rotary_dim needs hidden_size and num_heads")
        return rotary_dim_for(value, head)
    if name == "model.attention_kind":
        if value == "dense":
            return None  # written as null (hf.yaml write_nulls)
        return Approx(None, f"attention pattern {value!r} has no HF {mt.name} counterpart")
    return value


def _reader(name: str, keys: list[str]) -> Callable[..., Any]:
    idents = {k: ident(_hf.PREFIX + k) for k in keys}

    def read(**kw: Any) -> Any:
        mt = _hf.table().types.get(str(kw.get("hf_model_type")))
        if mt is None:
            return None
        own = mt.keys.get(name)
        foreign = [k for k in keys if k != own and k not in _hf.READ_ONLY_KEYS.get(name, ()) and kw.get(idents[k]) is not None]
        if name == "model.parallel_shared_norm" and kw.get("parallel_residual") is False:
            return None  # one norm or two per block only means something in a parallel block
        if name in mt.fixed or name in mt.same_as:
            value = _resolve(mt.fixed[name], kw) if name in mt.fixed else kw.get(field_ident(mt.same_as[name]))
            if foreign:
                return Approx(value, f"HF {mt.name} does not read {', '.join(foreign)}: it hard-wires {name}={value!r}")
            return value
        if own is None:
            return None
        raw = kw.get(idents[own])
        if raw == config_json.EXPLICIT_NULL:
            value = _read_value(name, mt, None, kw)  # null on purpose: not the class default
        else:
            value = _read_value(name, mt, mt.default(own) if raw is None else raw, kw)
        if name == "model.num_heads" and kw.get(idents.get("head_dim", "")) is not None and value:
            head_dim, hidden = kw[idents["head_dim"]], kw.get("hidden_size")
            if hidden and hidden // value != head_dim:
                return Approx(value, f"head_dim {head_dim} is not hidden_size / num_attention_heads = {hidden // value}: "
                                     "the canonical model has no separate head width")  # fmt: skip
        return value

    return read


def _writer(name: str) -> Callable[..., Any]:
    def write(**kw: Any) -> Any:
        value = kw["value"]
        mt = _hf.table().model_type(kw.get("family"), kw.get("position_embedding"))
        if mt is None:
            raise Unexpressible(HF_NO_FAMILY)
        if name in mt.fixed or name in mt.same_as:
            expected = _resolve(mt.fixed[name], kw) if name in mt.fixed else kw.get(field_ident(mt.same_as[name]))
            if expected is None or is_close(value, expected):
                return {}
            what = f"={expected!r}" if name in mt.fixed else f" equal to {mt.same_as[name]} ({expected!r})"
            return Approx({}, f"HF {mt.name} hard-wires {name}{what}: {value!r} is not expressible")
        own = mt.keys.get(name)
        if own is None:
            return {}  # hf.yaml leaves out what does not apply (one norm per branch in a sequential block)
        return {ident(_hf.PREFIX + own): _write_value(name, mt, value, kw)}

    return write


def _signed(func: Callable[..., Any], params: list[str]) -> Callable[..., Any]:
    """Give a generic function the parameter list the mapping-table checks read from it."""
    func.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY) for p in dict.fromkeys(params)]
    )
    return func


def formula_name(name: str) -> str:
    return "hf." + field_ident(name)


def field_formulas() -> list[Formula]:
    """One formula per canonical architecture field of mappings/hf.yaml."""
    out = []
    hf = _hf.table()
    for name in hf.fields():
        keys = hf.spellings(name)
        extras = [field_ident(f) for f in _hf.EXTRAS.get(name, ())]
        read = _signed(_reader(name, keys), [ident(_hf.PREFIX + k) for k in keys] + ["hf_model_type", *extras])
        write = _signed(_writer(name), ["value", "family", "position_embedding", *extras])
        out.append(Formula(formula_name(name), read, write, parameters(read), parameters(write)))
    return out


@formula("hf.model_type")
class HfModelType:
    """model_type (+ architectures) <-> model.family and the position embedding the class hard-wires."""

    @staticmethod
    def read(hf_model_type: str | None, hf_architectures: Any, hf_use_parallel_residual: Any) -> Any:
        if hf_model_type is None:
            return {}
        mt = _hf.table().types.get(str(hf_model_type))
        if mt is None:
            return Extension(f"HF model_type {hf_model_type!r}: neoconv maps {', '.join(_hf.table().types)}")
        family = mt.family
        if mt.name == "gpt_neox" and hf_use_parallel_residual is False:
            family = "gpt2"  # a sequential GPT-NeoX block is what the other frameworks call GPT-2 style
        return {"family": family, "position_embedding": mt.fixed.get("model.position_embedding")}

    @staticmethod
    def write(family: str | None, position_embedding: str | None) -> Any:
        mt = _hf.table().model_type(family, position_embedding)
        if mt is None:
            raise Unexpressible(HF_NO_FAMILY)
        out = {"hf_model_type": mt.name, "hf_architectures": list(mt.architectures)}
        fixed = mt.fixed.get("model.position_embedding")
        if position_embedding is not None and position_embedding != fixed:
            return Approx(out, f"HF {mt.name} has {fixed} position embeddings: {position_embedding} is not expressible")
        return out


for _built in field_formulas():  # registered with the hand-written one: the veomni table names them all
    FORMULAS[_built.name] = _built
