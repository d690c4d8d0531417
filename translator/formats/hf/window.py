"""Sliding-window attention and its per-layer pattern in a config.json (the `window` codec of
mappings/hf.yaml). HF counts the window with the query itself (masking_utils: kv > q - W), as
Cerebras does. Per class (FS §1.4, layer i from 0): all (mistral, mixtral, phi3, starcoder2: every
layer when sliding_window is set), layers (ministral: every layer unless layer_types says otherwise), qwen (qwen2, qwen3: with use_sliding_window, the layers from
max_window_layers on), qwen_moe (qwen3_moe: every layer when enabled), qwen2_moe (transformers 5:
the even layers below max_window_layers; 4.x windowed those from max_window_layers on), alternate
(gemma2: layer 0 windowed, then every other), every_nth (gemma3: every sliding_window_pattern-th layer
full), nope (smollm3: with use_sliding_window, the layers without RoPE; SmolLM3Config.__post_init__),
gpt_neo (attention_types [[kinds, repeats], ...]: "local" layers see window_size keys, "global" ones
the whole context; GPTNeoSelfAttention masks keys <= q - window_size, so it counts as HF does).
An explicit layer_types list wins (transformers 5).
"""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Absent, Approx, ident
from . import config_json
from . import model_types as _hf
from .choose import chosen
from .config_json import raw_value

Kw = dict[str, Any]
HF_KINDS = {"sliding_attention": "sliding", "full_attention": "full"}
NEO_KINDS = {"local": "sliding", "global": "full"}
NEO_DEFAULT = [[["global", "local"], 12]]  # GPTNeoConfig.__post_init__ when attention_types is None


def _neo_layers(types: Any, layers: int | None) -> list[str]:
    """GPT-Neo's attention_types expanded (GPTNeoConfig.expand_attention_types_params), checked first:
    the class refuses a list whose length is not num_layers (and a repeat count is never expanded
    beyond that)."""
    shape = isinstance(types, list) and all(
        isinstance(item, list)
        and len(item) == 2
        and isinstance(item[0], list)
        and isinstance(item[1], int)
        and not isinstance(item[1], bool)
        and item[1] >= 0
        and all(k in NEO_KINDS for k in item[0])
        for item in types
    )
    if not shape:
        raise ValueError(f'attention_types: expected [[["global" or "local", ...], repeats], ...], got {types!r}')
    length = sum(len(kinds) * repeats for kinds, repeats in types)
    if layers is not None and length != layers:
        raise ValueError(
            f"attention_types gives {length} layers, num_layers is {layers}: GPT-Neo needs one kind per layer"
        )
    return [NEO_KINDS[k] for kinds, repeats in types for _ in range(repeats) for k in kinds]


def _neo_types(pattern: list[str]) -> list[Any]:
    """A per-layer pattern as attention_types: the shortest repeating unit, else one run per kind."""
    kinds = ["local" if k == "sliding" else "global" for k in pattern]
    for size in range(1, len(kinds) + 1):
        if len(kinds) % size == 0 and kinds == kinds[:size] * (len(kinds) // size):
            return [[kinds[:size], len(kinds) // size]]
    return []  # (an empty pattern)


def _read_neo(mt: _hf.ModelType, kw: Kw) -> Any:
    types = raw_value(kw, mt, "attention_types")
    pattern = _neo_layers(NEO_DEFAULT if types is None else types, kw.get("num_layers"))
    if "sliding" not in pattern:
        return Absent("attention_types has no local layer: every layer attends to the whole context")
    return {
        "sliding_window": int(raw_value(kw, mt, "window_size")),
        "attention_layer_types": None if all(k == "sliding" for k in pattern) else pattern,
    }


def _write_neo(kw: Kw) -> Any:
    window, pattern, layers = kw.get("sliding_window"), kw.get("attention_layer_types"), kw.get("num_layers")
    if not layers:
        return Approx({}, "attention_types needs num_layers", ("model.attention_layer_types",))
    if window is None:  # written: the class default has local layers
        return _out("attention_types", _neo_types(["full"] * layers))
    return {**_out("window_size", window), **_out("attention_types", _neo_types(pattern or ["sliding"] * layers))}


# transformers' config lists one entry per layer and its model one module each (~10 kB of Python
# objects before any weight): past 2**20 layers that alone is over 10 GB, and the list a hang here
MAX_LAYERS = 2**20


def _out(key: str, value: Any) -> dict[str, Any]:
    return {ident(_hf.PREFIX + key): value}


def default_pattern(mt: _hf.ModelType, layers: int, kw: Kw) -> list[str] | None:
    """The class's own per-layer pattern for `layers` blocks when windowed (None: every layer)."""
    if layers > MAX_LAYERS:
        raise ValueError(
            f"num_hidden_layers: {layers} layers: transformers builds a module and a layer_types entry "
            f"per layer, and no model has more than {MAX_LAYERS:,}; fix the value"
        )
    if mt.window == "qwen":
        first = raw_value(kw, mt, "max_window_layers") or 0
        return ["full" if i < first else "sliding" for i in range(layers)]
    if mt.window == "qwen2_moe":
        bound = raw_value(kw, mt, "max_window_layers") or 0
        return ["sliding" if i % 2 == 0 and i < bound else "full" for i in range(layers)]
    if mt.window == "alternate":
        return ["sliding" if i % 2 == 0 else "full" for i in range(layers)]
    if mt.window == "every_nth":
        n = raw_value(kw, mt, "sliding_window_pattern") or 1
        return ["full" if (i + 1) % n == 0 else "sliding" for i in range(layers)]
    if mt.window == "nope":
        nope = set(kw.get("nope_layers") or ())
        return ["sliding" if i in nope else "full" for i in range(layers)]
    return None


def layer_kinds(mt: _hf.ModelType, layers: int, kw: Kw) -> list[str]:
    """Every layer's kind (full / sliding) as the class builds it: all full without a window, else
    layer_types when given, else the class's pattern (nope.py's full_layers reads it)."""
    if raw_value(kw, mt, "sliding_window") is None:
        return ["full"] * layers
    given = raw_value(kw, mt, "layer_types")
    if given is not None:
        return [HF_KINDS.get(str(k), "full") for k in given][:layers]
    return default_pattern(mt, layers, kw) or ["sliding"] * layers


def nope_unlike(mt: _hf.ModelType, kw: Kw) -> str:
    """full_layers (Cohere 2): why the IR's layers without RoPE are not the written window's full layers."""
    window, pattern, layers = kw.get("sliding_window"), kw.get("attention_layer_types"), kw.get("num_layers")
    if mt.nope != "full_layers" or not layers:
        return ""
    full = (
        list(range(layers))
        if window is None
        else [i for i, k in enumerate(pattern or ["sliding"] * layers) if k == "full"]
    )
    nope = sorted(kw.get("nope_layers") or [])
    if nope == full:
        return ""
    return (
        f"HF {mt.name} applies RoPE in exactly its sliding-window layers: the layers without RoPE would be "
        f"{full}, not {nope}"
    )


def read_window(kw: Kw) -> Any:
    mt = _hf.table().types.get(str(kw.get("hf_model_type")))
    if mt is None:
        return {}
    if mt.window == "gpt_neo":
        return _read_neo(mt, kw)
    window = raw_value(kw, mt, "sliding_window")
    if mt.window == "none":
        if window is not None and kw.get(ident(_hf.PREFIX + "sliding_window")) is not None:
            return Approx({}, f"HF {mt.name} does not read sliding_window: every layer attends to the whole context")
        return Absent(f"HF {mt.name} has no sliding window")
    if mt.window in ("qwen", "qwen_moe", "qwen2_moe", "nope") and not raw_value(kw, mt, "use_sliding_window"):
        # the class sets sliding_window aside unless use_sliding_window (__post_init__: None, qwen2_moe 0)
        return Absent(f"use_sliding_window is false: HF {mt.name} attends to the whole context in every layer")
    if window is None:
        return Absent("sliding_window is null: every layer attends to the whole context")
    layers = kw.get("num_layers")
    given = raw_value(kw, mt, "layer_types")
    if given is not None and mt.window != "all":
        kinds = [HF_KINDS.get(str(k)) for k in given]
        if None in kinds:
            raise ValueError(
                f"layer_types: expected sliding_attention or full_attention for every layer, got {given!r}"
            )
        pattern: list[str] | None = [str(k) for k in kinds]
    else:
        pattern = default_pattern(mt, layers, kw) if layers else None
    if pattern is not None and all(k == "sliding" for k in pattern):
        pattern = None  # every layer windowed: the catalogue's absent pattern
    if mt.window == "nope" and pattern is not None and "sliding" not in pattern:
        return Absent(f"HF {mt.name} windows only its layers without RoPE (or those layer_types names): none here")
    out = {"sliding_window": int(window), "attention_layer_types": pattern}
    if mt.window == "qwen2_moe" and pattern is not None:
        return Approx(
            out,
            "transformers 4 windows other qwen2_moe layers (from max_window_layers on): read as 5.x does",
            ("model.attention_layer_types",),
        )
    return out


def write_window(kw: Kw) -> Any:
    mt = chosen(kw)
    window, pattern, layers = kw.get("sliding_window"), kw.get("attention_layer_types"), kw.get("num_layers")
    if mt.window == "gpt_neo":
        return _write_neo(kw)
    if window is None:
        return {}  # a class whose default is a window gets an explicit null (write_nulls)
    if mt.window == "none":
        return Approx(
            {},
            f"HF {mt.name} has no sliding window (mistral, qwen2, gemma2 have one): every layer attends "
            f"to the whole context",
            ("model.sliding_window", "model.attention_layer_types"),
        )
    every = pattern is None or all(k == "sliding" for k in pattern)
    if mt.window in ("all", "qwen_moe"):
        out = {
            **_out("sliding_window", window),
            **(_out("use_sliding_window", True) if mt.window == "qwen_moe" else {}),
        }
        if every or pattern is None:
            return out
        return Approx(
            out,
            f"HF {mt.name} windows every layer: the pattern of {pattern.count('sliding')} windowed "
            f"and {pattern.count('full')} full layers is not expressible",
            ("model.attention_layer_types",),
        )
    out = _out("sliding_window", window)
    if mt.window in ("qwen", "qwen2_moe", "nope"):
        out.update(_out("use_sliding_window", True))
    if mt.window == "qwen":
        full = next((i for i, k in enumerate(pattern) if k == "sliding"), len(pattern)) if pattern else 0
        if pattern is None or pattern == ["full"] * full + ["sliding"] * (len(pattern) - full):
            return {**out, **_out("max_window_layers", full)}
    if mt.window == "every_nth" and layers and not every:
        own = mt.default("sliding_window_pattern")
        # every n-th layer full: the first full layer says which n (trying each n was layers^2 steps)
        n = pattern.index("full") + 1 if pattern and "full" in pattern else 0
        if (
            n >= 2
            and pattern == ["full" if (i + 1) % n == 0 else "sliding" for i in range(layers)]
            and (mt.pattern_key or n == own)
        ):
            return {**out, **_out("sliding_window_pattern", n)} if mt.pattern_key else out
    if mt.window == "alternate" and pattern == default_pattern(mt, len(pattern or []), kw):
        return out
    if mt.window == "nope" and layers and pattern == default_pattern(mt, layers, kw):
        return out
    names = {v: k for k, v in HF_KINDS.items()}
    kinds = [names[k] for k in (pattern or ["sliding"] * (layers or 0))]
    out.update(_out("layer_types", kinds))
    if mt.window in ("qwen", "qwen2_moe", "alternate", "every_nth") and not mt.layer_types_4x:
        return Approx(
            out,
            f"transformers 4 does not read layer_types: HF {mt.name} in 4.x windows its own pattern",
            ("model.attention_layer_types",),
        )
    return out
