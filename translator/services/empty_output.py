"""The refusal of an output that holds nothing of its source (issue 28).

A file with no model (a shared-settings fragment such as NeoX's local_setup.yml: paths, logging, the
launcher) translated alone into a config.json would be made of the writer's defaults only, a default
GPT-2 the source never described; a config.json translated into DeepSpeed would be `{}`. Whether an
output holds a value of the source is the engine's question (engine.ingest.holds_source, asked of
every translation); this module says why it does not and how to give what it lacks."""

from __future__ import annotations

from ..core.errors import NothingToWrite
from ..core.report import Report, Status
from ..engine import Ingested
from ..formats.spec import WriteResult


def refuse_empty(
    result: WriteResult,
    report: Report,
    ingested: Ingested,
    title: str,
    holds_models: bool,
) -> None:
    """NothingToWrite for an output that holds no value of the source: naming the file, what the
    target misses (the report's `missing` entries so far) and how to give it."""
    needed = [e for e in report.entries if e.status is Status.MISSING and e.target_key]
    if result.document or result.side_files or result.model_config:  # defaults and stand-ins only: the fields
        fields = list(dict.fromkeys(e.fields[0] if e.fields else str(e.target_key) for e in needed))
        said = ", ".join(fields[:3]) + (f" and {len(fields) - 3} more" if len(fields) > 3 else "")
        why = f"the {title} output would hold no setting of the source, only defaults and stand-ins"
        rest = "the model" if holds_models else "the rest of the run"
        hint = f"a fragment of a run? give it with --with beside the file that holds {rest}, or translate that file; "
        hint += "or give those with --set FIELD=VALUE"
    else:  # nothing at all: what each missing key needs, and how to give it
        said = "; ".join(f"{e.target_key}: {e.detail}" for e in needed[:3]) + ("; ..." if len(needed) > 3 else "")
        why = f"the {title} output would hold no setting of the source"
        hint = "give the values with --set, or the file that holds them with --with"
    source = ingested.source
    raise NothingToWrite(
        why + (f": it needs {said}" if said else ""),
        file=source.files[0] if source is not None and source.files else None,
        hint=hint,
    )
