"""Legacy view -> trainer document, as Cerebras' convert_legacy_params_to_trainer_params does it."""

from __future__ import annotations

import copy
from typing import Any

from ...core.errors import InputError
from .layout import (
    RESIDUE,
    clean,
    convert_lr_scheduler,
    empty,
    get_path,
    layout,
    places_for,
    pop_path,
    set_path,
    unescape,
)


def to_trainer(
    leaves: dict[str, Any],
    family: str | None,
    absent: list[list[str]] | None = None,
    schedule: Any = None,
    class_order: dict[str, list[str]] | None = None,
    model_name_names: bool = True,
) -> tuple[dict[str, Any], dict[str, str], dict[str, str], bool]:
    """Legacy-view leaves -> (trainer document, leaf -> trainer path it went to, leaf -> how its
    form changed, model name inferred).

    `absent` and `schedule` come from a same-format trainer source (View.absent, View.schedule).
    `model_name_names`: a block's model_name is the model's name (2.4+ reads it so); false for a
    family whose 2.2/2.3 model_name named another model (DPO's policy model)."""
    spec = layout()
    # a trainer source's values are what its release runs: Cerebras' cleanup of empties is its legacy converter's
    trainer, bodies, residue, moved = _place_leaves(leaves, keep_empty=absent is not None)
    init = trainer["init"]
    _sparsity_summaries(leaves, bodies)
    reshaped = _schedulers(init, leaves.get("optimizer.learning_rate"), schedule)
    for section in ("callbacks", "loggers"):
        built = _callbacks(section, bodies)
        if built:
            init[section] = built
    for path in spec.prune:
        pop_path(trainer, path)
    _optimizer_class(init, moved, reshaped)
    inferred = False
    model = init.get("model")
    named = "name" in model or ("model_name" in model and model_name_names) if isinstance(model, dict) else True
    if not named and family:
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
    for section, classes in (class_order or {}).items():  # a trainer source's order, not Cerebras' converter's
        if isinstance(init.get(section), list):
            init[section] = sorted(init[section], key=lambda entry: _rank(entry, classes))
    ordered = {key: init[key] for key in spec.init_order if key in init}
    ordered.update({k: v for k, v in init.items() if k not in ordered})
    trainer["init"] = ordered
    return {"trainer": trainer}, moved, reshaped, inferred


def _rank(entry: Any, classes: list[str]) -> int:
    name = next(iter(entry)) if isinstance(entry, dict) and len(entry) == 1 else None
    return classes.index(name) if name in classes else len(classes)


def _place_leaves(
    leaves: dict[str, Any], keep_empty: bool = False
) -> tuple[dict[str, Any], dict[tuple[str, str], Any], dict[str, Any], dict[str, str]]:
    """Every leaf at its trainer place(s): (trainer, (section, class) -> callback body, trainer-only
    residue, leaf -> the trainer path it went to)."""
    prune = layout().prune
    trainer: dict[str, Any] = {"init": {}}
    bodies: dict[tuple[str, str], Any] = {}
    residue: dict[str, Any] = {}
    moved: dict[str, str] = {}
    for leaf, value in leaves.items():
        if leaf.startswith(RESIDUE + "."):
            residue[leaf[len(RESIDUE) + 1 :]] = value
            moved[leaf] = unescape(leaf)
            continue
        for place, rel in places_for(leaf, value):
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
                    set_path(body, inner, copy.deepcopy(value))
                where = ".".join(
                    (RESIDUE, *place.trainer, place.cls, *((place.body_key,) if place.body_key else ()), *tail)
                )
            else:
                as_written = place.as_is or keep_empty
                if not as_written and empty(clean(value)):
                    continue
                set_path(trainer, place.trainer + tail, copy.deepcopy(value if as_written else clean(value)))
                where = ".".join((RESIDUE, *place.trainer, *tail))
            if leaf not in moved and place.trainer + tail not in prune:
                moved[leaf] = where
    return trainer, bodies, residue, moved


def _schedulers(init: dict[str, Any], learning_rate: Any, schedule: Any) -> dict[str, str]:
    """The legacy learning_rate as cstorch scheduler classes (kept as the source spelled them when
    unchanged); returns leaf -> how its form changed."""
    optimizer = init.get("optimizer")
    adjust = optimizer.get("adjust_learning_rate") if isinstance(optimizer, dict) else None
    if schedule is not None and learning_rate == schedule[0]:
        init["schedulers"] = copy.deepcopy(schedule[1])  # unchanged: as the source spelled it
    elif "schedulers" in init:
        try:
            init["schedulers"] = [convert_lr_scheduler(init["schedulers"], adjust)]
        except ValueError as exc:  # Model Zoo's own converter raises too: no trainer file to write
            raise InputError(
                f"{exc}: the trainer layout has no form of it (Model Zoo's converter refuses it too); "
                "keep --layout legacy or write a cstorch scheduler",
                key="optimizer.learning_rate",
            ) from None
        return {
            "optimizer.learning_rate": "as cstorch scheduler classes: " + ", ".join(_class_names(init["schedulers"]))
        }
    elif isinstance(optimizer, dict) and "learning_rate" in optimizer:
        constant = {"scheduler": "ConstantLR", "learning_rate": float(optimizer["learning_rate"])}
        init["schedulers"] = [convert_lr_scheduler(constant, adjust)]
    return {}


def _optimizer_class(init: dict[str, Any], moved: dict[str, str], reshaped: dict[str, str]) -> None:
    """optimizer_type + settings -> {Class: {...}}, and the leaves that went there follow it."""
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


def _class_names(node: Any) -> list[str]:
    """Scheduler class names in a converted schedule, outermost first."""
    names: list[str] = []
    for entry in node if isinstance(node, list) else [node]:
        if isinstance(entry, dict) and len(entry) == 1:
            ((cls, body),) = entry.items()
            names.append(cls)
            if isinstance(body, dict):
                names += _class_names(body.get("schedulers", body.get("scheduler", [])))
    return names


def _sparsity_summaries(leaves: dict[str, Any], bodies: dict[tuple[str, str], Any]) -> None:
    """Cerebras turns LogSparsity on when any sparsity group asks for add_summaries."""
    if any(
        leaf.startswith("sparsity.") and leaf.endswith(".add_summaries") and value for leaf, value in leaves.items()
    ):
        bodies[("callbacks", "LogSparsity")] = True


def _callbacks(section: str, bodies: dict[tuple[str, str], Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    positions = layout().class_order
    for (sec, cls), body in sorted(bodies.items(), key=lambda item: positions.get(item[0], 1 << 30)):
        if sec != section:
            continue
        if isinstance(body, dict):
            body = clean(body)
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
                    raise ValueError(
                        f"every runconfig.experimental.listeners entry needs a listener_type: {listener!r}"
                    )
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
        set_path(trainer, parts, copy.deepcopy(value))


def _merge_classes(section: str, built: list[dict[str, Any]], kept: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge callback lists by class (a kept body's keys win), placing kept classes in Cerebras' order."""
    positions = layout().class_order
    out = [dict(item) for item in built]
    for item in kept:
        if not isinstance(item, dict) or len(item) != 1:
            out.append(item)
            continue
        ((cls, body),) = item.items()
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
            at = next(
                (
                    i
                    for i, entry in enumerate(out)
                    if isinstance(entry, dict)
                    and len(entry) == 1
                    and positions.get((section, next(iter(entry))), -1) > rank
                ),
                len(out),
            )
        out.insert(at, {cls: copy.deepcopy(body)})
    return out


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
        pop_path(trainer, path)
        for depth in range(len(path) - 1, 0, -1):  # a section left empty goes too
            parent = get_path(trainer, path[:depth])
            if isinstance(parent, dict) and not parent:
                pop_path(trainer, path[:depth])


def trainer_place(leaf: str) -> str | None:
    """The trainer path a legacy-view leaf with a plain value would go to (None: no plain place),
    for keys the report names that were not written (a missing data_dir, vocabulary size)."""
    for place, rel in places_for(leaf, 0):
        if place.cls is None:
            return ".".join((RESIDUE, *place.trainer, *((rel,) if rel else ())))
    return None
