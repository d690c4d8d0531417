"""A file of one format given to another format's command is refused before anything is translated,
naming the format it is and the command to use (issue 31: `neox2cerebras` on a Model Zoo file exited 0
with 47 unknown keys; `veomni2neox` on a NeoX file was refused with a fix that did not apply)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import cli_runner, format_inputs
from neoconv.cli import main
from neoconv.core.errors import NeoconvError
from neoconv.formats.detect import detect_file
from neoconv.knowledge.registry import FORMATS


def _an_input_of(fmt: str) -> Path | None:
    """A hand-written input of `fmt` that detection tells as `fmt` (a companion such as a DeepSpeed
    file beside an HF Trainer one is another format's file)."""
    for path in format_inputs(fmt):
        try:
            if detect_file(str(path)) == fmt:
                return path
        except NeoconvError:
            continue
    return None


CASES = [(found, declared) for found in sorted(FORMATS) for declared in sorted(FORMATS) if found != declared]


def test_every_format_has_an_input_detection_tells() -> None:
    assert [fmt for fmt in sorted(FORMATS) if _an_input_of(fmt) is None] == []


@pytest.mark.parametrize("found, declared", CASES, ids=[f"{a}-file-to-{b}2x" for a, b in CASES])
def test_a_file_of_another_format_is_refused_with_the_command_to_use(found: str, declared: str, tmp_path: Path) -> None:
    path = _an_input_of(found)
    assert path is not None
    target = declared  # any target: the command names the user's own
    out = tmp_path / "out"
    result = cli_runner().invoke(main, [f"{declared}2{target}", str(path), "-o", str(out), "--world-size", "8"])
    if result.exit_code == 0:
        # the declared format's reader says plainly the file is `found`'s and reads it as that (a NeoX
        # argument file given as DeepSpeed): allowed only when the report says so
        assert "read as " + found in result.stderr, result.stderr
        return
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert lines == [
        f"neoconv: error: {path}: a {FORMATS[found].title} config, not {FORMATS[declared].title} "
        f"(detected from its keys): use `neoconv {found}2{target}`"
    ]
    assert not out.exists()


def test_convert_names_the_convert_command(tmp_path: Path) -> None:
    path = _an_input_of("neox")
    result = cli_runner().invoke(
        main, ["convert", "--from", "veomni", "--to", "hf", str(path), "-o", str(tmp_path / "o.json")]
    )
    assert result.exit_code == 2
    assert result.stderr.strip().endswith("use `neoconv convert --from neox --to hf`"), result.stderr


def test_a_file_the_declared_format_reads_is_not_refused(tmp_path: Path) -> None:
    """A NeoX fragment (no model: shared settings) is still NeoX's, and a Model Zoo file is Model Zoo's."""
    fragment = tmp_path / "local_setup.yml"
    fragment.write_text('{"load": "checkpoints", "log_dir": "logs", "tensorboard_dir": "tensorboard"}\n')
    model = format_inputs("neox")[0]
    result = cli_runner().invoke(
        main, ["neox2cerebras", str(model), str(fragment), "-o", str(tmp_path / "o.yaml"), "-q"]
    )
    assert result.exit_code == 0, result.stderr
