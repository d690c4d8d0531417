"""VeOmni's config keys at one commit, read from its argument dataclasses with `ast`.

VeOmni's parser builds one `--a.b.c` option per leaf field of a root dataclass whose fields are
`model`, `data` and `train` (VeOmniArguments in veomni/arguments/arguments_types.py; before PR
#397 the task scripts' `Arguments` over veomni/utils/arguments.py) and reads a YAML file into it;
a field typed with another dataclass is a nested block. Trainers and task scripts subclass the
section classes to add fields (VLM, DiT, DPO): those keys are kept and say which files add them.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from history_common import NO_DEFAULT, AstCache, Git, KeyInfo, Snapshot, type_text, value_of

CORE_FILES = ("veomni/utils/arguments.py", "veomni/arguments/")
EXTRA_PREFIXES = ("veomni/trainer/", "tasks/")
SECTIONS = {"ModelArguments": "model", "DataArguments": "data", "TrainingArguments": "train"}


@dataclass
class Field:
    name: str
    annotation: str
    info: KeyInfo


@dataclass
class DataClass:
    name: str
    bases: list[str]
    file: str
    fields: list[Field] = field(default_factory=list)


def _is_dataclass(node: ast.ClassDef) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if ast.unparse(target).split(".")[-1] == "dataclass":
            return True
    return False


def _default(value: ast.expr | None) -> object:
    """A field's default: field(default=...), field(default_factory=list/dict/lambda), or plain."""
    if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] == "field":
        for kw in value.keywords:
            if kw.arg == "default":
                return value_of(kw.value)
            if kw.arg == "default_factory":
                factory = kw.value
                if isinstance(factory, ast.Name) and factory.id in ("list", "dict"):
                    return [] if factory.id == "list" else {}
                if isinstance(factory, ast.Lambda):
                    return value_of(factory.body)
                return {"expr": ast.unparse(factory) + "()"}
        return NO_DEFAULT
    return value_of(value)


def dataclasses_in(tree: ast.Module, file: str) -> list[DataClass]:
    found: list[DataClass] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef) or not _is_dataclass(node):
            continue
        cls = DataClass(node.name, [ast.unparse(b).split(".")[-1] for b in node.bases], file)
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                annotation = (type_text(stmt.annotation) or "").strip("'\"")
                cls.fields.append(Field(stmt.target.id, annotation, KeyInfo(annotation, _default(stmt.value))))
        found.append(cls)
    return found


def _nested(annotation: str, classes: dict[str, DataClass]) -> str | None:
    """The dataclass a field holds (X, "X", Optional[X]), if any."""
    text = annotation.strip("'\"")
    match = re.fullmatch(r"Optional\[['\"]?(\w+)['\"]?\]", text)
    name = match.group(1) if match else text
    return name if name in classes else None


def _fields(name: str, classes: dict[str, DataClass], seen: frozenset[str] = frozenset()) -> list[Field]:
    """Fields including inherited ones, in dataclass order (bases first; a redefinition replaces)."""
    if name in seen:
        return []
    cls = classes[name]
    out: list[Field] = []
    for base in cls.bases:
        if base in classes:
            out.extend(_fields(base, classes, seen | {name}))
    for f in cls.fields:
        out = [g for g in out if g.name != f.name]
        out.append(f)
    return out


def _walk(prefix: str, name: str, classes: dict[str, DataClass], snap: Snapshot, depth: int = 0) -> None:
    for f in _fields(name, classes):
        path = f"{prefix}.{f.name}" if prefix else f.name
        nested = _nested(f.annotation, classes) if depth < 6 else None
        if nested:
            _walk(path, nested, classes, snap, depth + 1)
        else:
            snap[path] = KeyInfo(f.info.type, f.info.default, {"group": _owner(name, f.name, classes)})


def _owner(name: str, field_name: str, classes: dict[str, DataClass]) -> str:
    """The class that declares a field (walking up the bases), for the record's group."""
    cls = classes[name]
    if any(f.name == field_name for f in cls.fields):
        return cls.name
    for base in cls.bases:
        if base in classes and any(f.name == field_name for f in _fields(base, classes)):
            return _owner(base, field_name, classes)
    return cls.name


def _section_of(cls: DataClass, classes: dict[str, DataClass], roots: dict[str, str]) -> str | None:
    todo, seen = list(cls.bases), set()
    while todo:
        base = todo.pop()
        if base in seen:
            continue
        seen.add(base)
        if base in roots:
            return roots[base]
        if base in classes:
            todo.extend(classes[base].bases)
    return None


def snapshot(git: Git, cache: AstCache, rev: str) -> Snapshot | None:
    tree = git.tree(rev)
    core: dict[str, DataClass] = {}
    extras: list[DataClass] = []
    for path, blob in sorted(tree.items()):
        if not path.endswith(".py"):
            continue
        is_core = path == CORE_FILES[0] or path.startswith(CORE_FILES[1])
        if not is_core and not path.startswith(EXTRA_PREFIXES):
            continue
        if "@dataclass" not in git.blob(blob):
            continue
        module = cache.parse(blob)
        if module is None:
            if is_core:
                return None
            continue
        for cls in dataclasses_in(module, path):
            if is_core:
                core[cls.name] = cls
            else:
                extras.append(cls)
    if not core:
        return None
    root = next((c for c in core.values() if {"model", "data", "train"} <= {f.name for f in c.fields}), None)
    if root is None:  # before PR #397 the task scripts declared the root over these three
        root = next(
            (
                c
                for c in extras
                if {"model", "data", "train"} <= {f.name for f in c.fields} and c.file == "tasks/train_torch.py"
            ),
            None,
        )
    snap: Snapshot = {}
    roots: dict[str, str] = {}
    if root is not None:
        for f in root.fields:
            nested = _nested(f.annotation, core)
            if nested:
                roots[nested] = f.name
                _walk(f.name, nested, core, snap)
    else:
        for name, section in SECTIONS.items():
            if name in core:
                roots[name] = section
                _walk(section, name, core, snap)
    if root is not None and root.name in core:
        roots[root.name] = ""
    _add_trainer_fields(core, extras, roots, snap)
    return snap


def _add_trainer_fields(
    core: dict[str, DataClass], extras: list[DataClass], roots: dict[str, str], snap: Snapshot
) -> None:
    """Fields that trainer / task subclasses add to a section (valid only with that trainer)."""
    everything = {**{c.name: c for c in extras}, **core}
    for cls in sorted(extras, key=lambda c: (c.file, c.name)):
        if cls.name in core:
            continue
        section = _section_of(cls, everything, roots)
        if section is None:
            continue
        for f in cls.fields:
            if section == "" and f.name in ("model", "data", "train"):
                continue  # the subclass swaps in its own section classes, handled as their subclasses
            path = f"{section}.{f.name}" if section else f.name
            nested = _nested(f.annotation, everything)
            paths = {}
            if nested:
                sub: Snapshot = {}
                _walk(path, nested, everything, sub)
                paths.update(sub)
            else:
                paths[path] = KeyInfo(f.info.type, f.info.default, {"group": cls.name})
            for key, info in paths.items():
                if key in snap and "trainers" not in snap[key].extra:
                    continue  # a core field the subclass re-declares
                trainers = sorted(set(snap[key].extra.get("trainers", [])) | {cls.file}) if key in snap else [cls.file]
                snap[key] = KeyInfo(info.type, info.default, {**info.extra, "trainers": trainers})
