"""Library API: translate(), load(), dump(). Nothing here prints or exits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import yaml

from .catalogue import catalogue
from .engine import Ingested, emit, ingest
from .errors import InputError, NeoconvError, UsageError, WrongFormat
from .io import parse_value
from .ir import IR, Origin, Value
from .mapping import load_table
from .registry import get_format
from .report import Report, Status
from .schema import schema_index
from .source import Source

ConfigInput = str | Path | Sequence[str | Path] | Mapping[str, Any]


@dataclass
class Translation:
    """The translated config document, its report, and the canonical IR it went through."""

    config: dict[str, Any]
    report: Report
    ir: IR
    format: str
    meta: dict[str, Any]
    side_files: dict[str, str] = field(default_factory=dict)  # written beside the output (e.g. HF config.json)

    def dump(self) -> str:
        """The translated config as text, exactly as the CLI writes it."""
        return get_format(self.format).load().dump(self.config, self.meta)


def load(
    config: ConfigInput, fmt: str, *, layout: str | None = None, model_config: str | Path | Mapping[str, Any] | None = None
) -> Source:
    """Read one config (a path, several paths merged, or an already-parsed mapping).

    `model_config`: the file holding the model architecture, for formats that keep it apart
    (VeOmni's HuggingFace config.json), or its parsed content; readers of other formats refuse it.
    """
    spec = get_format(fmt)
    extra: dict[str, Any] = {}
    if model_config is not None:
        extra["model_config"] = model_config if isinstance(model_config, Mapping) else str(model_config)
    if extra and not getattr(spec.load(), "TAKES_MODEL_CONFIG", False):
        raise UsageError(f"--model-config: {spec.title} keeps the model architecture in the config itself")
    if isinstance(config, Mapping):
        if not all(isinstance(k, str) for k in config):
            raise UsageError("config mapping keys must be strings")
        module = spec.load()
        tree = dict(config)
        if hasattr(module, "source_from_tree"):  # a reader that restructures layouts (Cerebras trainer)
            return module.source_from_tree(tree, **extra)  # type: ignore[no-any-return]
        source = Source(fmt, tree, ["<config>"], {}, {k: "<config>" for k in tree})
        if hasattr(module, "detect_layout"):
            source.layout = module.detect_layout(tree)
        return source
    paths = [str(config)] if isinstance(config, (str, Path)) else [str(p) for p in config]
    if not paths:
        raise UsageError("no input file given")
    try:
        return spec.load().read(paths, layout=layout, **extra)  # type: ignore[no-any-return]
    except InputError as exc:
        if exc.file is None and len(paths) == 1:  # a reader's helper (io.flatten) may not know the file
            exc.file = paths[0]
        raise


def dump(config: Mapping[str, Any], fmt: str, meta: Mapping[str, Any] | None = None) -> str:
    """Serialise a config document in a format's own style."""
    return get_format(fmt).load().dump(dict(config), dict(meta or {}))


def parse_set(assignments: Iterable[str]) -> dict[str, Any]:
    """`FIELD=VALUE` strings -> canonical values, checked against the catalogue."""
    known = catalogue()
    values: dict[str, Any] = {}
    for item in assignments:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"--set {item!r}: expected FIELD=VALUE, e.g. --set model.vocab_size=50304")
        if name not in known:
            import difflib  # only for this message

            close = difflib.get_close_matches(name, list(known), n=1)
            hint = f"; did you mean {close[0]}?" if close else "; `neoconv explain` lists the fields"
            raise UsageError(f"--set {name}: not a canonical field{hint}")
        try:
            value = parse_value(text) if text.strip() else None  # bounded: a value can be an alias bomb too
        except yaml.YAMLError:
            value = text
        except NeoconvError as exc:
            raise UsageError(f"--set {name}: {exc.message}") from None
        try:
            values[name], _ = known[name].check(value)
        except ValueError as exc:
            raise UsageError(f"--set {name}: {exc}") from None
    return values


def read_ir(config: ConfigInput | Source, src: str, **options: Any) -> Ingested:
    """Ingest a config into the canonical IR (with the per-leaf ledger the report is built from)."""
    source = config if isinstance(config, Source) else load(
        config, src, layout=options.get("source_layout"), model_config=options.get("model_config"))
    if options.get("source_version"):
        source.version = options["source_version"]
    user = dict(options.get("set_values") or {})
    if options.get("world_size") is not None:
        try:
            user["parallel.world_size"], _ = catalogue()["parallel.world_size"].check(options["world_size"])
        except ValueError as exc:
            raise UsageError(f"world size: {exc}") from None
    table = load_table(src).for_layout(source.layout)
    return ingest(source, table, schema_index(src), user, options.get("context"))


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


def _amended(entry: Any, amend: dict[str, tuple[str, str]]) -> Any:
    keys = entry.target_key.split(", ") if entry.target_key else []
    hit = next((amend[k] for k in keys if k in amend), None)
    if hit is None:
        return entry
    status, why = hit
    return entry._replace(status=Status(status), detail="; ".join(x for x in (why, entry.detail) if x))


def translate(config: ConfigInput, src: str, dst: str, **options: Any) -> Translation:
    """Translate a config from format `src` to format `dst`.

    Options: ``set_values`` (canonical field -> value, as ``--set``), ``world_size`` (GPUs of the
    source run), ``layout`` (target layout), ``source_version`` / ``target_version``,
    ``with_files`` ([(path, format)]: companion files of other formats, e.g. a ds_config.json),
    ``model_config`` (VeOmni: the HuggingFace config.json holding the architecture), ``verify``
    (default True: read the output back and name, as lossy, any difference no entry names).
    Raises NeoconvError subclasses for bad input; never prints or exits.
    """
    get_format(src)
    dst_spec = get_format(dst)
    layout = options.get("layout") or dst_spec.default_layout
    if layout is not None and layout not in dst_spec.layouts:
        raise UsageError(f"--layout {layout}: {dst} layouts are {', '.join(dst_spec.layouts) or 'none'}")
    companions = list(options.get("with_files") or ())
    if not isinstance(config, Mapping) and any(fmt == src for _, fmt in companions):
        # same-format companions (NeoX local_setup.yml) are merged the way the framework merges files
        paths = [config] if isinstance(config, (str, Path)) else list(config)
        config = paths + [path for path, fmt in companions if fmt == src]
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
    companion_options = {k: v for k, v in options.items() if k not in ("set_values", "source_layout", "model_config")}
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
    table = load_table(dst).for_layout(layout)
    version = options.get("target_version") or table.versions[0]
    if version not in table.versions:
        raise UsageError(f"unknown {dst} version {version!r}; known: {', '.join(table.versions)}")
    writer = dst_spec.load()
    # a writer that restructures a layout says which leaves have no place in it (same-format)
    unplaceable = getattr(writer, "unplaceable", None)
    leaves, report = emit(
        ingested, table, dst, version=version,
        unplaceable=(lambda leaf: unplaceable(leaf, layout)) if unplaceable else None,
    )  # fmt: skip
    source = ingested.source
    assert source is not None
    family = ingested.ir.get("model.family")
    meta = {"from": ", ".join(Path(f).name for f in source.files), "model_family": family, "layout": layout,
            "source_format": src, "source_layout": source.layout}  # fmt: skip
    if src == dst and source.meta:
        meta["source"] = dict(source.meta)  # what the reader noted about the file's own shape
    document = writer.write(leaves, meta)
    # a writer that had to change a carried value (a layout migration) says so: target key -> (status, why)
    amend = meta.get("amend") or {}
    if amend:
        report.entries = [_amended(e, amend) for e in report.entries]
    # target keys with no canonical field that the run needs, defaults a migration wrote: (src, tgt, status, why)
    for src_key, tgt_key, status, detail, *concerns in meta.get("extra_entries") or ():
        report.add(src_key, tgt_key, Status(status), detail, tuple(concerns[0]) if concerns else ())
    moved = meta.get("target_paths")  # leaf -> where the writer put it, when it restructured the layout
    if moved:
        reshaped = meta.get("reshaped") or {}  # leaf -> how the writer changed its form (scheduler classes)

        def relocated(e: Any) -> Any:
            keys = e.target_key.split(", ")
            why = [reshaped[k] for k in keys if k in reshaped]
            status, detail = (Status.CONVERTED, "; ".join(why)) if why and e.status is Status.EXACT else (e.status, e.detail)
            return e._replace(target_key=", ".join(moved.get(k, k) for k in keys), status=status, detail=detail)

        report.entries = [relocated(e) if e.target_key else e for e in report.entries]
    side_files = writer.side_files(document, meta) if hasattr(writer, "side_files") else {}
    companions = [f for part in ingested.companions if part.source for f in part.source.files]
    report.source = {"format": src, "files": source.files + companions, "layout": source.layout,
                     "version": source.version or load_table(src).versions[0]}  # fmt: skip
    if read_as:
        report.source["note"] = read_as
    report.target = {"format": dst, "layout": layout, "version": version, "model_family": family}
    if options.get("verify", True):
        _verify(report, ingested, document, dst, layout, writer, same=src == dst)
    return Translation(document, report, ingested.ir, dst, meta, side_files)


def _verify(
    report: Report, ingested: Ingested, document: dict[str, Any], dst: str, layout: str | None, writer: Any,
    *, same: bool,
) -> None:  # fmt: skip
    """Read the written document back (in memory) and name what reading it back does not recover."""
    from .verify import read_back, readback_failed, verify

    model_config: Mapping[str, Any] | None = None
    if getattr(writer, "TAKES_MODEL_CONFIG", False):
        # the architecture file written beside the output, or (same format) the one the source read;
        # never a file found on disk relative to wherever the library runs
        written = getattr(document, "config_json", None)
        kept = ingested.source.tree.get("hf") if same and ingested.source else None
        model_config = written if written is not None else kept if isinstance(kept, Mapping) else {}
    try:
        back = read_back(document, dst, layout, ingested, model_config)
    except NeoconvError as exc:
        readback_failed(report, exc)
        report.target["verified"] = False
        return
    report.target["verified"] = True
    report.target["added_by_verification"] = verify(report, ingested, back)
