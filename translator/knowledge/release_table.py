"""What a mapping table says about releases: its labels and the other names for them, the blocks that
tell nothing about a file's release, the older spellings it reads, and each rule's default at every
release (from the key history, with the table's own `version_defaults` winning). Nothing here names a
framework."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..core.errors import MappingTableError
from .schema import NO_DEFAULT, History

CURRENT = "current"  # the one label of a format without a key history


@dataclass(frozen=True)
class ReleaseFacts:
    """A table's top-level release entries."""

    aliases: dict[str, str] = field(default_factory=dict)  # version_aliases: other names users know -> label
    neutral: tuple[str, ...] = ()  # release_neutral: blocks whose keys tell nothing about a file's release
    renamed: dict[str, str] = field(default_factory=dict)  # older spelling -> the key read in its place
    watch_absent: tuple[str, ...] = ()  # keys whose absence means different things in different releases
    # repeats_refused: {since: release, by: what refuses it}: from that release on, the framework's loader
    # refuses a key given twice in one mapping (earlier ones keep the last value, as PyYAML does)
    repeats_refused: tuple[str, str] | None = None
    # unknown_refused: {since: release, by: what refuses it}: from that release on, the framework refuses a key
    # its release does not read, so a same-format migration leaves out (and names) keys the target retired
    unknown_refused: tuple[str, str] | None = None
    refused_under: tuple[str, ...] = ()  # unknown_refused's `under`: only keys below these blocks


def release_defaults(table: str, rule: Any, history: History | None) -> Any:
    """A rule with its key's default at every release where it differs from the newest one's.

    From the history data (the framework's own source at each release) for a key the table gives a
    default for; a release that reads the key only under an older name takes that name's default.
    `version_defaults: {release: value}` in the table holds from that release on and wins."""
    if history is None or not rule.key:  # a table's own versions: its version_defaults name them one by one
        return rule
    found: dict[str, Any] = {}
    if rule.has_default():
        olds = history.renamed_to(rule.key)
        for label in history.labels:
            value = history.default_at(rule.key, label)
            if value is NO_DEFAULT and not history.reads(rule.key, label):
                # an older spelling's default, when it is a value of the same kind (a plain rename:
                # not beta1's 0.9 for betas, nor use_rms_norm's false for norm_type)
                value = next(
                    (d for r in olds if _alike(d := history.default_at(r.old, label), rule.default)), NO_DEFAULT
                )
            if value is not NO_DEFAULT and value != rule.default:
                found[label] = value
    explicit = sorted(rule.version_defaults.items(), key=lambda item: _position(table, rule, history, item[0]))
    for i, (since, value) in enumerate(explicit):
        until = _position(table, rule, history, explicit[i + 1][0]) if i + 1 < len(explicit) else len(history.labels)
        for label in history.labels[_position(table, rule, history, since) : until]:
            found[label] = value
            if value == rule.default:
                del found[label]
    if found == rule.version_defaults:
        return rule
    return replace(rule, version_defaults=found)


# a table's top-level entries about releases (the grammar in mappings/neox.yaml's header)
RELEASE_ENTRIES = (
    "version_aliases",
    "release_neutral",
    "renamed",
    "watch_absent",
    "repeats_refused",
    "unknown_refused",
)


def table_releases(
    table: str, history: History | None, raw: dict[str, Any], base: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """A table's release facts, checked: its labels (its history's, newest first; without a history the
    table's own `versions:` list, its base table's, or `current` alone) and its version_aliases,
    release_neutral blocks, renamed keys and watch_absent keys."""
    if history is None:
        own = tuple(str(v) for v in raw.get("versions") or base or (CURRENT,))
        labels: tuple[str, ...] = tuple(reversed(own))
    elif "versions" in raw:
        raise MappingTableError(
            f"{table}: versions: the releases come from the key history; name others with version_aliases"
        )
    else:
        labels = history.labels
    aliases = {str(k): str(v) for k, v in (raw.get("version_aliases") or {}).items()}
    for alias, label in aliases.items():
        if label not in labels and not (history and label in history.aliases):
            raise MappingTableError(
                f"{table}: version_aliases: {alias} -> {label!r} is not a release of the key history"
            )
    renamed = {str(k): str(v) for k, v in (raw.get("renamed") or {}).items()}
    for old in renamed:
        if history is None or old not in history.keys:
            raise MappingTableError(f"{table}: renamed: {old!r} is not a key of any release in the key history")
    refusals: list[tuple[str, str] | None] = []
    for entry in ("repeats_refused", "unknown_refused"):
        given = raw.get(entry)
        if given is not None and (
            history is None or str(given.get("since")) not in history.position or not given.get("by")
        ):
            raise MappingTableError(f"{table}: {entry}: needs since (a release of the key history) and by")
        refusals.append((str(given["since"]), str(given["by"])) if given else None)
    facts = ReleaseFacts(
        aliases,
        tuple(raw.get("release_neutral") or ()),
        renamed,
        tuple(raw.get("watch_absent") or ()),
        refusals[0],
        refusals[1],
        tuple((raw.get("unknown_refused") or {}).get("under") or ()),
    )
    ordered = tuple(reversed(labels))
    current = history.aliases.get(CURRENT) if history else None
    if current in ordered and current != ordered[0]:
        # a release after `current` (VeOmni's #1090, known from outside the pinned mirror) is written only when asked
        ordered = (current, *(label for label in ordered if label != current))
    return {"versions": ordered, "releases": facts}


def _alike(value: Any, default: Any) -> bool:
    if value is NO_DEFAULT:
        return False
    numbers = (int, float)
    if isinstance(value, bool) or isinstance(default, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    return type(value) is type(default) or (isinstance(value, numbers) and isinstance(default, numbers))


def _position(table: str, rule: Any, history: History, label: str) -> int:
    label = history.aliases.get(label, label)
    if label not in history.position:
        raise MappingTableError(f"{table}: rule for {rule.label}: version_defaults: {label!r} is not a release")
    return history.position[label]


def default_runs(labels: tuple[str, ...], by_label: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """Per-release defaults as runs of consecutive releases: (first, last, value), for listings."""
    runs: list[tuple[str, str, Any]] = []
    for label in labels:
        if label in by_label:
            value = by_label[label]
            if runs and runs[-1][2] == value and labels.index(runs[-1][1]) == labels.index(label) - 1:
                runs[-1] = (runs[-1][0], label, value)
            else:
                runs.append((label, label, value))
    return runs
