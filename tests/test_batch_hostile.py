"""Batch migration under hostile trees and faults (issue 13).

Nothing outside SRC_DIR is read or written unless asked; two sources never silently share an
output; a bad invocation is exit 2 before any work; a FIFO never blocks the run; the workers die
with their parent; a summary that cannot be written never stops the translations.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from neoconv.batch import SUMMARY_NAME, BatchOptions, run_batch
from neoconv.batch.summary import SummaryWriter as _SummaryWriter
from neoconv.cli import main

BASE = """\
num_layers: 2
hidden_size: 64
num_attention_heads: 4
seq_length: 128
max_position_embeddings: 128
pos_emb: rotary
"""


def digest(root: Path) -> dict[str, str]:
    """Every entry under root (links not followed) with a hash of its bytes or where it points."""
    out: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            if path.is_symlink():
                out[str(path.relative_to(root))] = "-> " + os.readlink(path)
            elif path.is_file():
                out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                out[str(path.relative_to(root))] = "dir" if path.is_dir() else "special"
    return out


def one_error_line(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("neoconv: error: "), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return str(lines[0])


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """tmp/src with two configs, and tmp/outside that the source tree links into."""
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.yml").write_text(BASE)
    (src / "sub" / "b.yml").write_text(BASE.replace("num_layers: 2", "num_layers: 4"))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yml").write_text(BASE)
    return src


# ---- never outside SRC_DIR ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["-o", "--in-place"])
def test_symlinked_folders_are_never_followed(runner, tree: Path, tmp_path: Path, mode: str) -> None:
    (tree / "linked").symlink_to(tmp_path / "outside")
    (tree / "up").symlink_to("../..")  # the walk would read the whole parent tree, OUT included
    (tree / "far.yml").symlink_to(tmp_path / "outside" / "secret.yml")
    before = digest(tmp_path / "outside")
    args = ["batch", "neox2cerebras", str(tree), "-j", "1"] + (
        ["-o", str(tmp_path / "out")] if mode == "-o" else ["--in-place"]
    )
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.stderr
    assert digest(tmp_path / "outside") == before  # nothing written there
    root = tmp_path / "out" if mode == "-o" else tree
    summary = json.loads((root / SUMMARY_NAME).read_text())
    by = {f["source"]: f for f in summary["files"]}
    assert by["linked/"]["status"] == by["up/"]["status"] == by["far.yml"]["status"] == "skipped"
    assert "not followed" in by["linked/"]["reason"] and "outside SRC_DIR" in by["far.yml"]["reason"]
    assert {f for f, e in by.items() if e["status"] == "translated"} == {"a.yml", "sub/b.yml"}
    written = {p.relative_to(root).as_posix() for p in root.rglob("*.yaml")}
    assert written == {"a.yaml", "sub/b.yaml"}  # nothing under linked/ or up/
    assert "skipped  linked/: a symlink to a folder: not followed" in result.stderr


def test_a_symlinked_file_inside_the_tree_is_read_but_not_rewritten_in_place(
    runner, tree: Path, tmp_path: Path
) -> None:
    (tree / "alias.yml").symlink_to("a.yml")
    result = runner.invoke(main, ["batch", "neox2cerebras", str(tree), "-o", str(tmp_path / "out"), "-j", "1", "-q"])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "out" / "alias.yaml").read_text() == (tmp_path / "out" / "a.yaml").read_text().replace(
        "from a.yml", "from alias.yml"
    )
    result = runner.invoke(main, ["batch", "neox2cerebras", str(tree), "--in-place", "-j", "1"])
    assert result.exit_code == 0, result.stderr
    assert os.readlink(tree / "alias.yml") == "a.yml" and not (tree / "alias.yaml").exists()
    assert "skipped  alias.yml: a symlink: --in-place rewrites only regular files" in result.stderr


# ---- two sources, one output; sources inside OUT -------------------------------------------------


@pytest.mark.parametrize("mode", ["-o", "--in-place", "--check"])
def test_two_sources_for_one_output_are_refused_before_anything_is_written(
    runner, tree: Path, tmp_path: Path, mode: str
) -> None:
    (tree / "m.yml").write_text(BASE)
    (tree / "m.yaml").write_text(BASE.replace("hidden_size: 64", "hidden_size: 128"))
    before = digest(tmp_path)
    args = {
        "-o": ["-o", str(tmp_path / "out")],
        "--in-place": ["--in-place"],
        "--check": ["-o", str(tmp_path / "out"), "--check"],
    }[mode]
    line = one_error_line(runner.invoke(main, ["batch", "neox2cerebras", str(tree), *args]))
    assert "m.yaml and m.yml would both be written to m.yaml" in line
    assert digest(tmp_path) == before  # nothing written, the original m.yaml kept


def test_src_inside_out_never_overwrites_sources(runner, tmp_path: Path) -> None:
    out = tmp_path / "out"
    src = out / "cfg"
    (src / "cfg").mkdir(parents=True)
    (src / "m.yaml").write_text("precious: the user's own file\n")
    (src / "a.yml").write_text(BASE)
    (src / "cfg" / "m.yml").write_text(BASE)  # its output out/cfg/m.yaml is the source tree's m.yaml
    before = digest(tmp_path)
    line = one_error_line(runner.invoke(main, ["batch", "neox2cerebras", str(src), "-o", str(out), "-j", "1"]))
    assert "cfg/m.yml would be written to" in line and "inside SRC_DIR" in line
    assert digest(tmp_path) == before
    (src / "cfg" / "m.yml").unlink()  # nothing lands in the source tree: allowed
    result = runner.invoke(main, ["batch", "neox2cerebras", str(src), "-o", str(out), "-j", "1", "-q"])
    assert result.exit_code == 0, result.stderr  # m.yaml has no model: skipped as a fragment
    assert (out / "a.yaml").is_file() and (src / "m.yaml").read_text() == "precious: the user's own file\n"


def test_out_is_a_file(runner, tree: Path, tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file\n")
    line = one_error_line(runner.invoke(main, ["batch", "neox2cerebras", str(tree), "-o", str(tmp_path / "taken")]))
    assert "not a folder (a file is there)" in line
    assert (tmp_path / "taken").read_text() == "a file\n"


# ---- temp files --------------------------------------------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_only_neoconvs_own_stale_temps_are_swept(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    users = [".notes.tmp", ".a.yaml.tmp", f".a.yaml.{_dead_pid()}.tmp"]  # the old naming, and any user's
    live = f".a.yaml.neoconv-{os.getpid()}-abcdefgh.tmp"  # another run, still writing
    dead = f".a.yaml.neoconv-{_dead_pid()}-abcdefgh.tmp"  # a run killed with -9
    for name in users + [live, dead]:
        (out / name).write_text("x\n")
    run_batch(str(tree), str(out), BatchOptions("neox", "cerebras", jobs=1))
    left = {p.name for p in out.iterdir() if p.name.endswith(".tmp")}
    assert left == set(users) | {live}


def test_two_runs_on_one_out_do_not_share_a_temp_file(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    first = _SummaryWriter(out / SUMMARY_NAME, "neox2cerebras")  # a first run, still going
    results, summary = run_batch(str(tree), str(out), BatchOptions("neox", "cerebras", jobs=1))  # a second run
    assert summary["totals"] == {"translated": 2}
    first.close({"translated": 0})  # the first run finishes after it: its own summary, no crash
    assert not first.error
    assert json.loads((out / SUMMARY_NAME).read_text())["totals"] == {"translated": 0}
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_a_summary_that_cannot_be_written_never_stops_the_run(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(80):  # the summary outgrows the limit, each output stays under it
        (src / f"m{i:02d}.yml").write_text(BASE)
    out = tmp_path / "out"

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG, as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000))

    cmd = [sys.executable, "-m", "neoconv", "batch", "neox2cerebras", str(src), "-o", str(out), "-j", "1"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120, preexec_fn=small_disk)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert len(list(out.glob("m*.yaml"))) == 80  # every file still translated
    assert f"failed   {out / SUMMARY_NAME}: cannot write it (File too large)" in result.stderr
    assert not (out / SUMMARY_NAME).exists() and not [p for p in out.iterdir() if p.name.endswith(".tmp")]


# ---- what is not a regular file ------------------------------------------------------------------


def test_a_fifo_in_the_tree_never_blocks_the_run(tree: Path, tmp_path: Path) -> None:
    os.mkfifo(tree / "pipe.yml")
    cmd = [sys.executable, "-m", "neoconv", "batch", "neox2cerebras", str(tree), "-o", str(tmp_path / "out"), "-j", "1"]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("batch blocked on a FIFO")
    assert result.returncode == 0, result.stderr
    assert "skipped  pipe.yml: not a regular file (a FIFO): not read" in result.stderr
    assert (tmp_path / "out" / "a.yaml").is_file()


def test_an_output_path_taken_by_a_fifo_is_not_replaced(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "a.yaml")
    results, summary = run_batch(str(tree), str(out), BatchOptions("neox", "cerebras", jobs=1))
    (failed,) = [r for r in results if r.status == "failed"]
    assert failed.source == "a.yml" and "exists and is not a regular file; not replaced" in failed.error
    assert os.path.exists(out / "a.yaml") and not (out / "a.yaml").is_file()


# ---- bad invocations: exit 2 before any work ------------------------------------------------------


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--layout", "bogus"], "--layout bogus: cerebras layouts are legacy, trainer"),
        (["--with", "missing.yml"], "missing.yml: no such file"),
        (["--include", "*.nothing"], "no file under"),
        (["--set", "optim.betas=[0.9, 2]"], "--set optim.betas"),
    ],
)
def test_usage_errors_are_exit_2_before_any_work(
    runner, tree: Path, tmp_path: Path, extra: list[str], expected: str
) -> None:
    before = digest(tmp_path)
    line = one_error_line(
        runner.invoke(main, ["batch", "neox2cerebras", str(tree), "-o", str(tmp_path / "out"), *extra])
    )
    assert expected in line
    assert digest(tmp_path) == before  # not even OUT_DIR made


# ---- in place -------------------------------------------------------------------------------------


def test_in_place_backups_are_byte_copies(runner, tmp_path: Path, pythia160m: Path) -> None:
    src = tmp_path / "cfgs"
    src.mkdir()
    result = runner.invoke(main, ["neox2cerebras", str(pythia160m), "-o", str(src / "a.yaml"), "-q"])
    assert result.exit_code == 0
    original = (src / "a.yaml").read_bytes().replace(b"\n", b"\r\n")  # written on Windows
    (src / "a.yaml").write_bytes(original)
    (src / "a.yaml").chmod(0o640)
    result = runner.invoke(
        main, ["batch", "cerebras2cerebras", str(src), "--in-place", "-q", "-j", "1", "--layout", "trainer"]
    )
    assert result.exit_code == 0, result.stderr
    assert (src / "a.yaml.bak").read_bytes() == original
    assert b"trainer:\r\n" in (src / "a.yaml").read_bytes()  # the migration keeps the file's line endings
    assert (src / "a.yaml.bak").stat().st_mode & 0o777 == 0o640


# ---- what reaches the terminal ----------------------------------------------------------------------


def test_summary_lines_escape_control_characters_in_file_names(runner, tree: Path, tmp_path: Path) -> None:
    (tree / "evil\x1b[2J\x07.yml").write_text("num_layers: [\n")
    result = runner.invoke(main, ["batch", "neox2cerebras", str(tree), "-o", str(tmp_path / "out"), "-j", "1"])
    assert result.exit_code == 1
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "failed   evil\\x1b[2J\\x07.yml: " in result.stderr


# ---- VeOmni: one config.json per output -----------------------------------------------------------


def test_veomni_outputs_in_one_folder_get_their_own_config_json(runner, tree: Path, tmp_path: Path) -> None:
    (tree / "sub" / "b.yml").rename(tree / "b.yml")
    out = tmp_path / "out"
    result = runner.invoke(main, ["batch", "neox2veomni", str(tree), "-o", str(out), "-j", "1", "-q"])
    assert result.exit_code == 0, result.stderr
    for stem, layers in (("a", 2), ("b", 4)):
        document = yaml.safe_load((out / f"{stem}.yaml").read_text())
        assert document["model"]["config_path"] == f"{stem}.config.json"
        assert json.loads((out / f"{stem}.config.json").read_text())["num_hidden_layers"] == layers
    assert not (out / "config.json").exists()
    # a file the run did not write is never overwritten: that file fails, the others translate
    (out / "a.config.json").write_text('{"model_type": "mine"}\n')
    (out / "a.yaml").write_text("# my own notes\n")
    results, _ = run_batch(str(tree), str(out), BatchOptions("neox", "veomni", jobs=1))
    (failed,) = [r for r in results if r.status == "failed"]
    assert failed.source == "a.yml" and "exists and was not written by neoconv" in failed.error
    assert (out / "a.config.json").read_text() == '{"model_type": "mine"}\n'


# ---- workers die with their parent ----------------------------------------------------------------


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.update(int(x) for x in text)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree from /proc")
def test_workers_die_with_their_parent(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for i in range(40):
        (src / f"d{i:02d}").mkdir(parents=True)
        for j in range(50):
            (src / f"d{i:02d}" / f"m{j:02d}.yml").write_text(BASE)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "neoconv", "batch", "neox2cerebras", str(src), "-o", str(out), "-j", "2", "-q"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    workers: set[int] = set()
    try:
        deadline = time.time() + 60
        while time.time() < deadline and (len(workers) < 2 or sum(1 for _ in out.rglob("*.yaml")) < 20):
            workers |= _children(proc.pid)
            time.sleep(0.05)
        assert len(workers) >= 2 and proc.poll() is None, "the run ended before the workers could be seen"
        proc.kill()  # SIGKILL: the parent gets no chance to clean up
        try:
            proc.communicate(timeout=10)  # EOF only once no worker holds the pipes any more
        except subprocess.TimeoutExpired:
            pytest.fail("a worker outlived its parent and holds the caller's pipes open")
        deadline = time.time() + 5
        while time.time() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.05)
        assert not [w for w in workers if _alive(w)]
    finally:
        for pid in workers:  # never leave a survivor behind, whatever failed
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        proc.kill()
