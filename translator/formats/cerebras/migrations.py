"""A same-format migration to a later Model Zoo release: the values the source's release derived that the
target release wants stated, and the keys it retired (mappings/cerebras-migrations.yaml)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from ...core.report import Status
from ...core.resources import data_dir
from ...io.yamlread import load as load_yaml
from ...knowledge.schema import older
from ..spec import ExtraEntry, added_for_target

_NONE: Any = object()


@dataclass(frozen=True)
class Derived:
    key: str
    source: str | None  # the key whose value the old release took (None: `value`)
    value: Any
    processors: frozenset[str]
    processor_key: str
    until: str  # the last release that derived it
    since: str  # the first release that wants it stated
    by: str


@dataclass(frozen=True)
class Retired:
    keys: tuple[str, ...]  # legacy-view leaves
    processors: dict[str, frozenset[str]]  # section -> its data processor key's section
    since: str
    by: str


@dataclass(frozen=True)
class Alias:
    key: str  # a field's own spelling (legacy view)
    alias: str  # the spelling its pydantic Field(alias=...) declares: read first, the other refused beside it
    names: frozenset[str]  # the models (model.name) whose config declares it
    since: str
    by: str


@cache
def _data() -> tuple[tuple[Derived, ...], tuple[Retired, ...], tuple[Alias, ...]]:
    raw = load_yaml((data_dir("mappings") / "cerebras-migrations.yaml").read_text(encoding="utf-8"))
    derived = tuple(
        Derived(
            str(d["key"]),
            d.get("from"),
            d.get("value", _NONE),
            frozenset(d["processors"]),
            str(d.get("processor_key", "train_input.data_processor")),
            str(d["until"]),
            str(d["since"]),
            str(d["by"]),
        )
        for d in raw.get("derived") or ()
    )
    retired = tuple(
        Retired(
            tuple(f"{section}.{key}" for section in r["sections"] for key in r["keys"]),
            {section: frozenset(r["processors"]) for section in r["sections"]},
            str(r["since"]),
            str(r["by"]),
        )
        for r in raw.get("retired") or ()
    )
    aliases = tuple(
        Alias(str(a["key"]), str(a["alias"]), frozenset(a["names"]), str(a["since"]), str(a["by"]))
        for a in raw.get("aliases") or ()
    )
    return derived, retired, aliases


def migrate(
    leaves: dict[str, Any], source_version: str | None, version: str | None, model: str | None = None
) -> tuple[list[ExtraEntry], dict[str, tuple[Status, str]]]:
    """Write into `leaves` (the legacy view) what release `version` wants stated that a source of
    `source_version` left to its release, and leave out what `version` refuses: (entries for the added
    values, leaf -> (status, why) for the ones left out). `model`: the model's name (model.name, else
    the family the blocks tell)."""
    added: list[ExtraEntry] = []
    if older("cerebras", version, "2.4.0"):
        return added, {}
    for rule in _data()[0]:
        if rule.key in leaves or leaves.get(rule.processor_key) not in rule.processors:
            continue
        if older("cerebras", version, rule.since) or not _up_to(source_version, rule.until):
            continue
        value = leaves.get(rule.source, _NONE) if rule.source else rule.value
        if value is _NONE:
            continue
        leaves[rule.key] = value
        added.append(added_for_target("Cerebras Model Zoo", rule.key, value, rule.by))
    left_out: dict[str, tuple[Status, str]] = {}
    for gone in _data()[1]:
        if older("cerebras", version, gone.since):
            continue
        for leaf in gone.keys:
            section = leaf.split(".", 1)[0]
            if leaf in leaves and leaves.get(f"{section}.data_processor") in gone.processors[section]:
                del leaves[leaf]
                left_out[leaf] = (Status.DROPPED, f"not written: {gone.by}")
    for pair in _data()[2]:
        if older("cerebras", version, pair.since) or str(leaves.get("model.name") or model) not in pair.names:
            continue
        if _under(leaves, pair.alias):
            for leaf in _under(leaves, pair.key):  # a block (an initializer) is several leaves
                del leaves[leaf]
                left_out[leaf] = (Status.DROPPED, f"not written: {pair.alias} is kept ({pair.by})")
    return added, left_out


def _under(leaves: dict[str, Any], key: str) -> list[str]:
    """The leaves of `key`: itself, or those of the block it names."""
    return [leaf for leaf in leaves if leaf == key or leaf.startswith(key + ".")]


def _up_to(source_version: str | None, until: str) -> bool:
    """The source's release derived it: a release up to `until`, or a file of no stated release (it has
    the construct only those releases ran)."""
    return not source_version or source_version == until or older("cerebras", source_version, until)
