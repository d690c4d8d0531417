"""Batch migration over a copy of the real NeoX corpus with broken files mixed in."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neoconv.batch import BatchOptions, run_batch
from neoconv.cli import main

from conftest import UNRUNNABLE, corpus_dir

BROKEN = {
    "broken/invalid.yml": "num_layers: [1, 2\n",
    "broken/wrong_type.yml": "num_layers: 2\nhidden_size: big\nnum_attention_heads: 4\n",
    "broken/not_utf8.yml": b"num_layers: 2\nname: \xff\xfe\n",
    "broken/top_list.yml": "- num_layers\n- 2\n",
}


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def neox_tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(corpus_dir("neox"), src)
    for rel, content in BROKEN.items():
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    (src / ".hidden").mkdir()
    (src / ".hidden" / "ignored.yml").write_text("num_layers: 2\n")
    return src


def test_batch_translates_good_files_lists_bad_ones_and_leaves_source_alone(
    runner, neox_tree: Path, tmp_path: Path
) -> None:
    before = tree_digest(neox_tree)
    out = tmp_path / "out"
    result = runner.invoke(
        main, ["batch", "neox2cerebras", str(neox_tree), "-o", str(out), "-j", "1", "--world-size", "8"]
    )
    assert result.exit_code == 1  # the broken files failed
    assert tree_digest(neox_tree) == before
    summary = json.loads((out / "neoconv-report.json").read_text())
    by = {f["source"]: f for f in summary["files"]}
    for rel in BROKEN:
        assert by[rel]["status"] == "failed" and by[rel]["error"], rel
    assert "not UTF-8" in by["broken/not_utf8.yml"]["error"]
    assert "top level is a list" in by["broken/top_list.yml"]["error"]
    assert by["local_setup.yml"]["status"] == "skipped" and "fragment" in by["local_setup.yml"]["reason"]
    assert by["pythia/160M.yml"]["status"] == "translated" and by["pythia/160M.yml"]["output"].endswith(
        "pythia/160M.yaml"
    )
    assert (out / "pythia" / "160M.yaml").is_file() and (out / "20B.yaml").is_file()
    assert not any(".hidden" in f for f in by)
    translated = [f for f in summary["files"] if f["status"] == "translated"]
    assert len(translated) >= 40 and all(f["counts"] for f in translated)
    assert "neoconv batch:" in result.stderr and "failed   broken/invalid.yml" in result.stderr
    # the last line counts every file, not only the ones listed above it
    totals = summary["totals"]
    assert result.stderr.splitlines()[-1] == "neoconv batch: " + ", ".join(
        f"{n} {s}" for s, n in sorted(totals.items())
    )
    # NeoX's own mistral/7B.yml cannot run (a 4779-wide gate, a 4778-wide output): refused, with the fix
    unrunnable = [k for k in UNRUNNABLE if k.startswith("neox/")]
    for rel in unrunnable:
        entry = by[rel.removeprefix("neox/")]
        assert entry["status"] == "failed" and UNRUNNABLE[rel] in entry["error"]
    # NeoX's all-Mamba and all-RWKV models have no Cerebras counterpart: refused, file by file
    no_attention = [f for f, e in by.items() if "holds decoder-only transformer" in e.get("error", "")]
    assert no_attention and all(f.split("/")[0] in ("mamba", "rwkv") for f in no_attention), no_attention
    assert totals["translated"] == len(translated)
    assert totals["failed"] == len(BROKEN) + len(unrunnable) + len(no_attention)


def test_parallel_output_identical_and_rerun_identical(neox_tree: Path, tmp_path: Path) -> None:
    opts = dict(translate_options={"world_size": 8})
    run_batch(str(neox_tree), str(tmp_path / "j1"), BatchOptions("neox", "cerebras", jobs=1, **opts))
    run_batch(str(neox_tree), str(tmp_path / "j2"), BatchOptions("neox", "cerebras", jobs=2, **opts))
    first = tree_digest(tmp_path / "j1")
    assert first == tree_digest(tmp_path / "j2")
    run_batch(str(neox_tree), str(tmp_path / "j1"), BatchOptions("neox", "cerebras", jobs=1, **opts))
    assert tree_digest(tmp_path / "j1") == first


def test_with_merges_local_setup_and_check_mode(runner, neox_tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    setup = str(neox_tree / "local_setup.yml")
    args = ["batch", "neox2cerebras", str(neox_tree / "pythia"), "-o", str(out), "--with", setup, "-q"]
    result = runner.invoke(main, args)
    by = {f["source"]: f for f in json.loads((out / "neoconv-report.json").read_text())["files"]}
    # NeoX refuses these pairs (a key in both files), the others translate with local_setup merged in
    assert "NeoX refuses a key given in two files" in by["14M.yml"]["error"]
    assert by["160M.yml"]["status"] == "translated"
    assert "model_dir: checkpoints" in (out / "160M.yaml").read_text()  # `save` from local_setup.yml
    result = runner.invoke(main, args + ["--check"])
    assert result.exit_code == 1  # only because 14M/31M fail; nothing would change
    summary_before = (out / "neoconv-report.json").read_text()
    (out / "160M.yaml").write_text("stale\n")
    result = runner.invoke(main, args[:-1] + ["--check"])
    assert "changed  160M.yml" in result.stderr
    assert (out / "160M.yaml").read_text() == "stale\n" and (out / "neoconv-report.json").read_text() == summary_before


def test_never_writes_into_the_source_tree(runner, neox_tree: Path) -> None:
    result = runner.invoke(main, ["batch", "neox2cerebras", str(neox_tree), "-o", str(neox_tree / "out")])
    assert result.exit_code == 2 and "never written" in result.stderr
    assert not (neox_tree / "out").exists()


def test_in_place_keeps_a_backup(runner, tmp_path: Path, pythia160m: Path) -> None:
    src = tmp_path / "cfgs"
    src.mkdir()
    first = runner.invoke(main, ["neox2cerebras", str(pythia160m), "-o", str(src / "a.yaml"), "-q"])
    assert first.exit_code == 0
    original = (src / "a.yaml").read_text()
    (src / "same.yaml").write_text(original)
    (src / "same.yaml").chmod(0o640)
    result = runner.invoke(
        main, ["batch", "cerebras2cerebras", str(src), "--in-place", "-q", "-j", "1", "--exclude", "a.yaml"]
    )
    assert result.exit_code == 0, result.stderr
    # a file the migration leaves as it is is not rewritten and not backed up
    assert sorted(p.name for p in src.iterdir()) == ["a.yaml", "neoconv-report.json", "same.yaml"]
    assert (src / "same.yaml").read_text() == original and (src / "same.yaml").stat().st_mode & 0o777 == 0o640
    result = runner.invoke(
        main, ["batch", "cerebras2cerebras", str(src), "--in-place", "-q", "-j", "1", "--layout", "trainer"]
    )
    assert result.exit_code == 0, result.stderr
    assert (src / "a.yaml.bak").read_text() == original and "trainer:" in (src / "a.yaml").read_text()
    migrated = (src / "a.yaml").read_text()
    again = runner.invoke(
        main, ["batch", "cerebras2cerebras", str(src), "--in-place", "-j", "1", "--layout", "trainer"]
    )
    assert again.exit_code == 0 and "2 unchanged" in again.stderr  # nothing left to change: no new backups
    assert (src / "a.yaml.bak").read_text() == original and (src / "a.yaml").read_text() == migrated
    result = runner.invoke(main, ["batch", "cerebras2cerebras", str(src), "--no-backup", "-o", str(tmp_path / "x")])
    assert result.exit_code == 2


@pytest.mark.slow
def test_interrupted_run_leaves_no_partial_file(neox_tree: Path, tmp_path: Path) -> None:
    big = tmp_path / "big"
    for i in range(6):
        shutil.copytree(neox_tree, big / f"copy{i}")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "neoconv", "batch", "neox2cerebras", str(big), "-o", str(out), "-j", "1", "-q"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 20
    while time.time() < deadline and not (out.exists() and sum(1 for _ in out.rglob("*.yaml")) >= 5):
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert b"Traceback" not in err
    reference = tmp_path / "ref"
    run_batch(str(big), str(reference), BatchOptions("neox", "cerebras", jobs=1))
    written = [p for p in out.rglob("*") if p.is_file() and p.name != "neoconv-report.json"]
    assert written, "the run was interrupted before writing anything: make the tree bigger"
    for path in written:
        assert not path.name.endswith(".tmp"), f"partial file left behind: {path}"
        assert path.read_bytes() == (reference / path.relative_to(out)).read_bytes()


def test_replace_file_keeps_permissions_refuses_symlinks_and_leaves_no_temp(tmp_path: Path) -> None:
    from neoconv.core.errors import OutputError
    from neoconv.io.outputs import replace_file

    new = tmp_path / "new.yaml"
    replace_file(str(new), "a: 1\n")
    umask = os.umask(0)
    os.umask(umask)
    assert new.read_text() == "a: 1\n" and new.stat().st_mode & 0o777 == 0o666 & ~umask
    kept = tmp_path / "kept.yaml"
    kept.write_text("old\n")
    kept.chmod(0o640)
    replace_file(str(kept), "new\n")
    assert kept.read_text() == "new\n" and kept.stat().st_mode & 0o777 == 0o640
    # a symlink planted at the output is replaced, never written through
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "planted.yaml").symlink_to(victim)
    replace_file(str(tmp_path / "planted.yaml"), "x: 1\n")
    assert victim.read_text() == "precious\n" and (tmp_path / "planted.yaml").read_text() == "x: 1\n"
    assert not (tmp_path / "planted.yaml").is_symlink()
    with pytest.raises(OutputError, match="cannot write here"):
        replace_file(str(tmp_path / "missing" / "out.yaml"), "x: 1\n")
    (tmp_path / "folder.yaml").mkdir()
    with pytest.raises(OutputError):
        replace_file(str(tmp_path / "folder.yaml"), "x: 1\n")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_folder_that_cannot_be_read_is_a_failure_not_a_silence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    (src / "ok").mkdir(parents=True)
    (src / "ok" / "a.yml").write_text("num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\n")
    (src / "locked").mkdir()
    real_scandir = os.scandir

    def scandir_with_a_locked_folder(path):  # type: ignore[no-untyped-def]  # root reads every folder: simulate one it cannot
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir_with_a_locked_folder)
    results, summary = run_batch(str(src), str(tmp_path / "out"), BatchOptions("neox", "cerebras", jobs=1))
    assert summary["totals"] == {"translated": 1, "failed": 1}
    (locked,) = [r for r in results if r.status == "failed"]
    assert locked.source == "locked/" and "cannot read this folder (Permission denied)" in locked.error
