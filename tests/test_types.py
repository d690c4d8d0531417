"""The package's type hints hold: mypy over translator/, and a client of the installed package under
`mypy --strict` (skipped when mypy is not installed)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install '.[test]')")
def test_mypy_finds_no_type_errors() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "translator", "--ignore-missing-imports", "--no-error-summary"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install '.[test]')")
def test_a_typed_client_passes_mypy_strict(tmp_path: Path) -> None:
    """What a porting tool meets: py.typed, explicit exports (no 'does not explicitly export')."""
    import neoconv

    # mypy cannot follow an editable install's import hook: show it the imported package by its name
    # its own errors, as for an installed package, are not the client's (follow_imports = silent)
    (tmp_path / "neoconv").symlink_to(Path(neoconv.__file__).parent, target_is_directory=True)
    assert (tmp_path / "neoconv" / "py.typed").is_file()
    (tmp_path / "mypy.ini").write_text("[mypy]\n[mypy-neoconv.*]\nfollow_imports = silent\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--config-file",
            str(tmp_path / "mypy.ini"),
            str(ROOT / "tests" / "typed_client" / "port.py"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "MYPYPATH": str(tmp_path)},
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_installed_package_is_neoconv_and_runs_as_a_module() -> None:
    run = subprocess.run([sys.executable, "-m", "neoconv", "--version"], capture_output=True, text=True, cwd="/")
    assert run.returncode == 0 and run.stdout.startswith("neoconv, version "), run.stdout + run.stderr
    # the source folder's name is not an installed package (another distribution owns `translator`)
    run = subprocess.run([sys.executable, "-c", "import translator"], capture_output=True, text=True, cwd="/")
    assert run.returncode != 0


HISTORY_TOOLS = (
    "history_common.py",
    "dict_reads.py",
    "veomni_args.py",
    "cerebras_keys.py",
    "gen_neox_history.py",
    "gen_veomni_history.py",
    "gen_deepspeed_history.py",
    "gen_cerebras_history.py",
)


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install '.[test]')")
def test_mypy_passes_the_key_history_generators() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", *HISTORY_TOOLS, "--ignore-missing-imports", "--no-error-summary"],
        cwd=ROOT / "tools",
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
