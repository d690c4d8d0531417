"""The translation pipeline, in one place: five named stages, each a function with a typed input and
output, and `translate()` their composition.

    Request -read-> Sources -canonical-> Ingested -write-> Written -check-> Checked -report-> Translation

* read: the run's files loaded by their formats' readers (a file that says plainly it is another
  format's is read as that one); reading.py does the loading.
* canonical: every source into the canonical IR (each --with companion knowing what the others
  state), refused if it is a model family the target cannot hold (reading.py, engine/).
* write: the target table's rules write the IR as the target's leaves, its writer makes the
  document, and the report's entries say what became of every source leaf (engine/, formats/).
* check: the written document read back in memory and compared with the source (verify.py).
* report: what the report says of the source and the target around its entries.

Also the library's dump() and the Translation it returns. Nothing here prints or exits."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..core.errors import NeoconvError, UnsupportedFamily, UsageError, WrongFormat
from ..core.ir import IR, Origin, Value
from ..core.report import Entry, Report, Status
from ..engine import Ingested, emit
from ..formats.spec import WriteContext, WriteResult
from ..io.documents import plain_copy
from ..knowledge.families import collapse
from ..knowledge.mapping import load_table
from ..knowledge.registry import get_format
from ..knowledge.source import Source
from ..knowledge.spellings import downgrade
from ..knowledge.versions import layout_of, layout_release, resolve
from .arguments import check_options, parse_set, path_args
from .reading import ConfigInput, load, read_ir

__all__ = ["ConfigInput", "Translation", "check_options", "dump", "load", "parse_set", "read_ir", "translate"]


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
    request = Request.of(config, src, dst, options)
    sources = read(request)
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
    """Stage 4's output: whether the output could be read back, and how many differences that
    reading found that no entry named (now named, as lossy entries); None when not checked."""

    verified: bool | None
    added: int | None


def read(request: Request) -> Sources:
    """Stage 1: the main config (several same-format files merged) and its --with companions, loaded;
    a file that plainly is another format's (a NeoX argument file in JSON) is read as that one."""
    config, src, options = request.config, request.src, request.options
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
    companion_options = {k: v for k, v in options.items()
                         if k not in ("set_values", "source_layout", "model_config", "source_version")}  # fmt: skip
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
    # a writer that restructures a layout says which leaves have no place in it (same-format)
    unplaceable = writer.unplaceable
    leaves, report = emit(
        ingested, table, dst, version=version,
        unplaceable=(lambda leaf: unplaceable(leaf, layout, version)) if unplaceable is not None else None,
    )  # fmt: skip
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
        layout=layout, version=version, source_format=src, source_layout=source.layout, model_family=family,
        sources=", ".join(Path(f).name for f in source.files), output=Path(output).name if output else None,
        source_shape=dict(source.meta) if src == dst else {},  # what the reader noted about the file's own shape
    )  # fmt: skip
    result = writer.write(leaves, ctx).unless_empty(report, source, get_format(dst).title, request.options)
    _report_written(report, result)
    if src != dst:  # a family not supported, into a format with no architecture: one entry for its block
        collapse(report, source, load_table(src))
    if request.options.get("target_values"):  # keys only the target has, given with --set DST:KEY=VALUE
        from .target_values import apply_target_values

        apply_target_values(report, result.document, dst, request.options["target_values"])
    return Written(result, report, layout, version, family)


def check(written: Written, ingested: Ingested, request: Request) -> Checked:
    """Stage 4: the written document read back (in memory) with the target's reader and table, and
    every difference from the source that no entry names named, as lossy (unless verify=False)."""
    if not request.options.get("verify", True):
        return Checked(None, None)
    from .verify import read_back, readback_failed, verify

    model_config = written.result.model_config
    if model_config is None and get_format(request.dst).takes_model_config:
        model_config = {}  # never a file found on disk relative to wherever the library runs
    try:
        back = read_back(written.result.document, request.dst, written.layout, written.version, ingested, model_config)
    except NeoconvError as exc:
        readback_failed(written.report, exc)
        return Checked(False, None)
    return Checked(True, verify(written.report, ingested, back))


def report(written: Written, checked: Checked, ingested: Ingested, sources: Sources, request: Request) -> Translation:
    """Stage 5: what the report says around its entries (the source's files, format, layout and
    release; the target's; the check's outcome), and the Translation the library returns."""
    source, result, dst, out = ingested.source, written.result, request.dst, written.report
    assert source is not None
    companions = [f for part in ingested.companions if part.source for f in part.source.files]
    out.source = {"format": source.format, "files": source.files + companions, "layout": source.layout,
                  **(source.release.to_json() if source.release else {"version": source.version})}  # fmt: skip
    note = "; ".join(filter(None, (sources.read_as, *source.warnings)))
    if note:
        out.source["note"] = note
    if source.meta.get("unsupported_family"):  # its architecture is carried (same format) or dropped, not read
        out.source["unsupported_family"] = source.meta["unsupported_family"]["family"]
    out.target = {"format": dst, "layout": written.layout, "version": written.version, "model_family": written.family}
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
    return Translation(result.document, out, ingested.ir, dst, result, result.side_files, dict(source.texts))


def _load_main(config: ConfigInput | Source, src: str, options: dict[str, Any]) -> Source:
    if isinstance(config, Source):
        return config
    return load(config, src, layout=options.get("source_layout"), model_config=options.get("model_config"))


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
