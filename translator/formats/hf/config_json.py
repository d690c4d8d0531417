"""A config.json file <-> the `hf.*` leaves the VeOmni reader and writer exchange with the engine
(transformers 5's `rope_parameters` are read back as the classic keys)."""

from __future__ import annotations

import json
from typing import Any

from ...io import unflatten
from .model_types import table


def lift_rope_parameters(config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """transformers 5 nests rope_theta / partial_rotary_factor in rope_parameters: read them as the
    classic key of the file's model_type. Returns (config, lifted key -> path in the file)."""
    params = config.get("rope_parameters")
    mt = table().types.get(str(config.get("model_type")))
    if not isinstance(params, dict) or mt is None:
        return config, {}
    out = dict(config)
    rest = dict(params)
    lifted: dict[str, str] = {}
    for inner, canonical in (("rope_theta", "model.rotary_base"), ("partial_rotary_factor", "model.rotary_fraction")):
        classic = mt.keys.get(canonical)
        if inner in rest and classic and classic not in out and classic != "rotary_dim":
            out[classic] = rest.pop(inner)
            lifted[classic] = f"rope_parameters.{inner}"
    if rest:
        out["rope_parameters"] = rest
    else:
        out.pop("rope_parameters")
    return out, lifted


# An explicit null of a key whose class default is not null (Mistral's sliding_window: 4096) means
# None to the HF class, not the default: read as this marker, so the formulas can tell the two apart.
EXPLICIT_NULL = "<null>"


def mark_explicit_nulls(config: dict[str, Any]) -> dict[str, Any]:
    mt = table().types.get(str(config.get("model_type")))
    nulls = [k for k in (mt.write_nulls if mt else ()) if k in config and config[k] is None]
    return {**config, **dict.fromkeys(nulls, EXPLICIT_NULL)} if nulls else config


def document(leaves: dict[str, Any]) -> dict[str, Any]:
    """The config.json object from `hf.*` leaves (prefix removed): model_type first, explicit nulls."""
    tree = unflatten(leaves)
    out: dict[str, Any] = {k: tree.pop(k) for k in ("model_type", "architectures") if k in tree}
    out.update(tree)
    mt = table().types.get(str(out.get("model_type")))
    for key in mt.write_nulls if mt else ():
        out.setdefault(key, None)
    return out


def dump(config: dict[str, Any]) -> str:
    return json.dumps(config, indent=2, ensure_ascii=False, allow_nan=False, default=_json_default) + "\n"


def _json_default(value: Any) -> Any:
    raise TypeError(f"config.json cannot hold {type(value).__name__} {value!r}")
