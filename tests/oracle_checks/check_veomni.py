"""VeOmni's own argument code on VeOmni YAML files: `parse_args(VeOmniArguments)` (every dataclass
`__post_init__`), `compute_train_steps()`, and the LR scheduler its trainer builds from them
(`veomni.optim.build_lr_scheduler`, called as `BaseTrainer._build_lr_scheduler` calls it).

Run with an interpreter that has torch (CPU), the transformers version VeOmni names, and the
`veomni` package of the layout wanted on PYTHONPATH ($VEOMNI_SRC: nested layout; $VEOMNI_FLAT_SRC:
the flat layout before PR #538). The same program serves both: the fields it reports are looked up
under either layout's names. Job keys:
* `files`: the YAML file (VeOmni reads one).
* `world`: WORLD_SIZE (and LOCAL_WORLD_SIZE), which VeOmni's accelerator arguments divide.
* `set`: dotted field -> value, given as VeOmni's own command-line options `--a.b.c VALUE` (its
  override path; lists as several values, booleans as true/false).
* `fields`: dotted attribute paths of the parsed arguments (`train.optimizer.lr`) to report as they
  came out, in `values.fields`.
* `lr_points`: how many evenly spaced steps, besides warmup end and the ends of the run, the peak
  learning rate `lr_max` is looked for at (the scheduler's own lambda evaluated at each step).

Nothing is replaced: VeOmni's argument classes import and run on CPU.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import Any

from _protocol import framework, plain, serve


def _get(node: Any, *paths: str) -> Any:
    """The first of the dotted attribute paths that exists (nested layout first, then flat)."""
    for path in paths:
        value = node
        try:
            for part in path.split("."):
                value = getattr(value, part)
        except AttributeError:
            continue
        return value
    return None


def _options(values: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in values.items():
        items = value if isinstance(value, list) else [value]
        out.append(f"--{key}")
        out += [str(v).lower() if isinstance(v, bool) else str(v) for v in items]
    return out


def main() -> int:
    import torch
    from veomni.arguments import VeOmniArguments, parse_args
    from veomni.optim import build_lr_scheduler

    def check(job: dict[str, Any]) -> dict[str, Any]:
        (path,) = job["files"]
        world = str(job.get("world", 8))
        os.environ["WORLD_SIZE"] = world
        os.environ["LOCAL_WORLD_SIZE"] = world
        sys.argv = ["train.py", path, *_options(job.get("set", {}))]
        said = io.StringIO()
        with framework(), contextlib.redirect_stderr(said):
            try:
                args = parse_args(VeOmniArguments)
            except SystemExit as exc:  # argparse refused an option: its message went to stderr
                raise ValueError(f"argparse exit {exc.code}: {said.getvalue().strip().splitlines()[-1:]}") from exc
            args.compute_train_steps()
            steps = args.train_steps * args.train.num_train_epochs
        train = args.train
        # nested layout: train.optimizer holds the fields; flat: they sit on train (optimizer is its name)
        optim = train.optimizer if hasattr(train.optimizer, "lr") else train
        lr = optim.lr
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)
        with framework():  # as BaseTrainer._build_lr_scheduler calls it
            scheduler = build_lr_scheduler(
                optimizer,
                train_steps=steps,
                lr=lr,
                lr_min=optim.lr_min,
                lr_decay_style=optim.lr_decay_style,
                lr_decay_ratio=optim.lr_decay_ratio,
                lr_warmup_ratio=optim.lr_warmup_ratio,
                lr_start=optim.lr_start,
            )
        warmup = int(steps * optim.lr_warmup_ratio)
        points = job.get("lr_points", 64)
        probe = {0, max(warmup - 1, 0), warmup, warmup + 1, max(steps - 1, 0)}
        probe |= {steps * i // points for i in range(points)} if points else set()
        with framework():
            rates = [lr * scheduler.lr_lambdas[0](t) for t in sorted(probe) if t < max(steps, 1)]
        fields = {name: plain(_get(args, name)) for name in job.get("fields", [])}
        return {
            "fields": fields,
            "world": _get(train, "world_size", "accelerator.world_size"),
            "dp": _get(train, "accelerator.dp_size", "data_parallel_size"),
            "ulysses": _get(train, "accelerator.ulysses_size", "ulysses_parallel_size"),
            "micro_batch_size": train.micro_batch_size,
            "global_batch_size": train.global_batch_size,
            "gradient_accumulation_steps": train.gradient_accumulation_steps,
            "dyn_bsz": train.dyn_bsz,
            "max_seq_len": args.data.max_seq_len,
            "train_size": args.data.train_size,
            "train_steps": steps,
            "lr": lr,
            "lr_min": optim.lr_min,
            "lr_decay_style": optim.lr_decay_style,
            "lr_warmup_ratio": optim.lr_warmup_ratio,
            "lr_decay_ratio": optim.lr_decay_ratio,
            "lr_max": max(rates) if rates else None,
            "config_path": args.model.config_path,
            "train_path": plain(args.data.train_path),
        }

    return serve(check)


if __name__ == "__main__":
    sys.exit(main())
