"""What neoconv's own reading of both files tells the probes, so that the two sides are recorded at
the same steps: where each file's learning rate phases change (each probe records those steps and
their neighbours), and a run length for a side whose format holds none (a DeepSpeed JSON). A probe
may also ask for a canonical value by name (its PROBE "hints": Model Zoo's model name for a legacy
file, which names none). None of these changes a figure the frameworks compute; a file neoconv
cannot read gets no hints (its framework still says what it makes of it)."""

from __future__ import annotations

from typing import Any

from ..core.errors import NeoconvError
from .probes import probes


def _fields(files: list[str], fmt: str, world_size: int | None, model_config: str | None = None) -> dict[str, Any]:
    from ..services.pipeline import read_ir

    try:
        ingested = read_ir(
            files, fmt, world_size=world_size, **({"model_config": model_config} if model_config else {})
        )
    except (NeoconvError, OSError, ValueError):
        return {}
    fields = {name: value.value for name, value in ingested.ir.fields.items() if value is not None}
    meta = ingested.source.meta if ingested.source is not None else {}
    # a launch script's words as its reader made them (a probe runs the framework's code, not the shell)
    for key in ("argv", "argv_unknown"):
        if meta.get(key):
            fields[f"_{key}"] = meta[key]
    return fields


def _boundaries(fields: dict[str, Any]) -> set[int]:
    from ..schedule.fields import parse

    phases = fields.get("schedule.phases")
    if not phases:
        return set()
    try:
        return {int(t) for t in parse(phases).offsets}
    except (ValueError, TypeError):
        return set()


def hints(
    files_a: list[str],
    fmt_a: str,
    files_b: list[str],
    fmt_b: str,
    world_size: int | None,
    *,
    model_config_b: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The jobs of both sides' probes (files plus what neoconv's reading adds); `model_config_b`: B's
    architecture file when it keeps one apart (a VeOmni output's config.json written beside it)."""
    read_a, read_b = _fields(files_a, fmt_a, world_size), _fields(files_b, fmt_b, world_size, model_config_b)
    steps = [s for s in (read_a.get("train.steps"), read_b.get("train.steps")) if isinstance(s, int) and s > 0]
    lr_at = sorted(_boundaries(read_a) | _boundaries(read_b))
    jobs = []
    for files, fmt, mine, other in ((files_a, fmt_a, read_a, read_b), (files_b, fmt_b, read_b, read_a)):
        job: dict[str, Any] = {
            "files": [_absolute(f) for f in files],
            "lr_at": lr_at,
            "grid_steps": max(steps, default=None),
        }
        own = mine.get("train.steps")
        job["steps_hint"] = own if isinstance(own, int) and own > 0 else (steps[0] if steps else None)
        job.update((key[1:], mine[key]) for key in ("_argv", "_argv_unknown") if key in mine)
        spec = probes().get(fmt)
        for key, name in spec.hints if spec else ():
            if mine.get(name) is not None:
                job[key] = mine[name]
        jobs.append(job)
    return jobs[0], jobs[1]


def _absolute(path: str) -> str:
    import os

    return os.path.abspath(path)
