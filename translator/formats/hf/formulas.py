"""HuggingFace config.json formulas: importing this module registers every `hf.*` formula the tables
name — one per canonical field (fields.py), the codecs of concepts spread over several keys
(codecs.py, rope.py, window.py) and the model type itself (below), all built from the per-class
tables of mappings/hf.yaml (model_types.py).
"""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import FORMULAS, Approx, Extension, formula
from . import codecs  # noqa: F401  (registers the codec formulas)
from . import model_types as _hf
from .choose import chosen
from .fields import field_formulas


@formula("hf.model_type")
class HfModelType:
    """model_type (+ architectures) <-> model.family and the position embedding the class hard-wires
    (Falcon: rotary, or ALiBi with alibi: true)."""

    @staticmethod
    def read(hf_model_type: str | None, hf_architectures: Any, hf_alibi: Any, hf_use_parallel_residual: Any) -> Any:
        if hf_model_type is None:
            return {}
        mt = _hf.table().types.get(str(hf_model_type))
        if mt is None:
            return Extension(f"HF model_type {hf_model_type!r}: neoconv maps {', '.join(_hf.table().types)}")
        family = mt.family
        if mt.name == "gpt_neox" and hf_use_parallel_residual is False:
            family = "gpt2"  # a sequential GPT-NeoX block is what the other frameworks call GPT-2 style
        position = mt.fixed.get("model.position_embedding", "rotary")
        if mt.falcon_block and hf_alibi:
            position = "alibi"
        return {"family": family, "position_embedding": position}

    @staticmethod
    def write(family: str | None, position_embedding: str | None, num_heads: int | None = None,
              num_kv_heads: int | None = None, mlp_bias: bool | None = None) -> Any:  # fmt: skip
        blocks = {"num_heads": num_heads, "num_kv_heads": num_kv_heads, "mlp_bias": mlp_bias}
        mt = chosen({"family": family, "position_embedding": position_embedding, **blocks})
        out: dict[str, Any] = {"hf_model_type": mt.name, "hf_architectures": list(mt.architectures)}
        losses = []
        own = _hf.table().model_type(family, position_embedding)
        if family is not None and own is not None and own.name != mt.name and own.family == family:
            losses.append(f"HF {own.name} has no multi-query or grouped-query attention and biases its MLP: the blocks "
                          f"are written as {mt.name}, which holds them")  # fmt: skip
        elif family is not None and family != mt.family and not (mt.name == "gpt_neox" and family == "gpt2"):
            losses.append(f"HF has no {family} class here: written as {mt.name} (what its blocks are)")
        fixed = mt.fixed.get("model.position_embedding", "rotary")
        if mt.falcon_block and position_embedding == "alibi":
            out["hf_alibi"] = True
        elif position_embedding is not None and position_embedding != fixed:
            losses.append(f"HF {mt.name} has {fixed} position embeddings: {position_embedding} is not expressible")
        return Approx(out, "; ".join(losses)) if losses else out


for _built in field_formulas():  # registered with the hand-written ones: the tables name them all
    FORMULAS[_built.name] = _built
