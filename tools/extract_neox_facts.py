#!/usr/bin/env python3
"""Extract the NeoX argument facts from the reference documents into tools/facts/.

Reads two documents in --reference (../shared/reference beside the checkout):
  * gpt-neox-arguments.md      -> tools/facts/neox-arguments.json: per argument its name
    (underscored), its Python type annotation, its default as the document writes it, its
    NeoXArgs section (version "current")
  * gpt-neox-configs-readme.md -> tools/facts/neox-configs-readme.json: per table row its origin
    column (DSL/DSC/Meg/NeoX), name and default text (version "configs-readme")
No help text is kept: tools/gen_neox_schema.py turns these rows into the schema.

--check compares instead of writing (exit 1 when the committed facts no longer say what the
documents say): the `upstream` test tier runs it when the documents are at hand.

Usage:
  python tools/extract_neox_facts.py [--reference DIR] [--facts DIR] [--check]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Final

from facts_file import FACTS_DIR, REFERENCE_DIR, document_source, render  # tools/ is on sys.path as a script
from schema_output import write_or_check

ARGS_FILE: Final = "gpt-neox-arguments.md"
README_FILE: Final = "gpt-neox-configs-readme.md"
ARGS_FACTS: Final = "neox-arguments.json"
README_FACTS: Final = "neox-configs-readme.json"

_SECTION_RE: Final = re.compile(r"^## (NeoXArgs\w+)[ \t]*$", re.M)
_ARG_RE: Final = re.compile(r"^- \*\*(\w+)\*\*: (.+?)[ \t]*$", re.M)
# The doc renders each entry as "Default = {value}\n\n    {help}". Matching up to
# the blank line that precedes the indented help keeps odd values intact
# (prompt_end's default is a newline, eval_results_prefix's is empty).
_DEFAULT_RE: Final = re.compile(r"\n    Default = (.*?)\n\n(?=    \S|\s*\Z)", re.S)


def normalise_key(name: str) -> str:
    """NeoX accepts '-' or '_' in keys and converts to '_' on load."""
    return name.strip().replace("-", "_")


def read_current(path: Path) -> list[dict[str, Any]]:
    """Rows {name, type, default?, group}; no `default` when the document states none."""
    text = path.read_text(encoding="utf-8")
    sections = list(_SECTION_RE.finditer(text))
    rows: list[dict[str, Any]] = []
    for i, sec in enumerate(sections):
        end = sections[i + 1].start() if i + 1 < len(sections) else len(text)
        body = text[sec.end() : end]
        entries = list(_ARG_RE.finditer(body))
        for j, ent in enumerate(entries):
            block_end = entries[j + 1].start() if j + 1 < len(entries) else len(body)
            match = _DEFAULT_RE.search(body[ent.end() : block_end])
            row: dict[str, Any] = {"name": normalise_key(ent.group(1)), "type": ent.group(2).strip()}
            if match:
                row["default"] = match.group(1)
            row["group"] = sec.group(1)
            rows.append(row)
    if not rows:
        raise SystemExit(f"no arguments found in {path}")
    return rows


def read_readme(path: Path) -> list[dict[str, Any]]:
    """Rows {origin, name, default?}; no `default` for a blank cell (not stated)."""
    rows: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("Origin", "") or set(cells[0]) <= set("-: "):
            continue  # header row and the |---| separator
        row: dict[str, Any] = {"origin": cells[0], "name": normalise_key(cells[1])}
        if cells[2]:
            row["default"] = cells[2]
        rows.append(row)
    if not rows:
        raise SystemExit(f"no table rows found in {path}")
    return rows


def facts(reference: Path) -> dict[str, str]:
    """File name -> text of each facts file."""
    args, readme = reference / ARGS_FILE, reference / README_FILE
    return {
        ARGS_FACTS: render(
            {
                "$comment": [
                    "GPT-NeoX arguments (version 'current'), read by tools/extract_neox_facts.py.",
                    "args: name (underscored), type (the Python annotation), default (as written; absent: "
                    "none stated), group (NeoXArgs section).",
                ],
                "source": document_source(args),
                "args": read_current(args),
            }
        ),
        README_FACTS: render(
            {
                "$comment": [
                    "GPT-NeoX configs README table (version 'configs-readme'), read by tools/extract_neox_facts.py.",
                    "rows: origin (DSL/DSC/Meg/NeoX), name (underscored), default (as written; absent: blank cell).",
                ],
                "source": document_source(readme),
                "rows": read_readme(readme),
            }
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reference", type=Path, default=REFERENCE_DIR, help="the reference documents (default: %(default)s)"
    )
    parser.add_argument("--facts", type=Path, default=FACTS_DIR, help="the facts folder (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if a facts file is out of date")
    opts = parser.parse_args(argv)
    status = 0
    for name, text in facts(opts.reference).items():
        status |= write_or_check(text, opts.facts / name, opts.check, "extract_neox_facts.py")
    return status


if __name__ == "__main__":
    sys.exit(main())
