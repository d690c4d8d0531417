#!/usr/bin/env python3
"""Generate schemas/history/veomni.json: every VeOmni config key since the first public commit.

VeOmni has no config versioning and breaks its layout in PRs, so a release here is a merged PR
(first-parent commit of main) after which the set of keys, a type or a default differs; its label
is the PR number ("#538"). Commits read: every first-parent commit up to PIN that touched the
argument files or the trainer/task scripts (see tools/veomni_args.py for what is read). The
version tags (v0.1.x) are aliases, and so is "current" (PIN).

Usage:
    python tools/gen_veomni_history.py [--repo GIT_DIR] [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from history_common import (
    HISTORY_DIR,
    AstCache,
    Change,
    Git,
    JSON,
    KeyInfo,
    Release,
    Rename,
    Snapshot,
    document,
    fold,
    merged_prs,
    mirror_path,
    render,
    write_or_check,
)
from veomni_args import CORE_FILES, EXTRA_PREFIXES, snapshot

REPO = "ByteDance-Seed/VeOmni"
PIN = "d9774494"  # newest commit read (#1084, 2026-08-21); move forward and rerun for newer history
OUTPUT = HISTORY_DIR / "veomni.json"

NOTES = {
    "#397": "arguments move to veomni/arguments/arguments_types.py (VeOmniArguments root); flat layout kept",
    "#458": "BREAKING: trainers handle all tasks; flat train.rmpad / rmpad_with_pos_ids / dyn_bsz_margin / "
    "dyn_bsz_buffer_size removed",
    "#538": "BREAKING: nested layout (train.optimizer.*, train.checkpoint.*, train.accelerator.*, ...)",
    "#627": "train.enable_mixed_precision moves to train.accelerator.fsdp_config.mixed_precision.enable",
    "#756": "FSDP1 dropped (fsdp_mode ddp/fsdp2 only; fsdp_config.full_shard removed)",
}

SRC = "ByteDance-Seed/VeOmni@{rev}:veomni/arguments/arguments_types.py"
_NESTED_538 = {
    "train.output_dir": "train.checkpoint.output_dir",
    "train.optimizer": "train.optimizer.type",
    "train.lr": "train.optimizer.lr",
    "train.lr_min": "train.optimizer.lr_min",
    "train.lr_start": "train.optimizer.lr_start",
    "train.lr_warmup_ratio": "train.optimizer.lr_warmup_ratio",
    "train.lr_decay_style": "train.optimizer.lr_decay_style",
    "train.lr_decay_ratio": "train.optimizer.lr_decay_ratio",
    "train.weight_decay": "train.optimizer.weight_decay",
    "train.no_decay_modules": "train.optimizer.no_decay_modules",
    "train.no_decay_params": "train.optimizer.no_decay_params",
    "train.max_grad_norm": "train.optimizer.max_grad_norm",
    "train.data_parallel_mode": "train.accelerator.fsdp_config.fsdp_mode",
    "train.enable_full_shard": "train.accelerator.fsdp_config.full_shard",
    "train.enable_reshard_after_forward": "train.accelerator.fsdp_config.reshard_after_forward",
    "train.enable_fsdp_offload": "train.accelerator.fsdp_config.offload",
    "train.data_parallel_replicate_size": "train.accelerator.dp_replicate_size",
    "train.data_parallel_shard_size": "train.accelerator.dp_shard_size",
    "train.tensor_parallel_size": "train.accelerator.tp_size",
    "train.expert_parallel_size": "train.accelerator.ep_size",
    "train.pipeline_parallel_size": "train.accelerator.pp_size",
    "train.ulysses_parallel_size": "train.accelerator.ulysses_size",
    "train.context_parallel_size": "train.accelerator.cp_size",
    "train.enable_gradient_checkpointing": "train.gradient_checkpointing.enable",
    "train.ckpt_manager": "train.checkpoint.manager",
    "train.load_checkpoint_path": "train.checkpoint.load_path",
    "train.save_steps": "train.checkpoint.save_steps",
    "train.save_epochs": "train.checkpoint.save_epochs",
    "train.hf_save_steps": "train.checkpoint.hf_save_steps",
    "train.save_hf_weights": "train.checkpoint.save_hf_weights",
    "train.use_wandb": "train.wandb.enable",
    "train.wandb_project": "train.wandb.project",
    "train.wandb_name": "train.wandb.name",
    "train.enable_profiling": "train.profile.enable",
    "train.profile_start_step": "train.profile.start_step",
    "train.profile_end_step": "train.profile.end_step",
    "data.dataloader_type": "data.dataloader.type",
    "data.num_workers": "data.dataloader.num_workers",
    "data.drop_last": "data.dataloader.drop_last",
    "data.pin_memory": "data.dataloader.pin_memory",
    "data.prefetch_factor": "data.dataloader.prefetch_factor",
    "train.enable_reshard_after_backward": "train.accelerator.fsdp_config.reshard_after_backward",
    "train.enable_forward_prefetch": "train.accelerator.fsdp_config.forward_prefetch",
    "train.ep_outside": "train.accelerator.ep_outside",
    "train.async_enabled": "train.accelerator.enable_async",
    "train.enable_activation_offload": "train.accelerator.offload_config.enable_activation",
    "train.activation_gpu_limit": "train.accelerator.offload_config.activation_gpu_limit",
    "train.debug_gradient_checkpointing": "train.gradient_checkpointing.debug",
    "train.enable_reentrant": "train.gradient_checkpointing.enable_reentrant",
    "train.save_async": "train.checkpoint.save_async",
    "train.hf_save_epochs": "train.checkpoint.hf_save_epochs",
    "train.wandb_id": "train.wandb.id",
    "train.profile_trace_dir": "train.profile.trace_dir",
    "train.profile_record_shapes": "train.profile.record_shapes",
    "train.profile_profile_memory": "train.profile.profile_memory",
    "train.profile_with_stack": "train.profile.with_stack",
    "train.profile_rank0_only": "train.profile.rank0_only",
    "model.attn_implementation": "model.ops_implementation.attn_implementation",
    "model.moe_implementation": "model.ops_implementation.moe_implementation",
}
RENAMES = (
    Rename(
        "train.dyn_bsz_buffer_size",
        "data.dyn_bsz_buffer_size",
        "#458",
        SRC.format(rev="a11d28ca"),
        "dynamic batching moves to the data side (#458)",
    ),
    *(Rename(old, new, "#538", SRC.format(rev="085f3c23"), "nested layout (#538)") for old, new in _NESTED_538.items()),
    Rename(
        "train.enable_mixed_precision",
        "train.accelerator.fsdp_config.mixed_precision.enable",
        "#627",
        SRC.format(rev="2b21f290"),
        "mixed precision moves into fsdp_config (#627)",
    ),
)
CHANGES = (
    Change(
        "train.pad_to_length",
        "#458",
        "replaces rmpad / rmpad_with_pos_ids / pad_packed_input / pad_packed_to_length: padding-free packing is "
        "always on; pad_to_length pads each packed micro batch (needs dyn_bsz)",
        SRC.format(rev="a11d28ca"),
    ),
    Change(
        "train.dyn_bsz",
        "#458",
        "train steps with dyn_bsz no longer shrink by dyn_bsz_margin (removed): "
        "ceil(train_size*(1+bsz_warmup_ratio/2) / (global_batch_size*max_seq_len))",
        SRC.format(rev="a11d28ca"),
    ),
    Change(
        "train.accelerator.fsdp_config.fsdp_mode",
        "#756",
        "FSDP1 dropped: 'fsdp1' no longer accepted and the default becomes fsdp2 (was ddp)",
        SRC.format(rev="54ec9e60"),
    ),
    Change(
        "train.init_device", "#756", "default cuda -> meta (FSDP2 builds the model on meta)", SRC.format(rev="54ec9e60")
    ),
)


# PR #1090 (BREAKING, merged after PIN: not in the mirror) makes accelerator and optimizer model-scoped.
# Read from VeOmni's own sources at a commit with that layout (stored copies, not the mirror):
# ByteDance-Seed/VeOmni@4c0964cd:veomni/arguments/arguments_types.py (AcceleratorConfig under ModelRuntimeArguments,
# init_device / broadcast_model_weights_from_rank0 / ep_sharded_stream_load / gradient_checkpointing / torch_compile /
# chunk_mbs_config fields of AcceleratorConfig) and the parser's table of moved keys
# (ByteDance-Seed/VeOmni@0196ddbe:veomni/arguments/parser.py `_RELOCATED_KEYS`, which also makes every key a
# dataclass does not declare an error). The release is PIN's fields moved by this table (old prefix -> new).
SCOPED = "#1090"
SCOPED_REV = "4c0964cd"  # not in the mirror: the commit its moves were read at (a stored copy)
SCOPED_SRC = f"ByteDance-Seed/VeOmni@{SCOPED_REV}:veomni/arguments/arguments_types.py (PR #1090)"
SCOPED_MOVES = {
    "train.accelerator": "model.accelerator",
    "train.optimizer": "model.optimizer",
    "train.init_device": "model.accelerator.init_device",
    "train.broadcast_model_weights_from_rank0": "model.accelerator.broadcast_model_weights_from_rank0",
    "train.ep_sharded_stream_load": "model.accelerator.ep_sharded_stream_load",
    "train.gradient_checkpointing": "model.accelerator.gradient_checkpointing",
    "train.torch_compile": "model.accelerator.torch_compile",
    "train.chunk_mbs_config": "model.accelerator.chunk_mbs_config",
}
NOTES[SCOPED] = (
    "BREAKING (after the pinned mirror): train.accelerator / train.optimizer move to model.*, six knobs "
    "onto model.accelerator; unknown keys become errors"
)


def scoped_key(key: str) -> str:
    for old, new in SCOPED_MOVES.items():
        if key == old or key.startswith(old + "."):
            return new + key[len(old) :]
    return key


def scoped_release(last: Snapshot) -> tuple[Release, Snapshot, list[Rename]]:
    """PR #1090's release: the last snapshot with SCOPED_MOVES applied (no commit in the mirror)."""
    snap: Snapshot = {}
    renames: list[Rename] = []
    for key, info in last.items():
        new = scoped_key(key)
        if new != key and key.split(".")[1] not in ("accelerator", "optimizer"):  # a knob now on AcceleratorConfig
            info = KeyInfo(info.type, info.default, {**info.extra, "group": "AcceleratorConfig"})
        snap[new] = info
        if new != key:
            renames.append(Rename(key, new, SCOPED, SCOPED_SRC, "model-scoped layout (#1090)"))
    return Release(SCOPED, SCOPED_REV, "", NOTES[SCOPED], prs=(1090,)), snap, renames


# The newest stored arguments (ByteDance-Seed/VeOmni@000bbdf5:veomni/arguments/arguments_types.py, stored copy, not
# the mirror) differ from #1090 again. PR #1125 (BREAKING, "extract model-bound logic into VeOmniModelRuntime"; its
# review shows args.data.chat_template becoming args.model.chat_template) is the newest PR the changes are known from;
# the weight-loading flags sit on ModelArguments there ("load policy", not a mesh dimension). PR #1075 (MiniMax H3)
# made the AdamW betas a field (its review: build_optimizer(betas=args...optimizer.betas)); PR #1082 removed the
# SeedOmni V1 fields of ModelArguments (its description). Other fields of the file (adamw_swap, qat, stage_dir, ...)
# came with PRs the stored threads do not name. The release is #1090's fields with this delta applied.
LATEST = "#1125"
LATEST_REV = "000bbdf5"  # not in the mirror: the commit its fields were read at (a stored copy)
LATEST_SRC = f"ByteDance-Seed/VeOmni@{LATEST_REV}:veomni/arguments/arguments_types.py (after PR #1125)"
LATEST_MOVES = {
    "model.accelerator.broadcast_model_weights_from_rank0": "model.broadcast_model_weights_from_rank0",
    "model.accelerator.ep_sharded_stream_load": "model.ep_sharded_stream_load",
    "data.chat_template": "model.chat_template",
}
LATEST_GONE = (
    "model.accelerator.chunk_mbs_config.",
    "model.foundation",
    "model.encoders",
    "model.decoders",
    "model.input_encoder",
    "model.output_encoder",
    "model.encode_target",
)
_OPT, _ACC = "OptimizerConfig", "AcceleratorConfig"
LATEST_FIELDS: dict[str, tuple[str, str, JSON]] = {  # key -> (declaring class, type, default) at 000bbdf5
    "model.optimizer.type": (_OPT, "Literal['adamw', 'anyprecision_adamw', 'muon', 'adamw_swap']", "adamw"),
    "model.optimizer.betas": (_OPT, "Tuple[float, float]", [0.9, 0.95]),
    "model.optimizer.grad_clip_scope": (_OPT, "Literal['per_module', 'global']", "per_module"),
    "model.optimizer.swap_mem_fraction_static": (_OPT, "float", 0.8),
    "model.optimizer.swap_pin_memory": (_OPT, "bool", True),
    "model.accelerator.init_device": (_ACC, "Literal['cuda', 'meta', 'npu', 'mlu']", "meta"),
    "model.accelerator.fsdp_config.fsdp_mode": ("FSDPConfig", "Literal['ddp', 'fsdp2', 'eager']", "fsdp2"),
    "model.accelerator.fsdp_config.offload_pin_memory": ("FSDPConfig", "bool", True),
    "model.accelerator.offload_config.enable_async_activation": ("OffloadConfig", "bool", False),
    "model.accelerator.offload_config.activation_offload_modules": ("OffloadConfig", "List[str]", []),
    "model.accelerator.offload_config.activation_offload_host_cache_limit_gb": ("OffloadConfig", "float", 4.0),
    "model.broadcast_model_weights_from_rank0": ("ModelArguments", "bool", True),
    "model.ep_sharded_stream_load": ("ModelArguments", "bool", False),
    "model.chat_template": ("BaseModelArguments", "Optional[str]", None),
    "model.processor_config": ("BaseModelArguments", "Optional[Dict]", {}),
    "model.ops_implementation.qat_implementation": (
        "OpsImplementationConfig",
        "Literal['none', 'fp8_blockwise']",
        "none",
    ),
    "train.checkpoint.stage_dir": ("CheckpointConfig", "Optional[str]", None),
    "train.checkpoint.save_timeout_seconds": ("CheckpointConfig", "Optional[int]", None),
    "data.dataset_repeat": ("DataArguments", "bool", False),
}
NOTES[LATEST] = (
    "after the pinned mirror (as at VeOmni@000bbdf5): weight-loading flags and chat_template move to "
    "model.*, chunk_mbs_config and the SeedOmni V1 model fields removed, optimizer.betas (#1075) and "
    "adamw_swap added"
)


def latest_release(scoped: Snapshot) -> tuple[Release, Snapshot, list[Rename]]:
    """The newest stored release: #1090's fields with LATEST_MOVES / LATEST_GONE / LATEST_FIELDS applied."""
    snap: Snapshot = {}
    for key, info in scoped.items():
        if any(key == gone or key.startswith(gone if gone.endswith(".") else gone + ".") for gone in LATEST_GONE):
            continue
        snap[LATEST_MOVES.get(key, key)] = info
    for key, (group, kind, default) in LATEST_FIELDS.items():
        snap[key] = KeyInfo(kind, default, {**(snap[key].extra if key in snap else {}), "group": group})
    renames = [Rename(old, new, LATEST, LATEST_SRC, "moved to model.* (#1125)") for old, new in LATEST_MOVES.items()]
    return Release(LATEST, LATEST_REV, "", NOTES[LATEST], prs=(1075, 1082, 1125)), snap, renames


def pr_label(subject: str, commit: str) -> str:
    match = re.search(r"\(#(\d+)\)\s*$", subject)
    return f"#{match.group(1)}" if match else commit[:8]


def build(git: Git) -> dict:
    pin = git.rev(PIN)
    cache = AstCache(git)
    log = git.run(
        "log",
        "--first-parent",
        "--reverse",
        "--date=format-local:%Y-%m-%d",
        "--format=%H %cd %s",
        pin,
        "--",
        CORE_FILES[0],
        CORE_FILES[1],
        *EXTRA_PREFIXES,
    )
    releases: list[Release] = []
    snapshots: dict[str, Snapshot] = {}
    commits: list[tuple[str, str]] = []  # (commit, label in force), for the tag aliases
    last: Snapshot | None = None
    for line in log.splitlines():
        commit, date, subject = line.split(" ", 2)
        snap = snapshot(git, cache, commit)
        if snap is None:
            continue
        if last is None or not _same(snap, last):
            label = pr_label(subject, commit)
            if label in snapshots:
                label = f"{label}@{commit[:8]}"
            releases.append(Release(label, commit, date, NOTES.get(label)))
            snapshots[label] = snap
            last = snap
        commits.append((commit, releases[-1].label))
    aliases = {"current": releases[-1].label, "HEAD": releases[-1].label}
    first_parent = git.run("rev-list", "--first-parent", "--reverse", pin).split()
    position = {c: i for i, c in enumerate(first_parent)}
    for tag in git.run("tag", "--list", "v*").split():
        target = git.rev(tag)
        if target not in position:
            continue  # a tag on a release branch, not on main
        before = [label for c, label in commits if position[c] <= position[target]]
        if before:
            aliases[tag] = before[-1]
    merged_prs(git, releases, None, pin)
    release, snapshots[SCOPED], scoped_renames = scoped_release(snapshots[releases[-1].label])
    releases.append(release)  # after "current": the tables are written for the pinned (nested) layout
    latest, snapshots[LATEST], latest_renames = latest_release(snapshots[SCOPED])
    releases.append(latest)
    scoped_renames += latest_renames
    records = fold(releases, snapshots)
    comment = [
        "VeOmni: keys are the leaf fields of the argument dataclasses under model / data / train (nested dataclass",
        "fields are dotted paths). A release is a merged PR after which a key, type or default differs (label: #PR).",
        "group: the dataclass declaring the field; trainers: the trainer/task files whose subclasses add the key",
        "(valid only with them). VeOmni ignores YAML keys it does not know.",
    ]
    return document(
        "veomni",
        REPO,
        "tools/gen_veomni_history.py",
        comment,
        releases,
        aliases,
        records,
        (*RENAMES, *scoped_renames),
        CHANGES,
        extra={"pin": pin[:10], "refuses_unknown_from": SCOPED},
    )


def _same(a: Snapshot, b: Snapshot) -> bool:
    if a.keys() != b.keys():
        return False
    return all((a[k].type, repr(a[k].default), a[k].extra) == (b[k].type, repr(b[k].default), b[k].extra) for k in a)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=mirror_path("ByteDance-Seed+VeOmni"))
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 when the output file is out of date")
    args = parser.parse_args(argv)
    git = Git(args.repo)
    try:
        text = render(build(git))
    finally:
        git.close()
    return write_or_check(text, args.output, args.check, "gen_veomni_history.py")


if __name__ == "__main__":
    sys.exit(main())
