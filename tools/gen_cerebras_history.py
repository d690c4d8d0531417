#!/usr/bin/env python3
"""Generate schemas/history/cerebras.json: every Cerebras Model Zoo config key at every release.

One release per tag of Cerebras/modelzoo (R_1.6.0 ... Release_2.10.0), labelled with its full
version ("1.9.1"); the minor version ("1.9") is an alias of its newest patch release in the
mirror. Both layouts are covered: legacy keys (model.*, optimizer.*, runconfig.*, train_input.*,
eval_input.*, ...) at every release (from 2.3 on through the legacy converter and the model and
data configs it feeds), trainer keys (trainer.init.*, trainer.fit.*) from 2.3 on. What is read
and how defaults are chosen: tools/cerebras_keys.py.

Usage:
    python tools/gen_cerebras_history.py [--repo GIT_DIR] [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from cerebras_keys import snapshot
from history_common import (
    HISTORY_DIR,
    AstCache,
    Change,
    Git,
    Release,
    Rename,
    Snapshot,
    document,
    fold,
    mirror_path,
    render,
    write_or_check,
)

REPO = "Cerebras/modelzoo"
LAST_TAG = "Release_2.10.0"  # newest tag read; move it and rerun to take in newer releases
OUTPUT = HISTORY_DIR / "cerebras.json"

NOTES = {
    "1.6.0": "PyTorch and TensorFlow models (tf/ trees); optimizer weight_decay_rate, beta1/beta2",
    "1.7.0": "gpt2/gptj set_defaults(): use_bfloat16 defaults to true",
    "1.8.0": "last release with TensorFlow models",
    "2.0.2": "cerebras.pytorch builds optimizers and schedulers: optimizer weight_decay, betas; schedulers total_iters",
    "2.1.0": "fp16_type replaces use_bfloat16",
    "2.2.0": "src/cerebras/modelzoo layout; config dataclasses (config_manager)",
    "2.3.0": "trainer layout (trainer.init / trainer.fit) next to the legacy layout (converted on load)",
    "2.4.0": "pydantic configs: models validate trainer.init.model by name",
}

SRC = "Cerebras/modelzoo@{tag}:{path}"
CONVERTER_21 = SRC.format(
    tag="Release_2.1.0", path="modelzoo/common/pytorch/model_utils/checkpoint_converters/base_converter.py"
)
_OLD_NAMES = (
    "cerebras.pytorch 2.0 still accepted the old name, 2.1 refuses it; Cerebras' 2.0->2.1 config converter renames it"
)
RENAMES = (
    Rename(
        "optimizer.weight_decay_rate",
        "optimizer.weight_decay",
        "2.0.2",
        CONVERTER_21,
        f"same coefficient; {_OLD_NAMES}",
    ),
    Rename("optimizer.beta1", "optimizer.betas", "2.0.2", CONVERTER_21, f"betas: [beta1, beta2]; {_OLD_NAMES}"),
    Rename("optimizer.beta2", "optimizer.betas", "2.0.2", CONVERTER_21, f"betas: [beta1, beta2]; {_OLD_NAMES}"),
    Rename(
        "optimizer.learning_rate.*.steps",
        "optimizer.learning_rate.*.total_iters",
        "2.0.2",
        CONVERTER_21,
        f"1.x read steps or decay_steps (either sets the other); the converter maps total_iters: [steps, decay_steps]; "
        f"{_OLD_NAMES}",
    ),
    Rename(
        "optimizer.learning_rate.*.decay_steps",
        "optimizer.learning_rate.*.total_iters",
        "2.0.2",
        CONVERTER_21,
        f"see steps; {_OLD_NAMES}",
    ),
    Rename(
        "model.use_rms_norm",
        "model.norm_type",
        "2.0.2",
        SRC.format(tag="Release_1.9.1", path="modelzoo/transformers/pytorch/gpt2/model.py"),
        "use_rms_norm: true = norm_type: rmsnorm (else layernorm)",
    ),
    Rename(
        "runconfig.is_pretrained_checkpoint",
        "runconfig.load_checkpoint_states",
        "2.0.2",
        CONVERTER_21,
        "is_pretrained_checkpoint: true = load_checkpoint_states: [model, dataloader] (the converter's mapping)",
    ),
    Rename(
        "runconfig.keep_checkpoint_max",
        "runconfig.max_checkpoints",
        "1.9.1",
        CONVERTER_21,
        "the converter moves keep_checkpoint_max to max_checkpoints (2.0.x still reads the old key)",
        overlap=True,
    ),
    Rename(
        "model.precision_opt_level",
        "runconfig.precision_opt_level",
        "1.9.1",
        CONVERTER_21,
        "the converter moves model.precision_opt_level to runconfig (model.precision_opt_level is still looked for)",
        overlap=True,
    ),
    Rename(
        "model.use_bfloat16",
        "model.fp16_type",
        "2.1.0",
        CONVERTER_21,
        "use_bfloat16: true -> fp16_type: bfloat16 (false -> float16); cbfloat16 is new. The old key is still looked "
        "for, to refuse it (see changes)",
        overlap=True,
    ),
)
CHANGES = (
    Change(
        "model.use_bfloat16",
        "1.7.0",
        "the gpt2 and gptj families' set_defaults() default it to true (other families and shared code: false): "
        "a 1.7-2.0.x GPT file without the key trains in bf16 (1.9 pipeline mode forces it false)",
        SRC.format(tag="R_1.7.1", path="modelzoo/transformers/pytorch/gpt2/utils.py"),
    ),
    Change(
        "model.use_bfloat16",
        "2.1.0",
        "refused: set_half_dtype_from_params raises KeyError when the key is present (use fp16_type)",
        SRC.format(tag="Release_2.1.0", path="modelzoo/common/pytorch/half_dtype.py"),
    ),
)


def tags(git: Git) -> list[str]:
    def version(tag: str) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", tag))

    found = [t for t in git.run("tag", "--list").split() if re.fullmatch(r"(R|Release)_\d+\.\d+\.\d+", t)]
    return sorted((t for t in found if version(t) <= version(LAST_TAG)), key=version)


def build(git: Git) -> dict:
    cache = AstCache(git)
    releases: list[Release] = []
    snapshots: dict[str, Snapshot] = {}
    names: dict[str, set[str]] = {}
    for tag in tags(git):
        label = tag.split("_", 1)[1]
        releases.append(Release(label, git.rev(tag), git.date(tag), NOTES.get(label)))
        snapshots[label] = snapshot(git, cache, tag, names)
    aliases: dict[str, str] = {"current": releases[-1].label}
    for release in releases:  # minor version -> newest patch release (releases are in order)
        aliases[".".join(release.label.split(".")[:2])] = release.label
    records = fold(releases, snapshots)
    model_sets = share_model_lists(records)
    comment = [
        "Cerebras: legacy keys (model., optimizer., runconfig., train_input., eval_input., sparsity., ...) and, from 2.3,",
        "trainer keys (trainer.init., trainer.fit.). '*' in a path: any element of a list (optimizer.learning_rate.*.scheduler",
        "is a key of each schedule of a list; the same keys also appear without '*' for a single schedule).",
        "models: the model families whose code reads the key: the model's folder (tf/<name> for TensorFlow, '*' for shared",
        "code); model_names: family -> the names trainer.init.model.name accepts (2.4 on). default: as the gpt2 folder's code sees it (GPT-2/3,",
        "LLaMA, Falcon, ... share it; its set_defaults() wins), else LLaMA's, else the shared code's; defaults_by_model: families",
        "whose default differs. trainer.fit.train_dataloader.* / train_input.* also hold for val_dataloader / eval_input.",
        "legacy (on a trainer key): the legacy key the converter maps to it; trainer (on a legacy key): the reverse.",
        "Facts other than in/type/default are those of the newest release that has the key. A models value that is a",
        "string names a list in model_sets (long lists are shared). configs_only: no code in the repository reads the key,",
        "the release's own example configs use it (cerebras.pytorch reads it: optimizers, schedulers from 2.0 on).",
    ]
    return document(
        "cerebras",
        REPO,
        "tools/gen_cerebras_history.py",
        comment,
        releases,
        aliases,
        records,
        RENAMES,
        CHANGES,
        extra={"model_sets": model_sets, "model_names": {k: sorted(v) for k, v in sorted(names.items())}},
    )


def share_model_lists(records: dict) -> dict[str, list[str]]:
    """Replace each models list longer than three names by the id of a shared list (M1, M2, ...)."""
    ids: dict[str, str] = {}
    sets: dict[str, list[str]] = {}
    for key in sorted(records):
        models = records[key].get("models")
        if isinstance(models, list) and len(models) > 3:
            text = ",".join(models)
            if text not in ids:
                ids[text] = f"M{len(ids) + 1}"
                sets[ids[text]] = models
            records[key]["models"] = ids[text]
    return sets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=mirror_path("Cerebras+modelzoo"))
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 when the output file is out of date")
    args = parser.parse_args(argv)
    git = Git(args.repo)
    try:
        text = render(build(git))
    finally:
        git.close()
    return write_or_check(text, args.output, args.check, "gen_cerebras_history.py")


if __name__ == "__main__":
    sys.exit(main())
