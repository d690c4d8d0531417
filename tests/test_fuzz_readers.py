"""A fuzz tier for every reader and the CLI (issue 32): each format's own fixture files, damaged line by
line (a line dropped, repeated, cut short, its value replaced by a wild one, junk inserted), translated
into every format through the command line. Whatever the damage, the outcome is an output (exit 0/1) or
one clear line (exit 2), never an internal error or a traceback. The formats come from the registry,
so a new format is fuzzed with no edit here. A fixed number of examples per format in the default run
(repeatable); NEOCONV_FUZZ_EXAMPLES=5000 searches harder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import cli_runner, format_inputs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neoconv.cli import main
from neoconv.knowledge.registry import FORMATS

SCALE = int(os.environ.get("NEOCONV_FUZZ_EXAMPLES", "0"))
WILD = [
    "",
    "~",
    "null",
    "-1",
    "0",
    "1e999",
    "nan",
    "'",
    '"',
    "[",
    "{",
    "}",
    "&a",
    "*a",
    "!!python/object:os.system",
    "2024-13-45",
    "!!float",
    "0x1F",
    "1_000",
    "yes",
    "--",
    "$(touch PWNED)",
    "\u202e",
    "9" * 400,
    "{a: [1, {b: 2}]}",
]


def _files(fmt: str) -> list[Path]:
    """The format's own fixture files (fixtures/inputs/<format>/, or a test-only format's fixtures/;
    its notes left out)."""
    return [p for p in format_inputs(fmt) if p.suffix != ".md"]


READABLE = [fmt for fmt in sorted(FORMATS) if _files(fmt)]


def _damage(text: str, data: st.DataObject) -> str:
    lines = text.splitlines(keepends=True) or [""]
    at = data.draw(st.integers(0, len(lines) - 1))
    how = data.draw(st.sampled_from(["drop", "repeat", "cut", "value", "junk"]))
    line = lines[at]
    if how == "drop":
        del lines[at]
    elif how == "repeat":
        lines.insert(at, line)
    elif how == "cut":
        lines[at] = line[: data.draw(st.integers(0, max(0, len(line) - 1)))]
    elif how == "value":
        head, sep, _ = line.partition(":") if ":" in line else line.partition(" ")
        lines[at] = f"{head}{sep or ' '} {data.draw(st.sampled_from(WILD))}\n"
    else:
        lines.insert(at, data.draw(st.sampled_from(WILD)) + "\n")
    return "".join(lines)


@pytest.mark.parametrize("src", READABLE)
@settings(
    max_examples=SCALE or 12,
    deadline=None,
    derandomize=not SCALE,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def test_a_damaged_file_of_every_format_is_an_output_or_one_clear_line(
    src: str, data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    original = data.draw(st.sampled_from(_files(src)))
    dst = data.draw(st.sampled_from(sorted(FORMATS)))
    folder = tmp_path_factory.mktemp("fuzz")
    damaged = folder / original.name
    damaged.write_text(_damage(original.read_text(encoding="utf-8"), data), encoding="utf-8")
    for side in original.parent.iterdir():  # what the file names beside it (VeOmni's config.json folder)
        if side.is_dir() and not (folder / side.name).exists():
            (folder / side.name).symlink_to(side, target_is_directory=True)
    result = cli_runner().invoke(
        main, [f"{src}2{dst}", str(damaged), "-o", str(folder / f"out{FORMATS[dst].suffix}"), "--world-size", "8", "-q"]
    )
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    shown = result.stderr + result.stdout
    assert "Traceback" not in shown and "internal error" not in shown, shown
    if result.exit_code == 2:
        assert len(result.stderr.splitlines()) == 1, result.stderr
