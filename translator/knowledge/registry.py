"""Every format neoconv knows, and what each declares about itself (FormatSpec): found, never listed.

A format is a package whose `__init__.py` defines `FORMAT = FormatSpec(...)` and nothing costly (it is
imported at every start). Three ways a package becomes a format, all ending in `register`:

* a subpackage of neoconv's own `formats` package (`translator/formats/<fmt>/`), found at start-up;
* an installed distribution's entry point in the group `neoconv.formats`, naming the package
  (`[project.entry-points."neoconv.formats"] toml = "neoconv_toml"`): how a third party adds one;
* `register("package.name")` for a package that is importable but not installed (the test-only
  formats under tests/formats/ are registered so by tests/conftest.py).

The registry imports a format's package by its name only: its reader, writer, formulas and schedule
forms are imported when first used (`FormatSpec.load_reader`, `formula_module`, ...). Lower layers that
need a format's code are handed a finder from here (the formula registry, the schedule's custom forms),
so that nothing below the formats imports them. CLI pair commands are generated from FORMATS.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from ..core.errors import UsageError
from ..core.resources import data_dir
from ..core import plugins

ROOT_PACKAGE = __name__.split(".")[0]  # installed as neoconv, imported from a checkout as translator
ENTRY_POINTS = "neoconv.formats"


@dataclass(frozen=True)
class FormatSpec:
    name: str  # the id in commands (neox2cerebras), tables (mappings/<name>.yaml) and schemas
    title: str  # how messages and listings name it
    reader: str  # module path of the module defining READER, imported on first use
    writer: str  # module path of the module defining WRITER
    suffix: str = ".yml"  # of the files it writes
    globs: tuple[str, ...] = ("*.yaml", "*.yml")  # the files `neoconv batch` picks up by default
    layouts: tuple[str, ...] = ()
    default_layout: str | None = None
    # a same-format translation with no --layout writes the source's layout (layouts that are releases'
    # forms, not output choices): else default_layout
    keeps_source_layout: bool = False
    can_write: bool = True
    # how the framework spells a key it reads (NeoX: `num-layers` is `num_layers`), for detection and explain
    key_spelling: Callable[[str], str] | None = None
    # format of a file given with --with, by its suffix ("*": any other suffix); unlisted: this format
    companions: Mapping[str, str] = field(default_factory=dict)
    takes_model_config: bool = False  # --model-config: the architecture lives in a file of its own
    # the key of its files naming a file beside them that the framework reads with them (TrainingArguments'
    # `deepspeed: out.ds_config.json`): diff, validate and prove read it with the file, confined to its folder
    side_file_key: str | None = None
    # the JSON schemas (schemas/<name>.schema.json) content detection scores a file against; () = (name,)
    schemas: tuple[str, ...] = ()
    # the folder of its table (<name>.yaml), schemas (<schema>.schema.json) and key history
    # (history/<name>.json); None: neoconv's own mappings/ and schemas/ (a format outside neoconv has its own)
    data: str | None = None

    # ---- what its files can do: each shared behaviour asks one of these, never the file syntax
    # `#` comment lines: the header, `# MISSING:` lines for what the run still needs, comments carried over
    comments: bool = True
    # the text editor neoconv's format-preserving tools read its files with ("yaml", "json"): a
    # same-format migration edits the source's own text; a YAML source's comments are carried into a
    # YAML output. None: a same-format translation writes the plain layout, and says so
    editor: str | None = "yaml"
    # an empty file (or one of comments only) is a config of the framework's defaults, not an error
    empty_allowed: bool = False
    # its parser takes the fields of one release (HfArgumentParser): `validate --version` reads the file as that
    # release (its values too), and without one names the keys no release reads with the rest (a file that runs nowhere)
    one_release: bool = False
    # why a source text in a syntax of the format its editor does not read (Megatron's words, not its CI
    # YAML) keeps no formatting in a same-format translation; None: the editor keeps it
    unkept_formatting: Callable[[str], str | None] | None = None
    syntax: None = None  # gone: what `syntax` decided is declared above (a spec still giving it is told so)

    def __post_init__(self) -> None:
        if self.syntax is not None:
            raise TypeError(
                f"FormatSpec {self.name!r}: `syntax` is gone; declare what its files can do instead: comments=, "
                'editor= ("yaml", "json" or None), empty_allowed= (README "Adding a framework")'
            )

    @property
    def package(self) -> str:
        """The format's package (where its reader is): its `formulas` and `scheduler` modules live there."""
        return self.reader.rpartition(".")[0]

    @property
    def own(self) -> bool:
        """One of neoconv's own formats (translator/formats/<name>/), not one another package adds."""
        return self.package.startswith(f"{ROOT_PACKAGE}.formats.")

    def folder(self, kind: str) -> Path:
        """Where its `kind` of data lives: "mappings" (its table) or "schemas" (schemas, history)."""
        return Path(self.data) if self.data is not None else data_dir(kind)

    def load_reader(self) -> Any:
        """The format's READER (a formats.spec.Reader), its module imported on first use."""
        return importlib.import_module(self.reader).READER

    def load_writer(self) -> Any:
        """The format's WRITER (a formats.spec.Writer)."""
        return importlib.import_module(self.writer).WRITER

    def schema_for(self, layout: str | None) -> str:
        """The schema of one of its layouts (Cerebras' trainer layout has one of its own), else its own."""
        named = [s for s in self.schemas if s.endswith(f"-{layout}")] if layout else []
        return named[0] if named else self.name

    def spell(self, key: str) -> str:
        return self.key_spelling(key) if self.key_spelling is not None else key

    def companion(self, path: str) -> str:
        """The format of a file given beside one of this format's (--with)."""
        for suffix, fmt in self.companions.items():
            if suffix != "*" and str(path).endswith(suffix):
                return fmt
        return self.companions.get("*", self.name)


class _Formats(dict):  # type: ignore[type-arg]
    """name -> spec, sorted by name; neoconv's own and the installed formats are found on first use (a
    format package imports the contract, which imports this module: finding them at import would meet
    that package half-imported)."""

    found = False

    def _find(self) -> None:
        if not self.found:
            self.found = True
            _discover()

    def __getitem__(self, name: str) -> FormatSpec:
        self._find()
        return super().__getitem__(name)  # type: ignore[no-any-return]

    def __contains__(self, name: object) -> bool:
        self._find()
        return super().__contains__(name)

    def __iter__(self) -> Any:
        self._find()
        return super().__iter__()

    def __len__(self) -> int:
        self._find()
        return super().__len__()

    def get(self, name: str, default: Any = None) -> Any:
        self._find()
        return super().get(name, default)

    def keys(self) -> Any:
        self._find()
        return super().keys()

    def values(self) -> Any:
        self._find()
        return super().values()

    def items(self) -> Any:
        self._find()
        return super().items()

    def known(self, name: str) -> FormatSpec | None:
        """The spec registered under `name` so far (without finding the rest first)."""
        return super().get(name)  # type: ignore[no-any-return]

    def put(self, spec: FormatSpec) -> None:
        """Register `spec`, keeping the formats sorted by name (in place: modules hold this dict)."""
        ordered = sorted([*super().items(), (spec.name, spec)])
        super().clear()
        super().update(ordered)


_REGISTRY = _Formats()
FORMATS: dict[str, FormatSpec] = _REGISTRY


def register(package: str) -> FormatSpec:
    """Make the format that package `package` declares (`FORMAT`) known; the same package again is a no-op."""
    spec = getattr(importlib.import_module(package), "FORMAT", None)
    if not isinstance(spec, FormatSpec):
        raise ValueError(f"{package} declares no FORMAT = FormatSpec(...): not a neoconv format package")
    known = _REGISTRY.known(spec.name)
    if known is not None and known is not spec:
        raise ValueError(f"format {spec.name!r} of {package} is already declared by {known.package}")
    if known is None:
        _REGISTRY.put(spec)
    return spec


def _discover() -> None:
    """neoconv's own format packages, then those installed distributions declare."""
    own = importlib.import_module(f"{ROOT_PACKAGE}.formats")
    for info in pkgutil.iter_modules(own.__path__, own.__name__ + "."):
        if info.ispkg and isinstance(getattr(importlib.import_module(info.name), "FORMAT", None), FormatSpec):
            register(info.name)
    register_installed()


def register_installed() -> list[str]:
    """Register the format packages installed distributions name in the entry-point group
    `neoconv.formats`; returns their names."""
    from importlib.metadata import entry_points

    return [register(point.value).name for point in entry_points(group=ENTRY_POINTS)]


def get_format(name: str) -> FormatSpec:
    spec = FORMATS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise UsageError(f"unknown format {name!r}; known: {', '.join(FORMATS)}")
    return spec


def pairs() -> list[tuple[str, str]]:
    return [(a, b) for a in FORMATS for b in FORMATS if FORMATS[b].can_write]


def companion_format(path: str, main_format: str) -> str:
    """Format of a file given with --with beside a file of `main_format` (the main format's spec
    says: a .json beside a NeoX config is its DeepSpeed config); a format no package provides is
    read as the main one."""
    fmt = get_format(main_format).companion(path)
    return fmt if fmt in FORMATS else main_format


def data_file(kind: str, name: str, suffix: str) -> Path:
    """A data file of the format (or schema) `name`: `kind` "mappings" for its table, "schemas" for a
    schema or, with suffix "history", its key history; from the folder its spec names (neoconv's own
    mappings/ or schemas/ for its own formats and for a name no format declares: canonical.yaml, ...)."""
    spec = _REGISTRY.known(name) or next((s for s in FORMATS.values() if name in s.schemas), None)
    folder = spec.folder(kind) if spec is not None else data_dir(kind)
    return folder / "history" / f"{name}.json" if suffix == "history" else folder / f"{name}{suffix}"


def module_of(namespace: str, role: str) -> str | None:
    """The module of format `namespace` that registers its `role` ("formulas", "scheduler"); None for
    a namespace no format has."""
    spec = FORMATS.get(namespace)
    return f"{spec.package}.{role}" if spec is not None else None


plugins.module_of = module_of  # for the layers below: a schedule's `<format>.<form>` phases
