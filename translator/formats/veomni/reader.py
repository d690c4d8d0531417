"""VeOmni YAML (`model.* / data.* / train.*`), its two key layouts, and the HF config.json beside it.

Reading. VeOmni's `parse_args` loads one YAML file (`yaml.safe_load`) and deep-merges `--a.b.c value`
command-line options over it. A config here is one YAML file, optionally followed by files of such
options (one or more `--train.optimizer.lr 1e-4` per line; bools take yes/true/1 or stand alone,
lists take several values). Keys may be nested or dotted (`train.lr: 1e-4`) in the YAML; the same
field written both ways with different values is an error naming both spellings. (VeOmni itself
only honours dotted keys on the command line: a dotted key in a YAML file is a key it ignores, which
the report says.) The layout is told by the keys: `flat` (before PR #538: train.lr, train.output_dir),
`nested` (train.optimizer.lr, train.checkpoint.output_dir) or `scoped` (PR #1090: model.optimizer.lr,
model.accelerator.*); a flat or scoped file is read into the nested view
mappings/veomni.yaml is written in, and Source.aliases keep the keys as the user wrote them. The
model architecture comes from the HuggingFace config.json at model.config_path (else
model.model_path), relative to the YAML, or the file given as `--model-config`; it is read under
`hf.` (architecture.py).
"""

from __future__ import annotations

from typing import Any

from ...core.errors import InputError
from ...knowledge.schema import load_history
from ...io.documents import flatten, parse_yaml, read_text, unflatten
from ...knowledge.source import Source, note_duplicates
from ...io.yamlread import Duplicate
from ..spec import ModelConfig, Reader
from .architecture import attach_architecture
from .fields import HF, SECTIONS, fields
from .options import is_option_file, option_settings
from .settings import Setting, merge_settings, yaml_key_lines, yaml_settings
from .source import VeomniSource

MANIFEST_KEYS = frozenset(
    {"sources", "names", "schedule"}
)  # a multisource data file (veomni/utils/multisource_utils.py)
DOTTED_NOTE = (
    "written as the dotted key {key!r}: VeOmni's own parser ignores dotted keys in a YAML file (it reads "
    "them only as --{key} on the command line); neoconv reads it as {key}"
)


def _layout_of(leaves: dict[str, Any]) -> str | None:
    """flat / nested / scoped from keys only one layout has; None when the keys do not tell. A flat key
    that nested releases still read (train.enable_mixed_precision, #538..#603) tells nothing; a key under
    model.accelerator or model.optimizer is the scoped layout (PR #1090), which refuses the old paths."""
    spec = fields()
    flat = nested = moved = None
    scoped = next((leaf for leaf in leaves if spec.is_scoped(leaf)), None)
    for leaf, value in leaves.items():
        if scoped is not None and spec.is_scoped(leaf):
            continue
        found = spec.layouts_of(leaf, value)
        if scoped is not None and moved is None and spec.moved_by_scoped(leaf) and found != ("flat",):
            moved = leaf
        if found == ("flat",) and _nested_releases_read(leaf):
            continue
        if found == ("flat",):
            flat = flat or leaf
        elif found == ("nested",):
            nested = nested or leaf
    if scoped is not None and moved is not None:
        raise InputError(
            f"{moved} has moved to {spec.to_scoped(moved)}: the file also has {scoped}, the model-scoped layout "
            "of VeOmni PR #1090, which refuses the old path; write the file in one layout",
            key=moved,
        )
    if scoped is not None and flat:
        raise InputError(
            f"mixes the flat layout ({flat}) with the model-scoped one ({scoped}); VeOmni reads one of them: "
            "write the file in one layout",
            key=flat,
        )
    if flat and nested:
        raise InputError(
            f"mixes the flat layout ({flat}) with the nested one ({nested}); VeOmni reads one of them "
            "(PR #538 moved the keys): write the file in one layout",
            key=nested,
        )
    return "scoped" if scoped else "flat" if flat else "nested" if nested else None


def _dotted_key(written: tuple[str, ...]) -> tuple[str, str]:
    """(the path up to the first YAML key with a dot in it, the block holding that key)."""
    for i, part in enumerate(written):
        if "." in part:
            return ".".join(written[: i + 1]), ".".join(written[:i])
    return ".".join(written), ".".join(written[:-1])


NESTED_SINCE = "#538"  # the PR that moved the keys (mappings/veomni-layouts.yaml)


def _nested_releases_read(leaf: str) -> bool:
    history = load_history("veomni")
    if history is None or NESTED_SINCE not in history.position:
        return False
    return history.mask(leaf) >> history.position[NESTED_SINCE] != 0


def _to_view(leaf: str, value: Any, layout: str) -> str:
    """A key as written -> the nested view mappings/veomni.yaml is keyed on."""
    spec = fields()
    if layout == "scoped":
        return spec.from_scoped(leaf)
    if layout != "flat":
        return leaf
    if leaf == "train.optimizer" and not isinstance(value, dict):
        return spec.renames["train.optimizer"]
    return spec.renames.get(leaf, leaf)


class VeomniReader(Reader):
    format = "veomni"

    def read(self, paths: list[str], *, layout: str | None = None, model_config: ModelConfig = None) -> Source:
        settings: list[Setting] = []
        texts: dict[str, str] = {}
        yaml_files: list[str] = []
        duplicates: tuple[dict[str, Any], list[Duplicate]] | None = None
        for path in paths:
            name = str(path)
            text = read_text(name)
            texts[name] = text
            if is_option_file(text):
                settings += option_settings(text, name)
                continue
            if yaml_files:
                raise InputError(
                    f"VeOmni reads one YAML file and {yaml_files[0]} is it: give the others as option files "
                    "(--section.key value lines)",
                    file=name,
                )
            if settings:
                raise InputError(
                    "the YAML file comes first, then the option files (as on VeOmni's command line)", file=name
                )
            yaml_files.append(name)
            lines: dict[tuple[str, ...], int] = {}
            repeated: list[Duplicate] = []  # VeOmni loads the file with yaml.safe_load: the last value wins
            data = parse_yaml(text, name, key_lines=lines, duplicates=repeated)
            if repeated:
                duplicates = (data, repeated)
            if "sources" in data and set(data) <= MANIFEST_KEYS:
                raise InputError(
                    "a VeOmni data manifest (sources, names, schedule), not a training config: it is what "
                    "data.train_path points at; translate the training config that names it",
                    file=name,
                    line=lines.get(("sources",)),
                )
            settings += yaml_settings(data, lines, name)
        base = yaml_files[0] if yaml_files else str(paths[0])
        source = _build(settings, [str(p) for p in paths], texts, base, layout, model_config)
        if duplicates:
            note_duplicates(source, *duplicates, "VeOmni's YAML loader")
        return source

    def from_tree(
        self, tree: dict[str, Any], *, name: str = "<config>", text: str = "", model_config: ModelConfig = None
    ) -> Source:
        """`model_config`: the config.json's path, or its parsed content (nothing is read from disk)."""
        settings = yaml_settings(tree, yaml_key_lines(text) if text else {}, name)
        return _build(settings, [name], {name: text} if text else {}, name, None, model_config)

    def detect_layout(self, tree: dict[str, Any]) -> str:
        return _layout_of(flatten(tree)) or "nested"


READER = VeomniReader()


def _build(
    settings: list[Setting],
    files: list[str],
    texts: dict[str, str],
    base: str,
    layout: str | None,
    model_config: ModelConfig,
) -> Source:
    for s in settings:
        if s.path[0] in SECTIONS and len(s.path) == 1 and s.value is not None and not isinstance(s.value, dict):
            raise InputError(f"section {s.path[0]!r} must be a mapping of settings", file=s.file, line=s.line)
        if s.path[0] == HF:
            raise InputError(f"{HF!r} is not a VeOmni section", file=s.file, line=s.line, key=".".join(s.path))
    raw_tree, origin, notes = merge_settings(settings)
    raw_leaves = flatten(raw_tree)
    try:
        found = _layout_of(raw_leaves)
    except InputError as exc:
        exc.file = origin[exc.key].file if exc.key in origin else base
        exc.line = origin[exc.key].line if exc.key in origin else None
        raise
    if layout is not None and found is not None and layout != found:
        raise InputError(f"this is a VeOmni {found}-layout file, not {layout}", file=base, line=1)
    chosen = found or layout or "nested"
    view: dict[str, Any] = {}
    aliases: dict[str, str] = {}
    view_notes: dict[str, str] = {}
    origins: dict[str, tuple[str, int | None]] = {}
    dotted: dict[str, tuple[str, str]] = {}  # view key -> (the dotted YAML key as a parser sees it, its parent)
    for leaf, value in raw_leaves.items():
        key = _to_view(leaf, value, chosen)
        view[key] = value
        setting = origin.get(leaf)
        spelled = setting.spelled if setting else leaf
        if spelled != key:
            aliases[key] = spelled
        if setting is not None:
            origins[key] = (setting.file, setting.line)
            yaml_dotted = setting.dotted and not setting.spelled.startswith("--")
            note = DOTTED_NOTE.format(key=leaf) if yaml_dotted else ""
            if yaml_dotted:
                dotted[key] = _dotted_key(setting.written)
            merged = notes.get(leaf, "")
            if note or merged:
                view_notes[key] = f"{note}; {merged}" if note and merged else note or merged
        elif leaf in notes:
            view_notes[key] = notes[leaf]
    if chosen == "scoped":  # a key the file lacks (a default the report names) is named where this layout has it
        spec = fields()
        for key in spec.nodes:
            moved = spec.moved_by_scoped(key)
            if moved is not None:
                aliases.setdefault(key, moved)
    tree = unflatten(view)
    leaf_files = {k: base for k in tree}
    source = VeomniSource(
        "veomni",
        tree,
        list(files),
        texts,
        leaf_files,
        layout=chosen,
        notes={k: v for k, v in view_notes.items() if v},
        aliases=aliases,
        origins=origins,
    )
    if dotted:
        source.meta["dotted_yaml"] = (
            dotted  # releases that refuse undeclared keys refuse these (knowledge/versions.py refuse_undeclared)
        )
    margin = view.get("train.dyn_bsz_margin")
    if isinstance(margin, int) and not isinstance(margin, bool) and margin:
        source.meta["dyn_bsz_margin"] = margin  # a writer for a release without it re-sizes train_size
    attach_architecture(source, base, model_config)
    return source
