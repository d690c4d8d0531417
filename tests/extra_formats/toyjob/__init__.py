"""A test-only format: a small TOML job config (the shape of torchtitan's `[model]`, `[training]`,
`[optimizer]` tables), proving that a format package outside translator/formats is found, read,
written and tested by every shared test with no edit outside its own folder (docs/adding-a-framework.md).
Its table (toyjob.yaml) and schema (toyjob.schema.json) sit beside it (`data`)."""

from __future__ import annotations

from pathlib import Path

from neoconv.formats.spec import FormatSpec

FORMAT = FormatSpec(
    name="toyjob",
    title="Toy TOML job",
    reader=f"{__name__}.reader",
    writer=f"{__name__}.writer",
    suffix=".toml",
    globs=("*.toml",),
    data=str(Path(__file__).parent),
    editor=None,  # no format-preserving editor reads TOML: a same-format translation writes the plain layout
    empty_allowed=True,  # an empty job file runs with every default
)
