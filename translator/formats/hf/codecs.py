"""`hf.*` formulas for the concepts a config.json spreads over several keys, each a named codec of
mappings/hf.yaml: the attention heads (count, width, score scale), Falcon's block, the rotary base
and its scaling, the layers without it (nope.py), the sliding window and its per-layer pattern, the MoE layer set and the
auxiliary loss. A class whose table does not name the codec reads nothing here and writes nothing
(or says why it cannot hold a value).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from ...knowledge.formula import FORMULAS, Approx, Formula, field_ident, ident, parameters
from . import config_json
from . import model_types as _hf
from .choose import chosen
from .config_json import raw_value
from .fields import hard_wired, head_width, signed
from .nope import read_nope, write_nope
from .rope import read_rope, write_rope
from .window import read_window, write_window

Kw = dict[str, Any]


def _given(kw: Kw, key: str) -> bool:
    return kw.get(ident(_hf.PREFIX + key)) is not None


def _out(key: str, value: Any) -> dict[str, Any]:
    return {ident(_hf.PREFIX + key): value}


def _loss(out: dict[str, Any], losses: list[tuple[str, tuple[str, ...]]]) -> Any:
    if not losses:
        return out
    return Approx(out, "; ".join(d for d, _ in losses), tuple(f for _, names in losses for f in names), tuple(losses))


# ---- heads, their width and the score scale ------------------------------------------------------
def read_heads(kw: Kw) -> Any:
    mt = _hf.table().types.get(str(kw.get("hf_model_type")))
    if mt is None:
        return {}
    heads = raw_value(kw, mt, mt.keys.get("model.num_heads", "num_attention_heads"))
    hidden = kw.get("hidden_size")
    plain = hidden // heads if hidden and heads and hidden % heads == 0 else None
    out: dict[str, Any] = {"num_heads": heads}
    notes: list[str] = []
    if "model.head_dim" in mt.keys:
        width = raw_value(kw, mt, "head_dim")
        out["head_dim"] = None if width is None or width == plain else width
    elif _given(kw, "head_dim") and raw_value(kw, mt, "head_dim") != plain:
        notes.append(f"HF {mt.name} does not read head_dim: its heads are {plain} wide")
    width = out.get("head_dim") or plain
    if "model.query_pre_attention_scalar" in mt.keys:
        scalar = raw_value(kw, mt, "query_pre_attn_scalar")
        out["query_pre_attention_scalar"] = None if scalar is None or scalar == width else float(scalar)
    elif _given(kw, "query_pre_attn_scalar"):
        notes.append(f"HF {mt.name} does not read query_pre_attn_scalar: it scales scores by 1/sqrt(head_dim)")
    return Approx(out, "; ".join(notes)) if notes else out


def write_heads(kw: Kw) -> Any:
    mt = chosen(kw)
    heads, width, scalar, hidden = (
        kw.get("num_heads"),
        kw.get("head_dim"),
        kw.get("query_pre_attention_scalar"),
        kw.get("hidden_size"),
    )
    out: dict[str, Any] = {}
    losses: list[tuple[str, tuple[str, ...]]] = []
    if heads is not None:
        out.update(_out(mt.keys.get("model.num_heads", "num_attention_heads"), heads))
    uneven = bool(hidden and heads and hidden % heads)
    plain = hidden // heads if hidden and heads and not uneven else None
    if "model.head_dim" in mt.keys:
        # written unless the class's own width is hidden / heads (a class whose default is None needs it given)
        if width is not None or (
            plain and mt.default("head_dim", {"model.hidden_size": hidden, "model.num_heads": heads}) != plain
        ):
            out.update(_out("head_dim", width or plain))
    elif width is not None and width != plain:
        losses.append((hard_wired(mt.why_not("model.head_dim"), "model.head_dim", width), ("model.head_dim",)))
    if mt.strict_heads and uneven:
        losses.append(
            (
                f"transformers 5 refuses HF {mt.name} with hidden_size {hidden} not divisible by "
                f"num_attention_heads {heads}, even with head_dim (4.x accepts it)",
                ("model.num_heads",),
            )
        )
    if "model.query_pre_attention_scalar" in mt.keys:
        if scalar is not None or width or plain:
            out.update(
                _out(
                    "query_pre_attn_scalar",
                    int(scalar)
                    if scalar is not None and float(scalar).is_integer()
                    else scalar
                    if scalar is not None
                    else width or plain,
                )
            )
    elif scalar is not None:
        field = "model.query_pre_attention_scalar"
        losses.append((hard_wired(mt.why_not(field), field, scalar), (field,)))
    return _loss(out, losses)


# ---- Falcon: kv heads, parallel block, one or two norms; gpt_bigcode: kv heads from multi_query ---
def read_falcon(kw: Kw) -> Any:
    mt = _hf.table().types.get(str(kw.get("hf_model_type")))
    heads = kw.get("num_heads")
    if mt is not None and mt.multi_query:
        return {"num_kv_heads": 1 if raw_value(kw, mt, "multi_query") else heads}
    if mt is None or not mt.falcon_block:
        return {}
    new = bool(raw_value(kw, mt, "new_decoder_architecture"))
    parallel = new or bool(raw_value(kw, mt, "parallel_attn"))
    if new:
        kv = raw_value(kw, mt, "num_kv_heads") or heads
        norms = raw_value(kw, mt, "num_ln_in_parallel_attn") or 2
    else:  # the old architecture: multi-query (one kv head) or multi-head
        kv = 1 if raw_value(kw, mt, "multi_query") else heads
        norms = raw_value(kw, mt, "num_ln_in_parallel_attn") or 1
    return {
        "num_kv_heads": kv,
        "parallel_residual": parallel,
        "parallel_shared_norm": (norms == 1) if parallel else None,
    }


def write_falcon(kw: Kw) -> Any:
    mt = chosen(kw)
    heads, kv = kw.get("num_heads"), kw.get("num_kv_heads")
    if mt.multi_query:
        kv = heads if kv is None else kv
        out = _out("multi_query", kv == 1)
        if kv in (1, heads):
            return out
        return Approx(
            out,
            f"HF {mt.name} has one key/value head (multi_query: true) or one per head (false): "
            f"{kv} key/value heads of {heads} is not expressible",
            ("model.num_kv_heads",),
        )
    if not mt.falcon_block:
        return {}
    parallel, shared = kw.get("parallel_residual"), kw.get("parallel_shared_norm")
    kv = heads if kv is None else kv
    if parallel and not shared:  # ln_attn and ln_mlp: the new decoder architecture
        return {**_out("new_decoder_architecture", True), **_out("parallel_attn", True), **_out("num_kv_heads", kv)}
    out = {
        **_out("new_decoder_architecture", False),
        **_out("parallel_attn", bool(parallel)),
        **_out("multi_query", kv == 1),
    }
    if kv not in (1, heads):
        return Approx(
            out,
            f"HF falcon has grouped-query attention ({kv} kv heads) only in its new decoder architecture, "
            "whose parallel block has two norms",
            ("model.num_kv_heads",),
        )
    return out


# ---- MoE layers and the auxiliary loss -----------------------------------------------------------
def read_moe_layers(kw: Kw) -> Any:
    mt = _hf.table().types.get(str(kw.get("hf_model_type")))
    if mt is None or not kw.get("moe_num_experts") or mt.moe_layers in ("none", "all"):
        return {}
    if mt.moe_layers == "deepseek":  # layer i is MoE when i >= first_k_dense_replace
        return {"moe_first_dense_layers": raw_value(kw, mt, "first_k_dense_replace") or 0, "moe_layer_interval": 1}
    step = (
        raw_value(kw, mt, "decoder_sparse_step") or 1
    )  # qwen: MoE when (i + 1) % step == 0 and i not in mlp_only_layers
    dense = raw_value(kw, mt, "mlp_only_layers") or []
    return {"moe_first_dense_layers": step - 1, "moe_layer_interval": step, "moe_dense_layers": sorted(dense)}


def write_moe_layers(kw: Kw) -> Any:
    mt = chosen(kw)
    first, interval, dense = (
        kw.get("moe_first_dense_layers") or 0,
        kw.get("moe_layer_interval") or 1,
        kw.get("moe_dense_layers") or [],
    )
    if mt.moe_layers == "deepseek" and interval == 1 and not dense:
        return _out("first_k_dense_replace", first)
    if mt.moe_layers == "qwen" and first == interval - 1:
        return {**_out("decoder_sparse_step", interval), **(_out("mlp_only_layers", list(dense)) if dense else {})}
    if not first and interval == 1 and not dense:
        return {}
    what = {
        "all": "every layer MoE",
        "none": "no experts",
        "qwen": "MoE layers every decoder_sparse_step-th from layer step - 1",
        "deepseek": "dense layers first (first_k_dense_replace), then every layer MoE",
    }[mt.moe_layers]
    return Approx(
        {},
        f"HF {mt.name} has {what}: the first {first} dense, then every {interval}th"
        + (f" except {dense}" if dense else "")
        + " is not expressible",
    )


def _aux_key(mt: _hf.ModelType) -> str:
    """The class's key for the load-balancing loss's weight (DBRX: ffn_config.moe_loss_weight)."""
    return mt.keys.get("model.moe_aux_loss_coef") or "router_aux_loss_coef"


def read_aux(kw: Kw) -> Any:
    mt = _hf.table().types.get(str(kw.get("hf_model_type")))
    if mt is None:
        return None
    if not mt.moe_aux_loss:
        return None  # no auxiliary loss: what leaving the field out means
    coef = float(raw_value(kw, mt, _aux_key(mt)) or 0.0)
    if coef and not raw_value(kw, mt, "output_router_logits"):
        return 0.0  # added to the loss only with router logits: this model trains without it
    return coef or None


def write_aux(kw: Kw) -> Any:
    mt, coef = chosen(kw), kw["value"]
    if mt.moe_aux_loss:
        return {**_out(_aux_key(mt), coef), **_out("output_router_logits", bool(coef))} if coef else {}
    if coef and coef != mt.fixed.get("model.moe_aux_loss_coef", 0.0):
        return Approx({}, hard_wired(mt.why_not("model.moe_aux_loss_coef"), "model.moe_aux_loss_coef", coef))
    return {}


# ---- the attention score scale (Granite's attention_multiplier) -------------------------------------
def read_attention_scale(kw: Kw) -> Any:
    """Granite multiplies the scores by attention_multiplier instead of 1/sqrt(head_dim): 1/head_dim is
    muP's scaling; any other m is the standard scaling times m * sqrt(head_dim)."""
    mt = _hf.table().types.get(str(kw.get("hf_model_type")))
    if mt is not None and mt.unscaled_scores and head_width(kw):
        return {"attention_logits_multiplier": math.sqrt(head_width(kw) or 1)}  # sqrt(d) / sqrt(d): no scaling at all
    if mt is None or not mt.attention_multiplier:
        return {}  # 1/sqrt(head_dim), no multiplier: what leaving the fields out means
    m, width = float(raw_value(kw, mt, "attention_multiplier")), head_width(kw)
    if not width:
        return {}
    if math.isclose(m, 1.0 / width, rel_tol=1e-9):
        return {"attention_scaling": "inverse_head_dim"}
    multiplier = m * math.sqrt(width)
    return {} if math.isclose(multiplier, 1.0, rel_tol=1e-9) else {"attention_logits_multiplier": multiplier}


def write_attention_scale(kw: Kw) -> Any:
    mt = chosen(kw)
    scaling, multiplier = (
        kw.get("attention_scaling") or "inverse_sqrt_head_dim",
        kw.get("attention_logits_multiplier") or 1.0,
    )
    if mt.attention_multiplier:
        width = head_width(kw)
        if not width:
            return Approx({}, "attention_multiplier needs the head width (hidden_size and num_attention_heads)")
        return _out("attention_multiplier", multiplier / (width if scaling == "inverse_head_dim" else math.sqrt(width)))
    if mt.unscaled_scores:
        width = head_width(kw)
        if scaling == "inverse_sqrt_head_dim" and width and math.isclose(multiplier, math.sqrt(width), rel_tol=1e-9):
            return {}
        return Approx(
            {},
            f"HF {mt.name} does not scale its attention scores (no 1/sqrt(head_dim)): scaling {scaling} "
            f"with multiplier {multiplier} is not expressible",
            ("model.attention_scaling", "model.attention_logits_multiplier"),
        )
    losses: list[tuple[str, tuple[str, ...]]] = [
        (hard_wired(mt.why_not(name), name, value), (name,))
        for name, value, plain in (
            ("model.attention_scaling", scaling, "inverse_sqrt_head_dim"),
            ("model.attention_logits_multiplier", multiplier, 1.0),
        )
        if value != plain
    ]
    return _loss({}, losses)


# ---- registration ---------------------------------------------------------------------------------
def _register(
    name: str,
    fields: tuple[str, ...],
    keys: tuple[str, ...],
    extras: tuple[str, ...],
    read: Callable[[Kw], Any],
    write: Callable[[Kw], Any],
    single: bool = False,
    write_extras: tuple[str, ...] = (),
) -> None:
    """A codec as a formula whose parameters are exactly the rule's keys and fields (`write_extras`: fields
    only its writing needs, the rule's write_with)."""
    own = [field_ident(f) for f in fields]
    read_params = [ident(_hf.PREFIX + k) for k in keys] + ["hf_model_type", *(field_ident(f) for f in extras)]
    blocks = [field_ident(f) for f in _hf.BLOCK_SELECTORS if f not in fields]  # the class is chosen by them too
    write_params = (["value"] if single else own) + [
        "family",
        "position_embedding",
        *(field_ident(f) for f in extras),
        *blocks,
        *(field_ident(f) for f in write_extras),
    ]
    reader = signed(lambda **kw: read(kw), read_params)
    writer = signed(lambda **kw: write(kw), write_params)
    FORMULAS[name] = Formula(name, reader, writer, parameters(reader), parameters(writer))


_register(
    "hf.attention_heads",
    ("model.num_heads", "model.head_dim", "model.query_pre_attention_scalar"),
    ("num_attention_heads", "n_head", "n_heads", "num_heads", "head_dim", "query_pre_attn_scalar"),
    ("model.hidden_size",),
    read_heads,
    write_heads,
)
_register(
    "hf.attention_scale",
    ("model.attention_scaling", "model.attention_logits_multiplier"),
    ("attention_multiplier",),
    ("model.hidden_size", "model.num_heads", "model.head_dim"),
    read_attention_scale,
    write_attention_scale,
)
_register(
    "hf.falcon_block",
    ("model.num_kv_heads", "model.parallel_residual", "model.parallel_shared_norm"),
    ("new_decoder_architecture", "num_kv_heads", "multi_query", "parallel_attn", "num_ln_in_parallel_attn"),
    ("model.num_heads",),
    read_falcon,
    write_falcon,
)
_register(
    "hf.rope",
    (
        "model.rotary_base",
        *(
            f"model.{f}"
            for f in (
                "rope_scaling_type",
                "rope_scaling_factor",
                "rope_original_max_positions",
                "rope_low_freq_factor",
                "rope_high_freq_factor",
                "rope_yarn_beta_fast",
                "rope_yarn_beta_slow",
                "rope_yarn_mscale",
                "rope_yarn_mscale_all_dim",
                "rope_yarn_truncate",
                "rope_attention_factor",
                "rope_short_factor",
                "rope_long_factor",
                "sliding_window_rotary_base",
            )
        ),
    ),
    (
        "rope_theta",
        "rotary_emb_base",
        "rope_scaling",
        "original_max_position_embeddings",
        "rope_local_base_freq",
        "rope_local_scaling",
    ),
    ("model.max_position_embeddings",),
    read_rope,
    write_rope,
)
_register(
    "hf.nope_layers",
    ("model.nope_layers", "model.num_layers"),
    ("no_rope_layers", "no_rope_layer_interval", "sliding_window", "layer_types", "sliding_window_pattern"),
    ("model.num_layers",),
    read_nope,
    write_nope,
    write_extras=("model.sliding_window", "model.attention_layer_types"),
)
_register(
    "hf.window",
    ("model.sliding_window", "model.attention_layer_types"),
    (
        "sliding_window",
        "use_sliding_window",
        "max_window_layers",
        "layer_types",
        "sliding_window_pattern",
        "window_size",
        "attention_types",
    ),
    ("model.num_layers", "model.nope_layers"),
    read_window,
    write_window,
)
_register(
    "hf.moe_layers",
    ("model.moe_first_dense_layers", "model.moe_layer_interval", "model.moe_dense_layers"),
    ("decoder_sparse_step", "mlp_only_layers", "first_k_dense_replace"),
    ("model.num_layers", "model.moe_num_experts"),
    read_moe_layers,
    write_moe_layers,
)
_register(
    "hf.moe_aux_loss",
    ("model.moe_aux_loss_coef",),
    ("router_aux_loss_coef", "output_router_logits", "ffn_config.moe_loss_weight"),
    (),
    read_aux,
    write_aux,
    single=True,
)
