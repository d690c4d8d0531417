"""VeOmni's own code on a VeOmni YAML file (run by an interpreter with torch and the transformers
release VeOmni names; VeOmni imported from the job's `source` checkout, or installed).

* Accepts: `parse_args(VeOmniArguments)` on `train.py FILE` (every dataclass `__post_init__`:
  world size, parallel sizes, the batch derivation), then `compute_train_steps()` as the trainer
  calls it for a streaming dataset (from data.train_size / data.train_sample: a mapping
  dataset's length is only known once the data is read).
* Run: world size (WORLD_SIZE), data-parallel size, global/micro batch and accumulation as VeOmni
  derived them, steps (train_steps × num_train_epochs, the length `_build_lr_scheduler` gives the
  scheduler), precision (FSDP mixed precision's param dtype; without it the model is built in
  bfloat16), parallel sizes.
* Learning rate: `veomni.optim.build_lr_scheduler` called as `BaseTrainer._build_lr_scheduler`
  calls it, on an optimizer with train.optimizer.lr, stepped once per optimizer step.
* Parameters: `build_foundation_model(config_path, init_device="meta")` as the trainer builds the
  model (no weights: `model_path` is not read), with the file's model_config overrides and ops.

Run in the YAML's folder (as a user launches it there): VeOmni resolves `model.config_path` from
the folder it is launched in. `--model-config FILE` stands in for a config_path/model_path that
names a hub model (nothing is downloaded).
Stand-ins: WORLD_SIZE and LOCAL_WORLD_SIZE are the job's world size (what torchrun sets); nothing
of VeOmni is replaced.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import Any

from _probe import STUBS, CannotRun, LrCurve, Refused, Result, count_meta, describe, framework, main, package_version
from _probe import plain, steps_to_run

PROBE = {
    "framework": "VeOmni",
    "checkout": "veomni/arguments",  # used from a source tree (--src veomni=PATH), or installed
    "installed": "veomni",
    "imports": ["torch", "transformers", "yaml"],
    "install": "torch (CPU wheel), the transformers release VeOmni's pyproject.toml names, pyyaml, psutil, "
    "packaging, triton (VeOmni checks its default kernels against the installed packages)",
    "source": "git clone https://github.com/ByteDance-Seed/VeOmni (a checkout from PR #538 on reads the nested "
    "layout; an older one the flat layout)",
}


def _get(node: Any, *paths: str) -> Any:
    """The first dotted attribute path that exists (nested layout first, then flat)."""
    for path in paths:
        value = node
        try:
            for part in path.split("."):
                value = getattr(value, part)
        except AttributeError:
            continue
        return value
    return None


def load(job: dict[str, Any]) -> dict[str, Any]:
    if job.get("source"):
        if not os.path.exists(os.path.join(str(job["source"]), str(PROBE["checkout"]))):
            raise CannotRun(f"{job['source']} is not a VeOmni source tree (it has no {PROBE['checkout']})")
        sys.path.insert(0, job["source"])
    try:
        import veomni
        from veomni.arguments import VeOmniArguments  # noqa: F401 - what the probe needs, imported now
    except ImportError as exc:
        raise CannotRun(
            f"VeOmni does not import with this interpreter: {describe(exc)} (its checkout: --src veomni=PATH)"
        ) from exc
    return {
        "name": "VeOmni",
        "version": getattr(veomni, "__version__", None),
        "source": job.get("source"),
        "transformers": package_version("transformers"),
        "torch": package_version("torch"),
    }


def probe(job: dict[str, Any], result: Result) -> None:
    import torch
    from veomni.arguments import VeOmniArguments, parse_args
    from veomni.optim import build_lr_scheduler

    (path,) = job["files"]
    os.chdir(os.path.dirname(os.path.abspath(path)))  # VeOmni resolves model.config_path from where it is launched
    world = str(int(job.get("world_size") or 8))
    for name in ("WORLD_SIZE", "LOCAL_WORLD_SIZE"):
        STUBS.add(f"${name}", "the world size (--world-size), as torchrun sets it")
        os.environ[name] = world
        STUBS.ran(f"${name}")
    sys.argv = ["train.py", path]
    said = io.StringIO()
    with framework(), contextlib.redirect_stderr(said):
        try:
            args = parse_args(VeOmniArguments)
        except SystemExit as exc:  # argparse refused an option: its message went to stderr
            raise Refused(f"argparse exit {exc.code}: {' '.join(said.getvalue().strip().splitlines()[-1:])}") from exc
        args.compute_train_steps()
        steps = args.train_steps * args.train.num_train_epochs
    _run(args, int(world), steps, result)
    _lr(args, steps, job, result, torch, build_lr_scheduler)
    if job.get("count_parameters", True):
        _parameters(args, job, result)


def _run(args: Any, world: int, steps: int, result: Result) -> None:
    train = args.train
    enable = _get(train, "accelerator.fsdp_config.mixed_precision.enable", "enable_mixed_precision")
    dtype = _get(train, "accelerator.fsdp_config.mixed_precision.param_dtype") or "bfloat16"
    precision = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(dtype, dtype) if enable else "bf16"
    if not enable:
        result.note("mixed precision off: VeOmni builds the model in bfloat16 (BaseTrainer._build_model)")
    seq = args.data.max_seq_len
    result["run"] = {
        "world_size": world,
        "data_parallel": _get(train, "accelerator.dp_size", "data_parallel_size"),
        "global_batch": train.global_batch_size,
        "micro_batch": train.micro_batch_size,
        "accumulation": train.gradient_accumulation_steps,
        "steps": steps,
        "seq_length": seq,
        "tokens_per_step": train.global_batch_size * seq if seq else None,
        "precision": precision,
        "zero_stage": None,
        "tensor_parallel": _get(train, "accelerator.tp_size", "tensor_parallel_size"),
        "pipeline_parallel": _get(train, "accelerator.pp_size", "pipeline_parallel_size"),
        "sequence_parallel": _get(train, "accelerator.ulysses_size", "ulysses_parallel_size"),
        "data_parallel_mode": plain(_get(train, "accelerator.fsdp_config.fsdp_mode", "data_parallel_mode")),
        "dynamic_batch": train.dyn_bsz,
        "optimizer": plain(_get(train, "optimizer.type", "optimizer")),
    }


def _lr(args: Any, steps: int, job: dict[str, Any], result: Result, torch: Any, build: Any) -> None:
    train = args.train
    optim = train.optimizer if hasattr(train.optimizer, "lr") else train  # flat layout: the fields sit on train
    total = steps_to_run(steps, job, result, "VeOmni computed no training steps")
    if total is None:
        result.note("no learning rate curve: VeOmni computed no training steps")
        return
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=optim.lr)
    with framework():  # as BaseTrainer._build_lr_scheduler calls it
        scheduler = build(
            optimizer,
            train_steps=steps,
            lr=optim.lr,
            lr_min=optim.lr_min,
            lr_decay_style=optim.lr_decay_style,
            lr_decay_ratio=optim.lr_decay_ratio,
            lr_warmup_ratio=optim.lr_warmup_ratio,
            lr_start=optim.lr_start,
        )
    curve = LrCurve(total, job)
    with framework():
        for step in range(total):
            curve.record(step, optimizer.param_groups[0]["lr"])  # the rate optimizer step `step` uses
            scheduler.step()
    result["lr"] = curve.result(f"VeOmni {optim.lr_decay_style} (build_lr_scheduler)")


def _eager(ops: Any) -> Any:
    """The file's kernel choices with every kernel eager: the fused ones (liger, triton, flash
    attention) are CUDA builds; which kernel runs an op does not change a parameter."""
    import dataclasses

    chosen = {f.name: getattr(ops, f.name) for f in dataclasses.fields(ops) if f.name.endswith("_implementation")}
    eager = {name: "eager" for name, value in chosen.items() if value not in (None, "eager")}
    STUBS.add(
        "model.ops_implementation",
        "every kernel eager for the meta-device build (fused kernels are CUDA "
        "builds; a kernel choice changes no parameter)" + (f": {', '.join(sorted(eager))}" if eager else ""),
    )
    if eager:
        STUBS.ran("model.ops_implementation")
    return dataclasses.replace(ops, **eager)


def _parameters(args: Any, job: dict[str, Any], result: Result) -> None:
    from veomni.models import build_foundation_model
    from veomni.models.auto import build_config

    model = args.model
    path = model.config_path
    if job.get("model_config"):
        STUBS.add(
            "model.config_path",
            f"{job['model_config']} (--model-config) instead of {path!r}: the architecture "
            "from a local config.json (nothing is downloaded)",
        )
        STUBS.ran("model.config_path")
        path = job["model_config"]
    try:
        config = build_config(path, **(model.model_config or {}))
    except Exception as exc:  # noqa: BLE001 - a hub name offline, a file not here
        result["parameters"] = {
            "error": f"the model config {path!r} could not be read here (a hub name is not "
            f"downloaded: give a local config.json with --model-config): "
            f"{type(exc).__name__}: {str(exc)[:300]}"
        }
        return
    text = getattr(config, "text_config", None) or config
    result["model"] = {
        "model_type": config.model_type,
        "num_layers": getattr(text, "num_hidden_layers", None),
        "hidden_size": getattr(text, "hidden_size", None),
        "num_heads": getattr(text, "num_attention_heads", None),
        "num_kv_heads": getattr(text, "num_key_value_heads", None),
        "ffn_hidden_size": getattr(text, "intermediate_size", None),
        "vocab_size": getattr(text, "vocab_size", None),
        "max_position_embeddings": getattr(text, "max_position_embeddings", None),
    }
    vocab = getattr(text, "vocab_size", None)

    ops = _eager(model.ops_implementation)

    def build(rows: int) -> Any:
        text.vocab_size = rows
        with contextlib.redirect_stdout(sys.stderr):
            return build_foundation_model(
                config_path=config, weights_path=None, init_device="meta", ops_implementation=ops
            )

    try:
        count = count_meta(build, vocab, placeholder=vocab or 32000)
    except Exception as exc:  # noqa: BLE001 - a model class this environment cannot build
        result["parameters"] = {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        return
    count["how"] = "build_foundation_model(init_device='meta')"
    result["parameters"] = count


if __name__ == "__main__":
    sys.exit(main("veomni", load, probe))
