"""Hostile input and faults, round three (issue 32): never a write or a removal outside what the
user named, nothing from a file name, a value or a comment injected into an output, inputs that are
no regular file refused rather than waited on."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURES

from neoconv.batch import SUMMARY_NAME
from neoconv.cli import main
from neoconv.core.errors import NeoconvError, OutputError
from neoconv.io.confined import Confined

BASE = """\
num_layers: 2
hidden_size: 64
num_attention_heads: 4
seq_length: 128
max_position_embeddings: 128
pos_emb: rotary
"""
PYTHIA = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"


def _one_line(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("neoconv: error: "), result.stderr
    return str(lines[0])


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path, Path]:
    """src/ with two configs; out/ whose sub/ is a link to outside/, which holds a file of the same name."""
    src, out, outside = tmp_path / "src", tmp_path / "out", tmp_path / "outside"
    (src / "sub").mkdir(parents=True)
    (src / "a.yml").write_text(BASE)
    (src / "sub" / "b.yml").write_text(BASE.replace("num_layers: 2", "num_layers: 4"))
    outside.mkdir()
    (outside / "b.yaml").write_text("precious: true\n")
    out.mkdir()
    (out / "sub").symlink_to(outside, target_is_directory=True)
    return src, out, outside


# ---- writes and removals stay inside OUT -----------------------------------------------------------


def test_batch_never_writes_through_a_symlinked_folder_inside_out(runner, trees: tuple[Path, Path, Path]) -> None:
    src, out, outside = trees
    result = runner.invoke(main, ["batch", "neox2cerebras", str(src), "-o", str(out), "--world-size", "1"])
    assert result.exit_code == 1  # one file failed
    assert (outside / "b.yaml").read_text() == "precious: true\n"  # not replaced by a translation
    assert sorted(p.name for p in outside.iterdir()) == ["b.yaml"]  # and no temp file left there
    summary = json.loads((out / SUMMARY_NAME).read_text())
    failed = {f["source"]: f for f in summary["files"]}["sub/b.yml"]
    assert failed["status"] == "failed" and "symbolic link" in failed["error"]
    assert yaml.safe_load((out / "a.yaml").read_text())["model"]["num_hidden_layers"] == 2  # the rest was written


def test_prune_never_removes_through_a_symlinked_folder(runner, trees: tuple[Path, Path, Path]) -> None:
    src, out, outside = trees
    (out / "sub").unlink()
    assert runner.invoke(main, ["batch", "neox2cerebras", str(src), "-o", str(out), "--world-size", "1"]).exit_code == 0
    assert (out / "sub" / "b.yaml").is_file()
    # the source goes, and the output folder is swapped for a link to a folder holding a file of that name
    (src / "sub" / "b.yml").unlink()
    (out / "sub" / "b.yaml").unlink()
    (out / "sub").rmdir()
    (out / "sub").symlink_to(outside, target_is_directory=True)
    result = runner.invoke(main, ["batch", "neox2cerebras", str(src), "-o", str(out), "--world-size", "1", "--prune"])
    assert (outside / "b.yaml").read_text() == "precious: true\n"
    assert "removed" not in {f["status"] for f in json.loads((out / SUMMARY_NAME).read_text())["files"]}, result.stderr


def test_confined_refuses_paths_outside_its_root_and_links_inside_it(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "real").mkdir(parents=True)
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    tree = Confined(root)
    tree.replace(root / "real" / "deep" / "x.txt", "x")  # folders made inside
    assert (root / "real" / "deep" / "x.txt").read_text() == "x"
    for bad in (root / "link" / "x.txt", tmp_path / "elsewhere.txt", root / ".." / "outside" / "x.txt"):
        with pytest.raises(OutputError):
            tree.replace(bad, "x")
    assert list(outside.iterdir()) == [] and not (tmp_path / "elsewhere.txt").exists()
    (outside / "y.txt").write_text("y")
    with pytest.raises(OutputError, match="symbolic link"):
        tree.remove(root / "link" / "y.txt")
    assert tree.read(root / "link" / "y.txt") is None  # not even read through the link
    assert (outside / "y.txt").read_text() == "y"


def test_a_link_where_a_file_goes_is_replaced_not_written_through(tmp_path: Path) -> None:
    root, victim = tmp_path / "root", tmp_path / "victim.txt"
    root.mkdir()
    victim.write_text("keep")
    (root / "out.yaml").symlink_to(victim)
    Confined(root).replace(root / "out.yaml", "new")
    assert victim.read_text() == "keep" and not (root / "out.yaml").is_symlink()


def test_an_output_subfolder_that_cannot_be_made_is_one_line(runner, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root may write into a read-only folder")
    src, out = tmp_path / "src", tmp_path / "out"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "b.yml").write_text(BASE)
    out.mkdir()
    out.chmod(0o555)
    try:
        result = runner.invoke(main, ["batch", "neox2cerebras", str(src), "-o", str(out)])
    finally:
        out.chmod(0o755)
    assert "internal error" not in result.stderr + result.stdout


# ---- nothing injected -------------------------------------------------------------------------------


@pytest.mark.parametrize("dst", ["cerebras", "megatron", "neox"])
def test_a_newline_in_a_file_name_never_injects_a_setting(runner, tmp_path: Path, dst: str) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    name = "run\neval_input: {batch_size: 666}\n--lr 100\nx.yml"
    (src / name).write_text(BASE)
    result = runner.invoke(main, ["batch", f"neox2{dst}", str(src), "-o", str(out), "--world-size", "1"])
    assert result.exit_code == 0, result.stderr
    written = [p for p in out.iterdir() if p.name != SUMMARY_NAME]
    assert len(written) == 1
    text = written[0].read_text()
    if dst != "neox":  # a migration keeps the source's text and names no source file
        comments = [line for line in text.splitlines() if line.startswith("#")]
        assert any("run\\neval_input" in line for line in comments)  # the name, escaped, in its comment line
    assert "666" not in text.replace("run\\neval_input: {batch_size: 666}", "")
    assert "--lr 100" not in text.splitlines()


def test_a_control_character_in_a_comment_is_escaped_where_it_is_carried(runner, tmp_path: Path) -> None:
    source = tmp_path / "in.yml"
    # YAML refuses ESC or BEL in a file; it takes a right-to-left override or a zero-width space, which a
    # terminal or an editor shows as something else ("Trojan source")
    source.write_text("# model \u202eder\tand a tab\n" + BASE.replace("num_layers: 2", "num_layers: 2  # two\u200b"))
    out = tmp_path / "out.yaml"
    result = runner.invoke(main, ["neox2cerebras", str(source), "-o", str(out), "--world-size", "1", "-q"])
    assert result.exit_code == 0, result.stderr
    text = out.read_text()
    assert "\u202e" not in text and "\u200b" not in text and "\\u202eder" in text and "\tand a tab" in text
    assert "# two\\u200b" in text
    assert runner.invoke(main, ["cerebras2neox", str(out), "-o", str(tmp_path / "back.yml"), "-q"]).exit_code in (0, 1)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("cerebras:train_input.data_dir=x\ntrain_input: evil", "control character"),
        ("model.vocab_size=5\n0", "control character"),
        ("cerebras:train_input.data_dir={a: 1}", "not a block"),
        ("cerebras:train_input.shuffle.x=1", "not a Cerebras Model Zoo YAML key"),
    ],
)
def test_a_set_value_is_one_scalar_line(runner, value: str, expected: str, tmp_path: Path) -> None:
    result = runner.invoke(main, ["neox2cerebras", str(PYTHIA), "--set", value, "-o", str(tmp_path / "o.yaml")])
    assert expected in _one_line(result)
    assert not (tmp_path / "o.yaml").exists()


def test_a_hash_in_a_set_value_is_text_not_a_comment(runner, tmp_path: Path) -> None:
    out = tmp_path / "o.yaml"
    result = runner.invoke(
        main,
        [
            "neox2cerebras",
            str(PYTHIA),
            "--world-size",
            "8",
            "-q",
            "--set",
            "cerebras:train_input.data_dir=./data # shard 1",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code in (0, 1), result.stderr
    assert yaml.safe_load(out.read_text())["train_input"]["data_dir"] == "./data # shard 1"


# ---- inputs that are no regular file ----------------------------------------------------------------


def test_a_fifo_as_input_is_refused_at_once(runner, tmp_path: Path) -> None:
    fifo = tmp_path / "in.yml"
    os.mkfifo(fifo)
    done: list[object] = []
    worker = threading.Thread(
        target=lambda: done.append(runner.invoke(main, ["neox2cerebras", str(fifo)])), daemon=True
    )
    worker.start()
    worker.join(20)
    assert done, "blocked on a FIFO with no writer"
    assert "FIFO" in _one_line(done[0]) and str(fifo) in _one_line(done[0])


def test_a_dotted_key_under_a_scalar_key_is_one_clear_line(runner, tmp_path: Path) -> None:
    source = tmp_path / "in.yml"
    source.write_text(BASE.replace("seq_length: 128\n", "") + "seq_length.x: 1\n")
    result = runner.invoke(main, ["neox2cerebras", str(source), "-o", str(tmp_path / "o.yaml")])
    assert "internal error" not in result.stderr
    assert result.exit_code in (0, 1, 2)
    if result.exit_code == 2:
        _one_line(result)


# ---- migrate and links ------------------------------------------------------------------------------


def test_migrate_rewrites_the_file_a_link_points_to_inside_the_tree_and_says_so(
    runner, tmp_path: Path, monkeypatch
) -> None:
    legacy = (FIXTURES / "inputs" / "cerebras").glob("*.yaml")
    source = next(p for p in sorted(legacy) if "train_input" in p.read_text())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real.yaml").write_text(source.read_text())
    (tmp_path / "link.yaml").symlink_to("real.yaml")
    result = runner.invoke(main, ["migrate", "link.yaml", "--format", "cerebras", "--layout", "trainer"])
    assert (tmp_path / "link.yaml").is_symlink()  # still a link
    assert result.exit_code == 1 and "real.yaml" in result.stderr, result.stderr
    assert "trainer" in (tmp_path / "real.yaml").read_text()


def test_migrate_refuses_a_link_to_a_file_outside_the_tree(runner, tmp_path: Path, monkeypatch) -> None:
    legacy = sorted((FIXTURES / "inputs" / "cerebras").glob("*.yaml"))
    source = next(p for p in legacy if "train_input" in p.read_text())
    repo, outside = tmp_path / "repo", tmp_path / "elsewhere.yaml"
    repo.mkdir()
    outside.write_text(source.read_text())
    (repo / "link.yaml").symlink_to(outside)
    monkeypatch.chdir(repo)
    result = runner.invoke(main, ["migrate", "link.yaml", "--format", "cerebras", "--layout", "trainer"])
    assert result.exit_code == 1 and "outside" in result.stderr
    assert outside.read_text() == source.read_text() and (repo / "link.yaml").is_symlink()


def test_library_errors_are_typed(tmp_path: Path) -> None:
    with pytest.raises(NeoconvError):
        Confined(tmp_path).remove(tmp_path / "absent.txt")


def test_a_source_swapped_for_a_link_after_the_walk_is_not_read(tmp_path: Path) -> None:
    from neoconv.batch import BatchOptions
    from neoconv.batch.job import run_job

    src, out, outside = tmp_path / "src", tmp_path / "out", tmp_path / "secret.yml"
    src.mkdir()
    out.mkdir()
    outside.write_text(BASE.replace("num_layers: 2", "num_layers: 77"))
    (src / "a.yml").symlink_to(outside)  # what the walk saw was a regular file; now it is a link out
    opts = BatchOptions("neox", "cerebras", src_root=str(src), out_root=str(out))
    result = run_job(opts, (str(src / "a.yml"), "a.yml", str(out / "a.yaml")))
    assert result.status == "failed" and "symbolic link" in result.error
    assert not (out / "a.yaml").exists()


def test_workers_are_capped_at_the_work_and_the_cores(tmp_path: Path) -> None:
    from neoconv.batch import BatchOptions, run_batch

    src = tmp_path / "src"
    src.mkdir()
    for i in range(3):
        (src / f"c{i}.yml").write_text(BASE)
    opts = BatchOptions("neox", "cerebras", jobs=100)
    run_batch(str(src), str(tmp_path / "out"), opts)
    assert opts.jobs == 1  # three files are one chunk of work


# ---- one clear line, not an internal error -----------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "expected", "line"),
    [
        ("lr: !!float\n", "cannot read '' as float: no value", 7),
        ("lr: !!int \n", "cannot read '' as int: no value", 7),
        ("a: &x 1\nb: &x 2\n", "anchor &x is defined twice", 8),
    ],
)
def test_tags_and_anchors_are_one_clear_line(runner, tmp_path: Path, extra: str, expected: str, line: int) -> None:
    source = tmp_path / "in.yml"
    source.write_text(BASE + extra)
    message = _one_line(runner.invoke(main, ["neox2cerebras", str(source), "-o", str(tmp_path / "o.yaml")]))
    assert f"{source}:{line}:" in message and expected in message


def test_the_non_specific_tag_resolves_as_yaml_safe_load_does() -> None:
    from neoconv.io.yamlread import load

    # PyYAML (which every framework reads its files with) resolves `!` as an untagged plain scalar
    assert load("a: ! 64\nb: ! '64'\nc: ! x\n") == {"a": 64, "b": 64, "c": "x"}


def test_a_date_that_is_no_date_stays_text_in_a_migration(runner, tmp_path: Path) -> None:
    source, out = tmp_path / "in.yml", tmp_path / "out.yml"
    source.write_text(BASE + "wandb_group: 2024-13-45\n")
    result = runner.invoke(main, ["neox2neox", str(source), "-o", str(out), "-q"])
    assert result.exit_code == 0, result.stderr
    assert out.read_text() == source.read_text()


def test_a_malformed_report_for_diff_is_one_clear_line(runner, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text('{"entries": 5}')
    message = _one_line(runner.invoke(main, ["diff", str(PYTHIA), str(PYTHIA), "--report", str(report)]))
    assert str(report) in message and "not a neoconv translation report" in message


def test_utf32_is_named_as_utf32(runner, tmp_path: Path) -> None:
    source = tmp_path / "in.yml"
    source.write_bytes(BASE.encode("utf-32"))
    assert "UTF-32" in _one_line(runner.invoke(main, ["neox2cerebras", str(source)]))


def test_a_misspelt_word_for_a_loss_scale_is_refused_where_it_is_read(runner, tmp_path: Path) -> None:
    source = tmp_path / "params.yaml"
    legacy = (FIXTURES / "inputs" / "cerebras" / "gpt2-small-legacy.yaml").read_text()
    source.write_text(re.sub(r"loss_scaling_factor: .*", "loss_scaling_factor: dyanmic", legacy))
    message = _one_line(runner.invoke(main, ["cerebras2megatron", str(source), "-o", str(tmp_path / "o.args")]))
    assert "optimizer.loss_scaling_factor" in message and "'dyanmic'" in message


def test_an_edit_keeps_the_byte_order_mark(runner, tmp_path: Path) -> None:
    source, out = tmp_path / "in.yml", tmp_path / "out.yml"
    source.write_bytes(b"\xef\xbb\xbf" + BASE.encode() + b"gas: 2\n")
    assert runner.invoke(main, ["neox2neox", str(source), "-o", str(out), "-q"]).exit_code in (0, 1)
    assert out.read_bytes().startswith(b"\xef\xbb\xbfnum_layers: 2\n")
    repo = tmp_path / "m.yml"
    repo.write_bytes(source.read_bytes())
    runner.invoke(main, ["migrate", str(repo), "--format", "neox"])
    assert repo.read_bytes().startswith(b"\xef\xbb\xbf")
    assert runner.invoke(main, ["migrate", str(repo), "--format", "neox", "--check"]).exit_code == 0  # idempotent


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"verify": "no"}, "verify must be True or False"),
        ({"set_values": {"model.vocab_size": None}}, "None is no value"),
    ],
)
def test_library_options_are_checked_as_the_cli_checks_them(options: dict[str, object], expected: str) -> None:
    from neoconv import UsageError, translate

    with pytest.raises(UsageError, match=expected):
        translate(str(PYTHIA), "neox", "cerebras", **options)  # type: ignore[arg-type]


def test_output_text_refuses_what_is_no_translation() -> None:
    from neoconv import UsageError
    from neoconv.services.output_text import output_text

    with pytest.raises(UsageError, match="takes the Translation"):
        output_text(None, None)  # type: ignore[arg-type]
