"""The migrating hooks run again on their own output (issue 31): a key the file gives twice is written
once and named on the file's line, or, for a release whose loader refuses a repeated key (Model Zoo
2.5+), refused on the first run when the file says two values or the migrated file would still repeat
it, with nothing written."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURES, cli_runner
from neoconv.cli import main

LEGACY = FIXTURES / "inputs" / "cerebras" / "gpt2-small-legacy.yaml"


def _with_repeat(tmp_path: Path, source: Path, first: str, second: str) -> Path:
    """`source` with its `num_heads:` line followed by a second num_heads of the same mapping."""
    lines = source.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("num_heads:"))
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines[at : at + 1] = [f"{indent}num_heads: {first}\n", f"{indent}num_heads: {second}\n"]
    path = tmp_path / source.name
    path.write_text("".join(lines))
    return path


def _migrate(path: Path, *extra: str) -> tuple[int, str]:
    result = cli_runner().invoke(main, ["migrate", "--format", "cerebras", "--layout", "trainer", *extra, str(path)])
    return result.exit_code, result.stdout + result.stderr


def test_identical_repeat_is_written_once_and_named(tmp_path: Path) -> None:
    path = _with_repeat(tmp_path, LEGACY, "12", "12")
    code, output = _migrate(path)
    assert code == 1, output  # a hook that changed a file fails, as formatters do
    assert "given twice, written once: model.num_heads" in output
    assert path.read_text().count("num_heads:") == 1
    code, output = _migrate(path)  # the hook's next run accepts its own output
    assert (code, output) == (0, "")


def test_different_values_refused_for_a_release_that_refuses_repeats(tmp_path: Path) -> None:
    path = _with_repeat(tmp_path, LEGACY, "12", "16")
    before = path.read_text()
    code, output = _migrate(path)
    assert code == 1
    assert output.startswith(f"failed   {path}:")
    assert "model.num_heads given twice" in output and "different values" in output
    assert "--to-version" in output  # the way out: a release that still runs it
    assert output.count("\n") == 1
    assert path.read_text() == before


def test_different_values_for_an_older_release_keep_the_last_and_say_so(tmp_path: Path) -> None:
    path = _with_repeat(tmp_path, LEGACY, "12", "16")
    code, output = _migrate(path, "--to-version", "2.4")
    assert code == 1, output
    assert "given twice with different values, the last written" in output and "model.num_heads" in output
    text = path.read_text()
    assert text.count("num_heads:") == 1 and "num_heads: 16" in text


def _trainer_file(tmp_path: Path) -> Path:
    """A trainer-layout file of the release a repeat still runs on (read as 2.4), as migrate made it."""
    path = tmp_path / "llama-tiny.yaml"
    path.write_text((FIXTURES / "inputs" / "cerebras" / "llama-tiny-defaults.yaml").read_text())
    assert _migrate(path)[0] == 1
    return path


def test_a_trainer_file_repeating_a_value_is_written_once(tmp_path: Path) -> None:
    path = _trainer_file(tmp_path)
    text = path.read_text()
    assert text.count("      num_heads: 4\n") == 1
    path.write_text(text.replace("      num_heads: 4\n", "      num_heads: 4   # heads\n      num_heads: 4\n"))
    code, output = _migrate(path)
    assert code == 1, output
    assert "given twice, written once: trainer.init.model.num_heads" in output
    assert path.read_text().count("num_heads:") == 1
    assert _migrate(path) == (0, "")


def test_a_repeated_block_of_the_same_values_is_written_once(tmp_path: Path) -> None:
    path = _trainer_file(tmp_path)
    block = "    loop:\n      max_steps: 100\n"
    assert block in path.read_text()
    path.write_text(path.read_text().replace(block, block + block))
    code, output = _migrate(path)
    assert code == 1, output
    assert "given twice, written once: trainer.init.loop" in output
    assert path.read_text().count("loop:") == 1 and "max_steps: 100" in path.read_text()
    assert _migrate(path) == (0, "")


def test_a_repeat_an_older_release_runs_is_written_once_keeping_the_formatting(tmp_path: Path) -> None:
    path = _trainer_file(tmp_path)
    text = path.read_text()
    path.write_text(text.replace("      num_heads: 4\n", "      num_heads: 4   # heads\n      num_heads: 4\n"))
    code, output = _migrate(path, "--to-version", "2.4")
    assert code == 1, output
    assert "given twice, written once: trainer.init.model.num_heads" in output
    # the line without a comment left out, every other line (the comments) as it was
    assert path.read_text() == text.replace("      num_heads: 4\n", "      num_heads: 4   # heads\n")


def test_a_migration_for_a_release_refusing_repeats_keeps_the_comments(tmp_path: Path) -> None:
    # issue 31: for Model Zoo 2.5+ such a file was written in the plain layout, every comment lost
    path = _with_repeat(tmp_path, LEGACY, "12  # the heads", "12")
    before = path.read_text()
    comments = [line.strip() for line in before.splitlines() if line.lstrip().startswith("#")]
    assert comments
    code, output = _migrate(path)
    assert code == 1, output
    text = path.read_text()
    assert "given twice, written once: model.num_heads" in output
    assert text.count("num_heads:") == 1 and "num_heads: 12  # the heads" in text
    assert all(comment in text for comment in comments)
    assert _migrate(path) == (0, "")


def test_both_comments_of_a_repeated_key_are_kept(tmp_path: Path) -> None:
    path = _with_repeat(tmp_path, LEGACY, "12  # first", "12  # second")
    assert _migrate(path)[0] == 1
    text = path.read_text()
    assert text.count("num_heads:") == 1 and "num_heads: 12  # second" in text
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "num_heads:" in line)
    assert lines[at - 1].strip() == "# first"


def test_the_library_translation_keeps_the_comments_and_the_byte_order_mark(tmp_path: Path) -> None:
    import neoconv
    from neoconv.services.output_text import output_text

    path = _with_repeat(tmp_path, LEGACY, "12  # the heads", "12")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    result = neoconv.translate(str(path), "cerebras", "cerebras", layout="trainer")
    text = output_text(result, str(path))
    assert text.startswith("\ufeff") and "num_heads: 12  # the heads" in text
    assert result.report.target["formatting"]["kept"] is True


def test_the_per_file_report_says_why_a_file_changed(tmp_path: Path) -> None:
    import json

    path = _with_repeat(tmp_path, LEGACY, "12", "12")
    report = tmp_path / "report.json"
    code, _ = _migrate(path, "--report", str(report))
    assert code == 1
    (entry,) = json.loads(report.read_text())["files"]
    assert (entry["status"], entry["written"]) == ("changed", True)
    assert entry["reason"] == "given twice, written once: model.num_heads"
