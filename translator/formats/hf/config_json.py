"""A config.json file <-> the `hf.*` leaves the VeOmni reader and writer exchange with the engine
(transformers 5's `rope_parameters` are read back as the classic keys)."""

from __future__ import annotations

import json
from typing import Any

from ...io.documents import unflatten
from ...knowledge.formula import ident
from .model_types import PREFIX, ModelType, table, values_of


def lift_rope_parameters(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """transformers 5 keeps the rotary base, partial rotary and the scaling in rope_parameters: read
    them as the 4.x keys of the file's class, as transformers 5 itself folds the 4.x keys in (a
    non-null rope_scaling wins; Gemma 3 nests one dict per layer kind). Returns (config, lifted key ->
    where the file has it)."""
    params = config.get("rope_parameters")
    mt = table().types.get(str(config.get("model_type")))
    if not isinstance(params, dict) or mt is None:
        return config, {}
    out = {k: v for k, v in config.items() if k != "rope_parameters"}
    lifted: dict[str, str] = {}
    if mt.rope == "gemma3" and isinstance(params.get("full_attention"), dict):
        nested = {kind: dict(value) for kind, value in params.items() if isinstance(value, dict)}
        local = nested.pop("sliding_attention", {})
        if "rope_theta" in local:
            _lift(out, lifted, "rope_local_base_freq", local.pop("rope_theta"), "rope_parameters.sliding_attention.rope_theta")
        rest = nested.pop("full_attention")
        where = "rope_parameters.full_attention"
        leftover = {k: v for k, v in params.items() if k not in ("full_attention", "sliding_attention")}
    else:
        rest, where, leftover = dict(params), "rope_parameters", {}
    for inner, canonical in (("rope_theta", "model.rotary_base"), ("partial_rotary_factor", "model.rotary_fraction")):
        key = mt.keys.get(canonical)
        if inner in rest and key and key != "rotary_dim":
            _lift(out, lifted, key, rest.pop(inner), f"{where}.{inner}")
    if rest.get("rope_type", rest.get("type", "default")) not in (None, "default") and not out.get("rope_scaling"):
        out["rope_scaling"] = {k: v for k, v in rest.items() if k not in ("rope_theta", "partial_rotary_factor")}
        lifted["rope_scaling"] = where
        rest = {k: v for k, v in rest.items() if k in ("rope_theta", "partial_rotary_factor")}
    rest = {k: v for k, v in rest.items() if k not in ("rope_type", "type") or v not in (None, "default")}
    if rest or leftover:  # what no key of the class takes stays where it was (reported, not read)
        out["rope_parameters"] = {**leftover, **rest}
    return out, lifted


def _lift(out: dict[str, Any], lifted: dict[str, str], key: str, value: Any, where: str) -> None:
    if key not in out:  # a key the file states itself wins (transformers 5 does the same)
        out[key] = value
        lifted[key] = where


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


def mark_explicit_nulls(config: dict[str, Any]) -> dict[str, Any]:
    mt = table().types.get(str(config.get("model_type")))
    nulls = [k for k in (mt.write_nulls if mt else ()) if k in config and config[k] is None]
    return {**config, **dict.fromkeys(nulls, EXPLICIT_NULL)} if nulls else config


def left_to_class(config: dict[str, Any]) -> dict[str, Any]:
    """The keys a file leaves to its class default although `document` would pin them to null."""
    mt = table().types.get(str(config.get("model_type")))
    return {"model_type": config.get("model_type"), "keys": [k for k in (mt.write_nulls if mt else ()) if k not in config]}


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
            out.setdefault(key, None)
    return out


def rewrap(config: dict[str, Any], name: str, outer: list[str], left_to_class: Any = None) -> tuple[dict[str, Any], dict[str, str]]:
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
