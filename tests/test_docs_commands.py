"""The README's and the docs' runnable examples run, and print what the page shows.

A fenced block right after a `<!-- run -->` line is run; `<!-- run: exit=N -->` expects the block's
last command to exit N (every other command must exit 0):

* a `console` block: each `$ COMMAND` line (a line ending in a backslash continues it) runs in bash;
  the lines after it, up to the next `$`, are what it prints (stdout and stderr as a terminal would
  interleave them: Python runs unbuffered; 80 columns, no colour);
* a `bash` or `python` block runs as one script; a `text` block right after it marked
  `<!-- output -->` is what it prints.

The blocks of one page run in order in one scratch folder holding a copy of `fixtures/`, so a page can
build on what an earlier block made. The shown output is never typed by hand: `python -m pytest
tests/test_docs_commands.py --update-goldens` writes what the commands print into the pages.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MARK = re.compile(r"^<!-- run(?::\s*exit=(\d+))? -->$")
OUTPUT_MARK = "<!-- output -->"
FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass
class Block:
    kind: str  # console, bash, python
    start: int  # index of the first line inside the fence
    end: int  # index of the closing fence
    exit_code: int
    output: tuple[int, int] | None = None  # (first line, closing fence) of its `<!-- output -->` block


def _fence_end(lines: list[str], start: int) -> int:
    for index in range(start, len(lines)):
        if lines[index].rstrip() == "```":
            return index
    raise AssertionError(f"a fence opened before line {start} is never closed")


def blocks(lines: list[str]) -> list[Block]:
    found: list[Block] = []
    index = 0
    while index < len(lines):
        mark = MARK.match(lines[index].strip())
        if not mark:
            index += 1
            continue
        fence = FENCE.match(lines[index + 1]) if index + 1 < len(lines) else None
        assert fence and fence.group(1) in ("console", "bash", "python"), (
            f"line {index + 1}: <!-- run --> must stand right before a console, bash or python block"
        )
        end = _fence_end(lines, index + 2)
        block = Block(fence.group(1), index + 2, end, int(mark.group(1) or 0))
        after = end + 1
        while after < len(lines) and not lines[after].strip():
            after += 1
        if after < len(lines) and lines[after].strip() == OUTPUT_MARK:
            assert block.kind != "console", f"line {after + 1}: a console block shows its output itself"
            assert lines[after + 1].rstrip() == "```text", (
                f"line {after + 2}: <!-- output --> stands before a text block"
            )
            block.output = (after + 2, _fence_end(lines, after + 2))
        found.append(block)
        index = end + 1
    return found


def _environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("NEOCONV_", "COLUMNS", "LINES"))}
    # the neoconv and python of the environment running the tests come first
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(COLUMNS="80", NO_COLOR="1", TERM="dumb", PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    return env


def _run(script: str, interpreter: str, folder: Path) -> tuple[int, str]:
    done = subprocess.run(
        [interpreter, "-c", script] if interpreter == sys.executable else ["bash", "-c", script],
        cwd=folder,
        env=_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    return done.returncode, done.stdout


def _console(lines: list[str]) -> list[tuple[str, list[str]]]:
    """(command, the lines shown after it) of each `$` line of a console block."""
    steps: list[tuple[str, list[str]]] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        assert line.startswith("$ "), f"a console block starts with a '$ ' command line, not {line!r}"
        command = line[2:]
        while command.endswith("\\") and index + 1 < len(lines):
            index += 1
            command += "\n" + lines[index]  # bash reads the backslash-newline as one line
        index += 1
        shown: list[str] = []
        while index < len(lines) and not lines[index].startswith("$ "):
            shown.append(lines[index])
            index += 1
        steps.append((command, shown))
    return steps


def _lines(text: str) -> list[str]:
    out = [line.rstrip() for line in text.rstrip("\n").split("\n")] if text.strip() else []
    return out


def _check(page: Path, update: bool, folder: Path) -> list[str]:
    """What is wrong with the page's runnable blocks (with `update`: rewrite what they show instead)."""
    lines = page.read_text(encoding="utf-8").split("\n")
    replacements: list[tuple[int, int, list[str]]] = []  # (first, end) replaced by lines
    problems: list[str] = []
    for block in blocks(lines):
        body = lines[block.start : block.end]
        where = f"{page.relative_to(ROOT) if page.is_relative_to(ROOT) else page}:{block.start}"
        if block.kind == "console":
            written: list[str] = []
            steps = _console(body)
            for number, (command, shown) in enumerate(steps):
                expected_code = block.exit_code if number == len(steps) - 1 else 0
                code, printed = _run(command, "bash", folder)
                if code != expected_code:
                    problems.append(f"{where}: `{command}` exited {code}, not {expected_code}:\n{printed}")
                got = _lines(printed)
                if got != _lines("\n".join(shown)):
                    problems.append(
                        f"{where}: `{command}` prints\n" + "\n".join(got) + "\nthe page shows\n" + "\n".join(shown)
                    )
                written += [f"$ {command}", *got]
            replacements.append((block.start, block.end, written))
            continue
        interpreter = sys.executable if block.kind == "python" else "bash"
        code, printed = _run("\n".join(body), interpreter, folder)
        if code != block.exit_code:
            problems.append(f"{where}: the {block.kind} block exited {code}, not {block.exit_code}:\n{printed}")
        if block.output is not None:
            shown = lines[block.output[0] : block.output[1]]
            if _lines(printed) != _lines("\n".join(shown)):
                problems.append(f"{where}: the block prints\n{printed}\nthe page shows\n" + "\n".join(shown))
            replacements.append((block.output[0], block.output[1], _lines(printed)))
    if update:
        for first, end, new in sorted(replacements, reverse=True):
            lines[first:end] = new
        page.write_text("\n".join(lines), encoding="utf-8")
        return []
    return problems


RUNNABLE = [
    page for page in PAGES if any(MARK.match(line.strip()) for line in page.read_text(encoding="utf-8").split("\n"))
]


def test_the_readme_has_runnable_examples() -> None:
    assert ROOT / "README.md" in RUNNABLE
    assert len(RUNNABLE) >= 4, [str(page) for page in RUNNABLE]


@pytest.mark.parametrize("page", RUNNABLE, ids=[str(page.relative_to(ROOT)) for page in RUNNABLE])
def test_runnable_blocks(page: Path, tmp_path: Path, update_goldens: bool) -> None:
    shutil.copytree(ROOT / "fixtures", tmp_path / "fixtures")
    problems = _check(page, update_goldens, tmp_path)
    assert not problems, "\n\n".join(problems) + "\n\n(--update-goldens rewrites the shown output)"


def test_a_block_that_fails_or_prints_otherwise_is_caught(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- run -->\n```console\n$ echo two\none\n$ false\n```\n", encoding="utf-8")
    message = "\n".join(_check(page, False, tmp_path))
    assert "`echo two` prints\ntwo\nthe page shows\none" in message
    assert "`false` exited 1, not 0" in message


def test_expected_exit_and_output_blocks(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- run: exit=3 -->\n```bash\necho made > a.txt; exit 3\n```\n\n<!-- run -->\n```python\n"
        "print(open('a.txt').read().strip())\n```\n\n<!-- output -->\n```text\nmade\n```\n",
        encoding="utf-8",
    )
    assert _check(page, False, tmp_path) == []


def test_update_writes_what_the_commands_print(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- run -->\n```console\n$ printf 'a\\nb\\n'\nold\n```\n", encoding="utf-8")
    _check(page, True, tmp_path)
    assert page.read_text(encoding="utf-8") == "<!-- run -->\n```console\n$ printf 'a\\nb\\n'\na\nb\n```\n"
