"""Reading configs: one config (a path, several paths merged, or a mapping) into the Source its
format's reader makes (load), and a Source into the canonical IR with the release it was written for
(read_ir). The translation pipeline's first two stages, `neoconv diff` and `validate` read through here.
Nothing here prints or exits."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from ..core.errors import InputError, NeoconvError, UsageError
from ..core.ir import IR
from ..engine import Ingested, ingest
from ..formats.spec import ModelConfig
from ..io.documents import plain_copy
from ..knowledge.catalogue import catalogue
from ..knowledge.families import set_family_aside, withhold_defaults
from ..knowledge.mapping import load_table
from ..knowledge.registry import get_format
from ..knowledge.schema import release_index
from ..knowledge.source import Source
from ..knowledge.spellings import upgrade
from ..knowledge.undeclared import refuse_undeclared
from ..knowledge.versions import retire, settle
from .arguments import path_arg, path_args

__all__ = ["ConfigInput", "load", "read_ir", "settle_schedule"]

ConfigInput = str | Path | Sequence[str | Path] | Mapping[str, Any]


def load(
    config: ConfigInput, fmt: str, *, layout: str | None = None, model_config: str | Path | Mapping[str, Any] | None = None
) -> Source:
    """Read one config (a path, several paths merged, or an already-parsed mapping).

    `model_config`: the file holding the model architecture, for formats that keep it apart
    (VeOmni's HuggingFace config.json), or its parsed content; readers of other formats refuse it.
    """
    spec = get_format(fmt)
    given: ModelConfig = None
    if model_config is not None:
        if not spec.takes_model_config:
            raise UsageError(f"--model-config: {spec.title} keeps the model architecture in the config itself")
        given = model_config if isinstance(model_config, Mapping) else path_arg(model_config, "model_config")
    if layout is not None and not isinstance(layout, str):
        raise UsageError(f"layout must be a layout name, not {type(layout).__name__}")
    reader = spec.load_reader()
    if isinstance(config, Mapping):
        try:
            tree = plain_copy(dict(config))  # checked and copied: a caller's later change cannot reach the run
        except InputError as exc:
            exc.file = "<config>"
            raise
        return reader.from_tree(tree, model_config=given)
    paths = path_args(config)
    try:
        return reader.read(paths, layout=layout, model_config=given)
    except InputError as exc:
        if exc.file is None and len(paths) == 1:  # a reader's helper (io.flatten) may not know the file
            exc.file = paths[0]
        raise


def read_ir(config: ConfigInput | Source, src: str, **options: Any) -> Ingested:
    """Ingest a config into the canonical IR (with the per-leaf ledger the report is built from)."""
    source = config if isinstance(config, Source) else load(
        config, src, layout=options.get("source_layout"), model_config=options.get("model_config"))
    user = dict(options.get("set_values") or {})
    if options.get("world_size") is not None:
        try:
            user["parallel.world_size"], _ = catalogue()["parallel.world_size"].check(options["world_size"])
        except ValueError as exc:
            raise UsageError(f"world size: {exc}") from None
    table = load_table(src).for_layout(source.layout)
    spelling = get_format(source.format).load_reader().history_key  # the names the key history gives a leaf
    settle(source, table, options.get("source_version"), spelling)
    refuse_undeclared(source, table.title)  # a release whose parser refuses keys it lacks (VeOmni #1090)
    upgrade(source, table)  # older spellings read as today's keys (after the release is told from them)
    retire(source, table, spelling)  # keys of other releases a rule would read: not by this release
    unsupported = set_family_aside(source, table)  # a model family the canonical fields do not cover
    ingested = ingest(source, table, release_index(src, source.version, table.title), user, options.get("context"))
    settle_schedule(ingested.ir)
    if unsupported is not None:
        withhold_defaults(ingested.ir, table)
    empty = not source.tree and get_format(src).empty_allowed  # a config of its framework's defaults
    if not empty and all(fate.kind == "unknown" for fate in ingested.fates.values()):
        raise _not_this_format(source, src, table.title)
    return ingested


def settle_schedule(ir: IR) -> None:
    """The schedule's summaries, and --set of one or of optim.lr applied to the phases (the schedule
    core is imported only for a config with a schedule)."""
    if "schedule.phases" in ir.fields or ir.fields.keys() & _SCHEDULE_INPUTS:
        from ..schedule.fields import settle

        settle(ir)


_SCHEDULE_INPUTS = frozenset({"schedule.warmup_steps", "schedule.decay_steps", "schedule.min_lr", "optim.lr"})


def _not_this_format(source: Source, fmt: str, title: str) -> InputError:
    """A file none of whose keys the declared format knows is another format's, or no config at all:
    translating it would give a config of the target's defaults (exit 0 for /proc/self/status)."""
    from ..formats.detect import detect_tree

    hint = ""
    try:
        guess = detect_tree(source.tree)
        hint = f"; did you mean --from {guess}?" if guess != fmt else ""
    except NeoconvError:
        pass
    first = next(iter(source.tree), None)
    what = f"none of its keys is a {title} parameter" if first is not None else "it has no settings"
    file = source.file_of(first) if first else (source.files[0] if source.files else None)
    return InputError(f"not a {title} config: {what}{hint}", file=file, line=source.line_of(first) if first else None)
