"""VeOmni's argument dataclass fields in both key layouts, and the layout renames (data:
schemas/veomni.schema.json with its x-layouts, mappings/veomni-layouts.yaml)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ...core.ir import keep
from ...core.resources import data_dir
from ...knowledge.schema import load_schema
from ...io.yamlread import load as load_yaml
from ..hf import model_types as hf_config

LAYOUTS = ("nested", "flat")  # the schema's x-layouts; `scoped` (PR #1090) is the nested view moved (SCOPED)
SECTIONS = ("model", "data", "train")
HF = hf_config.PREFIX.rstrip(".")  # where the view keeps the config.json's keys
CONFIG_JSON = "config.json"


@dataclass(frozen=True)
class Fields:
    nodes: dict[str, dict[str, Any]]  # dotted path -> schema node (blocks and leaves)
    renames: dict[str, str]  # flat key -> nested key
    back: dict[str, str]  # nested key -> flat key
    carry_defaults: tuple[str, ...]
    scoped: tuple[tuple[str, str], ...] = ()  # nested key or block -> its place in the scoped layout (#1090)
    later: tuple[tuple[str, str, str], ...] = ()  # (release, nested key, its place from that release): #1125
    hard_coded: dict[str, Any] = field(default_factory=dict)  # nested key -> the value releases without it fix
    open_blocks: dict[str, str | None] = field(default_factory=dict)  # path -> open_block(path)

    def node(self, path: str) -> dict[str, Any] | None:
        return self.nodes.get(path)

    def open_block(self, path: str) -> str | None:
        """The free-form (Dict-typed) field a path lies inside, if any (asked once per path)."""
        if path not in self.open_blocks:
            keep(self.open_blocks, path, self._open_block(path), 10_000)
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

    def to_scoped(self, key: str, release: str | None = None) -> str:
        """A nested-view key -> where the scoped layout (PR #1090) keeps it; with `release`, where that
        release keeps it (later moves of the scoped layout: model.chat_template from #1125)."""
        if release is not None:
            for since, old, new in self.later:
                if key == old and _at_or_after(release, since):
                    return new
        for old, new in self.scoped:
            if key == old or key.startswith(old + "."):
                return new + key[len(old) :]
        return key

    def from_scoped(self, key: str) -> str:
        """A scoped-layout key -> the nested view (the six knobs before the accelerator block they sit in)."""
        for _, old, new in self.later:
            if key == new:
                return old
        for old, new in sorted(self.scoped, key=lambda pair: -len(pair[1])):
            if key == new or key.startswith(new + "."):
                return old + key[len(new) :]
        return key

    def is_scoped(self, key: str) -> bool:
        """A key only the scoped layout has (under model.accelerator / model.optimizer)."""
        return any(key == new or key.startswith(new + ".") for _, new in self.scoped) or any(
            key == new for _, _, new in self.later
        )

    def moved_by_scoped(self, key: str) -> str | None:
        """For a nested key that PR #1090 moved: its new place (None: not moved)."""
        new = self.to_scoped(key)
        return new if new != key else None

    def choices(self, path: str, layout: str) -> list[Any] | None:
        """A Literal field's values in a layout (None: not a Literal)."""
        node = self.nodes.get(path, {})
        if layout == "flat" and "x-flat-choices" in node:
            return list(node["x-flat-choices"])
        return node.get("x-choices")

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
    scoped = tuple((str(k), str(v)) for k, v in (raw.get("scoped") or {}).items())
    later = tuple(
        (str(release), str(k), str(v))
        for release, moves in (raw.get("scoped_later") or {}).items()
        for k, v in moves.items()
    )
    return Fields(
        nodes,
        renames,
        {v: k for k, v in renames.items()},
        tuple(raw.get("carry_defaults", ())),
        scoped,
        later,
        dict(raw.get("hard_coded") or {}),
    )


def _at_or_after(release: str, since: str) -> bool:
    from ...knowledge.schema import load_history

    history = load_history("veomni")
    if history is None or release not in history.position or since not in history.position:
        return False
    return history.position[release] >= history.position[since]


@lru_cache(maxsize=None)
def hf_keys() -> tuple[str, ...]:
    from ...knowledge.mapping import load_table

    return tuple(k for rule in load_table("veomni").rules for k in rule.keys if k.startswith(HF + "."))


@lru_cache(maxsize=None)
def architecture_fields() -> tuple[str, ...]:
    """Canonical fields VeOmni keeps in the config.json (the rules written with hf.* formulas)."""
    from ...knowledge.mapping import load_table

    names: dict[str, None] = {}
    for rule in load_table("veomni").rules:
        if rule.formula is not None and rule.formula.name.startswith("hf."):
            names.update(dict.fromkeys(rule.fields))
    return tuple(names)
