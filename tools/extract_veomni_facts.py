#!/usr/bin/env python3
"""Extract the VeOmni argument facts from a VeOmni git clone and the seed docs into tools/facts/.

  * tools/facts/veomni-dataclasses.json: the argument dataclasses at both commits the schema
    describes (tools/gen_veomni_schema.py COMMITS: nested d9774494, flat ac3b9f01), read with `ast`
    from `veomni/arguments/arguments_types.py` and every dataclass in `veomni/trainer/*.py` and
    `tasks/**/*.py` (nothing imported or executed): per class its name, bases, file and whether it
    is a core class; per field its name, annotation, default (absent: required) and its help text
    where the schema shows it as a title (whitespace folded; empty otherwise).
  * tools/facts/veomni-arguments-defaults.json: the default column of the seed docs
    (veomni-arguments.md in --reference), per flat key, as written.

--check compares instead of writing (exit 1 when the committed facts no longer say what the clone
and the docs say): the `upstream` test tier runs it when they are at hand.

Usage:
    python tools/extract_veomni_facts.py [--veomni GIT_DIR] [--reference DIR] [--facts DIR] [--check]
GIT_DIR is a clone (bare or not) of github.com/ByteDance-Seed/VeOmni holding both commits (default:
$VEOMNI_GIT, else ../.mirror/ByteDance-Seed+VeOmni/repo beside the checkout).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from facts_file import FACTS_DIR, REFERENCE_DIR, REPO_ROOT, document_source, render  # tools/ is on sys.path as a script
from gen_veomni_schema import (
    CLASSES_FACTS,
    COMMITS,
    DOC_FACTS,
    LAYOUTS,
    MISSING,
    DataClass,
    Field,
    build_schema,
    facts_tables,
)
from schema_output import write_or_check

DEFAULT_VEOMNI = REPO_ROOT.parent / ".mirror" / "ByteDance-Seed+VeOmni" / "repo"
REPOSITORY = "ByteDance-Seed/VeOmni"
DOC_FILE = "veomni-arguments.md"
CORE = "veomni/arguments/arguments_types.py"


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", "--git-dir", str(git_dir(repo)), *args], capture_output=True, text=True, check=True)
    return result.stdout


def git_dir(repo: Path) -> Path:
    return repo / ".git" if (repo / ".git").exists() else repo


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return MISSING


def _default_of(value: ast.AST | None) -> tuple[Any, str]:
    """(default, help) of a dataclass field's right-hand side."""
    if value is None:
        return MISSING, ""
    if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "field":
        default: Any = MISSING
        help_text = ""
        for kw in value.keywords:
            if kw.arg == "default":
                default = _literal(kw.value)
            elif kw.arg == "default_factory":
                factory = kw.value
                if isinstance(factory, ast.Name) and factory.id in ("list", "dict"):
                    default = [] if factory.id == "list" else {}
                elif isinstance(factory, ast.Lambda):
                    default = _literal(factory.body)
                else:
                    default = None  # a nested dataclass: described by its own fields
            elif kw.arg == "metadata" and isinstance(kw.value, ast.Dict):
                for k, v in zip(kw.value.keys, kw.value.values):
                    if k is not None and _literal(k) == "help":
                        text = _literal(v)
                        help_text = text if isinstance(text, str) else ""
        return default, help_text
    return _literal(value), ""


def dataclasses_in(source: str, file: str) -> dict[str, DataClass]:
    found: dict[str, DataClass] = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ClassDef):
            continue
        if not any(
            getattr(d, "id", getattr(getattr(d, "func", None), "id", "")) == "dataclass" for d in node.decorator_list
        ):
            continue
        cls = DataClass(node.name, [ast.unparse(b) for b in node.bases], file=file)
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                default, help_text = _default_of(stmt.value)
                annotation = ast.unparse(stmt.annotation).strip("'\"")
                cls.fields.append(Field(stmt.target.id, annotation, default, help_text))
        found[node.name] = cls
    return found


def load_commit(repo: Path, commit: str) -> tuple[dict[str, DataClass], list[DataClass]]:
    """Core dataclasses, and the trainer/task subclasses of the argument classes."""
    core = dataclasses_in(git(repo, "show", f"{commit}:{CORE}"), CORE)
    names = git(repo, "ls-tree", "-r", "--name-only", commit).splitlines()
    extra_files = sorted(
        n for n in names if n.endswith(".py") and (n.startswith("veomni/trainer/") or n.startswith("tasks/"))
    )
    extras: list[DataClass] = []
    for name in extra_files:
        text = git(repo, "show", f"{commit}:{name}")
        if "@dataclass" not in text:
            continue
        extras.extend(dataclasses_in(text, name).values())
    return core, extras


def doc_defaults(path: Path) -> list[dict[str, str]]:
    """Rows {key, default}: flat key -> default as the seed docs write it (markdown tables: Name | Type |
    Description | Default)."""
    rows: list[dict[str, str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.fullmatch(r"(model|data|train)\.\w+", cells[0]):
            rows.append({"key": cells[0], "default": cells[-1]})
    if not rows:
        raise SystemExit(f"no argument rows found in {path}")
    return rows


def _titles(node: Any, found: set[str]) -> set[str]:
    if isinstance(node, dict):
        if isinstance(node.get("title"), str):
            found.add(node["title"])
        for value in node.values():
            _titles(value, found)
    elif isinstance(node, list):
        for value in node:
            _titles(value, found)
    return found


def facts(repo: Path, reference: Path) -> dict[str, str]:
    """File name -> text of each facts file."""
    doc_path = reference / DOC_FILE
    doc_rows = doc_defaults(doc_path)
    tables = {layout: facts_tables(*load_commit(repo, COMMITS[layout])) for layout in LAYOUTS}
    fields = {layout: rows for layout, (_, rows) in tables.items()}
    for rows in fields.values():
        for f in rows:
            f["help"] = " ".join(f["help"].split())
    source = {"repository": REPOSITORY, "commits": COMMITS, "files": [CORE, "veomni/trainer/**.py", "tasks/**.py"]}
    doc: dict[str, Any] = {
        "source": source,
        "classes": {layout: rows for layout, (rows, _) in tables.items()},
        "fields": fields,
    }
    # keep a help text only where the schema shows it: it is the code's prose, not a fact
    shown = _titles(build_schema(doc, {r["key"]: r["default"] for r in doc_rows}), set())
    for rows in fields.values():
        for f in rows:
            if f["help"] not in shown:
                f["help"] = ""
    return {
        CLASSES_FACTS: render(
            {
                "$comment": [
                    "VeOmni's argument dataclasses at two commits, read by tools/extract_veomni_facts.py.",
                    "classes: per layout, in the order read (core classes of arguments_types.py first, then the "
                    "trainer/task files sorted): name, bases, file, core.",
                    "fields: per layout, in order: file, class, name, annotation, default (absent: required), "
                    "help (shown as the schema's title; empty: not shown).",
                ],
                **doc,
            }
        ),
        DOC_FACTS: render(
            {
                "$comment": [
                    "The default column of VeOmni's seed docs (flat layout), read by tools/extract_veomni_facts.py.",
                    "rows: key (flat), default (as written).",
                ],
                "source": document_source(doc_path),
                "rows": doc_rows,
            }
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--veomni",
        type=Path,
        default=Path(os.environ.get("VEOMNI_GIT", DEFAULT_VEOMNI)),
        help="VeOmni git clone holding both commits (default: $VEOMNI_GIT or %(default)s)",
    )
    parser.add_argument(
        "--reference", type=Path, default=REFERENCE_DIR, help=f"folder holding {DOC_FILE} (default: %(default)s)"
    )
    parser.add_argument("--facts", type=Path, default=FACTS_DIR, help="the facts folder (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if a facts file is out of date")
    opts = parser.parse_args(argv)
    if not git_dir(opts.veomni).exists():
        print(f"VeOmni clone not found at {opts.veomni}; give --veomni", file=sys.stderr)
        return 2
    status = 0
    for name, text in facts(opts.veomni, opts.reference).items():
        status |= write_or_check(text, opts.facts / name, opts.check, "extract_veomni_facts.py")
    return status


if __name__ == "__main__":
    sys.exit(main())
