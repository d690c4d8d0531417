"""Trainer document -> the legacy view the mapping table is keyed on (the inverse of to_trainer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...io.documents import flatten
from .layout import (
    RESIDUE,
    Path,
    Place,
    escape,
    get_path,
    is_block,
    layout,
    places_for,
    unconvert_lr_scheduler,
    unescape,
)


@dataclass
class View:
    leaves: dict[str, Any]  # legacy-view leaf -> value (in the trainer file's order)
    aliases: dict[str, str]  # view leaf -> trainer path as written
    notes: dict[str, str]
    # trainer places the writer would fill from a legacy key but this file leaves out
    # (validate.val_dataloader, the ComputeNorm callback, ...): a same-format write leaves them out too
    absent: list[list[str]] = field(default_factory=list)
    # (legacy learning_rate, init.schedulers as written): a same-format write keeps the written form
    # when the schedule is unchanged (SequentialLR of one phase and ConstantLR are equivalent spellings)
    schedule: tuple[Any, Any] | None = None
    # callbacks / loggers: the classes in the file's order (a same-format write keeps it: they run in order)
    class_order: dict[str, list[str]] = field(default_factory=dict)


def from_trainer(trainer: dict[str, Any]) -> View:

    view = View({}, {}, {})
    order: dict[str, int] = {}

    clash: dict[str, str] = {}  # trainer path -> why it stays a trainer-only leaf

    def add(leaf: str, value: Any, alias: str, rank: int) -> bool:
        """Put a view leaf unless a legacy key already holds it (or a block conflicts with it)."""
        if leaf in view.leaves:
            first = view.aliases.get(leaf, leaf)
            same = "repeats" if view.leaves[leaf] == value else f"differs from {view.leaves[leaf]!r} in"
            clash[alias] = f"{same} {first} (legacy {leaf}), which is the one read"
            return False
        if any(k.startswith(leaf + ".") or leaf.startswith(k + ".") for k in view.leaves):
            clash[alias] = f"legacy {leaf} is already a block or a value of another trainer key"
            return False
        view.leaves[leaf] = value
        order[leaf] = rank
        if alias != leaf:
            view.aliases[leaf] = alias
            if isinstance(value, dict):  # a block (one LR scheduler): its leaves point at the same place
                for sub in flatten(value):
                    view.aliases[f"{leaf}.{sub}"] = alias
        return True

    def keep(path: Path, value: Any, rank: int) -> None:
        leaf = ".".join((RESIDUE, *path))
        view.leaves[leaf] = value
        order[leaf] = rank
        shown = unescape(leaf)
        if shown != leaf:
            view.aliases[leaf] = shown
        reasons = [why for where, why in clash.items() if where == shown or where.startswith(shown + ".")]
        if reasons:
            view.notes[leaf] = "; ".join(dict.fromkeys(reasons))

    init: dict[str, Any] = trainer["init"] if isinstance(trainer.get("init"), dict) else {}
    optimizer = init.get("optimizer")
    items = _trainer_items(trainer)
    for rank, path, value in items:
        alias = unescape(".".join((RESIDUE, *path)))
        if path[:2] == ("init", "optimizer") and len(path) >= 3 and _one_class(optimizer):
            # {Class: {...}} -> optimizer_type: Class plus the settings, as in a legacy file
            leaf = "optimizer.optimizer_type" if len(path) == 3 else ".".join(("optimizer", *path[3:]))
            if not add(leaf, path[2] if len(path) == 3 else value, alias, rank):
                keep(path, value, rank)
            elif len(path) == 3:
                view.notes[leaf] = f"the optimizer class {path[2]}"
            continue
        if path[:2] == ("init", "optimizer"):
            keep(path, value, rank)  # not one {Class: {...}}: no legacy form
            continue
        if path == ("init", "schedulers"):
            legacy = _legacy_schedule(value, optimizer)
            if legacy is None or not add("optimizer.learning_rate", legacy, alias, rank):
                keep(path, value, rank)
            else:
                view.schedule = (legacy, value)
                view.notes["optimizer.learning_rate"] = "read from the cstorch scheduler classes"
            continue
        if path in (("init", "callbacks"), ("init", "loggers")):
            if isinstance(value, list):
                view.class_order[path[1]] = [str(next(iter(e))) for e in value if isinstance(e, dict) and len(e) == 1]
            rest = _callback_leaves(path[1], value, rank, add)
            if rest:
                keep(path, rest, rank)
            continue
        legacy_leaf = _legacy_path(path, value, init)
        if legacy_leaf is None or not add(legacy_leaf, value, alias, rank):
            keep(path, value, rank)
    view.leaves = dict(sorted(view.leaves.items(), key=lambda kv: order[kv[0]]))
    view.absent = _absent_places(view.leaves, _present_paths(items))
    return view


def _place_path(place: Place, rel: str) -> Path:
    tail = tuple(rel.split(".")) if rel else ()
    if place.cls is not None:
        return (*place.trainer, place.cls, *((place.body_key,) if place.body_key else ()), *tail)
    return place.trainer + tail


def _present_paths(items: list[tuple[int, Path, Any]]) -> set[Path]:
    present: set[Path] = set()
    for _, path, value in items:
        present.add(tuple(unescape(p) for p in path))
        if path in (("init", "callbacks"), ("init", "loggers")) and isinstance(value, list):
            for entry in value:
                if isinstance(entry, dict) and len(entry) == 1:
                    ((cls, body),) = entry.items()
                    present.add((*path, str(cls)))
                    present.update((*path, str(cls), str(k)) for k in (body if isinstance(body, dict) else {}))
    return present


def _absent_places(leaves: dict[str, Any], present: set[Path]) -> list[list[str]]:
    """Places of a legacy key with several trainer places that the trainer file does not use."""
    prune = set(layout().prune)
    absent: list[list[str]] = []
    for leaf, value in leaves.items():
        if leaf.startswith(RESIDUE + "."):
            continue
        paths = [p for p in (_place_path(place, rel) for place, rel in places_for(leaf, value)) if p not in prune]
        if len(paths) < 2:
            continue
        for path in paths:
            if not any(p[: len(path)] == path for p in present) and list(path) not in absent:
                absent.append(list(path))
    return absent


def _one_class(optimizer: Any) -> bool:
    return (
        isinstance(optimizer, dict)
        and len(optimizer) == 1
        and isinstance(next(iter(optimizer.values())), (dict, type(None)))
    )


def _trainer_items(trainer: dict[str, Any]) -> list[tuple[int, Path, Any]]:
    """(file position, path, value) of every trainer leaf, in the order the legacy view is built
    (init sections in Cerebras' order, then fit, validate, validate_all), so that the first trainer
    place of a legacy key is the one read. Callback lists and the schedule are one item each; the
    optimizer's class name is an item of its own (path init.optimizer.<Class>)."""
    found: list[tuple[int, Path, Any]] = []
    whole = {("init", "callbacks"), ("init", "loggers"), ("init", "schedulers")}

    def walk(node: Any, path: Path) -> None:
        if path in whole:
            found.append((len(found), path, node))
        elif path == ("init", "optimizer") and _one_class(node):
            ((cls, body),) = node.items()
            found.append((len(found), path + (str(cls),), None))
            for key, value in (body or {}).items():
                walk(value, path + (str(cls), escape(str(key))))
        elif isinstance(node, dict) and node:
            for key, value in node.items():
                walk(value, path + (escape(str(key)),))
        else:
            found.append((len(found), path, node))

    walk(trainer, ())
    priority = {name: i for i, name in enumerate(layout().init_order)}

    def rank(item: tuple[int, Path, Any]) -> tuple[int, int, int]:
        _, path, _ = item
        top = {"init": 0, "fit": 1, "validate": 2, "validate_all": 3}.get(path[0] if path else "", 4)
        second = priority.get(path[1], len(priority)) if top == 0 and len(path) > 1 else 0
        return (top, second, item[0])

    return sorted(found, key=rank)


def _legacy_schedule(value: Any, optimizer: Any) -> Any:
    """init.schedulers -> legacy learning_rate, or None when it has no legacy form (or is implied)."""
    if not isinstance(value, list) or len(value) != 1:
        return None
    entry = value[0]
    body = next(iter(entry.values())) if isinstance(entry, dict) and len(entry) == 1 else None
    cls = next(iter(entry)) if isinstance(entry, dict) and len(entry) == 1 else ""
    params: Any = next(iter(optimizer.values()), {}) if isinstance(optimizer, dict) and len(optimizer) == 1 else {}
    if isinstance(params, dict) and params.get("adjust_learning_rate") and cls.lower() == "scaleperparamlr":
        if not isinstance(body, dict) or set(body) != {"scheduler"}:
            return None
        entry = body["scheduler"]
        cls = next(iter(entry)) if isinstance(entry, dict) and len(entry) == 1 else ""
        body = next(iter(entry.values())) if cls else None
    if cls.lower() == "constantlr" and isinstance(params, dict) and isinstance(body, dict):
        lr = params.get("learning_rate", params.get("lr"))
        if set(body) == {"learning_rate"} and lr is not None and float(lr) == float(body["learning_rate"]):
            return None  # what Cerebras writes for a constant legacy learning_rate: the optimizer's lr says it
    try:
        legacy = unconvert_lr_scheduler(entry)
    except ValueError:
        return None
    # Cerebras collapses a one-phase list to its scheduler; legacy files write the list
    return legacy if isinstance(legacy, list) else [legacy]


def _legacy_path(path: Path, value: Any, init: dict[str, Any]) -> str | None:
    """The legacy key of a plain trainer leaf: an exact place, else the deepest block place."""
    best: tuple[int, str] | None = None
    for place in layout().places:
        if place.cls is not None:
            continue
        n = len(place.trainer)
        if not place.block:
            if path == place.trainer:
                # an exact place inside a block (init.sparsity.sparsity) only when nothing else is there
                parent = get_path({"init": init}, path[:-1]) if path[0] == "init" else None
                if (
                    isinstance(parent, dict)
                    and len(parent) > 1
                    and any(
                        p.block and path[: len(p.trainer)] == p.trainer and len(p.trainer) < n for p in layout().places
                    )
                ):
                    continue
                return place.legacy
            continue
        if path[:n] == place.trainer and (best is None or n > best[0]):
            best = (n, ".".join((place.legacy, *path[n:])))
    return best[1] if best else None


def _callback_leaves(section: str, items: Any, rank: int, add: Any) -> list[Any]:
    """init.callbacks / init.loggers -> legacy keys; returns what has no legacy key."""
    if not isinstance(items, list):
        return [items]
    places: dict[str, list[Place]] = {}
    for place in layout().places:
        if place.cls is not None and place.trainer[-1] == section:
            places.setdefault(place.cls, []).append(place)
    rest: list[Any] = []
    for item in items:
        if not isinstance(item, dict) or len(item) != 1:
            rest.append(item)
            continue
        ((cls, body),) = item.items()
        alias = f"{RESIDUE}.init.{section}.{cls}"
        mine = places.get(cls, [])
        whole = next((p for p in mine if p.body_key is None), None)
        if whole is not None and not whole.block and (body is None or body == {} or body is True):
            if not add(whole.legacy, body is not None, alias, rank):
                rest.append(item)
            continue
        if whole is not None and whole.block and isinstance(body, dict) and body:
            leftover = {k: v for k, v in body.items() if not add(f"{whole.legacy}.{k}", v, f"{alias}.{k}", rank)}
            if leftover:
                rest.append({cls: leftover})
            continue
        if not isinstance(body, dict) or not body:
            rest.append(item)
            continue
        leftover = {}
        for key, value in body.items():
            by_key = [p for p in mine if p.body_key == key]
            target = next((p for p in by_key if p.block == is_block(value)), None)
            done = False
            if target is not None and target.block and isinstance(value, dict):
                done = all(add(f"{target.legacy}.{k}", v, f"{alias}.{key}.{k}", rank) for k, v in value.items())
            elif target is not None:
                done = add(target.legacy, value, f"{alias}.{key}", rank)
            if not done:
                leftover[key] = value
        if leftover:
            rest.append({cls: leftover})
    return rest
