"""VeOmni YAML (`model.* / data.* / train.*`), its two key layouts, and the HF config.json beside it.

Reading. VeOmni's `parse_args` loads one YAML file (`yaml.safe_load`) and deep-merges `--a.b.c value`
command-line options over it. A config here is one YAML file, optionally followed by files of such
options (one or more `--train.optimizer.lr 1e-4` per line; bools take yes/true/1 or stand alone,
lists take several values). Keys may be nested or dotted (`train.lr: 1e-4`) in the YAML; the same
field written both ways with different values is an error naming both spellings. (VeOmni itself
only honours dotted keys on the command line: a dotted key in a YAML file is a key it ignores, which
the report says.) The layout is told by the keys: `flat` (before PR #538: train.lr, train.output_dir)
or `nested` (train.optimizer.lr, train.checkpoint.output_dir); a flat file is read into the nested view
mappings/veomni.yaml is written in, and Source.aliases keep the keys as the user wrote them. The
model architecture comes from the HuggingFace config.json at model.config_path (else
model.model_path), relative to the YAML, or the file given as `--model-config`; it is read under
`hf.` (translator/formats/hf_config.py).

Writing. `--layout nested` (default) or `flat`; the key sets are VeOmni's dataclass fields
(schemas/veomni.schema.json, x-layouts) and nothing else is ever written, since VeOmni ignores
unknown keys without a word. Architecture from another framework becomes a config.json side file
that model.config_path points at.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Union

import yaml

from ...errors import InputError, NeoconvError
from ...io import dump_yaml, flatten, key_line, parse_json, parse_yaml, read_text, unflatten
from ...resources import data_dir
from ...schema import load_schema
from ...source import Source
from ...yamlread import load as load_yaml
from ..hf import model_types as hf_config


TAKES_MODEL_CONFIG = True  # api.load passes --model-config here
ModelConfig = Union[str, Mapping[str, Any], None]  # the config.json: a path, or its parsed content
LAYOUTS = ("nested", "flat")
SECTIONS = ("model", "data", "train")
HF = hf_config.PREFIX.rstrip(".")
CONFIG_JSON = "config.json"
MANIFEST_KEYS = frozenset({"sources", "names", "schedule"})  # a multisource data file (veomni/utils/multisource_utils.py)
DOTTED_NOTE = (
    "written as the dotted key {key!r}: VeOmni's own parser ignores dotted keys in a YAML file (it reads "
    "them only as --{key} on the command line); neoconv reads it as {key}"
)


@dataclass
class VeomniSource(Source):
    """A Source whose leaves come from several files (YAML, option files, config.json)."""

    origins: dict[str, tuple[str, int | None]] = field(default_factory=dict)  # view leaf -> (file, line)
    # block -> the origin of its first leaf, and how many origins that was built from (the engine
    # asks once per rule; origins grow while the reader attaches config.json)
    _blocks: tuple[int, dict[str, tuple[str, int | None]]] = field(default=(-1, {}), repr=False)

    def _origin(self, leaf: str) -> tuple[str, int | None] | None:
        if leaf in self.origins:
            return self.origins[leaf]
        if self._blocks[0] != len(self.origins):
            blocks: dict[str, tuple[str, int | None]] = {}
            for key, origin in self.origins.items():
                parts = key.split(".")
                for i in range(1, len(parts)):
                    blocks.setdefault(".".join(parts[:i]), origin)
            self._blocks = (len(self.origins), blocks)
        return self._blocks[1].get(leaf)

    def file_of(self, leaf: str) -> str | None:
        origin = self._origin(leaf)
        return origin[0] if origin else super().file_of(leaf)

    def line_of(self, leaf: str) -> int | None:
        origin = self._origin(leaf)
        return origin[1] if origin else None


# --------------------------------------------------------------------------------------------
# Data: the dataclass fields of both layouts, and the layout renames


@dataclass(frozen=True)
class Fields:
    nodes: dict[str, dict[str, Any]]  # dotted path -> schema node (blocks and leaves)
    renames: dict[str, str]  # flat key -> nested key
    back: dict[str, str]  # nested key -> flat key
    carry_defaults: tuple[str, ...]
    open_blocks: dict[str, str | None] = field(default_factory=dict)  # path -> open_block(path)

    def node(self, path: str) -> dict[str, Any] | None:
        return self.nodes.get(path)

    def open_block(self, path: str) -> str | None:
        """The free-form (Dict-typed) field a path lies inside, if any (asked once per path)."""
        if path not in self.open_blocks:
            if len(self.open_blocks) > 10_000:  # bounded, whatever keys files hold
                self.open_blocks.clear()
            self.open_blocks[path] = self._open_block(path)
        return self.open_blocks[path]

    def _open_block(self, path: str) -> str | None:
        parts = path.split(".")
        for i in range(len(parts) - 1, 0, -1):
            head = ".".join(parts[:i])
            node = self.nodes.get(head)
            if node is not None:
                free = "properties" not in node and "object" in _types(node)
                return head if free else None
        return None

    def layouts_of(self, path: str, value: Any = None) -> tuple[str, ...]:
        """Layouts that have this leaf; () when neither does."""
        node = self.nodes.get(path)
        if node is None:
            block = self.open_block(path)
            return tuple(self.nodes[block].get("x-layouts", LAYOUTS)) if block else ()
        if "properties" in node:  # a block where a value stands: the flat scalar train.optimizer
            scalar = node.get("x-flat-scalar")
            return ("flat",) if scalar is not None and not isinstance(value, dict) else ()
        return tuple(node.get("x-layouts", LAYOUTS))

    def default(self, path: str, layout: str) -> Any:
        node = self.nodes.get(path, {})
        if layout == "flat" and "x-flat-default" in node:
            return node["x-flat-default"]
        return node.get("default")


def _types(node: dict[str, Any]) -> list[str]:
    kind = node.get("type")
    return [kind] if isinstance(kind, str) else list(kind or [])


@lru_cache(maxsize=None)
def fields() -> Fields:
    nodes: dict[str, dict[str, Any]] = {}

    def walk(props: dict[str, Any], prefix: str) -> None:
        for name, node in props.items():
            nodes[prefix + name] = node
            if "properties" in node:
                walk(node["properties"], prefix + name + ".")

    walk(load_schema("veomni")["properties"], "")
    raw = load_yaml((data_dir("mappings") / "veomni-layouts.yaml").read_text(encoding="utf-8"))
    renames = dict(raw["renames"])
    return Fields(nodes, renames, {v: k for k, v in renames.items()}, tuple(raw.get("carry_defaults", ())))


@lru_cache(maxsize=None)
def _hf_keys() -> tuple[str, ...]:
    from ...mapping import load_table

    return tuple(k for rule in load_table("veomni").rules for k in rule.keys if k.startswith(HF + "."))


@lru_cache(maxsize=None)
def architecture_fields() -> tuple[str, ...]:
    """Canonical fields VeOmni keeps in the config.json (the rules written with hf.* formulas)."""
    from ...mapping import load_table

    names: dict[str, None] = {}
    for rule in load_table("veomni").rules:
        if rule.formula is not None and rule.formula.name.startswith("hf."):
            names.update(dict.fromkeys(rule.fields))
    return tuple(names)


# --------------------------------------------------------------------------------------------
# Reading


@dataclass
class _Setting:
    path: tuple[str, ...]
    value: Any
    spelled: str  # the key as written: "train.lr" (dotted or nested), "--train.lr"
    file: str
    line: int | None
    dotted: bool = False
    written: tuple[str, ...] = ()  # the YAML keys as written, for messages ("train: seed" vs "train.seed")

    @property
    def shown(self) -> str:
        return ": ".join(self.written) if self.written else self.spelled


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Line of every mapping key as written (unsplit), for a tree handed in with its text."""
    lines: dict[tuple[str, ...], int] = {}
    try:
        load_yaml(text, key_lines=lines)
    except (yaml.YAMLError, NeoconvError):
        pass  # lines up to the problem are kept; the tree itself was given
    return lines


def _yaml_settings(data: dict[str, Any], lines: dict[tuple[str, ...], int], name: str) -> list[_Setting]:
    """Every leaf of a YAML file with its field path (dotted keys split outside free-form blocks);
    `lines`: the line of each key as written (yamlread's key_lines)."""
    spec = fields()
    out: list[_Setting] = []

    def walk(node: dict[str, Any], path: tuple[str, ...], written: tuple[str, ...], dotted: bool) -> None:
        for key, value in node.items():
            if not isinstance(key, str):
                raise InputError(f"key {key!r} is not a name", file=name, line=lines.get(written))
            here_written = written + (key,)
            # keys inside a Dict-typed field (model_config, lora_config, mm_configs) are data, not fields
            free = bool(path) and spec.open_block(".".join(path) + ".*") is not None
            parts = (key,) if free or "." not in key else tuple(key.split("."))
            if any(not p for p in parts):
                raise InputError(f"key {key!r} has an empty part", file=name, line=lines.get(here_written))
            here = path + parts
            is_dotted = dotted or len(parts) > 1
            if isinstance(value, dict) and value:
                walk(value, here, here_written, is_dotted)
            else:
                out.append(_Setting(here, value, ".".join(here_written), name, lines.get(here_written), is_dotted, here_written))

    walk(data, (), (), False)
    return out


def _bool(text: str) -> bool:
    """VeOmni's _string_to_bool."""
    lowered = text.lower()
    if lowered in ("yes", "true", "t", "y", "1"):
        return True
    if lowered in ("no", "false", "f", "n", "0"):
        return False
    raise ValueError(f"boolean value expected, got {text!r}")


def _typed(node: dict[str, Any], values: list[str], option: str) -> Any:
    """An option's values converted the way VeOmni's argparse options convert them."""
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    enum = node.get("x-choices")  # argparse choices (a Literal field)

    def one(text: str, kind: str | None) -> Any:
        if kind == "boolean":
            return _bool(text)
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
        return text

    if "array" in kinds:
        if not values:
            raise ValueError(f"{option} expects at least one value")
        item = node.get("items", {}).get("type")
        return [one(v, item if isinstance(item, str) else None) for v in values]
    if "object" in kinds:
        raise ValueError(f"{option} is a mapping: VeOmni's command line cannot set it (write it in the YAML)")
    kind = next((k for k in kinds if k != "null"), None)
    if kind == "boolean":
        if len(values) > 1:
            raise ValueError(f"{option} takes one value")
        return True if not values else _bool(values[0])
    if len(values) != 1:
        raise ValueError(f"{option} takes exactly one value, got {len(values)}")
    if enum:
        kind = {bool: "boolean", int: "integer", float: "number"}.get(type(next(e for e in enum if e is not None)), kind)
        value = one(values[0], kind)
        if value not in enum:
            raise ValueError(f"{option}: invalid choice {value!r} (choose from {', '.join(map(str, enum))})")
        return value
    return one(values[0], kind)


def is_option_file(text: str) -> bool:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped.startswith("--")
    return False


def _option_settings(text: str, name: str) -> list[_Setting]:
    """`--a.b value...` options, as VeOmni's argparse reads them (one option per key, values after it)."""
    spec = fields()
    tokens: list[tuple[str, int]] = []
    for number, text_line in enumerate(text.splitlines(), 1):
        try:
            tokens += [(t, number) for t in shlex.split(text_line, comments=True)]
        except ValueError as exc:
            raise InputError(f"cannot split the options: {exc}", file=name, line=number) from None
    out: list[_Setting] = []
    i = 0
    while i < len(tokens):
        token, line = tokens[i]
        if not token.startswith("--"):
            raise InputError(f"unexpected argument {token!r}: expected --section.key value", file=name, line=line)
        option, sep, inline = token[2:].partition("=")
        values = [inline] if sep else []
        i += 1
        while not sep and i < len(tokens) and not tokens[i][0].startswith("--"):
            values.append(tokens[i][0])
            i += 1
        node = spec.node(option)
        if node is not None and "properties" in node:
            node = node.get("x-flat-scalar")  # --train.optimizer adamw (flat layout)
        if node is None or option.startswith(HF + "."):
            close = [k for k in spec.nodes if k.endswith("." + option.rsplit(".", 1)[-1]) and "properties" not in spec.nodes[k]]
            hint = f"; did you mean --{close[0]}?" if close else ""
            raise InputError(f"unrecognized argument --{option}: VeOmni's argparse refuses it{hint}", file=name, line=line)
        try:
            value = _typed(node, values, f"--{option}")
        except ValueError as exc:
            raise InputError(str(exc), file=name, line=line, hint="fix the value") from None
        out.append(_Setting(tuple(option.split(".")), value, f"--{option}", name, line))
    return out


def _place(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> Any:
    """Set a value; returns what was there (a value, or a block)."""
    node = tree
    for i, part in enumerate(path[:-1]):
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            return ("value", ".".join(path[: i + 1]))
        node = child
    previous = node.get(path[-1], _NOTHING)
    if isinstance(previous, dict) and previous:
        return ("block", ".".join(path))
    node[path[-1]] = value
    return previous


_NOTHING = object()


def _merge(settings: list[_Setting]) -> tuple[dict[str, Any], dict[str, _Setting], dict[str, str]]:
    """Settings in order -> (tree, leaf -> the setting it came from, leaf -> note).

    In one YAML file a field given twice (nested and dotted) must agree; an option file overrides
    the YAML, as VeOmni's _deep_update does.
    """
    tree: dict[str, Any] = {}
    origin: dict[str, _Setting] = {}
    notes: dict[str, str] = {}
    for s in settings:
        leaf = ".".join(s.path)
        first = origin.get(leaf)
        previous = _place(tree, s.path, s.value)
        if isinstance(previous, tuple):
            where = previous[1]
            other: _Setting | None = origin.get(where) or next((o for k, o in origin.items() if k.startswith(where + ".")), None)
            shown = f"{other.shown} ({other.file}:{other.line})" if other else where
            raise InputError(
                f"{s.shown} and {shown} make {where} both a value and a block: keep one",
                file=s.file, line=s.line,
            )  # fmt: skip
        if first is not None:
            if s.spelled.startswith("--"):  # VeOmni: options deep-update the YAML; argparse keeps the last
                notes[leaf] = f"{s.spelled} ({s.file}:{s.line}) overrides {first.value!r} from {first.file}:{first.line}"
            elif s.value != first.value or type(s.value) is not type(first.value):
                raise InputError(
                    f"{first.shown} (line {first.line}) and {s.shown} (line {s.line}) both set {leaf}, to "
                    f"{first.value!r} and {s.value!r}: keep one",
                    file=s.file, line=s.line, key=leaf,
                )  # fmt: skip
            else:
                notes[leaf] = f"given twice with the same value: as {first.shown} (line {first.line}) and {s.shown} (line {s.line})"
        if first is None or s.spelled.startswith("--"):
            origin[leaf] = s  # the setting that decides the value (the first spelling of a duplicate)
    return tree, origin, notes


def detect_layout(tree: dict[str, Any]) -> str:
    return _layout_of(flatten(tree)) or "nested"


def _layout_of(leaves: dict[str, Any]) -> str | None:
    """flat / nested from keys only one layout has; None when the keys do not tell."""
    spec = fields()
    flat = nested = None
    for leaf, value in leaves.items():
        found = spec.layouts_of(leaf, value)
        if found == ("flat",):
            flat = flat or leaf
        elif found == ("nested",):
            nested = nested or leaf
    if flat and nested:
        raise InputError(
            f"mixes the flat layout ({flat}) with the nested one ({nested}); VeOmni reads one of them "
            "(PR #538 moved the keys): write the file in one layout",
            key=nested,
        )  # fmt: skip
    return "flat" if flat else "nested" if nested else None


def _to_view(leaf: str, value: Any, layout: str) -> str:
    """A key as written -> the nested view mappings/veomni.yaml is keyed on."""
    if layout != "flat":
        return leaf
    spec = fields()
    if leaf == "train.optimizer" and not isinstance(value, dict):
        return spec.renames["train.optimizer"]
    return spec.renames.get(leaf, leaf)


def read(paths: list[str], *, layout: str | None = None, model_config: ModelConfig = None) -> Source:
    settings: list[_Setting] = []
    texts: dict[str, str] = {}
    yaml_files: list[str] = []
    for path in paths:
        name = str(path)
        text = read_text(name)
        texts[name] = text
        if is_option_file(text):
            settings += _option_settings(text, name)
            continue
        if yaml_files:
            raise InputError(
                f"VeOmni reads one YAML file and {yaml_files[0]} is it: give the others as option files "
                "(--section.key value lines)",
                file=name,
            )  # fmt: skip
        if settings:
            raise InputError("the YAML file comes first, then the option files (as on VeOmni's command line)", file=name)
        yaml_files.append(name)
        lines: dict[tuple[str, ...], int] = {}
        data = parse_yaml(text, name, key_lines=lines)
        if "sources" in data and set(data) <= MANIFEST_KEYS:
            raise InputError(
                "a VeOmni data manifest (sources, names, schedule), not a training config: it is what "
                "data.train_path points at; translate the training config that names it",
                file=name, line=lines.get(("sources",)),
            )  # fmt: skip
        settings += _yaml_settings(data, lines, name)
    base = yaml_files[0] if yaml_files else str(paths[0])
    return _build(settings, [str(p) for p in paths], texts, base, layout, model_config)


def source_from_tree(data: dict[str, Any], name: str = "<config>", text: str = "", model_config: ModelConfig = None) -> Source:
    """A parsed VeOmni config (a mapping handed to the library) read as a file would be.
    `model_config`: the config.json's path, or its parsed content (nothing is read from disk)."""
    settings = _yaml_settings(data, _key_lines(text) if text else {}, name)
    return _build(settings, [name], {name: text} if text else {}, name, None, model_config)


def _build(
    settings: list[_Setting],
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
    raw_tree, origin, notes = _merge(settings)
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
    for leaf, value in raw_leaves.items():
        key = _to_view(leaf, value, chosen)
        view[key] = value
        setting = origin.get(leaf)
        spelled = setting.spelled if setting else leaf
        if spelled != key:
            aliases[key] = spelled
        if setting is not None:
            origins[key] = (setting.file, setting.line)
            note = DOTTED_NOTE.format(key=leaf) if setting.dotted and not setting.spelled.startswith("--") else ""
            merged = notes.get(leaf, "")
            if note or merged:
                view_notes[key] = f"{note}; {merged}" if note and merged else note or merged
        elif leaf in notes:
            view_notes[key] = notes[leaf]
    tree = unflatten(view)
    leaf_files = {k: base for k in tree}
    source = VeomniSource(
        "veomni", tree, list(files), texts, leaf_files, layout=chosen, version=chosen,
        notes={k: v for k, v in view_notes.items() if v}, aliases=aliases, origins=origins,
    )  # fmt: skip
    _attach_architecture(source, base, model_config)
    return source


def _config_json(source: Source, base: str, model_config: str | None) -> tuple[Path | None, str]:
    """The HF config.json VeOmni would load, or None and why not."""
    if model_config is not None:
        path = Path(model_config)
        if path.is_dir():
            path = path / CONFIG_JSON
        if not path.is_file():
            raise InputError("no such file (--model-config)", file=str(path))
        return path, ""
    found = source.tree.get("model")
    model: dict[str, Any] = found if isinstance(found, dict) else {}
    for key in ("config_path", "model_path"):  # VeOmni: config_path defaults to model_path
        where = model.get(key)
        if isinstance(where, str) and where:
            folder = Path(base).parent if base not in ("-", "<config>") else Path(".")
            path = folder / where
            if path.is_dir():
                path = path / CONFIG_JSON
            if path.is_file():
                return path, ""
            return None, (
                f"VeOmni reads the architecture from the HF config.json at model.{key} ({where!r} is no "
                f"folder or file beside {Path(base).name}): give it with --model-config FILE"
            )
    return None, "the config names no model.config_path or model.model_path: give the HF config.json with --model-config FILE"


def _attach_architecture(source: VeomniSource, base: str, model_config: ModelConfig) -> None:
    if isinstance(model_config, Mapping):  # already parsed: a translation reading its own output back
        name, text, parsed, shown = CONFIG_JSON, "", dict(model_config), CONFIG_JSON
    else:
        path, why = _config_json(source, base, model_config)
        if path is None:
            source.meta["unsupplied"] = dict.fromkeys(architecture_fields(), why)
            return
        name, shown = str(path), path.name
        text = read_text(name)
        parsed = parse_json(text, name)
    config, lifted = hf_config.lift_rope_parameters(parsed)
    config = hf_config.mark_explicit_nulls(config)
    model_type = config.get("model_type")
    if model_type not in hf_config.table().types:
        known = ", ".join(hf_config.table().types)
        source.meta["unsupplied"] = dict.fromkeys(
            architecture_fields(),
            f"{shown} is HF model_type {model_type!r}, which neoconv does not map ({known}): give the "
            "architecture with --set",
        )
    source.tree[HF] = config
    source.files.append(name)
    source.texts[name] = text
    source.leaf_files[HF] = name
    lines = _json_key_lines(text) if text else {}  # parsed in memory (a read-back): no lines to find
    for leaf in flatten({HF: config}):
        key = leaf[len(HF) + 1 :]
        written = lifted.get(key, key)
        source.aliases[leaf] = f"{shown}:{written}"
        source.origins[leaf] = (name, lines.get(tuple(written.split("."))) if lines is not None else key_line(text, written))


def _json_key_lines(text: str) -> dict[tuple[str, ...], int] | None:
    """The line of every key of a JSON file, in one pass (a config.json of 20,000 keys is read in
    well under a second; a search per key took minutes). None when the YAML reader cannot read it."""
    lines: dict[tuple[str, ...], int] = {}
    try:
        load_yaml(text, key_lines=lines)
    except (yaml.YAMLError, NeoconvError):
        return None if len(text) < 1 << 16 else {}  # a small file is searched key by key instead
    return lines


# --------------------------------------------------------------------------------------------
# Writing


def unplaceable(leaf: str, layout: str | None) -> str | None:
    """Why a layout has no place for a view leaf (same-format translation), or None."""
    layout = layout or "nested"
    if leaf.startswith(HF + "."):
        return None
    if leaf == "train.enable_full_shard" and layout == "nested":
        return None  # the writer folds it into fsdp_mode (FSDP1 -> FSDP2)
    spec = fields()
    key = spec.back.get(leaf, leaf) if layout == "flat" else leaf
    found = spec.layouts_of(key)
    if not found:
        return "not a VeOmni field (VeOmni's parser would ignore it): not written"
    if layout in found:
        return None
    if layout == "flat":
        return "the flat layout (VeOmni before PR #538) has no such field"
    return "the nested layout (VeOmni since PR #538) has no such field"


def write(leaves: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    layout = meta.get("layout") or "nested"
    same = meta.get("source_format") == "veomni"
    hf = {k[len(HF) + 1 :]: v for k, v in leaves.items() if k.startswith(HF + ".")}
    rest = {k: v for k, v in leaves.items() if not k.startswith(HF + ".")}
    moved: dict[str, str] = dict(meta.get("target_paths") or {})
    amend: dict[str, tuple[str, str]] = {}
    extra: list[tuple[str | None, str | None, str, str]] = []
    for key in hf:
        moved[f"{HF}.{key}"] = f"{CONFIG_JSON if same else config_name(meta)}:{key}" + (" (unchanged)" if same else "")
    for key in _hf_keys():  # also the config.json keys a report names as missing
        moved.setdefault(key, f"{config_name(meta)}:{key[len(HF) + 1:]}")
    config = hf_config.document(hf) if hf and not same else None
    if config is not None:
        rest["model.config_path"] = config_name(meta)
    if same:
        _migrate(rest, meta.get("source_layout") or "nested", layout, amend, extra, moved)
    if not same:
        extra += _needed(rest, bool(hf))
    document = _lay_out(rest, layout, moved)
    document.config_json = config
    meta["target_paths"] = moved
    meta.setdefault("amend", {}).update(amend)
    meta.setdefault("extra_entries", []).extend(extra)
    return document


def _migrate(
    leaves: dict[str, Any],
    source_layout: str,
    layout: str,
    amend: dict[str, tuple[str, str]],
    extra: list[tuple[str | None, str | None, str, str]],
    moved: dict[str, str],
) -> None:
    """veomni2veomni across layouts: FSDP1 becomes FSDP2, and defaults that changed become explicit."""
    spec = fields()
    mode_key = spec.renames["train.data_parallel_mode"]
    full_shard = leaves.pop("train.enable_full_shard", None)
    if layout == "nested" and full_shard is not None:
        moved["train.enable_full_shard"] = mode_key
        amend["train.enable_full_shard"] = ("converted", "FSDP1's sharding switch: folded into fsdp_mode")
    if layout == "nested" and leaves.get(mode_key) == "fsdp1":
        shard = full_shard is not False
        leaves[mode_key] = "fsdp2" if shard else "ddp"
        device = "meta" if shard else "cuda"
        why = ("FSDP1 was removed after PR #538: FULL_SHARD is FSDP2 resharding after forward (ZeRO-3 either way)"
               if shard else "FSDP1 was removed after PR #538: NO_SHARD is plain DDP")  # fmt: skip
        amend[mode_key] = ("converted", f"{why}; FSDP2 needs init_device meta, DDP cuda")
        if leaves.get("train.init_device") != device:
            if "train.init_device" in leaves:
                amend["train.init_device"] = ("converted", f"set to {device} for {leaves[mode_key]}")
            else:
                extra.append((None, "train.init_device", "converted", f"{device}: what {leaves[mode_key]} needs"))
            leaves["train.init_device"] = device
    if source_layout == layout:
        return
    for flat_key in spec.carry_defaults:
        view_key = spec.renames.get(flat_key, flat_key)
        if view_key in leaves:
            continue
        value = spec.default(flat_key, "flat") if source_layout == "flat" else spec.default(view_key, "nested")
        if value is None:
            continue  # required in the source layout: a valid file has it
        leaves[view_key] = value
        target = spec.default(flat_key, "flat") if layout == "flat" else spec.default(view_key, "nested")
        shown = "required" if target is None else repr(target)
        extra.append((None, view_key, "defaulted",
                      f"the {source_layout} layout's default {value!r} (not in the file) written: the {layout} layout's is {shown}"))  # fmt: skip


def _needed(leaves: dict[str, Any], wrote_config: bool) -> list[tuple[str | None, str | None, str, str]]:
    """VeOmni keys with no canonical field that a run cannot do without."""
    out: list[tuple[str | None, str | None, str, str]] = []
    if not wrote_config and not any(k in leaves for k in ("model.config_path", "model.model_path")):
        out.append((None, "model.config_path", "missing",
                    "VeOmni needs the model: model.config_path (an HF config.json) or model.model_path; the source "
                    "describes no architecture"))  # fmt: skip
    if "data.train_path" not in leaves:
        out.append((None, "data.train_path", "missing",
                    "VeOmni requires data.train_path (no default): convert the dataset for VeOmni and add its path"))  # fmt: skip
    if wrote_config and not any(k in leaves for k in ("model.tokenizer_path", "model.model_path")):
        out.append((None, "model.tokenizer_path", "missing",
                    "VeOmni loads the tokenizer from model.tokenizer_path, else model.config_path (the written "
                    "config.json, which holds none): add the HF tokenizer folder or hub id"))  # fmt: skip
    return out


class Document(dict):  # type: ignore[type-arg]
    """The VeOmni YAML document; `config_json` is the HF config.json written beside it (or None),
    kept on the document so that `side_files` needs nothing else."""

    config_json: dict[str, Any] | None = None


for _dumper in {yaml.SafeDumper, getattr(yaml, "CSafeDumper", yaml.SafeDumper)}:  # yaml.safe_dump(result.config)
    _dumper.add_representer(Document, yaml.representer.SafeRepresenter.represent_dict)


def _lay_out(leaves: dict[str, Any], layout: str, moved: dict[str, str]) -> Document:
    """View leaves -> the document in `layout`, checked against that layout's dataclass fields."""
    spec = fields()
    out: dict[str, Any] = {}
    for key, value in leaves.items():
        target = key
        if layout == "flat":
            target = "train.optimizer" if key == spec.renames["train.optimizer"] else spec.back.get(key, key)
            if target != key:
                moved[key] = target
        out[target] = value
    for key, value in out.items():
        placed = spec.layouts_of(key, value)
        if placed and layout not in placed:
            raise NeoconvError(f"internal error: {key} is not a field of the {layout} layout (mappings/veomni.yaml)")
    tree = unflatten(out)
    ordered = Document((section, tree.pop(section)) for section in SECTIONS if section in tree)
    ordered.update(tree)
    return ordered


def dump(document: dict[str, Any], meta: dict[str, Any]) -> str:
    source = f" from {meta['from']}" if meta.get("from") else ""
    layout = meta.get("layout") or "nested"
    era = "VeOmni since PR #538" if layout == "nested" else "VeOmni before PR #538"
    lines = [f"# VeOmni config ({layout} layout, {era}) written by neoconv{source}"]
    config = getattr(document, "config_json", None)
    if config:
        lines.append(f"# The architecture is the HF config {config_name(meta)} written beside this file (model_type "
                     f"{config.get('model_type')}); VeOmni resolves model.config_path from the folder it is launched in")  # fmt: skip
    return "\n".join(lines) + "\n" + dump_yaml(document)


def config_name(meta: dict[str, Any]) -> str:
    """The config.json written beside an output is named after it (out/b.yaml: out/b.config.json),
    so that two outputs in one folder never share, or overwrite, one architecture file."""
    output = meta.get("output")
    if not output:
        return CONFIG_JSON
    stem, dot, _ = str(output).rpartition(".")
    return f"{stem if dot and stem else output}.{CONFIG_JSON}"


def side_files(document: dict[str, Any], meta: dict[str, Any]) -> dict[str, str]:
    config = getattr(document, "config_json", None)
    return {config_name(meta): hf_config.dump(config)} if config else {}
