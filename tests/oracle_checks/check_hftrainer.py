"""transformers' own Trainer code on train files: `HfArgumentParser(TrainingArguments).parse_dict` (the TrainingArguments
__post_init__ builds `HfTrainerDeepSpeedConfig` and runs `trainer_config_process` on the DeepSpeed config the file names),
then `trainer_config_finalize` with the run's total steps, then the learning-rate scheduler the run would step: the
DeepSpeed config's own (`DeepSpeedEngine._scheduler_from_config`) when it has a `scheduler` block, else
`get_scheduler(lr_scheduler_type, num_warmup_steps=args.get_warmup_steps(N), num_training_steps=N,
scheduler_specific_kwargs=lr_scheduler_kwargs)` as `Trainer.create_scheduler` calls it, on an optimizer whose lr is the
DeepSpeed optimizer's (filled) lr when the config has an optimizer block, else `learning_rate`.

Run with an interpreter that has transformers, accelerate, deepspeed (`DS_BUILD_OPS=0`) and torch (CPU). Job keys:
* `files`: the train file (YAML or JSON), its `deepspeed:` path relative to it.
* `world`: the number of processes.
* `strip`: leave out keys that are no TrainingArguments field (a tool's own keys: LLaMA-Factory's parser takes them).
* `steps`: the total update steps when max_steps is not above 0 (num_train_epochs x an epoch's steps: the dataset's).
* `samples`: or the dataset's length: the total steps are then `Trainer.set_initial_training_values`' max_steps on a
  dataloader of that many samples sharded over `world` processes as accelerate's `prepare_data_loader` shards it
  (`values.epoch_steps`).
* `hidden`: the model's hidden size (the ZeRO bucket sizes "auto" takes from it).
* `lr_at`: the optimizer steps whose learning rate is reported (`values.lr_at`).

What is replaced, and why it cannot change a verdict: `TrainingArguments.world_size` answers `world` (no process group
can exist without starting `world` processes; trainer_config_process asks only this number of it), and
`is_torch_bf16_gpu_available` answers True (this CPU has no GPU; the check is of the hardware, not of the file). The
model trainer_config_finalize is given is an object with `config.hidden_size` (only that is read of it). The Trainer
set_initial_training_values runs on is an object that answers only its batch arithmetic: the total batch (world x
micro x accumulation, as Trainer.get_total_train_batch_size), a sequence-parallel size of 1, and the dataset's length.
"""

from __future__ import annotations

import json
import os
import sys
from types import SimpleNamespace
from typing import Any

from _protocol import framework, plain, serve


def main() -> int:
    import dataclasses

    import torch
    import transformers
    import transformers.training_args as training_args
    import yaml
    from deepspeed.runtime.engine import DeepSpeedEngine
    from transformers import HfArgumentParser, Trainer, TrainingArguments, get_scheduler

    world = {"size": 8}
    TrainingArguments.world_size = property(lambda self: world["size"])  # type: ignore[assignment,method-assign]
    training_args.is_torch_bf16_gpu_available = lambda *a, **k: True
    fields = {f.name for f in dataclasses.fields(TrainingArguments)}

    def epoch_steps(args: Any, samples: int, processes: int) -> int:
        """The Trainer's max_steps for an epoch-based run over `samples` samples on `processes` processes."""
        import inspect

        from accelerate.data_loader import prepare_data_loader
        from torch.utils.data import DataLoader

        micro = args.per_device_train_batch_size
        loader = DataLoader(range(samples), batch_size=micro, drop_last=args.dataloader_drop_last)
        loader = prepare_data_loader(loader, num_processes=processes, process_index=0, put_on_device=False)
        total_batch = processes * micro * args.gradient_accumulation_steps
        trainer = SimpleNamespace(
            get_total_train_batch_size=lambda _: total_batch, get_sp_size=lambda: 1, num_examples=lambda _: samples
        )
        method = Trainer.set_initial_training_values
        with framework():  # (4.5x takes the total batch as an argument, 5.x asks the Trainer for it)
            out = (
                method(trainer, args, loader)
                if len(inspect.signature(method).parameters) == 3
                else method(trainer, args, loader, total_batch)
            )
        return int(out[-1])  # max_steps, the last value in every release

    def check(job: dict[str, Any]) -> dict[str, Any]:
        (path,) = job["files"]
        world["size"] = job.get("world", 8)
        with open(path) as handle:
            document = json.load(handle) if path.endswith(".json") else yaml.safe_load(handle)
        if job.get("strip"):
            document = {k: v for k, v in document.items() if k in fields}
        if isinstance(document.get("deepspeed"), str):  # relative to the file, as the user runs it from its folder
            document["deepspeed"] = os.path.join(os.path.dirname(os.path.abspath(path)), document["deepspeed"])
        with framework():
            (args,) = HfArgumentParser(TrainingArguments).parse_dict(document)
        total = args.max_steps if args.max_steps > 0 else job.get("steps")
        if args.max_steps <= 0 and job.get("samples"):
            total = epoch_steps(args, job["samples"], world["size"])
        values: dict[str, Any] = {
            "transformers": transformers.__version__,
            "world_size": args.world_size,
            "per_device_train_batch_size": args.per_device_train_batch_size,
            "gradient_accumulation_steps": args.gradient_accumulation_steps,
            "global_batch": args.world_size * args.per_device_train_batch_size * args.gradient_accumulation_steps,
            "learning_rate": args.learning_rate,
            "lr_scheduler_type": str(getattr(args.lr_scheduler_type, "value", args.lr_scheduler_type)),
            "total_steps": total,
            "epoch_steps": total if job.get("samples") else None,
            "bf16": args.bf16,
            "fp16": args.fp16,
            "max_grad_norm": args.max_grad_norm,
        }
        config = None
        if args.deepspeed:
            ds = args.hf_deepspeed_config
            model = SimpleNamespace(config=SimpleNamespace(hidden_size=job.get("hidden", 4096)))
            with framework():
                ds.trainer_config_finalize(args, model, total)
            config = ds.config
            values["deepspeed"] = plain(config)
        if total is None:
            return values
        with framework():
            values["warmup_steps"] = args.get_warmup_steps(total)
        lr = float((config or {}).get("optimizer", {}).get("params", {}).get("lr", args.learning_rate))
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr)
        with framework():
            if config is not None and "scheduler" in config:
                view = SimpleNamespace(
                    scheduler_name=lambda: config["scheduler"]["type"],
                    scheduler_params=lambda: config["scheduler"].get("params", {}),
                )
                scheduler = DeepSpeedEngine._scheduler_from_config(view, optimizer)
            else:
                scheduler = get_scheduler(
                    args.lr_scheduler_type,
                    optimizer=optimizer,
                    num_warmup_steps=values["warmup_steps"],
                    num_training_steps=total,
                    scheduler_specific_kwargs=args.lr_scheduler_kwargs,
                )
        wanted = sorted(set(job.get("lr_at", [])))
        rates: dict[str, float] = {}
        for step in range(max(wanted, default=-1) + 1):
            if step in wanted:
                rates[str(step)] = float(optimizer.param_groups[0]["lr"])  # what optimizer step `step` uses
            optimizer.step()
            with framework():
                scheduler.step()
        values["lr_at"] = rates
        return values

    return serve(check)


if __name__ == "__main__":
    sys.exit(main())
