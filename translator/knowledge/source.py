"""What a reader hands to the engine: the merged raw tree plus where each leaf came from, and the
release it was read as; and what of it is set aside as a model family the canonical fields do not
cover (encoder-decoders, encoders, vision and multimodal models, diffusion, preference training):
named as such, not reported key by key."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from ..core.errors import InputError, MappingTableError
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
    # leaf -> why the reader cannot give its value (a shell variable a launcher script does not set):
    # reported `unknown` with the --set that gives it; no value for the rules; a same-format translation
    # carries it as written (exact: it is expanded alike when run)
    unknown_values: dict[str, str] = field(default_factory=dict)
    # leaf -> why its value is one no release of the framework takes (a fork's): `unknown` as above, and
    # also when a same-format translation carries it
    foreign_values: dict[str, str] = field(default_factory=dict)
    # how to find a key's line in a file's text (leaf as written -> line), for a syntax io.key_line
    # (YAML and JSON) does not know; the reader supplies it
    locate: Callable[[str, str], int | None] | None = None
    # leaf or block -> why no rule reads it (dropped, carried by same-format): a key the file's release
    # does not read, a model family neoconv does not cover (a block: its rules' defaults do not apply either)
    set_aside: dict[str, Message] = field(default_factory=dict)
    # what the reader saw in the file that the user should see whatever the report shows (a key given
    # twice with two values): the report's source note
    warnings: list[str] = field(default_factory=list)
    # how the reader read the file, for the report's source note, no problem of the file (a launcher script
    # read statically: the branches taken, the commands not run, the files it sources)
    reading_notes: list[str] = field(default_factory=list)
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


def set_aside(
    source: Source, readable: dict[str, Any], fates: dict[str, Any], fate: Callable[..., Any]
) -> dict[str, Any]:
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


def note_duplicates(
    source: Source, raw: dict[str, Any], duplicates: list[Duplicate], loader: str, file: str = ""
) -> None:
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
        return next(
            (name for processor, name in self.processor_names if processor in processors),
            self.names[0] if self.names else None,
        )


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
    covered: frozenset[str] = frozenset()  # the model folders of the families the canonical fields describe
    name_aliases: tuple[str, ...] = ()  # other keys naming the model (Model Zoo 2.x's model_name)
    covered_names: frozenset[str] = frozenset()  # other names of the covered families' models (registry aliases)

    def of(self, tree: dict[str, Any], history: Any = None) -> Family | None:
        """The unsupported family a parsed config is of, or None (a family the fields cover, or unknown).
        With the key history: a file naming no model whose block has keys only other models read is of the
        family those models make (FamilyUntold when they make none, or several)."""
        name = next((n for k in (self.name_key, *self.name_aliases) if k and (n := at_path(tree, k)) is not None), None)
        processors = {str(v) for k in self.processor_keys if (v := at_path(tree, k)) is not None}
        for family in self.unsupported:
            if isinstance(name, str) and name in family.names:
                return family
            if name is None and (processors & set(family.processors) or any(_has(tree, k) for k in family.keys)):
                return family
        if isinstance(name, str) and history is not None and self.covered and not self.names_covered(name):
            # a model no release registers (a fork's GNN): its block is its own, never read as a decoder's
            return Family(name, f"{name!r} model (a name no decoder family has: a fork's?)", (name,))
        return self._by_readers(tree, history) if name is None and history is not None and self.covered else None

    def names_covered(self, name: str) -> bool:
        return name.lower() in self.covered or name.lower() in self.covered_names

    def _by_readers(self, tree: dict[str, Any], history: Any) -> Family | None:
        """The family of the models whose code alone reads some of the block's keys (none: a covered family)."""
        block = tree.get(self.block)
        leaves = list(flatten(block)) if isinstance(block, dict) else []
        foreign: dict[str, frozenset[str]] = {}
        for leaf in leaves:
            key = f"{self.block}.{leaf}"
            readers = history.models_of(key) if key not in self.keep else None
            if readers is not None and not readers & self.covered:
                foreign[key] = readers
        if not foreign:
            return None
        common = frozenset.intersection(*foreign.values())
        found = {f.name: f for f in self.unsupported for folder in common if folder == f.name or folder in f.names}
        if len(found) > 1:  # the family whose models read most of the block's keys, when one does
            score = {
                name: sum(
                    bool(readers & {name, *f.names})
                    for key in leaves
                    if (readers := history.models_of(f"{self.block}.{key}")) is not None
                )
                for name, f in found.items()
            }
            best = max(score.values())
            found = {name: f for name, f in found.items() if score[name] == best}
        if len(found) == 1:
            return next(iter(found.values()))
        raise FamilyUntold(foreign, sorted(found) or sorted(common))


class FamilyUntold(Exception):
    """A file naming no model whose keys only models outside the covered families read, which make no one
    family: guessing a family from its block structure would change it (a TF BERT read as GPT-2)."""

    def __init__(self, foreign: dict[str, frozenset[str]], candidates: list[str]) -> None:
        self.foreign, self.candidates = foreign, candidates
        shown = "; ".join(f"{k} is read by {', '.join(sorted(v))} only" for k, v in list(foreign.items())[:3])
        super().__init__(
            f"cannot tell the model family: {shown} (no decoder family the other formats hold"
            f"{': ' + ' or '.join(candidates) if candidates else ''}), and no model name says it"
        )


def load_families(table: str, raw: Any) -> Families | None:
    if not raw:
        return None
    try:
        unsupported = tuple(
            Family(
                name,
                str(spec["what"]),
                tuple(spec.get("names", ())),
                tuple(spec.get("processors", ())),
                tuple(spec.get("keys", ())),
                tuple(dict(spec.get("processor_names") or {}).items()),
            )
            for name, spec in raw["unsupported"].items()
        )
        return Families(
            str(raw["block"]),
            tuple(raw["fields"]),
            raw.get("name_key"),
            tuple(raw.get("processor_keys", ())),
            unsupported,
            tuple(raw.get("keep", ())),
            tuple(dict(raw.get("defaults") or {}).items()),
            raw.get("defaults_until"),
            frozenset(raw.get("covered", ())),
            tuple(raw.get("name_aliases", ())),
            frozenset(str(n).lower() for n in raw.get("covered_names", ())),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise MappingTableError(
            f"{table}: families: needs block, fields and unsupported: {{family: {{what, ...}}}} ({exc})"
        ) from None


def set_family_aside(source: Any, table: Any, given: bool = False) -> Family | None:
    """When the source is of a family the fields do not cover: its architecture block is set aside
    (Source.set_aside) and the family noted (Source.meta["unsupported_family"], for a same-format writer).
    A family that cannot be told is refused with the --set that tells it (`given`: the user did)."""
    from .schema import load_history

    families: Families | None = table.families
    if families is None or not isinstance(source.tree.get(families.block), dict):
        return None
    try:
        family = families.of(source.tree, None if given else load_history(source.format))
    except FamilyUntold as untold:
        key = next(iter(untold.foreign))
        raise InputError(
            str(untold),
            file=source.file_of(key),
            line=source.line_of(key),
            key=key,
            hint="give --set model.family=NAME for a decoder (gpt2, gptj, llama, ...), or name the model in the file",
        )
    if family is None:
        return None
    why = ("family_not_supported", {"what": family.what})
    for leaf in flatten(source.tree[families.block]):
        if f"{families.block}.{leaf}" not in families.keep:
            source.set_aside[f"{families.block}.{leaf}"] = why
    processors = {str(v) for k in families.processor_keys if (v := at_path(source.tree, k)) is not None}
    source.meta["unsupported_family"] = {
        "family": family.name,
        "what": family.what,
        "name": family.name_for(processors),
    }
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
                source.release = replace(
                    release,
                    assumed={**release.assumed, key: value},
                    detail=release.detail.replace(said, f"{key}={value!r} ({family.name})"),
                )


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
    aside = (
        {families.block: why for why in source.set_aside.values() if why[0] == "family_not_supported"}
        if families
        else {}
    )
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
        block = (
            next((b for b in aside if view.startswith(b + ".") and entry.kind == "family_not_supported"), None)
            if view
            else None
        )
        if block is None or key is None or view is None:
            out.append(entry)
        elif block not in done:  # the block as the file spells it (a trainer file's trainer.init.model)
            done.add(block)
            rest = view[len(block) :]
            out.append(
                said(
                    key[: len(key) - len(rest)] if key.endswith(rest) else block, None, Status.DROPPED, (aside[block],)
                )
            )
    report.entries = out


def _has(tree: dict[str, Any], path: str) -> bool:
    return at_path(tree, path) is not None
