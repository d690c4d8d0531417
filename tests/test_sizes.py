"""Modules with one job and functions that fit on a screen: no module of translator/ over 800 lines, no
function over 80 (issue 19). 800, not 400: a cohesive module (the engine's reading of a source, a format's
formulas) is not split into fragments to fit a cap (issue 26)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "translator"
MODULE_LINES, FUNCTION_LINES = 800, 80
# Capped where it stands: yamlread's event loop is the YAML reader's hot path (one function: a call per
# event would cost a batch more than the split gains)
CAPPED = {
    ("io/yamlread.py", "_build"): 95,
    # grown past the cap by the one-time ruff reformat: to be split into emission and report entries
    # once the branch making emission faster has merged
    ("engine/entries.py", None): 925,
    # its formulas run on every Cerebras translation: a split would add a module to a translation's
    # path (issue 26 holds that to 30 modules)
    ("formats/cerebras/formulas.py", None): 851,
}


def _too_long() -> list[str]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > CAPPED.get((rel, None), MODULE_LINES):
            found.append(f"{rel}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > CAPPED.get((rel, node.name), FUNCTION_LINES):
                    found.append(f"{rel}:{node.lineno} {node.name}: {length} lines")
    return found


def test_no_module_or_function_is_too_long() -> None:
    assert _too_long() == []
