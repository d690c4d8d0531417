#!/usr/bin/env python3
"""Measure learning rates with each framework's OWN scheduler code, into fixtures/schedule/oracle-<fw>.json.

The tests (tests/test_schedule_frameworks.py) check that neoconv's reading of every config below,
evaluated step by step, gives these lrs. Run each part with a python that has the framework:

  /tmp/oracle-neox/bin/python      tools/gen_schedule_oracle.py neox       # NEOX_SRC=/tmp/neox-src
  /tmp/oracle-ds/bin/python        tools/gen_schedule_oracle.py deepspeed  # + DS_MIRROR for old releases
  /tmp/oracle-veomni/bin/python    tools/gen_schedule_oracle.py veomni     # VEOMNI_SRC=/tmp/veomni-src
  /tmp/oracle-cerebras/bin/python  tools/gen_schedule_oracle.py cerebras   # MODELZOO_SRC=/tmp/mz-src/src

(tools/oracle_setup.sh builds environments of this kind: its DIR/torch venv has deepspeed, DIR/veomni and
DIR/cerebras are VeOmni's and Model Zoo's, DIR/src/{neox,veomni,modelzoo} the source exports; each output
file's "source" names the commits and wheels it was measured with). What runs:
  neox       megatron/learning_rates.py AnnealingLR, built by training.py get_learning_rate_scheduler
             (both from the NeoX source, the function taken out of training.py by its AST; defaults of
             the config keys read from neox_args.py), stepped like DeepSpeed steps a client scheduler:
             once after every optimizer step.
  deepspeed  deepspeed.runtime.lr_schedules of the installed wheel, and of older releases exported
             from the git mirror (git show vX:deepspeed/runtime/lr_schedules.py) into the same venv;
             torch.optim.lr_scheduler classes by name; built as DeepSpeedEngine._scheduler_from_config
             does (getattr, then cls(optimizer, **params)), stepped after every optimizer step.
  veomni     veomni/optim/lr_scheduler.py build_lr_scheduler (its logging import stubbed).
  cerebras   Model Zoo 2.10: legacy learning_rate converted by convert_legacy_params_to_trainer_params,
             validated by validate_trainer_params, each validated scheduler config called with a real
             cerebras.pytorch SGD on the CPU backend, stepped after every optimizer step.
lr(t) recorded = the lr in the optimizer's param group when the t-th optimizer step runs (t = 0 first).
Nothing from neoconv is imported here.
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib.util
import json
import math
import os
import subprocess
import sys
import types
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "schedule"
L, M = 1e-3, 1e-4


def record(step_fn, lr_fn, n: int, steps: list[int] | None = None) -> tuple[list[int], list[float]]:
    """Run n optimizer steps; keep lr(t) for t in steps (all when None)."""
    keep = set(range(n)) if steps is None else set(steps)
    ts, lrs = [], []
    for t in range(n):
        if t in keep:
            ts.append(t)
            lrs.append(float(lr_fn()))
        if t < n - 1:  # no step after the last: torch's OneCycleLR refuses to go past total_steps
            step_fn()
    return ts, lrs


def sparse(n: int, around: list[int]) -> list[int]:
    """Every step near the given ones, and a sparse spread elsewhere."""
    pts = {0, 1, 2, n - 1}
    for a in around:
        pts.update(range(max(0, a - 3), min(n, a + 4)))
    k = 1
    while k < n:
        pts.add(k)
        k = int(k * 1.37) + 1
    return sorted(pts)


def load_module(path: str, name: str, source: str | None = None) -> types.ModuleType:
    spec = (
        importlib.util.spec_from_loader(name, loader=None)
        if source is not None
        else importlib.util.spec_from_file_location(name, path)
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    if source is not None:
        exec(compile(source, path, "exec"), mod.__dict__)
    else:
        spec.loader.exec_module(mod)
    return mod


def torch_optimizer(lr: float):
    import torch

    return torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=lr)


def run_torchlike(opt, sched, n: int, steps: list[int] | None = None) -> tuple[list[int], list[float]]:
    def step() -> None:
        opt.step()
        sched.step()

    return record(step, lambda: opt.param_groups[0]["lr"], n, steps)


# ---- NeoX -----------------------------------------------------------------------------------------
NEOX_CASES = [
    (
        "linear, min_lr, warmup 4 of 12",
        {"lr": L, "min_lr": M, "warmup": 4 / 12, "lr_decay_iters": 12, "lr_decay_style": "linear"},
        20,
    ),
    (
        "cosine rises again past lr_decay_iters",
        {"lr": L, "min_lr": M, "warmup": 4 / 12, "lr_decay_iters": 12, "lr_decay_style": "cosine"},
        40,
    ),
    (
        "exponential clamped at min_lr",
        {"lr": L, "min_lr": M, "warmup": 4 / 12, "lr_decay_iters": 12, "lr_decay_style": "exponential"},
        60,
    ),
    (
        "constant after warmup",
        {"lr": L, "min_lr": M, "warmup": 4 / 12, "lr_decay_iters": 12, "lr_decay_style": "constant"},
        12,
    ),
    (
        "Cosine (case) trains a constant lr",
        {"lr": L, "warmup": 0.25, "lr_decay_iters": 12, "lr_decay_style": "Cosine"},
        16,
    ),
    (
        "linear to 0 from train_iters",
        {"lr": 6e-4, "warmup": 0.01, "train_iters": 1000, "lr_decay_style": "linear"},
        1010,
    ),
    (
        "fractional warmup, cosine",
        {"lr": 6e-4, "min_lr": 6e-5, "warmup": 0.0123, "lr_decay_iters": 300, "lr_decay_style": "cosine"},
        320,
    ),
    (
        "lr_decay_fraction",
        {
            "lr": 3e-4,
            "min_lr": 3e-5,
            "warmup": 0.05,
            "train_iters": 500,
            "lr_decay_fraction": 0.8,
            "lr_decay_style": "linear",
        },
        520,
    ),
    ("warmup below one step", {"lr": L, "warmup": 0.002, "lr_decay_iters": 300, "lr_decay_style": "linear"}, 305),
    (
        "min_lr above the first warmup steps",
        {"lr": L, "min_lr": 2e-4, "warmup": 0.2, "lr_decay_iters": 100, "lr_decay_style": "linear"},
        120,
    ),
    ("no warmup, cosine", {"lr": L, "min_lr": M, "warmup": 0.0, "lr_decay_iters": 50, "lr_decay_style": "cosine"}, 120),
    (
        "exponential without min_lr",
        {"lr": L, "warmup": 0.1, "lr_decay_iters": 40, "lr_decay_style": "exponential"},
        100,
    ),
    ("defaults with train_iters", {"train_iters": 200}, 210),
    (
        "pythia-like, long",
        {
            "lr": 6e-4,
            "min_lr": 6e-5,
            "warmup": 0.01,
            "train_iters": 143000,
            "lr_decay_iters": 143000,
            "lr_decay_style": "cosine",
        },
        150000,
    ),
]


def neox_defaults(src: str) -> dict:
    """Defaults of the schedule keys, as neox_args.py declares them (and the optimizer lr's)."""
    tree = ast.parse(Path(src, "megatron/neox_arguments/neox_args.py").read_text())
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            if node.target.id in (
                "lr_decay_style",
                "lr_decay_iters",
                "lr_decay_fraction",
                "min_lr",
                "warmup",
                "train_iters",
                "use_checkpoint_lr_scheduler",
                "override_lr_scheduler",
                "use_mup",
            ):
                out[node.target.id] = ast.literal_eval(node.value)
    args_src = Path(src, "megatron/neox_arguments/arguments.py").read_text()
    for node in ast.walk(ast.parse(args_src)):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "OPT_PARAMS_DEFAULTS" for t in node.targets
        ):
            out["lr"] = ast.literal_eval(node.value)["lr"]
    return out


def neox(args: argparse.Namespace) -> dict:
    src = os.environ.get("NEOX_SRC", "/tmp/neox-src")
    sys.modules["megatron"] = types.SimpleNamespace(print_rank_0=lambda *a, **k: None)  # type: ignore[assignment]
    lr_mod = load_module(os.path.join(src, "megatron/learning_rates.py"), "neox_learning_rates")
    training = Path(src, "megatron/training.py").read_text()
    fn = next(
        n
        for n in ast.parse(training).body
        if isinstance(n, ast.FunctionDef) and n.name == "get_learning_rate_scheduler"
    )
    ns = {"math": math, "AnnealingLR": lr_mod.AnnealingLR, "print_rank_0": lambda *a, **k: None}
    exec(compile(ast.Module([fn], []), "training.py", "exec"), ns)
    defaults = neox_defaults(src)
    cases = []
    for name, cfg, n in NEOX_CASES:
        full = {**defaults, **cfg}
        neox_args = types.SimpleNamespace(no_load_optim=False, deepspeed=True, optimizer_type="Adam", **full)
        opt = torch_optimizer(full["lr"])
        sched = ns["get_learning_rate_scheduler"](opt, neox_args)
        steps = None if n <= 1100 else sparse(n, [1430, 143000])
        ts, lrs = run_torchlike(opt, sched, n, steps)
        cases.append({"name": name, "config": cfg, "steps": ts, "lrs": lrs})
    return {
        "framework": "neox",
        "source": f"gpt-neox {git_rev(src, os.environ.get('NEOX_REV', 'export of mirror HEAD ea7aefd8'))}",
        "defaults": defaults,
        "cases": cases,
    }


# ---- DeepSpeed ------------------------------------------------------------------------------------
def ds_case(name, kind, params, n, lr=L, versions=None):
    return {
        "name": name,
        "scheduler": {"type": kind, "params": params},
        "optimizer_lr": lr,
        "n": n,
        "versions": versions,
    }


DS_CASES = [
    ds_case(
        "WarmupLR linear",
        "WarmupLR",
        {"warmup_min_lr": 0.0, "warmup_max_lr": L, "warmup_num_steps": 4, "warmup_type": "linear"},
        12,
    ),
    ds_case("WarmupLR log", "WarmupLR", {"warmup_min_lr": 1e-5, "warmup_max_lr": L, "warmup_num_steps": 10}, 20),
    ds_case(
        "WarmupLR max from the optimizer", "WarmupLR", {"warmup_num_steps": 5, "warmup_type": "linear"}, 10, lr=2e-3
    ),
    ds_case("WarmupLR one warmup step", "WarmupLR", {"warmup_max_lr": L, "warmup_num_steps": 1}, 6),
    ds_case(
        "WarmupDecayLR linear",
        "WarmupDecayLR",
        {
            "total_num_steps": 12,
            "warmup_min_lr": 1e-5,
            "warmup_max_lr": L,
            "warmup_num_steps": 4,
            "warmup_type": "linear",
        },
        20,
    ),
    ds_case("WarmupDecayLR log, default max", "WarmupDecayLR", {"total_num_steps": 40, "warmup_num_steps": 8}, 50),
    ds_case(
        "WarmupDecayLR total below warmup",
        "WarmupDecayLR",
        {"total_num_steps": 3, "warmup_max_lr": L, "warmup_num_steps": 6, "warmup_type": "linear"},
        12,
    ),
    ds_case(
        "WarmupCosineLR linear",
        "WarmupCosineLR",
        {"total_num_steps": 12, "warmup_num_steps": 4, "cos_min_ratio": 0.1, "warmup_type": "linear"},
        24,
    ),
    ds_case(
        "WarmupCosineLR log",
        "WarmupCosineLR",
        {"total_num_steps": 50, "warmup_num_steps": 10, "warmup_min_ratio": 0.1, "cos_min_ratio": 0.01},
        120,
    ),
    ds_case(
        "WarmupCosineLR one decay step",
        "WarmupCosineLR",
        {"total_num_steps": 5, "warmup_num_steps": 4, "warmup_type": "linear"},
        12,
    ),
    ds_case(
        "OneCycle with decay",
        "OneCycle",
        {
            "cycle_min_lr": M,
            "cycle_max_lr": L,
            "cycle_first_step_size": 5,
            "cycle_second_step_size": 3,
            "decay_lr_rate": 0.5,
            "decay_step_size": 2,
        },
        30,
    ),
    ds_case(
        "OneCycle stairs",
        "OneCycle",
        {"cycle_min_lr": M, "cycle_max_lr": L, "cycle_first_step_size": 8, "cycle_first_stair_count": 4},
        24,
    ),
    ds_case(
        "OneCycle one-sided stairs, no second half",
        "OneCycle",
        {
            "cycle_min_lr": M,
            "cycle_max_lr": L,
            "cycle_first_step_size": 6,
            "cycle_second_step_size": 0,
            "cycle_first_stair_count": 0,
            "cycle_second_stair_count": 3,
            "decay_lr_rate": 1.0,
            "decay_step_size": 5,
        },
        15,
    ),
    ds_case(
        "LRRangeTest",
        "LRRangeTest",
        {"lr_range_test_min_lr": M, "lr_range_test_step_size": 5, "lr_range_test_step_rate": 0.5},
        30,
    ),
    ds_case(
        "LRRangeTest staircase",
        "LRRangeTest",
        {
            "lr_range_test_min_lr": M,
            "lr_range_test_step_size": 5,
            "lr_range_test_step_rate": 0.5,
            "lr_range_test_staircase": True,
        },
        30,
    ),
    ds_case(
        "torch LinearLR warmup",
        "LinearLR",
        {"start_factor": 0.25, "end_factor": 1.0, "total_iters": 6},
        10,
        versions=["wheel"],
    ),
    ds_case(
        "torch LinearLR decay",
        "LinearLR",
        {"start_factor": 1.0, "end_factor": 0.1, "total_iters": 8},
        12,
        versions=["wheel"],
    ),
    ds_case("torch ConstantLR", "ConstantLR", {"factor": 0.5, "total_iters": 4}, 8, versions=["wheel"]),
    ds_case("torch ExponentialLR", "ExponentialLR", {"gamma": 0.9}, 20, versions=["wheel"]),
    ds_case("torch StepLR", "StepLR", {"step_size": 3, "gamma": 0.5}, 12, versions=["wheel"]),
    ds_case("torch MultiStepLR", "MultiStepLR", {"milestones": [2, 5, 5], "gamma": 0.1}, 8, versions=["wheel"]),
    ds_case("torch PolynomialLR", "PolynomialLR", {"total_iters": 10, "power": 2.0}, 14, versions=["wheel"]),
    ds_case("torch CosineAnnealingLR", "CosineAnnealingLR", {"T_max": 8, "eta_min": M}, 30, versions=["wheel"]),
    ds_case(
        "torch CosineAnnealingWarmRestarts",
        "CosineAnnealingWarmRestarts",
        {"T_0": 5, "eta_min": 1e-5},
        17,
        versions=["wheel"],
    ),
    ds_case(
        "torch CyclicLR triangular2",
        "CyclicLR",
        {"base_lr": M, "max_lr": L, "step_size_up": 3, "step_size_down": 2, "mode": "triangular2"},
        20,
        versions=["wheel"],
    ),
    ds_case(
        "torch CyclicLR exp_range",
        "CyclicLR",
        {"base_lr": M, "max_lr": L, "step_size_up": 4, "mode": "exp_range", "gamma": 0.9},
        20,
        versions=["wheel"],
    ),
    ds_case("torch OneCycleLR", "OneCycleLR", {"max_lr": L, "total_steps": 20}, 21, versions=["wheel"]),
    ds_case(
        "torch OneCycleLR three-phase linear",
        "OneCycleLR",
        {"max_lr": L, "total_steps": 30, "pct_start": 0.25, "anneal_strategy": "linear", "three_phase": True},
        31,
        versions=["wheel"],
    ),
]
DS_RELEASES = ["v0.14.4", "v0.17.1", "v0.17.6", "v0.19.2", "v0.19.3"]


def git_rev(src: str, exported_from: str) -> str:
    """The source's revision: a git checkout says it, an export (git archive) is named by the caller."""
    try:
        return subprocess.run(
            ["git", "-C", src, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except Exception:
        return f"{src} ({exported_from})"


def deepspeed(args: argparse.Namespace) -> dict:
    import deepspeed as ds_pkg
    import torch
    from deepspeed.runtime import lr_schedules as wheel

    mirror = os.environ.get("DS_MIRROR", str(OUT.parents[2] / ".mirror" / "deepspeedai+DeepSpeed" / "repo"))
    modules = {ds_pkg.__version__: wheel}
    for tag in DS_RELEASES:
        text = subprocess.run(
            ["git", "-C", mirror, "show", f"{tag}:deepspeed/runtime/lr_schedules.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        modules[tag.lstrip("v")] = load_module(f"{tag}/lr_schedules.py", f"ds_lr_{tag.replace('.', '_')}", text)
    cases = []
    for case in DS_CASES:
        for version, mod in modules.items():
            if case["versions"] == ["wheel"] and mod is not wheel:
                continue
            kind = case["scheduler"]["type"]
            cls = getattr(mod, kind, None) or getattr(torch.optim.lr_scheduler, kind)
            opt = torch_optimizer(case["optimizer_lr"])
            try:
                sched = cls(opt, **copy.deepcopy(case["scheduler"]["params"]))
                ts, lrs = run_torchlike(opt, sched, case["n"])
            except Exception as e:  # a release that refuses the config: recorded as such
                cases.append(
                    {
                        "name": case["name"],
                        "version": version,
                        "scheduler": case["scheduler"],
                        "optimizer_lr": case["optimizer_lr"],
                        "error": f"{type(e).__name__}: {e}",
                    }
                )
                continue
            cases.append(
                {
                    "name": case["name"],
                    "version": version,
                    "scheduler": case["scheduler"],
                    "optimizer_lr": case["optimizer_lr"],
                    "steps": ts,
                    "lrs": lrs,
                }
            )
    return {
        "framework": "deepspeed",
        "source": f"deepspeed wheel {ds_pkg.__version__}, mirror tags {DS_RELEASES}, torch {torch.__version__}",
        "cases": cases,
    }


# ---- VeOmni ---------------------------------------------------------------------------------------
VEOMNI_CASES = [
    ("constant, warmup 4 of 12", {"lr": L, "lr_warmup_ratio": 4 / 12, "lr_decay_style": "constant"}, 12, 15),
    ("linear, warmup 4 of 12", {"lr": L, "lr_warmup_ratio": 4 / 12, "lr_decay_style": "linear"}, 12, 15),
    ("cosine, warmup 4 of 12", {"lr": L, "lr_min": M, "lr_warmup_ratio": 4 / 12, "lr_decay_style": "cosine"}, 12, 15),
    (
        "cosine, decay ratio, lr_start",
        {
            "lr": 3e-4,
            "lr_min": 3e-5,
            "lr_start": 1e-5,
            "lr_warmup_ratio": 0.05,
            "lr_decay_ratio": 0.8,
            "lr_decay_style": "cosine",
        },
        100,
        110,
    ),
    ("linear, no warmup: 1e-7 from S", {"lr": 2e-5, "lr_decay_style": "linear"}, 50, 60),
    (
        "cosine, decay ends inside the warmup",
        {"lr": L, "lr_min": M, "lr_warmup_ratio": 0.5, "lr_decay_ratio": 0.3, "lr_decay_style": "cosine"},
        20,
        25,
    ),
    ("defaults", {}, 30, 32),
    ("linear, lr below the floor", {"lr": 5e-8, "lr_warmup_ratio": 0.2, "lr_decay_style": "linear"}, 10, 12),
    ("warmup ratio truncated", {"lr": L, "lr_warmup_ratio": 0.3, "lr_decay_style": "linear"}, 7, 10),
]


def veomni(args: argparse.Namespace) -> dict:
    src = os.environ.get("VEOMNI_SRC", "/tmp/veomni-src")
    for name in ("veomni", "veomni.optim", "veomni.utils"):
        mod = types.ModuleType(name)
        mod.__path__ = []  # type: ignore[attr-defined]
        sys.modules[name] = mod

    class _Quiet:
        def __getattr__(self, name):
            return lambda *a, **k: None

    log = types.ModuleType("veomni.utils.logging")
    log.get_logger = lambda *a, **k: _Quiet()  # type: ignore[attr-defined]
    sys.modules["veomni.utils.logging"] = log
    sys.modules["veomni.utils"].logging = log  # type: ignore[attr-defined]
    lr_mod = load_module(os.path.join(src, "veomni/optim/lr_scheduler.py"), "veomni.optim.lr_scheduler")
    # the defaults of OptimizerConfig in arguments_types.py
    tree = ast.parse(Path(src, "veomni/arguments/arguments_types.py").read_text())
    defaults = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "OptimizerConfig":
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                    name = item.target.id
                    value = item.value
                    if isinstance(value, ast.Call):  # field(default=...)
                        value = next((k.value for k in value.keywords if k.arg == "default"), None)
                    if (
                        name in ("lr", "lr_min", "lr_start", "lr_warmup_ratio", "lr_decay_style", "lr_decay_ratio")
                        and value is not None
                    ):
                        defaults[name] = ast.literal_eval(value)
    cases = []
    for name, cfg, total, n in VEOMNI_CASES:
        full = {**defaults, **cfg}
        opt = torch_optimizer(full["lr"])
        sched = lr_mod.build_lr_scheduler(
            opt,
            train_steps=total,
            lr=full["lr"],
            lr_min=full["lr_min"],
            lr_decay_style=full["lr_decay_style"],
            lr_decay_ratio=full["lr_decay_ratio"],
            lr_warmup_ratio=full["lr_warmup_ratio"],
            lr_start=full["lr_start"],
        )
        ts, lrs = run_torchlike(opt, sched, n)
        cases.append({"name": name, "config": cfg, "train_steps": total, "steps": ts, "lrs": lrs})
    return {
        "framework": "veomni",
        "source": f"VeOmni {git_rev(src, os.environ.get('VEOMNI_REV', 'export of mirror HEAD d9774494'))}",
        "defaults": defaults,
        "cases": cases,
    }


# ---- Cerebras -------------------------------------------------------------------------------------
def seq(*subs):
    return [{"SequentialLR": {"schedulers": list(subs)}}]


CS_CASES = [
    (
        "trainer",
        "warmup + cosine decay",
        seq(
            {"LinearLR": {"initial_learning_rate": 0.0, "end_learning_rate": L, "total_iters": 4}},
            {"CosineDecayLR": {"initial_learning_rate": L, "end_learning_rate": M, "total_iters": 8}},
        ),
        15,
    ),
    (
        "legacy",
        "warmup + linear decay",
        [
            {"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": L, "total_iters": 4},
            {"scheduler": "Linear", "initial_learning_rate": L, "end_learning_rate": M, "total_iters": 8},
        ],
        15,
    ),
    (
        "legacy",
        "gemma2: cosine warm-up phase",
        [
            {"scheduler": "CosineDecay", "initial_learning_rate": 0, "end_learning_rate": 0.0001, "total_iters": 10},
            {
                "scheduler": "CosineDecay",
                "initial_learning_rate": 0.0001,
                "end_learning_rate": 1e-05,
                "total_iters": 160,
            },
        ],
        180,
    ),
    (
        "trainer",
        "llama3.2: cosine warm-up phase",
        seq(
            {"CosineDecayLR": {"end_learning_rate": 0.0003, "initial_learning_rate": 0, "total_iters": 34}},
            {"CosineDecayLR": {"end_learning_rate": 3e-05, "initial_learning_rate": 0.0003, "total_iters": 666}},
        ),
        720,
    ),
    (
        "legacy",
        "T5: inverse square root, default initial 1.0",
        [{"scheduler": "InverseSquareRootDecay", "warmup_steps": 10, "scale": 1.0}],
        40,
    ),
    (
        "trainer",
        "T5 11B: inverse square root",
        [{"InverseSquareRootDecayLR": {"warmup_steps": 8307, "scale": 1.0}}],
        20000,
    ),
    (
        "trainer",
        "inverse square root, scaled",
        [{"InverseSquareRootDecayLR": {"initial_learning_rate": 0.01, "scale": 2.0, "warmup_steps": 5}}],
        30,
    ),
    (
        "trainer",
        "exponential",
        [{"ExponentialLR": {"initial_learning_rate": L, "total_iters": 4, "decay_rate": 0.5}}],
        20,
    ),
    (
        "trainer",
        "exponential staircase",
        [{"ExponentialLR": {"initial_learning_rate": L, "total_iters": 4, "decay_rate": 0.5, "staircase": True}}],
        20,
    ),
    (
        "trainer",
        "inverse exponential time",
        [
            {
                "InverseExponentialTimeDecayLR": {
                    "initial_learning_rate": L,
                    "step_exponent": 2,
                    "total_iters": 10,
                    "decay_rate": 0.5,
                }
            }
        ],
        20,
    ),
    (
        "trainer",
        "inverse exponential time staircase",
        [
            {
                "InverseExponentialTimeDecayLR": {
                    "initial_learning_rate": L,
                    "step_exponent": 1,
                    "total_iters": 3,
                    "decay_rate": 0.5,
                    "staircase": True,
                }
            }
        ],
        20,
    ),
    (
        "trainer",
        "polynomial",
        [{"PolynomialLR": {"initial_learning_rate": L, "end_learning_rate": 1e-5, "total_iters": 10, "power": 2.0}}],
        15,
    ),
    ("trainer", "step", [{"StepLR": {"initial_learning_rate": L, "step_size": 3, "gamma": 0.5}}], 12),
    ("trainer", "multistep", [{"MultiStepLR": {"initial_learning_rate": L, "gamma": 0.1, "milestones": [2, 5]}}], 8),
    (
        "trainer",
        "cosine annealing rises again",
        [{"CosineAnnealingLR": {"initial_learning_rate": L, "T_max": 6, "eta_min": 1e-5}}],
        20,
    ),
    (
        "trainer",
        "cosine warm restarts (2.10)",
        [{"CosineAnnealingWarmRestarts": {"initial_learning_rate": L, "T_0": 4, "eta_min": M}}],
        20,
    ),
    (
        "trainer",
        "piecewise constant",
        [{"PiecewiseConstantLR": {"learning_rates": [L, 5e-4, M], "milestones": [3, 7]}}],
        12,
    ),
    ("trainer", "multiplicative", [{"MultiplicativeLR": {"initial_learning_rate": L, "coefficient": 0.9}}], 10),
    (
        "trainer",
        "cyclic triangular2",
        [{"CyclicLR": {"base_lr": M, "max_lr": L, "step_size_up": 3, "step_size_down": 2, "mode": "triangular2"}}],
        20,
    ),
    (
        "trainer",
        "cyclic exp_range",
        [{"CyclicLR": {"base_lr": M, "max_lr": L, "step_size_up": 4, "mode": "exp_range", "gamma": 0.9}}],
        20,
    ),
    (
        "trainer",
        "one cycle, cos",
        [{"OneCycleLR": {"initial_learning_rate": M, "max_lr": L, "total_steps": 20, "pct_start": 0.3}}],
        25,
    ),
    (
        "trainer",
        "one cycle, three-phase linear",
        [
            {
                "OneCycleLR": {
                    "initial_learning_rate": M,
                    "max_lr": L,
                    "total_steps": 30,
                    "pct_start": 0.25,
                    "three_phase": True,
                    "anneal_strategy": "linear",
                }
            }
        ],
        32,
    ),
    ("legacy", "scalar", 2e-4, 5),
    (
        "legacy",
        "one phase",
        {"scheduler": "Linear", "initial_learning_rate": L, "end_learning_rate": M, "total_iters": 6},
        10,
    ),
    (
        "legacy",
        "bloom: cosine then a lower constant",
        [
            {"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": 5.26e-05, "total_iters": 18},
            {
                "scheduler": "CosineDecay",
                "initial_learning_rate": 5.26e-05,
                "end_learning_rate": 5.26e-06,
                "total_iters": 200,
            },
            {"scheduler": "Constant", "learning_rate": 2.84e-06},
        ],
        240,
    ),
    (
        "legacy",
        "re-warm: two warmup + decay cycles",
        [
            {"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": L, "total_iters": 10},
            {"scheduler": "CosineDecay", "initial_learning_rate": L, "end_learning_rate": M, "total_iters": 40},
            {"scheduler": "Linear", "initial_learning_rate": M, "end_learning_rate": 5e-4, "total_iters": 10},
            {"scheduler": "CosineDecay", "initial_learning_rate": 5e-4, "end_learning_rate": 5e-5, "total_iters": 40},
        ],
        110,
    ),
    (
        "legacy",
        "muP: adjust_learning_rate wraps the schedule",
        [
            {"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": L, "total_iters": 5},
            {"scheduler": "Linear", "initial_learning_rate": L, "end_learning_rate": 0.0, "total_iters": 10},
        ],
        18,
    ),
]


def _setup_cerebras() -> None:
    from unittest import mock

    sys.modules["cerebras.pytorch.lib.cerebras_pytorch_lib"] = mock.MagicMock(name="cerebras_pytorch_lib")
    sys.path.insert(0, os.environ.get("MODELZOO_SRC", "/tmp/mz-src/src"))
    import importlib.abc
    import importlib.machinery

    class Stub:  # bigcode_eval / lm_eval: git-only dependencies of eval callbacks, never called here
        def __init__(self, *a, **k):
            pass

        def __call__(self, *a, **k):
            return a[0] if len(a) == 1 and not k else Stub()

        def __getattr__(self, name):
            return Stub()

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path, target=None):
            if fullname.split(".")[0] in ("bigcode_eval", "lm_eval"):
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None

        def create_module(self, spec):
            mod = types.ModuleType(spec.name)
            mod.__path__ = []

            def attr(name):
                if name.startswith("__"):
                    raise AttributeError(name)
                return type(name, (Stub,), {})

            mod.__getattr__ = attr
            return mod

        def exec_module(self, module):
            pass

    sys.meta_path.insert(0, Finder())


def cerebras(args: argparse.Namespace) -> dict:
    import warnings

    warnings.simplefilter("ignore")
    _setup_cerebras()
    import torch
    import cerebras.pytorch as cstorch
    from cerebras.modelzoo.trainer.utils import convert_legacy_params_to_trainer_params
    from cerebras.modelzoo.trainer.validate import validate_trainer_params

    cstorch.backend("CPU")
    cases = []
    for layout, name, spec, n in CS_CASES:
        if layout == "legacy":
            optimizer = {"optimizer_type": "SGD", "learning_rate": copy.deepcopy(spec)}
            if name.startswith("muP"):
                optimizer["adjust_learning_rate"] = {"decoder_kernel": 1.0}
            params = convert_legacy_params_to_trainer_params({"optimizer": optimizer, "model": {}, "train_input": {}})
        else:
            params = {"trainer": {"init": {"optimizer": {"SGD": {"lr": 0.1}}, "schedulers": copy.deepcopy(spec)}}}
        params["trainer"]["init"]["model"] = {"name": "gpt2"}
        converted = copy.deepcopy(params["trainer"]["init"]["schedulers"])
        config = validate_trainer_params(params)
        opt = cstorch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1)
        sched = config[0].init.schedulers[0](optimizer=opt)
        steps = None if n <= 1000 else sparse(n, [8307])
        ts, lrs = run_torchlike(opt, sched, n, steps)
        entry = {"name": name, "layout": layout, "trainer_schedulers": converted, "steps": ts, "lrs": lrs}
        entry["learning_rate" if layout == "legacy" else "schedulers"] = spec
        if name.startswith("muP"):
            entry["adjust_learning_rate"] = {"decoder_kernel": 1.0}
        cases.append(entry)
    return {
        "framework": "cerebras",
        "source": f"Model Zoo {git_rev(os.environ.get('MODELZOO_SRC', '/tmp/mz-src/src'), 'export of Release_2.10.0 f1fd1e09')} "
        f"(Release_2.10.0), cerebras-pytorch {cstorch.__version__}",
        "cases": cases,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("framework", choices=["neox", "deepspeed", "veomni", "cerebras"])
    a = ap.parse_args()
    data = {"neox": neox, "deepspeed": deepspeed, "veomni": veomni, "cerebras": cerebras}[a.framework](a)
    data["produced_by"] = f"tools/gen_schedule_oracle.py {a.framework} ({sys.executable})"
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"oracle-{a.framework}.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"{path}: {len(data['cases'])} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
