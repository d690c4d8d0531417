"""An output that holds nothing of its source is not written (issue 28).

A file with no model (a shared-settings fragment such as NeoX's local_setup.yml: paths, logging, the
launcher) translated alone into a config.json would be made of the writer's defaults only, a default
GPT-2 the source never described; a config.json translated into DeepSpeed would be `{}`. What the
output holds is judged from the report's entries: a written entry carries the source when it names a
leaf of the source files (or a --set value) and says the value was carried, converted or
approximated, or when a field it writes was read from the files or given by the user. Defaults,
stand-ins for missing values and keys a writer adds are no content of the source."""

from __future__ import annotations

from typing import Any, Mapping

from ..core.errors import NothingToWrite
from ..core.ir import Origin
from ..core.report import Entry, Report, Status
from ..engine import Ingested
from ..formats.spec import WriteResult

# what a written entry says when the value it writes is the source's (as written, converted,
# approximated, or carried as a same-format file's unknown key); `defaulted`/`missing` write defaults
# and stand-ins, `dropped` writes nothing
_CARRIED = frozenset({Status.EXACT, Status.CONVERTED, Status.LOSSY, Status.UNKNOWN})
_SET = "--set "  # the source key of a value given with --set FIELD=VALUE


def refuse_empty(
    result: WriteResult,
    report: Report,
    ingested: Ingested,
    title: str,
    options: Mapping[str, Any],
    holds_models: bool,
) -> WriteResult:
    """The result, unless it would hold no value of the source: then NothingToWrite, naming the file,
    what the target misses (the report's `missing` entries so far) and how to give it."""
    leaves = _leaves(ingested)
    if options.get("target_values") or any(_carries(e, ingested, leaves) for e in report.entries):
        return result
    needed = [e for e in report.entries if e.status is Status.MISSING and e.target_key]
    if result.document or result.side_files or result.model_config:  # defaults and stand-ins only: the fields
        fields = list(dict.fromkeys(e.fields[0] if e.fields else e.target_key for e in needed))
        said = ", ".join(fields[:3]) + (f" and {len(fields) - 3} more" if len(fields) > 3 else "")
        why = f"the {title} output would hold no setting of the source, only defaults and stand-ins"
        give = "or give those with --set FIELD=VALUE"
    else:  # nothing at all: what each missing key needs, and how to give it
        said = "; ".join(f"{e.target_key}: {e.detail}" for e in needed[:3]) + ("; ..." if len(needed) > 3 else "")
        why, give = f"the {title} output would hold no setting of the source", "or give the values with --set"
    rest = "the model" if holds_models else "the rest of the run"
    source = ingested.source
    raise NothingToWrite(
        why + (f": it needs {said}" if said else ""),
        file=source.files[0] if source is not None and source.files else None,
        hint=f"a fragment of a run? give it with --with beside the file that holds {rest}, or translate that file; {give}",
    )


def _carries(entry: Entry, ingested: Ingested, leaves: set[str]) -> bool:
    """The entry writes a value of the source: a leaf of its files, a --set value, or a field read
    from them (derived from what the files or the user gave)."""
    if not entry.target_key or entry.status not in _CARRIED:
        return False
    keys = (entry.source_key or "").split(", ")
    if any(key.startswith(_SET) or key in leaves for key in keys if key):
        return True
    fields = ingested.ir.fields
    return any(name in fields and fields[name].origin is not Origin.DEFAULT for name in entry.fields)


def _leaves(ingested: Ingested) -> set[str]:
    """The leaves of the source files, as the tables see them and as the user wrote them."""
    found: set[str] = set()
    for part in (ingested, *ingested.companions):
        found.update(part.fates)
        if part.source is not None:
            found.update(part.source.aliases.values())
    return found
