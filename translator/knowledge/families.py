"""Model families the canonical fields do not cover (encoder-decoders, encoders, vision and multimodal
models, diffusion, preference training): named as such, not reported key by key.

A table's `families:` says where a format keeps a model's architecture (`block`), the canonical field
sections that describe it (`fields`), the key naming the model (`name_key`), and for each family it
does not cover how to tell it: the model names, the data processors and the keys only that family's
code reads (first match wins). A file of such a family has its architecture block set aside (one
`dropped` entry for the block, "family not supported"; a same-format translation carries it as
written) and no default stands in for its architecture. Nothing here names a framework.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..core.errors import MappingTableError
from ..io.documents import at_path, flatten
from ..core.ir import IR, Origin
from ..core.report import Entry, Report, Status, said


@dataclass(frozen=True)
class Family:
    name: str  # the family (a model folder)
    what: str  # what it is, for the report
    names: tuple[str, ...] = ()  # the names `name_key` takes for it (the first: what a trainer layout writes)
    processors: tuple[str, ...] = ()  # data processor values of its configs
    keys: tuple[str, ...] = ()  # keys only its code reads
    processor_names: tuple[tuple[str, str], ...] = ()  # (processor, the model name that takes it)

    def name_for(self, processors: set[str]) -> str | None:
        """The model name a config of this family needs: the one whose model takes its data processor."""
        return next((name for processor, name in self.processor_names if processor in processors),
                    self.names[0] if self.names else None)  # fmt: skip


@dataclass(frozen=True)
class Families:
    block: str  # the section holding the architecture
    fields: tuple[str, ...]  # canonical sections describing the architecture
    name_key: str | None  # the key naming the model, when a layout has one
    processor_keys: tuple[str, ...]  # keys whose value is the data processor
    unsupported: tuple[Family, ...]
    keep: tuple[str, ...] = ()  # keys in the block that are not the architecture (the precision)
    # defaults the GPT families' own set_defaults change but these families' code leaves at the shared
    # value, up to the last release where that holds (`defaults_until`)
    defaults: tuple[tuple[str, Any], ...] = ()
    defaults_until: str | None = None

    def of(self, tree: dict[str, Any]) -> Family | None:
        """The unsupported family a parsed config is of, or None (a family the fields cover, or unknown)."""
        name = at_path(tree, self.name_key) if self.name_key else None
        processors = {str(v) for k in self.processor_keys if (v := at_path(tree, k)) is not None}
        for family in self.unsupported:
            if isinstance(name, str) and name in family.names:
                return family
            if name is None and (processors & set(family.processors) or any(_has(tree, k) for k in family.keys)):
                return family
        return None


def load_families(table: str, raw: Any) -> Families | None:
    if not raw:
        return None
    try:
        unsupported = tuple(
            Family(name, str(spec["what"]), tuple(spec.get("names", ())), tuple(spec.get("processors", ())),
                   tuple(spec.get("keys", ())), tuple(dict(spec.get("processor_names") or {}).items()))  # fmt: skip
            for name, spec in raw["unsupported"].items()
        )
        return Families(str(raw["block"]), tuple(raw["fields"]), raw.get("name_key"), tuple(raw.get("processor_keys", ())),
                        unsupported, tuple(raw.get("keep", ())), tuple(dict(raw.get("defaults") or {}).items()),
                        raw.get("defaults_until"))  # fmt: skip
    except (KeyError, TypeError, AttributeError) as exc:
        raise MappingTableError(f"{table}: families: needs block, fields and unsupported: {{family: {{what, ...}}}} ({exc})") from None


def set_family_aside(source: Any, table: Any) -> Family | None:
    """When the source is of a family the fields do not cover: its architecture block is set aside
    (Source.set_aside) and the family noted (Source.meta["unsupported_family"], for a same-format writer)."""
    families: Families | None = table.families
    if families is None or not isinstance(source.tree.get(families.block), dict):
        return None
    family = families.of(source.tree)
    if family is None:
        return None
    why = ("family_not_supported", {"what": family.what})
    for leaf in flatten(source.tree[families.block]):
        if f"{families.block}.{leaf}" not in families.keep:
            source.set_aside[f"{families.block}.{leaf}"] = why
    processors = {str(v) for k in families.processor_keys if (v := at_path(source.tree, k)) is not None}
    source.meta["unsupported_family"] = {"family": family.name, "what": family.what, "name": family.name_for(processors)}
    _own_defaults(source, families, family)
    return family


def _own_defaults(source: Any, families: Families, family: Family) -> None:
    """The family's defaults where the file leaves the key out and its release reads it (a BERT or T5
    trains its mixed precision in float16 where the GPT families' set_defaults choose bfloat16)."""
    from .history import load_history, older

    history = load_history(source.format)
    version = source.version
    if history is None or not version or version not in history.position:
        return
    if families.defaults_until and older(source.format, families.defaults_until, version):
        return
    for key, value in families.defaults:
        if at_path(source.tree, key) is None and history.reads(key, version):
            node = source.tree
            for part in key.split(".")[:-1]:
                node = node.setdefault(part, {})
            node[key.rsplit(".", 1)[-1]] = value
            source.notes[key] = f"not in the file: {family.what} code defaults it to {value!r} at {version}"
            source.meta.setdefault("family_defaults", []).append(key)
            release = source.release
            if release is not None and key in release.assumed:  # the release's default assumed was the GPT families'
                said = f"{key}={release.assumed[key]!r}"
                source.release = replace(release, assumed={**release.assumed, key: value},
                                         detail=release.detail.replace(said, f"{key}={value!r} ({family.name})"))  # fmt: skip


def withhold_defaults(ir: IR, table: Any) -> None:
    """No default stands in for an architecture set aside: the canonical fields of its sections lose
    every value that did not come from the user or from a key outside the block."""
    families: Families | None = table.families
    if families is None:
        return
    for name in [n for n in ir.fields if n.split(".", 1)[0] in families.fields]:
        value = ir.fields[name]
        if value.origin is Origin.USER or (value.origin is Origin.EXPLICIT and value.source_keys):
            continue
        del ir.fields[name]


def collapse(report: Report, source: Any, table: Any) -> None:
    """The leaves of a block set aside as a family not supported: one entry for the block."""
    families: Families | None = table.families
    aside = {families.block: why for why in source.set_aside.values() if why[0] == "family_not_supported"} if families else {}
    # a block the reader set aside whole (the vision tower of an HF multimodal config.json)
    aside.update({b: source.set_aside[b] for b in source.meta.get("blocks_aside", ()) if b in source.set_aside})
    if not aside:
        return
    views = {written: view for view, written in source.aliases.items()}  # as written -> the view's path
    out: list[Entry] = []
    done: set[str] = set()
    for entry in report.entries:
        key = entry.source_key
        view = views.get(key, key) if key is not None and entry.status is Status.DROPPED else None
        block = next((b for b in aside if view.startswith(b + ".") and entry.kind == "family_not_supported"), None) if view else None
        if block is None or key is None or view is None:
            out.append(entry)
        elif block not in done:  # the block as the file spells it (a trainer file's trainer.init.model)
            done.add(block)
            rest = view[len(block):]
            out.append(said(key[: len(key) - len(rest)] if key.endswith(rest) else block, None, Status.DROPPED,
                            (aside[block],)))
    report.entries = out


def _has(tree: dict[str, Any], path: str) -> bool:
    return at_path(tree, path) is not None
