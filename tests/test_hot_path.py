"""One NeoX -> Cerebras translation runs code in few, cohesive modules (issue 26: 58 of the package's
modules before): every module on the hot path is one a reader of the code has to hold in mind.

Measured in a fresh interpreter, as a migration meets a file: the tables compiled and the caches
warm from one file, then a file not seen before (another fixture) translated with sys.setprofile
counting the package's module files whose functions are called."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, ROOT

LIMIT = 30  # issue 26

MEASURE = """
import json, sys
from pathlib import Path
import neoconv
from neoconv import translate

root = str(Path(neoconv.__file__).resolve().parent)
warm, measured = sys.argv[1], sys.argv[2]
translate(warm, "neox", "cerebras", world_size=8)
seen = set()

def profile(frame, event, arg):
    if event == "call" and frame.f_code.co_filename.startswith(root):
        seen.add(frame.f_code.co_filename[len(root) + 1:])

sys.setprofile(profile)
try:
    translate(measured, "neox", "cerebras", world_size=8)
finally:
    sys.setprofile(None)
print(json.dumps(sorted(seen)))
"""


def modules_run(warm: Path, measured: Path) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-c", MEASURE, str(warm), str(measured)], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return list(json.loads(run.stdout.splitlines()[-1]))


def test_one_translation_runs_code_in_at_most_30_modules() -> None:
    neox = FIXTURES / "inputs" / "neox"
    for warm, measured in (
        (neox / "llama-1b.yml", neox / "pythia-160m.yml"),
        (neox / "pythia-160m.yml", neox / "llama-1b.yml"),
    ):
        modules = modules_run(warm, measured)
        assert "services/pipeline.py" in modules and "engine/ingest.py" in modules  # (the measurement sees the run)
        assert len(modules) <= LIMIT, f"{measured.name}: {len(modules)} modules run code: {modules}"


def test_translate_is_a_short_composition_of_named_stages() -> None:
    """issue 26: translate() at most 30 lines, the stages named in one place (services/pipeline.py)."""
    import ast
    import inspect

    from neoconv.services import pipeline

    source = inspect.getsource(pipeline.translate)
    assert len(source.splitlines()) <= 30
    called = [
        n.func.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    ]
    assert called == ["read", "canonical", "write", "check", "report"]
