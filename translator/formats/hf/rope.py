"""The rotary base and RoPE scaling of a config.json (the `rope` codec of mappings/hf.yaml).

transformers 4 reads `rope_theta` + `rope_scaling: {rope_type (or type), factor, ...}`; transformers 5
writes `rope_parameters` and still reads the 4.x pair (config_json.lift_rope_parameters turns the
former into the latter on reading). Written: the 4.x pair, which both read (FS §1.1). Classes: classic
(any type transformers knows), phi3 (longrope only; `su`/`yarn` are its old names; the top-level
original_max_position_embeddings wins), gemma3 (scaling of the global layers; rope_local_base_freq for
the windowed ones), none (ALiBi or learned positions: nothing to read or write).
"""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Approx, ident
from . import config_json
from . import model_types as _hf
from .choose import chosen
from .config_json import raw_value

Kw = dict[str, Any]
TYPES = ("linear", "dynamic", "yarn", "llama3", "longrope")
# rope_scaling key -> canonical field (the same names in 4.x rope_scaling and 5.x rope_parameters)
PARAMS = {
    "factor": "rope_scaling_factor",
    "original_max_position_embeddings": "rope_original_max_positions",
    "low_freq_factor": "rope_low_freq_factor",
    "high_freq_factor": "rope_high_freq_factor",
    "beta_fast": "rope_yarn_beta_fast",
    "beta_slow": "rope_yarn_beta_slow",
    "mscale": "rope_yarn_mscale",
    "mscale_all_dim": "rope_yarn_mscale_all_dim",
    "truncate": "rope_yarn_truncate",
    "attention_factor": "rope_attention_factor",
    "short_factor": "rope_short_factor",
    "long_factor": "rope_long_factor",
}
NEEDS_ORIGINAL = ("yarn", "llama3", "longrope")  # transformers 5 fills original_max_position_embeddings for these
PHI3_NAMES = {"su": "longrope", "yarn": "longrope"}


def _base(kw: Kw, mt: _hf.ModelType, notes: list[str]) -> Any:
    own = mt.keys.get("model.rotary_base")
    for key in ("rope_theta", "rotary_emb_base"):
        if key != own and kw.get(ident(_hf.PREFIX + key)) is not None:
            notes.append(f"HF {mt.name} does not read {key}" + (f" (it reads {own})" if own else ""))
    if own is not None:
        value = raw_value(kw, mt, own)
        return None if value is None else float(value)
    fixed = mt.fixed.get("model.rotary_base")
    return None if fixed is None else float(fixed)


def read_rope(kw: Kw) -> Any:
    mt = _hf.table().types.get(str(kw.get("hf_model_type")))
    if mt is None:
        return {}
    notes: list[str] = []
    out: dict[str, Any] = {"rotary_base": _base(kw, mt, notes)}
    given = kw.get(ident(_hf.PREFIX + "rope_scaling"))
    scaling = raw_value(kw, mt, "rope_scaling")  # a class may scale by default (gpt_oss: yarn)
    local_scaling = kw.get(ident(_hf.PREFIX + "rope_local_scaling"))
    if mt.rope == "none":
        if given not in (None, config_json.EXPLICIT_NULL) or local_scaling:
            notes.append(f"HF {mt.name} does not read rope_scaling: its positions are not rotary")
        return Approx(out, "; ".join(notes)) if notes else out
    if scaling is not None and not isinstance(scaling, dict):
        raise ValueError(f"rope_scaling must be a mapping such as {{rope_type: linear, factor: 2.0}}, got {scaling!r}")
    if scaling:
        out.update(_read_scaling(scaling, mt, kw, notes))
    local = raw_value(kw, mt, "rope_local_base_freq")
    if mt.rope == "gemma3" or (local is not None and local != out["rotary_base"]):  # the sliding layers' own base
        out["sliding_window_rotary_base"] = None if local is None or local == out["rotary_base"] else float(local)
    if isinstance(local_scaling, dict) and local_scaling.get("rope_type", local_scaling.get("type")) not in (
        None,
        "default",
    ):
        notes.append(
            f"the sliding-window layers' own RoPE scaling ({local_scaling!r}) has no canonical field: HF {mt.name} "
            "is read with the full-attention layers' scaling only"
        )
    return Approx(out, "; ".join(notes)) if notes else out


def _read_scaling(scaling: dict[str, Any], mt: _hf.ModelType, kw: Kw, notes: list[str]) -> dict[str, Any]:
    kind = scaling.get("rope_type", scaling.get("type"))
    if mt.rope == "phi3" and isinstance(kind, str):
        kind = PHI3_NAMES.get(kind, kind)
    if kind in (None, "default"):
        return {}
    if kind not in TYPES or (mt.rope == "phi3" and kind != "longrope"):
        notes.append(
            f"rope_scaling type {kind!r} has no canonical meaning"
            + (" (HF phi3 takes longrope only)" if mt.rope == "phi3" else "")
        )
        return {}
    out: dict[str, Any] = {"rope_scaling_type": kind}
    for key, value in scaling.items():
        if key in ("rope_type", "type", "rope_theta", "partial_rotary_factor"):
            continue
        if key in PARAMS:
            out[PARAMS[key]] = value
        else:
            notes.append(f"rope_scaling.{key} has no canonical meaning (not kept)")
    if kind in NEEDS_ORIGINAL:
        top = raw_value(kw, mt, "original_max_position_embeddings") if mt.rope == "phi3" else None
        out["rope_original_max_positions"] = (
            top or out.get("rope_original_max_positions") or kw.get("max_position_embeddings")
        )
    return out


def write_rope(kw: Kw) -> Any:
    mt = chosen(kw)
    out: dict[str, Any] = {}
    losses: list[tuple[str, tuple[str, ...]]] = []
    base = kw.get("rotary_base")
    own = mt.keys.get("model.rotary_base")
    if own is not None and base is not None:
        out[ident(_hf.PREFIX + own)] = float(base)
    elif base is not None and mt.fixed.get("model.rotary_base") not in (None, base):
        losses.append(
            (
                f"HF {mt.name} hard-wires rotary base {mt.fixed['model.rotary_base']:g}: {base:g} is not expressible",
                ("model.rotary_base",),
            )
        )
    kind = kw.get("rope_scaling_type")
    if (
        kind is None and mt.rope != "none" and mt.default("rope_scaling")
    ):  # a class that scales by default (gpt_oss: yarn)
        out[ident(_hf.PREFIX + "rope_scaling")] = {"rope_type": "default"}
    if kind is not None:
        if mt.rope == "none" or (mt.rope == "phi3" and kind != "longrope"):
            losses.append(
                (
                    f"HF {mt.name} has no {kind} RoPE scaling" + (" (longrope only)" if mt.rope == "phi3" else ""),
                    ("model.rope_scaling_type",),
                )
            )
        else:
            out[ident(_hf.PREFIX + "rope_scaling")] = _scaling(kind, kw)
            original = kw.get("rope_original_max_positions")
            if mt.rope == "phi3" and original is not None:  # phi3's top-level key wins over the dict's
                out[ident(_hf.PREFIX + "original_max_position_embeddings")] = int(original)
    if mt.rope == "gemma3":
        local = kw.get("sliding_window_rotary_base") or base
        if local is not None:
            out[ident(_hf.PREFIX + "rope_local_base_freq")] = float(local)
    elif kw.get("sliding_window_rotary_base") not in (None, base):
        losses.append((f"HF {mt.name} has one rotary base for every layer", ("model.sliding_window_rotary_base",)))
    if not losses:
        return out
    return Approx(out, "; ".join(d for d, _ in losses), tuple(f for _, n in losses for f in n), tuple(losses))


def _scaling(kind: str, kw: Kw) -> dict[str, Any]:
    """The 4.x rope_scaling dict: rope_type first, floats for float parameters, an int original length."""
    out: dict[str, Any] = {"rope_type": kind}
    for key, name in PARAMS.items():
        value = kw.get(name)
        if value is None:
            continue
        if key == "original_max_position_embeddings":
            out[key] = int(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = float(value)
        else:
            out[key] = list(value) if isinstance(value, list) else value
    return out
