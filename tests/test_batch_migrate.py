"""Migrations a reviewer can read (issue 17): same-format translations keep the source's comments
and formatting (batch and single), --check --diff, --prune, --in-place that never reads its own
outputs and backs up only what changes, folder patterns, an interrupted batch that says what it
wrote and completes on a re-run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from neoconv.cli import main

from conftest import FIXTURES

ROOT = Path(__file__).resolve().parent.parent
PRESERVE = FIXTURES / "preserve"


def _comments(text: str) -> list[str]:
    """Every comment, on a line of its own or after a value (the fixtures quote no '#')."""
    return [line[line.index("#") :].strip() for line in text.splitlines() if "#" in line]


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    src = tmp_path / "cfgs"
    (src / "gpt3").mkdir(parents=True)
    shutil.copy(PRESERVE / "cerebras-legacy.yaml", src / "gpt3" / "111m.yaml")
    shutil.copy(PRESERVE / "cerebras-legacy.yaml", src / "small.yaml")
    return src


def test_a_same_format_migration_keeps_comments_by_default_and_says_so(runner, tmp_path: Path) -> None:
    source = PRESERVE / "veomni-flat.yaml"
    out, report = tmp_path / "nested.yaml", tmp_path / "r.json"
    result = runner.invoke(
        main, ["veomni2veomni", str(source), "--layout", "nested", "-o", str(out), "--report", str(report)]
    )
    assert result.exit_code == 0, result.stderr
    assert _comments(source.read_text())[:2] == _comments(out.read_text())[:2]  # the header survives
    assert set(_comments(source.read_text())) <= set(_comments(out.read_text()))
    assert json.loads(report.read_text())["target"]["formatting"] == {"kept": True}
    assert "comments and formatting are kept" in result.stderr
    plain = runner.invoke(main, ["veomni2veomni", str(source), "--layout", "nested", "-o", str(out), "--plain", "-q"])
    assert plain.exit_code == 0 and "Owner: training infra" not in out.read_text()


def test_the_report_says_why_formatting_could_not_be_kept(runner, tmp_path: Path) -> None:
    source = tmp_path / "flow.yaml"  # a whole document on one line: no line of its own to keep per key
    source.write_text(
        "{model: {hidden_size: 64, num_hidden_layers: 2, num_heads: 4, max_position_embeddings: 128, "
        "vocab_size: 100}, train_input: {batch_size: 8}}\n"
    )
    out, report = tmp_path / "t.yaml", tmp_path / "r.json"
    result = runner.invoke(
        main, ["cerebras2cerebras", str(source), "--layout", "trainer", "-o", str(out), "--report", str(report)]
    )
    formatting = json.loads(report.read_text())["target"]["formatting"]
    assert result.exit_code == 0 and formatting["kept"] is False and formatting["why"], result.stderr
    assert f"wrote the plain layout, not the source's formatting: {formatting['why']}" in result.stderr


def test_batch_migrates_keeping_comments_and_check_diff_shows_the_change(runner, legacy: Path, tmp_path: Path) -> None:
    before = {p: p.read_text() for p in legacy.rglob("*.yaml")}
    out = tmp_path / "out"
    check = runner.invoke(
        main,
        [
            "batch",
            "cerebras2cerebras",
            str(legacy),
            "-o",
            str(out),
            "--layout",
            "trainer",
            "--check",
            "--diff",
            "-j",
            "1",
        ],
    )
    assert check.exit_code == 1 and not out.exists()
    assert "--- /dev/null\n+++ b/gpt3/111m.yaml\n" in check.stdout and "+++ b/small.yaml" in check.stdout
    result = runner.invoke(
        main, ["batch", "cerebras2cerebras", str(legacy), "-o", str(out), "--layout", "trainer", "-j", "1"]
    )
    assert result.exit_code == 0, result.stderr
    migrated = (out / "gpt3" / "111m.yaml").read_text()
    kept = sorted(c for c in _comments(before[legacy / "gpt3" / "111m.yaml"]) if c != "# dropped by the trainer layout")
    assert sorted(_comments(migrated)) == kept and "trainer:" in migrated  # only the removed key's comment went
    clean = runner.invoke(
        main, ["batch", "cerebras2cerebras", str(legacy), "-o", str(out), "--layout", "trainer", "--check", "--diff"]
    )
    assert clean.exit_code == 0 and clean.stdout == ""
    (out / "small.yaml").write_text(migrated.replace("hidden_size: 768", "hidden_size: 1024"))
    stale = runner.invoke(
        main, ["batch", "cerebras2cerebras", str(legacy), "-o", str(out), "--layout", "trainer", "--check", "--diff"]
    )
    assert stale.exit_code == 1
    assert "--- a/small.yaml\n+++ b/small.yaml\n" in stale.stdout
    assert "-            hidden_size: 1024\n+            hidden_size: 768\n" in stale.stdout
    assert runner.invoke(main, ["batch", "cerebras2cerebras", str(legacy), "-o", str(out), "--diff"]).exit_code == 2


def test_prune_removes_only_outputs_neoconv_recorded_whose_source_is_gone(runner, legacy: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["batch", "cerebras2neox", str(legacy), "-o", str(out), "-j", "1", "-q"]
    assert runner.invoke(main, args).exit_code == 0
    assert (out / "gpt3" / "111m.yml").exists() and (out / "small.yml").exists()
    (out / "mine.yml").write_text("a user's own file\n")
    (legacy / "small.yaml").unlink()
    check = runner.invoke(main, ["batch", "cerebras2neox", str(legacy), "-o", str(out), "--check"])
    assert check.exit_code == 1 and "orphaned small.yml: its source is gone: --prune removes it" in check.stderr
    kept = runner.invoke(main, args[:-1])  # without --prune: left alone
    assert kept.exit_code == 0 and (out / "small.yml").exists()
    pruned = runner.invoke(main, [*args[:-1], "--prune"])
    assert pruned.exit_code == 0, pruned.stderr
    assert not (out / "small.yml").exists() and (out / "mine.yml").exists() and (out / "gpt3" / "111m.yml").exists()
    assert "removed  small.yml: its source is gone" in pruned.stderr
    summary = json.loads((out / "neoconv-report.json").read_text())
    assert {
        "source": "small.yaml",
        "status": "removed",
        "output": "small.yml",
        "reason": "its source is gone",
    } in summary["files"]


def test_in_place_never_reads_its_own_outputs(runner, tmp_path: Path, pythia160m: Path) -> None:
    src = tmp_path / "neox"
    src.mkdir()
    shutil.copy(pythia160m, src / "m.yml")
    args = ["batch", "neox2cerebras", str(src), "--in-place", "-j", "1", "--world-size", "8"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.stderr
    assert sorted(p.name for p in src.iterdir()) == ["m.yaml", "m.yml", "neoconv-report.json"]
    again = runner.invoke(main, args)
    assert again.exit_code == 0, again.stderr
    summary = json.loads((src / "neoconv-report.json").read_text())
    by = {f["source"]: f for f in summary["files"]}
    assert by["m.yaml"] == {
        "source": "m.yaml",
        "status": "skipped",
        "reason": "written by an earlier --in-place run: not a source",
    }
    assert by["m.yml"]["status"] == "unchanged" and not (src / "m.yaml.bak").exists()


@pytest.mark.parametrize("pattern", ["rwkv", "rwkv/", "sub/rwkv"])
def test_exclude_and_include_name_folders_too(runner, tmp_path: Path, pythia160m: Path, pattern: str) -> None:
    src = tmp_path / "src"
    for rel in ("a.yml", "sub/rwkv/r.yml", "sub/rwkv/deep/d.yml", "sub/keep.yml", "llama/l.yml", "llama/notes.txt"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(pythia160m.read_text())
    out = tmp_path / "out"
    result = runner.invoke(
        main, ["batch", "neox2neox", str(src), "-o", str(out), "--exclude", pattern, "-j", "1", "-q"]
    )
    assert result.exit_code == 0, result.stderr
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.yml"))
    assert written == ["a.yml", "llama/l.yml", "sub/keep.yml"]
    only = tmp_path / "only"
    result = runner.invoke(
        main, ["batch", "neox2neox", str(src), "-o", str(only), "--include", "llama", "-j", "1", "-q"]
    )
    assert result.exit_code == 0 and sorted(p.relative_to(only).as_posix() for p in only.rglob("*.yml")) == [
        "llama/l.yml"
    ]


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_batch_says_what_it_wrote_and_a_rerun_completes_it(
    tmp_path: Path, pythia160m: Path, sig: int, jobs: str
) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    text = pythia160m.read_text()
    for i in range(400):
        (src / f"d{i // 50}").mkdir(parents=True, exist_ok=True)
        (src / f"d{i // 50}" / f"m{i:03}.yml").write_text(text.replace('"min_lr": 0.00006', f'"min_lr": {i + 1}.0e-7'))
    cmd = [sys.executable, "-m", "neoconv", "batch", "neox2neox", str(src), "-o", str(out), "-j", jobs, "-q"]
    # its own process group, as a terminal's Ctrl-C or a CI runner's SIGTERM reaches every process of the job
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT, start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and not (out.exists() and sum(1 for _ in out.rglob("*.yml")) >= 20):
        time.sleep(0.01)
    os.killpg(proc.pid, sig)
    _, err = proc.communicate(timeout=60)
    message = err.decode()
    assert proc.returncode == 130 and "Traceback" not in message, message
    summary = json.loads((out / "neoconv-report.json").read_text())
    done = [f for f in summary["files"] if f["status"] == "translated"]
    assert summary["interrupted"] is True and 20 <= len(done) < 400
    assert message == (
        f"neoconv: interrupted; wrote {len(done)} files before stopping; the partial report is "
        f"{out / 'neoconv-report.json'}; run the same command again to complete it\n"
    )
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.yml")) == sorted(f["output"] for f in done)
    rerun = subprocess.run(cmd, capture_output=True, cwd=ROOT, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads((out / "neoconv-report.json").read_text())
    assert "interrupted" not in summary and summary["totals"] == {"translated": 400}
    assert yaml.safe_load((out / "d7" / "m399.yml").read_text())["min_lr"] == 400.0e-7


def test_migrate_rewrites_files_of_its_format_in_place_and_leaves_others(runner, tmp_path: Path) -> None:
    legacy, flat, other = tmp_path / "gpt3.yaml", tmp_path / "qwen.yaml", tmp_path / "ci.yaml"
    shutil.copy(PRESERVE / "cerebras-legacy.yaml", legacy)
    shutil.copy(PRESERVE / "veomni-flat.yaml", flat)
    other.write_text("on: push\n")
    check = runner.invoke(
        main,
        [
            "migrate",
            "--format",
            "veomni",
            "--layout",
            "nested",
            "--check",
            "--diff",
            str(legacy),
            str(flat),
            str(other),
        ],
    )
    assert check.exit_code == 1 and f"+++ b/{flat}" in check.stdout and str(legacy) not in check.stdout
    assert flat.read_text() == (PRESERVE / "veomni-flat.yaml").read_text()
    done = runner.invoke(
        main, ["migrate", "--format", "veomni", "--layout", "nested", str(legacy), str(flat), str(other), "-v"]
    )
    assert (
        done.exit_code == 1
        and f"migrated {flat}" in done.stderr
        and f"skipped  {other}: not a veomni config" in done.stderr
    )
    assert "optimizer" in yaml.safe_load(flat.read_text())["train"] and not list(tmp_path.glob("*.bak"))
    assert runner.invoke(main, ["migrate", "--format", "veomni", "--layout", "nested", str(flat)]).exit_code == 0


def test_migrate_names_the_batch_check_for_a_pair(runner) -> None:
    result = runner.invoke(main, ["migrate", "neox2cerebras", "configs/neox"])
    assert result.exit_code == 2 and "neoconv batch --check neox2cerebras configs/neox" in result.stderr
