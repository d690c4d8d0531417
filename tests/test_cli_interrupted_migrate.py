"""An interrupted `migrate` says exactly which files it rewrote (issue 31: stopped after rewriting 51 of
608 files in place, it said `interrupted; nothing written`)."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_runner, FIXTURES
from neoconv.cli import main

migrate_module = importlib.import_module("neoconv.cli.migrate")  # neoconv.cli.migrate is also the command
LEGACY = sorted((FIXTURES / "inputs" / "cerebras").glob("*.yaml"))


def _tree(tmp_path: Path) -> list[Path]:
    files = []
    for path in LEGACY:
        copy = tmp_path / path.name
        shutil.copy(path, copy)
        files.append(copy)
    return files


def _stop_at(monkeypatch: pytest.MonkeyPatch, call: int, *, after_write: bool) -> None:
    """Ctrl-C at the `call`-th rewrite: before its file is written, or after it is on disk but before
    migrate has put it on record."""
    real = migrate_module._write
    calls = {"n": 0}

    def write(path: str, text: str, backup: bool) -> str:
        calls["n"] += 1
        if calls["n"] == call:
            if after_write:
                real(path, text, backup)
            raise KeyboardInterrupt
        return real(path, text, backup)

    monkeypatch.setattr(migrate_module, "_write", write)


def _changed(files: list[Path]) -> list[str]:
    return [str(f) for f, original in zip(files, LEGACY) if f.read_bytes() != original.read_bytes()]


def _migrate(files: list[Path], *extra: str) -> Any:
    return cli_runner().invoke(
        main, ["migrate", "--format", "cerebras", "--layout", "trainer", *extra, *map(str, files)]
    )


def test_the_files_rewritten_before_ctrl_c_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _tree(tmp_path)
    assert len(files) >= 4
    _stop_at(monkeypatch, 3, after_write=False)
    result = _migrate(files)
    assert result.exit_code == 130
    written = _changed(files)
    assert written == [str(files[0]), str(files[1])]
    lines = result.stderr.strip().splitlines()
    assert [line.split(" (")[0] for line in lines[:-1]] == [f"migrated {path}" for path in written]
    assert lines[-1] == (
        f"neoconv: interrupted; rewrote 2 files of {len(files)} (each named above); "
        "the others are as they were: run the same command again to finish"
    )


def test_a_file_written_just_before_ctrl_c_is_counted_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _tree(tmp_path)
    _stop_at(monkeypatch, 2, after_write=True)
    result = _migrate(files)
    assert result.exit_code == 130
    assert _changed(files) == [str(files[0]), str(files[1])]
    assert result.stderr.strip().splitlines()[-1] == (
        f"neoconv: interrupted; rewrote 2 files of {len(files)} (each named above, and {files[1]}); "
        "the others are as they were: run the same command again to finish"
    )


def test_quiet_names_every_file_rewritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _tree(tmp_path)
    _stop_at(monkeypatch, 3, after_write=True)
    result = _migrate(files, "-q")
    assert result.exit_code == 130
    written = _changed(files)
    assert len(written) == 3
    assert result.stderr.strip().splitlines() == [
        f"neoconv: interrupted; rewrote 3 files of {len(files)} ({', '.join(written)}); "
        "the others are as they were: run the same command again to finish"
    ]


def test_nothing_written_is_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _tree(tmp_path)
    _stop_at(monkeypatch, 1, after_write=False)
    result = _migrate(files)
    assert result.exit_code == 130
    assert _changed(files) == []
    assert result.stderr.strip().splitlines() == ["neoconv: interrupted; nothing written"]
