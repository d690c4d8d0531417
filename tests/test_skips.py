"""Without the shared corpus, every test that needs it skips saying so (never pytest's "got empty
parameter set", which says nothing of why)."""

from __future__ import annotations

import pytest

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVERY_TIER = "not oracle and not upstream"  # the slow tier too: its corpus tests must skip as well


@pytest.mark.slow
def test_corpus_tests_skip_naming_the_corpus(tmp_path: Path) -> None:
    absent = tmp_path / "no-corpus"
    env = {**os.environ, "NEOCONV_CORPUS": str(absent)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-m",
            EVERY_TIER,
            "tests/test_neox2cerebras.py",
            "tests/test_cerebras_trainer.py",
            "-k",
            "corpus or every or each",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    skips = [line for line in run.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skips, run.stdout[-2000:]
    assert "empty parameter set" not in run.stdout
    assert all(str(absent) in line for line in skips), skips


@pytest.mark.slow
def test_tests_that_loop_over_the_corpus_skip_instead_of_passing_on_nothing(tmp_path: Path) -> None:
    """A test reading corpus files in its body (not parametrized over them) skips naming the corpus; the
    ones that need only a config read one of the project's own fixtures and still run."""
    absent = tmp_path / "no-corpus"
    env = {**os.environ, "NEOCONV_CORPUS": str(absent)}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rs",
            "-p",
            "no:cacheprovider",
            "-m",
            EVERY_TIER,
            "tests/test_caches.py",
            "-k",
            "warm or copy",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    skips = [line for line in run.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == 4 and all(str(absent) in line for line in skips), skips
    assert "1 passed" in run.stdout  # the copied-schedule test, on fixtures/inputs/neox/pythia-160m.yml
