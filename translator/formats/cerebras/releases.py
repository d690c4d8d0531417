"""Cerebras Model Zoo formulas of settings whose keys changed between releases: Adam's betas
(beta1/beta2 before 2.0). Reading takes every spelling; writing uses the target release's. (The
precision, use_bfloat16 1.7-2.0.x and fp16_type from 2.1, and the norm, use_rms_norm /
use_biasless_norm in 1.9.1 and norm_type from 2.0, are `cases` rules of mappings/cerebras.yaml.)"""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import formula
from ...knowledge.history import older


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
