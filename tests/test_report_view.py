"""The report on the terminal (issue 18): grouped by status, most severe first, identical reasons
folded into one row, wrapped to the width; a rich table on a terminal (colour unless NO_COLOR),
plain lines when piped."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from neoconv import translate
from neoconv.core.report import Report, Status
from neoconv.cli.report_view import ORDER, plain, rows, terminal, use_terminal


@pytest.fixture(scope="module")
def report(
    pythia160m_path: Path = Path(__file__).resolve().parent.parent / "fixtures/inputs/neox/pythia-160m.yml",
) -> Report:
    return translate(pythia160m_path, "neox", "cerebras", world_size=8).report


def test_rows_go_by_severity_and_fold_identical_reasons(report: Report) -> None:
    shown = rows(report.entries)
    statuses = [r.status for r in shown]
    assert statuses == sorted(statuses, key=ORDER.index) and statuses[0] == "missing"
    assert set(statuses) <= {"missing", "unknown", "lossy", "dropped", "defaulted"}  # the rest with -v
    zero = [r for r in shown if "performance only" in r.reason]
    assert len(zero) == 1 and zero[0].sources == ["zero_optimization.overlap_comm", "zero_optimization.cpu_offload"]
    every = rows(report.entries, verbose=True)
    assert sum(len(r.sources) or 1 for r in every) <= len(report.entries) and every[-1].status == "exact"


def test_plain_lines_start_with_their_status_and_fit_the_width(report: Report) -> None:
    text = plain(report, columns=80)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    firsts = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert set(firsts) <= {*ORDER, "neoconv:", "note:"}
    assert "dropped    zero_optimization.overlap_comm, zero_optimization.cpu_offload" in lines
    assert "\x1b" not in text and lines[-1].startswith("neoconv: ")


def test_terminal_table_is_wrapped_and_coloured_unless_told_not_to(report: Report) -> None:
    out = io.StringIO()
    terminal(report, color=True, columns=90, file=out)
    text = out.getvalue()
    assert "\x1b[1;31mmissing" in text  # missing in bold red
    assert max(len(re.sub(r"\x1b\[[0-9;]*m", "", line)) for line in text.splitlines()) <= 90
    out = io.StringIO()
    terminal(report, color=False, columns=90, file=out)
    assert "\x1b[3" not in out.getvalue() and "missing" in out.getvalue()


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_terminal(_Stream(True), "auto") == (True, True)
    assert use_terminal(_Stream(False), "auto") == (False, False)  # piped: plain text
    assert use_terminal(_Stream(False), "always") == (True, True)
    assert use_terminal(_Stream(True), "never") == (False, False)
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_terminal(_Stream(True), "auto") == (True, False)


def test_an_entry_without_a_reason_is_never_folded() -> None:
    report = Report(entries=[])
    report.add("a", "x", Status.LOSSY)
    report.add("b", "x", Status.LOSSY)
    assert [r.sources for r in rows(report.entries)] == [["a"], ["b"]]
