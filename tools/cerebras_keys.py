"""Cerebras Model Zoo's config keys at one release, read from its source with `ast`.

Four sources, by release:
  * dict reads (every release, the legacy layout): params["model"].get("x", default),
    oparams = params["optimizer"]; oparams["learning_rate"], set_defaults() functions, ... found
    by tools/dict_reads.py starting from the `params` argument of the model, run and data modules
    (and `params` of a DataProcessor's constructor, which is the train_input section);
  * config dataclasses (2.2, 2.3: config_manager, models' config.py): the fields of every root
    config (a class with model and optimizer fields), legacy paths;
  * pydantic configs (2.4 on): ModelConfig subclasses with a `name` literal -> model.* (the same
    keys as trainer.init.model.*: the legacy converter copies one to the other, so one record holds
    both spellings), DataConfig subclasses with a `data_processor` literal -> train_input.* (=
    trainer.fit.train_dataloader.*);
  * the release's example configs (*/configs/*.yaml, trainer spellings folded the same way) and
    runconfig_schema.yaml: keys read by code outside the repository (cerebras.pytorch builds the
    optimizers and schedulers from 2.0 on) are known only from these;
  * the trainer (2.3 on): Trainer.__init__ arguments, the loop / checkpoint / logging / precision
    callbacks' arguments, every callback's arguments under trainer.init.callbacks.<Name>, and the
    legacy -> trainer key table TRAINER_PARAMS_TO_LEGACY of trainer/utils.py;
  * renames the trainer's validation makes before the configs see the keys (2.4 on:
    validate_trainer_params reads trainer.init.model.model_name as `name`): `d[new] = d.pop(old)`
    on a dict whose path the same function spells out, recorded as old with alias_of: new.
A key's "models" names the model families whose code reads it ("*" = code shared by all).
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Iterable

import yaml

from dict_reads import Function, Program, Read
from history_common import (
    NO_DEFAULT,
    JSON,
    AstCache,
    Git,
    KeyInfo,
    NotLiteral,
    Snapshot,
    literal,
    type_of_value,
    type_text,
    value_of,
)

ROOTS = ("src/cerebras/modelzoo/", "modelzoo/")
SKIP = (
    "data_processing/",
    "data_preparation/",
    "checkpoint_converters/",
    "/tests/",
    "tutorials/",
    "/layers/",
    "/metrics/",
    "/losses/",
    "user_scripts/",
    "/cli/",
    "/tools/",
    "/sparsity/",
    "/summaries/",
    "/compat/",
)
# Modules in which an argument called `params` is the whole config (elsewhere it may be a section)
ROOT_PARAM_FILES = {
    "model.py",
    "run.py",
    "utils.py",
    "data.py",
    "run_utils.py",
    "PyTorchBaseModel.py",
    "pytorch_base_runner.py",
    "pytorch_runner.py",
    "pytorch_cs_appliance.py",
    "run_cstorch_flow.py",
    "pytorch_base_cs_runner.py",
    "pytorch_cs_runner.py",
    "pytorch_dist_runner.py",
    "TFBaseModel.py",
    "cs_estimator.py",
    "model_utils.py",
    "input_utils.py",
    "half_dtype.py",
    "appliance_utils.py",
}
MARKERS = ("params", "Config", "dataclass")
TRAINER_SUBCONFIGS = {
    "loop": "TrainingLoop",
    "checkpoint": "Checkpoint",
    "logging": "Logging",
    "precision": "MixedPrecision",
}


def family(path: str) -> str:
    """The model family a module belongs to: its folder (tf/<name> for TensorFlow), '*' for shared code."""
    rel = path
    for root in ROOTS:
        if rel.startswith(root):
            rel = rel[len(root) :]
    for pattern in (
        r"transformers/(tf/)?(?:pytorch/)?(\w+)/",
        r"vision/(tf/)?(?:pytorch/)?(\w+)/",
        r"models/\w+/()(\w+)/",
        r"data/\w+/()(\w+)/",
    ):
        m = re.match(pattern, rel)
        if m:
            return (m.group(1) or "") + m.group(2)
    m = re.match(r"(\w+)/(pytorch|tf)/", rel)  # fc_mnist/pytorch, unet/tf
    if m and m.group(1) != "common":
        return ("tf/" if m.group(2) == "tf" else "") + m.group(1)
    return "tf/*" if rel.startswith("common/tf/") else "*"


def module_files(git: Git, rev: str) -> dict[str, str]:
    files: dict[str, str] = {}
    for path, blob in git.tree(rev).items():
        if not path.endswith(".py") or not path.startswith(ROOTS) or any(s in path for s in SKIP):
            continue
        if "/trainer/" in path or any(marker in git.blob(blob) for marker in MARKERS):
            files[path] = blob
    return files


# --------------------------------------------------------------------------
# Dict reads (legacy layout)
# --------------------------------------------------------------------------


def _seeds(fn: Function) -> dict[str, tuple[str, ...]]:
    name = fn.module.rsplit("/", 1)[-1]
    if "/trainer/" in fn.module:
        return {}  # the trainer's keys come from its signatures and its legacy table
    is_data = "/input/" in fn.module or "/data/" in fn.module or "DataProcessor" in name or "data_processor" in name
    if fn.cls and fn.qualname.endswith(".__init__") and (is_data or "DataProcessor" in fn.cls):
        return {"params": ("train_input",)}
    if name in ROOT_PARAM_FILES and not is_data:
        return {"params": ()}
    if name == "data.py":
        return {"params": ()}
    return {}


def dict_reads(program: Program) -> list[Read]:
    program.opaque = ("/trainer/",)
    program.seed(_seeds)
    return program.run()


# --------------------------------------------------------------------------
# Config classes
# --------------------------------------------------------------------------


def config_class_reads(program: Program) -> list[Read]:
    """Fields of the root config dataclasses (2.2-2.3) and of the pydantic configs (2.4 on)."""
    program.reads = []
    program._model_reads_seen = set()  # noqa: SLF001 - reuse the model walker
    for name, infos in sorted(program.classes.items()):
        for info in infos:
            if program.model_class(name) is not info:
                continue
            fields = {f for f, _, _ in program.model_fields(info)}
            if {"model", "optimizer"} <= fields and "/config_manager/" not in info.module:
                program.attach_model(info, ())  # a legacy root config of one model family
            elif "name" in fields and _literal_names(program, info, "name") and _is_a(program, info, "ModelConfig"):
                program.attach_model(info, ("model",))  # = trainer.init.model.* (see legacy_spelling)
            elif "data_processor" in fields and _literal_names(program, info, "data_processor"):
                program.attach_model(info, ("train_input",))  # = trainer.fit.train_dataloader.*
    return program.reads


def _is_a(program: Program, info, base: str, depth: int = 0) -> bool:  # type: ignore[no-untyped-def]
    if base in info.bases:
        return True
    if depth > 8:
        return False
    return any(_is_a(program, parent, base, depth + 1) for b in info.bases for parent in program.classes.get(b, []))


def _literal_names(program: Program, info, field_name: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The string values of a Literal[...] annotation of a field (a config's `name` choices)."""
    for name, annotation, _ in program.model_fields(info):
        if name != field_name:
            continue
        out: list[str] = []
        for node in ast.walk(annotation):
            if isinstance(node, ast.Subscript) and ast.unparse(node.value).split(".")[-1] == "Literal":
                elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                out += [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return out
    return []


def model_names(program: Program) -> dict[str, list[str]]:
    """Model family (folder) -> the names its config classes accept in trainer.init.model.name (2.4 on)."""
    out: dict[str, set[str]] = {}
    for name, infos in program.classes.items():
        for info in infos:
            if program.model_class(name) is not info or not _is_a(program, info, "ModelConfig"):
                continue
            names = _literal_names(program, info, "name")
            if names:
                out.setdefault(family(info.module), set()).update(names)
    return {k: sorted(v) for k, v in sorted(out.items())}


# --------------------------------------------------------------------------
# The trainer (2.3 on)
# --------------------------------------------------------------------------


def _init_args(program: Program, cls_name: str, depth: int = 0) -> list[tuple[str, ast.expr | None, JSON]]:
    """Constructor arguments (name, annotation, default) of a class, following **kwargs to the base."""
    for info in program.classes.get(cls_name, []):
        init = next((s for s in info.node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
        if init is None:
            if depth < 5 and info.bases:
                return _init_args(program, info.bases[0], depth + 1)
            return []
        consts = program.constants(info.module)
        args = init.args.args[1:]
        defaults: list[ast.expr | None] = [None] * (len(args) - len(init.args.defaults)) + list(init.args.defaults)
        out = [
            (a.arg, a.annotation, NO_DEFAULT if d is None else _arg_default(d, consts)) for a, d in zip(args, defaults)
        ]
        for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults):
            out.append((a.arg, a.annotation, NO_DEFAULT if d is None else _arg_default(d, consts)))
        if init.args.kwarg is not None and depth < 5 and info.bases:
            known = {name for name, _, _ in out}
            out += [x for x in _init_args(program, info.bases[0], depth + 1) if x[0] not in known]
        return out
    return []


def _arg_default(node: ast.expr, consts: dict[str, JSON]) -> JSON:
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return NO_DEFAULT
    return value_of(node, consts)


def _callback_classes(program: Program) -> list[str]:
    """Concrete callback classes of the trainer package (what trainer.init.callbacks may name)."""
    out = []
    for name, infos in program.classes.items():
        for info in infos:
            if "/trainer/" not in info.module or name.startswith("_"):
                continue
            if _is_a(program, info, "Callback") or _is_a(program, info, "CoreCallback"):
                out.append(name)
    return sorted(set(out))


def trainer_reads(program: Program) -> list[Read]:
    if not any("/trainer/trainer.py" in m for m in program.modules):
        return []
    reads: list[Read] = []
    module = next(m for m in program.modules if m.endswith("/trainer/trainer.py"))

    def add(path: tuple[str, ...], annotation: ast.expr | None, default: JSON, **extra: JSON) -> None:
        reads.append(Read(path, default, module, type_text(annotation) or type_of_value(default), dict(extra)))

    for name, annotation, default in _init_args(program, "Trainer"):
        add(("trainer", "init", name), annotation, default)
    for section, cls_name in TRAINER_SUBCONFIGS.items():
        for name, annotation, default in _init_args(program, cls_name):
            add(("trainer", "init", section, name), annotation, default)
    for cls_name in _callback_classes(program):
        for name, annotation, default in _init_args(program, cls_name):
            add(("trainer", "init", "callbacks", cls_name, name), annotation, default)
    for method in ("fit", "validate", "validate_all"):
        fn = program.functions.get(f"{module}:Trainer.{method}")
        if fn is None:
            continue
        args = fn.node.args.args[1:]
        for a in args:
            add(("trainer", method, a.arg), a.annotation, NO_DEFAULT)
    return reads


def trainer_renames(program: Program) -> list[Read]:
    """`model_dict["name"] = model_dict.pop("model_name")` in the trainer package: the old key is read too.

    Only dicts whose path the same function assigns from constant subscripts
    (`model_dict = d["trainer"]["init"]["model"]`) are followed; the path is given its legacy spelling."""
    reads: list[Read] = []
    for fn in program.functions.values():
        if "/trainer/" not in fn.module:
            continue
        paths: dict[str, tuple[str, ...]] = {}
        for node in ast.walk(fn.node):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                continue
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name) and (chain := _constant_chain(value)) is not None:
                paths[target.id] = chain
            elif (renamed := _pop_rename(target, value)) is not None and renamed[0] in paths:
                holder, new, old = renamed
                path = legacy_spelling(paths[holder] + (old,))
                reads.append(Read(path, NO_DEFAULT, fn.module, "str", {"alias_of": new}, fn.qualname))
    return reads


def _constant_chain(node: ast.expr) -> tuple[str, ...] | None:
    """d["trainer"]["init"]["model"] -> ("trainer", "init", "model"): constant keys on any root name."""
    keys: list[str] = []
    while isinstance(node, ast.Subscript):
        if not (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            return None
        keys.append(node.slice.value)
        node = node.value
    return tuple(reversed(keys)) if keys and isinstance(node, ast.Name) else None


def _pop_rename(target: ast.expr, value: ast.expr) -> tuple[str, str, str] | None:
    """`x[new] = x.pop(old)` -> (x, new, old)."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
        return None
    if not (isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)):
        return None
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "pop"):
        return None
    holder = value.func.value
    if not (isinstance(holder, ast.Name) and holder.id == target.value.id and len(value.args) == 1):
        return None
    old = value.args[0]
    if not (isinstance(old, ast.Constant) and isinstance(old.value, str)):
        return None
    return holder.id, target.slice.value, old.value


def legacy_table(program: Program) -> dict[str, str]:
    """trainer path -> legacy path, from TRAINER_PARAMS_TO_LEGACY (2.3 on); globs keep their '*'."""
    for module in program.modules:
        if module.endswith("/trainer/utils.py"):
            table = program.constants(module).get("TRAINER_PARAMS_TO_LEGACY")
            if isinstance(table, dict):
                out: dict[str, str] = {}
                _flatten(table, ("trainer",), out)
                return out
    return {}


def _flatten(node: JSON, prefix: tuple[str, ...], out: dict[str, str]) -> None:
    if isinstance(node, str):
        out[".".join(prefix)] = node
    elif isinstance(node, dict):
        for k, v in node.items():
            _flatten(v, prefix + (k,), out)
    elif isinstance(node, list):
        for item in node:  # callbacks: [{Name: {...}}, ...]
            _flatten(item, prefix, out)


# --------------------------------------------------------------------------
# The release's own example configs and runconfig schema
# --------------------------------------------------------------------------

_YAML: dict[str, JSON] = {}
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# trainer-layout sections that hold the same keys as a legacy section (TRAINER_PARAMS_TO_LEGACY's globs)
SAME_AS_LEGACY = (
    (("trainer", "init", "model"), ("model",)),
    (("trainer", "fit", "train_dataloader"), ("train_input",)),
    (("trainer", "fit", "val_dataloader"), ("eval_input",)),
    (("trainer", "fit", "val_dataloader", "*"), ("eval_input",)),
    (("trainer", "validate", "val_dataloader"), ("eval_input",)),
    (("trainer", "validate_all", "val_dataloaders"), ("eval_input",)),
    (("trainer", "validate_all", "val_dataloaders", "*"), ("eval_input",)),
)


def legacy_spelling(path: tuple[str, ...]) -> tuple[str, ...]:
    """trainer.init.model.x -> model.x (one record for both spellings of a model or data key)."""
    for trainer, legacy in sorted(SAME_AS_LEGACY, key=lambda pair: -len(pair[0])):
        if path[: len(trainer)] == trainer and len(path) > len(trainer):
            return legacy + path[len(trainer) :]
    return path


def config_reads(git: Git, rev: str) -> list[Read]:
    """Every key the release's own configs (*/configs/*.yaml) use, and the runconfig schema's keys."""
    reads: list[Read] = []
    for path, blob in sorted(git.tree(rev).items()):
        if not path.startswith(ROOTS) or any(s in path for s in ("data_processing/", "data_preparation/")):
            continue
        if path.endswith("runconfig_schema.yaml"):
            reads += _schema_reads(path, _load(git, blob))
        elif path.endswith((".yaml", ".yml")) and "/configs/" in path:
            doc = _load(git, blob)
            if isinstance(doc, dict):
                roots = doc["trainer"] if isinstance(doc.get("trainer"), list) else [doc]
                for root in roots:
                    if isinstance(root, dict):
                        _walk_config(root, (), path, reads)
    return reads


def _load(git: Git, blob: str) -> JSON:
    if blob not in _YAML:
        try:
            _YAML[blob] = yaml.load(git.blob(blob), Loader=_Loader)  # noqa: S506 - a safe loader
        except yaml.YAMLError:
            _YAML[blob] = None
    return _YAML[blob]


def _walk_config(node: JSON, path: tuple[str, ...], where: str, reads: list[Read]) -> None:
    if path:
        kind = type_of_value(node) if not isinstance(node, (dict, list)) else None
        reads.append(Read(legacy_spelling(path), NO_DEFAULT, where, kind, {"config": True}, "<config>"))
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(key, str) and key:
                _walk_config(value, path + (key,), where, reads)
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, dict) and len(item) == 1 and str(next(iter(item)))[:1].isupper():
                _walk_config(item, path, where, reads)  # [{ClassName: {...}}]: callbacks, schedulers, optimizers
            elif isinstance(item, dict):
                _walk_config(item, path + ("*",), where, reads)


JSON_TYPES = {
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "string": "str",
    "object": "dict",
    "array": "list",
    "null": "None",
}


def _schema_reads(where: str, schema: JSON) -> list[Read]:
    reads: list[Read] = []
    props = schema.get("properties") if isinstance(schema, dict) else None
    for key, prop in sorted((props or {}).items()):
        if not isinstance(prop, dict):
            continue
        kinds = prop.get("type")
        names = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
        kind = "|".join(JSON_TYPES.get(k, str(k)) for k in names) or None
        default = prop["default"] if "default" in prop else NO_DEFAULT
        reads.append(Read(("runconfig", key), default, where, kind, {"schema": True}, "<schema>"))
    return reads


# --------------------------------------------------------------------------
# One snapshot
# --------------------------------------------------------------------------


def snapshot(git: Git, cache: AstCache, rev: str, names_out: dict[str, set[str]] | None = None) -> Snapshot:
    """Keys at one release; names_out collects family -> model names (trainer.init.model.name)."""
    files = module_files(git, rev)
    modules = {p: t for p, t in ((p, cache.parse(b)) for p, b in sorted(files.items())) if t is not None}
    program = Program(modules, package_roots=("src/",))
    reads = dict_reads(program)
    names = model_names(program)
    if names_out is not None:
        for fam, accepted in names.items():
            names_out.setdefault(fam, set()).update(accepted)
    class_reads = config_class_reads(program)
    reads += trainer_reads(program)
    reads += trainer_renames(program)
    table = legacy_table(program)
    for trainer_path, legacy_path in table.items():
        if not legacy_path.endswith("*"):
            reads.append(
                Read(tuple(legacy_path.split(".")), NO_DEFAULT, "trainer/utils.py", None, {"trainer": trainer_path})
            )
    reads += config_reads(git, rev)
    snap = merge(reads, class_reads, names)
    for trainer_path, legacy_path in table.items():
        if trainer_path in snap and not legacy_path.endswith("*"):
            snap[trainer_path].extra["legacy"] = legacy_path
    return snap


PRIMARY = ("gpt2", "llama", "*")  # whose default a record states first (the GPT code most configs run)


def merge(reads: list[Read], class_reads: list[Read], names: dict[str, list[str]]) -> Snapshot:
    """One KeyInfo per key.

    Each model family's default: its set_defaults() value if it has one (those overwrite the params
    before anything reads them), else its typed config field, else the majority of its reads. The
    record's default is the GPT-2 family's (gpt2 folder: GPT-2/3, LLaMA, Falcon, ... share it), else
    LLaMA's, else the shared code's; families that differ from it are listed in defaults_by_model."""
    grouped: dict[str, list[Read]] = {}
    for read in reads + class_reads:
        if read.path and all(p for p in read.path):
            grouped.setdefault(".".join(read.path), []).append(read)
    snap: Snapshot = {}
    for key in sorted(grouped):
        group = grouped[key]
        per_family: dict[str, list[Read]] = {}
        for r in group:
            for model in _models_of(r, names):
                per_family.setdefault(model, []).append(r)
        code = {fam: [r for r in rs if "config" not in r.extra] for fam, rs in per_family.items()}
        values = {fam: _family_choice(rs) for fam, rs in code.items() if rs}
        if not values:  # only the example configs use the key: no default is known from the source
            values = {fam: _family_choice(rs) for fam, rs in per_family.items()}
        primary = next((f for f in PRIMARY if f in values), None)
        if primary is None:
            counts = Counter(_canon(v.default) for v in values.values())
            best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
            primary = sorted(f for f, v in values.items() if _canon(v.default) == best)[0]
        chosen = values[primary]
        kind = chosen.type or next((r.type for r in group if r.type is not None), None) or type_of_value(chosen.default)
        extra: dict[str, JSON] = {"models": sorted(per_family)}
        if all("config" in r.extra for r in group):
            extra["configs_only"] = True
        by_model = {
            f: v.default
            for f, v in sorted(values.items())
            if v.default is not NO_DEFAULT and _canon(v.default) != _canon(chosen.default)
        }
        if by_model:
            extra["defaults_by_model"] = by_model
        for r in group:
            for fact in ("alias", "alias_of", "trainer", "deprecated"):
                if fact in r.extra:
                    extra[fact] = r.extra[fact]
        snap[key] = KeyInfo(kind, chosen.default, extra)
    return snap


def _family_choice(reads: list[Read]) -> Read:
    """set_defaults() > a typed field's default > a read's default > no default (required)."""
    with_default = [r for r in reads if r.default is not NO_DEFAULT]
    forced = [r for r in with_default if r.function.endswith("set_defaults")]
    typed = [r for r in with_default if r.type is not None and "schema" not in r.extra]
    pool = forced or typed or with_default or reads
    counts = Counter(_canon(r.default) for r in pool)
    best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
    return next(r for r in pool if _canon(r.default) == best)


def _models_of(read: Read, names: dict[str, list[str]]) -> list[str]:
    """The family of a read: the folder of the code (or config class) that reads it."""
    return [family(read.where)]


def _canon(value: JSON) -> str:
    return "<none>" if value is NO_DEFAULT else json.dumps(value, sort_keys=True)


def literal_or_none(node: ast.expr) -> JSON:
    try:
        return literal(node)
    except NotLiteral:
        return None


def iter_paths(snap: Snapshot, prefix: str) -> Iterable[str]:
    return (k for k in snap if k.startswith(prefix))
