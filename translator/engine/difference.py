"""Two readings compared field by field through the canonical IR: what `neoconv diff` shows, and what a
translation's check of its own output names (services/diff.py, the pipeline's check)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..knowledge.catalogue import absent_means, catalogue
from ..core.ir import DEFAULT_RTOL, values_equal
from .ledger import Ingested
from ..core.errors import UsageError
from ..core.ir import Origin
from ..knowledge.mapping import load_table
from ..knowledge.source import Source
from ..io.documents import flatten
from ..core.report import Message, Report, Status


@dataclass
class FieldChange:
    field: str
    a: Any
    b: Any
    a_keys: tuple[str, ...]
    b_keys: tuple[str, ...]
    report: tuple[str, ...] | None = None  # statuses of the translation report's entries about the field
    difference: tuple[float, int] | None = None  # a schedule's: the largest lr difference and its first step
    unheld: str = ""  # a field one side's format has no key for: which format, and its table's reason

    def to_json(self) -> dict[str, Any]:
        out = {"field": self.field, "a": self.a, "b": self.b, "a_keys": list(self.a_keys), "b_keys": list(self.b_keys)}
        if self.difference is not None:
            out["difference"] = {"lr": self.difference[0], "step": self.difference[1]}
        if self.report is not None:
            out["report"] = list(self.report)
        if self.unheld:
            out["not_held"] = self.unheld
        return out

    def named(self) -> bool:
        """The report names this difference: as something lost (lossy, dropped, missing, unknown), as
        a value the user gave (`set`: --set), or, a value only B has, as one the translation wrote that
        the source did not state (defaulted)."""
        return bool(self.report and set(self.report) & (NAMING_ADDED if self.a is None else NAMING | {"set"}))


NAMING = frozenset({"lossy", "dropped", "missing", "unknown"})
NAMING_ADDED = NAMING | {"defaulted", "set"}  # what names a value only the translation's output has


@dataclass
class DiffResult:
    a_format: str
    b_format: str
    changed: list[FieldChange] = field(default_factory=list)
    only_a: list[FieldChange] = field(default_factory=list)  # set in A, absent in B (both can express it)
    only_b: list[FieldChange] = field(default_factory=list)
    inexpressible: list[FieldChange] = field(default_factory=list)  # one side cannot express the field
    extensions: dict[str, dict[str, Any]] = field(default_factory=dict)  # side -> framework-only leaves

    @property
    def equal(self) -> bool:
        return not (self.changed or self.only_a or self.only_b)

    def to_json(self) -> dict[str, Any]:
        return {
            "a_format": self.a_format,
            "b_format": self.b_format,
            "equal": self.equal,
            "changed": [c.to_json() for c in self.changed],
            "only_in_a": [c.to_json() for c in self.only_a],
            "only_in_b": [c.to_json() for c in self.only_b],
            "not_expressible_in_both": [c.to_json() for c in self.inexpressible],
            "extensions": self.extensions,
        }

    def render(self) -> str:
        lines: list[str] = []

        def side(keys: tuple[str, ...]) -> str:
            return f" ({', '.join(keys)})" if keys else " (default)"

        def said(c: FieldChange) -> str:
            if c.report is None:
                return ""
            if not c.report:
                return "  [report: no entry]"
            return f"  [report: {', '.join(c.report)}{'' if c.named() else ': not named as a loss'}]"

        for c in self.changed:
            if c.difference is not None:  # a schedule: one line per side, and by how much the lrs differ
                lines.append(
                    f"changed  {c.field}: lrs differ by up to {c.difference[0]:.4g} (first at step "
                    f"{c.difference[1]}){said(c)}\n  A{side(c.a_keys)}: {_describe(c.a)}\n"
                    f"  B{side(c.b_keys)}: {_describe(c.b)}"
                )
                continue
            lines.append(
                f"changed  {c.field}: {spelled(c.a)}{side(c.a_keys)} -> {spelled(c.b)}{side(c.b_keys)}{said(c)}"
            )
        for c in self.only_a:
            lines.append(f"removed  {c.field}: {spelled(c.a)}{side(c.a_keys)} (not set in B){said(c)}")
        for c in self.only_b:
            lines.append(f"added    {c.field}: {spelled(c.b)}{side(c.b_keys)} (not set in A){said(c)}")
        for c in self.inexpressible:
            value, keys, where = (c.a, c.a_keys, "A") if c.a is not None else (c.b, c.b_keys, "B")
            # what the report says became of A's setting, or of the value B got that A has no key for
            # (NeoX's accumulation, added for a Cerebras source)
            why = c.unheld or "the other format cannot express it"
            lines.append(f"only-{where}   {c.field}: {spelled(value)}{side(keys)} ({why}){said(c)}")
        for where, leaves in self.extensions.items():
            for leaf, value in leaves.items():
                lines.append(f"extension {where} {leaf}: {spelled(value)}")
        lines.append(
            "equal" if self.equal else f"{len(self.changed) + len(self.only_a) + len(self.only_b)} difference(s)"
        )
        return "\n".join(lines) + "\n"


_QUOTED = re.compile(
    r"""^$|^[-+]?(\.?[0-9].*|\.inf|\.nan)$|^(true|false|yes|no|on|off|null|~)$|[:#]\s|^[\s'"\[\]{}&*!|>%@`,-]|\s$""",
    re.I,
)


def spelled(value: Any) -> str:
    """A value as a config file spells it (`small_init`, `true`, `null`, `[0.9, 0.95]`), not as Python
    shows it (`'small_init'`, `True`): text is quoted only where YAML would read it as something else."""
    if value is True or value is False or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False) if _QUOTED.search(value) or not value.isprintable() else value
    if isinstance(value, float):
        return (
            ".inf"
            if value == math.inf
            else "-.inf"
            if value == -math.inf
            else ".nan"
            if value != value
            else repr(value)
        )
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(spelled(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {spelled(v)}" for k, v in value.items()) + "}"
    return str(value)


def check_rtol(rtol: Any) -> float:
    """A relative tolerance is a finite number of at least 0 (0 = exactly equal)."""
    if isinstance(rtol, bool) or not isinstance(rtol, (int, float)) or not 0 <= rtol < math.inf:
        raise UsageError(f"--rtol {rtol}: give a finite number of at least 0 (e.g. 1e-6; 0 for exact)")
    return float(rtol)


def _keys(value: Any, aliases: dict[str, str]) -> tuple[str, ...]:
    """Where a value came from, as the user wrote it (a trainer-layout path, a flat VeOmni key)."""
    if value is None or value.origin is Origin.DEFAULT:
        return ()
    return tuple(aliases.get(k, k) for k in value.source_keys) or (value.origin.value,)


@lru_cache(maxsize=None)
def expressible(fmt: str) -> frozenset[str]:
    table = load_table(fmt)
    return frozenset(f for r in table.rules for f in r.fields if r.key is not None or r.note or r.formula is not None)


def unheld(name: str, fmt: str) -> str:
    """Why a format holds no value of a field: its table's reason (Cerebras has grad_accum_steps, but
    accumulates by itself: the global batch is what carries over), else that no key of it does."""
    if fmt == "?":
        return "the other format cannot express it"
    table = load_table(fmt)
    title, why = table.title, table.absent.get(name)
    return f"{title} holds no value for it: {why}" if why else f"no key of {title} holds it"


@lru_cache(maxsize=None)
def _both(fa: str, fb: str) -> frozenset[str]:
    return expressible(fa) & expressible(fb)


def writable(fmt: str) -> frozenset[str]:
    """Fields a format can hold in a file it writes (some are only read: Cerebras' sequence length)."""
    return expressible(fmt) - set(load_table(fmt).absent)


def _means_absent(name: str, value: Any, rtol: float, fields: dict[str, Any]) -> bool:
    """The value is what leaving the field out means (the catalogue's none_means: no qk-norm is false;
    an output bias as the attention bias), in the terms of the side that leaves it out (`fields`)."""
    meant = absent_means(name, lambda other: fields[other].value if other in fields else None)
    return meant is not None and values_equal(value, meant, rtol)


@lru_cache(maxsize=None)
def _special() -> dict[str, str]:
    """Fields not compared value by value: a schedule (by its lrs over the run), summaries (not at all)."""
    out = {}
    for name, spec in catalogue().items():
        if spec.summary_of:
            out[name] = "summary"
        elif spec.covered_by:
            out[name] = f"covered:{spec.covered_by}"
        elif spec.validate == "schedule":
            out[name] = "schedule"
    return out


def covered_or_summary(name: str, ir: Any) -> bool:
    """A field `diff` does not compare itself: a summary of another, or one another field decides."""
    how = _special().get(name)
    return how is not None and (how == "summary" or (how.startswith("covered:") and ir.fields.get(how[8:]) is not None))


def _schedule_gap(a: Any, b: Any, steps: Any, rtol: float) -> tuple[float, int] | None:
    """None when two phases values give every step the same lr (within rtol of the peak) over the
    run, else the largest difference and the first step where it occurs."""
    from ..schedule.fields import compare

    diff, top = compare(a, b, steps)
    return None if diff.value <= rtol * top else (diff.value, diff.step)


def _describe(phases: Any) -> str:
    from ..schedule.fields import parse
    from ..schedule.simple import describe

    return describe(parse(phases))


def diff_ir(a: Ingested, b: Ingested, *, rtol: float = DEFAULT_RTOL, differences_only: bool = False) -> DiffResult:
    """`differences_only`: the changed, removed and added fields only (a translation's check of its
    output needs nothing else, for every file of a batch)."""
    rtol = check_rtol(rtol)
    fa = a.source.format if a.source else "?"
    fb = b.source.format if b.source else "?"
    result = DiffResult(fa, fb)
    both = _both(fa, fb)
    fields_a, fields_b = a.ir.fields, b.ir.fields
    aliases_a = a.source.aliases if a.source else {}
    aliases_b = b.source.aliases if b.source else {}

    def change(name: str, va: Any, vb: Any) -> FieldChange:
        return FieldChange(
            name, va.value if va else None, vb.value if vb else None, _keys(va, aliases_a), _keys(vb, aliases_b)
        )

    special = _special()
    for name in sorted(fields_a.keys() | fields_b.keys()):
        va, vb = fields_a.get(name), fields_b.get(name)
        how = special.get(name)
        if how == "summary":
            continue  # a summary of another field, compared through it
        if how is not None and how.startswith("covered:") and (fields_a.get(how[8:]) or fields_b.get(how[8:])):
            continue  # decided by another field (the optimizer's lr by a schedule, which is compared itself)
        if name not in both:
            if (
                not differences_only
                and ((va and va.origin is not Origin.DEFAULT) or (vb and vb.origin is not Origin.DEFAULT))
                and not (va and vb and values_equal(va.value, vb.value, rtol))
            ):  # (both read with --world-size)
                result.inexpressible.append(change(name, va, vb))
                result.inexpressible[-1].unheld = unheld(name, fb if name in expressible(fa) else fa)
            continue
        if va is None or va.value is None:
            if (
                vb is not None
                and vb.value is not None
                and vb.origin is not Origin.DEFAULT
                and not _means_absent(name, vb.value, rtol, fields_a)
            ):
                result.only_b.append(change(name, va, vb))
            continue
        if vb is None or vb.value is None:
            if va.origin is not Origin.DEFAULT and not _means_absent(name, va.value, rtol, fields_b):
                result.only_a.append(change(name, va, vb))
            continue
        if how == "schedule":
            gap = _schedule_gap(va.value, vb.value, a.ir.get("train.steps") or b.ir.get("train.steps"), rtol)
            if gap is not None:
                result.changed.append(change(name, va, vb))
                result.changed[-1].difference = gap
        elif not values_equal(va.value, vb.value, rtol):
            result.changed.append(change(name, va, vb))
    if differences_only:
        return result
    for label, part in (("A", a), ("B", b)):
        shown = part.source.aliases if part.source else {}
        leaves = {
            shown.get(leaf, leaf): part.raw.get(leaf) for leaf, fate in part.fates.items() if fate.kind == "extension"
        }
        if leaves:
            result.extensions[label] = leaves
    return result


def only_b_unheld(a: Ingested, b: Ingested) -> list[FieldChange]:
    """B's values of fields A's format has no key for, that A therefore lacks: the target's own
    (DeepSpeed runs a lone train_batch_size with accumulation 1; Cerebras accumulates by itself)."""
    fa = a.source.format if a.source else "?"
    fb = b.source.format if b.source else "?"
    held = expressible(fa)
    aliases = b.source.aliases if b.source else {}
    found = []
    for name, vb in b.ir.fields.items():
        if name in held or vb.value is None or vb.origin is Origin.DEFAULT or a.ir.get(name) is not None:
            continue
        if covered_or_summary(name, a.ir) or covered_or_summary(name, b.ir):
            continue  # compared through another field, as diff_ir does
        found.append(
            FieldChange(name, None, vb.value, (), _keys(vb, aliases), unheld=unheld(name, fa) if fa != fb else "")
        )
    return found


def unreturned(report: Report, source: Source, back: Source) -> int:
    """Same format and layout: a leaf said `exact` that the output does not give back as it was (a
    carried value no field reads, which verify cannot see) is named lossy; returns how many."""
    before, after = plain_leaves(source), plain_leaves(back)
    leaf_of = {source.aliases.get(leaf, leaf): leaf for leaf in before}
    added = 0
    for i, entry in enumerate(report.entries):
        if entry.status is not Status.EXACT or not entry.source_key:
            continue
        for key in entry.source_key.split(", "):
            leaf = leaf_of.get(key)
            if leaf is None or (leaf in after and after[leaf] == before[leaf]):
                continue
            message: Message = (
                "reads_back_differently",
                {"field": key, "source_value": before[leaf], "written": {}, "read_back": after.get(leaf)},
            )
            report.entries[i] = entry = entry.amended(Status.LOSSY, message, first=False)
            added += 1
    return added


def plain_leaves(source: Source) -> dict[str, Any]:
    return flatten(source.tree)
