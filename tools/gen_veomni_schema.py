#!/usr/bin/env python3
"""Generate `schemas/veomni.schema.json`: JSON Schema for VeOmni YAML configs, both key layouts.

VeOmni's parser (`veomni/arguments/parser.py::parse_args`) reads only the fields of its argument
dataclasses and silently ignores every other key, so the schema is built from those dataclasses as
tools/extract_veomni_facts.py read them with `ast` (nothing imported or executed) at the two commits
whose configs the corpus holds, committed in tools/facts/veomni-dataclasses.json:

    nested  d9774494 (HEAD, after PR #538: train.optimizer.lr, train.checkpoint.output_dir, ...)
    flat    ac3b9f01 (before #538: train.lr, train.output_dir, train.data_parallel_mode, ...)

Files read at each commit: `veomni/arguments/arguments_types.py` (VeOmniArguments with model / data
/ train) plus every dataclass in `veomni/trainer/*.py` and `tasks/**/*.py` that extends one of the
argument classes (VLM, DiT, DPO trainers and the task scripts): their extra fields are valid only
with that trainer, which `x-trainers` names. The seed documentation (veomni-arguments.md, the flat
layout; its defaults in tools/facts/veomni-arguments-defaults.json) adds `x-doc-default` where its
default disagrees with the code (the code wins: it is what runs). This tool reads nothing outside
the repository.

Annotations (never used for validation):
    x-layouts       the layouts whose dataclasses have the key: ["flat"], ["nested"] or both
    x-group         the dataclass that declares the field (mapping tables give reasons per group)
    x-trainers      for fields of trainer/task subclasses: the files that declare them
    x-choices       a Literal's values: argparse enforces them on the command line only
    x-flat-default  the flat-layout default where it differs from the nested one
    x-flat-choices  the flat layout's Literal values where they differ from the nested one's
    x-flat-scalar   a nested block that was one scalar key in the flat layout (train.optimizer: adamw)
    x-doc-default   the seed docs' default where it differs from the code
A dataclass-typed field is a closed object (VeOmni ignores unknown keys: neoconv reports them);
Dict-typed fields are open. The top-level `hf` block is not VeOmni's: it is neoconv's view of the
HuggingFace config.json that `model.config_path` points at (see mappings/veomni.yaml).

Usage:
    python tools/gen_veomni_schema.py [--facts DIR] [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from facts_file import FACTS_DIR, load  # tools/ is on sys.path when run as a script
from schema_output import render, write_or_check

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / "schemas" / "veomni.schema.json"
CLASSES_FACTS = "veomni-dataclasses.json"  # the argument dataclasses at both commits
DOC_FACTS = "veomni-arguments-defaults.json"  # the defaults of the seed docs (veomni-arguments.md)

COMMITS = {
    "nested": "d9774494f5d8042321386c65c9406e732a271501",
    "flat": "ac3b9f01c3cabeea5e32764cf704cd4570ffa438",
}
LAYOUTS = ("nested", "flat")
SECTIONS = {"ModelArguments": "model", "DataArguments": "data", "TrainingArguments": "train"}
ROOT_CLASS = "VeOmniArguments"
MISSING = object()

JSON = Any


@dataclass
class Field:
    name: str
    annotation: str
    default: Any = MISSING  # MISSING: required (no default)
    help: str = ""


@dataclass
class DataClass:
    name: str
    bases: list[str]
    fields: list[Field] = field(default_factory=list)
    file: str = ""


# ------------------------------------------------------------------------------------------
# Reading the committed facts (tools/extract_veomni_facts.py writes them)


def facts_tables(
    core: dict[str, DataClass], extras: list[DataClass]
) -> tuple[list[dict[str, JSON]], list[dict[str, JSON]]]:
    """One layout's classes and fields as the facts file holds them: rows {name, bases, file, core} in
    the order read, and rows {file, class, name, annotation, default (absent: required), help}."""
    classes: list[dict[str, JSON]] = []
    fields: list[dict[str, JSON]] = []
    for cls, is_core in [*((c, True) for c in core.values()), *((c, False) for c in extras)]:
        classes.append({"name": cls.name, "bases": cls.bases, "file": cls.file, "core": is_core})
        for f in cls.fields:
            row: dict[str, JSON] = {"file": cls.file, "class": cls.name, "name": f.name, "annotation": f.annotation}
            if f.default is not MISSING:
                row["default"] = f.default
            row["help"] = f.help
            fields.append(row)
    return classes, fields


def load_layout(facts: dict[str, JSON], layout: str) -> tuple[dict[str, DataClass], list[DataClass]]:
    """Core dataclasses (by name), and the trainer/task subclasses of the argument classes, in the
    order the extraction read them."""
    core: dict[str, DataClass] = {}
    extras: list[DataClass] = []
    by_file_and_name: dict[tuple[str, str], DataClass] = {}
    for row in facts["classes"][layout]:
        cls = DataClass(row["name"], list(row["bases"]), [], row["file"])
        by_file_and_name[cls.file, cls.name] = cls
        if row["core"]:
            core[cls.name] = cls
        else:
            extras.append(cls)
    for f in facts["fields"][layout]:
        field_ = Field(f["name"], f["annotation"], f.get("default", MISSING), f["help"])
        by_file_and_name[f["file"], f["class"]].fields.append(field_)
    return core, extras


# ------------------------------------------------------------------------------------------
# Types


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def type_schema(annotation: str, classes: dict[str, DataClass]) -> dict[str, JSON]:
    """JSON Schema of a Python annotation (typing spelled as in VeOmni's source)."""
    text = annotation.replace("typing.", "").strip()
    match = re.fullmatch(r"(\w+)\[(.*)\]", text, re.S)
    if match:
        head, inner = match.group(1), match.group(2)
        args = _split_top(inner)
        if head == "Optional":
            schema = type_schema(args[0], classes)
            return _nullable(schema)
        if head == "Union":
            options = [a for a in args if a != "None"]
            schema = (
                type_schema(options[0], classes)
                if len(options) == 1
                else {"anyOf": [type_schema(a, classes) for a in options]}
            )
            return _nullable(schema) if "None" in args else schema
        if head == "Literal":
            # argparse enforces the choices on the command line; a YAML value is not checked
            # (dataclasses do not validate Literal), so they are documented, not an enum
            values = [ast.literal_eval(a) for a in args]
            kinds = sorted({_JSON_KIND[type(v)] for v in values})
            return {"type": kinds[0] if len(kinds) == 1 else kinds, "x-choices": values}
        if head in ("List", "list", "Sequence", "Tuple", "tuple"):
            return {"type": "array", "items": type_schema(args[0], classes)} if args else {"type": "array"}
        if head in ("Dict", "dict"):
            return {"type": "object", "additionalProperties": True}
    if text in classes:
        return {"type": "object"}  # properties filled in by the caller
    simple = {
        "str": "string",
        "int": "integer",
        "float": "number",
        "bool": "boolean",
        "Dict": "object",
        "dict": "object",
        "List": "array",
        "list": "array",
        "Any": None,
    }
    kind = simple.get(text)
    if kind == "object":
        return {"type": "object", "additionalProperties": True}
    return {"type": kind} if kind else {}


_JSON_KIND = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _nullable(schema: dict[str, JSON]) -> dict[str, JSON]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]}
    return schema


def _dataclass_of(annotation: str, classes: dict[str, DataClass]) -> str | None:
    text = annotation.strip("'\"")
    match = re.fullmatch(r"Optional\[(\w+)\]", text)
    name = match.group(1) if match else text
    return name if name in classes else None


# ------------------------------------------------------------------------------------------
# Building the tree of keys for one layout


def class_fields(name: str, classes: dict[str, DataClass]) -> list[tuple[Field, str]]:
    """Fields of a dataclass including inherited ones (base first, as dataclasses order them)."""
    cls = classes[name]
    out: list[tuple[Field, str]] = []
    for base in cls.bases:
        if base in classes:
            out.extend(class_fields(base, classes))
    seen = {f.name for f, _ in out}
    for f in cls.fields:
        if f.name in seen:
            out = [(g, owner) if g.name != f.name else (f, cls.name) for g, owner in out]
        else:
            out.append((f, cls.name))
    return out


def node_for(name: str, classes: dict[str, DataClass]) -> dict[str, JSON]:
    props: dict[str, JSON] = {}
    for f, owner in class_fields(name, classes):
        props[f.name] = prop_for(f, owner, classes)
    return {"type": "object", "additionalProperties": False, "properties": props, "x-group": name}


def prop_for(f: Field, owner: str, classes: dict[str, DataClass]) -> dict[str, JSON]:
    nested = _dataclass_of(f.annotation, classes)
    if nested:
        node = node_for(nested, classes)
        node["x-group"] = nested
        return node
    prop = type_schema(f.annotation, classes)
    if f.default is not MISSING:
        prop["default"] = f.default
    else:
        prop["x-required"] = True
    if f.help:
        prop["title"] = " ".join(f.help.split())
    prop["x-group"] = owner
    return prop


def subclass_section(cls: DataClass, classes: dict[str, DataClass]) -> str | None:
    """model / data / train / top for a subclass of an argument class (transitively)."""
    todo, seen = list(cls.bases), set()
    while todo:
        base = todo.pop()
        if base in seen:
            continue
        seen.add(base)
        if base in SECTIONS:
            return SECTIONS[base]
        if base == ROOT_CLASS:
            return "top"
        if base in classes:
            todo.extend(classes[base].bases)
    return None


def layout_tree(core: dict[str, DataClass], extras: list[DataClass]) -> dict[str, JSON]:
    classes = dict(core)
    for cls in extras:
        classes.setdefault(cls.name, cls)
    top: dict[str, JSON] = {}
    for f, _owner in class_fields(ROOT_CLASS, core):
        section = _dataclass_of(f.annotation, core)
        assert section, f.annotation
        top[f.name] = node_for(section, core)
    for cls in extras:
        section = subclass_section(cls, {**core, **{c.name: c for c in extras}})
        if section is None:
            continue
        target = top if section == "top" else top[section]["properties"]
        for f in cls.fields:
            if section == "top" and f.name in SECTIONS.values():
                continue  # the subclass only swaps in its own section classes
            if f.name in target:
                continue
            prop = prop_for(f, cls.name, classes)
            prop["x-trainers"] = [cls.file]
            target[f.name] = prop
        # the same extra field in several task scripts: collect every file that declares it
        for f in cls.fields:
            existing = target.get(f.name)
            if isinstance(existing, dict) and "x-trainers" in existing and cls.file not in existing["x-trainers"]:
                existing["x-trainers"] = sorted(existing["x-trainers"] + [cls.file])
    return top


# ------------------------------------------------------------------------------------------
# Merging the layouts and the seed docs


def leaves(node: dict[str, JSON], prefix: str = "") -> dict[str, dict[str, JSON]]:
    out: dict[str, dict[str, JSON]] = {}
    for name, prop in node.items():
        path = prefix + name
        out[path] = prop
        if "properties" in prop:
            out.update(leaves(prop["properties"], path + "."))
    return out


def merge(nested: dict[str, JSON], flat: dict[str, JSON]) -> dict[str, JSON]:
    """Union of both layouts; each key says which layouts have it (and the flat default if it differs)."""

    def walk(a: dict[str, JSON] | None, b: dict[str, JSON] | None) -> dict[str, JSON]:
        out: dict[str, JSON] = {}
        for name in list(a or {}) + [n for n in (b or {}) if n not in (a or {})]:
            pa, pb = (a or {}).get(name), (b or {}).get(name)
            base = dict(pa if pa is not None else pb or {})
            base["x-layouts"] = [layout for layout, p in (("flat", pb), ("nested", pa)) if p is not None]
            if pa is not None and pb is not None and ("properties" in pa) != ("properties" in pb):
                # flat `train.optimizer: adamw` became the nested block train.optimizer.*
                base = dict(pa if "properties" in pa else pb)
                base["x-layouts"] = ["nested"] if "properties" in pa else ["flat"]
                other = pb if "properties" in pa else pa
                base["x-" + ("flat" if "properties" in pa else "nested") + "-scalar"] = {
                    k: v for k, v in other.items() if k not in ("x-layouts",)
                }
                base["properties"] = (
                    walk(pa.get("properties"), None) if "properties" in pa else walk(None, pb.get("properties"))
                )
                scalar = other.get("type")
                base["type"] = ["object"] + ([scalar] if isinstance(scalar, str) else list(scalar or []))
            elif pa is not None and pb is not None:
                if "properties" in pa or "properties" in pb:
                    base["properties"] = walk(pa.get("properties"), pb.get("properties"))
                elif pb.get("default", MISSING) != pa.get("default", MISSING) and "default" in pb:
                    base["x-flat-default"] = pb["default"]
                if "x-choices" in pb and pb["x-choices"] != pa.get("x-choices"):
                    base["x-flat-choices"] = pb["x-choices"]
                if "x-trainers" in pb and "x-trainers" in pa:
                    base["x-trainers"] = sorted(set(pa["x-trainers"]) | set(pb["x-trainers"]))
            elif "properties" in base:
                base["properties"] = walk(pa.get("properties") if pa else None, pb.get("properties") if pb else None)
            out[name] = base
        return out

    return walk(nested, flat)


def parse_doc_default(text: str) -> Any:
    cleaned = text.replace(" ", "").replace(",", "")
    if cleaned in ("None", "Required") or "." in cleaned and cleaned.split(".")[0] in ("model", "train"):
        return MISSING
    for cast in (int, float):
        try:
            return cast(cleaned)
        except ValueError:
            pass
    if cleaned in ("True", "False"):
        return cleaned == "True"
    if cleaned in ("{}", "[]"):
        return {} if cleaned == "{}" else []
    return text.strip()


def add_doc_defaults(top: dict[str, JSON], doc_defaults: dict[str, str]) -> None:
    flat = leaves(top)
    for key, text in doc_defaults.items():
        prop = flat.get(key)
        if prop is None or "flat" not in prop.get("x-layouts", []):
            continue
        value = parse_doc_default(text)
        code = prop.get("x-flat-default", prop.get("default", MISSING))
        if value is not MISSING and value != code:
            prop["x-doc-default"] = value


def build_schema(classes: dict[str, JSON], doc_defaults: dict[str, str]) -> dict[str, JSON]:
    """The schema from the dataclass facts and the seed docs' defaults (flat key -> default text)."""
    if classes["source"]["commits"] != COMMITS:
        raise SystemExit(f"{CLASSES_FACTS}: read at {classes['source']['commits']}, not at {COMMITS}: re-extract")
    nested = layout_tree(*load_layout(classes, "nested"))
    flat = layout_tree(*load_layout(classes, "flat"))
    top = merge(nested, flat)
    add_doc_defaults(top, doc_defaults)
    # the config.json is read as the hf format reads one: its keys are schemas/hf.schema.json's (run
    # tools/gen_hf_schema.py first), so a key no transformers class has is unknown here too
    hf = json.loads((Path(__file__).resolve().parent.parent / "schemas" / "hf.schema.json").read_text())["properties"][
        "hf"
    ]
    top["hf"] = {
        "type": "object",
        "additionalProperties": True,
        "title": "neoconv's view of the HuggingFace config.json at model.config_path (not a VeOmni section)",
        "x-side-file": "config.json",
        "x-layouts": list(LAYOUTS),
        "x-group": "hf",
        "properties": hf["properties"],
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "VeOmni training configuration (flat and nested layouts)",
        "type": "object",
        "additionalProperties": False,
        "x-generated-by": "tools/gen_veomni_schema.py",
        "x-commits": COMMITS,
        "properties": top,
    }


def read_facts(facts: Path) -> tuple[dict[str, JSON], dict[str, str]]:
    """The dataclass facts, and the seed docs' defaults (flat key -> default text)."""
    classes = load(facts / CLASSES_FACTS)
    doc = load(facts / DOC_FACTS)
    return classes, {row["key"]: row["default"] for row in doc["rows"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--facts",
        type=Path,
        default=FACTS_DIR,
        help=f"folder holding {CLASSES_FACTS} and {DOC_FACTS} (default: %(default)s)",
    )
    parser.add_argument(
        "--output", type=Path, default=DEFAULT_OUTPUT, help="schema file to write (default: %(default)s)"
    )
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the output file is out of date")
    opts = parser.parse_args(argv)
    return write_or_check(
        render(build_schema(*read_facts(opts.facts))), opts.output, opts.check, "gen_veomni_schema.py"
    )


if __name__ == "__main__":
    sys.exit(main())
