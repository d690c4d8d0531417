"""What a reader hands to the engine: the merged raw tree plus where each leaf came from, and the
release it was read as; and what of it is set aside as a model family the canonical fields do not
cover (encoder-decoders, encoders, vision and multimodal models, diffusion, preference training):
named as such, not reported key by key."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from ..core.errors import MappingTableError
from ..core.ir import IR, Origin
from ..core.report import Entry, Report, Status, said
from ..io.documents import at_path, flatten, key_line

if TYPE_CHECKING:
    from ..core.report.kinds import Message
    from ..io.yamlread import Duplicate


@dataclass(frozen=True)
class Release:
    """The release a source was read as, and how that was decided."""

    label: str
    how: str  # given | keys | newest
    detail: str  # one sentence for the report
    first: str | None = None  # the releases the file's keys fit, first and last
    last: str | None = None
    keys: tuple[str, ...] = ()  # the keys that pinned the range
    unread: tuple[str, ...] = ()  # keys of the file the chosen release does not read
    assumed: dict[str, Any] = field(default_factory=dict)  # key -> default assumed where the range disagrees

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": self.label, "version_basis": self.how, "version_detail": self.detail}
        if self.first is not None:
            out["version_range"] = [self.first, self.last]
        return out


@dataclass
class Source:
    format: str
    tree: dict[str, Any]
    files: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # file name -> text, for line numbers
    leaf_files: dict[str, str] = field(default_factory=dict)  # top-level key -> file it came from
    layout: str | None = None
    version: str | None = None  # the release label the file is read as (versions.settle decides)
    release: Release | None = None  # how that release was decided
    notes: dict[str, str] = field(default_factory=dict)  # leaf -> what the reader did to it
    # what else the reader noted: `unsupplied` (field -> why no file supplies it) for the engine; a
    # same-format writer gets it all as WriteContext.source_shape (private to the format)
    meta: dict[str, Any] = field(default_factory=dict)
    # leaf as the tables see it -> path as the user wrote it (a layout the reader restructured)
    aliases: dict[str, str] = field(default_factory=dict)
    # the file as written, when the reader restructured it into another layout's view (Cerebras' trainer
    # layout): what the layout's own schema checks (validate)
    written: dict[str, Any] | None = None
    # leaf -> why its value is only known at run time (HF Trainer's "auto"): no value, kept in same-format
    unresolved: dict[str, str] = field(default_factory=dict)
    # leaves of `unresolved` that are placeholders the launcher fills by design (DeepSpeed's "auto"): the report
    # says `missing`, with the --set that gives the value; any other unresolved value is `lossy`
    placeholders: frozenset[str] = frozenset()
    # how to find a key's line in a file's text (leaf as written -> line), for a syntax io.key_line
    # (YAML and JSON) does not know; the reader supplies it
    locate: Callable[[str, str], int | None] | None = None
    # leaf or block -> why no rule reads it (dropped, carried by same-format): a key the file's release
    # does not read, a model family neoconv does not cover (a block: its rules' defaults do not apply either)
    set_aside: dict[str, Message] = field(default_factory=dict)
    # what the reader saw in the file that the user should see whatever the report shows (a key given
    # twice with two values): the report's source note
    warnings: list[str] = field(default_factory=list)
    # every key given twice in one mapping: (file, the repeat); a release whose loader refuses them is not
    # the file's (versions.settle)
    repeated: list[tuple[str, Duplicate]] = field(default_factory=list)

    def file_of(self, leaf: str) -> str | None:
        top = leaf.split(".", 1)[0]
        return self.leaf_files.get(top) or (self.files[0] if self.files else None)

    def line_of(self, leaf: str) -> int | None:
        name = self.file_of(leaf)
        text = self.texts.get(name or "")
        return (self.locate or key_line)(text, self.aliases.get(leaf, leaf)) if text else None


def set_aside(source: Source, readable: dict[str, Any], fates: dict[str, Any], fate: Callable[..., Any]) -> dict[str, Any]:
    """The leaves rules may read, without those the source sets aside (each `set_aside` entry a leaf, or a
    block covering the leaves under it); those get the fate `unsupported` with the reason."""
    if not source.set_aside:
        return readable
    found = _aside(source.set_aside, readable)
    for leaf, why in found.items():
        fates[leaf] = fate("unsupported", notes=(why,))
    return {k: v for k, v in readable.items() if k not in found} if found else readable


def _aside(aside: dict[str, Message], leaves: dict[str, Any]) -> dict[str, Message]:
    found: dict[str, Message] = {}
    for leaf in leaves:
        why = aside.get(leaf)
        if why is None and "." in leaf:
            parts = leaf.split(".")
            why = next((aside[b] for i in range(len(parts) - 1, 0, -1) if (b := ".".join(parts[:i])) in aside), None)
        if why is not None:
            found[leaf] = why
    return found


def withheld(rule: Any, aside: dict[str, Message]) -> bool:
    """Every key of the rule lies inside a block set aside (a rule without keys never does)."""
    return bool(rule.keys) and all(any(k.startswith(b + ".") for b in aside) for k in rule.keys)


def note_duplicates(source: Source, raw: dict[str, Any], duplicates: list[Duplicate], loader: str, file: str = "") -> None:
    """Name every key given twice in one mapping of `raw` (the file as parsed) on the leaves that keep
    the last value, as `loader` (the framework's own YAML loader) does: the first value is not used, by
    the framework either. A repeated block also names the first block's leaves the kept one lacks."""
    written = {path: leaf for leaf, path in source.aliases.items()}
    source.repeated += [(file or (source.files[0] if source.files else ""), dup) for dup in duplicates]
    for dup in duplicates:
        parts: list[str] = []
        node: Any = raw
        for part in dup.path:  # a list is one leaf: a repeat inside it is noted on the list
            if not isinstance(node, dict):
                break
            parts.append(part)
            node = node.get(part)
        dotted = ".".join(parts)
        leaves = [dotted + "." + k for k in flatten(node)] if isinstance(node, dict) and node else [dotted]
        lost = ""
        if isinstance(dup.shadowed, dict) and len(parts) == len(dup.path):
            gone = sorted(set(flatten(dup.shadowed, dotted + ".")) - set(leaves))
            lost = f" (with {', '.join(gone)}, which the later block does not set)" if gone else ""
        shadowed = "block" if isinstance(dup.shadowed, dict) else repr(dup.shadowed)[:40]
        note = (
            f"{'.'.join(dup.path)} given twice (lines {dup.first_line} and {dup.line}); {loader} keeps the last, "
            f"as here: the first, {shadowed}{lost}, is not used"
        )
        for leaf in leaves:
            leaf = written.get(leaf, leaf)
            source.notes[leaf] = "; ".join(x for x in (source.notes.get(leaf), note) if x)
        if lost or dup.shadowed != node:  # two values: the file says one thing and runs another
            source.warnings.append(note)


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
    from .schema import load_history, older

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
