"""Cerebras Model Zoo formulas of settings whose keys changed between releases: Adam's betas
(beta1/beta2 before 2.0) and the norm (use_rms_norm/use_biasless_norm in 1.9.1, norm_type from 2.0).
Reading takes every spelling; writing uses the target release's. (The precision, use_bfloat16
1.7-2.0.x and fp16_type from 2.1, is a `cases` rule of mappings/cerebras.yaml.)"""

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
