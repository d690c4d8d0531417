"""Release labels and which release a file was written for.

A format's releases are those of its key history (translator/history.py); its mapping table may add
names users know for them (`version_aliases:`, e.g. the documentation labels of earlier neoconv
versions). `resolve` turns what `--from-version`/`--to-version` gave into a label, or refuses it
listing the valid ones. `settle` decides the release a source file is read with: the one given, else
the one its keys tell (the newest release that reads all of them), and says how it was decided.
Nothing here names a framework.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator

from .errors import MappingTableError, UsageError
from .history import NO_DEFAULT, History, load_history

CURRENT = "current"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


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


class Versions:
    """The release labels of one format and the other names that stand for them."""

    def __init__(self, fmt: str, history: History | None, extra: dict[str, str], title: str) -> None:
        self.format = fmt
        self.title = title
        self.history = history
        self.labels: tuple[str, ...] = history.labels if history else (CURRENT,)
        aliases = dict(history.aliases) if history else {}
        for name, target in extra.items():
            aliases[name] = aliases.get(target, target)
        if history is None:
            aliases.pop(CURRENT, None)
        self.aliases = aliases
        self.newest = self.labels[-1]

    def names(self) -> list[str]:
        return [*self.labels, *self.aliases]

    def resolve(self, name: Any, flag: str = "--from-version") -> str:
        """The release label `name` stands for; a UsageError listing the valid names otherwise."""
        found = self._lookup(name) if isinstance(name, str) else None
        if found is not None:
            return found
        import difflib  # only for this message

        close = difflib.get_close_matches(str(name), self.names(), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise UsageError(f"{flag} {name!r}: not a {self.title} release{hint}; known: {self._listing()}")

    def _lookup(self, name: str) -> str | None:
        name = name.strip()
        if name in self.aliases:
            return self.aliases[name]
        if name in self.labels:
            return name
        for variant in (name[1:] if name[:1] in "vV" else None, f"#{name}" if name.isdigit() else None):
            if variant and (variant in self.labels or variant in self.aliases):
                return self.aliases.get(variant, variant)
        if self.history is not None and _DATE.match(name):
            # a day between two labels: the release that was current that day
            dated = [label for label in self.labels if self.history.dates.get(label, "9") <= name]
            return dated[-1] if dated else None
        if name.count(".") == 2:  # a patch release the history has no tag of: its minor release
            minor = name.rsplit(".", 1)[0]
            return self.aliases.get(minor)
        return None

    def _listing(self) -> str:
        labels = ", ".join(self.labels)
        aliases = ", ".join(f"{a} (= {t})" if a != t else a for a, t in self.aliases.items())
        return labels + (f"; also {aliases}" if aliases else "")

    def before(self, label: str, other: str) -> bool:
        """`label` is an older release than `other` (both labels)."""
        return self.labels.index(label) < self.labels.index(other)


@lru_cache(maxsize=None)
def versions(fmt: str) -> Versions:
    from .mapping import load_table  # the table names extra labels; loaded once per format

    table = load_table(fmt)
    return Versions(fmt, load_history(fmt), dict(table.version_aliases), table.title)


def resolve(fmt: str, name: Any, flag: str = "--from-version") -> str:
    return versions(fmt).resolve(name, flag)


# ---- which release a file is ------------------------------------------------------------------------


def history_keys(
    tree: dict[str, Any], aliases: dict[str, str], history: History,
    spelling: Callable[[str, str | None], tuple[str, ...]] | None = None, neutral: tuple[str, ...] = (),
) -> Iterator[str]:  # fmt: skip
    """The keys of a parsed config that the history knows: each leaf as the history names it (as
    written, unless the reader's `spelling` says otherwise), the keys of dicts inside lists (`a.*.b`),
    and blocks the history lists as keys of their own. Keys under a `neutral` block tell nothing."""
    known = history.keys
    blocks = history.blocks

    def walk(node: dict[str, Any], prefix: str) -> Iterator[str]:
        for name, value in node.items():
            path = f"{prefix}{name}"
            if neutral and path in neutral:
                continue
            if isinstance(value, dict) and value:
                if path in known and path not in blocks:
                    yield path
                yield from walk(value, path + ".")
                continue
            if spelling is None:
                written = aliases.get(path, path)
            else:
                names = spelling(path, aliases.get(path))
                written = next((n for n in names if n in known), names[0])
            if written in known:
                yield written
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, dict):
                        for sub in item:
                            star = f"{written}.*.{sub}"
                            if star in known:
                                yield star

    return walk(tree, "")


def detect(history: History, keys: Iterable[str], watched: Iterable[str] = ()) -> Release:
    """The release a file's history keys fit: the newest release reading all of them; when no release
    reads all, the one reading most (newest first). `watched`: keys whose default matters to the
    caller; those the file lacks and whose default differs within the fitting range are `assumed`."""
    used = {key: history.mask(key) for key in keys}
    used = {key: mask for key, mask in used.items() if mask}
    fit = history.every
    for mask in used.values():
        fit &= mask
    unread: tuple[str, ...] = ()
    if fit:
        first, last = history.span(fit)  # type: ignore[misc]
        label = last
    else:
        label = max(history.labels, key=lambda lbl: (sum(history.reads(k, lbl) for k in used), history.position[lbl]))
        unread = tuple(sorted(k for k in used if not history.reads(k, label)))
        first = last = label
        fit = 1 << history.position[label]
    pinning = _pinning(history, used, fit)
    assumed = _assumed(history, fit, label, set(watched) - set(used))
    if not fit or unread:
        detail = (f"no {history.format} release reads all of this file's keys: read as {label}, the one reading most "
                  f"({', '.join(unread)} not read there)")  # fmt: skip
        how = "keys"
    elif pinning:
        span = first if first == last else f"{first}..{last}"
        detail = f"the keys {', '.join(pinning)} fit releases {span}: read as {label}"
        how = "keys"
    else:
        detail = f"no key of the file pins a release: read as the newest, {label}"
        how = "newest"
    if assumed:
        detail += "; assumed its defaults for " + ", ".join(f"{k}={v!r}" for k, v in assumed.items())
    return Release(label, how, detail, first, last, pinning, unread, assumed)


def _pinning(history: History, used: dict[str, int], fit: int) -> tuple[str, ...]:
    """The keys that bound the range: each one's own range starts or ends where the fit does."""
    first, last = fit & -fit, 1 << (fit.bit_length() - 1)
    every = history.every
    found = []
    for key, mask in used.items():
        if mask == every:
            continue
        own_first, own_last = mask & -mask, 1 << (mask.bit_length() - 1)
        if (own_first == first and first != 1) or (own_last == last and last != 1 << (every.bit_length() - 1)):
            found.append(key)
    return tuple(sorted(found)[:4])


def _assumed(history: History, fit: int, label: str, watched: set[str]) -> dict[str, Any]:
    """Defaults of `watched` keys that differ somewhere in the fitting range: the chosen one."""
    if fit & (fit - 1) == 0:  # one release
        return {}
    out: dict[str, Any] = {}
    for key in sorted(watched):
        mine = history.default_at(key, label)
        if mine is not NO_DEFAULT and history.defaults_in(key, fit) - {repr(mine)}:
            out[key] = mine
    return out


def given(label: str, name: str) -> Release:
    detail = f"as given ({name})" if name != label else "as given"
    return Release(label, "given", detail)


_WATCHED: dict[int, tuple[str, ...]] = {}


def _watched(table: Any) -> tuple[str, ...]:
    """The keys of a table whose default changes between releases (what a guessed release decides)."""
    found = _WATCHED.get(id(table))
    if found is None:
        found = _WATCHED[id(table)] = tuple(r.key for r in table.rules if r.key and r.version_defaults)
    return found


def settle(source: Any, table: Any, name: str | None = None) -> Release:
    """Decide the release `source` is read as (`name`: the one the user gave, already resolved or
    not) and record it on the source."""
    known = versions(source.format)
    if name:
        label = known.resolve(name)
        release = given(label, name)
    elif known.history is None:
        release = Release(known.newest, "newest", f"neoconv knows one {known.title} release: {known.newest}")
    else:
        from .registry import get_format

        spelling = get_format(source.format).load_reader().history_key
        keys = history_keys(source.tree, source.aliases, known.history, spelling, table.release_neutral)
        release = detect(known.history, keys, _watched(table))
    source.version = release.label
    source.release = release
    return release


# ---- defaults per release (mapping tables) -----------------------------------------------------


def release_defaults(table: str, rule: Any, history: History | None) -> Any:
    """A rule with its key's default at every release where it differs from the newest one's.

    From the history data (the framework's own source at each release) for a key the table gives a
    default for; a release that reads the key only under an older name takes that name's default.
    `version_defaults: {release: value}` in the table holds from that release on and wins."""
    if history is None or not rule.key:
        if rule.version_defaults:
            raise MappingTableError(f"{table}: rule for {rule.label}: version_defaults need a key history (schemas/history)")
        return rule
    found: dict[str, Any] = {}
    if rule.has_default():
        olds = history.renamed_to(rule.key)
        for label in history.labels:
            value = history.default_at(rule.key, label)
            if value is NO_DEFAULT and not history.reads(rule.key, label):
                # an older spelling's default, when it is a value of the same kind (a plain rename:
                # not beta1's 0.9 for betas, nor use_rms_norm's false for norm_type)
                value = next((d for r in olds if _alike(d := history.default_at(r.old, label), rule.default)), NO_DEFAULT)
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


def table_releases(table: str, history: History | None, raw: Any) -> tuple[tuple[str, ...], dict[str, str]]:
    """A table's release labels (its history's, or `current` alone) and its `version_aliases`, checked."""
    labels = history.labels if history else (CURRENT,)
    aliases = {str(k): str(v) for k, v in (raw or {}).items()}
    for alias, label in aliases.items():
        if label not in labels and not (history and label in history.aliases):
            raise MappingTableError(f"{table}: version_aliases: {alias} -> {label!r} is not a release of the key history")
    return labels, aliases


def table_renames(table: str, history: History | None, raw: Any) -> dict[str, str]:
    """A table's `renamed:` (older spelling -> current key), each old key one some release read."""
    renamed = {str(k): str(v) for k, v in (raw or {}).items()}
    for old in renamed:
        if history is None or old not in history.keys:
            raise MappingTableError(f"{table}: renamed: {old!r} is not a key of any release in the key history")
    return renamed


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


# ---- older spellings --------------------------------------------------------------------------------


def upgrade(source: Any, table: Any) -> None:
    """Read the table's older spellings (`renamed:`) as the keys that replaced them: the value moves to
    the new path in the source tree and Source.aliases keep the name the file wrote (reports, lines).
    An old key beside its new one stays where it is (the new one is what the framework reads)."""
    for old, new in table.renamed.items():
        value = _pop_path(source.tree, old, peek=True)
        if value is _ABSENT or _pop_path(source.tree, new, peek=True) is not _ABSENT:
            continue
        _pop_path(source.tree, old)
        _put_path(source.tree, new, value)
        for leaf, rest in _leaves(value, ""):
            written = source.aliases.pop(old + rest, old + rest)
            source.aliases[new + rest] = written
            note = source.notes.pop(old + rest, "")
            source.notes[new + rest] = "; ".join(x for x in (f"{written}: the older name of {new + rest}", note) if x)
        top_old, top_new = old.split(".", 1)[0], new.split(".", 1)[0]
        if top_old in source.leaf_files:
            source.leaf_files.setdefault(top_new, source.leaf_files[top_old])
            if top_old not in source.tree:
                del source.leaf_files[top_old]


_ABSENT: Any = object()


def _pop_path(tree: dict[str, Any], path: str, peek: bool = False) -> Any:
    node: Any = tree
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or parts[-1] not in node:
        return _ABSENT
    if peek:
        return node[parts[-1]]
    value = node.pop(parts[-1])
    if not node and len(parts) > 1:  # an emptied block goes too
        _pop_path(tree, ".".join(parts[:-1]))
    return value


def _put_path(tree: dict[str, Any], path: str, value: Any) -> None:
    node = tree
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _leaves(value: Any, prefix: str) -> Iterator[tuple[Any, str]]:
    """(value, dotted suffix) of every leaf of a value (a block's leaves, or the value itself)."""
    if isinstance(value, dict) and value:
        for name, item in value.items():
            yield from _leaves(item, f"{prefix}.{name}")
    else:
        yield value, prefix
