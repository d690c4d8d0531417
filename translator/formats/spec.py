"""The format contract: what a format package declares (FormatSpec, knowledge/registry.py, re-exported
here: all a format package imports) and offers (a Reader, a Writer).

A format is a package `translator/formats/<name>/` whose `__init__.py` defines `FORMAT = FormatSpec(...)`
and nothing costly: discovery imports every such package at start-up. Its reader and writer modules
are imported when first used; each defines `READER` (a Reader) or `WRITER` (a Writer). Optional hooks
are attributes that a format leaves at None when it does not offer them: callers ask the contract
(`if reader.fragment is not None`), never `hasattr`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Union

from ..core.errors import printable
from ..knowledge.registry import FormatSpec

if TYPE_CHECKING:  # kept out of start-up: `neoconv --help` imports every FormatSpec
    from ..core.report import Report, Status
    from ..knowledge.source import Source

__all__ = [
    "ExtraEntry",
    "FormatSpec",
    "ModelConfig",
    "Reader",
    "WriteContext",
    "WriteResult",
    "Writer",
    "added_for_target",
]

# a model config kept apart from the config (VeOmni's HF config.json): a path, or its parsed content
ModelConfig = Union[str, Mapping[str, Any], None]


class Reader:
    """A format's reader: files (or an already-parsed tree) -> a Source for the engine."""

    format = ""

    def read(self, paths: list[str], *, layout: str | None = None, model_config: ModelConfig = None) -> Source:
        """The files of one config, merged as the framework merges them; `layout` (when given) is the
        layout the caller expects; `model_config` only for formats that take one (the spec says)."""
        raise NotImplementedError

    def from_tree(
        self, tree: dict[str, Any], *, name: str = "<config>", text: str = "", model_config: ModelConfig = None
    ) -> Source:
        """A parsed config (a mapping handed to the library, a translation reading its own output back)
        read as a file of it would be. The default takes the tree as it is, in the layout
        `detect_layout` tells."""
        from ..knowledge.source import Source

        source = Source(self.format, tree, [name], {name: text} if text else {}, {k: name for k in tree})
        if self.detect_layout is not None:
            source.layout = self.detect_layout(tree)
        return source

    # which layout a parsed tree is in
    detect_layout: Callable[[dict[str, Any]], str | None] | None = None
    # content detection beyond the schema score: how surely (0..1) a parsed tree is this format's, or None
    sniff: Callable[[dict[str, Any]], float | None] | None = None
    # the same for a file's text, for a syntax that is not YAML or JSON (asked before parsing): 0..1 or None
    sniff_text: Callable[[str], float | None] | None = None
    # why a file that reads fine is a fragment to merge into others (--with), not a config of its own
    fragment: Callable[[Source], str | None] | None = None
    # the names the key history (schemas/history/<format>.json) may give a leaf, best first, from its
    # path in the view and as written (None: the same); default: as written
    history_key: Callable[[str, str | None], tuple[str, ...]] | None = None
    # where a release's own loader reads leaves of a file as written, when it converts the file first
    # (Model Zoo 2.4+ reads a legacy file through its trainer converter): (tree, release, leaves) -> leaf
    # -> the key it reads there, for `validate --version`'s "does that release read it" (absent: as written)
    release_keys: Callable[[dict[str, Any], str, list[str]], dict[str, str]] | None = None
    # once the release is settled: values that release reads otherwise than the newest (a string the
    # old code took as it is), changed in the Source in place
    at_release: Callable[[Source], None] | None = None


@dataclass(frozen=True)
class WriteContext:
    """What a writer knows of the translation besides the target leaves."""

    layout: str | None = None
    version: str | None = (
        None  # the target version (--to-version; None: the table's first): a writer spells keys per release
    )
    source_format: str | None = None
    source_layout: str | None = None
    source_version: str | None = None  # the release the source was read as (another release of the same format)
    model_family: str | None = None
    sources: str = ""  # the source files' names, for a header ("from a.yml, ds.json")
    output: str | None = None  # the output's file name: side files are named after it
    # same-format translations only: what the reader noted about the file's own shape (Source.meta),
    # private to the format (its reader writes it, its writer reads it)
    source_shape: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ExtraEntry:
    """A report entry a writer adds: a target key the run needs that no canonical field gives, or a
    default a layout migration wrote."""

    target_key: str
    status: Status
    detail: str
    fields: tuple[str, ...] = ()
    source_key: str | None = None
    kind: str = ""  # the message's kind (report/kinds.py) when the writer gives one; `detail` is then rendered
    values: Mapping[str, Any] | None = None


def added_for_target(title: str, key: str, value: Any, why: str, fields: tuple[str, ...] = ()) -> ExtraEntry:
    """A value the target needs that the source does not state, which the writer adds so the target
    loads the config and runs the same (NeoX's gradient_accumulation_steps: 1): `defaulted`, as a
    value the source relied on without saying it, and no loss."""
    from ..core.report import Status, render

    values = {"title": title, "written": {key: value}, "why": why}
    return ExtraEntry(
        key, Status.DEFAULTED, render("added_for_target", values), fields, None, "added_for_target", values
    )


@dataclass
class WriteResult:
    document: dict[str, Any]
    header: list[str] = field(default_factory=list)  # comment lines written above the document
    side_files: dict[str, str] = field(default_factory=dict)  # file name -> text, written beside the output
    # a carried value the writer had to change (a layout migration): target key -> (status, why)
    amended: dict[str, tuple[Status, str]] = field(default_factory=dict)
    extra_entries: list[ExtraEntry] = field(default_factory=list)
    # leaf -> where the writer put it, when it restructured the layout (report entries follow)
    target_paths: dict[str, str] = field(default_factory=dict)
    reshaped: dict[str, str] = field(default_factory=dict)  # leaf -> how its form changed (scheduler classes)
    # the keys of target_paths that messages may show at their new place with their value (None: all;
    # Megatron's booleans are not: --no-bias-gelu-fusion=False would read as the opposite)
    value_paths: frozenset[str] | None = None
    # where a key the writer did not write would go (a missing key the report names in the layout written)
    place_of: Callable[[str], str | None] | None = None
    # for formats that take a model config: the one reading the document back must use (the
    # architecture written beside it, or the source's); never a file found on disk
    model_config: Mapping[str, Any] | None = None


class Writer:
    """A format's writer: target leaves -> a document (and what the report must say about it)."""

    format = ""

    def write(self, leaves: dict[str, Any], ctx: WriteContext) -> WriteResult:
        raise NotImplementedError

    def header(self, document: dict[str, Any], ctx: WriteContext) -> list[str]:
        """The comment lines above a document (none: a format whose syntax has no comments)."""
        return []

    def serialise(self, document: dict[str, Any]) -> str:
        raise NotImplementedError

    def dump(self, result: WriteResult) -> str:
        return self.header_text(result) + self.serialise(result.document)

    @staticmethod
    def header_text(result: WriteResult) -> str:
        """The header's comment lines: a line says file names and values, and stays one comment line
        whatever they hold (a newline in a file name must not start a line of settings)."""
        return "".join(printable(line) + "\n" for line in result.header)

    # why the target layout has no place for a leaf of the same format's view (None: it has one)
    unplaceable: Callable[[str, str | None, str | None], str | None] | None = None
