"""`neoconv validate`: is a file a valid config of its framework (and release)? Every problem, one
line each: the framework's schema (types, enums, keys of closed blocks; jsonschema is imported
only here), keys no parameter of the framework has (with the nearest one), the catalogue's
relations (heads dividing the width, ...), and with --version the keys that release's code does not
read (schemas/history: only when asked, since a release's code is not all its readers — Cerebras'
optimizers live in cerebras.pytorch, outside the history's sources).

A file that cannot be read as a config at all (no such file, not YAML, duplicate keys, another
format) raises the reader's InputError: that is a bad input (exit 2), not a problem of a config.
"""

from __future__ import annotations

import json

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from ..core.errors import InputError, NeoconvError
from ..io.documents import flatten, key_line
from ..knowledge.schema import load_schema


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


_JSON_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "text", list: "a list", dict: "a mapping",
               type(None): "null"}  # fmt: skip
_TYPE_NAMES = {"integer": "an integer", "number": "a number", "string": "text", "boolean": "true or false",
               "array": "a list", "object": "a mapping", "null": "null"}  # fmt: skip


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

    @property
    def valid(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "format": self.format, "layout": self.layout, "release": self.release,
                "valid": self.valid, "problems": [p.__dict__ for p in self.problems]}  # fmt: skip


def _load(path: str, fmt: str, layout: str | None, model_config: str | None, report: dict[str, Any] | None) -> Any:
    """The file with what was written beside it (TrainingArguments' deepspeed JSON): from the report, else
    what the file names (services/side_files.py)."""
    from .pipeline import load
    from .side_files import output_files

    files = output_files(path, fmt, report)
    given = files.paths if len(files.paths) > 1 else path
    return load(given, fmt, layout=layout, model_config=model_config or files.model_config)


def validate_file(
    path: str, fmt: str | None = None, *, version: str | None = None, layout: str | None = None,
    model_config: str | None = None, report: dict[str, Any] | None = None,
) -> Validation:  # fmt: skip
    """`report`: of the translation that wrote `path`: the side files it lists are read with it."""
    from ..formats.detect import detect_file
    from ..knowledge.schema import history
    from ..knowledge.mapping import load_table
    from ..knowledge.registry import get_format
    from ..knowledge.versions import resolve
    from ..core.report import render

    fmt = fmt or detect_file(path)
    spec = get_format(fmt)
    source = _load(path, fmt, layout, model_config, report)
    table = load_table(fmt)
    keys_of = history(fmt)
    table_version = version if version in table.versions else None  # how the table reads the file (NeoX configs-readme)
    release = version or "current"
    if keys_of is not None:  # a release label or alias of the framework's history; a table's own version is not one
        named = version is not None and (version in keys_of.aliases or version in keys_of.releases or not table_version)
        release = resolve(fmt, version if named and version else "current", "--version")
    problems: dict[str, Problem] = {}  # by key as written: one line per problem, the most telling kept
    text = source.texts.get(path, "")
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
    schema_unknown = _schema_problems(schema, spelled, source, as_written, add)  # the reader's leaf -> as written
    ingested = None
    for _ in range(_RETRIES):
        try:
            ingested = _read(source, fmt, table_version)
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
    read = _with_parents(leaf for leaf, fate in (ingested.fates.items() if ingested else ()) if fate.kind != "unknown")
    unknown.update(written for leaf, written in schema_unknown.items() if leaf not in read)
    parents = _with_parents(unknown, own=False)
    for key in sorted(unknown):
        if keys_of is not None and _read_somewhere(keys_of, key, spec.spell(key), release):
            problems.pop(key, None)  # the release check below speaks of its leaves
        elif key not in problems and key not in parents:
            add(key, f"not a {table.title} parameter")  # a block the schema does not know: its leaves say more
    if keys_of is not None and version:  # the histories say what a release's code reads; only asked for
        for leaf in flatten(spelled):
            key = spec.spell(written_of(leaf))  # as the file writes it: how the history names keys (VeOmni's scoped paths)
            if keys_of.reads_within(key, release) is False:
                add(as_written(leaf), keys_of.why_not(key, release))
    ordered = sorted(problems.values(), key=lambda p: (p.line or 0, p.key or ""))
    return Validation(path, fmt, source.layout, release, ordered)


def _schema_problems(
    schema: str, tree: dict[str, Any], source: Any, as_written: Callable[[str], str], add: Callable[..., None]
) -> dict[str, str]:  # fmt: skip
    """The schema's problems with `tree`, said through `add`; returns the keys it does not know (the
    reader's leaf -> as written), which are problems only if the format's table does not name them either."""
    unknown: dict[str, str] = {}
    for error in sorted(_validator(schema).iter_errors(tree), key=lambda e: list(map(str, e.absolute_path))):
        at = ".".join(map(str, error.absolute_path))
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            listed = error.schema.get("properties", {})
            unknown.update({(leaf := f"{at}.{k}" if at else k): as_written(leaf) for k in error.instance if k not in listed})
        elif at not in source.unresolved and at not in source.unknown_values:  # "auto", a shell variable: run-time values
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
    return bool(keys_of.reads_within(spelled, release, exact=True) or key in keys_of.blocks
                or keys_of.reads_within(spelled, keys_of.labels[-1], exact=True))


_FLOAT_TEXT = re.compile(r"^[-+]?[0-9]+[eE][-+]?[0-9]+$")


def _repeats(source: Any, table: Any, keys_of: Any, release: str) -> list[tuple[str, int | None]]:
    """Keys given twice: refused by the release's loader (Model Zoo 2.5+), else the reader's warnings
    (two values: the file says one thing and runs another)."""
    refused = table.releases.repeats_refused
    if refused and source.repeated and keys_of is not None and keys_of.position.get(release, -1) >= keys_of.position[refused[0]]:
        return [(f"{'.'.join(dup.path)} given twice (lines {dup.first_line} and {dup.line}): {table.title} {refused[0]} "
                 f"and later refuse that ({refused[1]}): keep one", dup.line) for _, dup in source.repeated]  # fmt: skip
    return [(warning, None) for warning in source.warnings]


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


def _read(source: Any, fmt: str, version: str | None) -> Any:
    from .pipeline import read_ir

    if version:
        source.version = version
    return read_ir(source, fmt)


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
