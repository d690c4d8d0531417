#!/usr/bin/env python3
"""Generate schemas/history/deepspeed.json: every DeepSpeed JSON config key at every release tag.

DeepSpeed reads its JSON config as a dict in `DeepSpeedConfig` (deepspeed/runtime/config.py;
deepspeed/pt/deepspeed_config.py before 0.3) with `get_scalar_param(d, KEY, DEFAULT)`-style
helpers and constants, and from 0.6 on also through pydantic models (`DeepSpeedZeroConfig(**d)`,
monitor, comms, compile, ...), whose fields may carry an alias or be deprecated in favour of a
new field. tools/dict_reads.py follows the dict from the `param_dict` parameters of the config
module through every function and model it reaches; each release tag (label without the "v")
is one release.

Usage:
    python tools/gen_deepspeed_history.py [--repo GIT_DIR] [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

from dict_reads import Function, Program, Read
from history_common import (
    HISTORY_DIR,
    JSON,
    NO_DEFAULT,
    AstCache,
    Change,
    Git,
    KeyInfo,
    Release,
    Rename,
    Snapshot,
    document,
    fold,
    iter_classes,
    mirror_path,
    render,
    type_of_value,
    value_of,
    write_or_check,
)

REPO = "deepspeedai/DeepSpeed"
LAST_TAG = "v0.19.5"  # newest tag read; add newer tags by moving this and rerunning
OUTPUT = HISTORY_DIR / "deepspeed.json"
CONFIG_MODULES = ("deepspeed/runtime/config.py", "deepspeed/pt/deepspeed_config.py")
SKIP_DIRS = (
    "deepspeed/ops/",
    "deepspeed/inference/",
    "deepspeed/module_inject/",
    "deepspeed/model_implementations/",
    "deepspeed/launcher/",
    "deepspeed/accelerator/",
    "deepspeed/autotuning/tuner/",
    "deepspeed/linear/",
    "deepspeed/moe/",
    "deepspeed/sequence/",
    "deepspeed/tools/",
    "deepspeed/io/",
)
# engine.py pops the optimizer params DeepSpeed itself interprets (torch_adam, adam_w_mode, ...);
# lr_schedules.py holds the schedulers whose constructor arguments are scheduler.params
ENGINE_MODULES = ("deepspeed/runtime/engine.py", "deepspeed/pt/deepspeed_light.py")
EXTRA_MODULES = ("deepspeed/elasticity/elasticity.py", *ENGINE_MODULES)
SCHEDULER_MODULES = ("deepspeed/runtime/lr_schedules.py", "deepspeed/pt/deepspeed_lr_schedules.py")
# A file is read only when it can hold config reads or the constants they use.
MARKERS = ("param_dict", "ConfigModel", "BaseModel", "get_scalar_param", "_DEFAULT =")

SRC = "deepspeedai/DeepSpeed@{rev}:deepspeed/runtime/zero/config.py"
RENAMES = (
    Rename(
        "zero_optimization.cpu_offload",
        "zero_optimization.offload_optimizer",
        "0.3.15",
        SRC.format(rev="v0.3.15"),
        "cpu_offload: true = offload_optimizer: {device: cpu}; the old key stays accepted (deprecated)",
        overlap=True,
    ),
    Rename(
        "zero_optimization.cpu_offload_params",
        "zero_optimization.offload_param",
        "0.3.15",
        SRC.format(rev="v0.3.15"),
        "cpu_offload_params: true = offload_param: {device: cpu}; accepted until 0.6.x",
        overlap=True,
    ),
    Rename(
        "zero_optimization.cpu_offload_params",
        "zero_optimization.cpu_offload_param",
        "0.7.0",
        SRC.format(rev="v0.7.0"),
        "the pydantic model spells the deprecated switch without the s; the old spelling is rejected (extra=forbid)",
    ),
    Rename(
        "bfloat16",
        "bf16",
        "0.6.0",
        "deepspeedai/DeepSpeed@v0.6.0:deepspeed/runtime/config.py",
        "bf16 is read first, bfloat16 when bf16 is absent (kept for backwards compatibility)",
        overlap=True,
    ),
    Rename(
        "zero_optimization.stage3_gather_fp16_weights_on_model_save",
        "zero_optimization.stage3_gather_16bit_weights_on_model_save",
        "0.6.0",
        SRC.format(rev="v0.6.0"),
        "the fp16 spelling stays accepted (a deprecated field from 0.7.0)",
        overlap=True,
    ),
)
CHANGES = (
    Change(
        "zero_optimization",
        "0.7.0",
        "a pydantic model (extra='forbid'): an unknown key in zero_optimization is an error, not ignored",
        SRC.format(rev="v0.7.0"),
    ),
    Change(
        "zero_optimization.gather_16bit_weights_on_model_save",
        "0.7.0",
        "the field; stage3_gather_16bit_weights_on_model_save (the documented spelling) is its alias and "
        "stage3_gather_fp16_weights_on_model_save a deprecated field pointing to it",
        SRC.format(rev="v0.7.0"),
    ),
    Change(
        "gradient_clipping",
        "0.19.3",
        "default 0.0 (no clipping) -> 1.0 (#8068)",
        "deepspeedai/DeepSpeed@v0.19.3:deepspeed/runtime/constants.py",
    ),
)


def tags(git: Git) -> list[str]:
    def version(tag: str) -> tuple[int, ...]:
        return tuple(int(x) for x in tag[1:].split("."))

    found = [t for t in git.run("tag", "--list", "v*").split() if re.fullmatch(r"v\d+\.\d+\.\d+", t)]
    last = version(LAST_TAG)
    return sorted((t for t in found if version(t) <= last), key=version)


_SNAPSHOTS: dict[frozenset[tuple[str, str]], Snapshot] = {}


def snapshot(git: Git, cache: AstCache, tag: str) -> Snapshot:
    files = _config_files(git, tag)
    key = frozenset(files.items())
    if key not in _SNAPSHOTS:  # a patch release that did not touch the config modules reads the same keys
        _SNAPSHOTS[key] = _snapshot(git, cache, files)
    return _SNAPSHOTS[key]


def _config_files(git: Git, tag: str) -> dict[str, str]:
    files = {}
    for path, blob in git.tree(tag, "deepspeed/").items():
        name = path.rsplit("/", 1)[-1]
        if not path.endswith(".py") or path.startswith(SKIP_DIRS):
            continue
        if path in EXTRA_MODULES + SCHEDULER_MODULES:
            files[path] = blob
            continue
        if "config" not in name and "constants" not in name:
            continue  # config reads live in the config modules (checked: no other module adds a key)
        if any(marker in git.blob(blob) for marker in MARKERS):
            files[path] = blob
    return files


ENGINE_METHODS = ("_configure_basic_optimizer",)
_ENGINE_TREES: dict[str, ast.Module | None] = {}


def _engine_excerpt(git: Git, blob: str) -> ast.Module | None:
    """The engine's imports and the methods that read optimizer params: parsing all of engine.py per
    release would cost most of the run."""
    if blob not in _ENGINE_TREES:
        text = git.blob(blob)
        header = text.split("\nclass ", 1)[0]
        methods = []
        for name in ENGINE_METHODS:
            start = text.find(f"\n    def {name}(")
            if start < 0:
                continue
            end = text.find("\n    def ", start + 1)
            methods.append(text[start + 1 : end if end > 0 else len(text)])
        source = header + "\n\nclass DeepSpeedEngine:\n" + ("\n".join(methods) or "    pass\n")
        try:
            _ENGINE_TREES[blob] = ast.parse(source)
        except SyntaxError:
            _ENGINE_TREES[blob] = None
    return _ENGINE_TREES[blob]


def _snapshot(git: Git, cache: AstCache, files: dict[str, str]) -> Snapshot:
    modules = {}
    for path, blob in files.items():
        tree = _engine_excerpt(git, blob) if path in ENGINE_MODULES else cache.parse(blob)
        if tree is not None:
            modules[path] = tree
    program = Program(modules)
    program.method_paths = {"optimizer_params": ("optimizer", "params"), "scheduler_params": ("scheduler", "params")}

    def seeds(fn: Function) -> dict[str, tuple[str, ...]]:
        # the JSON dict enters through DeepSpeedConfig (constructor argument, then self._param_dict)
        if fn.module in CONFIG_MODULES and fn.qualname == "DeepSpeedConfig.__init__":
            return {"config": (), "param_dict": ()}
        return {}

    program.seed(seeds)
    for module in CONFIG_MODULES:
        program.attrs[(module, "DeepSpeedConfig", "_param_dict")] = {()}
        program.fixed_attrs.add((module, "DeepSpeedConfig", "_param_dict"))
    reads = program.run()
    for path in CONFIG_MODULES:
        names = program.constants(path).get("DEEPSPEED_OPTIMIZERS") if path in modules else None
        if isinstance(names, list):  # other names are looked up in torch.optim
            reads.append(Read(("optimizer", "type"), NO_DEFAULT, path, "str", {"choices": names}))
    for path in SCHEDULER_MODULES:
        if path in modules:
            reads.extend(scheduler_reads(path, modules[path], program.constants(path)))
    return merge(reads)


def scheduler_reads(path: str, tree: ast.Module, consts: dict[str, JSON]) -> list[Read]:
    """scheduler.type names (VALID_LR_SCHEDULES) and their constructor arguments as scheduler.params.*"""
    names = consts.get("VALID_LR_SCHEDULES")
    if not isinstance(names, list):
        return []
    reads = [Read(("scheduler", "type"), NO_DEFAULT, path, "str", {"choices": names})]
    per_key: dict[str, list[tuple[str, JSON]]] = {}
    for cls in iter_classes(tree):
        if cls.name not in names:
            continue
        init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        if init is None:
            continue
        args = init.args.args[1:]  # self
        given: list[ast.expr | None] = [None] * (len(args) - len(init.args.defaults)) + list(init.args.defaults)
        for arg, node in zip(args, given):
            if arg.arg == "optimizer":
                continue
            per_key.setdefault(arg.arg, []).append((cls.name, value_of(node, consts)))
    for key, uses in sorted(per_key.items()):
        shown = [(c, "required" if v is NO_DEFAULT else json.dumps(v, sort_keys=True)) for c, v in uses]
        default: JSON
        if len({text for _, text in shown}) == 1:
            default = uses[0][1]
        else:  # the schedulers disagree: name each one's default
            default = {"expr": "; ".join(f"{c}: {text}" for c, text in shown)}
        reads.append(
            Read(
                ("scheduler", "params", key),
                default,
                path,
                type_of_value(default),
                {"schedulers": sorted(c for c, _ in uses)},
            )
        )
    return reads


KEPT_FACTS = ("alias", "alias_of", "deprecated", "new_param", "choices", "schedulers")


def merge(reads: list[Read]) -> Snapshot:
    """One KeyInfo per dotted path: a model field wins over a dict read (it has the type)."""
    snap: Snapshot = {}
    for read in sorted(reads, key=lambda r: (r.path, r.where, repr(r.default))):
        if not read.path:
            continue
        key = ".".join(read.path)
        info = KeyInfo(
            read.type or type_of_value(read.default),
            read.default,
            {k: v for k, v in read.extra.items() if k in KEPT_FACTS},
        )
        old = snap.get(key)
        if old is None or _better(info, old):
            snap[key] = info
    return snap


def _better(new: KeyInfo, old: KeyInfo) -> bool:
    """Prefer the reading that says more: a typed field, then a real default."""
    score = lambda i: (i.type is not None, i.default is not NO_DEFAULT, len(i.extra))  # noqa: E731
    return score(new) > score(old)


def build(git: Git) -> dict:
    cache = AstCache(git)
    releases: list[Release] = []
    snapshots: dict[str, Snapshot] = {}
    for tag in tags(git):
        label = tag[1:]
        releases.append(Release(label, git.rev(tag), git.date(tag)))
        snapshots[label] = snapshot(git, cache, tag)
    records = fold(releases, snapshots)
    comment = [
        "DeepSpeed: keys are JSON config paths read from DeepSpeedConfig's param_dict (dict reads with constants",
        "resolved, and pydantic model fields). alias: the other spelling a model field accepts; alias_of: this key is",
        "that field's alias; deprecated/new_param: the model marks the field deprecated in favour of new_param.",
        "choices: the names DeepSpeed itself implements (optimizer.type: other names are torch.optim classes).",
        "scheduler.params.*: constructor arguments of the schedulers listed in schedulers; optimizer.params.*: only the keys",
        "DeepSpeed's own code reads (the rest goes to the optimizer's constructor). Facts other than in/type/default are",
        "those of the newest release that has the key.",
    ]
    return document(
        "deepspeed",
        REPO,
        "tools/gen_deepspeed_history.py",
        comment,
        releases,
        {"current": releases[-1].label},
        records,
        RENAMES,
        CHANGES,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=mirror_path("deepspeedai+DeepSpeed"))
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 when the output file is out of date")
    args = parser.parse_args(argv)
    git = Git(args.repo)
    try:
        text = render(build(git))
    finally:
        git.close()
    return write_or_check(text, args.output, args.check, "gen_deepspeed_history.py")


if __name__ == "__main__":
    sys.exit(main())
