"""What every schema generator in tools/ shares: stable rendering, and write-or-`--check`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def render(schema: dict[str, Any]) -> str:
    """Deterministic text (sorted keys, one-space indent), so a test can regenerate and compare."""
    return json.dumps(schema, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def write_or_check(text: str, output: Path, check: bool, tool: str) -> int:
    """Write the schema, or with --check exit 1 when the file on disk is out of date."""
    if check:
        current = output.read_text(encoding="utf-8") if output.exists() else None
        if current != text:
            print(f"{output} is out of date; rerun tools/{tool}", file=sys.stderr)
            return 1
        return 0
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    return 0
