"""The committed facts files (tools/facts/): what an extraction tool read from upstream material.

A generator (tools/gen_*_schema.py) reads these files and the repository's own tables, nothing
else, so every generated file regenerates from the repository alone. An extraction tool
(tools/extract_*_facts.py) reads the upstream material (a reference document, a git mirror) and
writes, or with --check compares, its facts file; that check is the opt-in `upstream` test tier.

A facts file is JSON: {"$comment": [...], "source": {...where it came from...}, <tables>...}.
Tables that are lists are written one item per line, so a re-extraction's diff shows the rows
that changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
FACTS_DIR = REPO_ROOT / "tools" / "facts"
REFERENCE_DIR = REPO_ROOT.parent / "shared" / "reference"  # the reference documents, beside the checkout


def load(path: Path) -> dict[str, Any]:
    """A facts file; a missing one is a clear error naming the tool that writes it."""
    if not path.is_file():
        raise SystemExit(f"{path}: no such facts file (tools/extract_*_facts.py writes it from the upstream material)")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def document_source(path: Path) -> dict[str, str]:
    """Where facts read from a document came from: its name and the SHA-256 of its bytes."""
    return {"document": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def render(doc: Mapping[str, Any]) -> str:
    """Deterministic text: top-level keys in the order given, list tables one item per line."""
    lines = ["{"]
    items = list(doc.items())
    for i, (name, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(value, list) and value and name != "$comment":
            lines.append(f"  {json.dumps(name)}: [")
            lines.extend(f"    {_compact(v)}{',' if j < len(value) - 1 else ''}" for j, v in enumerate(value))
            lines.append(f"  ]{comma}")
        elif (
            isinstance(value, dict) and value and all(isinstance(v, list) for v in value.values()) and name != "source"
        ):
            lines.append(f"  {json.dumps(name)}: {{")
            inner = list(value.items())
            for j, (key, rows) in enumerate(inner):
                lines.append(f"    {json.dumps(key)}: [")
                lines.extend(f"      {_compact(v)}{',' if k < len(rows) - 1 else ''}" for k, v in enumerate(rows))
                lines.append(f"    ]{',' if j < len(inner) - 1 else ''}")
            lines.append(f"  }}{comma}")
        else:
            text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
            lines.append(f"  {json.dumps(name)}: {text}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
