"""Release labels and which release a file was written for, and what follows from it.

A format's releases are those of its key history (translator/knowledge/schema.py); its mapping table may add
names users know for them (`version_aliases:`, e.g. the documentation labels of earlier neoconv
versions). `resolve` turns what `--from-version`/`--to-version` gave into a label, or refuses it
listing the valid ones. `settle` decides the release a source file is read with: the one given, else
the one its keys tell (the newest release that reads all of them), and says how it was decided.

Older spellings of today's keys (a table's `renamed:`) are read in their place (upgrade) and written
under the older name for a target release that knows only that one (downgrade); Source.aliases keep
the name a file wrote, so reports and line numbers speak of it. Keys a release refuses because none of its
argument classes declares them are refused (refuse_undeclared, strict.py). Nothing here names a framework."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator

from ..core.errors import InputError, UsageError
from ..core.ir import keep
from ..core.report import Entry, Message, Report, Status, said
from ..core.report.kinds import render
from ..io.documents import at_path, flatten
from .schema import NO_DEFAULT, History, load_history
from .repeats import runs_repeats
from .source import Release

CURRENT = "current"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class Versions:
    """The release labels of one format and the other names that stand for them."""

    def __init__(
        self, fmt: str, history: History | None, extra: dict[str, str], title: str, listed: tuple[str, ...] = (CURRENT,)
    ) -> None:
        self.format = fmt
        self.title = title
        self.history = history
        self.labels: tuple[str, ...] = history.labels if history else tuple(reversed(listed))
        aliases = dict(history.aliases) if history else {}
        for name, target in extra.items():
            aliases[name] = aliases.get(target, target)
        if history is None:
            aliases.pop(CURRENT, None)
        self.aliases = aliases
        self.newest = history.newest if history else self.labels[-1]

    def names(self) -> list[str]:
        return [*self.labels, *self.aliases]

    def resolve(self, name: Any, flag: str = "--from-version") -> str:
        """The release label `name` stands for; a UsageError listing the valid names otherwise."""
        found = self._lookup(name) if isinstance(name, str) else None
        if found is not None:
            return found
        first = self.labels[0] if self.labels else ""
        dated = self.history.dates.get(first) if self.history is not None else None
        if isinstance(name, str) and dated and _DATE.match(name.strip()) and name.strip() < dated:
            since = "" if first == dated else f" (of {dated})"
            raise UsageError(
                f"{flag} {name!r}: before {first}{since}, the first {self.title} release neoconv "
                f"knows; give {first} or a later day"
            )
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
        number = name[1:] if name[:1] == "#" else name
        if self.history is not None and number.isdigit() and int(number) in self.history.pr_release:
            # any merged PR: the release in force once it was merged (the newest label at or before it)
            return self.history.pr_release[int(number)]
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
        more = (
            "; or any merged PR (#N) or day (YYYY-MM-DD): the release in force then"
            if self.history and self.history.pr_release
            else ""
        )
        return labels + (f"; also {aliases}" if aliases else "") + more

    def before(self, label: str, other: str) -> bool:
        """`label` is an older release than `other` (both labels)."""
        return self.labels.index(label) < self.labels.index(other)


@lru_cache(maxsize=None)
def versions(fmt: str) -> Versions:
    from .mapping import load_table  # the table names extra labels; loaded once per format

    table = load_table(fmt)
    return Versions(fmt, load_history(fmt), dict(table.releases.aliases), table.title, table.versions)


def resolve(fmt: str, name: Any, flag: str = "--from-version") -> str:
    return versions(fmt).resolve(name, flag)


def layout_of(fmt: str, layouts: tuple[str, ...], label: str | None) -> str | None:
    """The layout a release writes, when the table names layouts as releases (`version_aliases: {flat:
    "#458", nested: current}`: each the last release of its layout): the first whose last release is
    at or after `label`. None: no release asked, or the table does not tie layouts to releases."""
    known = versions(fmt)
    ends = {name: known.aliases[name] for name in layouts if name in known.aliases}
    if label is None or not ends or label not in known.labels:
        return None
    at = known.labels.index(label)
    fitting = [name for name, end in ends.items() if end in known.labels and known.labels.index(end) >= at]
    return min(fitting, key=lambda name: known.labels.index(ends[name])) if fitting else None


def layout_release(fmt: str, layout: str | None) -> str | None:
    """The last release of a layout, when the table names layouts as releases (VeOmni: flat is #458,
    scoped #1090): what `--layout` alone targets. None otherwise."""
    if layout is None:
        return None
    known = versions(fmt)
    found = known.aliases.get(layout)
    return found if found in known.labels else None


# ---- which release a file is ------------------------------------------------------------------------


def history_keys(
    tree: dict[str, Any],
    aliases: dict[str, str],
    history: History,
    spelling: Callable[[str, str | None], tuple[str, ...]] | None = None,
    neutral: tuple[str, ...] = (),
) -> Iterator[str]:
    """The keys of a parsed config that the history knows: each leaf as the history names it (as
    written, unless the reader's `spelling` says otherwise), the keys of dicts inside lists (`a.*.b`),
    and blocks the history lists as keys of their own. Keys under a `neutral` block tell nothing."""
    known = history.keys
    blocks = history.blocks
    name_of = history_name(aliases, history, spelling)
    lists = history.lists

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
            written = name_of(path)
            if prefix and prefix[:-1] in lists and f"{prefix}*.{name}" in known:
                # one block where a list of them may stand: read as itself or as an element (either release set)
                yield f"{written}|{prefix}*.{name}" if written in known else f"{prefix}*.{name}"
            elif written in known:
                yield written
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, dict):
                        for sub in item:
                            star = f"{written}.*.{sub}"
                            if star in known:
                                yield star

    return walk(tree, "")


def history_name(
    aliases: dict[str, str], history: History, spelling: Callable[[str, str | None], tuple[str, ...]] | None
) -> Callable[[str], str]:
    """How the history names a leaf of the view: as written (Source.aliases), unless the reader's spelling
    hook says otherwise (the first of its names the history knows)."""
    if spelling is None:
        return lambda path: aliases.get(path, path)

    def name(path: str) -> str:
        names = spelling(path, aliases.get(path))
        return next((n for n in names if n in history.keys), names[0])

    return name


def detect(
    history: History,
    keys: Iterable[str],
    watched: Iterable[str] = (),
    strict: frozenset[str] = frozenset(),
    named: tuple[tuple[str, str], ...] = (),
) -> Release:
    """The release a file's history keys fit: the newest release reading all of them; when no release
    reads all, the one reading most (newest first). `watched`: keys whose default matters to the
    caller; those the file lacks and whose default differs within the fitting range are `assumed`.
    `named`: (key, value) of the file's names for keys typed as a Literal somewhere: a name only some
    releases of the fit take narrows it to those (VeOmni's fsdp_mode fsdp1, dropped in #756)."""
    used = {key: history.mask(key) for key in keys}
    used = {key: mask for key, mask in used.items() if mask}
    fit = history.every
    for mask in used.values():
        fit &= mask
    fit, by_value = _taking(history, fit, named) if fit and named else (fit, ())
    unread: tuple[str, ...] = ()
    if fit:
        first, last = history.span(fit)  # type: ignore[misc]
        label = last
    else:
        label = max(history.labels, key=lambda lbl: (sum(history.reads(k, lbl) for k in used), history.position[lbl]))
        unread = tuple(sorted({k.split("|")[0] for k in used if not history.mask(k) >> history.position[label] & 1}))
        first = last = label
        fit = 1 << history.position[label]
    pinning = tuple(dict.fromkeys((*by_value, *_pinning(history, used, fit))))[:4]
    assumed = _assumed(history, fit, label, set(watched) - set(used), strict)
    if not fit or unread:
        detail = (
            f"no {history.format} release reads all of this file's keys: read as {label}, the one reading most "
            f"({', '.join(unread)} not read there)"
        )
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


def _taking(history: History, fit: int, named: tuple[tuple[str, str], ...]) -> tuple[int, tuple[str, ...]]:
    """The releases of `fit` that take each of the file's names, and the `key: name`s that narrowed it; a
    name no release's Literal lists (a fork's) leaves the fit as it is: it is read as `unknown`."""
    pinned: list[str] = []
    for key, value in named:
        taking, listed = 0, False
        for label in history.members(fit):
            choices = history.choices_at(key, label)
            if choices is None or value in choices:
                taking |= 1 << history.position[label]
                listed = listed or choices is not None
        if listed and taking != fit:
            fit, pinned = taking, [*pinned, f"{key}: {value}"]
    return fit, tuple(pinned)


def literal_names(tree: dict[str, Any], history: History, name_of: Callable[[str], str]) -> tuple[tuple[str, str], ...]:
    """(history key, value) of the file's text values at keys the history types as a Literal in some release."""
    try:
        leaves = flatten(tree)
    except InputError:  # a malformed tree: the reading after the release is told names the file and line
        return ()
    typed = _literal_keys(history)
    found = []
    for path, value in leaves.items():
        if isinstance(value, str) and (key := name_of(path)) in typed:
            found.append((key, value))
    return tuple(found)


_LITERAL_KEYS: dict[int, tuple[History, frozenset[str]]] = {}


def _literal_keys(history: History) -> frozenset[str]:
    """The history's keys typed as a Literal in some release (once per history: the hot path reads many files)."""
    found = _LITERAL_KEYS.get(id(history))
    if found is None or found[0] is not history:
        keys = frozenset(
            key
            for key, record in history.keys.items()
            if any("Literal[" in str(pair[-1]) for pair in record.get("type", ()))
        )
        found = _LITERAL_KEYS[id(history)] = (history, keys)
    return found[1]


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
    return tuple(sorted({key.split("|")[0] for key in found})[:4])


def _assumed(
    history: History, fit: int, label: str, watched: set[str], strict: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """Defaults of `watched` keys that differ somewhere in the fitting range: the chosen one."""
    if fit & (fit - 1) == 0:  # one release
        return {}
    out: dict[str, Any] = {}
    for key in sorted(watched):
        mine = history.default_at(key, label)
        if mine is not NO_DEFAULT and history.defaults_in(key, fit) - {repr(mine)}:
            out[key] = mine
        elif mine is not NO_DEFAULT and key in strict and fit & ~history.mask(key):
            out[key] = mine  # a release of the range has no such key: its absence meant something else there
    return out


def given(label: str, name: str) -> Release:
    detail = f"as given ({name})" if name != label else "as given"
    return Release(label, "given", detail)


_WATCHED: dict[int, tuple[tuple[str, ...], frozenset[str]]] = {}


def _watched(table: Any) -> tuple[tuple[str, ...], frozenset[str]]:
    """The keys of a table whose default changes between releases (what a guessed release decides),
    and the table's `watch_absent` keys, whose absence means something else in a release that lacks them
    (Model Zoo 1.6 had no use_bfloat16: mixed precision was float16)."""
    found = _WATCHED.get(id(table))
    if found is None:
        strict = frozenset(table.releases.watch_absent)
        keys = tuple(dict.fromkeys([*(r.key for r in table.rules if r.key and r.version_defaults), *sorted(strict)]))
        found = _WATCHED[id(table)] = (keys, strict)
    return found


Spelling = Callable[[str, "str | None"], tuple[str, ...]]  # a reader's history_key (formats/spec.py)


def settle(source: Any, table: Any, name: str | None = None, spelling: Spelling | None = None) -> Release:
    """Decide the release `source` is read as (`name`: the one the user gave, already resolved or
    not) and record it on the source. `spelling`: the names the key history may give a leaf (the
    reader's `history_key`; None: as written)."""
    known = versions(source.format)
    if name:
        label = known.resolve(name)
        release = given(label, name)
    elif known.history is None:
        release = Release(known.newest, "newest", f"neoconv knows one {known.title} release: {known.newest}")
    else:
        keys = tuple(history_keys(source.tree, source.aliases, known.history, spelling, table.releases.neutral))
        named = literal_names(source.tree, known.history, history_name(source.aliases, known.history, spelling))
        release = _detected(known.history, keys, table, named)
        if table.checks and release.first is not None and not release.unread:
            release = _accepting(source, known.history, table, release, keys)
    refused = table.releases.repeats_refused
    if source.repeated and refused is not None and known.history is not None:
        release = runs_repeats(source, release, known.history, refused[0], refused[1], known.title)
    source.version = release.label
    source.release = release
    return release


def _accepting(source: Any, history: History, table: Any, release: Release, keys: tuple[str, ...]) -> Release:
    """Among the releases the keys fit, the newest that accepts the file's values (the table's checks);
    when every one refuses a value, the keys' choice, the refusal named (knowledge/accepting.py)."""
    from .accepting import file_leaves, newest_accepting, refusals

    first = release.first or release.label
    members = list(history.labels[history.position[first] : history.position[release.label] + 1])
    refused = refusals(history, table.checks, file_leaves(source), table.versions, members)
    if release.label not in refused:
        return release
    said = "; ".join(refused[release.label])
    chosen = newest_accepting(members, refused)
    if chosen is None:
        return replace(release, detail=f"{release.detail}; every release its keys fit refuses a value: {said}")
    after = members[members.index(chosen) + 1]
    fit = sum(1 << history.position[label] for label in members[: members.index(chosen) + 1])
    watched, strict = _watched(table)
    assumed = _assumed(history, fit, chosen, set(watched) - set(keys), strict)
    pinned = f"the keys {', '.join(release.keys)} fit" if release.keys else "its keys fit"
    refusing = after if after == release.label else f"{after}..{release.label}"
    detail = (
        f"{pinned} releases {release.first}..{release.label}: read as {chosen}, the newest of them that accepts "
        f"its values ({refusing} refuse{'s' if after == release.label else ''} {said})"
    )
    if assumed:
        detail += "; assumed its defaults for " + ", ".join(f"{k}={v!r}" for k, v in assumed.items())
    return replace(release, label=chosen, how="keys", detail=detail, last=chosen, assumed=assumed)


_DETECTED: dict[tuple[Any, ...], tuple[History, Release]] = {}


def _detected(history: History, keys: tuple[str, ...], table: Any, named: tuple[tuple[str, str], ...] = ()) -> Release:
    """detect(), once per history, table, set of keys and names: a batch's files share their releases' keys."""
    watched, strict = _watched(table)
    slot = (id(history), keys, watched, strict, named)
    found = _DETECTED.get(slot)
    if found is None or found[0] is not history:  # (the history kept: its id is not reused)
        found = keep(_DETECTED, slot, (history, detect(history, keys, watched, strict, named)), 1_000)
    return found[1]


_SEVERAL: dict[int, tuple[Any, tuple[Any, ...]]] = {}


def _several_keys(table: Any) -> tuple[Any, ...]:
    """The table's rules of two keys or more (worked out once per table: retire runs for every file)."""
    found = _SEVERAL.get(id(table))
    if found is None or found[0] is not table:
        found = keep(_SEVERAL, id(table), (table, tuple(r for r in table.rules if len(r.keys) >= 2)), 100)
    return found[1]


def retire(source: Any, table: Any, spelling: Spelling | None = None) -> None:
    """Set aside the leaves the file's release does not read although a rule would (a key a later release
    dropped, read with its old meaning only by the releases that had it): a rule whose other keys that
    release does read. Recorded in Source.set_aside with the reason."""
    history = load_history(source.format)
    release = source.version
    if history is None or release not in history.position:
        return
    at = history.position[release]
    name_of = history_name(source.aliases, history, spelling)
    for rule in _several_keys(table):  # (a rule of fewer keys than the two it takes retires none)
        # only beside a key of the same rule that the file has and the release reads: that one the rule
        # reads with this release's meaning (a file with betas alone is not a 1.x file missing beta1)
        present = [k for k in rule.keys if at_path(source.tree, k) is not None]
        if len(present) < 2 or not any(history.mask(name_of(k)) >> at & 1 for k in present):
            continue
        for key in present:
            name = name_of(key)
            if name not in history.keys or history.mask(name) >> at & 1 or at_path(source.tree, key) is None:
                continue
            if any(key == b or key.startswith(b + ".") for b in table.releases.neutral):
                continue
            source.set_aside[key] = (
                "not_read_by_release",
                {
                    "title": table.title,
                    "release": release,
                    "key": source.aliases.get(key, key),
                    "runs": history.runs(name),
                },
            )


def upgrade(source: Any, table: Any) -> None:
    """Read the table's older spellings (`renamed:`) as the keys that replaced them: the value moves to
    the new path in the source tree and Source.aliases keep the name the file wrote (reports, lines).
    An old key beside its new one stays where it is (the new one is what the framework reads)."""
    for old, new in table.releases.renamed.items():
        value = _pop_path(source.tree, old, peek=True)
        if value is _ABSENT or _pop_path(source.tree, new, peek=True) is not _ABSENT:
            continue
        _pop_path(source.tree, old)
        _put_path(source.tree, new, value)
        for leaf, rest in _leaves(value, ""):
            written = source.aliases.pop(old + rest, old + rest)
            source.aliases[new + rest] = written
            note = source.notes.pop(old + rest, "")
            source.notes[new + rest] = "; ".join(
                x for x in (f"read as {new + rest}, its name in other releases", note) if x
            )
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


def retired(table: Any, release: str) -> Callable[[str], str | None] | None:
    """Why a same-format migration to `release` leaves a leaf out: the key history knows it, `release` does
    not read it, and from the table's `unknown_refused` release on the framework refuses such a key (NeoX's
    v1.0 `gas`: NeoXArgs(**config) takes only its fields). None when the release refuses no key. A key
    no release read (a fork's) is not retired: it is reported unknown and carried."""
    refused = table.releases.unknown_refused
    history = load_history(table.format)
    if refused is None or history is None or release not in history.position:
        return None
    if history.position[release] < history.position[refused[0]]:
        return None

    under = table.releases.refused_under

    def why(leaf: str) -> str | None:
        if under and not any(leaf.startswith(block + ".") for block in under):
            return None  # (a block the key history knows only in part)
        if history.reads_within(leaf, release) is not False:
            return None  # read there, or no release's key
        name = history.record(leaf) or leaf
        note = next((r.note for r in history.renamed_from(name) if r.note), "")
        said = (
            f"{table.title} {release} does not read {name} (read by {history.runs(name)}) and refuses a key it does "
            f"not read ({refused[1]})"
        )
        return f"{said}; {note}" if note else said

    return why


def no_place(
    unplaceable: Callable[[str, str | None, str | None], str | None] | None,
    layout: str | None,
    version: str,
    gone: Callable[[str], str | None] | None,
) -> Callable[[str], str | None] | None:
    """Why a same-format translation has no place for a leaf: the writer's layout (`unplaceable`), else a key
    the target release retired (`gone`, from retired()); None when neither can say."""
    if unplaceable is None and gone is None:
        return None

    def why(leaf: str) -> str | None:
        return (unplaceable(leaf, layout, version) if unplaceable is not None else None) or (
            gone(leaf) if gone else None
        )

    return why


def downgrade(leaves: dict[str, Any], table: Any, release: str) -> dict[str, str]:
    """Write keys the target release reads only under an older name (the table's `renamed:`) under that
    name; returns new leaf -> old leaf for what it renamed."""
    history = load_history(table.format)
    if history is None or not table.releases.renamed or release == history.newest:
        return {}
    moved: dict[str, str] = {}
    for old, new in table.releases.renamed.items():
        # the history's rename says from when the new name is the one to use; else, who reads which
        since = next((r.release for r in history.renamed_from(old) if r.new == new), None)
        if since is not None:
            if not history.position[release] < history.position[since]:
                continue
        elif history.reads(new, release) or not history.reads(old, release):
            continue
        for leaf in [k for k in leaves if k == new or k.startswith(new + ".")]:
            moved[leaf] = old + leaf[len(new) :]
    if moved:
        for new_leaf, old_leaf in moved.items():
            leaves[old_leaf] = leaves.pop(new_leaf)
    return moved


def refuse_undeclared(source: Any, title: str) -> None:
    """Refuse the keys a release whose parser refuses undeclared keys cannot run (strict.py, imported only then)."""
    history = load_history(source.format)
    if history is not None and source.version is not None and history.refuses_unknown(source.version):
        from .strict import check_undeclared

        check_undeclared(source, title, history)


def name_release_defaults(report: Report, source: Any, table: Any) -> None:
    """Defaults that depend on the release (issue #27 item 8): a file whose keys fit several releases is read
    as the newest, and a key it leaves out takes that release's default. Where the fitting releases' defaults
    differ (NeoX's weight_decay 0.01 before 2023-12-26, 0.1 from it), the value is the release's choice, not
    the file's: the report names the dependence and the --from-version that decides it, on the entry that
    already speaks of the key's value, or in an entry of its own."""
    release = source.release if source is not None else None
    if release is None or release.how == "given" or not release.assumed or table is None:
        return
    history = load_history(source.format) if source is not None else None
    if history is None or release.first is None or release.last is None:
        return
    span = list(history.labels[history.position[release.first] : history.position[release.last] + 1])
    for key, value in release.assumed.items():
        rules = [r for r in table.rules if r.key == key]
        fields = rules[0].fields if rules else ()
        runs = _runs(history, key, span)
        if len(runs) < 2:  # (a key the range's other releases lack: its absence, not its default, differs)
            continue
        message: Message = (
            "release_default",
            {
                "title": table.title,
                "key": key,
                "value": value,
                "read_as": release.label,
                "first": release.first,
                "last": release.last,
                "runs": runs,
            },
        )
        _say(report, key, fields, message)


def _runs(history: Any, key: str, span: list[str]) -> list[list[Any]]:
    """[[first release, last release, default], ...] over the fitting releases, one per change."""
    runs: list[list[Any]] = []
    aliased = [r.release for r in history.renamed_from(key) if r.overlap]
    for label in span:
        value = history.default_at(key, label)
        if value is NO_DEFAULT or any(history.position[label] >= history.position[since] for since in aliased):
            # from a rename on, an old spelling still read is the new key's alias: its default is not its own
            # (the 5.x Trainer's gradient_checkpointing: None, activation_checkpointing decides)
            continue
        if runs and runs[-1][2] == value:
            runs[-1][1] = label
        else:
            runs.append([label, label, value])
    return runs


def _say(report: Report, key: str, fields: tuple[str, ...], message: Message) -> None:
    """On the entry that states the key's default (defaulted, or lost), else an entry of its own."""
    for i, entry in enumerate(report.entries):
        if entry.source_key == key or (entry.source_key is None and fields and set(fields) & set(entry.fields)):
            if entry.status in (Status.DEFAULTED, Status.LOSSY, Status.DROPPED):
                report.entries[i] = _with(entry, message)
                return
    report.entries.append(said(None, None, Status.DEFAULTED, (message,), fields))


def _with(entry: Entry, message: Message) -> Entry:
    values = dict(entry.values or {})
    values["also"] = [*values.get("also", ()), {"kind": message[0], "values": message[1]}]
    return entry._replace(detail="; ".join(filter(None, (entry.detail, render(*message)))), values=values)
