"""Without the shared corpus, every test that needs it skips saying so (never pytest's "got empty
parameter set", which says nothing of why)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_corpus_tests_skip_naming_the_corpus(tmp_path: Path) -> None:
    absent = tmp_path / "no-corpus"
    env = {**os.environ, "NEOCONV_CORPUS": str(absent)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests/test_neox2cerebras.py",
         "tests/test_cerebras_trainer.py", "-k", "corpus or every or each"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )  # fmt: skip
    skips = [line for line in run.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skips, run.stdout[-2000:]
    assert "empty parameter set" not in run.stdout
    assert all(str(absent) in line for line in skips), skips
