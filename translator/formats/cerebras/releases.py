"""Cerebras Model Zoo formulas of settings whose keys changed between releases: the precision
(use_bfloat16 1.7-2.0.x, fp16_type from 2.1), Adam's betas (beta1/beta2 before 2.0) and the norm
(use_rms_norm/use_biasless_norm in 1.9.1, norm_type from 2.0). Reading takes every spelling; writing
uses the target release's."""

from __future__ import annotations

from typing import Any

from ...formula import Approx, Extension, Unexpressible, formula
from ...history import older


@formula("cerebras.betas")
class CerebrasBetas:
    """optimizer.betas; before 2.0 beta1 and beta2 (0.9 and 0.999 when absent)."""

    DEFAULT = (0.9, 0.999)

    @staticmethod
    def read(optimizer_betas: Any, optimizer_beta1: Any, optimizer_beta2: Any) -> Any:
        old = [float(optimizer_beta1), float(optimizer_beta2)]
        # 2.0.x read both spellings: the old ones count when they say something (betas at its default)
        if optimizer_betas is not None and (list(optimizer_betas) != list(CerebrasBetas.DEFAULT) or old == list(CerebrasBetas.DEFAULT)):
            return optimizer_betas
        return old

    @staticmethod
    def write(value: Any, version: str = "") -> dict[str, Any]:
        if older("cerebras", version, "2.0.2"):
            return {"optimizer_beta1": value[0], "optimizer_beta2": value[1]}
        return {"optimizer_betas": value}


@formula("cerebras.precision")
class CerebrasPrecision:
    """mixed_precision + fp16_type (release 2.1+; use_bfloat16 1.7-2.0.x) <-> compute dtype.

    With mixed precision and neither key: float16 before 1.7 (no bfloat16 yet); bfloat16 from 1.7 on,
    as the GPT families' set_defaults say (use_bfloat16 True 1.7-2.0.x, gpt2/utils.py; fp16_type
    "bfloat16" 2.1-2.3) and the 2.4+ trainer's MixedPrecision default."""

    TYPES = {"fp16": "float16", "bf16": "bfloat16", "cbf16": "cbfloat16"}

    @staticmethod
    def read(model_mixed_precision: Any, model_fp16_type: str | None, model_use_bfloat16: Any, version: str = "") -> str | None:
        if model_mixed_precision is None and model_fp16_type is None and model_use_bfloat16 is None:
            return None
        if model_mixed_precision is False:
            return "fp32"
        if model_use_bfloat16 is True:
            return "bf16"
        names = {v: k for k, v in CerebrasPrecision.TYPES.items()}
        if model_fp16_type is not None:
            if model_fp16_type not in names:
                raise ValueError(f"unknown fp16_type {model_fp16_type!r}; expected float16, bfloat16 or cbfloat16")
            return names[model_fp16_type]
        if model_use_bfloat16 is False:
            return "fp16"
        return "fp16" if older("cerebras", version, "1.7.0") else "bf16"

    @staticmethod
    def write(value: str, version: str = "") -> Any:
        if value == "fp32":
            return {"model_mixed_precision": False}
        if older("cerebras", version, "1.7.0"):
            if value != "fp16":
                return Approx({"model_mixed_precision": True}, f"Model Zoo {version} mixed precision is float16 only")
            return {"model_mixed_precision": True}
        if older("cerebras", version, "2.1.0"):
            # 1.7-2.0.x: use_bfloat16, which the GPT families default to true: float16 must say false
            if value == "cbf16":
                return Approx({"model_mixed_precision": True, "model_use_bfloat16": True},
                              f"Model Zoo {version} has no cbfloat16: wrote bfloat16")  # fmt: skip
            return {"model_mixed_precision": True, "model_use_bfloat16": value == "bf16"}
        return {"model_mixed_precision": True, "model_fp16_type": CerebrasPrecision.TYPES[value]}


@formula("cerebras.norm")
class CerebrasNorm:
    """Cerebras norm_type (layers/norms.py) <-> norm kind plus whether it has a bias."""

    NAMES = {"layernorm": "layernorm", "rmsnorm": "rmsnorm", "nonparametric-layernorm": "non_parametric_layernorm"}

    @staticmethod
    def read(model_norm_type: Any, model_use_rms_norm: Any = None, model_use_biasless_norm: Any = None) -> Any:
        # 1.9.1's switches (gpt2/model.py RMSNorm, gptj BiaslessLayerNorm), where norm_type is at its default
        if model_norm_type in (None, "layernorm") and model_use_rms_norm:
            return {"norm": "rmsnorm", "norm_bias": False}
        if model_norm_type in (None, "layernorm") and model_use_biasless_norm:
            return {"norm": "layernorm", "norm_bias": False}
        if model_norm_type is None:
            return {}
        name = str(model_norm_type).lower()
        if name == "biasless-layernorm":
            return {"norm": "layernorm", "norm_bias": False}
        if name in CerebrasNorm.NAMES:  # torch.nn.LayerNorm has a learned bias; RMSNorm, no parameters: none
            return {"norm": CerebrasNorm.NAMES[name], "norm_bias": name == "layernorm"}
        return Extension(f"norm_type {model_norm_type!r} has no counterpart outside Cerebras")

    @staticmethod
    def write(norm: str | None, norm_bias: bool | None, version: str = "") -> Any:
        if older("cerebras", version, "2.0.2"):  # no norm_type yet: 1.9.1's switches, LayerNorm before
            if norm == "rmsnorm" and not older("cerebras", version, "1.9.1"):
                return {"model_use_rms_norm": True}
            if norm == "layernorm" and norm_bias is not False:
                return {}
            why = f"Model Zoo {version} has no {norm}{' without bias' if norm_bias is False else ''} norm (norm_type came with 2.0)"
            return Approx({}, why, ("model.norm", "model.norm_bias"))
        if norm == "layernorm" and norm_bias is False:
            return {"model_norm_type": "biasless-layernorm"}
        names = {v: k for k, v in CerebrasNorm.NAMES.items()}
        if norm not in names:
            raise Unexpressible(f"Cerebras has no {norm} norm_type")
        if norm != "layernorm" and norm_bias:
            return Approx({"model_norm_type": names[norm]}, f"Cerebras' {names[norm]} has no bias", ("model.norm_bias",))
        return {"model_norm_type": names[norm]}
