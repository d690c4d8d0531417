"""A DeepSpeed config read with its TrainingArguments: every "auto" filled, and every stated value checked, as
transformers does (integrations/deepspeed.py, HfTrainerDeepSpeedConfig: `trainer_config_process` when the
TrainingArguments are made, `trainer_config_finalize` once the model and the total steps are known).

fill_match(ds key, hf value): "auto" becomes the hf value; a stated value that differs is a mismatch, and
transformers refuses the pair ("Please correct the following DeepSpeed config values that mismatch
TrainingArguments values"). fill_only: "auto" is filled, a stated value is kept.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from .scheduler import version_tuple, warmup_steps

AUTO = "auto"
# TrainingArguments defaults of the fields trainer_config_process reads (the same in every release read)
DEFAULTS = {
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "max_grad_norm": 1.0,
    "learning_rate": 5e-5,
    "adam_beta1": 0.9,
    "adam_beta2": 0.999,
    "adam_epsilon": 1e-8,
    "weight_decay": 0.0,
    "fp16": False,
    "fp16_full_eval": False,
    "bf16": False,
    "bf16_full_eval": False,
    "fp16_backend": "auto",
    "fp16_opt_level": "O1",
}
# the DeepSpeed keys whose "auto" only the model decides (trainer_config_finalize: the hidden size)
BY_HIDDEN_SIZE = {
    "zero_optimization.reduce_bucket_size": "hidden_size x hidden_size",
    "zero_optimization.stage3_prefetch_bucket_size": "int(0.9 x hidden_size x hidden_size) (ZeRO-3)",
    "zero_optimization.stage3_param_persistence_threshold": "10 x hidden_size (ZeRO-3)",
}
# filled in the schedule formula, which knows the run's length (trainer_config_finalize)
BY_RUN_LENGTH = ("scheduler.params.total_num_steps", "scheduler.params.warmup_num_steps")


class Mismatch(ValueError):
    """A stated DeepSpeed value that is not the TrainingArguments' (transformers refuses the pair)."""

    def __init__(self, key: str, stated: Any, hf: str, value: Any) -> None:
        super().__init__(
            f"the DeepSpeed config's {key}={stated!r} is not the TrainingArguments' {hf}={value!r}: transformers "
            "refuses the pair (trainer_config_finalize: 'Please correct the following DeepSpeed config values "
            f'that mismatch TrainingArguments values\'); set one to the other, or {key} to "auto"'
        )
        self.key = key


def _get(ta: dict[str, Any], name: str) -> Any:
    value = ta.get(name)
    return DEFAULTS.get(name) if value is None else value


def fills(ta: dict[str, Any], version: str | None = None) -> list[tuple[str, Any, str, bool]]:
    """(DeepSpeed key, value, the TrainingArguments it comes from, must match) in trainer_config_process's order."""
    g: Callable[[str], Any] = lambda name: _get(ta, name)  # noqa: E731
    fp16 = bool(g("fp16") or g("fp16_full_eval"))
    # 4.x hands fp16 to apex's amp with fp16_backend apex, and fills amp.* either way; 5.x has no amp (a config whose
    # amp is "auto" runs only under 4.x: read without a release, it is read as 4.x fills it)
    four = version is None or version_tuple(version) < (5, 0)
    apex = four and fp16 and g("fp16_backend") == "apex"
    out = [
        (
            "train_micro_batch_size_per_gpu",
            g("per_device_train_batch_size"),
            "per_device_train_batch_size",
            not ta.get("auto_find_batch_size"),
        ),
        ("gradient_accumulation_steps", g("gradient_accumulation_steps"), "gradient_accumulation_steps", True),
        ("gradient_clipping", g("max_grad_norm"), "max_grad_norm", True),
        ("optimizer.params.lr", g("learning_rate"), "learning_rate", True),
        ("optimizer.params.betas", [g("adam_beta1"), g("adam_beta2")], "adam_beta1+adam_beta2", True),
        ("optimizer.params.eps", g("adam_epsilon"), "adam_epsilon", True),
        ("optimizer.params.weight_decay", g("weight_decay"), "weight_decay", True),
        ("scheduler.params.warmup_min_lr", 0, "no TrainingArguments field", False),
        ("scheduler.params.warmup_max_lr", g("learning_rate"), "learning_rate", True),
        ("fp16.enabled", fp16 and not apex, "fp16|fp16_full_eval", True),
        ("bf16.enabled", bool(g("bf16") or g("bf16_full_eval")), "bf16|bf16_full_eval", True),
    ]
    if four:
        checked = version is not None  # (without a release, a stated amp block is not held against 4.x's check)
        out += [
            ("amp.enabled", apex, "fp16+fp16_backend(apex)", checked),
            ("amp.opt_level", g("fp16_opt_level"), "fp16_opt_level", checked),
        ]
    return out


def _node(tree: dict[str, Any], key: str) -> tuple[dict[str, Any] | None, str]:
    parts = key.split(".")
    node: Any = tree
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    return (node if isinstance(node, dict) else None), parts[-1]


def resolve(
    ds: dict[str, Any], ta: dict[str, Any], version: str | None = None
) -> tuple[dict[str, str], dict[str, str]]:
    """Fill ds (in place) from the TrainingArguments ta. Returns (filled: leaf -> what transformers fills it with,
    held: leaf -> why it stays "auto" here). Raises Mismatch for a stated value transformers refuses."""
    filled: dict[str, str] = {}
    for key, value, hf, must in fills(ta, version):
        node, last = _node(ds, key)
        if node is None or last not in node:
            continue
        if node[last] == AUTO:
            node[last] = value
            filled[key] = f'"auto": transformers fills it with {value!r} ({hf})'
        elif must and node[last] != value and not (isinstance(value, float) and node[last] == value):
            raise Mismatch(key, node[last], hf, value)
    if ds.get("train_batch_size") == AUTO:
        filled["train_batch_size"] = (
            '"auto": transformers fills it with world size x per_device_train_batch_size x gradient_accumulation_steps'
        )
    held: dict[str, str] = {}
    for key, rule in BY_HIDDEN_SIZE.items():
        node, last = _node(ds, key)
        if node is not None and node.get(last) == AUTO:
            held[key] = (
                f'"auto": transformers fills it at launch with {rule} of the model\'s config (ZeRO tuning: memory '
                "and speed only)"
            )
    for key in BY_RUN_LENGTH:
        node, last = _node(ds, key)
        if node is not None and node.get(last) == AUTO:
            filled[key] = '"auto": transformers fills it with ' + (
                "the total steps"
                if last == "total_num_steps"
                else "max(1, TrainingArguments.get_warmup_steps(total steps))"
            )
    return filled, held


def fill_scheduler(
    params: dict[str, Any], lr: float, warmup: int | None, steps: int | None, version: str | None
) -> dict[str, Any]:
    """The scheduler params trainer_config_finalize fills from the run's length (left "auto" while it is unknown),
    checked as it checks them."""
    if params.get("warmup_min_lr") == AUTO:
        params["warmup_min_lr"] = 0
    if params.get("warmup_max_lr") == AUTO:
        params["warmup_max_lr"] = lr
    # 4.x fills get_warmup_steps as it is (0 without warmup), which DeepSpeed before 0.19.6 runs as 2 steps,
    # as it does 1: the value 5.x fills (max(1, ...)) runs the same
    for key, value, hf in (
        ("total_num_steps", steps, "num_training_steps (calculated)"),
        ("warmup_num_steps", None if warmup is None else max(1, warmup), "warmup_steps"),
    ):
        if value is None:
            continue
        if params.get(key) == AUTO:
            params[key] = value
        elif (
            key in params
            and params[key] != value
            and not (key == "warmup_num_steps" and warmup == 0 and params[key] in (0, 1))
        ):
            raise Mismatch(f"scheduler.params.{key}", params[key], hf, value)
    return params


def placeholders(ds: dict[str, Any], ta: dict[str, Any], version: str | None = None) -> None:
    """The DeepSpeed config with "auto" (in place) wherever trainer_config_process fills the value from the
    arguments and the value is the one it would fill (`--layout auto`); train_batch_size too, which it computes."""
    for key, value, _, _ in fills(ta, version):
        node, last = _node(ds, key)
        if (
            node is not None
            and last in node
            and (node[last] == value or (isinstance(value, float) and node[last] == value))
        ):
            node[last] = AUTO
    if "train_batch_size" in ds:
        ds["train_batch_size"] = AUTO


def run_length(ds: dict[str, Any], ta: dict[str, Any], version: str | None, auto: bool) -> dict[str, str]:
    """The DeepSpeed scheduler's total_num_steps and warmup_num_steps, which trainer_config_finalize fills from the
    run's length (in place): concrete once max_steps gives it, or with `auto` "auto" where they are the values
    transformers fills (max_steps, max(1, get_warmup_steps(max_steps))). Returns the keys changed -> why."""
    block = ds.get("scheduler")
    params = block.get("params") if isinstance(block, dict) else None
    total = ta.get("max_steps")
    if not isinstance(params, dict) or not (isinstance(total, int) and not isinstance(total, bool) and total > 0):
        return {}
    warm = warmup_steps(ta.get("warmup_steps"), ta.get("warmup_ratio"), total, version)
    if warm is None:
        return {}
    changed: dict[str, str] = {}
    for key, value, what in (("total_num_steps", total, "max_steps"), ("warmup_num_steps", max(1, warm), "warmup")):
        if auto and params.get(key) == value:
            params[key] = AUTO
            changed[f"scheduler.params.{key}"] = f'written "auto": transformers fills it with {value} ({what})'
        elif not auto and params.get(key) == AUTO:
            params[key] = value
            changed[f"scheduler.params.{key}"] = f'"auto": transformers fills it with {value} ({what}): written so'
    return changed


def stated_arguments(ds: dict[str, Any], version: str | None = None) -> dict[str, Any]:
    """The TrainingArguments a DeepSpeed config's stated values imply: transformers refuses a stated value that
    is not the argument's (fill_match), so a run that started had the argument equal to it."""
    ta: dict[str, Any] = {}
    for key, _, hf, must in fills({}, version):
        node, last = _node(ds, key)
        stated = node.get(last) if node is not None else None
        if not must or stated is None or stated == AUTO:
            continue
        if hf in DEFAULTS:
            ta.setdefault(hf, stated)
        elif hf == "adam_beta1+adam_beta2" and isinstance(stated, list) and len(stated) == 2:
            ta.setdefault("adam_beta1", stated[0])
            ta.setdefault("adam_beta2", stated[1])
        elif hf in ("fp16|fp16_full_eval", "bf16|bf16_full_eval") and stated is True:
            ta.setdefault(hf.split("|")[0], True)
    return ta


def probe_fill(
    ds: dict[str, Any], world_size: int | None, steps: int | None, version: str | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """What a DeepSpeed config's "auto" values are when transformers has filled them (trainer_config_process, then
    trainer_config_finalize with the run's `steps`), the TrainingArguments being those its stated values imply and
    otherwise their defaults: (dotted key -> value, None for a value only the model's size decides, which is
    memory and speed only; dotted key -> where the value comes from). A key left "auto" is not in them."""
    tree = copy.deepcopy(ds)
    ta = stated_arguments(ds, version)
    filled, held = resolve(tree, ta, version)
    given = {hf for _, _, hf, _ in fills(ta, version) if hf in ta}
    why: dict[str, str] = {}
    for key, _, hf, _ in fills(ta, version):
        if key in filled and hf == "no TrainingArguments field":
            why[key] = "transformers' own value (no TrainingArguments field)"
        elif key in filled:
            origin = "the value the config states for it" if hf in given else "its default"
            why[key] = f"TrainingArguments {hf} ({origin}), as transformers fills it"
    micro, accumulation = tree.get("train_micro_batch_size_per_gpu"), tree.get("gradient_accumulation_steps")
    if tree.get("train_batch_size") == AUTO and world_size and isinstance(micro, int) and isinstance(accumulation, int):
        tree["train_batch_size"] = world_size * micro * accumulation
        why["train_batch_size"] = (
            "world size x per_device_train_batch_size x gradient_accumulation_steps, as transformers fills it"
        )
    block = tree.get("scheduler")
    params = block.get("params") if isinstance(block, dict) else None
    if isinstance(params, dict) and AUTO in params.values() and steps:
        warm = warmup_steps(ta.get("warmup_steps"), ta.get("warmup_ratio"), steps, version)
        lr = _get(ta, "learning_rate")
        before = {k for k, v in params.items() if v == AUTO}
        fill_scheduler(params, lr, warm, steps, version)
        for key in before:
            if params.get(key) != AUTO:
                why[f"scheduler.params.{key}"] = (
                    "the run's steps (the other file's)"
                    if key == "total_num_steps"
                    else "TrainingArguments warmup (its default: none, run as 1 step)"
                    if key == "warmup_num_steps"
                    else "TrainingArguments learning_rate"
                ) + ", as transformers fills it"
    values: dict[str, Any] = {}
    for key in why:
        node, last = _node(tree, key)
        if node is not None and node.get(last) != AUTO:
            values[key] = node[last]
    for key, reason in held.items():
        values[key], why[key] = None, reason + "; DeepSpeed's own default stands in"
    return values, why
