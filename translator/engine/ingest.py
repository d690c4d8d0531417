"""Source leaves -> canonical IR: every rule reads its keys in dependency order (`with` fields
first; rule.py reads one); every leaf gets its fate in the ledger. Leaves no rule takes are
classified: unsupported (the table says why), a known extension (the schema knows the key), or
unknown (with a "did you mean" when a known key is close), cached per table and schema: a batch
sees the same stray keys again and again."""

from __future__ import annotations

from typing import Any, Sequence

from ..core.ir import keep
from ..core.errors import InputError
from ..core.ir import IR, Origin, Value
from ..core.report import Entry, Message, Status, as_message
from ..io.documents import flatten
from ..knowledge.catalogue import catalogue
from ..knowledge.formula import Absent, Approx, Extension, Foreign, is_close, unwrap
from ..knowledge.mapping import Rule, Table
from ..knowledge.catalogue import check_relations
from ..knowledge.schema import SchemaIndex
from ..knowledge.source import Source, kept_by, reading_as, set_aside
from .ledger import UNDECIDED, Ingested, LeafFate
from .rule import (
    checked_values,
    coerce_input,
    default_holds,
    defaults_of,
    inputs,
    memo_key,
    read_rule,
    recall,
    remember,
    solve,
)

SUGGESTIONS_PER_FILE = 100  # "did you mean" searches (~1 ms each) one file may cost; a file with
# thousands of stray keys (generated, or not a config at all) is then reported without them


def classify_strays(
    source: Source, table: Table, schema: SchemaIndex, ir: IR, fates: dict[str, LeafFate], leaves: dict[str, Any]
) -> None:
    """Give every leaf no rule took its fate; a known extension is kept in the IR for same-format."""
    coerce = schema.coerce
    searches = 0  # stray leaves not classified before (each may cost a "did you mean" search)
    for leaf, fate in fates.items():
        if fate is not UNDECIDED:
            continue
        type_note: Message | None = None
        try:
            coerce_input(source, coerce, leaf, leaves[leaf])  # the framework refuses a wrong type even in a key we drop
        except InputError as exc:
            if not table.lenient_types:
                raise
            type_note = ("wrong_type", {"message": exc.message})
        searches += (id(schema), leaf) not in table.leaf_kinds
        kind, said = classify(leaf, schema, table, suggest=searches <= SUGGESTIONS_PER_FILE)
        if said is not None and said[1].get("suggestion"):
            said = (said[0], {**said[1], "suggestion": spelled_as_file(source, leaf, said[1]["suggestion"])})
        if kind != "unknown" and (foreign := _not_a_name(leaf, leaves[leaf], schema, table, source)) is not None:
            kind, said = "unknown", foreign  # a name the release's Literal lacks (a fork's tokenizer): the one rule
        notes = (said,) if said is not None else ()
        fates[leaf] = LeafFate(kind, notes=(type_note, *notes) if type_note else notes, caveat=type_note)
        if kind == "extension":
            ir.extensions.setdefault(source.format, {})[leaf] = leaves[leaf]
    for leaf, note in source.notes.items():
        if leaf in fates and note:
            fates[leaf].notes = (("reader_note", {"note": note}), *fates[leaf].notes)


def classify(leaf: str, schema: SchemaIndex, table: Table, suggest: bool = True) -> tuple[str, Message | None]:
    """(kind, message) of a leaf no rule owns: unsupported, a known extension, or unknown. Cached:
    a batch sees the same stray keys again and again. suggest=False: no "did you mean" search for
    an unknown leaf not seen before (and nothing cached, so another file still gets one)."""
    key = (id(schema), leaf)
    found = table.leaf_kinds.get(key)
    if found is None:
        reason = _unsupported_reason(table, leaf)
        if reason is not None:
            found = ("unsupported", ("unsupported_key", {"reason": reason}))
        elif schema.known(leaf):
            why = schema.note(leaf) or table.extension_reasons.get(_group_of(schema, leaf), "")
            found = ("extension", ("framework_extension", {"reason": why}) if why else None)
        elif not suggest:
            return ("unknown", ("not_a_parameter", {"title": table.title, "unsearched": True}))
        else:
            found = ("unknown", _closest(leaf, schema, table))
        keep(table.leaf_kinds, key, found, 1_000)
    return found


def spelled_as_file(source: Source, leaf: str, suggestion: str) -> str:
    """A suggested key (the reader's name for it) as the file would write it, spelled the way the file
    writes the unknown `leaf` beside it: the block both share written as the file writes it (a reader's
    prefix dropped, or a file's own prefix kept), dashes where the file has them (tests/test_suggested_spelling.py)."""
    written = source.aliases.get(leaf, leaf)
    if written == leaf:
        return suggestion
    parts, other = leaf.split("."), suggestion.split(".")
    shared = 0
    while shared < min(len(parts), len(other)) - 1 and parts[shared] == other[shared]:
        shared += 1
    rest, wanted = ".".join(parts[shared:]), ".".join(other[shared:])
    for spell in (str, lambda key: key.replace("_", "-")):
        if written.endswith(spell(rest)):
            return written[: len(written) - len(spell(rest))] + spell(wanted)
    return suggestion


def _not_a_name(leaf: str, value: Any, schema: SchemaIndex, table: Table, source: Source) -> Message | None:
    """A text value of a key whose framework lists its names (a Literal, a closed_enums table's enum) that
    is none of them: what an enum rule reads as a value the release does not know. None otherwise."""
    texts = (
        [value]
        if isinstance(value, str)
        else [v for v in value if isinstance(v, str)]
        if isinstance(value, list)
        else []
    )
    names = schema.choices(leaf, table.closed_enums) if texts else None
    if not names:
        return None
    closed = table.closed_enums  # argparse's choices match exactly; a Literal in any case, as NeoX's validate_types
    known = set(names) if closed else {n.lower() for n in names}
    other = next((t for t in texts if (t if closed else t.lower()) not in known), None)  # (a list: item by item)
    if other is None:
        return None
    return "not_a_value", {
        "title": table.title,
        "release": source.version or table.versions[0],
        "key": leaf,
        "value": other,
        "known": list(names),
        "fields": [],
    }


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


def _closest(leaf: str, schema: SchemaIndex, table: Table) -> Message:
    slot = (id(schema), id(table))
    if slot not in _CANDIDATES:
        _CANDIDATES[slot] = sorted(set(schema.all_keys()) | {k for r in table.rules for k in r.keys})
    # a ratio >= 0.75 needs the shorter name to be >= 0.6 of the longer: skip hopeless candidates
    size = len(leaf)
    near = [c for c in _CANDIDATES[slot] if 0.6 * max(size, len(c)) <= min(size, len(c))]
    import difflib  # only when a file has a key nobody knows

    close = difflib.get_close_matches(leaf, near, n=1, cutoff=0.75)
    if close:
        return "not_a_parameter", {"title": table.title, "suggestion": close[0]}
    return "not_a_parameter", {"title": table.title}


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
    ir = IR()
    for name, known_value in (context or {}).items():
        ir.set(name, known_value)
    for name, value in (user or {}).items():
        ir.set(name, Value(value, Origin.USER, (f"--set {name}",)))
    reading = _Reading(source, table, schema, ir, leaves, ledger)
    reading.read_all(table.read_order)
    check_relations(source, ir)
    if not ledger:
        return Ingested(ir, {}, leaves, reading.lossy, source, table, coerced=reading.coerced)
    classify_strays(source, table, schema, ir, reading.fates, leaves)
    kept = kept_by(source) if "any_target" in source.meta else ()
    return Ingested(ir, reading.fates, leaves, reading.lossy, source, table, coerced=reading.coerced, kept_by=kept)


class _Reading:
    """One file's ingest under way: the leaves, what each rule made of them, and the IR so far."""

    def __init__(
        self, source: Source, table: Table, schema: SchemaIndex, ir: IR, leaves: dict[str, Any], ledger: bool
    ) -> None:
        self.source, self.table, self.ir, self.leaves, self.ledger = source, table, ir, leaves, ledger
        self.version = source.version or table.versions[0]
        self.coerce, self.schema = reading_as(source, schema.coerce), schema  # (a tool's value read as another: lossy)
        self.fields_catalog = catalogue()
        self.only_file = source.files[0] if len(source.files) == 1 else None  # where every value came from
        self.fates: dict[str, LeafFate] = dict.fromkeys(leaves, UNDECIDED)  # in document order
        self.lossy: dict[int, Message] = {}
        self.coerced: dict[str, Any] = {}
        self.products: list[Rule] = []  # product rules reached so far
        # run-time placeholders (HF's "auto") are no value: rules see them as absent; same-format keeps them
        self.held = {leaf: why for leaf, why in source.unresolved.items() if leaf in leaves}
        unknown = {**source.unknown_values, **source.foreign_values}
        self.unknown = {leaf for leaf in unknown if leaf in leaves}
        if self.unknown:
            self.held.update((leaf, unknown[leaf]) for leaf in self.unknown)
        readable = {k: v for k, v in leaves.items() if k not in self.held} if self.held else leaves
        self.readable = set_aside(source, readable, self.fates, LeafFate)  # a release's or a family's keys set aside
        if self.held:
            self._hold()
        self.below: dict[str, list[str]] = {}  # block path -> its leaves, so a rule finds a whole block at once
        for leaf in self.readable:
            if "." in leaf:
                parts = leaf.split(".")
                for i in range(1, len(parts)):
                    self.below.setdefault(".".join(parts[:i]), []).append(leaf)

    def _hold(self) -> None:
        """Leaves only known at run time: no value, a hint to give one with --set."""
        owners = self.table.key_owner()
        for leaf, why in self.held.items():
            owner = owners.get(leaf)
            if owner is None and "." in leaf:  # inside a block a rule reads whole (scheduler.params)
                parts = leaf.split(".")
                owner = next((o for i in range(len(parts) - 1, 0, -1) if (o := owners.get(".".join(parts[:i])))), None)
            fields = owner.fields if owner else ()
            kind = "unknown" if leaf in self.unknown else "unresolved"
            self.fates[leaf] = LeafFate(kind, owner, (("runtime_value", {"why": why, "fields": list(fields)}),))
            self.ir.extensions.setdefault(self.source.format, {})[leaf] = self.leaves[leaf]

    def subtree(self, key: str) -> tuple[Any, list[str]]:
        """The value at `key`: a leaf, or a whole nested block whose leaves the rule owns."""
        if key in self.readable:
            return self.readable[key], [key]
        owned = self.below.get(key)
        if not owned:
            return None, []
        node: Any = self.source.tree
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                # written as dotted keys (`seq_length.x: 1`), not as a nested block: its leaves make the block
                block: dict[str, Any] = {}
                for leaf in owned:
                    *heads, last = leaf[len(key) + 1 :].split(".")
                    place = block
                    for head in heads:
                        place = place.setdefault(head, {})
                    place[last] = self.leaves[leaf]
                return block, owned
            node = node[part]
        return node, owned

    def read_all(self, rules: tuple[Rule, ...]) -> None:
        readable, below, held = self.readable, self.below, self.held
        for rule in rules:
            keys = rule.keys
            if rule.key is None and rule.formula is None:
                pass  # a write-side note (how the target expresses a field structurally), or a product alone
            elif rule.is_const:
                self._read_const(rule)
            elif held and self._blocked(rule):
                pass
            elif (
                rule.pure
                and not held
                and not (
                    (keys[0] in readable or keys[0] in below)
                    if len(keys) == 1
                    else any(k in readable or k in below for k in keys)
                )
            ):
                self._read_defaults(rule)  # none of its keys in the file and nothing else read
            else:
                self._read_keys(rule)
            if rule.product:
                self._solve(rule)

    def _solve(self, rule: Rule) -> None:
        """Every product reached so far, solved together until nothing changes: two may share a
        factor (the batch's and the world size's data-parallel size)."""
        self.products.append(rule)
        while any([solve(r, self.ir, self.table, self.source) for r in self.products]):
            pass

    def _read_const(self, rule: Rule) -> None:
        if rule.key:
            value, owned = self.subtree(rule.key)
            for leaf in owned:
                self.fates[leaf] = LeafFate("rule", rule)
            if owned and not is_close(value, rule.const):
                self.lossy[id(rule)] = ("not_assumed", {"key": rule.key, "value": value, "assumed": rule.const})

    def _blocked(self, rule: Rule) -> bool:
        """A value the rule needs is only known at run time: the rule gives nothing."""
        held = self.held
        # a held leaf, or one inside a block the rule reads whole (a scheduler's params): the rest of
        # the block has no meaning without it, and the rule's fields are the launcher's to decide
        blocked = [k for k in rule.keys if k in held] + [
            leaf for k in rule.keys if k not in held for leaf in held if leaf.startswith(k + ".")
        ]
        if not blocked:
            return False
        why: Message = ("read_with_runtime_value", {"keys": blocked, "fields": list(rule.fields)})
        for key in rule.keys:
            for leaf in self.subtree(key)[1]:
                self.fates[leaf] = LeafFate("unresolved", rule, (why,))
        return True

    def _read_defaults(self, rule: Rule) -> None:
        """The same defaults for every file that has none of the rule's keys (cached per table)."""
        ir = self.ir
        if default_holds(rule, ir):
            for name, value, approx in defaults_of(rule, self.table, self.version, self.source):
                if approx:
                    self.lossy[id(rule)] = as_message(approx)
                if value is not None and not (name in ir.fields and ir.fields[name].origin is Origin.USER):
                    ir.fields[name] = value

    def _read_keys(self, rule: Rule) -> None:
        """The rule's keys in the file, coerced and read; the values it gives go into the IR."""
        present: dict[str, Any] = {}
        owned_leaves: list[str] = []
        notes: list[str] = []
        leaf_notes: dict[str, Message] = {}
        source, readable, coerce = self.source, self.readable, self.coerce
        owned: Sequence[str]
        for key in rule.keys:
            if key in readable:  # a leaf (most keys): the subtree is the leaf itself
                value, owned = readable[key], (key,)
            else:
                value, owned = self.subtree(key)
                if not owned:
                    continue
            if owned[0] == key and len(owned) == 1:
                value, note = coerce_input(source, coerce, key, value)
                if note:
                    notes.append(note)
                    leaf_notes[key] = ("coerced", {"note": note})
                guessed = None
                if isinstance(value, Approx):
                    value, guessed = unwrap(value)
                    if guessed:
                        self.lossy[id(rule)] = as_message(guessed)
                if note or guessed:
                    self.coerced[key] = value
            else:
                coerce_input(source, coerce, key, value)  # a block where the framework takes one value
            present[key] = value
            owned_leaves.extend(owned)
        if self.ledger:
            fates = self.fates
            for leaf in owned_leaves:
                note_of = leaf_notes.get(leaf)
                fates[leaf] = LeafFate("rule", rule, (note_of,) if note_of else ())
        read, checked = self._reading(rule, present, owned_leaves)
        if type(read) is not list:  # (a remembered reading is a list of checked values)
            if isinstance(read, Foreign):
                self._foreign(rule, read, owned_leaves)
                return
            if isinstance(read, Extension):  # no canonical form: the leaves stay framework extensions
                why = (as_message(read.detail, "no_canonical_form"),)
                for leaf in owned_leaves:
                    self.fates[leaf] = LeafFate("extension", rule, why)  # the rule: which fields it leaves unset
                    self.ir.extensions.setdefault(source.format, {})[leaf] = self.leaves[leaf]
                return
            if isinstance(read, Absent):  # no value on purpose: the leaves mean what the absent fields mean
                if self.ledger:
                    said: Message = ("means_absent", {"fields": list(rule.fields), "why": read.detail})
                    for leaf in owned_leaves:
                        self.fates[leaf].notes = (*self.fates[leaf].notes, said)
                return
        origin = self._origin(rule, present)
        if origin is Origin.DEFAULT and not default_holds(rule, self.ir):
            return
        if checked is None:  # checked only where the value is used (a default may not apply)
            checked = checked_values(read, self.fields_catalog, source, owned_leaves, rule, self.ir)
        assert not isinstance(checked, (Extension, Absent, Foreign))  # handled above
        fields = self.ir.fields
        file = self.only_file or source.file_of(rule.key or "")
        leaves = tuple(owned_leaves)
        for name, value, approx, note in checked:
            if approx:
                self.lossy[id(rule)] = as_message(approx)
            if value is None:
                continue
            if note:
                notes.append(note)
            known = fields.get(name)
            if known is not None and known.origin is Origin.USER:
                if self.ledger:  # (without a ledger every fate is the shared placeholder)
                    for leaf in owned_leaves:
                        self.fates[leaf].notes = (("overridden", {"field": name}),)
                continue
            fields[name] = Value(value, origin, leaves, file, "; ".join(notes) if notes else "")

    def _reading(self, rule: Rule, present: dict[str, Any], owned_leaves: list[str]) -> tuple[Any, Any]:
        """(what the rule reads, its values checked against the catalogue or None until needed). A rule gives
        the same result for the same values of its keys and inputs: a batch of thousands of configs repeats
        most of them (norm: layernorm, seq_length: 2048, the HF rules' model_type, ...), remembered per table."""
        pure = rule.pure
        memo = (
            memo_key(rule, self.version, present, None if pure else inputs(rule, self.ir, self.subtree))
            if present or not pure
            else None
        )
        checked = recall(self.table, memo) if memo is not None else None
        if checked is not None:
            read = checked
        else:
            read = read_rule(rule, present, self.subtree, self.ir, self.version, self.source, owned_leaves)
            if isinstance(read, dict) and any(isinstance(v, Foreign) for v in read.values()):
                # the fields a fork's value decides are said now, the others kept (a reading not remembered)
                return self._foreign(rule, read, owned_leaves), None
            if memo is not None:
                checked = (
                    read
                    if isinstance(read, (Extension, Absent, Foreign))
                    else checked_values(read, self.fields_catalog, self.source, owned_leaves, rule, self.ir)
                )
                remember(self.table, memo, checked)
        if present and not isinstance(read, Foreign):
            # a name the framework's own list lacks (argparse choices, a Literal) that the rule read anyway: a fork's
            for value in present.values():
                if isinstance(value, (str, list)):  # (only text names: numbers are no names)
                    return self._not_named(present) or read, checked
        return read, checked

    def _not_named(self, present: dict[str, Any]) -> Foreign | None:
        """A key's value outside the names its framework lists for it (the key history's Literal at the
        release, matched in any case as NeoX does; a closed_enums table's schema enum, exactly, as argparse
        does), before any rule reads it: the same one rule as a rule's own enum."""
        closed = self.table.closed_enums
        for key, value in present.items():
            texts = (
                [value]
                if isinstance(value, str)
                else [v for v in value if isinstance(v, str)]
                if isinstance(value, list)
                else ()
            )
            names = self.schema.choices(key, closed) if texts else None
            if not names:
                continue
            known = set(names) if closed else {n.lower() for n in names}
            other = next((t for t in texts if (t if closed else t.lower()) not in known), None)
            if other is not None:
                return Foreign(other, names, key)
        return None

    def _foreign(self, rule: Rule, read: "Foreign | dict[str, Any]", owned_leaves: list[str]) -> dict[str, Any]:
        """A value the file's release does not know (a fork's name): the leaf holding it is `unknown`
        (carried as written by a same-format translation), the fields it decides get no value. A
        whole Foreign reading leaves the rule's other leaves read with it (said so); a reading whose
        other fields hold keeps those (returned without the foreign ones)."""
        foreign = read if isinstance(read, Foreign) else next(v for v in read.values() if isinstance(v, Foreign))
        lost = (
            list(rule.fields) if isinstance(read, Foreign) else [f for f, v in read.items() if isinstance(v, Foreign)]
        )
        leaf = _holder(foreign, owned_leaves, self.leaves)
        known = self.schema.choices(leaf) or foreign.known  # the release's own Literal, when its history has one
        said: Message = (
            "not_a_value",
            {
                "title": self.table.title,
                "release": self.version,
                "key": leaf,
                "value": foreign.value,
                "known": list(known),
                "fields": lost,
            },
        )
        self.fates[leaf] = LeafFate("unknown", rule, (said,))
        self.ir.extensions.setdefault(self.source.format, {})[leaf] = self.leaves[leaf]
        if isinstance(read, Foreign):
            along: Message = ("read_with_unknown_value", {"key": leaf, "value": foreign.value})
            for other in owned_leaves:
                if other != leaf:
                    self.fates[other] = LeafFate("unresolved", rule, (along,))
            return {}
        self.lossy[id(rule)] = ("read_with_unknown_value", {"key": leaf, "value": foreign.value, "fields": lost})
        return {f: v for f, v in read.items() if not isinstance(v, Foreign)}

    def _origin(self, rule: Rule, present: dict[str, Any]) -> Origin:
        if rule.key and rule.key in present:
            return Origin.EXPLICIT
        if present:
            return Origin.DERIVED
        fields = self.ir.fields
        if (rule.key is None or rule.derived) and any(
            name in fields and fields[name].origin is not Origin.DEFAULT for name in rule.read_deps
        ):
            return Origin.DERIVED  # computed from values the file (or the user) gave
        return Origin.DEFAULT


def _holder(foreign: Foreign, owned_leaves: list[str], leaves: dict[str, Any]) -> str:
    """The leaf holding a value the release does not know: the key the reading named, else the one
    whose value it is (a list's leaf holding it: NeoX's attention_config), else the rule's first."""
    if foreign.key in owned_leaves:
        return foreign.key
    for leaf in owned_leaves:
        value = leaves.get(leaf)
        if value == foreign.value or (isinstance(value, list) and _holds(value, foreign.value)):
            return leaf
    return owned_leaves[0]


def _holds(node: Any, value: Any) -> bool:
    if isinstance(node, list):
        return any(_holds(item, value) for item in node)
    return bool(node == value)


# what a written entry says when the value it writes is the source's (as written, converted,
# approximated, or a same-format file's unknown key carried); `defaulted`/`missing` write defaults
# and stand-ins, `dropped` writes nothing
_CARRIED = frozenset({Status.EXACT, Status.CONVERTED, Status.LOSSY, Status.UNKNOWN})
_EXPRESSED = frozenset({Status.EXACT, Status.CONVERTED})


def holds_source(entries: Sequence[Entry], ingested: Ingested) -> bool:
    """Some written entry carries a value of the source (issue 28: an output of defaults and stand-ins
    only is none): it names a leaf of the source files (as the tables see it or as written) or a --set
    value, or a field it writes was read from the files or given by the user."""
    leaves: set[str] = set()
    for part in (ingested, *ingested.companions):
        leaves.update(part.fates)
        leaves.update(part.source.aliases.values() if part.source is not None else ())
    fields = ingested.ir.fields
    for entry in entries:
        # a value the target holds by its own rule (GPT-2's biases: `expressed`) is carried too, written or not
        if entry.status not in _CARRIED or not (entry.target_key or entry.status in _EXPRESSED):
            continue
        keys = (entry.source_key or "").split(", ")
        if any(key.startswith("--set ") or key in leaves for key in keys):
            return True
        if any(name in fields and fields[name].origin is not Origin.DEFAULT for name in entry.fields):
            return True
    return False
