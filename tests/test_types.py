"""The package's type hints hold: mypy over translator/ (skipped when mypy is not installed)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install '.[test]')")
def test_mypy_finds_no_type_errors() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "translator", "--ignore-missing-imports", "--no-error-summary"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr


HISTORY_TOOLS = ("history_common.py", "dict_reads.py", "veomni_args.py", "cerebras_keys.py", "gen_neox_history.py",
                 "gen_veomni_history.py", "gen_deepspeed_history.py", "gen_cerebras_history.py")


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install '.[test]')")
def test_mypy_passes_the_key_history_generators() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", *HISTORY_TOOLS, "--ignore-missing-imports", "--no-error-summary"],
        cwd=ROOT / "tools", capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
