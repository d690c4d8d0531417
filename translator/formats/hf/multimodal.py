"""A multimodal config.json (mappings/hf.yaml `wrappers:`) read as its language model: the decoder's keys at
the top (from text_config, or the thinker's; a 4.x file has them at the top already), the rest set aside as
the file has it, and what a format that holds no such model is told (the decoder a config.json of its own could
be translated as)."""

from __future__ import annotations

from typing import Any

from ...core.errors import InputError
from ...io.documents import key_line
from .classes import classes, defined
from .model_types import Wrapper, table

# rope_scaling keys of a multimodal RoPE (Qwen2-VL's MRoPE): the rotary frequencies split between the time, height
# and width position ids; "mrope" as the type is transformers' plain rope to the decoder (rope_type default)
MROPE_KEYS = ("mrope_section", "mrope_interleaved", "interleaved")


def _at(tree: dict[str, Any], path: str) -> Any:
    for part in path.split("."):
        tree = tree.get(part) if isinstance(tree, dict) else None  # type: ignore[assignment]
    return tree


def _without(tree: dict[str, Any], path: str) -> dict[str, Any]:
    """A copy of `tree` without the (dotted) key."""
    head, _, rest = path.partition(".")
    if not rest:
        return {k: v for k, v in tree.items() if k != head}
    inner = tree.get(head)
    return {**tree, head: _without(inner, rest)} if isinstance(inner, dict) else dict(tree)


def unwrap(
    tree: dict[str, Any], wrapper: Wrapper, name: str, text: str
) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """A multimodal config.json as its decoder's: the decoder's keys at the top (the wrapper's shared keys
    where the decoder leaves them out), the rest beside them as the file has it. Returns (config, key -> the
    block that holds it in the file, top-level keys the decoder gives too: the decoder's is read)."""
    path = wrapper.text_config
    inner = _at(tree, path)  # none: the wrapper's default decoder (or a 4.x file's keys at the top)
    if inner is None:
        inner = {}
    if not isinstance(inner, dict):
        raise InputError(
            f"{path} of HF model_type {wrapper.name!r} is not a JSON object",
            file=name,
            line=key_line(text, path) if text else None,
            key=path,
            hint=f"give the {wrapper.text} decoder's settings as an object",
        )
    outer = {k: v for k, v in _without(tree, path).items() if k != "model_type"}
    shared = {k: outer.pop(k) for k in wrapper.shared if k in outer and k not in inner}
    # the wrapper's own keys (its shared ones, PreTrainedConfig's) given in the decoder's block too: transformers 5
    # reads the wrapper's for the model; the decoder's copy stays where it is (set aside, carried by hf2hf)
    own = {k: inner[k] for k in inner if k in outer and (k in wrapper.shared or k in classes().common)}
    inner = {k: v for k, v in inner.items() if k not in own and k != "model_type"}
    if own:
        outer = _with(outer, path, own)
    clash = sorted(k for k in set(outer) & set(inner) if outer[k] != inner[k])
    config = {"model_type": wrapper.text, **shared, **outer, **inner}
    return config, dict.fromkeys(inner, path), clash


def _with(tree: dict[str, Any], path: str, values: dict[str, Any]) -> dict[str, Any]:
    head, _, rest = path.partition(".")
    found = tree.get(head)
    inner: dict[str, Any] = found if isinstance(found, dict) else {}
    return {**tree, head: _with(inner, rest, values) if rest else {**inner, **values}}


def mrope_leaves(config: dict[str, Any]) -> list[str]:
    """The multimodal RoPE's keys in the decoder's rope_scaling (lifted from rope_parameters): no canonical
    field holds them; without them the decoder's rotary embedding is plain RoPE, as transformers reads "mrope"."""
    scaling = config.get("rope_scaling")
    if not isinstance(scaling, dict):
        return []
    found = [f"rope_scaling.{k}" for k in MROPE_KEYS if k in scaling]
    found += [f"rope_scaling.{k}" for k in ("type", "rope_type") if scaling.get(k) == "mrope"]
    return found


def nested_own(config: dict[str, Any], wrapper: Wrapper) -> list[str]:
    """The wrapper's keys the decoder's block repeats, left in place by unwrap: set aside with the rest."""
    kept = _at(config, wrapper.text_config)
    return [f"{wrapper.text_config}.{k}" for k in kept] if isinstance(kept, dict) else []


def refusal(wrapper: Wrapper, flat: bool = False) -> dict[str, Any]:
    """Source.meta["unsupported_family"] of a multimodal model whose decoder is no model of its own: a format
    that holds decoder language models only refuses it, saying what it is and what its decoder could be."""
    cls = classes().types.get(wrapper.name) or defined().types.get(wrapper.name)
    own = f"HF {wrapper.name}" + (f", {cls.name}" if cls else "")
    what = (
        f"multimodal model ({own}: {wrapper.what}, around a {wrapper.text} language model; its decoder could be "
        f"translated alone as a {wrapper.decoder_as} config.json of "
        + ("the decoder's top-level keys" if flat else f"the keys of {wrapper.text_config}")
        + ")"
    )
    return {"family": wrapper.name, "what": what, "name": wrapper.name, "held_by": list(wrapper.held_by), "leaf": LEAF}


LEAF = "hf.model_type"  # where a refusal of the file points


def decoder_hint(kind: str, tree: dict[str, Any]) -> str:
    """For a multimodal type no wrapper reads: the decoder its text_config is, and whether neoconv maps it."""
    found = defined().types.get(kind)
    if found is None or found.kind != "multimodal":
        return ""
    inner = tree.get("text_config")
    named = inner.get("model_type") if isinstance(inner, dict) else None
    decoder = named if isinstance(named, str) else found.parts.get("text_config")
    if not decoder:
        return ""
    if decoder in table().types:
        return f"; its decoder could be translated alone as a {decoder} config.json of the keys of text_config"
    return f"; its decoder (text_config, a {decoder} config) is not one neoconv maps"


def carried(wrapper: Wrapper, document: dict[str, Any], paths: dict[str, str]) -> dict[str, Any]:
    """Source.meta["any_target"] of a multimodal model a format trains whole (`held_by`): the file as written, and
    where each `hf.*` leaf is in it, for that format's writer to carry it unchanged."""
    return {
        "carried_model": {
            "formats": list(wrapper.held_by),
            "document": document,
            "paths": dict(paths),
            "name": wrapper.name,
            "since": {"veomni": wrapper.veomni_since} if wrapper.veomni_since else {},
        }
    }


def carried_for(shape: Any, fmt: str) -> dict[str, Any] | None:
    """The multimodal config.json a source hands to a writer of format `fmt` to carry whole, or None."""
    found = shape.get("carried_model") if hasattr(shape, "get") else None
    return found if isinstance(found, dict) and fmt in found.get("formats", ()) else None
