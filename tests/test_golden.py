"""Transcript golden tests: fixtures/cases/<pair>/<name>/ pins the output, the JSON report and stderr.

Each case folder has `cmd.txt` (the arguments after `neoconv`, one line; `{case}` is the folder,
`{corpus}` the shared corpus) and inputs. Refresh after an intended change with
`python -m pytest tests/test_golden.py --update-goldens` and review the diff.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from translator.cli import main

from conftest import CORPUS, FIXTURES

CASES = sorted(p.parent for p in (FIXTURES / "cases").glob("*/*/cmd.txt"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden(case: Path, runner, tmp_path: Path, update_goldens: bool) -> None:
    text = (case / "cmd.txt").read_text().strip()
    if "{corpus}" in text and not CORPUS.is_dir():
        pytest.skip("the shared corpus is not present")
    args = shlex.split(text.replace("{case}", str(case)).replace("{corpus}", str(CORPUS)))
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    result = runner.invoke(main, args + ["-o", str(out), "--report", str(report)])
    produced = {
        "expected.out": out.read_text() if out.exists() else "",
        "expected.report.json": report.read_text().replace(str(CORPUS), "{corpus}").replace(str(case), "{case}") if report.exists() else "",
        "expected.stderr": result.stderr.replace(str(CORPUS), "{corpus}").replace(str(case), "{case}"),
        "expected.exit": f"{result.exit_code}\n",
    }
    for name, content in produced.items():
        path = case / name
        if update_goldens:
            path.write_text(content)
        else:
            assert path.exists(), f"{path} missing: run pytest --update-goldens"
            assert content == path.read_text(), f"{case.name}/{name} differs (pytest --update-goldens to accept)"
