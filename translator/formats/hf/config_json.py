"""A config.json file <-> the `hf.*` leaves the VeOmni reader and writer exchange with the engine
(transformers 5's `rope_parameters` are read back as the classic keys)."""

from __future__ import annotations

import json
from typing import Any

from ...io.documents import unflatten
from ...knowledge.formula import ident
from .model_types import PREFIX, ModelType, table, values_of


# transformers 5 keys rope_parameters by layer type for classes whose layers differ: the full-attention
# layers' parameters are the model's RoPE, the sliding-window layers' are read as the local keys
LAYER_KINDS = ("full_attention", "sliding_attention")
PER_KIND = tuple(f"rope_parameters.{kind}" for kind in LAYER_KINDS)  # where a per-layer-type file keeps them
LOCAL = {"rope_theta": "rope_local_base_freq"}  # the sliding layers' base; the rest of their dict: rope_local_scaling


def lift_rope_parameters(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """transformers 5 keeps the rotary base, partial rotary and the scaling in rope_parameters: read
    them as the 4.x keys of the file's class, as transformers 5 itself folds the 4.x keys in (a
    non-null rope_scaling wins). Per layer type (Gemma 3, OLMo 3, ...: one dict per kind): the
    full-attention layers' dict is the model's, the sliding-window layers' base and scaling are read
    as rope_local_base_freq and rope_local_scaling. Every leaf lands somewhere a rule reads, or stays in
    rope_parameters (reported). Returns (config, lifted key -> where the file has it)."""
    params = config.get("rope_parameters")
    mt = table().types.get(str(config.get("model_type")))
    if not isinstance(params, dict) or mt is None:
        return config, {}
    out = {k: v for k, v in config.items() if k != "rope_parameters"}
    lifted: dict[str, str] = {}
    kinds = {k: v for k, v in params.items() if isinstance(v, dict)}
    if kinds and set(kinds) <= set(params) and any(k in LAYER_KINDS for k in kinds):
        main_kind = "full_attention" if "full_attention" in kinds else next(iter(kinds))
        rest, where = dict(kinds[main_kind]), f"rope_parameters.{main_kind}"
        local = dict(kinds.get("sliding_attention", {})) if main_kind != "sliding_attention" else {}
        leftover = {k: v for k, v in params.items() if k not in (main_kind, "sliding_attention")}
        for inner, key in LOCAL.items():
            if inner in local:
                _lift(out, lifted, key, local.pop(inner), f"rope_parameters.sliding_attention.{inner}")
        if (
            local
        ):  # the sliding layers' scaling (rope_type, factor, ...): the rope codec says what the class does with it
            _lift(out, lifted, "rope_local_scaling", local, "rope_parameters.sliding_attention")
    else:
        rest, where, leftover = dict(params), "rope_parameters", {}
    for inner, canonical in (("rope_theta", "model.rotary_base"), ("partial_rotary_factor", "model.rotary_fraction")):
        own = mt.keys.get(canonical)
        if inner in rest and own and own != "rotary_dim":
            _lift(out, lifted, own, rest.pop(inner), f"{where}.{inner}")
    scaling = {k: v for k, v in rest.items() if k not in ("rope_theta", "partial_rotary_factor")}
    if scaling and not out.get("rope_scaling"):  # the scaling, or an explicit rope_type: default (no scaling)
        out["rope_scaling"] = scaling
        lifted["rope_scaling"] = where
        rest = {k: v for k, v in rest.items() if k in ("rope_theta", "partial_rotary_factor")}
    if rest or leftover:  # what no key of the class takes stays where it was (reported, not read)
        out["rope_parameters"] = {**leftover, **rest}
    return out, lifted


def _lift(out: dict[str, Any], lifted: dict[str, str], key: str, value: Any, where: str) -> None:
    if key not in out:  # a key the file states itself wins (transformers 5 does the same)
        out[key] = value
        lifted[key] = where


def unlift(config: dict[str, Any], lifted: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """`hf.*` leaves (prefix removed) with the keys lift_rope_parameters lifted put back where the source
    file had them (rope_parameters, per layer type): hf2hf keeps a transformers 5 file's layout. Returns
    (leaves, leaf -> where written)."""
    out: dict[str, Any] = {}
    moved: dict[str, str] = {}
    for key, value in config.items():
        where = written_as(key, lifted)
        if where != key and isinstance(value, dict):  # a lifted block (rope_scaling): its leaves go where it came from
            for inner, leaf in value.items():
                out[f"{where}.{inner}"] = leaf
                moved[f"{PREFIX}{key}.{inner}"] = f"{where}.{inner}"
            continue
        out[where] = value
        moved[PREFIX + key] = where
    return out, moved


def written_as(key: str, lifted: dict[str, str]) -> str:
    """Where a config.json key was in the file: itself, or where rope_parameters held it."""
    if key in lifted:
        return lifted[key]
    head, dot, rest = key.partition(".")
    return f"{lifted[head]}.{rest}" if dot and head in lifted else key


# An explicit null of a key whose class default is not null (Mistral's sliding_window: 4096) means
# None to the HF class, not the default: read as this marker, so the formulas can tell the two apart.
EXPLICIT_NULL = "<null>"


def raw_value(kw: dict[str, Any], mt: ModelType, key: str) -> Any:
    """A key's value in the file as a formula's keyword arguments hold it, or the class default (an
    explicit null is None)."""
    value = kw.get(ident(PREFIX + key))
    if value == EXPLICIT_NULL:
        return None
    return mt.default(key, values_of(kw)) if value is None else value


def _has(config: dict[str, Any], key: str) -> bool:
    """The file states `key` (dotted: nested, DBRX's ffn_config.moe_normalize_expert_weights)."""
    *parents, leaf = key.split(".")
    for part in parents:
        config = config.get(part) if isinstance(config.get(part), dict) else {}  # type: ignore[assignment]
    return leaf in config


def _set(config: dict[str, Any], key: str, value: Any, keep: bool = False) -> dict[str, Any]:
    """A copy of `config` with the (dotted) key set (`keep`: unless it is there)."""
    head, _, rest = key.partition(".")
    if rest:
        inner = config.get(head)
        return {**config, head: _set(inner if isinstance(inner, dict) else {}, rest, value, keep)}
    return config if keep and head in config else {**config, head: value}


def _get(config: dict[str, Any], key: str) -> Any:
    for part in key.split("."):
        config = config.get(part) if isinstance(config, dict) else None  # type: ignore[assignment]
    return config


def mark_explicit_nulls(config: dict[str, Any]) -> dict[str, Any]:
    mt = table().types.get(str(config.get("model_type")))
    for key in mt.write_nulls if mt else ():
        if _has(config, key) and _get(config, key) is None:
            config = _set(config, key, EXPLICIT_NULL)
    return config


def left_to_class(config: dict[str, Any]) -> dict[str, Any]:
    """The keys a file leaves to its class default although `document` would pin them to null."""
    mt = table().types.get(str(config.get("model_type")))
    return {
        "model_type": config.get("model_type"),
        "keys": [k for k in (mt.write_nulls if mt else ()) if not _has(config, k)],
    }


def every_head_its_own(config: dict[str, Any]) -> list[Any]:
    """A model without grouped-query attention (no kv heads in the IR: one per head) written as a class whose
    default has fewer (Mistral's 8): the heads' count written as num_key_value_heads, and said. Returns the
    report's entries (config is changed in place)."""
    from ..spec import added_for_target

    mt = table().types.get(str(config.get("model_type")))
    heads_key, kv_key = (mt.keys.get("model.num_heads"), mt.keys.get("model.num_kv_heads")) if mt else (None, None)
    heads = config.get(heads_key or "")
    if mt is None or kv_key is None or kv_key in config or not isinstance(heads, int):
        return []
    default = mt.default(kv_key, {"model.num_heads": heads})
    if default == heads:
        return []
    config[kv_key] = heads
    why = f"the source's attention has keys and values for every head; HF {mt.name}'s default is {default} kv heads"
    return [added_for_target("HF config.json", f"{PREFIX}{kv_key}", heads, why, ("model.num_kv_heads",))]


def document(leaves: dict[str, Any], left_to_class: Any = None) -> dict[str, Any]:
    """The config.json object from `hf.*` leaves (prefix removed): model_type first, explicit nulls.

    `left_to_class` (hf2hf): {model_type, keys} the source file left to its class default; the same
    class keeps them left out instead of pinning them to null."""
    tree = unflatten({k: None if v == EXPLICIT_NULL else v for k, v in leaves.items()})  # hf2hf carries the marker
    out: dict[str, Any] = {k: tree.pop(k) for k in ("model_type", "architectures") if k in tree}
    out.update(tree)
    mt = table().types.get(str(out.get("model_type")))
    kept: list[str] = []
    if isinstance(left_to_class, dict) and mt is not None and left_to_class.get("model_type") == mt.name:
        kept = list(left_to_class.get("keys") or ())
    for key in mt.write_nulls if mt else ():
        if key not in kept:
            out = _set(out, key, None, keep=True)
    for key, other in ((mt.written_twice or {}) if mt else {}).items():
        if _has(out, key):  # both releases' key (DBRX: transformers 5 rotates with one, needs the other)
            out = _set(out, other, _get(out, key))
    return out


def rewrap(
    config: dict[str, Any], name: str, outer: list[str], left_to_class: Any = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """A multimodal wrapper's config.json from its decoder's keys and the wrapper's own (`outer`, as the
    source file had them at the top): the decoder under text_config. Returns (document, leaf -> path)."""
    wrapper = table().wrappers[name]
    config.pop("architectures", None)
    top = {k: config.pop(k) for k in list(config) if k.split(".", 1)[0] in outer}  # leaves: vision_config.hidden_size
    moved = {f"hf.{k}": k for k in top} | {f"hf.{k}": f"{wrapper.text_config}.{k}" for k in config}
    text = document(config, left_to_class)
    head = {"model_type": name, "architectures": list(wrapper.architectures)}
    return {**head, **unflatten(top), wrapper.text_config: text}, moved


def dump(config: dict[str, Any]) -> str:
    return json.dumps(config, indent=2, ensure_ascii=False, allow_nan=False, default=_json_default) + "\n"


def _json_default(value: Any) -> Any:
    raise TypeError(f"config.json cannot hold {type(value).__name__} {value!r}")
