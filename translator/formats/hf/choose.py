"""The HF class an IR is written as: mappings/hf.yaml `choose`, on model.family and the position embedding."""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Unexpressible
from . import model_types as _hf

HF_NO_FAMILY = "no decoder family (model.family) to choose an HF model_type from: no config.json is written"


def chosen(kw: dict[str, Any]) -> _hf.ModelType:
    """The class for a formula's `family` and `position_embedding` arguments."""
    mt = _hf.table().model_type(kw.get("family"), kw.get("position_embedding"))
    if mt is None:
        raise Unexpressible(HF_NO_FAMILY)
    return mt
