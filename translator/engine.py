"""Apply mapping tables: ingest (source leaves -> canonical IR) and emit (IR -> target leaves).

Every source leaf is recorded in a ledger during ingest (owned by a rule, unsupported, a known
extension, or unknown); emit turns the ledger into report entries, so each leaf lands in exactly
one entry. Translation is default-aware: a value the source left at its default is written
explicitly only when the target's default differs (status `defaulted`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .catalogue import catalogue, relations
from .errors import InputError, UsageError
from .io import flatten
from .ir import IR, Origin, Value
from .mapping import Rule, Table
from .report import Entry, Report, Status
from .schema import SchemaIndex, _Guess
from .source import Source, set_aside
from .formula import Approx, Extension, Unexpressible, field_ident, ident, is_close, unwrap


@dataclass(slots=True)
class LeafFate:
    """What ingest decided about one source leaf."""

    kind: str  # rule | unsupported | extension | unknown | user | unresolved
    rule: Rule | None = None
    detail: str = ""
    caveat: str = ""  # kept even when a same-format translation carries the leaf as written


_UNDECIDED = LeafFate("unknown")  # shared placeholder (never changed): no rule has taken the leaf yet


@dataclass
class Ingested:
    ir: IR
    fates: dict[str, LeafFate]  # source leaf -> fate, in document order
    raw: dict[str, Any]  # source leaf -> raw value
    lossy: dict[int, str] = field(default_factory=dict)  # id(rule) -> why reading was approximate
    source: Source | None = None
    table: Table | None = None
    companions: list["Ingested"] = field(default_factory=list)  # --with files of other formats
    coerced: dict[str, Any] = field(default_factory=dict)  # source leaf -> value after type coercion

    def merge(self, other: "Ingested") -> None:
        """Add a companion file's values (e.g. the ds_config.json beside a NeoX YAML).

        A field given explicitly in both with different values is an error naming both files;
        an explicit value wins over a default.
        """
        for name, value in other.ir.fields.items():
            mine = self.ir.fields.get(name)
            if mine is None or (mine.origin is Origin.DEFAULT and value.origin is not Origin.DEFAULT):
                self.ir.set(name, value)
            elif value.origin in (Origin.EXPLICIT, Origin.DERIVED) and mine.origin in (Origin.EXPLICIT, Origin.DERIVED):
                if not is_close(mine.value, value.value):
                    raise InputError(
                        f"{name} is {_short(value.value)} here ({', '.join(value.source_keys)}) but "
                        f"{_short(mine.value)} in {mine.file} ({', '.join(mine.source_keys)}): make them agree",
                        file=value.file,
                    )
        for fmt, leaves in other.ir.extensions.items():
            self.ir.extensions.setdefault(fmt, {}).update(leaves)
        self.companions.append(other)


def _coerce_input(
    source: Source, coerce: Callable[[str, Any], tuple[Any, str]], key: str, value: Any
) -> tuple[Any, str]:
    """Check a raw value against the source format's schema types (light coercion only)."""
    try:
        return coerce(key, value)
    except _Guess as guess:
        return Approx(guess.value, guess.note), ""
    except ValueError as exc:
        raise InputError(
            str(exc), file=source.file_of(key), line=source.line_of(key), key=key, hint="fix the value"
        ) from None


def _check_field(source: Source, name: str, value: Any, keys: tuple[str, ...]) -> tuple[Any, str]:
    try:
        return catalogue()[name].check(value)
    except ValueError as exc:
        raise _field_error(source, name, exc, keys) from None


def _field_error(source: Source, name: str, exc: ValueError, keys: tuple[str, ...]) -> InputError:
    key = keys[0] if keys else name
    return InputError(str(exc), file=source.file_of(key), line=source.line_of(key), key=key, hint="fix the value")


def ingest(
    source: Source,
    table: Table,
    schema: SchemaIndex,
    user: dict[str, Any] | None = None,
    context: dict[str, Value] | None = None,
    ledger: bool = True,
) -> Ingested:
    """`context`: values another file of the same run states and this format cannot (companion files).
    `ledger=False`: the canonical values only (a translation reading its own output back): no fate
    of each leaf, no classification of leaves no rule takes."""
    try:
        leaves = flatten(source.tree)
    except InputError as exc:  # flatten knows the key; the source knows its file and line
        exc.file = exc.file or source.file_of(exc.key or "")
        exc.line = exc.line or (source.line_of(exc.key) if exc.key else None)
        raise
    version = source.version or table.versions[0]
    ir = IR()
    for name, known_value in (context or {}).items():
        ir.set(name, known_value)
    for name, value in (user or {}).items():
        ir.set(name, Value(value, Origin.USER, (f"--set {name}",)))
    fates: dict[str, LeafFate] = dict.fromkeys(leaves, _UNDECIDED)  # in document order
    # run-time placeholders (HF's "auto") are no value: rules see them as absent; same-format keeps them
    held = {leaf: why for leaf, why in source.unresolved.items() if leaf in leaves}
    readable = set_aside(source, {k: v for k, v in leaves.items() if k not in held} if held else leaves, fates, LeafFate)
    owners = table.key_owner() if held else {}
    for leaf, why in held.items():
        owner = owners.get(leaf)
        fields = owner.fields if owner else ()
        hint = f"; give the value with --set {fields[0]}=VALUE" if len(fields) == 1 else (
            f"; give the values with --set (fields {', '.join(fields)})" if fields else "")
        fates[leaf] = LeafFate("unresolved", owner, why + hint)
        ir.extensions.setdefault(source.format, {})[leaf] = leaves[leaf]
    lossy: dict[int, str] = {}
    coerced: dict[str, Any] = {}
    coerce = schema.coerce
    fields_catalog = catalogue()
    only_file = source.files[0] if len(source.files) == 1 else None  # where every value came from

    below: dict[str, list[str]] = {}  # block path -> its leaves, so a rule finds a whole block at once
    for leaf in readable:
        if "." in leaf:
            parts = leaf.split(".")
            for i in range(1, len(parts)):
                below.setdefault(".".join(parts[:i]), []).append(leaf)

    def subtree(key: str) -> tuple[Any, list[str]]:
        """The value at `key`: a leaf, or a whole nested block whose leaves the rule owns."""
        if key in readable:
            return readable[key], [key]
        owned = below.get(key)
        if not owned:
            return None, []
        node: Any = source.tree
        for part in key.split("."):
            node = node[part]
        return node, owned

    for rule in table.read_order:
        if rule.key is None and rule.formula is None:
            continue  # a write-side note: how the target expresses a field structurally
        if rule.is_const:
            if rule.key:
                value, owned = subtree(rule.key)
                for leaf in owned:
                    fates[leaf] = LeafFate("rule", rule)
                if owned and not is_close(value, rule.const):
                    lossy[id(rule)] = f"{rule.key}={value!r} is not expressible: the other frameworks assume {rule.const!r}"
            continue
        blocked = [k for k in rule.keys if k in held] if held else None
        if blocked:  # a value the rule needs is only known at run time: the rule gives nothing
            why = f"read together with {', '.join(blocked)}, whose value is only known at run time"
            for key in rule.keys:
                for leaf in subtree(key)[1]:
                    fates[leaf] = LeafFate("unresolved", rule, why)
            continue
        keys = rule.keys
        if rule.pure and not held and not (
            (keys[0] in readable or keys[0] in below) if len(keys) == 1 else any(k in readable or k in below for k in keys)
        ):
            # none of its keys in the file and nothing else read: the same defaults for every file
            if _default_holds(rule, ir):
                for name, value, approx in _defaults_of(rule, table, version, source):
                    if approx:
                        lossy[id(rule)] = approx
                    if value is not None and not (name in ir.fields and ir.fields[name].origin is Origin.USER):
                        ir.fields[name] = value
            continue
        present: dict[str, Any] = {}
        owned_leaves: list[str] = []
        notes: list[str] = []
        leaf_notes: dict[str, str] = {}
        for key in rule.keys:
            value, owned = subtree(key)
            if owned:
                if len(owned) == 1 and owned[0] == key:
                    value, note = _coerce_input(source, coerce, key, value)
                    if note:
                        notes.append(note)
                        leaf_notes[key] = note
                    value, guessed = unwrap(value)
                    if guessed:
                        lossy[id(rule)] = guessed
                    if note or guessed:
                        coerced[key] = value
                else:
                    _coerce_input(source, coerce, key, value)  # a block where the framework takes one value
                present[key] = value
                owned_leaves.extend(owned)
        if ledger:
            for leaf in owned_leaves:
                fates[leaf] = LeafFate("rule", rule, leaf_notes.get(leaf, ""))
        # A rule gives the same result for the same values of its keys and inputs: a batch of thousands
        # of configs repeats most of them (norm: layernorm, seq_length: 2048, the HF rules' model_type, ...).
        memo = _memo_key(rule, version, present, _inputs(rule, ir, subtree)) if present or not rule.pure else None
        checked = table.value_reads.get(memo) if memo is not None else None
        if checked is None:
            read = _read_rule(rule, present, subtree, ir, version, source, owned_leaves)
            if memo is not None:
                checked = read if isinstance(read, Extension) else _checked(read, fields_catalog, source, owned_leaves, rule)
                _remember(table, memo, checked)
        else:
            read = checked
        if isinstance(read, Extension):  # no canonical form: the leaves stay framework extensions
            for leaf in owned_leaves:
                fates[leaf] = LeafFate("extension", rule, read.detail)  # the rule: which fields it leaves unset
                ir.extensions.setdefault(source.format, {})[leaf] = leaves[leaf]
            continue
        if rule.key and rule.key in present:
            origin = Origin.EXPLICIT
        elif present:
            origin = Origin.DERIVED
        elif (rule.key is None or rule.derived) and any(
            name in ir.fields and ir.fields[name].origin is not Origin.DEFAULT for name in rule.with_fields.values()
        ):
            origin = Origin.DERIVED  # computed from values the file (or the user) gave
        else:
            origin = Origin.DEFAULT
        if origin is Origin.DEFAULT and not _default_holds(rule, ir):
            continue
        if checked is None:  # checked only where the value is used (a default may not apply)
            checked = _checked(read, fields_catalog, source, owned_leaves, rule)
        assert not isinstance(checked, Extension)  # an Extension was handled above
        file = only_file or source.file_of(rule.key or "")
        for name, value, approx, note in checked:
            if approx:
                lossy[id(rule)] = approx
            if value is None:
                continue
            if note:
                notes.append(note)
            if name in ir.fields and ir.fields[name].origin is Origin.USER:
                for leaf in owned_leaves:
                    fates[leaf].detail = f"overridden by --set {name}"
                continue
            ir.fields[name] = Value(value, origin, tuple(owned_leaves), file, "; ".join(notes))

    _check_relations(source, ir)
    if not ledger:
        return Ingested(ir, {}, leaves, lossy, source, table, coerced=coerced)
    searches = 0  # stray leaves not classified before (each may cost a "did you mean" search)
    for leaf, fate in fates.items():
        if fate is not _UNDECIDED:
            continue
        type_note = ""
        try:
            _coerce_input(source, coerce, leaf, leaves[leaf])  # the framework refuses a wrong type even in a key we drop
        except InputError as exc:
            if not table.lenient_types:
                raise
            type_note = f"does not match the documented type ({exc.message}); not used by the translation"
        searches += (id(schema), leaf) not in table.leaf_kinds
        kind, detail = _classify(leaf, schema, table, suggest=searches <= _SUGGESTIONS_PER_FILE)
        fates[leaf] = LeafFate(kind, detail=detail)
        if kind == "extension":
            ir.extensions.setdefault(source.format, {})[leaf] = leaves[leaf]
        if type_note:
            fates[leaf].detail = "; ".join(x for x in (type_note, fates[leaf].detail) if x)
            fates[leaf].caveat = type_note
    for leaf, note in source.notes.items():
        if leaf in fates and note:
            fates[leaf].detail = "; ".join(x for x in (note, fates[leaf].detail) if x)
    return Ingested(ir, fates, leaves, lossy, source, table, coerced=coerced)


_MEMO_TYPES = frozenset({str, int, bool, type(None)})


def _inputs(rule: Rule, ir: IR, subtree: Callable[[str], tuple[Any, list[str]]]) -> dict[str, Any]:
    """What a rule's reading takes besides its own keys: its `with` fields and the keys it peeks at."""
    if rule.pure:
        return {}
    found = {name: ir.get(name) for _, name in rule.read_with}
    for key in rule.peek:
        found[key] = subtree(key)[0]
    return found


def _memo_key(rule: Rule, version: str, present: dict[str, Any], inputs: dict[str, Any] | None = None) -> tuple[Any, ...] | None:
    """A key for a rule's reading of these values, or None when they are not small scalars."""
    parts: list[Any] = [id(rule), version]
    for key, value in (present.items() if not inputs else (*present.items(), ("|", None), *inputs.items())):
        kind = type(value)
        if kind is float:
            value = value.hex()  # keeps -0.0 apart from 0.0, and a NaN equal to itself
        elif kind not in _MEMO_TYPES or (kind is str and len(value) > 200):
            return None
        parts += (key, kind, value)  # the type too: 1, 1.0 and true are different settings
    return tuple(parts)


_IMMUTABLE = _MEMO_TYPES | {float}


def _remember(table: Table, memo: tuple[Any, ...], checked: Any) -> None:
    """Keep a reading for the next file with the same values; only immutable results are shared."""
    if isinstance(checked, Extension) or all(type(value) in _IMMUTABLE for _, value, _, _ in checked):
        if len(table.value_reads) > 20_000:  # bounded, whatever a tree holds
            table.value_reads.clear()
        table.value_reads[memo] = checked


def _checked(
    read: dict[str, Any], fields_catalog: dict[str, Any], source: Source, owned_leaves: list[str], rule: Rule
) -> list[tuple[str, Any, str | None, str]]:
    """(field, value checked against the catalogue, why approximate, note) for what a rule read."""
    checked = []
    for name, result in read.items():
        value, approx = unwrap(result)
        note = ""
        if value is not None:
            try:
                value, note = fields_catalog[name].check(value)
            except ValueError as exc:
                if not owned_leaves and rule.read_with:  # none of the file's keys: say what it came from
                    exc = ValueError(f"{exc} (derived from {', '.join(name for _, name in rule.read_with)})")
                raise _field_error(source, name, exc, tuple(owned_leaves) or rule.keys) from None
        checked.append((name, value, approx, note))
    return checked


def _default_holds(rule: Rule, ir: IR) -> bool:
    """A documented default only holds where its rule applies (GPT-J-only keys, ...)."""
    if not rule.when:
        return True
    outer = {n: ir.get(n) for n in rule.when if n not in rule.fields}
    return not outer or all(outer[n] in rule.when[n] for n in outer)


def _defaults_of(rule: Rule, table: Table, version: str, source: Source) -> list[tuple[str, Value | None, str | None]]:
    """What a rule reads when the file has none of its keys, worked out once per table and version
    (a batch reads thousands of files): field -> default Value (or None) and why it is approximate."""
    cached = table.default_reads.get((id(rule), version))
    if cached is None:
        read = _read_rule(rule, {}, lambda key: (None, []), IR(), version, source, [])
        cached, notes = [], []
        for name, result in ({} if isinstance(read, Extension) else read).items():
            value, approx = unwrap(result)
            if value is not None:
                value, note = _check_field(source, name, value, rule.keys)
                notes.extend([note] if note else [])
            cached.append((name, None if value is None else Value(value, Origin.DEFAULT, (), None, "; ".join(notes)), approx))
        table.default_reads[(id(rule), version)] = cached
    return cached


def _read_rule(
    rule: Rule,
    present: dict[str, Any],
    subtree: Callable[[str], tuple[Any, list[str]]],
    ir: IR,
    version: str,
    source: Source,
    owned_leaves: list[str],
) -> dict[str, Any] | Extension:
    """Canonical field -> value (maybe Approx) one rule reads from its keys' values (or defaults)."""
    if rule.formula is not None:
        kwargs = {arg: present[k] if k in present else rule.key_default(k, version) for arg, k in rule.read_args}
        for key in rule.peek:
            kwargs[ident(key)] = subtree(key)[0]
        for arg, name in rule.read_with:
            kwargs[arg] = ir.get(name)
        if "version" in rule.formula.read_params():
            kwargs["version"] = version
        try:
            result = rule.formula.read(**kwargs)
        except (TypeError, ValueError, ArithmeticError) as exc:  # overflow on a huge value is bad input too
            key = _culprit(owned_leaves, present, exc) if owned_leaves else rule.label
            raise InputError(
                f"cannot compute {', '.join(rule.fields)}: {exc}",
                file=source.file_of(key), line=source.line_of(key), key=key,
            ) from None  # fmt: skip
        if isinstance(result, Extension):
            return result
        if len(rule.fields) > 1:
            by_ident = {field_ident(f): f for f in rule.fields}
            return {by_ident[k]: v for k, v in (result or {}).items()}
        return {rule.fields[0]: result}
    assert rule.simple is not None and rule.key
    raw = present[rule.key] if rule.key in present else rule.default_for(version)  # None when it has none
    try:
        return {rule.fields[0]: rule.simple.read(raw)}
    except ValueError as exc:
        raise InputError(
            str(exc), file=source.file_of(rule.key), line=source.line_of(rule.key), key=rule.key, hint="fix the value"
        ) from None


def _culprit(owned_leaves: list[str], present: dict[str, Any], exc: Exception) -> str:
    """The key to blame for a formula that failed: for an overflow, the largest number read (a
    400-digit train_iters, not the warmup read beside it), else the first key."""
    if isinstance(exc, ArithmeticError):
        numbers = [(abs(v), k) for k, v in present.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if numbers:
            return max(numbers)[1]
    return owned_leaves[0]


def _check_relations(source: Source, ir: IR) -> None:
    """A value breaking a relation every framework asserts (hidden size / heads) names its key."""
    for rel in relations():
        divisor, dividend = ir.get(rel.divisor), ir.get(rel.dividend)
        if not (isinstance(divisor, int) and isinstance(dividend, int)) or divisor <= 0 or dividend % divisor == 0:
            continue
        if not rel.holds_for({name: ir.get(name) for name, _ in rel.unless}):
            continue
        value, other = ir.fields[rel.dividend], ir.fields[rel.divisor]
        key = value.source_keys[0] if value.source_keys else rel.dividend
        other_key = other.source_keys[0] if other.source_keys else rel.divisor
        from_file = value.origin is not Origin.USER
        raise InputError(
            f"{dividend} is not divisible by {other_key}={divisor} ({rel.why})",
            file=(value.file or source.file_of(key)) if from_file else None,
            line=source.line_of(key) if from_file else None, key=key, hint="fix one of them",
        )  # fmt: skip


_SUGGESTIONS_PER_FILE = 100  # "did you mean" searches (~1 ms each) one file may cost; a file with
# thousands of stray keys (generated, or not a config at all) is then reported without them


def _classify(leaf: str, schema: SchemaIndex, table: Table, suggest: bool = True) -> tuple[str, str]:
    """(kind, detail) of a leaf no rule owns: unsupported, a known extension, or unknown. Cached:
    a batch sees the same stray keys again and again. suggest=False: no "did you mean" search for
    an unknown leaf not seen before (and nothing cached, so another file still gets one)."""
    key = (id(schema), leaf)
    found = table.leaf_kinds.get(key)
    if found is None:
        reason = _unsupported_reason(table, leaf)
        if reason is not None:
            found = ("unsupported", reason)
        elif schema.known(leaf):
            found = ("extension", schema.note(leaf) or table.extension_reasons.get(_group_of(schema, leaf), ""))
        elif not suggest:
            return ("unknown", f"not a {table.title} parameter (no suggestion: the file has too many unknown keys)")
        else:
            found = ("unknown", _closest(leaf, schema, table))
        if len(table.leaf_kinds) > 10_000:  # bounded, whatever a tree holds
            table.leaf_kinds.clear()
        table.leaf_kinds[key] = found
    return found


def _group_of(schema: SchemaIndex, leaf: str) -> str:
    """The x-group of the deepest schema node on a leaf's path that has one (VeOmni groups by dataclass)."""
    parts = leaf.split(".")
    for i in range(len(parts), 0, -1):
        group = (schema.node(".".join(parts[:i])) or {}).get("x-group")
        if group:
            return str(group)
    return ""


def _unsupported_reason(table: Table, leaf: str) -> str | None:
    parts = leaf.split(".")
    for i in range(len(parts), 0, -1):
        reason = table.unsupported.get(".".join(parts[:i]))
        if reason is not None:
            return reason
    return None


_CANDIDATES: dict[tuple[int, int], list[str]] = {}


def _closest(leaf: str, schema: SchemaIndex, table: Table) -> str:
    slot = (id(schema), id(table))
    if slot not in _CANDIDATES:
        _CANDIDATES[slot] = sorted(set(schema.all_keys()) | {k for r in table.rules for k in r.keys})
    # a ratio >= 0.75 needs the shorter name to be >= 0.6 of the longer: skip hopeless candidates
    size = len(leaf)
    near = [c for c in _CANDIDATES[slot] if 0.6 * max(size, len(c)) <= min(size, len(c))]
    import difflib  # only when a file has a key nobody knows

    close = difflib.get_close_matches(leaf, near, n=1, cutoff=0.75)
    name = table.title
    if close:
        return f"not a {name} parameter; did you mean {close[0]}?"
    return f"not a {name} parameter"


# ------------------------------------------------------------------------------------------


class _Carried:
    """What emit did with one canonical field: the target keys and values written, and why not."""

    __slots__ = ("target_keys", "written", "lossy", "note", "skipped", "unwritable")

    def __init__(self) -> None:  # by hand: a dataclass's list factories cost more, once per field per file
        self.target_keys: list[str] = []
        self.written: list[Any] = []
        self.lossy: list[str] = []
        self.note = ""
        self.skipped = ""  # why a rule matched but did not apply
        self.unwritable = False  # skipped because the target cannot take the value (not a `when`)


def emit(
    ingested: Ingested,
    table: Table,
    dst_format: str,
    *,
    version: str | None = None,
    unplaceable: Callable[[str], str | None] | None = None,
) -> tuple[dict[str, Any], Report]:
    """Write the IR with the target table; build the report from the source ledger.

    Same format (a layout migration, a merge, a --set edit): every source leaf is carried as
    written (after type coercion) and only rules whose values came from elsewhere (--set, a
    --with companion) are written from the IR, so nothing is re-derived or normalised away.
    `unplaceable(leaf)` says why the target layout has no place for a leaf (None: it has one).
    """
    ir = ingested.ir
    version = version or table.versions[0]
    src_format = ingested.source.format if ingested.source else "?"
    src_title = ingested.table.title if ingested.table else src_format
    values = ir.plain()
    fields = ir.fields
    out: dict[str, Any] = {}
    carried: dict[str, _Carried] = {}
    report = Report()
    extra_entries: list[tuple[str | None, str | None, Status, str, tuple[str, ...]]] = []
    same = dst_format == src_format and ingested.source is not None
    unsupplied: dict[str, str] = dict(ingested.source.meta.get("unsupplied") or {}) if ingested.source else {}
    fresh = _fresh_rules(ingested, table) if same else set()
    passed: set[str] = set()
    applied: list[tuple[Rule, list[str]]] = []  # rules that wrote (or noted) their fields, with those fields
    homeless: dict[str, str] = {}  # leaf -> why the target layout has no place for it
    if same:
        for leaf, fate in ingested.fates.items():
            if fate.kind == "rule" and fate.rule is not None and id(fate.rule) in fresh:
                continue  # rewritten from the IR below
            why = unplaceable(leaf) if unplaceable is not None else None
            if why:
                homeless[leaf] = why
                continue
            out[leaf] = ingested.coerced.get(leaf, ingested.raw.get(leaf))
            passed.add(leaf)

    for rule in table.rules:
        if rule.versions and version not in rule.versions:
            continue
        if same and id(rule) not in fresh:
            continue
        if rule.is_const:
            if rule.key and rule.applies(values):
                out[rule.key] = rule.const
            continue
        present = [f for f in rule.fields if (known := fields.get(f)) is not None and known.value is not None]
        if not present:
            # the source says where these live when they are not in it (VeOmni: the HF config.json)
            elsewhere = next((unsupplied[f] for f in rule.fields if f in unsupplied), None) if rule.key else None
            if (rule.required or elsewhere) and rule.applies(values) and not any(ir.has(f) for r in table.rules_for_field(rule.fields[0]) for f in r.fields if r is not rule):
                hint = rule.hint or f"give it with --set {rule.fields[0]}=VALUE"
                if elsewhere:  # the target's own hint speaks of other sources
                    hint = f"{elsewhere}, or --set {rule.fields[0]}=VALUE"
                extra_entries.append((None, rule.key, Status.MISSING, hint, rule.fields))
            continue
        if rule.when and not rule.applies(values):
            for name in present:
                slot = carried.setdefault(name, _Carried())
                if not slot.target_keys:
                    cond = ", ".join(f"{k}={'/'.join(map(str, v))}" for k, v in rule.when.items())
                    slot.skipped = slot.skipped or f"{rule.label} only applies when {cond}"
            continue
        origin = ir.fields[present[0]].origin
        try:
            written = _apply_simple(rule, fields[present[0]].value) if rule.simple is not None else _apply_write(rule, ir, version)
        except Unexpressible as exc:
            for name in present:
                slot = carried.setdefault(name, _Carried())
                slot.skipped, slot.unwritable = str(exc), True
            _default_not_kept(extra_entries, ingested, table, rule, present, str(exc))
            continue
        if written is None:
            continue
        applied.append((rule, present))
        lost = written.pop(_LOSS, None)
        loss = lost[1] if lost else None
        if loss is not None and not written:
            _default_not_kept(extra_entries, ingested, table, rule, present, loss)
        for name in present:
            found = carried.get(name)
            slot = found if found is not None else carried.setdefault(name, _Carried())
            slot.skipped = ""
            why = loss.detail_for(name) if loss is not None else ""
            if why:
                slot.lossy.append(why)
            if rule.lossy:
                slot.lossy.append(rule.lossy)
            if rule.key is None or (rule.note and not written):
                slot.note = rule.note
        at_default = origin is Origin.DEFAULT and bool(written) and _at_default(rule, written, version)
        if at_default and not rule.always:
            for name in present:
                carried[name].target_keys.extend(written)
            continue
        for key, (value, approx) in written.items():
            out[key] = value
            for name in present:
                carried[name].target_keys.append(key)
                carried[name].written.append(value)
                why = approx.detail_for(name) if approx is not None else ""
                if why:
                    carried[name].lossy.append(why)
        if origin is Origin.DEFAULT and written and not at_default:
            src_rules = ingested.table.rules_for_field(present[0]) if ingested.table else []
            src_key = src_rules[0].key if src_rules and src_rules[0].key else None
            shown = ", ".join(f"{k}={_short(v[0])}" for k, v in written.items())
            documented = {k: d for k in written if (d := _key_default(rule, k, version)) is not _UNDOCUMENTED}
            tdef = "; ".join(f"{k}={_short(d)}" for k, d in documented.items())
            if rule.key is not None and list(documented) == [rule.key]:
                tdef = f"; {table.title} default is {_short(documented[rule.key])}"
            elif tdef:
                tdef = f"; {table.title} default {tdef}"
            caveat = ingested.lossy.get(id(src_rules[0])) if src_rules else None
            extra_entries.append(
                (src_key, ", ".join(written), Status.DEFAULTED,
                 f"{src_title} default {present[0]}={_short(ir.get(present[0]))} (not in the file){tdef}: wrote {shown}"
                 + (f"; {caveat}" if caveat else ""), tuple(present))
            )  # fmt: skip

    _unanchored(applied, table, ir, carried, extra_entries)

    # Same format: framework-only extensions go back where they came from.
    if dst_format == src_format:
        for leaf, value in ir.extensions.get(src_format, {}).items():
            if leaf not in homeless and (unplaceable is None or not unplaceable(leaf)):
                out.setdefault(leaf, value)

    for part in (ingested, *ingested.companions):
        prefix = "" if part is ingested else f"{part.source.files[0] if part.source else '?'}:"
        part_format = part.source.format if part.source else src_format
        for leaf, fate in part.fates.items():
            if part is ingested and leaf in passed:
                entry = _passed_entry(leaf, part, fate)
            elif part is ingested and leaf in homeless:
                entry = Entry(leaf, None, Status.DROPPED, _join(homeless[leaf], fate.detail), _fields_of(fate))
            elif fate.kind == "unsupported":  # the commonest leaf no rule takes: said without a call
                entry = Entry(leaf, None, Status.DROPPED, fate.detail)
            else:
                entry = _entry_for(leaf, part.raw.get(leaf), fate, part, carried, out, table, dst_format, part_format)
            shown = part.source.aliases.get(leaf, leaf) if part.source else leaf
            if prefix or shown != leaf:
                entry = entry._replace(source_key=prefix + shown)
            report.entries.append(entry)
    _unreported_losses(report, extra_entries, carried, ir, src_title)
    for name, value in ir.fields.items():
        if value.origin is Origin.USER:
            given = carried.get(name)
            if given and given.target_keys:
                report.add(f"--set {name}", ", ".join(dict.fromkeys(given.target_keys)), Status.EXACT,
                           f"= {_short(value.value)}", (name,))  # fmt: skip
                continue
            readers = ingested.table.rules_reading(name) if ingested.table else []
            users = sorted({f for r in readers for f in r.fields if ir.has(f)})
            if users:
                report.add(f"--set {name}", None, Status.CONVERTED, f"used to derive {', '.join(users)}", (name,))
            else:
                report.add(f"--set {name}", None, Status.DROPPED,
                           table.absent.get(name, f"{table.title} has no counterpart for {name}"), (name,))  # fmt: skip
    for src, tgt, status, detail, concerns in extra_entries:
        report.add(src, tgt, status, detail, concerns)
    return out, report


def _unanchored(
    applied: list[tuple[Rule, list[str]]],
    table: Table,
    ir: IR,
    carried: dict[str, _Carried],
    extra: list[tuple[str | None, str | None, Status, str, tuple[str, ...]]],
) -> None:
    """A value the target reads relative to another field that the output does not hold (VeOmni's
    warmup as a ratio of a step count it cannot state, its accumulation derived from a missing
    global batch) does not read back: lossy, with why. Values given on the command line are given
    again when reading, so they hold."""
    missing = {name: detail for _, _, status, detail, names in extra if status is Status.MISSING for name in names}
    unheld: dict[str, str] = {}
    order = table.read_rank
    for rule, present in sorted(applied, key=lambda item: order.get(id(item[0]), 0)):
        for _, name in rule.read_with:
            if name in present or (ir.has(name) and ir.fields[name].origin is Origin.USER):
                continue
            if not ir.has(name) and (rule.key is not None or name not in missing):
                continue  # optional and unknown; only a value derived from one the target needs is lost
            slot = carried.get(name)
            if slot is not None and not slot.unwritable and name not in unheld and (
                slot.target_keys or slot.note or slot.skipped
            ):
                continue  # written, expressed by a note, or not meant for this config (a `when`)
            why = unheld.get(name) or missing.get(name) or (slot.skipped if slot else "") or table.absent.get(name, "")
            reason = f"{table.title} reads it relative to {name}, which this output does not hold" + (f" ({why})" if why else "")
            for own in present:
                carried[own].lossy.append(reason)
                unheld.setdefault(own, reason)


def _unreported_losses(
    report: Report,
    extra: list[tuple[str | None, str | None, Status, str, tuple[str, ...]]],
    carried: dict[str, _Carried],
    ir: IR,
    src_title: str,
) -> None:
    """A loss of a value no source leaf carries (a framework default, a value derived from others)
    is said too: in the `defaulted` entry that wrote it (now lossy), else in an entry of its own
    (source_key null) naming the fields, their values and what the target does."""
    covered = {name for e in report.entries if e.status is Status.LOSSY for name in e.fields}
    covered.update(name for _, _, status, _, names in extra if status is Status.LOSSY for name in names)
    grouped: dict[tuple[str, str], list[str]] = {}  # (target keys, reasons) -> fields
    upgraded: set[int] = set()  # defaulted entries that now say a loss
    for name, slot in carried.items():
        if not slot.lossy or name in covered or not ir.has(name):
            continue
        why = "; ".join(dict.fromkeys(slot.lossy))
        at = next((i for i, item in enumerate(extra) if name in item[4] and (
            item[2] is Status.DEFAULTED or i in upgraded)), None)  # fmt: skip
        if at is not None:
            _, tgt, _, detail, names = extra[at]
            # no source_key: a defaulted entry names a key the file lacks, a lossy one a leaf it has
            extra[at] = (None, tgt, Status.LOSSY, detail if why in detail else f"{detail}; {why}", names)
            upgraded.add(at)
            continue
        grouped.setdefault((", ".join(dict.fromkeys(slot.target_keys)), why), []).append(name)
    for (targets, why), group in grouped.items():
        values = []
        for name in group:
            value = ir.fields[name]
            how = "not in the file" if value.origin is Origin.DEFAULT else (
                f"from {', '.join(value.source_keys)}" if value.source_keys else value.origin.value)
            values.append(f"{name}={_short(value.value)} ({how})")
        report.add(None, targets or None, Status.LOSSY, f"{src_title} {', '.join(values)}: {why}", tuple(group))


def _default_not_kept(
    extra: list[tuple[str | None, str | None, Status, str, tuple[str, ...]]],
    ingested: Ingested,
    table: Table,
    rule: Rule,
    present: list[str],
    why: str | Approx,
) -> None:
    """A value no source leaf carries (the source's default, or one derived from other fields) that
    the target cannot take has no leaf entry to say so: it gets an entry of its own (NeoX's default
    betas [0.9, 0.999] against VeOmni's hard-coded ones)."""
    title = ingested.table.title if ingested.table else "the source"
    for name in present:
        value = ingested.ir.fields[name]
        if value.origin is Origin.USER or (value.origin is not Origin.DEFAULT and value.source_keys):
            continue  # a --set entry, or the entries of the leaves it came from, say it
        reason = why.detail_for(name) if isinstance(why, Approx) else why
        if not reason:
            continue
        if value.origin is Origin.DEFAULT:
            src_rules = ingested.table.rules_for_field(name) if ingested.table else []
            src_key = f" ({src_rules[0].key})" if src_rules and src_rules[0].key else ""
            text = f"{title} default {name}={_short(value.value)}{src_key}, not in the file, is not kept: {reason}"
        else:
            text = f"{title} {name}={_short(value.value)} (derived from other settings) is not kept: {reason}"
        # no source_key: the file has no such leaf (the one-entry-per-leaf invariant counts leaves)
        extra.append((None, rule.key, Status.LOSSY, text, (name,)))


def _fresh_rules(ingested: Ingested, table: Table) -> set[int]:
    """Rules (by id) a same-format translation must write from the IR: a value of theirs came
    from --set or from a --with companion file, not from the leaves of the source itself."""
    mine = set(ingested.raw)
    fresh: set[int] = set()
    for rule in table.rules:
        for name in rule.fields:
            value = ingested.ir.fields.get(name)
            if value is None or value.value is None:
                continue
            if value.origin is Origin.USER or not set(value.source_keys) <= mine:
                fresh.add(id(rule))
    return fresh


def _passed_entry(leaf: str, ingested: Ingested, fate: LeafFate) -> Entry:
    """A leaf a same-format translation carried as written."""
    if fate.kind == "unknown":
        return Entry(leaf, leaf, Status.UNKNOWN, _join(fate.detail, "carried as written"))
    if leaf in ingested.coerced:
        return Entry(leaf, leaf, Status.CONVERTED, fate.detail if fate.kind == "rule" else "", _fields_of(fate))
    return Entry(leaf, leaf, Status.EXACT, fate.detail if fate.kind == "rule" else fate.caveat, _fields_of(fate))


def _fields_of(fate: LeafFate) -> tuple[str, ...]:
    return fate.rule.fields if fate.rule is not None else ()


_UNDOCUMENTED = object()


def _key_default(rule: Rule, key: str, version: str) -> Any:
    """The documented default of one of a rule's keys, or _UNDOCUMENTED."""
    if key == rule.key:
        return rule.default_for(version) if rule.has_default(version) else _UNDOCUMENTED
    return rule.defaults.get(key, _UNDOCUMENTED)


def _at_default(rule: Rule, written: dict[str, Any], version: str) -> bool:
    """Every key a rule wrote holds its documented default (a key without one never does): NeoX's
    rms_norm_epsilon is checked against its own default 1e-8, not layernorm_epsilon's 1e-5."""
    for key, (value, _) in written.items():
        default = _key_default(rule, key, version)
        if default is _UNDOCUMENTED or not is_close(value, default):
            return False
    return True


_LOSS = ""  # _apply_write key for "nothing written, and why" (a formula returning Approx)


def _apply_write(rule: Rule, ir: IR, version: str = "") -> dict[str, tuple[Any, Approx | None]] | None:
    """Framework key -> (value, why it is approximate) for one rule; None when nothing is written.

    A formula may return Approx({...}, reason) to say the target cannot hold all of it, or map a
    key to Approx(None, reason) to say why that key is not written: both reach the report as lossy.
    """
    if rule.key is None and rule.formula is None:
        return {}
    if rule.formula is not None:
        produced = rule.formula.write(**rule.write_kwargs(ir, version))
        losses: list[Approx] = [produced] if isinstance(produced, Approx) and produced.detail else []
        by_ident = rule.key_by_ident
        result: dict[str, tuple[Any, Approx | None]] = {}
        for name, value in unwrap(produced)[0].items():
            if name not in by_ident:
                raise UsageError(f"formula {rule.formula.name} wrote {name!r}, which its rule does not declare")
            if isinstance(value, Approx):
                if value.value is not None:
                    result[by_ident[name]] = (value.value, value if value.detail else None)
                elif value.detail:
                    losses.append(value)
            elif value is not None:
                result[by_ident[name]] = (value, None)
        if losses:
            parts = tuple(part for x in losses for part in (x.parts or ((x.detail, x.fields),)))
            fields = () if any(not names for _, names in parts) else tuple(dict.fromkeys(f for _, names in parts for f in names))
            result[_LOSS] = (None, Approx(None, "; ".join(x.detail for x in losses), fields, parts))
        return result
    assert rule.simple is not None
    return _apply_simple(rule, ir.get(rule.fields[0]))


def _apply_simple(rule: Rule, value: Any) -> dict[str, tuple[Any, Approx | None]]:
    """A rename, enum, scale or inversion: one key, one value."""
    assert rule.simple is not None and rule.key
    try:
        return {rule.key: (rule.simple.write(value), None)}
    except LookupError:
        raise Unexpressible(f"{rule.fields[0]}={_short(value)} has no counterpart in {rule.key}") from None


def _short(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _entry_for(
    leaf: str,
    raw: Any,
    fate: LeafFate,
    ingested: Ingested,
    carried: dict[str, _Carried],
    out: dict[str, Any],
    table: Table,
    dst_format: str,
    src_format: str,
):  # type: ignore[no-untyped-def]
    title = table.title
    if fate.kind == "unknown":
        return Entry(leaf, None, Status.UNKNOWN, fate.detail)
    if fate.kind == "unsupported":
        return Entry(leaf, None, Status.DROPPED, fate.detail)
    if fate.kind == "extension":
        if dst_format == src_format and out.get(leaf) == raw:
            return Entry(leaf, leaf, Status.EXACT, fate.detail)
        # a rule's reading with no canonical form says why; a known key with no rule has no counterpart
        why = fate.detail if fate.rule is not None else _join(f"{title} has no counterpart", fate.detail)
        return Entry(leaf, None, Status.DROPPED, why, _fields_of(fate))
    if fate.kind == "unresolved":
        if dst_format == src_format and out.get(leaf) == raw:
            return Entry(leaf, leaf, Status.EXACT, fate.detail, _fields_of(fate))
        return Entry(leaf, None, Status.LOSSY if fate.rule else Status.DROPPED, fate.detail, _fields_of(fate))
    rule = fate.rule
    assert rule is not None
    if rule.is_const:
        reason = ingested.lossy.get(id(rule))
        if reason:
            return Entry(leaf, None, Status.LOSSY, reason)
        return Entry(leaf, None, Status.EXACT if dst_format == src_format else Status.CONVERTED,
                     _join(f"{leaf}={_short(raw)} is what {title} assumes", fate.detail))  # fmt: skip
    slots = [carried.get(name) for name in rule.fields]
    done = [s for s in slots if s and (s.target_keys or s.note or s.lossy)]
    if not done:
        skipped = next((s.skipped for s in slots if s and s.skipped), "")
        absent = next((table.absent[f] for f in rule.fields if f in table.absent), "")
        detail = skipped or absent or f"{title} has no counterpart for {', '.join(rule.fields)}"
        if not any(f in ingested.ir.fields and ingested.ir.fields[f].value is not None for f in rule.fields):
            detail = f"no value for {', '.join(rule.fields)} could be derived"
        return Entry(leaf, None, Status.DROPPED, _join(detail, fate.detail), rule.fields)
    if len(slots) == 1:  # the common case: one field, written to its keys
        only = done[0]
        targets = only.target_keys if len(only.target_keys) < 2 else list(dict.fromkeys(only.target_keys))
        lossy, values, note = list(only.lossy), only.written, only.note
        placed = bool(only.target_keys or only.note)
        missing = [] if placed or not ingested.ir.has(rule.fields[0]) else [rule.fields[0]]
        lost_fields = rule.fields
    else:
        targets = list(dict.fromkeys(k for s in done for k in s.target_keys))
        lossy = [x for s in done for x in s.lossy]
        values = [v for s in done for v in s.written]
        note = next((s.note for s in done if s.note), "")
        # fields the source gave a value the target could not place (fields without a value lose nothing)
        missing = [f for f, s in zip(rule.fields, slots) if not (s and (s.target_keys or s.note)) and ingested.ir.has(f)]
        lost_fields = tuple(f for f, s in zip(rule.fields, slots) if (s and s.lossy) or f in missing)
    target = ", ".join(targets) or None
    read_lossy = ingested.lossy.get(id(rule))
    if read_lossy:
        lossy.insert(0, read_lossy)
    if rule.lossy:
        lossy.insert(0, rule.lossy)
    if read_lossy or rule.lossy:  # the rule's reading or mapping as a whole is approximate
        lost_fields = rule.fields
    if missing:
        why = next((s.skipped for f, s in zip(rule.fields, slots) if f in missing and s and s.skipped), "")
        lossy.append(f"{title} cannot express {', '.join(missing)}" + (f": {why}" if why else ""))
    if lossy:
        return Entry(leaf, target, Status.LOSSY, _join("; ".join(dict.fromkeys(lossy)), fate.detail), lost_fields)
    exact = (
        len(rule.keys) == 1 and leaf == rule.key and len(targets) == 1 and len(values) == 1
        and _same(raw, values[0]) and not fate.detail
    )  # fmt: skip
    if exact:
        return Entry(leaf, target, Status.EXACT, "", rule.fields)
    if leaf != rule.key and rule.key is not None and leaf in rule.also:
        detail = f"folded into {', '.join(rule.fields)}"
    else:
        detail = note or (f"= {_short(values[0])}" if len(values) == 1 else "")
    return Entry(leaf, target, Status.CONVERTED, _join(detail, fate.detail), rule.fields)


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b or (
        isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool)
        and not isinstance(b, bool) and a == b
    )  # fmt: skip


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)
