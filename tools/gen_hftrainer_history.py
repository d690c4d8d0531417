#!/usr/bin/env python3
"""Generate schemas/history/hftrainer.json: every field of transformers' `TrainingArguments` at each
release read, plus the keys of the tools whose train files are TrainingArguments with keys of their own
(TRL's config classes and script arguments, LLaMA-Factory's argument dataclasses, axolotl's config model,
open-r1's recipe arguments, alignment-handbook's argument classes).

TrainingArguments is a dataclass (transformers/training_args.py); HfArgumentParser turns each field into
one option and `parse_json_file` / `parse_yaml_file` take them as keys. The sources are the packages as
PyPI ships them (a wheel holds the source), unpacked one per folder:

    SOURCES/t<version>/transformers/training_args.py     (one folder per transformers release)
    SOURCES/trl/trl/trainer/*_config.py, scripts/{utils,grpo}.py   (TRL 1.16.0; SOURCES/trl-0.16.1/trl: 0.16.1)
    SOURCES/open-r1/configs.py       (huggingface/open-r1 src/open_r1/configs.py at DIALECTS["open-r1"])
    SOURCES/llamafactory/llamafactory/hparams/*.py
    SOURCES/axolotl/axolotl/utils/schemas/*.py
    SOURCES/alignment-handbook-<V>/configs.py   (huggingface/alignment-handbook src/alignment/configs.py at each V
                                                 of DIALECTS["alignment-handbook"]: `git show v0.3.0:...`)

(`pip download --no-deps transformers==V` and unzip). Nothing is imported or run: the source is read with
`ast`. The releases read are RELEASES; the dialects' versions are DIALECTS.

Usage:
    python tools/gen_hftrainer_history.py --sources DIR [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

from history_common import (
    HISTORY_DIR,
    JSON,
    NO_DEFAULT,
    Change,
    KeyInfo,
    Release,
    Rename,
    Snapshot,
    document,
    fold,
    render,
    type_of_value,
    type_text,
    value_of,
    write_or_check,
)

REPO = "huggingface/transformers"
OUTPUT = HISTORY_DIR / "hftrainer.json"
# (label, date of the PyPI upload): releases where defaults or fields the translation reads changed,
# and the newest of each line fine-tuning repositories pin
RELEASES = (
    ("4.36.2", "2023-12-18"),
    ("4.41.2", "2024-05-30"),
    ("4.45.2", "2024-10-07"),
    ("4.46.3", "2024-11-18"),
    ("4.51.3", "2025-04-14"),
    ("4.57.1", "2025-10-14"),
    ("5.0.0", "2026-01-26"),
    ("5.10.0", "2026-06-04"),
    ("5.23.0", "2026-11-10"),
)
ALIASES = {"current": "5.23.0", "4": "4.57.1", "5": "5.23.0"}
DIALECTS = {
    "trl": "0.16.1, 1.16.0",
    "llamafactory": "0.9.5",
    "axolotl": "0.19.0",
    "open-r1": "1416fa0",
    "alignment-handbook": "0.2.0, 0.3.0, 925acdf",
}
# alignment-handbook: the tags v0.2.0 (DataArguments' dataset_mixer, SFT/DPOConfig on TrainingArguments), v0.3.0
# (on TRL's configs) and main at 925acdf (2025-07-29: ScriptArguments' dataset_mixture, ORPOConfig)
HANDBOOK_FOLDERS = ("alignment-handbook-0.2.0", "alignment-handbook-0.3.0", "alignment-handbook-925acdf")
HANDBOOK_NESTED = ("DatasetConfig", "DatasetMixtureConfig")  # the items of dataset_mixture, not keys of the file
TRL_FOLDERS = {"0.16.1": "trl-0.16.1", "1.16.0": "trl"}  # (old field names: vllm_device, torch_dtype, ...)
TA = "transformers/training_args.py"
RENAMES = (
    Rename(
        "evaluation_strategy",
        "eval_strategy",
        "4.41.2",
        "huggingface/transformers@v4.41.0:" + TA,
        "evaluation_strategy stays accepted (deprecated) until 4.46",
        overlap=True,
    ),
    Rename(
        "gradient_checkpointing",
        "activation_checkpointing",
        "5.23.0",
        REPO + "@v5.23.0:" + TA,
        "gradient_checkpointing stays accepted as a deprecated alias (read only when activation_checkpointing is not "
        "set)",
        overlap=True,
    ),
)
CHANGES = (
    Change(
        "save_safetensors",
        "4.36.2",
        "True by default since 4.35: checkpoints are .safetensors",
        REPO + "@v4.35.0:" + TA,
    ),
    Change(
        "warmup_steps",
        "5.0.0",
        "a float below 1 is a ratio of the total steps (warmup_ratio, deprecated, is copied into it; gone after 5.10)",
        REPO + "@v5.0.0:" + TA,
    ),
    Change("optim", "5.0.0", "the default is adamw_torch_fused (adamw_torch before)", REPO + "@v5.0.0:" + TA),
)


def dataclass_fields(tree: ast.Module, class_names: tuple[str, ...]) -> dict[str, KeyInfo]:
    """The annotated fields (name -> type, default) of the named classes, in order (later wins)."""
    out: dict[str, KeyInfo] = {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.ClassDef) and stmt.name in class_names):
            continue
        for item in stmt.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            name = item.target.id
            if name.startswith("_") or "ClassVar" in ast.unparse(item.annotation):
                continue
            out[name] = KeyInfo(type_text(item.annotation), _default(item.value))
    return out


def _default(node: ast.expr | None) -> JSON:
    """A field's default: field(default=X) / field(default_factory=...) / a plain value."""
    if node is None:
        return NO_DEFAULT
    if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in ("field", "Field"):
        for kw in node.keywords:
            if kw.arg == "default":
                return value_of(kw.value)
            if kw.arg == "default_factory":
                return {"expr": ast.unparse(kw.value) + "()"}
        if node.args:  # pydantic Field(default, ...)
            return value_of(node.args[0])
        return NO_DEFAULT
    return value_of(node)


def snapshot(path: Path) -> Snapshot:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    fields = dataclass_fields(tree, ("TrainingArguments",))
    if not fields:
        raise SystemExit(f"{path}: no TrainingArguments fields found")
    for info in fields.values():
        if info.type is None:
            info.type = type_of_value(info.default)
    return fields


def aliases(cls: ast.ClassDef) -> set[str]:
    """The names a pydantic model also takes a field by (`Field(alias="model_type")`: axolotl's remapped keys)."""
    found: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "Field":
            found |= {
                kw.value.value
                for kw in node.keywords
                if kw.arg == "alias" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)
            }
    return found


def module_classes(path: Path) -> dict[str, list[str]]:
    """The fields of every dataclass a module defines (its own fields, not those it inherits)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {
        stmt.name: sorted(dataclass_fields(tree, (stmt.name,))) for stmt in tree.body if isinstance(stmt, ast.ClassDef)
    }
    return {name: names for name, names in found.items() if names}


def dialect_keys(sources: Path) -> dict[str, JSON]:
    """Each dialect's own keys (not TrainingArguments fields), by the class that declares them."""
    out: dict[str, JSON] = {}
    trl_classes: dict[str, set[str]] = {}
    for folder in TRL_FOLDERS.values():  # every config class (trainer/*_config.py) and the scripts' arguments
        root = sources / folder / "trl"
        for path in [
            *sorted((root / "trainer").glob("*_config.py")),
            root / "scripts" / "utils.py",
            root / "scripts" / "grpo.py",
        ]:
            for name, names in module_classes(path).items():
                trl_classes.setdefault(name, set()).update(names)
    out["trl"] = {"version": DIALECTS["trl"], "classes": {k: sorted(v) for k, v in sorted(trl_classes.items())}}
    out["open-r1"] = {"version": DIALECTS["open-r1"], "classes": module_classes(sources / "open-r1" / "configs.py")}
    lf = sources / "llamafactory" / "llamafactory" / "hparams"
    classes: dict[str, list[str]] = {}
    for module in ("model_args", "data_args", "finetuning_args", "generating_args", "evaluation_args", "training_args"):
        tree = ast.parse((lf / f"{module}.py").read_text())
        for stmt in tree.body:
            if isinstance(stmt, ast.ClassDef):
                names = sorted(dataclass_fields(tree, (stmt.name,)))
                if names:
                    classes[stmt.name] = names
    out["llamafactory"] = {"version": DIALECTS["llamafactory"], "classes": classes}
    ax = sources / "axolotl" / "axolotl" / "utils" / "schemas"
    classes = {}
    for path in sorted(ax.glob("*.py")):
        tree = ast.parse(path.read_text())
        for stmt in tree.body:
            if isinstance(stmt, ast.ClassDef):
                names = sorted(set(dataclass_fields(tree, (stmt.name,))) | aliases(stmt))
                if names:
                    classes[f"{path.stem}.{stmt.name}"] = names
    out["axolotl"] = {"version": DIALECTS["axolotl"], "classes": classes}
    handbook: dict[str, set[str]] = {}
    for folder in HANDBOOK_FOLDERS:
        for name, names in module_classes(sources / folder / "configs.py").items():
            if name not in HANDBOOK_NESTED:
                handbook.setdefault(name, set()).update(names)
    out["alignment-handbook"] = {
        "version": DIALECTS["alignment-handbook"],
        "classes": {k: sorted(v) for k, v in sorted(handbook.items())},
    }
    return out


def build(sources: Path) -> str:
    releases = [Release(label, label, date) for label, date in RELEASES]
    snaps = {label: snapshot(sources / f"t{label}" / TA) for label, _ in RELEASES}
    keys = fold(releases, snaps)
    comment = [
        "hftrainer: keys are the fields of transformers' TrainingArguments dataclass (training_args.py) at each",
        "PyPI release listed (rev: the release's version; read from the wheel's source, which is the tag's).",
        "dialects: the keys of tools whose train files are TrainingArguments plus their own, by the class that",
        "declares them (TRL's config classes subclass TrainingArguments; LLaMA-Factory's and axolotl's are",
        "their own argument classes; alignment-handbook's subclass TRL's or TrainingArguments), at the version named.",
    ]
    doc = document(
        "hftrainer",
        REPO,
        "tools/gen_hftrainer_history.py",
        comment,
        releases,
        ALIASES,
        keys,
        RENAMES,
        CHANGES,
        {"dialects": dialect_keys(sources)},
    )
    return render(doc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=Path, required=True, help="folder of unpacked packages (see the module doc)")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 when the output is not what would be written")
    args = parser.parse_args(argv)
    return write_or_check(build(args.sources), args.output, args.check, "gen_hftrainer_history.py")


if __name__ == "__main__":
    sys.exit(main())
