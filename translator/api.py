"""Library API: translate(), load(), dump() (parse_set, check_options: arguments.py). Nothing here
prints or exits."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .arguments import check_options, parse_set, path_arg, path_args
from .catalogue import catalogue
from .engine import Ingested, emit, ingest
from .errors import InputError, NeoconvError, UnsupportedFamily, UsageError, WrongFormat
from .formats.spec import ModelConfig, WriteContext, WriteResult
from .io import plain_copy
from .ir import IR, Origin, Value
from .mapping import load_table
from .registry import get_format
from .report import Entry, Report, Status
from .schema import release_index
from .source import Source
from .families import collapse, set_family_aside, withhold_defaults
from .spellings import downgrade, upgrade
from .undeclared import refuse_undeclared
from .versions import layout_of, layout_release, resolve, retire, settle

__all__ = ["ConfigInput", "Translation", "check_options", "dump", "load", "parse_set", "read_ir", "translate"]

ConfigInput = str | Path | Sequence[str | Path] | Mapping[str, Any]


@dataclass
class Translation:
    """The translated config document, its report, and the canonical IR it went through."""

    config: dict[str, Any]
    report: Report
    ir: IR
    format: str
    written: WriteResult  # what the writer made of it (header, side files, ...)
    side_files: dict[str, str] = field(default_factory=dict)  # written beside the output (e.g. HF config.json)
    # the source files' texts as read (opened once): a migration edits this text, not a second read of the file
    source_texts: dict[str, str] = field(default_factory=dict)

    def dump(self) -> str:
        """The translated config as text, exactly as the CLI writes it (YAML: with a `# MISSING:`
        line for each value the run still needs)."""
        text = get_format(self.format).load_writer().dump(self.written)
        return self.marked(text)

    def marked(self, text: str, *, check: bool = False) -> str:
        """`text` (this translation's document as YAML) with its `# MISSING:` lines; `check`: a text
        neoconv did not write (a source's, edited): kept unmarked if the marks would change what it
        loads to (a comment line inside a block scalar)."""
        if self.report.target.get("missing_marked"):
            from .target_values import mark_missing

            marked = mark_missing(text, self.report, self.format)
            if check and marked != text:
                import yaml

                from .preserve.tree import same
                from .preserve.yamlsource import safe_load

                try:
                    if not same(safe_load(marked), safe_load(text)):
                        return text
                except yaml.YAMLError:
                    return text
            return marked
        return text


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


def dump(config: Mapping[str, Any], fmt: str, meta: Mapping[str, Any] | None = None) -> str:
    """Serialise a config document in a format's own style, with its header comment. `meta` may give
    the header's facts: `from` (source file names), `layout`, `model_family`, `output`. What no config
    file can hold (an object, a set, a cycle; NaN or infinity in JSON) is an InputError naming the key."""
    spec = get_format(fmt)
    if not isinstance(config, Mapping):
        raise UsageError(f"dump() takes a mapping (a config document), not {type(config).__name__}")
    if meta is not None and not isinstance(meta, Mapping):
        raise UsageError(f"meta must be a mapping, not {type(meta).__name__}")
    document = plain_copy(dict(config), what="the document")
    facts = dict(meta or {})
    ctx = WriteContext(layout=facts.get("layout"), model_family=facts.get("model_family"),
                       sources=str(facts.get("from") or ""), output=facts.get("output"))  # fmt: skip
    writer = spec.load_writer()
    return writer.dump(WriteResult(document, writer.header(document, ctx)))


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
    settle(source, table, options.get("source_version"))
    refuse_undeclared(source, table.title)  # a release whose parser refuses keys it lacks (VeOmni #1090)
    upgrade(source, table)  # older spellings read as today's keys (after the release is told from them)
    retire(source, table)  # keys of other releases a rule would read: not by this release
    unsupported = set_family_aside(source, table)  # a model family the canonical fields do not cover
    ingested = ingest(source, table, release_index(src, source.version, table.title), user, options.get("context"))
    settle_schedule(ingested.ir)
    if unsupported is not None:
        withhold_defaults(ingested.ir, table)
    if all(fate.kind == "unknown" for fate in ingested.fates.values()):
        raise _not_this_format(source, src, table.title)
    return ingested


def settle_schedule(ir: IR) -> None:
    """The schedule's summaries, and --set of one or of optim.lr applied to the phases (the schedule
    core is imported only for a config with a schedule)."""
    if "schedule.phases" in ir.fields or ir.fields.keys() & _SCHEDULE_INPUTS:
        from .schedule.fields import settle

        settle(ir)


_SCHEDULE_INPUTS = frozenset({"schedule.warmup_steps", "schedule.decay_steps", "schedule.min_lr", "optim.lr"})


def _not_this_format(source: Source, fmt: str, title: str) -> InputError:
    """A file none of whose keys the declared format knows is another format's, or no config at all:
    translating it would give a config of the target's defaults (exit 0 for /proc/self/status)."""
    from .detect import detect_tree

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


def _no_file_twice(paths: list[str]) -> None:
    """The same file given twice (as an input and with --with, or twice with --with) would be
    merged twice: refused, naming both."""
    seen: dict[tuple[int, int] | str, str] = {}
    for path in paths:
        try:
            info = os.stat(path)
            key: tuple[int, int] | str = (info.st_dev, info.st_ino)
        except (OSError, ValueError):
            key = os.path.abspath(path) if path != "-" else path
        if key in seen:
            same = "" if seen[key] == path else f" (as {seen[key]})"
            raise UsageError(f"{path} is given twice{same}: each file is read once; drop the repeat")
        seen[key] = path


def _context(part: Ingested, everyone: list[Ingested]) -> dict[str, Value]:
    """What the other files of one run state explicitly and this file's format has no key for."""
    keyed = {name for rule in part.table.rules if rule.keys for name in rule.fields} if part.table else set()
    out: dict[str, Value] = {}
    for other in everyone:
        if other is not part:
            for name, value in other.ir.fields.items():
                if value.origin is Origin.EXPLICIT and name not in keyed:
                    out.setdefault(name, value)
    return out


def translate(config: ConfigInput, src: str, dst: str, **options: Any) -> Translation:
    """Translate a config from format `src` to format `dst`.

    Options: ``set_values`` (canonical field -> value, as ``--set``), ``target_values`` (key only
    the target has -> value, as ``--set DST:KEY=VALUE``: written, and its `missing` entry gone), ``world_size`` (GPUs of the
    source run), ``layout`` (target layout), ``source_version`` / ``target_version``,
    ``with_files`` ([(path, format)]: companion files of other formats, e.g. a ds_config.json),
    ``model_config`` (VeOmni: the HuggingFace config.json holding the architecture),
    ``output`` (where the translation will be written: side files are named after it, e.g.
    VeOmni's ``OUT_STEM.config.json``; without it ``config.json``), ``verify`` (default True:
    read the output back and name, as lossy, any difference no entry names).
    Raises NeoconvError subclasses for bad input (an unknown option is a UsageError); never
    prints or exits.
    """
    options = check_options(src, dst, options)
    dst_spec = get_format(dst)
    asked = resolve(dst, options["target_version"], "--to-version") if options.get("target_version") else None
    layout = options.get("layout") or layout_of(dst, dst_spec.layouts, asked) or dst_spec.default_layout
    ingested, src, read_as = _read_run(config, src, options)
    _refuse_unsupported_family(ingested, src, dst)
    table = load_table(dst).for_layout(layout)
    version = asked or layout_release(dst, options.get("layout")) or table.versions[0]
    writer = dst_spec.load_writer()
    # a writer that restructures a layout says which leaves have no place in it (same-format)
    unplaceable = writer.unplaceable
    leaves, report = emit(
        ingested, table, dst, version=version,
        unplaceable=(lambda leaf: unplaceable(leaf, layout, version)) if unplaceable is not None else None,
    )  # fmt: skip
    if src == dst and layout == ingested.source.layout if ingested.source else False:
        # a family's own defaults, added for reading: the same release's file says them by leaving them out
        for key in ingested.source.meta.get("family_defaults", ()) if ingested.source else ():
            leaves.pop(key, None)
            report.entries = [e for e in report.entries if e.source_key != key]
    respelled = downgrade(leaves, table, version)  # keys the target release knows under an older name
    if respelled:
        report.entries = [e.relocated(respelled) if e.target_key else e for e in report.entries]
    source = ingested.source
    assert source is not None
    family = ingested.ir.get("model.family")
    ctx = WriteContext(
        layout=layout, version=version, source_format=src, source_layout=source.layout, model_family=family,
        sources=", ".join(Path(f).name for f in source.files),
        output=Path(options["output"]).name if options.get("output") else None,
        source_shape=dict(source.meta) if src == dst else {},  # what the reader noted about the file's own shape
    )  # fmt: skip
    written = writer.write(leaves, ctx)
    _report_written(report, written)
    if src != dst:  # a family not supported, into a format with no architecture: one entry for its block
        collapse(report, source, load_table(src))
    if options.get("target_values"):  # keys only the target has, given with --set DST:KEY=VALUE
        from .target_values import apply_target_values

        apply_target_values(report, written.document, dst, options["target_values"])
    companions = [f for part in ingested.companions if part.source for f in part.source.files]
    report.source = {"format": src, "files": source.files + companions, "layout": source.layout,
                     **(source.release.to_json() if source.release else {"version": source.version})}  # fmt: skip
    note = "; ".join(filter(None, (read_as, *source.warnings)))
    if note:
        report.source["note"] = note
    if source.meta.get("unsupported_family"):  # its architecture is carried (same format) or dropped, not read
        report.source["unsupported_family"] = source.meta["unsupported_family"]["family"]
    report.target = {"format": dst, "layout": layout, "version": version, "model_family": family}
    if asked is not None and str(options["target_version"]).strip() != asked:
        report.target["version_asked"] = str(options["target_version"]).strip()  # a PR, date or alias: its release
    if any(e.status is Status.MISSING for e in report.entries):
        # YAML outputs show what is left as `# MISSING:` lines; JSON has no comments: the report alone says it
        report.target["missing_marked"] = dst_spec.syntax == "yaml"
    if options.get("verify", True):
        model_config = written.model_config
        if model_config is None and dst_spec.takes_model_config:
            model_config = {}  # never a file found on disk relative to wherever the library runs
        _verify(report, ingested, written.document, dst, layout, version, model_config, written.side_files)
    return Translation(written.document, report, ingested.ir, dst, written, written.side_files, dict(source.texts))


def _read_run(config: ConfigInput | Source, src: str, options: dict[str, Any]) -> tuple[Ingested, str, str]:
    """The source of one run, with its --with files: (ingested, the format it was read as, why
    not the one asked for, or "")."""
    companions = list(options.get("with_files") or ())
    if not isinstance(config, (Mapping, Source)):
        config = path_args(config)
        _no_file_twice(config + [path for path, _ in companions])
        if any(fmt == src for _, fmt in companions):
            # same-format companions (NeoX local_setup.yml) are merged the way the framework merges files
            config = config + [path for path, fmt in companions if fmt == src]
            companions = [(path, fmt) for path, fmt in companions if fmt != src]
    read_as = ""
    try:
        ingested = read_ir(config, src, **options)
    except WrongFormat as exc:
        if options.get("exact_format") or exc.suggested == src:
            raise
        # the file says plainly what it is (a NeoX argument file in JSON): read it as that, and say so
        read_as = f"read as {exc.suggested}: {exc.message.split(':')[0]}"
        src = exc.suggested
        ingested = read_ir(config, src, **options)
    companion_options = {k: v for k, v in options.items()
                         if k not in ("set_values", "source_layout", "model_config", "source_version")}  # fmt: skip
    parts = [read_ir(path, fmt, **companion_options) for path, fmt in companions]
    if parts:
        # one run in several files: each is read again knowing what only the others state (NeoX's
        # tensor/pipeline sizes decide how a DeepSpeed batch splits over the GPUs)
        everyone = [ingested, *parts]
        context = _context(ingested, everyone)
        if context:
            ingested = read_ir(config, src, **options, context=context)
        for (path, fmt), part in zip(companions, parts):
            context = _context(part, everyone)
            ingested.merge(read_ir(path, fmt, **companion_options, context=context) if context else part)
    return ingested, src, read_as


# attention kinds that are whole non-transformer models (a mix with attention layers stays lossy)
_NOT_ATTENTION = {"mamba": "Mamba (state-space model)", "rwkv": "RWKV (recurrent model)"}


def _refuse_unsupported_family(ingested: Ingested, src: str, dst: str) -> None:
    """A model family the canonical fields do not describe (BERT, T5, ViT, ...) is not turned into
    a decoder language model of another format: only its own format can hold it."""
    source = ingested.source
    family = source.meta.get("unsupported_family") if source is not None and src != dst else None
    kind = ingested.ir.get("model.attention_kind")
    if src != dst and kind in _NOT_ATTENTION:  # every layer a state-space or recurrent block (NeoX's Mamba, RWKV)
        family = {"what": _NOT_ATTENTION[kind]}
    # a format with no architecture of its own (DeepSpeed JSON) carries the rest of the run
    if family and load_table(dst).rules_for_field("model.hidden_size"):
        title = get_format(dst).title
        raise UnsupportedFamily(
            f"a {family['what']} config: {title} holds decoder-only transformer language models, and neoconv does not turn "
            f"one into the other", file=source.files[0] if source and source.files else None,
            hint=f"{src}2{src} migrates it within its framework; batch --skip-unsupported skips such files",
        )


def _report_written(report: Report, written: WriteResult) -> None:
    """What the writer says about its document, into the report: values it had to change (a layout
    migration), target keys the run needs that no canonical field gives, where restructured leaves went."""
    if written.amended:
        report.entries = [_amended(e, written.amended) for e in report.entries]
    said_missing = {e.target_key for e in report.entries if e.status is Status.MISSING}
    for extra in written.extra_entries:
        if extra.status is Status.MISSING and extra.target_key in said_missing:
            continue  # the table already says the key is missing, and why
        report.entries.append(Entry(extra.source_key, extra.target_key, extra.status, extra.detail, extra.fields,
                                    extra.kind, extra.values))  # fmt: skip
    moved, reshaped, place_of = written.target_paths, written.reshaped, written.place_of
    if moved or place_of:

        def where(key: str) -> str:
            return moved.get(key) or (place_of and place_of(key)) or key

        def shown_at(key: str) -> str:
            return where(key) if written.value_paths is None or key in written.value_paths else key

        def relocated(e: Entry) -> Entry:
            why = [reshaped[k] for k in e.targets if k in reshaped]
            moved_entry = e.relocated(where, shown_at)
            if why and e.status is Status.EXACT:  # a scheduler written in another form: its reason alone
                return moved_entry._replace(status=Status.CONVERTED, detail="; ".join(why), kind="", values=None)
            return moved_entry

        report.entries = [relocated(e) if e.target_key else e for e in report.entries]


def _amended(entry: Entry, amend: dict[str, tuple[Status, str]]) -> Entry:
    keys = entry.target_key.split(", ") if entry.target_key else []
    hit = next((amend[k] for k in keys if k in amend), None)
    if hit is None:
        return entry
    status, why = hit
    return entry._replace(status=Status(status), detail="; ".join(x for x in (why, entry.detail) if x))


def _verify(
    report: Report, ingested: Ingested, document: dict[str, Any], dst: str, layout: str | None, version: str,
    model_config: Mapping[str, Any] | None, side_files: Mapping[str, str],
) -> None:  # fmt: skip
    """Read the written document back (in memory) and name what reading it back does not recover;
    then validate it as the target release would, and name what that release refuses."""
    from .validity import check_valid
    from .verify import read_back, readback_failed, verify

    try:
        back = read_back(document, dst, layout, version, ingested, model_config)
    except NeoconvError as exc:
        readback_failed(report, exc)
        report.target["verified"] = False
    else:
        report.target["verified"] = True
        report.target["added_by_verification"] = verify(report, ingested, back)
    report.target["valid"] = check_valid(report, document, dst, version, side_files, model_config)
