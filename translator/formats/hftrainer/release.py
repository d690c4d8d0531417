"""A train file carried to another transformers release (hftrainer2hftrainer, `--to-version`): the fields that
release's TrainingArguments does not have are not written (HfArgumentParser refuses a key it does not know), and
the warmup ratio moves between `warmup_ratio` (until 5.10) and `warmup_steps` below 1 (5.0 on: a ratio of the
total steps), so the output runs under the target release as the source ran under its own."""

from __future__ import annotations

from typing import Any

from ...knowledge.schema import load_history
from ...core.report import Status
from ...schedule.model import ScheduleError
from . import scheduler
from .scheduler import version_tuple

RATIO, STEPS = "warmup_ratio", "warmup_steps"
TOP = ("deepspeed",)  # the DeepSpeed config: a file or a mapping of its own, whatever the release


def _reads(key: str, version: str | None) -> bool | None:
    """Whether the release's TrainingArguments has the field (None: not a TrainingArguments field, or no release)."""
    history = load_history("hftrainer")
    if history is None or version not in history.position or key not in history.keys:
        return None
    return history.reads(key, version)


def unplaceable(leaf: str, version: str | None) -> str | None:
    """Why the target release has no place for a carried leaf (a field it does not have), or None."""
    key = leaf.split(".", 1)[0]
    if key in TOP or key == RATIO or _reads(key, version) is not False or _older_name(key, version):
        return None
    history = load_history("hftrainer")
    assert history is not None
    return f"transformers {version} has no TrainingArguments field {key} (fields of {history.runs(key)}): not written"


def _older_name(key: str, version: str | None) -> str | None:
    """The name the release reads the field under, when it is an older one (eval_strategy before 4.41:
    evaluation_strategy): the pipeline writes it so (knowledge.spellings.downgrade)."""
    from ...knowledge.mapping import load_table

    for old, new in load_table("hftrainer").releases.renamed.items():
        if new == key and _reads(old, version):
            return old
    return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def move_warmup(leaves: dict[str, Any], version: str | None) -> tuple[dict[str, str], dict[str, tuple[Status, str]]]:
    """The warmup ratio spelled as the target release takes it (in place). Returns (leaf -> where it went,
    key as carried -> (status, why)) for the report."""
    ratio, steps = _number(leaves.get(RATIO)), _number(leaves.get(STEPS))
    if RATIO in leaves and _reads(RATIO, version) is False:  # 5.11+: warmup_steps below 1 is the ratio
        del leaves[RATIO]
        gone = f"transformers {version} has no warmup_ratio"
        if not ratio:
            return {}, {RATIO: (Status.CONVERTED, f"{gone}: a ratio of 0 is no warmup, its default; not written")}
        if steps:
            return {}, {
                RATIO: (
                    Status.LOSSY,
                    f"{gone}: not written; warmup_steps {leaves[STEPS]!r} beside it runs "
                    "(4.x ran warmup_steps above 0, 5.0-5.10 the ratio)",
                )
            }
        total = _number(leaves.get("max_steps"))
        if ratio >= 1 and not (total and total > 0):  # 1 would be one step: the whole run needs its length
            return {}, {
                RATIO: (
                    Status.LOSSY,
                    f"{gone}, and a ratio of 1 written as warmup_steps would be one step; "
                    "give --set train.steps=N to write the whole run as warmup",
                )
            }
        leaves[STEPS] = int(total) if ratio >= 1 and total else ratio
        why = (
            f"{gone}: warmup_ratio {ratio:g} written as warmup_steps {leaves[STEPS]!r} (5.0 on, warmup_steps below 1 "
            "is a ratio of the total steps)"
        )
        return {RATIO: STEPS}, {RATIO: (Status.CONVERTED, why)}
    if steps is not None and 0 < steps < 1 and _reads(RATIO, version) and version_tuple(version) < (5, 0):
        # 4.x takes warmup_steps as a whole number of steps: the ratio goes back to warmup_ratio
        leaves[RATIO] = leaves.pop(STEPS)
        why = f"transformers {version} counts warmup_steps in steps: the ratio {steps:g} written as warmup_ratio"
        return {STEPS: RATIO}, {STEPS: (Status.CONVERTED, why)}
    return {}, {}


KWARGS = "lr_scheduler_kwargs"
SCHEDULE_KEYS = ("learning_rate", "lr_scheduler_type", "warmup_steps", "warmup_ratio", "lr_scheduler_kwargs")


def _block(leaves: dict[str, Any], key: str) -> dict[str, Any]:
    """A mapping the writer's leaves hold flattened (lr_scheduler_kwargs.min_lr_rate)."""
    return {leaf[len(key) + 1 :]: value for leaf, value in leaves.items() if leaf.startswith(key + ".")}


def reschedule(leaves: dict[str, Any], version: str | None, source: str | None) -> dict[str, tuple[Status, str]]:
    """A schedule the target release does not have (cosine_with_min_lr before 4.38, warmup_stable_decay's
    warmup_type/decay_type before 4.51): written as the target's closest schedule of the same run, in place.
    Returns key as carried -> (status, why) for the report."""
    kind = leaves.get("lr_scheduler_type")
    if not isinstance(kind, str) or version is None or version == source:
        return {}
    from .schedule import kwargs_of

    lr = leaves.get("learning_rate", 5e-5)
    total = _number(leaves.get("max_steps"))
    steps = int(total) if total and total > 0 else None
    try:
        kwargs = kwargs_of(leaves.get(KWARGS, _block(leaves, KWARGS) or None))
        scheduler.read(kind, lr, 0, steps if steps is not None else 10**6, kwargs, version)
        return {}  # the target release runs it as it is
    except ScheduleError as exc:
        refused = str(exc)
    gone = f"transformers {version} cannot run lr_scheduler_type {kind} as the file gives it ({refused})"
    if steps is None:
        return {
            "lr_scheduler_type": (
                Status.LOSSY,
                f"{gone}; without max_steps its closest schedule is not known: "
                "written as it is (give --set train.steps=N)",
            )
        }
    try:
        warm = scheduler.warmup_steps(leaves.get(STEPS), leaves.get(RATIO), steps, source)
        run = scheduler.read(kind, lr, warm or 0, steps, kwargs, source).schedule
        rendering = scheduler.render(run, steps, version)
    except ScheduleError as exc:
        return {
            "lr_scheduler_type": (Status.LOSSY, f"{gone}; no schedule of {version} holds it ({exc}): written as it is")
        }
    config = rendering.config
    carried = [k for k in leaves if k.split(".", 1)[0] in SCHEDULE_KEYS]
    for key in carried:
        del leaves[key]
    leaves.update({"learning_rate": config["lr"], "lr_scheduler_type": config["kind"], STEPS: config["warmup"]})
    leaves.update({f"{KWARGS}.{k}": v for k, v in config["kwargs"].items()})
    written = f"written as {config['kind']} with warmup_steps {config['warmup']}" + (
        f" and lr_scheduler_kwargs {config['kwargs']}" if config["kwargs"] else ""
    )
    status = Status.CONVERTED if rendering.exact else Status.LOSSY
    how = "the same lr at every step" if rendering.exact else rendering.detail(run, f"transformers {version}")
    out = {key: (status, f"the schedule of lr_scheduler_type {kind}, {written}") for key in carried}
    out["lr_scheduler_type"] = (status, f"{gone}: {written}; {how}")
    return out
