"""A legacy `optimizer.learning_rate` in the spellings Model Zoo 2.2 and later read: what Model Zoo's own
cs-2.1 -> cs-2.2 config converter does (base_converter._apply_lrs_transforms, Model Zoo 2.10:
`total_iters` for 1.x's `steps`/`decay_steps`, `initial_learning_rate` for `learning_rate`, ...),
plus the TensorFlow trainer's `Cosine` (1.6-1.8), which no PyTorch release names: tf cosine_decay,
held at alpha x the initial lr, is CosineDecay to that end lr. A key the class takes under no name is
left out and said (2.10's trainer refuses extra keys: `KeyError: 'total_iters'` is what a kept
`steps` gives)."""

from __future__ import annotations

import copy
from typing import Any, NamedTuple

from ...knowledge.schema import older
from .scheduler import ALIASES, CLASSES, class_name

RESPELLED_FROM = "2.2.0"  # the first release whose schedulers read only their classes' own spellings
PYTORCH_FROM = "2.0.2"  # the first release without the TensorFlow trainer (its "tf_dynamic" loss scaling)


class Respelled(NamedTuple):
    value: Any
    renamed: tuple[str, ...]  # "LinearLR steps -> total_iters", ...
    dropped: tuple[str, ...]  # "CosineDecayLR alpha (no such argument)", ...


def respell(learning_rate: Any, version: str | None) -> Respelled:
    """The legacy learning_rate as `version` reads it (unchanged for a release before 2.2)."""
    if older("cerebras", version, RESPELLED_FROM) or not isinstance(learning_rate, (dict, list)):
        return Respelled(learning_rate, (), ())
    renamed: list[str] = []
    dropped: list[str] = []
    phases = learning_rate if isinstance(learning_rate, list) else [learning_rate]
    out = [_phase(p, renamed, dropped) if isinstance(p, dict) else p for p in phases]
    return Respelled(out if isinstance(learning_rate, list) else out[0], tuple(dict.fromkeys(renamed)), tuple(dropped))


def _phase(phase: dict[str, Any], renamed: list[str], dropped: list[str]) -> dict[str, Any]:
    out = copy.deepcopy(phase)
    name = out.get("scheduler")
    if isinstance(name, str) and name.lower() == "cosine":  # the TensorFlow trainer's cosine_decay
        initial = out.get("initial_learning_rate", out.get("learning_rate"))
        alpha = out.pop("alpha", 0.0)
        if isinstance(initial, (int, float)) and isinstance(alpha, (int, float)) and not isinstance(alpha, bool):
            out.setdefault("end_learning_rate", float(alpha) * float(initial))
        out["scheduler"] = "CosineDecay"
        renamed.append(f"{name} -> CosineDecay (tf cosine_decay, end lr alpha {alpha} x the initial lr)")
    cls = class_name(out.get("scheduler"))
    if cls is None:  # a name no release knows: carried as written (the reading reports it unknown)
        return out
    spec = CLASSES[cls]
    for new, olds in ALIASES.items():
        for old in olds:
            if new in spec and old in out and old not in spec and new not in out:
                out[new] = out.pop(old)
                renamed.append(f"{cls} {old} -> {new}")
    keep = {"scheduler", "main_scheduler", "param_group_tags"}
    for key in [k for k in out if k not in spec and k not in keep]:
        dropped.append(f"{cls} {key}: {out.pop(key)!r}")
    return out


def respell_loss_scale(value: Any, version: str | None) -> Any:
    """1.x's TensorFlow "tf_dynamic" as the PyTorch releases spell dynamic loss scaling ("dynamic")."""
    if value == "tf_dynamic" and not older("cerebras", version, PYTORCH_FROM):
        return "dynamic"
    return value
