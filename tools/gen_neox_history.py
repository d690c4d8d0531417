#!/usr/bin/env python3
"""Generate schemas/history/neox.json: every GPT-NeoX argument since the dataclass arguments.

GPT-NeoX reads a YAML config into `NeoXArgs`, whose fields are the dataclass fields of
`megatron/neox_arguments/*.py` (neox_args.py, deepspeed_args.py; keys may be written with '-' or
'_'). Every first-parent commit of the main branch that touched that folder, from PR #249
(2021-04-26, the first dataclass arguments) to the pinned PIN commit, is read with `ast`. NeoX has
few release tags, so a release here is a day on which the argument set, a type or a default
changed: its label is the date (the last commit of that day is read). Commits whose argument files
do not parse (a broken intermediate state) are skipped. The tags are aliases (v1.0, v2.0), and
"current" is PIN.

Usage:
    python tools/gen_neox_history.py [--repo GIT_DIR] [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

from history_common import (
    HISTORY_DIR,
    Change,
    Git,
    KeyInfo,
    Release,
    Rename,
    Snapshot,
    document,
    fold,
    iter_classes,
    merged_prs,
    mirror_path,
    render,
    type_text,
    value_of,
    write_or_check,
)

REPO = "EleutherAI/gpt-neox"
START = "52bd29b0"  # Merge of PR #249 (refactor_args): the first NeoXArgs dataclasses
PIN = "ea7aefd8"  # newest commit read; move it forward and rerun to take in new history
ARGS_DIR = "megatron/neox_arguments/"
TAGS = ("v1.0", "v2.0")
OUTPUT = HISTORY_DIR / "neox.json"

NOTES = {
    "2022-12-14": "save_interval replaced by checkpoint_factor/checkpoint_scale/extra_save_iters (#737)",
    "2023-03-09": "v2.0: DeepSpeed main instead of DeeperSpeed; muP, curriculum learning",
    "2023-05-02": "LLaMA support: mlp_type, use_bias_in_norms, use_bias_in_attn_linear (#841)",
    "2023-12-26": "defaults: dropouts 0.1 -> 0.0, weight_decay 0.01 -> 0.1, clip_grad None -> 1.0 (#1107)",
    "2024-02-05": "gas removed; gradient_accumulation_steps only (#1144)",
    "2024-03-06": "MoE (#1129): num_experts and moe_* arguments",
    "2024-05-04": "megablocks MoE (#1192): num_experts renamed moe_num_experts",
    "2024-09-07": "intermediate_size / expansion_factor, gated activations swiglu, reglu, ... (#1212)",
    "2024-09-10": "mlp_type removed: LLaMA MLP via activation swiglu, use_bias_in_mlp, mlp_multiple_of (#1276)",
    "2025-05-09": "dropless MoE (#1210): MoE arguments replaced",
}

SRC = "EleutherAI/gpt-neox@{rev}:megatron/neox_arguments/neox_args.py"
RENAMES = (
    Rename(
        "sparsity",
        "attention_config",
        "2021-05-02",
        SRC.format(rev="17a0621a"),
        "per-layer attention kinds; sparsity_config carries the sparse settings",
    ),
    Rename("geglu", "activation", "2021-05-07", SRC.format(rev="b306eb79"), "geglu: true -> activation: geglu"),
    Rename(
        "openai_gelu", "activation", "2021-05-07", SRC.format(rev="b306eb79"), "openai_gelu: true -> activation: gelu"
    ),
    Rename(
        "train_data_path", "train_data_paths", "2021-05-11", SRC.format(rev="5fe05703"), "a list of paths from then on"
    ),
    Rename(
        "valid_data_path", "valid_data_paths", "2021-05-11", SRC.format(rev="5fe05703"), "a list of paths from then on"
    ),
    Rename(
        "test_data_path", "test_data_paths", "2021-05-11", SRC.format(rev="5fe05703"), "a list of paths from then on"
    ),
    Rename("slurm_comment", "comment", "2022-12-06", SRC.format(rev="ebd47f6e")),
    Rename(
        "save_interval",
        "checkpoint_factor",
        "2022-12-14",
        SRC.format(rev="8d1c5c88"),
        "same meaning with checkpoint_scale: linear (the default)",
    ),
    Rename(
        "gas",
        "gradient_accumulation_steps",
        "2024-02-05",
        SRC.format(rev="91c44bc3"),
        "gas was an output-only duplicate: calculate_derived() overwrote it with gradient_accumulation_steps, so a "
        "file's gas never changed the run; gradient_accumulation_steps (or the batch sizes) decided",
    ),
    Rename("num_experts", "moe_num_experts", "2024-05-04", SRC.format(rev="916c8835")),
    Rename(
        "label_data_paths",
        "train_label_data_paths",
        "2024-08-27",
        SRC.format(rev="c7863673"),
        "valid_/test_label_data_paths added alongside",
    ),
    Rename("expert_interval", "moe_expert_interval", "2025-05-09", SRC.format(rev="d11df961")),
)
CHANGES = (
    Change(
        "mlp_type",
        "2023-05-02",
        "'llama' builds LLaMA's gated bias-free MLP (SiLU gate), width 256*ceil(int(8h/3)/256) unless "
        "intermediate_size is set; 'regular' the usual 4h MLP. Removed 2024-09-10: use activation: swiglu, "
        "use_bias_in_mlp: false, mlp_multiple_of: 256",
        "EleutherAI/gpt-neox@299b68cd:megatron/model/transformer.py",
    ),
    Change("hidden_dropout", "2023-12-26", "default 0.1 -> 0.0", SRC.format(rev="e5a7ea71")),
    Change("attention_dropout", "2023-12-26", "default 0.1 -> 0.0", SRC.format(rev="e5a7ea71")),
    Change("weight_decay", "2023-12-26", "default 0.01 -> 0.1", SRC.format(rev="e5a7ea71")),
    Change(
        "output_layer_parallelism",
        "2023-05-02",
        "default row -> column ('row' removed 2023-05-19)",
        SRC.format(rev="b608043b"),
    ),
    Change("moe_token_dropping", "2024-05-04", "default True -> False", SRC.format(rev="916c8835")),
    Change(
        "gradient_clipping",
        "2023-03-26",
        "default 0.0 (no clipping) -> 1.0 (#819)",
        "EleutherAI/gpt-neox@5c5fb945:megatron/neox_arguments/deepspeed_args.py",
    ),
    Change(
        "clip_grad",
        "2021-04-26",
        "output-only: calculate_derived() overwrites it with gradient_clipping, so a file's clip_grad has no effect",
        "EleutherAI/gpt-neox@ea7aefd8:megatron/neox_arguments/arguments.py",
    ),
)


def snapshot(git: Git, rev: str, cache: dict[str, list[tuple[str, KeyInfo]] | None]) -> Snapshot | None:
    """Fields of every dataclass in the argument files at rev; None when a file does not parse."""
    snap: Snapshot = {}
    for path, blob in sorted(git.tree(rev, ARGS_DIR).items()):
        if not path.endswith(".py"):
            continue
        if blob not in cache:
            cache[blob] = _fields(git.blob(blob))
        fields = cache[blob]
        if fields is None:
            return None
        for name, info in fields:
            snap[name] = info
    return snap


def _fields(source: str) -> list[tuple[str, KeyInfo]] | None:
    if "@dataclass" not in source:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    out: list[tuple[str, KeyInfo]] = []
    for cls in iter_classes(tree):
        if not any(ast.unparse(d).endswith("dataclass") for d in cls.decorator_list):
            continue
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                out.append(
                    (stmt.target.id, KeyInfo(type_text(stmt.annotation), value_of(stmt.value), {"group": cls.name}))
                )
    return out


def build(git: Git) -> dict:
    pin = git.rev(PIN)
    log = git.run(
        "log",
        "--first-parent",
        "--reverse",
        "--date=format-local:%Y-%m-%d",
        "--format=%H %cd",
        f"{START}^..{pin}",
        "--",
        ARGS_DIR,
    )
    cache: dict[str, list[tuple[str, KeyInfo]] | None] = {}
    releases: list[Release] = []
    snapshots: dict[str, Snapshot] = {}
    order: list[str] = []  # every commit read, oldest first (for the tag aliases)
    label_of_commit: dict[str, str] = {}
    last: Snapshot | None = None
    for line in log.splitlines():
        commit, date = line.split()
        snap = snapshot(git, commit, cache)
        if snap is None:
            continue
        if releases and date <= releases[-1].label:
            date = releases[-1].label  # same day (or an out-of-order commit date): fold into that day
        if last is not None and _same(snap, last):
            if releases:
                label_of_commit[commit] = releases[-1].label
            order.append(commit)
            continue
        if releases and releases[-1].label == date:
            releases[-1].rev = commit
            if len(releases) > 1 and _same(snap, snapshots[releases[-2].label]):
                del snapshots[releases.pop().label]  # that day's changes were undone the same day
                label_of_commit[commit] = releases[-1].label
                order.append(commit)
                last = snap
                continue
        else:
            releases.append(Release(date, commit, date, NOTES.get(date)))
        snapshots[date] = snap
        label_of_commit[commit] = date
        order.append(commit)
        last = snap
    labels = [r.label for r in releases]
    aliases = {"current": labels[-1], "HEAD": labels[-1]}
    first_parent = git.run("rev-list", "--first-parent", "--reverse", f"{START}^..{pin}").split()
    position = {c: i for i, c in enumerate(first_parent)}
    for tag in TAGS:
        target = git.rev(tag)
        if target not in position:
            raise SystemExit(f"tag {tag} is not on the first-parent history")
        before = [c for c in order if position[c] <= position[target]]
        aliases[tag] = label_of_commit[before[-1]]
    records = fold(releases, snapshots)
    merged_prs(git, releases, START, pin, by_date=True)
    comment = [
        "NeoX: keys are NeoXArgs dataclass fields (megatron/neox_arguments/*.py); a YAML key may use '-' for '_'.",
        "A release is a day on which the argument set, a type or a default changed (label = date, rev = last commit",
        "that day, first-parent history of main since PR #249). group: the NeoXArgs* class that declares the field.",
    ]
    return document(
        "neox",
        REPO,
        "tools/gen_neox_history.py",
        comment,
        releases,
        aliases,
        records,
        RENAMES,
        CHANGES,
        extra={"pin": pin[:10]},
    )


def _same(a: Snapshot, b: Snapshot) -> bool:
    if a.keys() != b.keys():
        return False
    return all((a[k].type, repr(a[k].default), a[k].extra) == (b[k].type, repr(b[k].default), b[k].extra) for k in a)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=mirror_path("EleutherAI+gpt-neox"))
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 when the output file is out of date")
    args = parser.parse_args(argv)
    git = Git(args.repo)
    try:
        text = render(build(git))
    finally:
        git.close()
    return write_or_check(text, args.output, args.check, "gen_neox_history.py")


if __name__ == "__main__":
    sys.exit(main())
