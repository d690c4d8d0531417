"""A train file carried to another transformers release (hftrainer2hftrainer, `--to-version`): the fields that
release's TrainingArguments does not have are not written (HfArgumentParser refuses a key it does not know), and
the warmup ratio moves between `warmup_ratio` (until 5.10) and `warmup_steps` below 1 (5.0 on: a ratio of the
total steps), so the output runs under the target release as the source ran under its own."""

from __future__ import annotations

from typing import Any

from ...knowledge.schema import load_history
from ...core.report import Status
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
    if key in TOP or key == RATIO or _reads(key, version) is not False:
        return None
    history = load_history("hftrainer")
    assert history is not None
    return f"transformers {version} has no TrainingArguments field {key} (fields of {history.runs(key)}): not written"


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
            return {}, {RATIO: (Status.LOSSY, f"{gone}: not written; warmup_steps {leaves[STEPS]!r} beside it runs "
                                              "(4.x ran warmup_steps above 0, 5.0-5.10 the ratio)")}  # fmt: skip
        total = _number(leaves.get("max_steps"))
        if ratio >= 1 and not (total and total > 0):  # 1 would be one step: the whole run needs its length
            return {}, {RATIO: (Status.LOSSY, f"{gone}, and a ratio of 1 written as warmup_steps would be one step; "
                                              "give --set train.steps=N to write the whole run as warmup")}  # fmt: skip
        leaves[STEPS] = int(total) if ratio >= 1 and total else ratio
        why = (f"{gone}: warmup_ratio {ratio:g} written as warmup_steps {leaves[STEPS]!r} (5.0 on, warmup_steps below 1 "
               "is a ratio of the total steps)")  # fmt: skip
        return {RATIO: STEPS}, {RATIO: (Status.CONVERTED, why)}
    if steps is not None and 0 < steps < 1 and _reads(RATIO, version) and version_tuple(version) < (5, 0):
        # 4.x takes warmup_steps as a whole number of steps: the ratio goes back to warmup_ratio
        leaves[RATIO] = leaves.pop(STEPS)
        why = f"transformers {version} counts warmup_steps in steps: the ratio {steps:g} written as warmup_ratio"
        return {STEPS: RATIO}, {STEPS: (Status.CONVERTED, why)}
    return {}, {}
