"""--strict, --fail-on and --baseline: which report entries fail a run, for translations and batch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neoconv.cli import main
from neoconv.core.errors import UsageError
from neoconv.services.policy import load_baseline, parse_fail_on
from neoconv.core.report import Status

ARGS = ["--world-size", "8", "--set", "model.vocab_size=50304", "-q"]


def _run(runner, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(main, list(args))


def test_strict_fails_on_lossy_unknown_missing_not_on_dropped(runner, pythia160m: Path, tmp_path: Path) -> None:
    out, report = tmp_path / "p.yaml", tmp_path / "r.json"
    assert _run(runner, "neox2cerebras", str(pythia160m), "-o", str(out), "--report", str(report), *ARGS).exit_code == 0
    statuses = {e["status"] for e in json.loads(report.read_text())["entries"]}
    assert {"lossy", "dropped", "missing"} <= statuses  # missing: the data Model Zoo needs
    assert _run(runner, "neox2cerebras", str(pythia160m), "-o", str(out), "--strict", *ARGS).exit_code == 1
    # every lossy and missing entry accepted: the dropped performance knobs no longer fail --strict ...
    accepted = tmp_path / "lossy.json"
    accepted.write_text(json.dumps([{"status": "lossy"}, {"status": "missing", "fields": []}]))
    strict = _run(
        runner, "neox2cerebras", str(pythia160m), "-o", str(out), "--strict", "--baseline", str(accepted), *ARGS
    )
    assert strict.exit_code == 0
    # ... unless asked for
    dropped = _run(
        runner,
        "neox2cerebras",
        str(pythia160m),
        "-o",
        str(out),
        "--fail-on",
        "dropped",
        "--baseline",
        str(accepted),
        *ARGS,
    )
    assert dropped.exit_code == 1


def test_a_baseline_report_fails_only_new_losses(runner, pythia160m: Path, tmp_path: Path) -> None:
    out, report = tmp_path / "p.yaml", tmp_path / "accepted.json"
    first = _run(runner, "neox2cerebras", str(pythia160m), "-o", str(out), "--report", str(report), "--strict", *ARGS)
    assert first.exit_code == 1
    again = _run(runner, "neox2cerebras", str(pythia160m), "-o", str(out), "--strict", "--baseline", str(report), *ARGS)
    assert again.exit_code == 0
    # sliding-window attention is a new loss (Cerebras has dense attention only): it fails
    changed = tmp_path / "windowed.yml"
    changed.write_text(pythia160m.read_text().replace('[[["flash"], 12]]', '[[["local"], 12]]'))
    new = _run(runner, "neox2cerebras", str(changed), "-o", str(out), "--strict", "--baseline", str(report), *ARGS[:-1])
    assert new.exit_code == 1 and "attention_config" in new.stderr


def test_batch_fails_on_what_the_policy_says(runner, pythia160m: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.yml").write_text(pythia160m.read_text())
    accepted = tmp_path / "accepted.json"
    accepted.write_text(json.dumps({"entries": [{"status": "lossy"}, {"status": "missing"}]}))
    common = ["batch", "neox2cerebras", str(src), "-o", str(tmp_path / "out"), "-j", "1", "--world-size", "8"]
    strict = _run(runner, *common, "--strict")
    assert strict.exit_code == 1 and "strict   a.yml:" in strict.stderr and "lossy" in strict.stderr
    assert _run(runner, *common, "--strict", "--baseline", str(accepted)).exit_code == 0
    assert _run(runner, *common, "--fail-on", "dropped", "--baseline", str(accepted)).exit_code == 1
    assert _run(runner, *common).exit_code == 0  # no policy: a translated tree is a success


def test_a_batch_baseline_entry_may_name_the_files_it_accepts(runner, pythia160m: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "pythia").mkdir(parents=True)
    (src / "pythia" / "a.yml").write_text(pythia160m.read_text())
    (src / "b.yml").write_text(pythia160m.read_text())
    accepted = tmp_path / "accepted.json"
    common = [
        "batch",
        "neox2cerebras",
        str(src),
        "-o",
        str(tmp_path / "out"),
        "-j",
        "1",
        "--world-size",
        "8",
        "--strict",
        "--baseline",
        str(accepted),
    ]
    accepted.write_text(json.dumps([{"status": "lossy", "file": "pythia/*.yml"}, {"status": "missing"}]))
    scoped = _run(runner, *common)
    # b.yml's losses are not accepted there: it alone fails
    assert scoped.exit_code == 1 and "strict   b.yml:" in scoped.stderr and "pythia/a.yml:" not in scoped.stderr
    accepted.write_text(json.dumps([{"status": "lossy", "file": "*.yml"}, {"status": "missing"}]))
    assert _run(runner, *common).exit_code == 0  # fnmatch: * crosses folders, as in the batch summary's names
    accepted.write_text(json.dumps([{"status": "lossy", "file": 3}]))
    assert _run(runner, *common).exit_code == 2


def test_bad_policy_options_are_usage_errors(runner, pythia160m: Path, tmp_path: Path) -> None:
    bad = _run(runner, "neox2cerebras", str(pythia160m), "--fail-on", "lossy,sloppy")
    assert bad.exit_code == 2 and "--fail-on" in bad.stderr and "sloppy" in bad.stderr
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    out = tmp_path / "never.yaml"
    bad = _run(runner, "neox2cerebras", str(pythia160m), "-o", str(out), "--baseline", str(junk))
    assert bad.exit_code == 2 and "not JSON" in bad.stderr and not out.exists()
    junk.write_text(json.dumps([{"fields": ["model.norm"]}]))
    with pytest.raises(UsageError, match="needs a report status"):
        load_baseline(str(junk))


def test_fail_on_parsing() -> None:
    assert parse_fail_on(None, strict=True) == {Status.LOSSY, Status.UNKNOWN, Status.MISSING}
    assert parse_fail_on(None, strict=False) == frozenset()
    assert parse_fail_on("dropped, lossy", strict=False) == {Status.DROPPED, Status.LOSSY}


def test_no_verify_skips_reading_the_output_back(runner, pythia160m: Path, tmp_path: Path) -> None:
    checked, fast = tmp_path / "checked.json", tmp_path / "fast.json"
    base = ["neox2deepspeed", str(pythia160m), "-o", str(tmp_path / "ds.json"), *ARGS]
    assert _run(runner, *base, "--report", str(checked)).exit_code == 0
    assert _run(runner, *base, "--report", str(fast), "--no-verify").exit_code == 0
    target = json.loads(checked.read_text())["target"]
    assert target["verified"] is True and target["added_by_verification"] == 0
    assert "verified" not in json.loads(fast.read_text())["target"]
