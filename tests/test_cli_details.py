"""The details of issue 31's first contact, each as a user meets it: the report at 80 columns, why the
exit code is 1, contradicting options, roundtrip's options, every framework named, diff's values as
the files spell them, a release that reads none of a block, bash completion of FORMAT:KEY."""

from __future__ import annotations

import configparser
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_runner, FIXTURES, ROOT
from neoconv.cli import main
from neoconv.cli.report_view import plain, rows, terminal
from neoconv.knowledge.registry import FORMATS
from neoconv.services.pipeline import translate

PYTHIA = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"


def _run(*args: Any, env: dict[str, str] | None = None) -> Any:
    return cli_runner(env=env).invoke(main, [str(a) for a in args])


@pytest.mark.parametrize(
    "render, columns", [("plain", 80), ("terminal", 80), ("terminal", 100), ("terminal", 120), ("terminal", 160)]
)
def test_no_key_or_hint_is_broken_at_any_width(render: str, columns: int) -> None:
    report = translate(str(PYTHIA), "neox", "cerebras").report
    if render == "plain":
        text = plain(report, columns=columns)
    else:
        out = io.StringIO()
        terminal(report, color=False, columns=columns, file=out)
        text = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    from collections import Counter

    words = Counter(word for row in rows(report.entries) for word in f"{row.keys} {row.reason}".split())
    assert any(word.startswith("cerebras:train_input.data_processor=") for word in words)
    assert words - Counter(text.split()) == Counter()  # every word, as often as the report says it, whole
    long_lines = [line for line in text.splitlines() if len(line.rstrip()) > columns]
    assert all(len(line.split()) == 1 or max(map(len, line.split())) > 60 for line in long_lines), long_lines


def test_a_wide_terminal_keeps_the_table() -> None:
    report = translate(str(PYTHIA), "neox", "cerebras").report
    out = io.StringIO()
    terminal(report, color=False, columns=160, file=out)
    header = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue().split("\n")[0])  # (bold even without colour)
    assert header.split() == ["status", "keys", "why"]


@pytest.mark.parametrize("quiet", [False, True])
def test_strict_says_in_one_line_why_the_exit_is_1(quiet: bool, tmp_path: Path) -> None:
    args = ["neox2cerebras", PYTHIA, "-o", tmp_path / "o.yaml", "--world-size", "8", "--fail-on", "lossy,missing"]
    result = _run(*args, *(["-q"] if quiet else []))
    assert result.exit_code == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last == "neoconv: exit 1: 6 lossy, 3 missing entries fail --fail-on lossy,missing"
    if quiet:
        assert result.stderr.strip().splitlines() == [last]
    strict = _run("neox2cerebras", PYTHIA, "-o", tmp_path / "o.yaml", "--world-size", "8", "--strict", "-q")
    assert (
        strict.stderr.strip() == "neoconv: exit 1: 6 lossy, 3 missing entries fail --strict (lossy, unknown, missing)"
    )


def test_quiet_and_verbose_together_are_refused(tmp_path: Path) -> None:
    result = _run("neox2cerebras", PYTHIA, "-o", tmp_path / "o.yaml", "-q", "-v")
    assert result.exit_code == 2
    assert (
        result.stderr.strip() == "neoconv: error: -q (no report) and -v (every entry) contradict each other: give one"
    )
    assert not (tmp_path / "o.yaml").exists()
    migrate = _run("migrate", "-q", "-v", PYTHIA)
    assert migrate.exit_code == 2 and "contradict" in migrate.stderr


def test_roundtrip_takes_the_pairs_options(tmp_path: Path) -> None:
    report = tmp_path / "there.json"
    result = _run(
        "roundtrip",
        "neox2cerebras",
        PYTHIA,
        "--world-size",
        "8",
        "--layout",
        "trainer",
        "--to-version",
        "2.5",
        "--report",
        report,
        "--json",
    )
    assert result.exit_code in (0, 1), result.stderr
    there = json.loads(report.read_text())
    assert there["target"]["format"] == "cerebras"
    assert any(str(e.get("target_key", "")).startswith("trainer.") for e in there["entries"])  # the trainer layout
    assert json.loads(result.stdout)["a_format"] == "neox"
    # a companion: the DeepSpeed config beside a NeoX model file, read with it on the way there
    ds = FIXTURES / "inputs" / "deepspeed"
    with_ds = _run(
        "roundtrip",
        "neox2cerebras",
        ds / "neox-model.yml",
        "--with",
        ds / "warmup-decay-lr-zero1.json",
        "--world-size",
        "16",
        "--json",
    )
    assert with_ds.exit_code in (0, 1), with_ds.stderr
    alone = _run("roundtrip", "neox2cerebras", ds / "neox-model.yml", "--world-size", "16", "--json")
    assert json.loads(with_ds.stdout) != json.loads(alone.stdout)
    # a VeOmni YAML with its architecture given apart
    veomni = FIXTURES / "inputs" / "veomni"
    model = _run(
        "roundtrip",
        "veomni2neox",
        veomni / "tinyllama-nested.yaml",
        "--model-config",
        next((veomni / "tinyllama").glob("*.json")),
        "--json",
    )
    assert model.exit_code in (0, 1), model.stderr
    assert "--model-config" in _run("roundtrip", "--help").stdout


def _frameworks() -> list[str]:
    return [
        spec.title.removesuffix(" YAML").removesuffix(" JSON").removesuffix(" arguments")
        for spec in FORMATS.values()
        if spec.own
    ]


def test_help_setup_cfg_and_the_package_docstring_name_every_framework() -> None:
    import neoconv

    help_text = " ".join(_run("--help").stdout.split())
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    description = setup["metadata"]["description"]
    docstring = " ".join((neoconv.__doc__ or "").split())
    for name in _frameworks():
        assert name in help_text, name
        assert name in description, name
        assert name in docstring, name


def test_diff_prints_values_as_the_files_spell_them(tmp_path: Path) -> None:
    a = tmp_path / "a.yml"
    a.write_text(PYTHIA.read_text().replace('"init_method": "small_init"', '"init_method": "wang_init"'))
    assert a.read_text() != PYTHIA.read_text()
    result = _run("diff", PYTHIA, a)
    assert result.exit_code == 1
    line = next(line for line in result.stdout.splitlines() if line.startswith("changed  model.init_method"))
    assert "small_init (init_method) -> wang_init (init_method)" in line
    assert "'" not in result.stdout
    b = tmp_path / "b.yml"
    b.write_text(PYTHIA.read_text().replace("\n{\n", '\n{\n  "use_bias_in_mlp": false,\n', 1))
    changed = _run("diff", PYTHIA, b)
    assert "model.mlp_bias: true (default) -> false (use_bias_in_mlp)" in changed.stdout
    assert "True" not in changed.stdout and "False" not in changed.stdout


def test_a_release_that_reads_none_of_a_block_is_one_line() -> None:
    trainer = FIXTURES / "inputs" / "cerebras" / "llama-trainer.yaml"
    result = _run("validate", "--version", "2.0", trainer)
    assert result.exit_code == 1
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, lines
    assert re.match(
        rf"{re.escape(str(trainer))}:\d+: trainer: Cerebras Model Zoo 2\.0\.\d+ reads none of the \d+ keys "
        r"of this block \(the first: .* \(read by 2\.3\.0\.\.",
        lines[0],
    )
    one_key = _run("validate", "--version", "2.3", trainer)
    assert "reads none" not in one_key.stdout


BASH = shutil.which("bash")


def _complete(line: str, words: list[str]) -> list[str]:
    """What bash itself offers after TAB at the end of `line` (COMP_WORDS split at ':' as bash splits it)."""
    script = (
        'eval "$(_NEOCONV_COMPLETE=bash_source neoconv)"; '
        f"COMP_LINE={json.dumps(line)}; COMP_POINT=${{#COMP_LINE}}; COMP_WORDS=({' '.join(json.dumps(w) for w in words)}); "
        f"COMP_CWORD={len(words) - 1}; _neoconv_completion neoconv; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    )
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    done = subprocess.run(
        [BASH or "bash", "--norc", "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.skipif(
    BASH is None or shutil.which("neoconv", path=str(Path(sys.executable).parent)) is None,
    reason="bash and the installed neoconv command are needed",
)
def test_bash_completes_format_keys_after_the_colon() -> None:
    assert _complete("neoconv explain neox:num_l", ["neoconv", "explain", "neox", ":", "num_l"]) == ["num_layers"]
    offered = _complete(
        "neoconv neox2cerebras x.yml --set cerebras:train_input.data_d",
        ["neoconv", "neox2cerebras", "x.yml", "--set", "cerebras", ":", "train_input.data_d"],
    )
    assert offered == ["train_input.data_dir="]
    assert "neox:" in _complete("neoconv explain ne", ["neoconv", "explain", "ne"])


def test_migrate_verbose_shows_what_each_files_report_names(tmp_path: Path) -> None:
    path = tmp_path / "gpt2.yaml"
    shutil.copy(FIXTURES / "inputs" / "cerebras" / "gpt2-small-legacy.yaml", path)
    args = ["migrate", "--check", "--format", "cerebras", "--layout", "trainer", path]
    plain_run, verbose_run = _run(*args), _run(*args, "-v")
    assert plain_run.exit_code == verbose_run.exit_code == 1
    # migrate speaks on stderr (click before 8.2 keeps it out of `output`)
    plain, verbose = plain_run.stderr, verbose_run.stderr
    assert plain.startswith(f"would migrate {path} (") and plain.count("\n") == 1
    lines = verbose.splitlines()
    assert lines[0] == plain.rstrip("\n")
    # every entry, each with its keys and why: the model name the trainer layout needs, the converted ones
    assert "defaulted  -> trainer.init.model.name" in lines
    assert lines[lines.index("defaulted  -> trainer.init.model.name") + 1].startswith("           ")
    assert len([line for line in lines if line.startswith("converted  ")]) == 2
    counted = plain.split(" (", 1)[1].rstrip(")\n")  # the counts the file's line gives
    assert lines[-2].startswith("neoconv: ") and lines[-2].endswith(counted)
