"""Cerebras legacy layout <-> trainer layout, driven by mappings/cerebras-layouts.yaml.

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

import copy
from dataclasses import dataclass, field
from functools import cache
from typing import Any


from ...io import flatten
from ...resources import data_dir
from ...yamlread import load as load_yaml

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
            return "" if leaf == self.legacy and (by_name or not _is_block(value)) else None
        if leaf.startswith(self.legacy + "."):
            return leaf[len(self.legacy) + 1 :]
        if leaf == self.legacy and (by_name or _is_block(value)):
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


def _is_block(value: Any) -> bool:
    return isinstance(value, (dict, list)) and bool(value)


def _empty(value: Any) -> bool:
    """What Cerebras' cleanup leaves out: None and empty containers (False, 0 and "" stay)."""
    return value is None or (isinstance(value, (dict, list, tuple)) and not value)


@cache
def layout() -> Layout:
    raw = load_yaml((data_dir("mappings") / "cerebras-layouts.yaml").read_text(encoding="utf-8"))
    places: list[Place] = []
    for trainer, legacy in raw["paths"]:
        places.append(Place(legacy.removesuffix(".*"), legacy.endswith(".*"), tuple(trainer.removesuffix(".*").split(".")),
                            as_is=trainer.endswith(".*")))  # fmt: skip
    order: dict[tuple[str, str], int] = {}
    for section in ("callbacks", "loggers"):
        for cls, body_key, legacy in raw[section]:
            order.setdefault((section, cls), len(order))
            places.append(Place(legacy.removesuffix(".*"), legacy.endswith(".*"), ("init", section), cls=cls, body_key=body_key))
    return Layout(
        places=tuple(places),
        prune=tuple(tuple(p.split(".")) for p in raw["prune"]),
        ignore=frozenset(raw.get("ignore", ())),
        schedulers={name.lower(): name for name in raw["schedulers"]},
        init_order=tuple(raw["init_order"]),
        class_order=order,
    )


# --------------------------------------------------------------------------------------------
# legacy view -> trainer document


def holds(leaf: str) -> bool:
    """Whether the trainer layout has a place for a legacy-view leaf."""
    return leaf.startswith(RESIDUE + ".") or any(p.matches(leaf, by_name=True) is not None for p in layout().places)


def _places_for(leaf: str, value: Any) -> list[tuple[Place, str]]:
    """Cerebras' rule: exact places first; then the longest matching block, or every matching
    block when the key also had an exact place (those blocks then meet the prune list)."""
    found = [(p, rel) for p in layout().places if (rel := p.matches(leaf, value)) is not None]
    exact = [(p, rel) for p, rel in found if not p.block]
    blocks = [(p, rel) for p, rel in found if p.block]
    if not exact and blocks:
        deepest = max(p.depth for p, _ in blocks)
        blocks = [(p, rel) for p, rel in blocks if p.depth == deepest]
    return exact + blocks


def _set(root: dict[str, Any], path: Path, value: Any) -> None:
    node = root
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[path[-1]] = value


def _get(root: Any, path: Path) -> Any:
    node = root
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _pop(root: dict[str, Any], path: Path) -> None:
    parent = _get(root, path[:-1]) if len(path) > 1 else root
    if isinstance(parent, dict):
        parent.pop(path[-1], None)


def _clean(value: Any) -> Any:
    """Cerebras' cleanup of a value outside an as-is block: drop empty members, recursively."""
    if isinstance(value, dict):
        cleaned = {k: _clean(v) for k, v in value.items()}
        return {k: v for k, v in cleaned.items() if not _empty(v)}
    if isinstance(value, list):
        cleaned_list = [_clean(v) for v in value]
        return [v for v in cleaned_list if not _empty(v)]
    return value


def scheduler_class(name: str) -> str:
    """Legacy scheduler name -> cstorch class (`Linear` -> `LinearLR`), as convert_lr_scheduler does."""
    known = layout().schedulers
    lowered = name.lower()
    for probe in (lowered, lowered + "lr"):
        if probe in known:
            return known[probe]
    raise ValueError(f"unknown LR scheduler {name!r}; expected one of {', '.join(known.values())}")


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
    name = scheduler_class(str(rest.pop("scheduler")))
    return {name: rest}


def to_trainer(
    leaves: dict[str, Any], family: str | None, absent: list[list[str]] | None = None, schedule: Any = None
) -> tuple[dict[str, Any], dict[str, str], dict[str, str], bool]:
    """Legacy-view leaves -> (trainer document, leaf -> trainer path it went to, leaf -> how its
    form changed, model name inferred).

    `absent` and `schedule` come from a same-format trainer source (View.absent, View.schedule)."""
    spec = layout()
    trainer: dict[str, Any] = {"init": {}}
    bodies: dict[tuple[str, str], Any] = {}  # (section, class) -> callback body
    residue: dict[str, Any] = {}
    moved: dict[str, str] = {}
    for leaf, value in leaves.items():
        if leaf.startswith(RESIDUE + "."):
            residue[leaf[len(RESIDUE) + 1 :]] = value
            moved[leaf] = unescape(leaf)
            continue
        for place, rel in _places_for(leaf, value):
            tail = tuple(rel.split(".")) if rel else ()
            if place.cls is not None:
                section = place.trainer[-1]
                if place.body_key is None and not tail:
                    bodies[(section, place.cls)] = value
                else:
                    body = bodies.setdefault((section, place.cls), {})
                    if not isinstance(body, dict):
                        body = bodies[(section, place.cls)] = {}
                    inner = ((place.body_key,) if place.body_key else ()) + tail
                    _set(body, inner, copy.deepcopy(value))
                where = ".".join((RESIDUE, *place.trainer, place.cls, *((place.body_key,) if place.body_key else ()), *tail))
            else:
                if not place.as_is and _empty(_clean(value)):
                    continue
                _set(trainer, place.trainer + tail, copy.deepcopy(value if place.as_is else _clean(value)))
                where = ".".join((RESIDUE, *place.trainer, *tail))
            if leaf not in moved and place.trainer + tail not in spec.prune:
                moved[leaf] = where
    init = trainer["init"]
    _sparsity_summaries(leaves, bodies)
    adjust = init.get("optimizer", {}).get("adjust_learning_rate") if isinstance(init.get("optimizer"), dict) else None
    reshaped: dict[str, str] = {}
    if schedule is not None and leaves.get("optimizer.learning_rate") == schedule[0]:
        init["schedulers"] = copy.deepcopy(schedule[1])  # unchanged: as the source spelled it
    elif "schedulers" in init:
        init["schedulers"] = [convert_lr_scheduler(init["schedulers"], adjust)]
        reshaped["optimizer.learning_rate"] = "as cstorch scheduler classes: " + ", ".join(_class_names(init["schedulers"]))
    elif isinstance(init.get("optimizer"), dict) and "learning_rate" in init["optimizer"]:
        constant = {"scheduler": "ConstantLR", "learning_rate": float(init["optimizer"]["learning_rate"])}
        init["schedulers"] = [convert_lr_scheduler(constant, adjust)]
    for section in ("callbacks", "loggers"):
        built = _callbacks(section, bodies)
        if built:
            init[section] = built
    for path in spec.prune:
        _pop(trainer, path)
    optimizer = init.get("optimizer")
    if isinstance(optimizer, dict) and "optimizer_type" in optimizer:
        rest = dict(optimizer)
        name = str(rest.pop("optimizer_type"))
        init["optimizer"] = {name: rest}
        reshaped["optimizer.optimizer_type"] = f"the optimizer class: {{{name}: {{...}}}}"
        for leaf, where in moved.items():
            if where.startswith("trainer.init.optimizer."):
                below = where[len("trainer.init.optimizer.") :]
                moved[leaf] = f"trainer.init.optimizer.{name}" + ("" if below == "optimizer_type" else f".{below}")
    inferred = False
    model = init.get("model")
    if isinstance(model, dict) and "name" not in model and "model_name" not in model and family:
        init["model"] = {"name": family, **model}  # required from Model Zoo 2.4 on; legacy files name none
        inferred = True
    for key in ("fit", "validate", "validate_all"):
        if key in trainer and not trainer[key]:
            trainer.pop(key)
    if "fit" in trainer and "train_dataloader" not in trainer["fit"]:
        trainer.pop("fit")  # Cerebras: no fit without a train dataloader
    if "validate" in trainer and "val_dataloader" not in trainer["validate"]:
        trainer.pop("validate")
    drop_places(trainer, absent or [])
    _apply_residue(trainer, residue)
    init = trainer["init"]
    ordered = {key: init[key] for key in spec.init_order if key in init}
    ordered.update({k: v for k, v in init.items() if k not in ordered})
    trainer["init"] = ordered
    return {"trainer": trainer}, moved, reshaped, inferred


def _class_names(node: Any) -> list[str]:
    """Scheduler class names in a converted schedule, outermost first."""
    names: list[str] = []
    for entry in node if isinstance(node, list) else [node]:
        if isinstance(entry, dict) and len(entry) == 1:
            (cls, body), = entry.items()
            names.append(cls)
            if isinstance(body, dict):
                names += _class_names(body.get("schedulers", body.get("scheduler", [])))
    return names


def _sparsity_summaries(leaves: dict[str, Any], bodies: dict[tuple[str, str], Any]) -> None:
    """Cerebras turns LogSparsity on when any sparsity group asks for add_summaries."""
    if any(leaf.startswith("sparsity.") and leaf.endswith(".add_summaries") and value for leaf, value in leaves.items()):
        bodies[("callbacks", "LogSparsity")] = True


def _callbacks(section: str, bodies: dict[tuple[str, str], Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    positions = layout().class_order
    for (sec, cls), body in sorted(bodies.items(), key=lambda item: positions.get(item[0], 1 << 30)):
        if sec != section:
            continue
        if isinstance(body, dict):
            body = _clean(body)
            if not body:
                continue
        elif body is None:
            continue
        if body is True:
            body = {}
        elif body is False:
            body = None
        if cls == "Listener" and isinstance(body, dict):
            for listener in body.get("listeners") or []:
                listener = dict(listener)
                if "listener_type" not in listener:
                    raise ValueError(f"every runconfig.experimental.listeners entry needs a listener_type: {listener!r}")
                out.append({listener.pop("listener_type"): listener})
            continue
        out.append({cls: body})
    return out


def _apply_residue(trainer: dict[str, Any], residue: dict[str, Any]) -> None:
    """Trainer values with no legacy key go back where they were; callback lists merge by class."""
    for path, value in residue.items():
        parts = tuple(unescape(part) for part in path.split("."))
        if parts in (("init", "callbacks"), ("init", "loggers")) and isinstance(value, list):
            current = trainer["init"].get(parts[1], [])
            trainer["init"][parts[1]] = _merge_classes(parts[1], current, value)
            continue
        _set(trainer, parts, copy.deepcopy(value))


def _merge_classes(section: str, built: list[dict[str, Any]], kept: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge callback lists by class (a kept body's keys win), placing kept classes in Cerebras' order."""
    positions = layout().class_order
    out = [dict(item) for item in built]
    for item in kept:
        if not isinstance(item, dict) or len(item) != 1:
            out.append(item)
            continue
        (cls, body), = item.items()
        same = next((entry for entry in out if isinstance(entry, dict) and cls in entry), None)
        if same is not None:
            if isinstance(same[cls], dict) and isinstance(body, dict):
                same[cls] = {**same[cls], **body}
            else:
                same[cls] = body
            continue
        rank = positions.get((section, cls))
        at = len(out)
        if rank is not None:
            at = next((i for i, entry in enumerate(out)
                       if isinstance(entry, dict) and len(entry) == 1
                       and positions.get((section, next(iter(entry))), -1) > rank), len(out))  # fmt: skip
        out.insert(at, {cls: copy.deepcopy(body)})
    return out


# --------------------------------------------------------------------------------------------
# trainer document -> legacy view


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
    (cls, body), = entry.items()
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
                    (cls, body), = entry.items()
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
        paths = [p for p in (_place_path(place, rel) for place, rel in _places_for(leaf, value)) if p not in prune]
        if len(paths) < 2:
            continue
        for path in paths:
            if not any(p[: len(path)] == path for p in present) and list(path) not in absent:
                absent.append(list(path))
    return absent


def drop_places(trainer: dict[str, Any], absent: list[list[str]]) -> None:
    """Leave out the places a same-format source left out (see View.absent)."""
    for raw in absent:
        path = tuple(raw)
        if path[:2] in (("init", "callbacks"), ("init", "loggers")) and len(path) >= 3:
            items = trainer.get("init", {}).get(path[1])
            if not isinstance(items, list):
                continue
            for entry in list(items):
                if isinstance(entry, dict) and path[2] in entry:
                    if len(path) == 3:
                        items.remove(entry)
                    elif isinstance(entry[path[2]], dict):
                        entry[path[2]].pop(path[3], None)
            if not items:
                trainer["init"].pop(path[1])
            continue
        _pop(trainer, path)
        for depth in range(len(path) - 1, 0, -1):  # a section left empty goes too
            parent = _get(trainer, path[:depth])
            if isinstance(parent, dict) and not parent:
                _pop(trainer, path[:depth])


def _one_class(optimizer: Any) -> bool:
    return isinstance(optimizer, dict) and len(optimizer) == 1 and isinstance(next(iter(optimizer.values())), (dict, type(None)))


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
            (cls, body), = node.items()
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
                parent = _get({"init": init}, path[:-1]) if path[0] == "init" else None
                if isinstance(parent, dict) and len(parent) > 1 and any(
                    p.block and path[: len(p.trainer)] == p.trainer and len(p.trainer) < n for p in layout().places
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
        (cls, body), = item.items()
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
            target = next((p for p in by_key if p.block == _is_block(value)), None)
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
