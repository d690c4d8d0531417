"""A long batch on the terminal and in a log (issue 31): progress with the rate and the time left (plain
lines now and then when piped), skips grouped by reason, the outputs that still miss values and where
the per-file report is, and why the exit code is 1 also with -q."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any


from conftest import cli_runner, FIXTURES
from neoconv.cli import main
from neoconv.cli.progress import Progress, eta

NEOX = FIXTURES / "inputs" / "neox"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_terminal_shows_the_rate_and_the_time_left_in_place() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress(out, terminal=True, clock=clock, width=70)
    clock.now += 2.0
    progress(10, 50, "llama/llama-7b.yml")
    clock.now += 2.0
    progress(50, 50, "pythia/pythia-12b.yml")
    first, second = out.getvalue().split("\r")[1:]
    assert first.startswith("[10/50] 5.0 files/s, about 8 s left  llama/llama-7b.yml")
    assert len(first) == 70 and "\n" not in first
    assert second.startswith("[50/50] 12.5 files/s  pythia/pythia-12b.yml") and second.endswith("\n")


def test_a_long_name_is_cut_at_its_start_to_the_width() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress(out, terminal=True, clock=clock, width=60)
    clock.now += 1.0
    progress(1, 2, "a/very/long/folder/name/of/configs/model.yml")
    line = out.getvalue().removeprefix("\r")
    assert len(line) == 60 and line.rstrip().endswith("configs/model.yml") and "..." in line


def test_piped_it_is_a_plain_line_now_and_then() -> None:
    out, clock = io.StringIO(), Clock()
    progress = Progress(out, terminal=False, every=5.0, clock=clock)
    for done in range(1, 2001):
        clock.now += 0.01  # 100 files/s: 20 s in all
        progress(done, 2000, f"f{done}.yml")
    lines = out.getvalue().splitlines()
    assert len(lines) == 4  # at 5, 10, 15 and 20 s
    assert lines[0] == "neoconv batch: [500/2000] 100.0 files/s, about 15 s left"
    assert lines[-1] == "neoconv batch: [2000/2000] 100.0 files/s"
    assert "\r" not in out.getvalue()


def test_eta_reads_naturally() -> None:
    assert [eta(41), eta(185), eta(3720)] == ["41 s", "3 min 05 s", "1 h 02 min"]


def _tree(tmp_path: Path, fragments: int) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    for path in NEOX.glob("*.yml"):
        shutil.copy(path, src / path.name)
    for number in range(fragments):
        (src / f"fragment{number:02d}.yml").write_text('{"save": "checkpoints", "log_dir": "logs"}\n')
    return src


def _batch(*args: Any) -> Any:
    return cli_runner().invoke(main, ["batch", "neox2cerebras", *map(str, args)])


def test_skips_are_grouped_and_the_summary_names_what_is_left(tmp_path: Path) -> None:
    src, out = _tree(tmp_path, 12), tmp_path / "out"
    result = _batch(src, "-o", out, "--world-size", "8", "-j", "1")
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    skipped = [line for line in lines if line.startswith("skipped")]
    assert len(skipped) == 1
    assert skipped[0].startswith("skipped  12 paths: fragment: no model architecture")
    assert skipped[0].endswith(
        "(fragment00.yml, fragment01.yml, fragment02.yml and 9 more, each in the per-file report)"
    )
    assert lines[-3] == (
        "missing  2 outputs still miss values the run needs (their # MISSING: lines and report entries "
        "name the --set that gives each): llama-1b.yaml, pythia-160m.yaml"
    )
    assert lines[-2] == f"neoconv batch: the per-file report is {out / 'neoconv-report.json'}"
    assert lines[-1] == "neoconv batch: 12 skipped, 2 translated"
    given = _batch(
        src,
        "-o",
        out,
        "--world-size",
        "8",
        "--set",
        "model.vocab_size=50304",
        "--set",
        "cerebras:train_input.data_dir=./data",
        "--set",
        "cerebras:train_input.data_processor=P",
    )
    assert not any(line.startswith("missing") for line in given.stderr.splitlines()), given.stderr


def test_a_few_skips_keep_their_own_lines(tmp_path: Path) -> None:
    src = _tree(tmp_path, 3)
    result = _batch(src, "-o", tmp_path / "out", "--world-size", "8")
    skipped = [line for line in result.stderr.splitlines() if line.startswith("skipped")]
    assert [line.split(":")[0] for line in skipped] == [f"skipped  fragment0{n}.yml" for n in range(3)]


def test_strict_says_why_also_quietly(tmp_path: Path) -> None:
    src = _tree(tmp_path, 0)
    result = _batch(src, "-o", tmp_path / "out", "--world-size", "8", "--strict", "-q")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "neoconv batch: exit 1: 2 files have entries that fail --strict (lossy, unknown, missing)"
    ]
