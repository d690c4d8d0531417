"""Transcript golden tests: fixtures/cases/<pair>/<name>/ pins the output, the JSON report and stderr.

Each case folder has `cmd.txt` (the arguments after `neoconv`, one line; `{case}` is the folder,
`{fixtures}` the project's fixtures/ folder, `{corpus}` the shared corpus) and inputs. Files the
translation writes beside the output (VeOmni's HF config.json) are pinned as `expected.side.<name>`.
A case with a file `tty` also pins the report as a terminal shows it (`--color always`: the
table, in colour) as `expected.tty`; stderr is the piped rendering. Commands that print rather
than write (validate, explain) pin `expected.stdout`. Everything runs at COLUMNS=100, from the
checkout's root with paths relative to it, so that wrapping does not depend on where the checkout is.
Refresh after an intended change with `python -m pytest tests/test_golden.py --update-goldens`
and review the diff.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from neoconv.cli import main

from conftest import CORPUS, FIXTURES, ROOT, extra_format_folders, own_formats_only

# neoconv's own transcripts, and those of each test-only format in its own folder (tests/extra_formats/<fmt>/cases/)
OWN_CASES = sorted(p.parent for p in (FIXTURES / "cases").glob("*/*/cmd.txt"))
CASES = OWN_CASES + sorted(
    p.parent for folder in extra_format_folders() for p in (folder / "cases").glob("*/*/cmd.txt")
)
PAIRS = sorted({case.parent.name for case in CASES})


def _format_folder(case: Path) -> Path:
    """`{format}` in a test-only format's cmd.txt: that format's folder (its fixtures are there)."""
    return case.parent.parent.parent


def _relative(path: Path) -> str:
    return os.path.relpath(path, ROOT)


def _portable(text: str, case: Path) -> str:
    """Paths of this checkout (as given, relative to the root, or absolute) written as the
    placeholders cmd.txt uses."""
    places = [(CORPUS, "{corpus}"), (case, "{case}"), (FIXTURES, "{fixtures}")]
    if case not in OWN_CASES:
        places.append((_format_folder(case), "{format}"))
    for path, name in places:
        text = re.sub(r"(?<![\w{}/.-])" + re.escape(_relative(path)) + r"(?=/|\b)", name, text)
        text = text.replace(str(path), name)  # after: an absolute path can end a relative one
    return text


# commands whose output is the text they print (pinned as expected.stdout), not a translated file
PRINTING = ("validate", "explain", "formats")


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden(case: Path, runner, tmp_path: Path, update_goldens: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if case in OWN_CASES:  # pinned as neoconv ships: its own formats only (explain lists every format)
        with own_formats_only():
            _run_case(case, runner, tmp_path, update_goldens, monkeypatch)
    else:
        _run_case(case, runner, tmp_path, update_goldens, monkeypatch)


def _run_case(case: Path, runner, tmp_path: Path, update_goldens: bool, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    text = (case / "cmd.txt").read_text().strip()
    if "{corpus}" in text and not CORPUS.is_dir():
        pytest.skip(f"the shared corpus {CORPUS} is not present (it lives beside the checkout)")
    monkeypatch.chdir(ROOT)
    if case not in OWN_CASES:
        text = text.replace("{format}", _relative(_format_folder(case)))
    args = shlex.split(
        text.replace("{case}", _relative(case))
        .replace("{corpus}", _relative(CORPUS))
        .replace("{fixtures}", _relative(FIXTURES))
    )
    env = {"COLUMNS": "100", "NO_COLOR": None}  # the width of a pipe: the same wherever the tests run
    if args[0] in PRINTING:
        result = runner.invoke(main, args, env=env)
        produced = {
            "expected.stdout": _portable(result.stdout, case),
            "expected.stderr": _portable(result.stderr, case),
            "expected.exit": f"{result.exit_code}\n",
        }
        _compare(case, produced, update_goldens)
        return
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    result = runner.invoke(main, args + ["-o", str(out), "--report", str(report)], env=env)
    produced = {
        "expected.out": out.read_text() if out.exists() else "",
        "expected.report.json": _portable(report.read_text(), case) if report.exists() else "",
        "expected.stderr": _portable(result.stderr, case),
        "expected.exit": f"{result.exit_code}\n",
    }
    if (case / "tty").exists():  # the report as a terminal shows it: the table, in colour
        shown = runner.invoke(main, args + ["-o", str(tmp_path / "again"), "--color", "always"], env=env)
        produced["expected.tty"] = _portable(shown.stderr, case)
    for side in sorted(tmp_path.iterdir()):
        if side not in (out, report, tmp_path / "again") and side.is_file() and not side.name.startswith("again."):
            produced[f"expected.side.{side.name}"] = side.read_text()
    if update_goldens:
        for stale in case.glob("expected.side.*"):
            if stale.name not in produced:
                stale.unlink()
    pinned = {p.name for p in case.glob("expected.side.*")}
    _compare(case, produced, update_goldens)
    if not update_goldens:
        assert pinned <= set(produced), f"{case.name}: no longer writes {sorted(pinned - set(produced))}"


def _compare(case: Path, produced: dict[str, str], update_goldens: bool) -> None:
    for name, content in produced.items():
        path = case / name
        if update_goldens:
            path.write_text(content)
        else:
            assert path.exists(), f"{path} missing: run pytest --update-goldens"
            expected = path.read_text()
            if name == "expected.tty" and content != expected and _older_rich():
                content, expected = _words(content), _words(expected)  # rich's layout, not neoconv's words
            assert content == expected, f"{case.name}/{name} differs (pytest --update-goldens to accept)"


def _older_rich() -> bool:
    """The tty goldens pin rich 14 and later's layout; older releases (setup.cfg allows 13) fold the
    table's columns a character apart."""
    from importlib.metadata import version

    return int(version("rich").split(".")[0]) < 14


def _words(text: str) -> list[str]:
    """A terminal rendering's words and colours in order, without its layout (padding, folds, rules)."""
    return [word for word in re.split(r"\s+", text) if word and not re.fullmatch(r"─+", word)]


def test_every_pair_has_a_golden_case() -> None:
    from neoconv.knowledge.registry import pairs

    missing = [f"{a}2{b}" for a, b in pairs() if f"{a}2{b}" not in PAIRS]
    assert not missing, f"pairs without a transcript under fixtures/cases/ (a test-only format: its cases/): {missing}"
