"""Layers without rotary embedding (NoPE) in a config.json: the `nope` codec of mappings/hf.yaml.

`interval` (SmolLM3; Llama 4 spells it the same): `no_rope_layers` holds one flag per layer, 1 = RoPE,
0 = none; when the file leaves it out the class builds it from `no_rope_layer_interval` N: layer i
(from 0) has no RoPE when (i + 1) % N == 0 (SmolLM3Config.__post_init__, transformers 5.23).
`full_layers` (Cohere 2): the layers of full attention have none (Cohere2Attention rotates only when
its layer has a sliding window; with sliding_window null, no layer has one): read from the window's
keys here; written by the window's keys, checked here against them. The canonical field is the list of those
layer indices. A class without the codec rotates every layer.
"""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Approx, ident
from . import model_types as _hf
from .choose import chosen
from .config_json import raw_value
from .fields import hard_wired
from .window import layer_kinds, nope_unlike

Kw = dict[str, Any]
FIELD = "model.nope_layers"


def every_nth(nope: list[int], layers: int) -> int | None:
    """N when the layers without RoPE are exactly N-1, 2N-1, ... (from 0) of `layers`, else None."""
    if not nope:
        return None
    n = nope[0] + 1
    return n if nope == list(range(n - 1, layers, n)) else None


def _flags(kw: Kw, mt: _hf.ModelType, layers: int) -> list[Any]:
    given = raw_value(kw, mt, "no_rope_layers")
    if given is not None:
        if not isinstance(given, list) or any(f not in (0, 1) for f in given):
            raise ValueError(f"no_rope_layers: expected a list of 1 (RoPE) and 0 (no RoPE), got {given!r}")
        if len(given) < layers:  # SmolLM3Attention indexes no_rope_layers[layer_idx]
            raise ValueError(f"no_rope_layers has {len(given)} entries for {layers} layers: give one per layer")
        return given[:layers]
    every = raw_value(kw, mt, "no_rope_layer_interval")
    if not isinstance(every, int) or isinstance(every, bool) or every < 1:
        raise ValueError(f"no_rope_layer_interval: expected a whole number >= 1, got {every!r}")
    return [int((i + 1) % every != 0) for i in range(layers)]


def read_nope(kw: Kw) -> Any:
    """{nope_layers} (model.num_layers is the num_layers rule's: never read here, and a loss of this
    codec names model.nope_layers only)."""
    mt = _hf.table().types.get(str(kw.get("hf_model_type")))
    if mt is None:
        return {}
    if mt.nope == "none":
        stray = [k for k in ("no_rope_layers", "no_rope_layer_interval") if kw.get(ident(_hf.PREFIX + k)) is not None]
        if stray:
            return Approx({}, f"HF {mt.name} does not read {', '.join(stray)}: every layer applies RoPE", (FIELD,))
        return {}
    layers = kw.get("num_layers")
    if not layers:
        return {}
    if mt.nope == "full_layers":
        kinds = layer_kinds(mt, int(layers), kw)
        return {"nope_layers": [i for i, kind in enumerate(kinds) if kind == "full"] or None}
    nope = [i for i, flag in enumerate(_flags(kw, mt, int(layers))) if not flag]
    return {"nope_layers": nope or None}


def write_nope(kw: Kw) -> Any:
    mt, nope, layers = chosen(kw), sorted(kw.get("nope_layers") or []), kw.get("num_layers")
    if mt.nope == "none":
        return Approx({}, hard_wired(mt.why_not(FIELD), FIELD, nope), (FIELD,)) if nope else {}
    if mt.nope == "full_layers":  # the window's keys say it: the layers must be the full ones the window writes
        unlike = nope_unlike(mt, kw)
        return Approx({}, unlike, (FIELD,)) if unlike else {}
    if not layers:
        return Approx({}, "no_rope_layers needs num_hidden_layers (one flag per layer)", (FIELD,))
    # written even when empty: the class's own default is a NoPE layer every 4th
    out: dict[str, Any] = {ident(_hf.PREFIX + "no_rope_layers"): [0 if i in nope else 1 for i in range(layers)]}
    every = every_nth(nope, layers)
    if every is not None:
        out[ident(_hf.PREFIX + "no_rope_layer_interval")] = every
    beyond = [i for i in nope if i >= layers]
    if beyond:
        return Approx(out, f"layers {beyond} are past the last of {layers} layers: not written", (FIELD,))
    return out
