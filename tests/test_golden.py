"""Transcript golden tests: fixtures/cases/<pair>/<name>/ pins the output, the JSON report and stderr.

Each case folder has `cmd.txt` (the arguments after `neoconv`, one line; `{case}` is the folder,
`{fixtures}` the project's fixtures/ folder, `{corpus}` the shared corpus) and inputs. Files the
translation writes beside the output (VeOmni's HF config.json) are pinned as `expected.side.<name>`.
Refresh after an intended change with `python -m pytest tests/test_golden.py --update-goldens`
and review the diff.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from translator.cli import main

from conftest import CORPUS, FIXTURES

CASES = sorted(p.parent for p in (FIXTURES / "cases").glob("*/*/cmd.txt"))
PAIRS = sorted({case.parent.name for case in CASES})


def _portable(text: str, case: Path) -> str:
    """Absolute paths of this checkout written as the placeholders cmd.txt uses."""
    return text.replace(str(CORPUS), "{corpus}").replace(str(case), "{case}").replace(str(FIXTURES), "{fixtures}")


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden(case: Path, runner, tmp_path: Path, update_goldens: bool) -> None:
    text = (case / "cmd.txt").read_text().strip()
    if "{corpus}" in text and not CORPUS.is_dir():
        pytest.skip(f"the shared corpus {CORPUS} is not present (it lives beside the checkout)")
    args = shlex.split(text.replace("{case}", str(case)).replace("{corpus}", str(CORPUS)).replace("{fixtures}", str(FIXTURES)))
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    result = runner.invoke(main, args + ["-o", str(out), "--report", str(report)])
    produced = {
        "expected.out": out.read_text() if out.exists() else "",
        "expected.report.json": _portable(report.read_text(), case) if report.exists() else "",
        "expected.stderr": _portable(result.stderr, case),
        "expected.exit": f"{result.exit_code}\n",
    }
    for side in sorted(tmp_path.iterdir()):
        if side not in (out, report) and side.is_file():
            produced[f"expected.side.{side.name}"] = side.read_text()
    if update_goldens:
        for stale in case.glob("expected.side.*"):
            if stale.name not in produced:
                stale.unlink()
    pinned = {p.name for p in case.glob("expected.side.*")}
    for name, content in produced.items():
        path = case / name
        if update_goldens:
            path.write_text(content)
        else:
            assert path.exists(), f"{path} missing: run pytest --update-goldens"
            assert content == path.read_text(), f"{case.name}/{name} differs (pytest --update-goldens to accept)"
    if not update_goldens:
        assert pinned <= set(produced), f"{case.name}: no longer writes {sorted(pinned - set(produced))}"


def test_every_pair_has_a_golden_case() -> None:
    from translator.registry import pairs

    missing = [f"{a}2{b}" for a, b in pairs() if f"{a}2{b}" not in PAIRS]
    assert not missing, f"pairs without a transcript under fixtures/cases/: {missing}"
