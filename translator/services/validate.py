"""`neoconv validate`: is a file a valid config of its framework (and release)? Every problem, one
line each: the framework's schema (types, enums, keys of closed blocks; jsonschema is imported
only here), keys no parameter of the framework has (with the nearest one), the catalogue's
relations (heads dividing the width, ...), and with --version the keys that release's code does not
read (schemas/history: only when asked, since a release's code is not all its readers — Cerebras'
optimizers live in cerebras.pytorch, outside the history's sources).

A file that cannot be read as a config at all (no such file, not YAML, duplicate keys, another
format) raises the reader's InputError: that is a bad input (exit 2), not a problem of a config.

The translation pipeline's check stage runs the same checks on every output (validate_output, then check_valid at the end:
what they mean for the report); validate_file.py reads a file through the pipeline for the command.
"""

from __future__ import annotations

import json

import re
from dataclasses import dataclass, field
import functools
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping

from ..core.errors import InputError, NeoconvError
from ..core.ir import IR
from ..core.report import Entry, Message, Report, Status, said
from ..io.documents import flatten, key_line
from ..engine import Ingested
from ..knowledge.catalogue import constraints
from ..knowledge.schema import compiled_check, load_schema

Read = Callable[..., Any]  # (Source, format, **options) -> Ingested: the pipeline's read_ir


@lru_cache(maxsize=None)
def _validator(name: str) -> Any:
    import jsonschema  # lazy: only validation needs it

    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema_errors(document: Any, name: str) -> list[str]:
    """Every schema violation as 'path: message', in a stable order."""
    errors = sorted(_validator(name).iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'.'.join(map(str, e.absolute_path)) or '(top)'}: {in_words(e)}" for e in errors]


_JSON_NAMES = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "text",
    list: "a list",
    dict: "a mapping",
    type(None): "null",
}
_TYPE_NAMES = {
    "integer": "an integer",
    "number": "a number",
    "string": "text",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping",
    "null": "null",
}


def in_words(error: Any) -> str:
    """A schema violation in neoconv's own words (the same whatever jsonschema release words it):
    the value as the config spells it, what it is, and what the framework takes."""
    value, rule, limit = error.instance, error.validator, error.validator_value
    shown = _spelled(value)
    if rule == "type":
        wanted = [limit] if isinstance(limit, str) else list(limit)
        return f"{shown} is {_JSON_NAMES.get(type(value), 'a value')}, expected {' or '.join(_TYPE_NAMES.get(t, t) for t in wanted)}"
    if rule == "enum":
        return f"{shown} is not a value it takes ({', '.join(_spelled(v) for v in limit)})"
    if rule == "const":
        return f"{shown} must be {_spelled(limit)}"
    bounds = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "above", "exclusiveMaximum": "below"}
    if rule in bounds:
        return f"{shown} must be {bounds[rule]} {_spelled(limit)}"
    if rule == "required":
        missing = [k for k in limit if isinstance(value, dict) and k not in value]
        return f"needs the key{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
    if rule == "anyOf" and all(isinstance(b, dict) and list(b) == ["required"] for b in limit):
        return f"needs the key {' or '.join(k for b in limit for k in b['required'])}"  # either spelling of one key
    if rule in ("minItems", "maxItems"):
        return f"a list of {len(value)} items; it takes {'at least' if rule == 'minItems' else 'at most'} {limit}"
    if rule == "additionalProperties":
        return "has keys the framework does not take"
    return f"{shown} does not fit the framework's {rule} rule"  # the rare rest, named by the rule


def _spelled(value: Any) -> str:
    """A value as a YAML config spells it (true, null, 'text' quoted, numbers as they are)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (list, dict)):
        text = json.dumps(value)
        return text if len(text) <= 60 else text[:57] + "..."
    return str(value)


def check(document: Any, name: str, file: str | None = None) -> None:
    problems = schema_errors(document, name)
    if problems:
        raise InputError(f"does not match the {name} schema: {problems[0]}", file=file)


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    key: str | None
    message: str

    def render(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


@dataclass
class Validation:
    file: str
    format: str
    layout: str | None
    release: str  # what the keys were checked against ("current" unless --version)
    problems: list[Problem]
    # the file's reading into the canonical IR when it was read whole at the first try (None otherwise):
    # the translation's check stage reads its output back from it rather than a second time (pipeline.read_back)
    reading: Any = field(default=None, repr=False, compare=False)

    @property
    def valid(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "format": self.format,
            "layout": self.layout,
            "release": self.release,
            "valid": self.valid,
            "problems": [p.__dict__ for p in self.problems],
        }


def validate_document(
    document: dict[str, Any],
    fmt: str,
    read: Read,
    *,
    version: str | None = None,
    model_config: dict[str, Any] | None = None,
    name: str = "<output>",
) -> Validation:
    """`neoconv validate` of a document in memory (a translation's output, before it is written): the
    same checks as of a file holding it, the document itself being the file as written. `read`: the
    pipeline's read_ir (passed in: the pipeline's check stage calls this module)."""
    from ..io.documents import plain_copy
    from ..knowledge.registry import get_format

    reader = get_format(fmt).load_reader()
    copy = plain_copy(dict(document))  # the checks re-read without refused keys: never the caller's document
    given = plain_copy(dict(model_config)) if model_config is not None else None
    source = (
        reader.from_tree(copy, name=name, model_config=given)
        if given is not None
        else reader.from_tree(copy, name=name)
    )
    return validate_source(source, name, fmt, version, "", read)


def validate_source(source: Any, path: str, fmt: str, version: str | None, text: str, read: Read) -> Validation:
    """Every problem of one source as loaded (`text`: the file's text, for line numbers; `read`: the
    pipeline's read_ir, which reads it into the canonical IR)."""
    from ..knowledge.schema import history
    from ..knowledge.mapping import load_table
    from ..knowledge.registry import get_format
    from ..core.report import render

    spec = get_format(fmt)
    table = load_table(fmt)
    keys_of = history(fmt)
    table_version = version if version in table.versions else None  # how the table reads the file (NeoX configs-readme)
    release, judged = _asked(fmt, version, table_version, keys_of, spec.one_release)
    problems: dict[str, Problem] = {}  # by key as written: one line per problem, the most telling kept
    schema = spec.schema_for(source.layout)
    raw, written_of = _checked_tree(source, schema != fmt)
    located = {w: leaf for leaf, w in source.aliases.items()}  # as written -> the reader's leaf

    def add(key: str | None, message: str, line: int | None = None, file: str | None = None) -> None:
        """A problem at `key` as the file writes it (a trainer-layout path, a NeoX dashed name), in the file
        that holds it (VeOmni's config.json beside the YAML)."""
        slot = key or f"#{len(problems)}"
        if slot not in problems:
            where = line if line is not None else (_line(source, text, key, located) if key else None)
            held = file or (source.file_of(located.get(key, key)) if key else None) or path
            problems[slot] = Problem(held, where, key, message)

    def as_written(leaf: str) -> str:
        return _written(raw, written_of(leaf))

    for message, line in _repeats(source, table, keys_of, release):
        add(None, message, line)
    unknown: set[str] = set()  # as written
    spelled = {spec.spell(k): v for k, v in raw.items()}  # the schema's spelling (NeoX: num_layers)
    code_takes = functools.partial(_code_takes, keys_of, release)
    schema_unknown = _schema_problems(schema, spelled, source, as_written, add, code_takes)  # leaf -> as written
    ingested, whole = None, None
    for attempt in range(_RETRIES):
        try:
            ingested = _read(source, fmt, table_version, read, judged)
            whole = ingested if attempt == 0 else None
            break
        except InputError as exc:  # a value a reader or a relation refuses: one problem, where the reader says
            add(as_written(exc.key) if exc.key else None, exc.message, exc.line, exc.file)
            if not (exc.key and _without(source.tree, exc.key)):
                break  # read again without it, to find the problems after it
    if ingested is not None:
        for leaf, fate in ((k, f) for k, f in ingested.fates.items() if k not in source.unknown_values):  # run-time
            # the key histories come from the framework's code: a key it reads is a parameter, whatever the schema says
            if fate.kind == "unknown" and not (keys_of is not None and keys_of.reads_within(leaf, release, exact=True)):
                unknown.add(as_written(leaf))
                said = "; ".join(filter(None, (render(kind, values) for kind, values in fate.notes)))
                add(as_written(leaf), said or f"not a {table.title} parameter")
        for keys, reason in _relations(ingested):
            add(as_written(keys[0]) if keys else None, reason)
    # keys the schema lacks but the format's table reads or names (Megatron's CI wrapper and launcher
    # settings, given their reasons): parameters of the file, not problems
    taken = _with_parents(leaf for leaf, fate in (ingested.fates.items() if ingested else ()) if fate.kind != "unknown")
    unknown.update(written for leaf, written in schema_unknown.items() if leaf not in taken)
    parents = _with_parents(unknown, own=False)
    for key in sorted(unknown):
        if keys_of is not None and _read_somewhere(keys_of, key, spec.spell(key), release):
            problems.pop(key, None)  # the release check below speaks of its leaves
        elif key not in problems and key not in parents:
            add(key, f"not a {table.title} parameter")  # a block the schema does not know: its leaves say more
    if keys_of is not None and ingested is not None and not version:
        release = _own_release(source, release, spec.one_release, keys_of, add)
    if keys_of is not None and version:  # the histories say what a release's code reads; only asked for
        for leaf, message in _not_read(source, spec, keys_of, spelled, release):
            add(as_written(leaf), message)
    if table.checks:  # what the framework's own config code refuses that no key's schema says (mappings: checks)
        for key, problem in _broken(table, flatten(spelled), keys_of, fmt, release, as_written):
            add(as_written(key), problem)
    ordered = sorted(problems.values(), key=lambda p: (p.line or 0, p.key or ""))
    return Validation(path, fmt, source.layout, release, ordered, whole)


def _broken(
    table: Any, leaves: dict[str, Any], keys_of: Any, fmt: str, release: str, as_written: Callable[[str], str]
) -> list[tuple[str, str]]:
    """The table's checks the file breaks at `release`: only those of keys it gives (a required key's: when it
    gives its conditions' values), so a file no check speaks of runs none."""
    checks = [
        c
        for c in table.checks
        if (c.key in leaves and (c.beside is None or c.beside in leaves))
        or (c.required and all(leaves.get(k) in allowed for k, allowed in c.when.items()))
    ]
    if not checks:
        return []
    from ..knowledge.checks import broken_checks

    default = lambda key, label: _default_of(keys_of, fmt, key, label)  # noqa: E731
    return broken_checks(checks, leaves, release, table.versions, default, as_written)


def _default_of(keys_of: Any, fmt: str, key: str, release: str) -> Any:
    """A key's value where the file leaves it out: its default at the release (key history), else the schema's."""
    from ..knowledge.schema import NO_DEFAULT

    if keys_of is not None and release in keys_of.position:
        if keys_of.reads_within(key, release) is False:  # no value at all there (VeOmni's nested keys before #538)
            from ..knowledge.checks import MISSING

            return MISSING
        found = keys_of.default_at(key, release)
        if found is not NO_DEFAULT:
            return found
    node: Any = load_schema(fmt)
    for part in key.split("."):
        node = (node.get("properties") or {}).get(part) if isinstance(node, dict) else None
    return node.get("default") if isinstance(node, dict) else None


def _not_read(source: Any, spec: Any, keys_of: Any, spelled: dict[str, Any], release: str) -> list[tuple[str, str]]:
    """(leaf of `spelled`, why) for each leaf the release's code does not read. Each leaf is named as the
    history names it: as the file writes it (Source.aliases: VeOmni's flat and scoped paths), unless the
    reader's history_key says otherwise (Model Zoo's model settings by their legacy names); one the
    release's loader converts (release_keys) is read where it goes."""
    from ..knowledge.versions import history_name

    name_of = history_name(source.aliases, keys_of, spec.load_reader().history_key)
    located = {w: leaf for leaf, w in source.aliases.items()}  # as written -> the reader's leaf
    written = {spec.spell(name_of(located.get(leaf, leaf))): leaf for leaf in flatten(spelled)}
    unread = {key: name for key in written if (name := _unread(keys_of, key, release)) is not None}
    converted = spec.load_reader().release_keys
    if unread and converted is not None:
        for key, there in converted(spelled, release, list(unread)).items():
            if keys_of.reads_within(there, release, exact=True):
                del unread[key]
    return _by_block(
        [(written[key], keys_of.why_not(name, release)) for key, name in unread.items()], spelled, keys_of, release
    )


def _by_block(
    unread: list[tuple[str, str]], spelled: dict[str, Any], keys_of: Any, release: str
) -> list[tuple[str, str]]:
    """Each unread leaf, except that a block none of whose several leaves the release reads is one problem
    (a trainer-layout file checked against a legacy release: one line, not one per key)."""
    leaves = list(flatten(spelled))
    blocks: dict[str, list[tuple[str, str]]] = {}
    for leaf, why in unread:
        blocks.setdefault(leaf.split(".", 1)[0], []).append((leaf, why))
    out: list[tuple[str, str]] = []
    for top, under in blocks.items():
        whole = [leaf for leaf in leaves if leaf == top or leaf.startswith(top + ".")]
        if len(under) > 1 and (len(under) == len(whole) or keys_of.reads_within(top, release) is False):
            first = under[0][1]
            out.append(
                (
                    top,
                    f"{keys_of.title} {release} reads none of the {len(whole)} keys of this block (the first: {first})",
                )
            )
        else:
            out += under
    return out


def _unread(keys_of: Any, key: str, release: str) -> str | None:
    """The name the history knows `key` by (itself, or the block around it), when `release` does not read it."""
    return keys_of.record(key) if keys_of.reads_within(key, release) is False else None


def _asked(
    fmt: str, version: str | None, table_version: str | None, keys_of: Any, one_release: bool
) -> tuple[str, str | None]:
    """The release the keys are checked against ("current" unless --version), and the one a one-release format's
    file is read as when the user names it (its values checked there too; None: the release its keys tell)."""
    from ..knowledge.versions import resolve

    if keys_of is None:
        return version or "current", None
    # a release label or alias of the framework's history; a table's own version is not one
    named = version is not None and (version in keys_of.aliases or version in keys_of.releases or not table_version)
    release = resolve(fmt, version if named and version else "current", "--version")
    return release, release if named and one_release else None


def _own_release(source: Any, release: str, one_release: bool, keys_of: Any, add: Callable[..., None]) -> str:
    """Without --version a file is judged at the release its keys tell (the newest reading them all), not the
    newest release; a format whose parser takes one release's fields has a problem in each key no release reads
    together with the rest (said through `add`). Returns the release judged at."""
    told = getattr(source, "release", None)
    if told is None or told.how != "keys":
        return release
    for key in told.unread if one_release else ():
        add(key, keys_of.why_not(key, told.label))
    return str(told.label)


def _code_takes(keys_of: Any, release: str, key: str, value: Any) -> bool:
    """The release's own type (key history, from its code) takes a value the schema's enum (from reference
    docs that lag the code) lacks: NeoX's non_parametric_layernorm since 2025-02-18, any launcher before."""
    if keys_of is None or key not in keys_of.keys or not isinstance(value, str):
        return False
    names = keys_of.choices_at(key, release)
    if names is not None:
        return value in names
    return keys_of.type_at(key, release) == "str"  # any text there (NeoX's launcher before 2023-03-10)


def _schema_problems(
    schema: str,
    tree: dict[str, Any],
    source: Any,
    as_written: Callable[[str], str],
    add: Callable[..., None],
    code_takes: Callable[[str, Any], bool],
) -> dict[str, str]:
    """The schema's problems with `tree`, said through `add`; returns the keys it does not know (the
    reader's leaf -> as written), which are problems only if the format's table does not name them either."""
    unknown: dict[str, str] = {}
    fast = compiled_check(schema)
    if fast is not None and fast(tree):
        return unknown  # valid (the compiled check passes only what jsonschema passes): jsonschema not needed
    for error in sorted(_validator(schema).iter_errors(tree), key=lambda e: list(map(str, e.absolute_path))):
        at = ".".join(map(str, error.absolute_path))
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            listed = error.schema.get("properties", {})
            unknown.update(
                {(leaf := f"{at}.{k}" if at else k): as_written(leaf) for k in error.instance if k not in listed}
            )
        elif error.validator == "enum" and code_takes(at, error.instance):
            continue
        elif (
            at not in source.unresolved and at not in source.unknown_values
        ):  # "auto", a shell variable: run-time values
            add(as_written(at) if at else None, in_words(error) + _hint(error.instance))
    return unknown


def _with_parents(keys: Any, own: bool = True) -> set[str]:
    """Dotted keys and every block above them (`own=False`: the blocks only): one pass, not a search per key."""
    out: set[str] = set()
    for key in keys:
        parts = key.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts) + (1 if own else 0)))
    return out


def _read_somewhere(keys_of: Any, key: str, spelled: str, release: str) -> bool:
    """A key the schema lacks that is a parameter all the same: the release's code reads it (an old key,
    with --version), a block of keys some release reads (VeOmni's model.accelerator from #1090), or a key
    of the newest release, after the tables' (VeOmni #1125's model.chat_template)."""
    return bool(
        keys_of.reads_within(spelled, release, exact=True)
        or key in keys_of.blocks
        or keys_of.reads_within(spelled, keys_of.labels[-1], exact=True)
    )


_FLOAT_TEXT = re.compile(r"^[-+]?[0-9]+[eE][-+]?[0-9]+$")


def _repeats(source: Any, table: Any, keys_of: Any, release: str) -> list[tuple[str, int | None]]:
    """Keys given twice: refused by the release's loader (Model Zoo 2.5+), else the reader's warnings
    (two values: the file says one thing and runs another)."""
    refused = refused_repeats([dup for _, dup in source.repeated], table, keys_of, release)
    if refused:
        return [(message, line) for _, message, line in refused]
    return [(warning, None) for warning in source.warnings]


def refused_repeats(duplicates: list[Any], table: Any, keys_of: Any, release: str) -> list[tuple[str, str, int]]:
    """(key, problem, line) for each key given twice, when the release's loader refuses that."""
    refused = table.releases.repeats_refused
    if (
        not (refused and duplicates and keys_of is not None)
        or keys_of.position.get(release, -1) < keys_of.position[refused[0]]
    ):
        return []
    return [
        (
            ".".join(dup.path),
            f"{'.'.join(dup.path)} given twice (lines {dup.first_line} and {dup.line}): {table.title} "
            f"{refused[0]} and later refuse that ({refused[1]}): keep one",
            dup.line,
        )
        for dup in duplicates
    ]


def _hint(value: Any) -> str:
    """What to do about a value the framework's YAML loader reads as text."""
    if isinstance(value, str) and _FLOAT_TEXT.match(value):
        mantissa, _, exponent = value.lower().partition("e")
        return f" (YAML 1.1, as the framework loads it, reads {value} as text: write {mantissa}.0e{exponent})"
    return ""


def _written(raw: dict[str, Any], key: str) -> str:
    """A key as the file writes it (NeoX: num-layers for num_layers) when the file has it so."""
    top, dot, rest = key.partition(".")
    if top in raw:
        return key
    dashed = top.replace("_", "-")
    return dashed + dot + rest if dashed in raw else key


def _checked_tree(source: Any, own_schema: bool) -> tuple[dict[str, Any], Callable[[str], str]]:
    """The tree the schema checks, as the format's own reader read it, and how a key of it (or of the
    reader's view) is written in the file: the reader's tree (its leaves as the format's schema names
    them: HF's `hf.*`, Megatron's options, a VeOmni file's nested view), or the file as written when its
    layout has a schema of its own (Cerebras' trainer layout)."""
    tree = source.written if own_schema and source.written is not None else source.tree
    return dict(tree), lambda key: source.aliases.get(key, key)


def _line(source: Any, text: str, key: str, located: dict[str, str]) -> int | None:
    """The line of a key as the file writes it: found by the reader (its own syntax: a Megatron option,
    a key under rope_parameters, a key of VeOmni's config.json), else in the YAML/JSON text."""
    leaf = located.get(key, key)
    if source.file_of(leaf) not in (None, *source.files[:1]):  # a companion file's key: its own text
        text = source.texts.get(source.file_of(leaf) or "", "")
    try:
        line = source.line_of(leaf)
    except Exception:  # noqa: BLE001 - a line number is a courtesy; a reader's locator may not know every key
        line = None
    return line if line is not None or not text else key_line(text, key)


_RETRIES = 20  # re-reads without a refused key: the problems after it are found too


def _without(tree: dict[str, Any], key: str) -> bool:
    """Remove a leaf (dotted, or a top-level key with dots) from a tree; False when it is not there."""
    if key in tree:
        del tree[key]
        return True
    node: Any = tree
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict) and parts[-1] in node:
        del node[parts[-1]]
        return True
    return False


def _read(source: Any, fmt: str, version: str | None, read: Read, release: str | None = None) -> Any:
    """The file read as the release the user named (`release`: its formulas' values checked at that release), else
    as the release its keys tell. `read`: the pipeline's read_ir."""
    if version:
        source.version = version
    return read(source, fmt, source_version=release) if release else read(source, fmt)


def _relations(ingested: Any) -> list[tuple[list[str], str]]:
    """The catalogue's relations the file breaks, with the source keys of their fields (the reader
    stops at a width the heads do not divide; the others — at most, lengths — are listed here)."""
    from ..knowledge.catalogue import broken_relations

    values = {name: value.value for name, value in ingested.ir.fields.items()}
    found = []
    for constraint, reason in broken_relations(values):
        fields = [ingested.ir.fields.get(name) for name in constraint.fields]
        found.append(([k for value in fields if value is not None for k in value.source_keys], reason))
    return found


def validation_error(path: str, exc: NeoconvError) -> str:
    return f"{path}: {exc}" if path not in str(exc) else str(exc)


# ---- a translation's output, validated at its release: what that means for the report -------------
# The read-back (pipeline.verify) proves that neoconv's own reader gets the values back; neoconv's
# readers also know older and other spellings. The check stage validates the written document as
# `neoconv validate --version RELEASE` does, and a value the target release refuses is never `exact`,
# `converted` or `defaulted`: that entry becomes `lossy`, its first message `refused_by_release`; a
# problem no entry speaks for gets an entry of its own; a key the report already names as `missing` is
# said there (the file needs a value the user gives).

# statuses that claim the value works in the target
CLAIMS_VALID = frozenset({Status.EXACT, Status.CONVERTED, Status.DEFAULTED})


def validate_output(
    document: Mapping[str, Any],
    fmt: str,
    version: str,
    side_files: Mapping[str, str],
    model_config: Mapping[str, Any] | None,
    read: Callable[[Any, str], Any],
) -> Validation | NeoconvError:
    """The written document (and the model config beside it) validated at `version`, or why it cannot
    be read as a config of the target at all; the report is not touched (check_valid says it). `read`:
    the pipeline's read_ir."""
    given = dict(model_config) if model_config is not None else None
    try:
        return validate_document(dict(document), fmt, read, version=version, name="<output>", model_config=given)
    except NeoconvError as exc:
        return exc


def check_valid(
    report: Report, found: Validation | NeoconvError, fmt: str, version: str, side_files: Mapping[str, str]
) -> bool:
    """Say every problem validate_output found in the report; returns whether the target release
    accepts the output."""
    name = next((n for n in side_files if n.endswith("config.json")), "config.json")
    if isinstance(found, NeoconvError):  # the output cannot be read as a config of the target at all
        exc = found
        if not any(
            e.kind == "unreadable_output" and (e.values or {}).get("message") == exc.message for e in report.entries
        ):
            report.entries.append(said(None, None, Status.LOSSY, (_refused(fmt, version, {"": exc.message}),)))
        return False  # (the read-back already said it, in the same words)
    problems = [(_side_key(p.key, name), p.message) for p in found.problems]
    apply_problems(report, problems, fmt, found.release)
    return not problems


def check_text(report: Report, text: str, fmt: str) -> None:
    """What the written text adds to the document's validity: a key given twice (a same-format
    migration keeps the source's text, repeats and all), which some releases' loaders refuse."""
    from ..knowledge.schema import history
    from ..io.documents import parse_yaml
    from ..knowledge.mapping import load_table

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
    return any(
        (t := spell(target)) == key or t.startswith(key + ".") or key.startswith(t + ".") for target in entry.targets
    )


def _refused(fmt: str, release: str, problems: Mapping[str, str]) -> Message:
    """The message: the target and release, and each key's problem ("" for one of the whole file)."""
    from ..knowledge.schema import history
    from ..knowledge.mapping import load_table

    keys_of = history(fmt)
    title = keys_of.title if keys_of is not None else load_table(fmt).title
    return ("refused_by_release", {"title": title, "release": release, "problems": dict(problems)})


# ---- the validation's reading as the read-back's (the check stage reads its output once) ----------


def shared_reading(reading: Any, back: Any, table: Any, given: dict[str, Any], schedule: Iterable[str]) -> Any:
    """The read-back's reading taken from the validation's reading of the same document, or None when
    the two could differ (`schedule`: the fields the schedule's summaries come from): the same release,
    table and source (tree, spellings and leaves set aside: the validation's own steps — a release told from the keys, keys it retires, a reader's release hook —
    changed nothing), no value the release's names refuse (the validation reads with the release's
    Literals, the read-back with the schema), and the values given again (--world-size) fields no rule
    of the table reads, writes or is conditioned on, no relation and no schedule concerns. Then the
    reading is the validation's with those values first, the leaves only its ledger made extensions not
    kept (the read-back keeps no ledger). tests/test_shared_reading.py proves the two readings equal."""
    first = reading.source
    if (
        first is None
        or reading.table is not table
        or not _same_reading(table, back.format, first.version, back.version)
    ):
        return None
    if first.tree != back.tree or first.aliases != back.aliases or first.set_aside.keys() != back.set_aside.keys():
        return None
    if any(fate.kind in ("unknown", "unresolved") for fate in reading.fates.values()):
        return None  # (a name only the release's Literal refuses; a run-time value)
    if table.closed_enums:
        return None  # the read-back takes the schema's enums as the names (argparse choices), the release its Literals
    if given and not given.keys().isdisjoint(_untouchable(table, schedule)):
        return None
    ir = IR({**given, **{k: v for k, v in reading.ir.fields.items() if k not in given}})
    strays = {leaf for leaf, fate in reading.fates.items() if fate.kind == "extension" and fate.rule is None}
    ir.extensions = {
        fmt: {leaf: value for leaf, value in leaves.items() if leaf not in strays}
        for fmt, leaves in reading.ir.extensions.items()
    }
    ir.extensions = {fmt: leaves for fmt, leaves in ir.extensions.items() if leaves}
    return Ingested(ir, {}, reading.raw, reading.lossy, back, table, coerced=reading.coerced)


_BLIND: dict[tuple[int, str | None, str | None], tuple[Any, bool]] = {}


def _same_reading(table: Any, fmt: str, one: str | None, other: str | None) -> bool:
    """The table reads a file the same at both releases: no rule's default differs between them and
    no formula reads them otherwise (a cases table's bounds all on one side: Model Zoo's precision
    cases change at 1.7.0, 2.0.2 and 2.1.0) — the validation reads an output as the release its keys
    tell, the read-back as the release it was written for."""
    if one == other:
        return True
    slot = (id(table), one, other)
    found = _BLIND.get(slot)
    if found is None or found[0] is not table:
        found = _BLIND[slot] = (table, all(_reads_alike(rule, fmt, one, other) for rule in table.rules))
    return found[1]


def _reads_alike(rule: Any, fmt: str, one: str | None, other: str | None) -> bool:
    from ..knowledge.schema import older

    formula = rule.formula
    if formula is not None and "version" in formula.read_params():
        bounds = formula.read_bounds
        if bounds is None or any(older(fmt, one, b) != older(fmt, other, b) for b in bounds):
            return False
    return rule.has_default(one) == rule.has_default(other) and repr(rule.default_for(one)) == repr(
        rule.default_for(other)
    )


_UNTOUCHABLE: dict[int, tuple[Any, frozenset[str]]] = {}


def _untouchable(table: Any, schedule: Iterable[str]) -> frozenset[str]:
    """The fields a value given again could change the reading of: any a rule of the table reads, writes,
    multiplies or is conditioned on, any of a catalogue relation, the schedule's (worked out once per table)."""
    found = _UNTOUCHABLE.get(id(table))
    if found is None or found[0] is not table:
        names = set(schedule)
        for rule in table.rules:
            names.update(rule.fields, rule.read_deps, rule.product, rule.when, (n for _, n in rule.read_with))
            names.update(n for _, n in rule.write_args)
        for relation in constraints():
            names.update(relation.fields, (name for name, _ in getattr(relation, "unless", ())))
        found = _UNTOUCHABLE[id(table)] = (table, frozenset(names))
    return found[1]
