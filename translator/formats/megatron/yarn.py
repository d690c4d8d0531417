"""YaRN RoPE in Megatron-LM (`--position-embedding-type yarn`, core_v0.19.0+ for a GPT model):
argument_utils._apply_yarn_config_from_args hands GPTModel's YarnRotaryEmbedding --rotary-scaling-factor
(default 1), --yarn-original-max-position-embeddings (4096), --yarn-beta-fast (32), --yarn-beta-slow
(1), --mscale (1), --mscale-all-dim (0) and --[no-]yarn-correction-range-round-to-int (true).

Cos and sin are multiplied by the concentration factor get(f, mscale) / get(f, mscale_all_dim), with
get(f, m) = 0.1 m ln f + 1 (1 for f <= 1) (yarn_rotary_pos_embedding._yarn_get_concentration_factor).
HF infers its attention_factor as that ratio only when both are given and non-zero, else get(f, 1):
the canonical fields say the same thing either way, with rope_attention_factor where the two differ.
"""

from __future__ import annotations

import math
from typing import Any

from ...knowledge.formula import Approx, is_close

DEFAULTS = {
    "rotary_scaling_factor": 1.0,
    "yarn_original_max_position_embeddings": 4096,
    "yarn_beta_fast": 32.0,
    "yarn_beta_slow": 1.0,
    "mscale": 1.0,
    "mscale_all_dim": 0.0,
    "yarn_correction_range_round_to_int": True,
}


def _get(factor: float, m: float) -> float:
    return 1.0 if factor <= 1 else 0.1 * m * math.log(factor) + 1.0


def megatron_factor(factor: float, mscale: float, mscale_all_dim: float) -> float:
    """The concentration factor Megatron's YarnRotaryEmbedding multiplies cos and sin by."""
    return _get(factor, mscale) / _get(factor, mscale_all_dim)


def hf_factor(factor: float, mscale: float | None, mscale_all_dim: float | None) -> float:
    """transformers' attention_factor inferred from the scaling (modeling_rope_utils._compute_yarn_parameters)."""
    if mscale and mscale_all_dim:
        return _get(factor, mscale) / _get(factor, mscale_all_dim)
    return _get(factor, 1.0)


def read_yarn(given: dict[str, Any]) -> dict[str, Any]:
    """Canonical fields of a yarn run from its options (`given`: dest -> value, None when absent)."""
    value = {k: d if given.get(k) is None else given[k] for k, d in DEFAULTS.items()}
    factor, mscale, all_dim = (
        float(value["rotary_scaling_factor"]),
        float(value["mscale"]),
        float(value["mscale_all_dim"]),
    )
    out: dict[str, Any] = {
        "rope_scaling_type": "yarn",
        "rope_scaling_factor": factor,
        "rope_original_max_positions": int(value["yarn_original_max_position_embeddings"]),
        "rope_yarn_beta_fast": float(value["yarn_beta_fast"]),
        "rope_yarn_beta_slow": float(value["yarn_beta_slow"]),
        "rope_yarn_truncate": None if value["yarn_correction_range_round_to_int"] else False,
    }
    if not (mscale == 1.0 and all_dim == 0.0):  # the defaults: what leaving both out means
        out["rope_yarn_mscale"], out["rope_yarn_mscale_all_dim"] = mscale, all_dim
    meant = megatron_factor(factor, mscale, all_dim)
    if not is_close(meant, hf_factor(factor, out.get("rope_yarn_mscale"), out.get("rope_yarn_mscale_all_dim"))):
        out["rope_attention_factor"] = meant
    return out


def write_yarn(values: dict[str, Any]) -> Any:
    """Megatron's yarn options for canonical yarn values (keys by dest), or why not all fit."""
    factor = values.get("rope_scaling_factor")
    if factor is None:
        return Approx({}, "yarn RoPE scaling without a factor is not written by neoconv")
    mscale, all_dim = values.get("rope_yarn_mscale"), values.get("rope_yarn_mscale_all_dim")
    out: dict[str, Any] = {"rotary_scaling_factor": float(factor)}
    for field, key in (
        ("rope_original_max_positions", "yarn_original_max_position_embeddings"),
        ("rope_yarn_beta_fast", "yarn_beta_fast"),
        ("rope_yarn_beta_slow", "yarn_beta_slow"),
    ):
        if values.get(field) is not None:
            out[key] = values[field]
    if values.get("rope_yarn_truncate") is False:
        out["yarn_correction_range_round_to_int"] = False
    wanted = values.get("rope_attention_factor")
    if wanted is None:
        wanted = hf_factor(float(factor), mscale, all_dim)
    # the coefficients as given (unset: Megatron's 1 and 0), else its defaults when those give the factor
    given = (1.0 if mscale is None else float(mscale), 0.0 if all_dim is None else float(all_dim))
    ms, ad = next((c for c in (given, (1.0, 0.0)) if is_close(megatron_factor(float(factor), *c), wanted)), given)
    if (ms, ad) != (1.0, 0.0):
        out["mscale"], out["mscale_all_dim"] = ms, ad
    if not is_close(wanted, megatron_factor(float(factor), ms, ad)):
        return Approx(
            out,
            f"Megatron's yarn multiplies cos and sin by {megatron_factor(float(factor), ms, ad):g} "
            f"(from --mscale / --mscale-all-dim), not {wanted:g}",
            ("model.rope_attention_factor",),
        )
    return out
