"""HuggingFace config.json: the per-class tables of mappings/hf.yaml (`data:`), loaded.

One ModelType per HF model_type: its key for each canonical field, what its class hard-wires, its
defaults, its activation names, and the named codecs (rope, window, moe_layers, nope, falcon_block,
moe_aux_loss) the few concepts spread over several keys use. `extends` lets a class start from
another's table. The `hf.*` formulas (formulas.py) read this; config_json.py moves a config.json to
and from `hf.*` leaves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Callable

from ...knowledge.catalogue import catalogue
from ...core.errors import MappingTableError
from ...knowledge.formula import field_ident
from ...core.resources import data_dir
from ...io.yamlread import load as load_yaml

PREFIX = "hf."  # where config.json keys live among the leaves (hf.hidden_size is config.json's hidden_size)
SELECTORS = ("model.family", "model.position_embedding")  # what the written model_type depends on
# block fields a `choose` row may also ask for (`blocks:`): every hf formula takes them, to write the same class
BLOCK_SELECTORS = ("model.num_heads", "model.num_kv_heads", "model.mlp_bias")
BLOCKS: dict[str, Callable[[dict[str, Any]], bool]] = {
    # fewer key/value heads than heads (multi-query or grouped-query attention)
    "grouped": lambda v: bool(v.get("num_kv_heads") and v.get("num_heads") and v["num_kv_heads"] < v["num_heads"]),
    "unbiased_mlp": lambda v: v.get("mlp_bias") is False,
}
CODECS = {
    "rope": ("classic", "phi3", "gemma3", "none"),
    "window": ("none", "all", "layers", "qwen", "qwen_moe", "qwen2_moe", "alternate", "every_nth", "nope", "gpt_neo"),
    "moe_layers": ("none", "all", "qwen", "deepseek"),
    "nope": ("none", "interval", "full_layers"),
}
SPECS = ("keys", "fixed", "same_as")  # where a type says what it does with a canonical field
# `=model.num_heads`, `=4*model.hidden_size`, `=model.hidden_size/model.num_heads` (integer division)
_DERIVED = re.compile(r"^=(?:(\d+)\*)?(model\.[a-z_]+)(?:/(model\.[a-z_]+))?$")


@dataclass(frozen=True)
class ModelType:
    name: str
    family: str
    architectures: tuple[str, ...]
    keys: dict[str, str]
    fixed: dict[str, Any]
    same_as: dict[str, str]
    defaults: dict[str, Any]
    activations: dict[str, tuple[str, ...]]
    write_nulls: tuple[str, ...] = ()
    veomni: str = "hf-backend"
    rope: str = "classic"
    window: str = "none"
    moe_layers: str = "none"
    nope: str = "none"  # interval: no_rope_layers, or every no_rope_layer_interval-th layer without RoPE (SmolLM3);
    # full_layers: the layers without a sliding window have no RoPE (Cohere 2; every layer when sliding_window is null)
    falcon_block: bool = False
    multi_query: bool = False  # kv heads from multi_query alone: one, or one per head (gpt_bigcode)
    moe_aux_loss: bool = False
    strict_heads: bool = False
    cannot_hold: dict[str, str] | None = None
    unheld: dict[str, dict[str, Any]] | None = None  # key -> {holds: value, why: ...}: other values no field holds
    written_twice: dict[str, str] | None = None  # key -> another key written with its value (DBRX's rope_theta)
    refused: dict[str, dict[str, Any]] | None = None  # field -> {value, why}: a value the class refuses to build
    partial: dict[str, str] | None = None  # field -> how the class's key differs from the field (a set value is lossy)
    reciprocal: tuple[str, ...] = ()  # fields whose key holds 1 / the value (Granite's logits_scaling divides)
    unscaled_scores: bool = False  # the scores are not divided by sqrt(head_dim) (GPT-Neo)
    attention_multiplier: bool = False  # attention_multiplier is the score scale itself (Granite: no 1/sqrt(head_dim))
    ignored: tuple[str, ...] = ()  # keys the class has but its model never reads (gpt_oss's hidden_act)
    layer_types_4x: bool = False  # its transformers 4 class read layer_types too (a pattern it writes holds in 4.x)
    pattern_key: bool = True  # every_nth: the class reads sliding_window_pattern (False: only its own default n)

    def default(self, key: str, values: dict[str, Any] | None = None) -> Any:
        """What a file that omits `key` means: the class default, or (`=model.x`, ...) the value the
        class computes from other fields, given their canonical `values` (None when one is unknown)."""
        return resolve(self.defaults.get(key), values or {})

    def lists(self, name: str) -> bool:
        """The class says what it does with the field (a key, a hard-wired value, another field)."""
        return name in self.keys or name in self.fixed or name in self.same_as

    def unheld_notes(self, given: dict[str, Any], values: dict[str, Any]) -> list[str]:
        """What the file's `unheld` keys (key -> its value, None: left to the class) say that no canonical
        field holds: a note per key whose value is not the one the fields describe."""
        notes = []
        for key, spec in (self.unheld or {}).items():
            if spec["holds"] == "any":
                continue  # read with another key that says it (DeepSeek V2's n_group with topk_method)
            value = given.get(key)
            if value is None and spec.get("absent"):  # a key the class needs given (DBRX's attn_config.rope_theta)
                notes.append(f"HF {self.name} without {key}: {spec['absent']}")
                continue
            value = (
                self.default(key, values) if value is None else value
            )  # the class's own: DeepSeek V3 routes by groups
            holds = spec["holds"] if isinstance(spec["holds"], list) else [spec["holds"]]
            held = [resolve(h, values) for h in holds]
            if value is None or any(h is None and raw is not None for h, raw in zip(held, holds)):
                continue  # nothing given, or held relative to a value the file does not give
            if value not in held:
                notes.append(f"HF {self.name} {key}={value!r} {spec['why']}: read as {key}={held[0]!r}")
        return notes

    def why_not(self, name: str) -> str:
        """Why the class has no place for a field (the lossy reason)."""
        own = (self.cannot_hold or {}).get(name) or table().cannot_hold_reason.get(name) or f"has no place for {name}"
        return f"HF {self.name} {own}"


@dataclass(frozen=True)
class Wrapper:
    """A multimodal config.json whose language model is the nested `text_config`, of model type `text`."""

    name: str
    text_config: str
    text: str
    architectures: tuple[str, ...]
    shared: tuple[str, ...]  # the wrapper's own keys the decoder takes when text_config does not state them
    aside: tuple[str, ...]  # the rest of the model (no decoder language model): set aside
    what: str


@dataclass(frozen=True)
class HfTable:
    choose: tuple[dict[str, Any], ...]
    types: dict[str, ModelType]
    must_hold: tuple[str, ...]
    cannot_hold_reason: dict[str, str]
    wrappers: dict[str, Wrapper] = field(default_factory=dict)
    unmapped: dict[str, str] = field(default_factory=dict)  # model_type transformers defines -> why no row maps it

    def known(self) -> list[str]:
        """Every model_type a config.json may name (the wrappers' too)."""
        return [*self.types, *self.wrappers]

    def model_type(
        self, family: str | None, position_embedding: str | None, blocks: dict[str, Any] | None = None
    ) -> ModelType | None:
        """The model_type written for an IR (first matching `choose` entry); None without a match. `blocks`:
        the BLOCK_SELECTORS' values (by ident), for rows that choose by the blocks (`blocks: [grouped, ...]`:
        any of them)."""
        if family is None:
            return None
        rows = sorted((e for e in self.choose if "family" in e), key=lambda e: "blocks" not in e)
        rows += [e for e in self.choose if "family" not in e]
        for entry in rows:  # a row naming the family (by its blocks first), then the type of that family, then the rest
            if "family" not in entry and family in self.own:
                return self.types[self.own[family]]
            if "family" in entry and family not in entry["family"]:
                continue
            if "position_embedding" in entry and position_embedding not in entry["position_embedding"]:
                continue
            if "blocks" in entry and not any(BLOCKS[b](blocks or {}) for b in entry["blocks"]):
                continue
            return self.types[entry["model_type"]]
        return self.types[self.own[family]] if family in self.own else None

    @cached_property
    def own(self) -> dict[str, str]:
        """family -> the first model type of that family (what a family no `choose` row names is written as)."""
        out: dict[str, str] = {}
        for mt in self.types.values():
            out.setdefault(mt.family, mt.name)
        return out

    def by_family(self) -> dict[str, ModelType]:
        chosen = {family: self.types[e["model_type"]] for e in self.choose for family in e.get("family", ())}
        return {**{f: self.types[t] for f, t in self.own.items()}, **chosen}

    def spellings(self, name: str) -> list[str]:
        """Every config.json key of a canonical field over all model types (first: the most common)."""
        counts: dict[str, int] = {}
        for mt in self.types.values():
            if mt.keys.get(name):
                counts[mt.keys[name]] = counts.get(mt.keys[name], 0) + 1
        return sorted(counts, key=lambda k: (-counts[k], k))

    def fields(self) -> list[str]:
        names: dict[str, None] = {}
        for mt in self.types.values():
            for name in (*mt.keys, *mt.fixed, *mt.same_as):
                names.setdefault(name, None)
        names.update(dict.fromkeys(self.must_hold))
        return [n for n in names if n not in SELECTORS]  # those two are the model_type rule's


def resolve(value: Any, values: dict[str, Any]) -> Any:
    """A hard-wired value or default: as written, or `=model.x` / `=N*model.x` / `=model.x/model.y`
    of other fields (None when one is unknown)."""
    if isinstance(value, str):
        match = _DERIVED.match(value)
        if match:
            other = values.get(match.group(2))
            if other is None:
                return None
            if match.group(3):
                divisor = values.get(match.group(3))
                return int(other) // int(divisor) if divisor else None
            return int(match.group(1) or 1) * other
    return value


@lru_cache(maxsize=1)
def _field_names() -> dict[str, str]:
    return {field_ident(n): n for n in catalogue()}


def values_of(kw: dict[str, Any]) -> dict[str, Any]:
    """The canonical values among a formula's arguments, by field name (for `=model.x`)."""
    names = _field_names()
    return {names[k]: v for k, v in kw.items() if k in names}


def derived(value: Any) -> bool:
    return isinstance(value, str) and _DERIVED.match(value) is not None


def _merge(base: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """A type's spec over the one it extends: per canonical field, the type's own keys/fixed/same_as
    entry replaces everything the base said of it; defaults merge key by key; the rest is replaced."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    named = {f for section in SPECS for f in (own.get(section) or {})}
    for section in SPECS:
        kept = {f: v for f, v in (base.get(section) or {}).items() if f not in named}
        given = {f: v for f, v in (own.get(section) or {}).items() if not (v is None and section != "fixed")}
        out[section] = {**kept, **given}
    # a base key this type no longer reads (Mistral hard-wires the biases Llama has keys for) has no default here
    dropped = {(base.get("keys") or {})[f] for f in named if f in (base.get("keys") or {})} - set(out["keys"].values())
    dropped |= set(own.get("not_fields") or ())  # keys of the base's class this one has no field for
    inherited = {k: v for k, v in (base.get("defaults") or {}).items() if k not in dropped}
    out["defaults"] = {**inherited, **(own.get("defaults") or {})}
    for key, value in own.items():
        if key not in (*SPECS, "defaults", "extends", "not_fields"):
            out[key] = value
    return out


def _resolved(name: str, raw: dict[str, Any], seen: tuple[str, ...] = ()) -> dict[str, Any]:
    spec = raw[name]
    parent = spec.get("extends")
    if parent is None:
        return spec  # type: ignore[no-any-return]
    if parent not in raw or parent in seen:
        raise MappingTableError(f"hf.yaml: model type {name} extends {parent!r}, which is unknown or a cycle")
    return _merge(_resolved(parent, raw, (*seen, name)), spec)


def _check(mt: ModelType) -> None:
    known = catalogue()
    for section in (mt.keys, mt.fixed, mt.same_as, mt.cannot_hold or {}, mt.partial or {}, mt.refused or {}):
        for name in section:
            if name not in known:
                raise MappingTableError(f"hf.yaml: model type {mt.name}: unknown canonical field {name!r}")
    for name, other in mt.same_as.items():
        if other not in known:
            raise MappingTableError(f"hf.yaml: model type {mt.name}: same_as names unknown field {other!r}")
    if mt.family not in (known["model.family"].enum or ()):
        raise MappingTableError(
            f"hf.yaml: model type {mt.name}: family {mt.family!r} is not a model.family of schemas/canonical.yaml"
        )
    for codec, allowed in CODECS.items():
        if getattr(mt, codec) not in allowed:
            raise MappingTableError(
                f"hf.yaml: model type {mt.name}: {codec} {getattr(mt, codec)!r} is not one of {allowed}"
            )


@lru_cache(maxsize=None)
def table() -> HfTable:
    raw = load_yaml((data_dir("mappings") / "hf.yaml").read_text(encoding="utf-8"))["data"]
    types: dict[str, ModelType] = {}
    for name in raw["model_types"]:
        spec = _resolved(name, raw["model_types"])
        mt = ModelType(
            name=name,
            family=spec["family"],
            architectures=tuple(spec["architectures"]),
            keys=dict(spec.get("keys") or {}),
            fixed=dict(spec.get("fixed") or {}),
            same_as=dict(spec.get("same_as") or {}),
            defaults=dict(spec.get("defaults") or {}),
            activations={k: tuple(v) for k, v in (spec.get("activations") or {}).items()},
            write_nulls=tuple(spec.get("write_nulls") or ()),
            veomni=str(spec.get("veomni", "hf-backend")),
            rope=str(spec.get("rope", "classic")),
            window=str(spec.get("window", "none")),
            moe_layers=str(spec.get("moe_layers", "none")),
            nope=str(spec.get("nope", "none")),
            falcon_block=bool(spec.get("falcon_block", False)),
            multi_query=bool(spec.get("multi_query", False)),
            moe_aux_loss=bool(spec.get("moe_aux_loss", False)),
            strict_heads=bool(spec.get("strict_heads", False)),
            cannot_hold=dict(spec.get("cannot_hold") or {}),
            partial=dict(spec.get("partial") or {}),
            unheld=dict(spec.get("unheld") or {}),
            refused=dict(spec.get("refused") or {}),
            written_twice=dict(spec.get("written_twice") or {}),
            reciprocal=tuple(spec.get("reciprocal") or ()),
            attention_multiplier=bool(spec.get("attention_multiplier", False)),
            ignored=tuple(spec.get("ignored") or ()),
            unscaled_scores=bool(spec.get("unscaled_scores", False)),
            layer_types_4x=bool(spec.get("layer_types_4x", False)),
            pattern_key=bool(spec.get("pattern_key", True)),
        )
        _check(mt)
        types[name] = mt
    choose = tuple(raw["choose"])
    for entry in choose:
        if entry["model_type"] not in types:
            raise MappingTableError(f"hf.yaml: choose names unknown model_type {entry['model_type']!r}")
        if set(entry.get("blocks") or ()) - set(BLOCKS):
            raise MappingTableError(f"hf.yaml: choose row {entry} names blocks other than {sorted(BLOCKS)}")
    wrappers: dict[str, Wrapper] = {}
    for name, spec in (raw.get("wrappers") or {}).items():
        text = str(spec["text_config"])
        if text not in types or name in types:
            raise MappingTableError(
                f"hf.yaml: wrapper {name}: text_config type {text!r} is unknown, or {name} is a model type too"
            )
        wrappers[name] = Wrapper(
            name,
            "text_config",
            text,
            tuple(spec["architectures"]),
            tuple(spec.get("shared") or ()),
            tuple(spec.get("aside") or ()),
            str(spec["what"]),
        )
    unmapped: dict[str, str] = {}
    for group in raw.get("unmapped") or ():
        for name in group["types"]:
            if name in types or name in wrappers or name in unmapped:
                raise MappingTableError(f"hf.yaml: unmapped type {name} is mapped, a wrapper, or listed twice")
            unmapped[name] = str(group["what"])
    return HfTable(
        choose, types, tuple(raw.get("must_hold") or ()), dict(raw.get("cannot_hold_reason") or {}), wrappers, unmapped
    )


def unmapped_reason(kind: str) -> str:
    """What a config.json of a model_type no row maps is, for the report (the family not supported)."""
    from .classes import classes

    known = classes()
    cls = known.types.get(kind)
    if cls is None:
        return (
            f"HF model_type {kind!r}, which transformers {known.release} does not define (remote code, loaded with "
            "trust_remote_code: its architecture is its repository's own code)"
        )
    why = table().unmapped.get(kind, "a class neoconv does not map")
    return f"HF {kind} ({cls.name}): {why}"
