"""IR -> target leaves: every rule of the target table writes its fields, in table order (the
order in which a writer emits keys); entries.py then builds the report from the source ledger."""

from __future__ import annotations

from typing import Any, Callable

from ..core.ir import Origin
from ..knowledge.mapping import Rule, Table
from ..core.report import Entry, Message, Report, Status, as_message, said
from ..knowledge.formula import Approx, Unexpressible
from .defaults import default_not_kept, defaulted_entry
from .derived import unheld_derived
from .entries import leaf_entries, set_entries
from .ledger import Ingested
from .losses import unanchored, unreported_losses
from .solve import unsolved
from .writing import LOSS, MISSING, Carried, at_default, reason_for, write_formula, write_simple


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
    run = _Emission(ingested, table, dst_format, version or table.versions[0], unplaceable)
    if run.same:
        run.carry_as_written()
    run.write_all(table.rules)
    unanchored(run.applied, table, ingested.ir, run.carried, run.extra)
    if table.products:
        unsolved(table, ingested.ir, run.carried)
    src_format = ingested.source.format if ingested.source else "?"
    if dst_format == src_format:  # framework-only extensions go back where they came from
        for leaf, value in ingested.ir.extensions.get(src_format, {}).items():
            if leaf not in run.homeless and (unplaceable is None or not unplaceable(leaf)):
                run.out.setdefault(leaf, value)
    report = Report()
    report.entries = leaf_entries(ingested, table, dst_format, run.carried, run.out, run.passed, run.homeless)
    src_title = ingested.table.title if ingested.table else src_format
    unreported_losses(report, run.extra, run.carried, ingested.ir, src_title)
    set_entries(report, ingested, table, run.carried)
    report.entries.extend(run.extra)
    if not run.same:
        unheld_derived(report, ingested, table)
    return run.out, report


class _Emission:
    """One translation's writing under way: the target leaves, and what became of each field."""

    def __init__(
        self, ingested: Ingested, table: Table, dst_format: str, version: str, unplaceable: Callable[[str], str | None] | None
    ) -> None:
        self.ingested, self.table, self.version, self.unplaceable = ingested, table, version, unplaceable
        self.ir = ingested.ir
        self.values = self.ir.plain()
        self.out: dict[str, Any] = {}
        self.carried: dict[str, Carried] = {}
        self.extra: list[Entry] = []  # entries no source leaf carries: missing, defaulted, unkept defaults
        source = ingested.source
        self.same = dst_format == (source.format if source else "?") and source is not None
        self.unsupplied: dict[str, str] = dict(source.meta.get("unsupplied") or {}) if source else {}
        self.fresh = _fresh_rules(ingested, table) if self.same else set()
        self.passed: set[str] = set()
        self.applied: list[tuple[Rule, list[str]]] = []  # rules that wrote (or noted) their fields, with those fields
        self.homeless: dict[str, str] = {}  # leaf -> why the target layout has no place for it

    def carry_as_written(self) -> None:
        """Same format: every leaf no --set or companion value replaces is written as it was read."""
        ingested = self.ingested
        for leaf, fate in ingested.fates.items():
            if fate.kind == "rule" and fate.rule is not None and id(fate.rule) in self.fresh:
                continue  # rewritten from the IR
            why = self.unplaceable(leaf) if self.unplaceable is not None else None
            if why:
                self.homeless[leaf] = why
                continue
            self.out[leaf] = ingested.coerced.get(leaf, ingested.raw.get(leaf))
            self.passed.add(leaf)

    def write_all(self, rules: tuple[Rule, ...]) -> None:
        """Every rule writes its fields (the hot loop: a batch runs it for every rule of every file)."""
        ir, carried, out, version, values = self.ir, self.carried, self.out, self.version, self.values
        fields, same, fresh, applied = ir.fields, self.same, self.fresh, self.applied
        for rule in rules:
            if rule.versions and version not in rule.versions:
                continue
            if same and id(rule) not in fresh:
                continue
            if rule.is_const:
                if rule.key and rule.applies(values):
                    out[rule.key] = rule.const
                    self.extra.append(_const_entry(self.table, rule))
                continue
            if rule.product and rule.key is None and rule.formula is None and not rule.note:
                continue  # a relation only: nothing to write (solve.unsolved checks it)
            present = [f for f in rule.fields if (known := fields.get(f)) is not None and known.value is not None]
            if not present:
                self._missing(rule)
                continue
            if rule.when and not rule.applies(values):
                self._not_now(rule, present)
                continue
            try:
                if rule.simple is not None:
                    written = write_simple(rule, fields[present[0]].value)
                else:  # a formula, or a note (no key, no formula: nothing to write)
                    written = write_formula(rule, ir, version) if rule.formula is not None else {}
            except Unexpressible as exc:
                self._unwritable(rule, present, exc)
                continue
            if written is None:
                continue
            applied.append((rule, present))
            for key in [k for k in written if k.startswith(MISSING)]:
                self._needed(rule, key[len(MISSING):], written.pop(key)[1])
            lost = written.pop(LOSS, None)
            if lost is not None or rule.lossy or rule.key is None or rule.note:
                self._noted(rule, present, written, lost[1] if lost else None)
            else:
                for name in present:
                    slot = carried.get(name)
                    if slot is None:
                        carried[name] = Carried()
                    else:
                        slot.skipped = None
            origin = fields[present[0]].origin
            at_default_ = origin is Origin.DEFAULT and bool(written) and at_default(rule, written, version)
            if at_default_ and not rule.always:
                for name in present:
                    carried[name].target_keys.extend(written)
                continue
            for key, (value, approx) in written.items():
                out[key] = value
                for name in present:
                    slot = carried[name]
                    slot.target_keys.append(key)
                    slot.written.append(value)
                    inexact = reason_for(approx, name) if approx is not None else None
                    if inexact:
                        slot.lossy.append(inexact)
            if origin is Origin.DEFAULT and written and not at_default_:
                self.extra.append(defaulted_entry(self.ingested, self.table, rule, present, written, version))

    def _noted(self, rule: Rule, present: list[str], written: dict[str, Any], loss: Approx | None) -> None:
        """What a rule says besides its keys: a loss (all of it, or per field), its note."""
        if loss is not None and not written:
            default_not_kept(self.extra, self.ingested, rule, present, loss)
        for name in present:
            slot = self.carried.setdefault(name, Carried())
            slot.skipped = None
            lost_here = reason_for(loss, name) if loss is not None else None
            if lost_here:
                slot.lossy.append(lost_here)
            if rule.lossy:
                slot.lossy.append(("approximated", {"reason": rule.lossy}))
            if rule.key is None or (rule.note and not written):
                slot.note = rule.note
        for name in loss.fields if loss is not None else ():  # a field the source leaves out, written as a value
            if name in rule.fields and name not in present and (why := reason_for(loss, name) if loss else None):
                self.carried.setdefault(name, Carried()).lossy.append(why)

    def _not_now(self, rule: Rule, present: list[str]) -> None:
        """The rule applies under a condition (`when`) this IR does not meet."""
        for name in present:
            slot = self.carried.setdefault(name, Carried())
            if not slot.target_keys:
                when = {k: list(v) for k, v in rule.when.items()}
                slot.skipped = slot.skipped or ("only_when", {"rule": rule.label, "when": when})

    def _unwritable(self, rule: Rule, present: list[str], exc: Unexpressible) -> None:
        """The target has the key but not this value."""
        why = _unexpressible(exc)
        for name in present:
            slot = self.carried.setdefault(name, Carried())
            slot.skipped, slot.unwritable = why, True
        default_not_kept(self.extra, self.ingested, rule, present, why)
        if rule.required and rule.key and rule.applies(self.values):  # what the target needs is still not there
            need: Message = ("needs_value", {"field": rule.fields[0], "hint": rule.hint or None, "elsewhere": None})
            self.extra.append(said(None, rule.key, Status.MISSING, (need,), rule.fields, (rule.key,)))

    def _needed(self, rule: Rule, key: str, why: Approx | None) -> None:
        """A key the target needs that the rule's formula could not give (the --set that gives it)."""
        need: Message = ("needs_value", {"field": rule.fields[0], "hint": why.detail if why else None, "elsewhere": None})
        self.extra.append(said(None, key, Status.MISSING, (need,), rule.fields, (key,)))

    def _missing(self, rule: Rule) -> None:
        """None of the rule's fields has a value: `missing` when the target needs one."""
        ir, table = self.ir, self.table
        # the source says where these live when they are not in it (VeOmni: the HF config.json)
        elsewhere = next((self.unsupplied[f] for f in rule.fields if f in self.unsupplied), None) if rule.key else None
        if (rule.required or elsewhere) and rule.applies(self.values) and not any(
            ir.has(f) for r in table.rules_for_field(rule.fields[0]) for f in r.fields if r is not rule
        ):
            # the source's word on where the value lives wins over the target's own hint
            need: Message = ("needs_value", {"field": rule.fields[0], "hint": rule.hint or None, "elsewhere": elsewhere})
            self.extra.append(said(None, rule.key, Status.MISSING, (need,), rule.fields, (rule.key,) if rule.key else ()))


def _const_entry(table: Table, rule: Rule) -> Entry:
    """A target-only key the table writes with a fixed value: nothing of the source says it, so the
    report does (a value added for the target, no loss)."""
    assert rule.key is not None
    when = ", ".join(f"{k}={'/'.join(map(str, v))}" for k, v in rule.when.items())
    why = rule.hint or "a key with no canonical field, which the table writes " + (f"when {when}" if when else "for every config")
    added: Message = ("added_for_target", {"title": table.title, "written": {rule.key: rule.const}, "why": why})
    return said(None, rule.key, Status.DEFAULTED, (added,), (), (rule.key,))


def _unexpressible(exc: Unexpressible) -> Message:
    """Why the target cannot take a value: the formula's reason (its own kind when it has one)."""
    return as_message(exc.args[0] if exc.args else str(exc), "unexpressible")


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
