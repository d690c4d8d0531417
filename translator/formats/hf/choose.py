"""The HF class an IR is written as: mappings/hf.yaml `choose`, on model.family and the position embedding."""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Unexpressible, field_ident
from . import model_types as _hf

HF_NO_FAMILY = "no decoder family (model.family) to choose an HF model_type from: no config.json is written"


BLOCK_ARGS = tuple(field_ident(name) for name in _hf.BLOCK_SELECTORS)  # every hf formula's write takes them


def chosen(kw: dict[str, Any], own: str | None = None) -> _hf.ModelType:
    """The class for a formula's `family`, `position_embedding` and block arguments (`own`: the field a
    single-field formula writes as `value`)."""
    blocks = {arg: kw.get(arg) for arg in BLOCK_ARGS}
    if own is not None and field_ident(own) in blocks:
        blocks[field_ident(own)] = kw.get("value")
    mt = _hf.table().model_type(kw.get("family"), kw.get("position_embedding"), blocks)
    if mt is None:
        raise Unexpressible(HF_NO_FAMILY)
    return mt
