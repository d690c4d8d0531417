"""The translation pipeline, in one place: five named stages, each a function with a typed input and
output, and `translate()` their composition.

    Request -read-> Sources -canonical-> Ingested -write-> Written -check-> Checked -report-> Translation

* read: the run's files loaded by their formats' readers (load: a path, several paths merged, or a
  mapping; a file that says plainly it is another format's is read as that one).
* canonical: every source into the canonical IR with the release it was written for (read_ir), each
  --with companion knowing what the others state; a model family the target cannot hold is refused.
* write: the target table's rules write the IR as the target's leaves (engine/), its writer makes
  the document (formats/), and the report's entries say what became of every source leaf.
* check: the written document read back in memory with the target's own reader, its canonical
  values compared with the source's field by field, with the comparison and tolerance `neoconv diff`
  uses; a difference no lossy/dropped/missing/unknown entry names becomes a `lossy` entry, so
  nothing a translation changes goes unreported. Then the document is validated as the target release
  validates it (validate.py: `neoconv validate`'s own checks), every value it refuses named.
* report: what the report says of the source and the target around its entries.

What the library and the CLI accept is checked before any file is read (the Request): file names,
--set values (against the catalogue) and translate()'s options. `neoconv diff` and `validate` read
through load and read_ir too. Also the Translation it returns (the library's dump() is
services/dumping.py). Nothing here prints or exits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..core.errors import InputError, NeoconvError, UnsupportedFamily, UsageError, WrongFormat
from ..core.ir import DEFAULT_RTOL, IR, Origin, Value
from ..core.report import Entry, Message, Report, Status, said
from ..engine import Ingested, emit, ingest
from ..engine.difference import FieldChange, diff_ir, expressible, only_b_unheld, run_layout, unreturned
from ..engine.entries import provenance
from ..engine.ingest import holds_source
from ..formats.spec import ModelConfig, WriteContext, WriteResult
from ..io.documents import no_file_twice, plain_copy
from ..knowledge.catalogue import catalogue, check_set
from ..knowledge.mapping import load_table
from ..knowledge.repeats import repeats_for, said_once
from ..knowledge.registry import get_format
from ..knowledge.schema import release_index, schema_index
from ..knowledge.source import Source, anchored, collapse, set_family_aside, withhold_defaults
from ..knowledge.versions import (
    downgrade,
    layout_of,
    layout_release,
    no_place,
    refuse_undeclared,
    resolve,
    retire,
    retired,
    settle,
    upgrade,
)
from .target_values import parse_set


def path_arg(value: Any, what: str) -> str:
    """One file name given to the library, as a string; refused with a clear message otherwise."""
    if isinstance(value, bytes):
        raise UsageError(f"{what} is bytes: give a path (str or Path), or parse the text and give the mapping")
    if not isinstance(value, (str, os.PathLike)):
        raise UsageError(f"{what} must be a path (str or Path), not {type(value).__name__}")
    name = os.fspath(value)
    if not isinstance(name, str):
        raise UsageError(f"{what} must be a text path, not bytes")
    if not name:
        raise UsageError(f"{what} is an empty file name")
    if "\0" in name:
        raise UsageError(f"{what} {name!r} contains a NUL byte: no file has such a name")
    return name


def path_args(config: Any) -> list[str]:
    """The file names of a config given as a path or a list of paths."""
    if isinstance(config, (str, bytes, os.PathLike)):
        return [path_arg(config, "config")]
    if not isinstance(config, (list, tuple)):
        raise UsageError(
            f"config must be a path, a list of paths or a mapping of settings, not {type(config).__name__}"
        )
    if not config:
        raise UsageError("no input file given")
    return [path_arg(item, f"config[{i}]") for i, item in enumerate(config)]


# translate()'s options; source_layout and exact_format are for neoconv's own commands
OPTIONS = (
    "set_values",
    "world_size",
    "layout",
    "source_version",
    "target_version",
    "with_files",
    "model_config",
    "output",
    "verify",
    "target_values",
)
_INTERNAL = ("source_layout", "exact_format")


def check_options(src: Any, dst: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """translate()'s options checked before any file is read (the CLI's batch checks them once for
    a whole tree): the same options with set_values and world_size checked. Raises UsageError."""
    get_format(src)
    dst_spec = get_format(dst)
    unknown = [k for k in options if k not in OPTIONS and k not in _INTERNAL]
    if unknown:
        raise UsageError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"translate() takes {', '.join(OPTIONS)}"
        )
    out = dict(options)
    given = options.get("set_values")
    if given is not None:
        if not isinstance(given, Mapping):
            raise UsageError(
                f"set_values must be a mapping of canonical field -> value, not {type(given).__name__}"
                " (parse 'FIELD=VALUE' strings with parse_set)"
            )
        for name, value in given.items():
            if value is None:  # as `--set FIELD=null`: leaving the field out keeps what the source says
                check_set(name, None, "set_values")
                raise UsageError(
                    f"set_values {name}: None is no value; leave the field out to keep what the source says"
                )
        out["set_values"] = {name: check_set(name, value, "set_values") for name, value in given.items()}
    targets = options.get("target_values")
    if targets is not None:
        if not isinstance(targets, Mapping):
            raise UsageError(f"target_values must be a mapping of target key -> value, not {type(targets).__name__}")
        from .target_values import check_target_values

        out["target_values"] = check_target_values(dst, options.get("layout"), plain_copy(dict(targets)))
    if options.get("world_size") is not None:
        size = options["world_size"]
        if isinstance(size, bool) or not isinstance(size, int):
            raise UsageError(f"world_size must be a whole number of GPUs, not {type(size).__name__} {size!r}")
        out["world_size"] = check_set("parallel.world_size", size, "world_size")
    layout = options.get("layout")
    if layout is not None and (not isinstance(layout, str) or layout not in dst_spec.layouts):
        raise UsageError(f"--layout {layout}: {dst} layouts are {', '.join(dst_spec.layouts) or 'none'}")
    for key, fmt in (("source_version", src), ("target_version", dst)):
        if options.get(key) is not None:  # a release label or a name for one; the report shows the name given
            resolve(fmt, options[key], "--from-version" if key == "source_version" else "--to-version")
    companions = options.get("with_files")
    if companions is not None:
        if isinstance(companions, (str, bytes)) or not isinstance(companions, (list, tuple)):
            raise UsageError("with_files must be a list of (path, format) pairs")
        pairs = []
        for item in companions:
            if not (isinstance(item, (list, tuple)) and len(item) == 2):
                raise UsageError(f"with_files item {item!r} is not a (path, format) pair")
            get_format(item[1])
            pairs.append((path_arg(item[0], "with_files path"), item[1]))
        out["with_files"] = pairs
    for key in ("model_config", "output"):
        if options.get(key) is not None:
            out[key] = path_arg(options[key], key)
    if "verify" in options and not isinstance(options["verify"], bool):  # 'no' is a true value
        raise UsageError(f"verify must be True or False, not {type(options['verify']).__name__} {options['verify']!r}")
    return out


__all__ = ["ConfigInput", "Translation", "check_options", "load", "parse_set", "read_ir", "translate"]

ConfigInput = str | Path | Sequence[str | Path] | Mapping[str, Any]


# ---- the pipeline --------------------------------------------------------------------------------


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
    request = Request.of(config, src, dst, options)
    sources = read(request)
    request = request.keeping_layout(sources.main)
    ingested = canonical(sources, request)
    written = write(ingested, request)
    checked = check(written, ingested, request)
    return report(written, checked, ingested, sources, request)


@dataclass(frozen=True)
class Request:
    """What one translation is asked, checked before any file is read: the pipeline's input."""

    config: ConfigInput | Source
    src: str
    dst: str
    layout: str | None  # the target layout
    asked: str | None  # the target release --to-version names, resolved
    options: dict[str, Any]  # translate()'s options, checked (arguments.check_options)

    @classmethod
    def of(cls, config: ConfigInput | Source, src: str, dst: str, options: dict[str, Any]) -> Request:
        options = check_options(src, dst, options)
        spec = get_format(dst)
        asked = resolve(dst, options["target_version"], "--to-version") if options.get("target_version") else None
        layout = options.get("layout") or layout_of(dst, spec.layouts, asked) or spec.default_layout
        return cls(config, src, dst, layout, asked, options)

    def keeping_layout(self, source: Source) -> Request:
        """A same-format translation of a format that keeps_source_layout writes the source's layout unless
        --layout or --to-version asks otherwise (a Model Zoo trainer file stays a trainer file: the default
        legacy layout has no place for some of what it runs, and `migrate` is no downgrade)."""
        spec = get_format(self.dst)
        if not spec.keeps_source_layout or self.src != self.dst or self.options.get("layout") or self.asked:
            return self
        return replace(self, layout=source.layout) if source.layout in spec.layouts else self


@dataclass
class Sources:
    """Stage 1's output: the run's files as their readers give them."""

    main: Source
    format: str  # the format the main config was read as
    read_as: str  # why not the one asked for ("" when it is)
    inputs: ConfigInput | Source  # the main config as given (paths merged with same-format --with files)
    companions: list[tuple[str, str, Source]]  # --with files of other formats: path, format, source


@dataclass
class Written:
    """Stage 3's output: the target document as the writer made it, and the report's entries."""

    result: WriteResult
    report: Report
    layout: str | None
    version: str
    family: Any  # the model family the output is written for (model.family)


@dataclass(frozen=True)
class Checked:
    """Stage 4's output: whether the output could be read back, how many differences that reading
    found that no entry named (now named, as lossy entries), and whether the target release accepts
    it (what it refuses named too); None when not checked."""

    verified: bool | None
    added: int | None
    valid: bool | None


def read(request: Request) -> Sources:
    """Stage 1: the main config (several same-format files merged) and its --with companions, loaded;
    a file that plainly is another format's (a NeoX argument file in JSON) is read as that one."""
    config, src, options = request.config, request.src, request.options
    companions = list(options.get("with_files") or ())
    if not isinstance(config, (Mapping, Source)):
        config = path_args(config)
        no_file_twice(config + [path for path, _ in companions])
        if any(fmt == src for _, fmt in companions):
            # same-format companions (NeoX local_setup.yml) are merged the way the framework merges files
            config = config + [path for path, fmt in companions if fmt == src]
            companions = [(path, fmt) for path, fmt in companions if fmt != src]
    read_as = ""
    try:
        main = _load_main(config, src, options)
    except WrongFormat as exc:
        if options.get("exact_format") or exc.suggested == src:
            raise
        # the file says plainly what it is (a NeoX argument file in JSON): read it as that, and say so
        read_as = f"read as {exc.suggested}: {exc.message.split(':')[0]}"
        src = exc.suggested
        main = _load_main(config, src, options)
    loaded = [(path, fmt, load(path, fmt)) for path, fmt in companions]
    return Sources(main, src, read_as, config, loaded)


def canonical(sources: Sources, request: Request) -> Ingested:
    """Stage 2: every source read into the canonical IR, the companions merged into the main one's;
    a model family the canonical fields do not describe is refused for a target that holds models."""
    options, src = request.options, sources.format
    ingested = read_ir(sources.main, src, **options)
    companion_options = {
        k: v for k, v in options.items() if k not in ("set_values", "source_layout", "model_config", "source_version")
    }
    parts = [read_ir(source, fmt, **companion_options) for _, fmt, source in sources.companions]
    if parts:
        # one run in several files: each is read again knowing what only the others state (NeoX's
        # tensor/pipeline sizes decide how a DeepSpeed batch splits over the GPUs)
        everyone = [ingested, *parts]
        context = _context(ingested, everyone)
        if context:
            ingested = read_ir(sources.inputs, src, **options, context=context)
        for (path, fmt, _), part in zip(sources.companions, parts):
            context = _context(part, everyone)
            ingested.merge(read_ir(path, fmt, **companion_options, context=context) if context else part)
    _refuse_unsupported_family(ingested, src, request.dst)
    return ingested


def write(ingested: Ingested, request: Request) -> Written:
    """Stage 3: the IR written by the target table's rules and the target's writer, and the report's
    entries: what became of every source leaf, what the writer changed, added or moved."""
    dst, layout, source = request.dst, request.layout, ingested.source
    assert source is not None
    src = source.format
    table = load_table(dst).for_layout(layout)
    version = request.asked or layout_release(dst, request.options.get("layout")) or table.versions[0]
    writer = get_format(dst).load_writer()
    # leaves with no place in the target's layout (a writer that restructures one) or release (a retired key)
    homeless = no_place(writer.unplaceable, layout, version, retired(table, version) if src == dst else None)
    once = repeats_for(source, table, version) if src == dst else []  # a key given twice, which the release refuses
    leaves, report = emit(ingested, table, dst, version=version, unplaceable=homeless)
    if src == dst:  # carried as written: a text the target release's Literal lacks is no exact value there
        from ..engine.target_names import unknown_at_target

        report.entries = unknown_at_target(report.entries, leaves, table, dst, version)
    if once:  # written once (the text is the plain dump: the source's repeats them)
        report.entries, report.target["written_once"] = said_once(report.entries, once, table.title, version), once
    if src == dst and layout == source.layout:
        # a family's own defaults, added for reading: the same release's file says them by leaving them out
        for key in source.meta.get("family_defaults", ()):
            leaves.pop(key, None)
            report.entries = [e for e in report.entries if e.source_key != key]
    respelled = downgrade(leaves, table, version)  # keys the target release knows under an older name
    if respelled:
        report.entries = [e.relocated(respelled) if e.target_key else e for e in report.entries]
    family = ingested.ir.get("model.family")
    output = request.options.get("output")
    ctx = WriteContext(
        layout=layout,
        version=version,
        source_format=src,
        source_layout=source.layout,
        source_version=source.version,
        model_family=family,
        sources=", ".join(Path(f).name for f in source.files),
        output=Path(output).name if output else None,
        source_shape=dict(source.meta) if src == dst else source.meta.get("any_target", {}),  # (Source.meta)
    )
    result = anchored(lambda: writer.write(leaves, ctx), source, report.entries)  # a refusal at its source key
    held = (result.document or result.side_files or result.model_config) and holds_source(report.entries, ingested)
    if not (held or request.options.get("target_values")):
        from .empty_output import refuse_empty  # only a refusal needs it

        holds_models = bool(table.rules_for_field("model.hidden_size"))
        refuse_empty(result, report, ingested, get_format(dst).title, holds_models)
    _report_written(report, result)
    if src != dst:  # a family not supported, into a format with no architecture: one entry for its block
        collapse(report, source, load_table(src))
    if request.options.get("target_values"):  # keys only the target has, given with --set DST:KEY=VALUE
        from .target_values import apply_target_values

        apply_target_values(report, result.document, dst, request.options["target_values"])
    return Written(result, report, layout, version, family)


def check(written: Written, ingested: Ingested, request: Request) -> Checked:
    """Stage 4: the written document read back (in memory) with the target's reader and table, and
    every difference from the source that no entry names named, as lossy; then validated at the target
    release, every value it refuses named (validate.py; unless verify=False). The document is read
    once where the validation's reading is the read-back's too (validate.shared_reading)."""
    if not request.options.get("verify", True):
        return Checked(None, None, None)
    from .validate import check_valid, validate_output

    out, model_config = written.result, written.result.model_config
    if model_config is None and get_format(request.dst).takes_model_config:
        model_config = {}  # never a file found on disk relative to wherever the library runs
    found = validate_output(out.document, request.dst, written.version, out.side_files, model_config, read_ir)
    reading = None if isinstance(found, NeoconvError) else found.reading
    try:
        back = read_back(out.document, request.dst, written.layout, written.version, ingested, model_config, reading)
    except NeoconvError as exc:
        readback_failed(written.report, exc)
        verified, added = False, None
    else:
        verified, added = True, verify(written.report, ingested, back)
        if request.src == request.dst and ingested.source and back.source and written.layout == ingested.source.layout:
            added += unreturned(written.report, ingested.source, back.source)
    valid = check_valid(written.report, found, request.dst, written.version, out.side_files)
    return Checked(verified, added, valid)


def report(written: Written, checked: Checked, ingested: Ingested, sources: Sources, request: Request) -> Translation:
    """Stage 5: what the report says around its entries (the source's files, format, layout and
    release; the target's; the check's outcome), and the Translation the library returns."""
    source, result, dst, out = ingested.source, written.result, request.dst, written.report
    assert source is not None
    companions = [f for part in ingested.companions if part.source for f in part.source.files]
    out.source = {
        "format": source.format,
        "files": source.files + companions,
        "layout": source.layout,
        **(source.release.to_json() if source.release else {"version": source.version}),
    }
    note = "; ".join(filter(None, (sources.read_as, *source.warnings, *source.reading_notes)))
    if note:
        out.source["note"] = note
    if source.meta.get("unsupported_family"):  # its architecture is carried (same format) or dropped, not read
        out.source["unsupported_family"] = source.meta["unsupported_family"]["family"]
    out.target.update(
        {"format": dst, "layout": written.layout, "version": written.version, "model_family": written.family}
    )
    if result.side_files:  # what diff, validate and prove read with the output (services/side_files.py)
        from .side_files import listing

        out.target["side_files"] = listing(list(result.side_files), dst)
    asked = str(request.options.get("target_version") or "").strip()
    if request.asked is not None and asked != request.asked:
        out.target["version_asked"] = asked  # a PR, date or alias: its release
    if any(e.status is Status.MISSING for e in out.entries):
        # outputs show what is left as `# MISSING:` lines; a format without comments (JSON): the report alone
        out.target["missing_marked"] = get_format(dst).comments
    if checked.verified is not None:
        out.target["verified"] = checked.verified
        if checked.added is not None:
            out.target["added_by_verification"] = checked.added
    if checked.valid is not None:
        out.target["valid"] = checked.valid
    return Translation(result.document, out, ingested.ir, dst, result, result.side_files, dict(source.texts))


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

                from ..io.preserve.tree import same
                from ..io.preserve.yamlsource import safe_load

                try:
                    if not same(safe_load(marked), safe_load(text)):
                        return text
                except yaml.YAMLError:
                    return text
            return marked
        return text


# ---- reading (stages 1 and 2) --------------------------------------------------------------------


def load(
    config: ConfigInput,
    fmt: str,
    *,
    layout: str | None = None,
    model_config: str | Path | Mapping[str, Any] | None = None,
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
    source = (
        config
        if isinstance(config, Source)
        else load(config, src, layout=options.get("source_layout"), model_config=options.get("model_config"))
    )
    user = dict(options.get("set_values") or {})
    if options.get("world_size") is not None:
        try:
            user["parallel.world_size"], _ = catalogue()["parallel.world_size"].check(options["world_size"])
        except ValueError as exc:
            raise UsageError(f"world size: {exc}") from None
    table = load_table(src).for_layout(source.layout)
    reader = get_format(source.format).load_reader()
    settle(source, table, options.get("source_version"), reader.history_key)  # history_key: a leaf's names there
    if reader.at_release is not None:
        reader.at_release(source)
    refuse_undeclared(source, table.title)  # a release whose parser refuses keys it lacks (VeOmni #1090)
    upgrade(source, table)  # older spellings read as today's keys (after the release is told from them)
    retire(source, table, reader.history_key)  # keys of other releases a rule would read: not by this release
    unsupported = set_family_aside(source, table, "model.family" in user)  # a family the canonical fields do not cover
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


def _load_main(config: ConfigInput | Source, src: str, options: dict[str, Any]) -> Source:
    if isinstance(config, Source):
        return config
    return load(config, src, layout=options.get("source_layout"), model_config=options.get("model_config"))


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
    if family and dst not in family.get("held_by", ()) and load_table(dst).rules_for_field("model.hidden_size"):
        title = get_format(dst).title
        raise UnsupportedFamily(
            f"a {family['what']} config: {title} holds decoder-only transformer language models, and neoconv does not turn "
            f"one into the other",
            file=source.file_of(family.get("leaf", "")) if source else None,
            line=source.line_of(family["leaf"]) if source and "leaf" in family else None,
            hint=f"{src}2{src} migrates it within its framework; batch --skip-unsupported skips such files",
        )


# ---- writing (stage 3) ---------------------------------------------------------------------------


def _report_written(report: Report, written: WriteResult) -> None:
    """What the writer says about its document, into the report: values it had to change (a layout
    migration), target keys the run needs that no canonical field gives, where restructured leaves went."""
    if written.amended:
        report.entries = [_amended(e, written.amended) for e in report.entries]
    said_missing = {e.target_key for e in report.entries if e.status is Status.MISSING}
    for extra in written.extra_entries:
        if extra.status is Status.MISSING and extra.target_key in said_missing:
            continue  # the table already says the key is missing, and why
        report.entries.append(
            Entry(
                extra.source_key, extra.target_key, extra.status, extra.detail, extra.fields, extra.kind, extra.values
            )
        )
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


# ---- the check (stage 4) -------------------------------------------------------------------------


# statuses that tell the user a value did not survive as it was
NAMING = frozenset({Status.LOSSY, Status.DROPPED, Status.MISSING, Status.UNKNOWN})


def read_back(
    document: Mapping[str, Any],
    fmt: str,
    layout: str | None,
    version: str,
    source: Ingested,
    model_config: Mapping[str, Any] | None,
    reading: Ingested | None = None,
) -> Ingested:
    """The written document ingested with the target's reader and table, as a user would read it:
    what the user gave on the command line that the target cannot hold (--world-size) is given
    again, as `neoconv diff --world-size` would; nothing else of the source is known. `reading`:
    the validation's reading of the same document, taken where it is the same reading."""
    back = load(document, fmt, model_config=model_config) if model_config is not None else load(document, fmt)
    back.version = version  # read as the release it was written for, its older spellings as today's keys
    table = load_table(fmt).for_layout(back.layout or layout)
    upgrade(back, table)
    family = set_family_aside(back, table)
    kept = expressible(fmt)
    given = {
        name: value for name, value in source.ir.fields.items() if value.origin is Origin.USER and name not in kept
    }
    given.update(run_layout(source.ir, fmt))  # the model-parallel unit the run hands the target (DeepSpeed's mpu)
    if reading is not None:  # the validation's reading of the same document, when it is this one (validate.py)
        from .validate import shared_reading

        if (shared := shared_reading(reading, back, table, given, _SCHEDULE_INPUTS | {"schedule.phases"})) is not None:
            return shared
    read = ingest(back, table, schema_index(fmt), None, given, ledger=False)
    if family is not None:
        withhold_defaults(read.ir, table)
    settle_schedule(read.ir)
    return read


def verify(report: Report, source: Ingested, back: Ingested, rtol: float = DEFAULT_RTOL) -> int:
    """Name every difference between the source and its read-back that no entry names; returns
    how many had to be named."""
    result = diff_ir(source, back, rtol=rtol, differences_only=True)
    named = {name for e in report.entries if e.status in NAMING for name in e.fields}
    # a value only the output has is named by the entry that says it was written (added for the target)
    added_named = named | {name for e in report.entries if e.status is Status.DEFAULTED for name in e.fields}
    added = 0
    for change in (*result.changed, *result.only_a, *result.only_b):
        if change.field in (added_named if change.a is None else named):
            continue
        _name(report, change, source, back.ir.fields.get(change.field), back.raw)
        named.add(change.field)
        added += 1
    for change in only_b_unheld(source, back):  # the target's own values: said, and no loss
        # (given by the output's keys, or derived from them and --world-size: a data-parallel size)
        if change.field not in added_named:
            report.entries.append(_target_value(change, source, back))
    return added


def _target_value(change: FieldChange, source: Ingested, back: Ingested) -> Entry:
    src = source.table.title if source.table else "the source"
    dst = back.table.title if back.table else "the target"
    why = source.table.absent.get(change.field, "") if source.table else ""
    # a value no key gives itself is said with what it came from (the output's keys, --set values)
    keys = tuple(change.b_keys) if back.ir.fields[change.field].source_keys else ()
    came = list(keys) or provenance(back, change.field)
    message: Message = (
        "target_value",
        {"title": dst, "field": change.field, "value": change.b, "keys": came, "source": src, "why": why},
    )
    return said(None, ", ".join(keys) or None, Status.DEFAULTED, (message,), (change.field,), keys)


def _name(
    report: Report, change: FieldChange, source: Ingested, after: Value | None, written: Mapping[str, Any]
) -> None:
    keys = [k for k in (after.source_keys if after else ()) if k in written]
    message: Message = (
        "reads_back_differently",
        {
            "field": change.field,
            "source_value": change.a,
            "written": {k: written[k] for k in keys},
            "read_back": change.b,
        },
    )
    # the leaves the value came from keep their one entry, now lossy; a default's loss gets its own
    before = source.ir.fields.get(change.field)
    aliases = source.source.aliases if source.source else {}
    leaves = {aliases.get(k, k) for k in before.source_keys} if before else set()
    hit = False
    for i, entry in enumerate(report.entries):
        if entry.status in _AMENDABLE and (change.field in entry.fields or entry.source_key in leaves):
            report.entries[i] = _lossy(entry, change.field, message)
            hit = True
    if not hit:
        report.entries.append(
            said(None, ", ".join(keys) or None, Status.LOSSY, (message,), (change.field,), tuple(keys))
        )


_AMENDABLE = (Status.EXACT, Status.CONVERTED, Status.DEFAULTED)


def _lossy(entry: Entry, name: str, message: Message) -> Entry:
    fields = entry.fields if name in entry.fields else (*entry.fields, name)
    # a defaulted entry names a key the file lacks; as a loss of that default it has no source leaf
    source_key = None if entry.status is Status.DEFAULTED else entry.source_key
    return entry.amended(Status.LOSSY, message, first=False, source_key=source_key, fields=fields)


def readback_failed(report: Report, exc: NeoconvError) -> None:
    """The output cannot even be read back: say so (the target framework would refuse it too)."""
    report.entries.append(said(None, None, Status.LOSSY, (("unreadable_output", {"message": exc.message}),)))
