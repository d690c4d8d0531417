"""Cerebras legacy layout <-> trainer layout, driven by mappings/cerebras-layouts.yaml: the places
(this module), legacy -> trainer (to_trainer.py) and trainer -> legacy (from_trainer.py).

`to_trainer` does what Cerebras' `convert_legacy_params_to_trainer_params` (Model Zoo 2.10,
src/cerebras/modelzoo/trainer/utils.py) does to a legacy file: every legacy key goes to its trainer
place(s), blocks are copied, the LR schedule becomes scheduler classes, the optimizer becomes
`{Class: {...}}`, callbacks are built in Cerebras' order, then the prune list runs. `from_trainer`
is its inverse: a trainer file becomes the legacy view the mapping table is keyed on, with the
trainer path of every view leaf kept so the report names what the user wrote. A trainer value that
has no legacy place, or that repeats a legacy key another trainer place already gave, stays in the
view under its own path `trainer.<path>` and goes back to where it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from ...core.resources import data_dir
from ...io.yamlread import load as load_yaml

Path = tuple[str, ...]
RESIDUE = "trainer"  # view prefix of trainer values that have no legacy key
DOT = "\u2024"  # stands for a literal "." inside a trainer key (`csx.debug.x: 1`) in a dotted view path


def escape(key: str) -> str:
    return key.replace(".", DOT)


def unescape(path: str) -> str:
    return path.replace(DOT, ".")


@dataclass(frozen=True)
class Place:
    """One trainer place of a legacy key or block."""

    legacy: str  # dotted legacy path (without `.*`)
    block: bool  # the legacy side is `X.*`: the whole block below X
    trainer: Path  # path below `trainer` (for callbacks: ("init", "callbacks"))
    as_is: bool = False  # trainer side `Y.*`: copied untouched, empty values included
    cls: str | None = None  # callback / logger class
    body_key: str | None = None  # literal key inside the callback body; None = the whole body

    def matches(self, leaf: str, value: Any = None, *, by_name: bool = False) -> str | None:
        """The path of `leaf` below this place ("" = the place itself), or None."""
        if not self.block:
            return "" if leaf == self.legacy and (by_name or not is_block(value)) else None
        if leaf.startswith(self.legacy + "."):
            return leaf[len(self.legacy) + 1 :]
        if leaf == self.legacy and (by_name or is_block(value)):
            return ""
        return None

    @property
    def depth(self) -> int:
        return self.legacy.count(".") + 1


@dataclass(frozen=True)
class Layout:
    places: tuple[Place, ...]
    prune: tuple[Path, ...]
    ignore: frozenset[str]
    schedulers: dict[str, str]  # lower-case class name -> class name
    init_order: tuple[str, ...]
    class_order: dict[tuple[str, str], int]  # (callbacks|loggers, class) -> position


def is_block(value: Any) -> bool:
    return isinstance(value, (dict, list)) and bool(value)


def empty(value: Any) -> bool:
    """What Cerebras' cleanup leaves out: None and empty containers (False, 0 and "" stay)."""
    return value is None or (isinstance(value, (dict, list, tuple)) and not value)


@cache
def layout() -> Layout:
    raw = load_yaml((data_dir("mappings") / "cerebras-layouts.yaml").read_text(encoding="utf-8"))
    places: list[Place] = []
    for trainer, legacy in raw["paths"]:
        places.append(
            Place(
                legacy.removesuffix(".*"),
                legacy.endswith(".*"),
                tuple(trainer.removesuffix(".*").split(".")),
                as_is=trainer.endswith(".*"),
            )
        )
    order: dict[tuple[str, str], int] = {}
    for section in ("callbacks", "loggers"):
        for cls, body_key, legacy in raw[section]:
            order.setdefault((section, cls), len(order))
            places.append(
                Place(legacy.removesuffix(".*"), legacy.endswith(".*"), ("init", section), cls=cls, body_key=body_key)
            )
    return Layout(
        places=tuple(places),
        prune=tuple(tuple(p.split(".")) for p in raw["prune"]),
        ignore=frozenset(raw.get("ignore", ())),
        schedulers={name.lower(): name for name in raw["schedulers"]},
        init_order=tuple(raw["init_order"]),
        class_order=order,
    )


def holds(leaf: str) -> bool:
    """Whether the trainer layout has a place for a legacy-view leaf."""
    return leaf.startswith(RESIDUE + ".") or any(p.matches(leaf, by_name=True) is not None for p in layout().places)


def places_for(leaf: str, value: Any) -> list[tuple[Place, str]]:
    """Cerebras' rule: exact places first; then the longest matching block, or every matching
    block when the key also had an exact place (those blocks then meet the prune list)."""
    found = [(p, rel) for p in layout().places if (rel := p.matches(leaf, value)) is not None]
    exact = [(p, rel) for p, rel in found if not p.block]
    blocks = [(p, rel) for p, rel in found if p.block]
    if not exact and blocks:
        deepest = max(p.depth for p, _ in blocks)
        blocks = [(p, rel) for p, rel in blocks if p.depth == deepest]
    return exact + blocks


def set_path(root: dict[str, Any], path: Path, value: Any) -> None:
    node = root
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[path[-1]] = value


def get_path(root: Any, path: Path) -> Any:
    node = root
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def pop_path(root: dict[str, Any], path: Path) -> None:
    parent = get_path(root, path[:-1]) if len(path) > 1 else root
    if isinstance(parent, dict):
        parent.pop(path[-1], None)


def clean(value: Any) -> Any:
    """Cerebras' cleanup of a value outside an as-is block: drop empty members, recursively."""
    if isinstance(value, dict):
        cleaned = {k: clean(v) for k, v in value.items()}
        return {k: v for k, v in cleaned.items() if not empty(v)}
    if isinstance(value, list):
        cleaned_list = [clean(v) for v in value]
        return [v for v in cleaned_list if not empty(v)]
    return value


def scheduler_class(name: str) -> str:
    """Legacy scheduler name -> cstorch class (`Linear` -> `LinearLR`), as convert_lr_scheduler does."""
    known = layout().schedulers
    lowered = name.lower()
    for probe in (lowered, lowered + "lr"):
        if probe in known:
            return known[probe]
    return name  # a name no release knows (a fork's): carried as written; the reading names it unknown


def tf_cosine(kwargs: dict[str, Any]) -> dict[str, Any]:
    """TensorFlow Model Zoo 1.6-1.8's `scheduler: Cosine` (Trainer.py: tf cosine_decay, then held at
    alpha x the initial lr) as the CosineDecay settings that run the same schedule; `kwargs` without
    the scheduler name."""
    kwargs = dict(kwargs)
    initial = kwargs.get("initial_learning_rate", kwargs.get("learning_rate"))
    alpha = float(kwargs.pop("alpha", 0.0))
    if isinstance(initial, (int, float)) and not isinstance(initial, bool):
        kwargs.setdefault("end_learning_rate", alpha * float(initial))
    return kwargs


def convert_lr_scheduler(spec: Any, adjust_learning_rate: Any = None) -> dict[str, Any]:
    """Legacy `learning_rate` (one scheduler or a list) -> one trainer scheduler."""
    if adjust_learning_rate:
        return {"ScalePerParamLR": {"scheduler": convert_lr_scheduler(spec)}}
    if isinstance(spec, list):
        mains = {str(p.pop("main_scheduler")) for p in spec if isinstance(p, dict) and "main_scheduler" in p}
        if len(mains) > 1:
            raise ValueError(f"conflicting main_scheduler values {sorted(mains)}; give one")
        converted = [convert_lr_scheduler(p) for p in spec]
        chained = bool(mains) and next(iter(mains)).lower() in ("chained", "chainedlr")
        if len(converted) == 1 and not chained:
            return converted[0]
        return {"ChainedScheduler" if chained else "SequentialLR": {"schedulers": converted}}
    if not isinstance(spec, dict) or "scheduler" not in spec:
        raise ValueError(f"a learning_rate scheduler needs a `scheduler` name, got {spec!r}")
    rest = dict(spec)
    written = str(rest.pop("scheduler"))
    if written == "Cosine":  # Model Zoo's converter has no class for it; CosineDecayLR runs the same schedule
        written, rest = "CosineDecay", tf_cosine(rest)
    return {scheduler_class(written): rest}


def legacy_scheduler_name(cls: str) -> str:
    """cstorch class -> the legacy name Cerebras' own legacy configs use (`LinearLR` -> `Linear`)."""
    known = layout().schedulers
    if cls.lower().endswith("lr") and cls.lower()[:-2] not in known and cls.lower() in known:
        proper = known[cls.lower()]
        return proper[:-2]
    return cls


def unconvert_lr_scheduler(entry: Any) -> Any:
    """One trainer scheduler -> the legacy `learning_rate` value; ValueError when it has no legacy form."""
    if not isinstance(entry, dict) or len(entry) != 1:
        raise ValueError("not a {Class: {...}} scheduler")
    ((cls, body),) = entry.items()
    if not isinstance(body, dict):
        raise ValueError("scheduler settings must be a mapping")  # noqa: TRY004 - caught as "no legacy form"
    if cls.lower() in ("sequentiallr", "chainedscheduler", "chainedlr"):
        if set(body) != {"schedulers"} or not isinstance(body["schedulers"], list):
            raise ValueError("only `schedulers` has a legacy form")
        phases = [unconvert_lr_scheduler(p) for p in body["schedulers"]]
        if any(not isinstance(p, dict) for p in phases):
            raise ValueError("nested schedules have no legacy form")
        if cls.lower() != "sequentiallr":
            phases = [{**p, "main_scheduler": "chained"} for p in phases]
        return phases
    if cls.lower() == "scaleperparamlr" or "scheduler" in body:
        raise ValueError("a wrapped scheduler has no legacy form")
    return {"scheduler": legacy_scheduler_name(cls), **body}
