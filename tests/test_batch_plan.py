"""A batch's plan holds names, not paths (issue 26: memory flat from 1,000 to 10,000 files): a file
whose source and output paths follow from its name relative to SRC_DIR is planned as that name
alone, and its job is the same as if the paths were kept; the sources and outputs a run claims are
asked in place."""

from __future__ import annotations

import os
from pathlib import Path

from neoconv.batch import BatchOptions, _plan
from neoconv.batch.job import job_of


def test_a_plan_holds_each_files_name_and_its_job_follows_from_it(tmp_path: Path, pythia160m: Path) -> None:
    root, out = tmp_path / "src", tmp_path / "out"
    (root / "a" / "b").mkdir(parents=True)
    for rel in ("one.yml", "a/two.yml", "a/b/three.yaml"):
        (root / rel).write_text(pythia160m.read_text(encoding="utf-8"), encoding="utf-8")
    (root / "notes.txt").write_text("not a config", encoding="utf-8")
    opts = BatchOptions("neox", "cerebras", jobs=1)
    opts.out_root, opts.src_root = str(out), str(root)
    plan, claimed = _plan(root, str(out), opts, None, set())
    assert sorted(plan) == ["a/b/three.yaml", "a/two.yml", "one.yml"]  # (names: no paths kept per file)
    assert job_of(opts, "a/two.yml") == (os.path.join(root, "a/two.yml"), "a/two.yml", os.path.join(out, "a/two.yaml"))
    assert "a/two.yml" in claimed and "a/two.yaml" in claimed and "notes.txt" not in claimed
    assert job_of(opts, ("x", "y", "z")) == ("x", "y", "z")  # a job kept whole stays as it is


def test_a_batch_keeps_the_first_names_of_the_outputs_that_still_miss_values(tmp_path: Path, pythia160m: Path) -> None:
    """The summary names the first few and counts them all (each is in the per-file report)."""
    from neoconv.batch import human_summary, run_batch

    root = tmp_path / "src"
    root.mkdir()
    for i in range(5):
        (root / f"m{i}.yml").write_text(pythia160m.read_text(encoding="utf-8"), encoding="utf-8")
    opts = BatchOptions("neox", "cerebras", jobs=1)
    results, summary = run_batch(str(root), str(tmp_path / "out"), opts)
    assert summary["still_missing_count"] == 5 and summary["still_missing"] == ["m0.yaml", "m1.yaml", "m2.yaml"]
    text = human_summary(results, opts, summary["totals"], "", summary["still_missing"], "r.json", 5)
    assert "5 outputs still miss" in text and "m2.yaml and 2 more" in text
