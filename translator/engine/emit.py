"""IR -> target leaves: every rule of the target table writes its fields, in table order (the
order in which a writer emits keys); entries.py then builds the report from the source ledger."""

from __future__ import annotations

from typing import Any, Callable

from ..ir import Origin
from ..mapping import Rule, Table
from ..report import Entry, Report, Status
from ..transforms import Unexpressible
from .defaults import default_not_kept, defaulted_entry
from .entries import leaf_entries, set_entries
from .ledger import Ingested
from .losses import unanchored, unreported_losses
from .solve import unsolved
from .writing import LOSS, Carried, at_default, write, write_simple


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
    for rule in table.rules:
        if rule.versions and run.version not in rule.versions:
            continue
        if run.same and id(rule) not in run.fresh:
            continue
        if rule.product and rule.key is None and rule.formula is None and not rule.note:
            continue  # a relation only: nothing to write (solve.unsolved checks it below)
        run.write_rule(rule)
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

    def write_rule(self, rule: Rule) -> None:
        if rule.is_const:
            if rule.key and rule.applies(self.values):
                self.out[rule.key] = rule.const
            return
        fields = self.ir.fields
        present = [f for f in rule.fields if (known := fields.get(f)) is not None and known.value is not None]
        if not present:
            self._missing(rule)
            return
        if rule.when and not rule.applies(self.values):
            for name in present:
                slot = self.carried.setdefault(name, Carried())
                if not slot.target_keys:
                    cond = ", ".join(f"{k}={'/'.join(map(str, v))}" for k, v in rule.when.items())
                    slot.skipped = slot.skipped or f"{rule.label} only applies when {cond}"
            return
        try:
            written = write_simple(rule, fields[present[0]].value) if rule.simple is not None else write(rule, self.ir)
        except Unexpressible as exc:
            for name in present:
                slot = self.carried.setdefault(name, Carried())
                slot.skipped, slot.unwritable = str(exc), True
            default_not_kept(self.extra, self.ingested, rule, present, str(exc))
            return
        if written is None:
            return
        carried = self.carried
        self.applied.append((rule, present))
        lost = written.pop(LOSS, None)
        loss = lost[1] if lost else None
        if loss is not None and not written:
            default_not_kept(self.extra, self.ingested, rule, present, loss)
        for name in present:
            found = carried.get(name)
            slot = found if found is not None else carried.setdefault(name, Carried())
            slot.skipped = ""
            why = loss.detail_for(name) if loss is not None else ""
            if why:
                slot.lossy.append(why)
            if rule.lossy:
                slot.lossy.append(rule.lossy)
            if rule.key is None or (rule.note and not written):
                slot.note = rule.note
        origin = fields[present[0]].origin
        at_default_ = origin is Origin.DEFAULT and bool(written) and at_default(rule, written, self.version)
        if at_default_ and not rule.always:
            for name in present:
                carried[name].target_keys.extend(written)
            return
        for key, (value, approx) in written.items():
            self.out[key] = value
            for name in present:
                carried[name].target_keys.append(key)
                carried[name].written.append(value)
                why = approx.detail_for(name) if approx is not None else ""
                if why:
                    carried[name].lossy.append(why)
        if origin is Origin.DEFAULT and written and not at_default_:
            self.extra.append(defaulted_entry(self.ingested, self.table, rule, present, written, self.version))

    def _missing(self, rule: Rule) -> None:
        """None of the rule's fields has a value: `missing` when the target needs one."""
        ir, table = self.ir, self.table
        # the source says where these live when they are not in it (VeOmni: the HF config.json)
        elsewhere = next((self.unsupplied[f] for f in rule.fields if f in self.unsupplied), None) if rule.key else None
        if (rule.required or elsewhere) and rule.applies(self.values) and not any(
            ir.has(f) for r in table.rules_for_field(rule.fields[0]) for f in r.fields if r is not rule
        ):
            hint = rule.hint or f"give it with --set {rule.fields[0]}=VALUE"
            if elsewhere:  # the target's own hint speaks of other sources
                hint = f"{elsewhere}, or --set {rule.fields[0]}=VALUE"
            self.extra.append(Entry(None, rule.key, Status.MISSING, hint, rule.fields))


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
