"""A translation's output as the target release sees it. The read-back (verify.py) proves that
neoconv's own reader gets the values back; neoconv's readers also know older and other spellings.
This check is `neoconv validate` of the written document at the target release (its schema, the keys
that release reads, the catalogue's relations, the framework's checks neoconv knows), and what it
means for the report: a value the target release refuses is never `exact`, `converted` or
`defaulted`. Such an entry becomes `lossy`, its first message `refused_by_release` naming the problem;
a problem no entry speaks for gets an entry of its own; a key the report already names as `missing`
is said there (the file needs a value the user gives)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from ..core.errors import NeoconvError
from ..core.report import Entry, Message, Report, Status, said

# statuses that claim the value works in the target
CLAIMS_VALID = frozenset({Status.EXACT, Status.CONVERTED, Status.DEFAULTED})


def check_valid(
    report: Report, document: Mapping[str, Any], fmt: str, version: str, side_files: Mapping[str, str],
    model_config: Mapping[str, Any] | None,
) -> bool:  # fmt: skip
    """Validate the written document (and the model config beside it) at `version` and say every
    problem in the report; returns whether the target release accepts the output."""
    from .validate import validate_document

    name = next((n for n in side_files if n.endswith("config.json")), "config.json")
    try:
        found = validate_document(dict(document), fmt, version=version, name="<output>",
                                  model_config=dict(model_config) if model_config is not None else None)  # fmt: skip
    except NeoconvError as exc:  # the output cannot be read as a config of the target at all
        if not any(e.kind == "unreadable_output" and (e.values or {}).get("message") == exc.message for e in report.entries):
            report.entries.append(said(None, None, Status.LOSSY, (_refused(fmt, version, {"": exc.message}),)))
        return False  # (the read-back already said it, in the same words)
    problems = [(_side_key(p.key, name), p.message) for p in found.problems]
    apply_problems(report, problems, fmt, found.release)
    return not problems


def check_text(report: Report, text: str, fmt: str) -> None:
    """What the written text adds to the document's validity: a key given twice (a same-format
    migration keeps the source's text, repeats and all), which some releases' loaders refuse."""
    from ..knowledge.history import history
    from ..io.documents import parse_yaml
    from ..knowledge.mapping import load_table
    from .validate import refused_repeats

    table = load_table(fmt)
    if not table.releases.repeats_refused:
        return
    duplicates: list[Any] = []
    try:
        parse_yaml(text, "<output>", duplicates=duplicates)
    except NeoconvError:
        return  # the document was checked; its text is the source's, which was read
    release = str(report.target.get("version") or "")
    problems = [(key, message) for key, message, _ in refused_repeats(duplicates, table, history(fmt), release)]
    if problems:
        apply_problems(report, problems, fmt, release)
        report.target["valid"] = False


def _side_key(key: str | None, name: str) -> str | None:
    """A key of the model config beside the output as the report names it (VeOmni's `config.json:...`)."""
    if key is None or ":" not in key:
        return key
    file, _, rest = key.partition(":")
    return f"{name}:{rest}" if file.endswith(".json") else key


def apply_problems(report: Report, problems: Iterable[tuple[str | None, str]], fmt: str, release: str) -> None:
    """Each (key as written, message) into the report: the entries writing that key (or a block around
    it, or a key inside it) stop claiming it works; a problem no entry speaks for gets its own entry."""
    from ..knowledge.registry import get_format

    spell = get_format(fmt).spell  # keys as the format spells them (NeoX: num-layers is num_layers)
    said_on: dict[int, dict[str, str]] = {}  # entry index -> its keys' problems
    for key, message in problems:
        hits = [i for i, entry in enumerate(report.entries) if key is not None and _writes(entry, spell(key), spell)]
        if any(report.entries[i].status is Status.MISSING for i in hits):
            continue  # the report says the file needs a value there, and how to give it
        for i in hits:
            said_on.setdefault(i, {}).setdefault(key or "", message)
        if not hits:
            refusal = _refused(fmt, release, {key or "": message})
            report.entries.append(said(None, key, Status.LOSSY, (refusal,), (), (key,) if key else ()))
    for i, found in said_on.items():
        entry, refusal = report.entries[i], _refused(fmt, release, found)
        if entry.status in CLAIMS_VALID:
            report.entries[i] = entry.amended(Status.LOSSY, refusal, source_key=_leaf(entry))
        else:  # already a loss (or unknown, carried as written): the refusal is said too
            report.entries[i] = entry.amended(entry.status, refusal, first=False)


def _leaf(entry: Entry) -> str | None:
    # a defaulted entry names a key the source lacks: as a refused value it has no source leaf
    return None if entry.status is Status.DEFAULTED else entry.source_key


def _writes(entry: Entry, key: str, spell: Callable[[str], str]) -> bool:
    """The entry is about `key` in the output: the key itself, a block holding it, or a key inside it."""
    return any((t := spell(target)) == key or t.startswith(key + ".") or key.startswith(t + ".") for target in entry.targets)


def _refused(fmt: str, release: str, problems: Mapping[str, str]) -> Message:
    """The message: the target and release, and each key's problem ("" for one of the whole file)."""
    from ..knowledge.history import history
    from ..knowledge.mapping import load_table

    keys_of = history(fmt)
    title = keys_of.title if keys_of is not None else load_table(fmt).title
    return ("refused_by_release", {"title": title, "release": release, "problems": dict(problems)})
