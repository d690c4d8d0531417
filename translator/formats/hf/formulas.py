"""HuggingFace config.json formulas: importing this module registers every `hf.*` formula the tables
name — one per canonical field (fields.py), the codecs of concepts spread over several keys
(codecs.py, rope.py, window.py) and the model type itself (below), all built from the per-class
tables of mappings/hf.yaml (model_types.py).
"""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import FORMULAS, Approx, Extension, Formula, formula, ident, parameters
from . import codecs  # noqa: F401  (registers the codec formulas)
from . import model_types as _hf
from .choose import chosen
from .fields import field_formulas, signed


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
    def write(
        family: str | None,
        position_embedding: str | None,
        num_heads: int | None = None,
        num_kv_heads: int | None = None,
        mlp_bias: bool | None = None,
    ) -> Any:
        blocks = {"num_heads": num_heads, "num_kv_heads": num_kv_heads, "mlp_bias": mlp_bias}
        mt = chosen({"family": family, "position_embedding": position_embedding, **blocks})
        out: dict[str, Any] = {"hf_model_type": mt.name, "hf_architectures": list(mt.architectures)}
        losses = []
        own = _hf.table().model_type(family, position_embedding)
        if family is not None and own is not None and own.name != mt.name and own.family == family:
            losses.append(
                f"HF {own.name} has no multi-query or grouped-query attention and biases its MLP: the blocks "
                f"are written as {mt.name}, which holds them"
            )
        elif family is not None and family != mt.family and not (mt.name == "gpt_neox" and family == "gpt2"):
            losses.append(f"HF has no {family} class here: written as {mt.name} (what its blocks are)")
        fixed = mt.fixed.get("model.position_embedding", "rotary")
        if mt.falcon_block and position_embedding == "alibi":
            out["hf_alibi"] = True
        elif position_embedding is not None and position_embedding != fixed:
            losses.append(f"HF {mt.name} has {fixed} position embeddings: {position_embedding} is not expressible")
        return Approx(out, "; ".join(losses)) if losses else out


def _with_unheld(base: Formula) -> Formula:
    """hf.model_type that also reads every class's `unheld` keys (OPT's do_layer_norm_before, ...): a value
    no canonical field holds makes the reading lossy, naming the key."""
    keys = sorted({key for mt in _hf.table().types.values() for key in (mt.unheld or {})})
    own = sorted(base.read_params())

    def read(**kw: Any) -> Any:
        out = base.read(**{p: kw.get(p) for p in own})
        mt = _hf.table().types.get(str(kw.get("hf_model_type")))
        if mt is None or isinstance(out, Extension):
            return out
        given = {key: kw.get(ident(_hf.PREFIX + key)) for key in keys}
        theta = kw.get("hf_rope_theta")
        theta = theta if theta is not None else mt.default("rope_theta")
        values = {
            "model.hidden_size": kw.get("hf_hidden_size"),
            "model.rotary_base": None if theta is None else float(theta),
        }
        notes = mt.unheld_notes(given, values)
        foreign = [key for key in keys if key not in (mt.unheld or {}) and given[key] is not None]
        if foreign:  # another class's key (MPT's emb_pdrop, which its model never applies)
            notes.append(f"HF {mt.name} does not read {', '.join(foreign)}")
        return Approx(out, "; ".join(notes)) if notes else out

    read = signed(read, [*own, *(ident(_hf.PREFIX + key) for key in keys), "hf_hidden_size", "hf_rope_theta"])
    return Formula(base.name, read, base.write, parameters(read), base.write_params())


FORMULAS["hf.model_type"] = _with_unheld(FORMULAS["hf.model_type"])

for _built in field_formulas():  # registered with the hand-written ones: the tables name them all
    FORMULAS[_built.name] = _built
