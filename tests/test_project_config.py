"""The project configuration file (issue 31): `[tool.neoconv]` in pyproject.toml or a `.neoconv.toml`,
found from the inputs' common folder upwards as black and ruff find theirs, the command line winning;
`neoconv config` says which file applies; one loader the other commands (prove) read their tables with."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_runner, FIXTURES
from neoconv.cli import main
from neoconv.core.errors import UsageError
from neoconv.io.project_config import common_folder, find

PYTHIA = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"


def _repo(tmp_path: Path, table: str, *, dedicated: bool = False) -> Path:
    """A repository with configs/neox/pythia-160m.yml and the configuration file at its root."""
    configs = tmp_path / "repo" / "configs" / "neox"
    configs.mkdir(parents=True)
    shutil.copy(PYTHIA, configs / PYTHIA.name)
    if dedicated:
        (tmp_path / "repo" / ".neoconv.toml").write_text(table, encoding="utf-8")
    else:
        (tmp_path / "repo" / "pyproject.toml").write_text(
            '[project]\nname = "configs"\n\n[tool.neoconv]\n' + table, encoding="utf-8"
        )
    return configs / PYTHIA.name


def _run(*args: Any) -> Any:
    return cli_runner().invoke(main, [str(a) for a in args])


def test_found_from_the_inputs_folder_upwards_in_either_file(tmp_path: Path) -> None:
    source = _repo(tmp_path, "world-size = 8\n")
    assert find(source.parent).file == tmp_path / "repo" / "pyproject.toml"
    assert find(source).table == {"world-size": 8}
    (tmp_path / "repo" / "configs" / ".neoconv.toml").write_text("world-size = 4\n")
    assert find(source).file == tmp_path / "repo" / "configs" / ".neoconv.toml"  # the nearest wins
    assert find(tmp_path).file is None


def test_a_pyproject_without_a_neoconv_table_is_passed_over(tmp_path: Path) -> None:
    source = _repo(tmp_path, "world-size = 8\n")
    (source.parent / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    assert find(source).file == tmp_path / "repo" / "pyproject.toml"


def test_the_prove_table_is_a_section_of_the_same_file(tmp_path: Path) -> None:
    _repo(tmp_path, 'world-size = 8\n\n[tool.neoconv.prove]\nenv = { neox = "envs/neox/bin/python" }\n')
    config = find(tmp_path / "repo")
    assert config.section("prove") == {"env": {"neox": "envs/neox/bin/python"}}
    assert config.resolve("envs/neox/bin/python") == str(tmp_path / "repo" / "envs/neox/bin/python")
    dedicated = tmp_path / "other"
    dedicated.mkdir()
    (dedicated / ".neoconv.toml").write_text('[prove]\nsrc = { neox = "/opt/gpt-neox" }\n')
    assert find(dedicated).section("prove") == {"src": {"neox": "/opt/gpt-neox"}}


def test_common_folder_of_the_inputs(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "c").mkdir()
    assert common_folder([tmp_path / "a" / "b" / "x.yml", tmp_path / "a" / "c" / "y.yml"]) == tmp_path / "a"


def test_the_file_gives_the_options_a_repository_always_passes(tmp_path: Path) -> None:
    source = _repo(
        tmp_path,
        'world-size = 8\nset = ["model.vocab_size=50304", "veomni:data.train_path=/data"]\n'
        'layout = { cerebras = "trainer" }\n',
    )
    out = tmp_path / "out.yaml"
    result = _run("neox2cerebras", source, "-o", out, "--report", tmp_path / "r.json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        f"neoconv: options from {tmp_path / 'repo' / 'pyproject.toml'} [tool.neoconv]: world-size, set (2), layout"
    )
    text = out.read_text()
    assert text.startswith("# ") and "\ntrainer:\n" in text  # the trainer layout, for cerebras only
    import json

    report = json.loads((tmp_path / "r.json").read_text())
    entries = {e["target_key"]: e for e in report["entries"] if e["status"] == "missing"}
    assert not any("vocab_size" in key for key in entries)  # model.vocab_size given by the file
    assert not any("--world-size" in e["detail"] for e in entries.values())  # the global batch known: world-size 8
    assert "batch_size: 256" in text  # 8 GPUs x micro 32 (no accumulation, no model parallelism)
    # (the veomni: value is for another target: left out, not refused: the run exits 0)


def test_the_command_line_wins(tmp_path: Path) -> None:
    source = _repo(tmp_path, 'world-size = 8\nset = ["model.vocab_size=50304"]\n', dedicated=True)
    report = tmp_path / "r.json"
    result = _run(
        "neox2cerebras",
        source,
        "-o",
        tmp_path / "o.yaml",
        "--report",
        report,
        "--world-size",
        "16",
        "--set",
        "model.vocab_size=50432",
        "-q",
    )
    assert result.exit_code == 0, result.stderr
    import json

    data = json.loads(report.read_text())
    sets = [e for e in data["entries"] if e.get("kind") == "set_written" or "50432" in json.dumps(e.get("values"))]
    assert sets and not any("50304" in json.dumps(e) for e in data["entries"])
    cfg = _run("neox2cerebras", source, "-o", tmp_path / "o.yaml", "--set", "parallel.world_size=16")
    assert cfg.exit_code == 0, cfg.stderr  # the file's world-size gives way to the command line's field


def test_a_bad_file_is_one_line_naming_it(tmp_path: Path) -> None:
    source = _repo(tmp_path, "world-siz = 8\n")
    result = _run("neox2cerebras", source, "-o", tmp_path / "o.yaml")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"neoconv: error: {tmp_path / 'repo' / 'pyproject.toml'} [tool.neoconv]: no option 'world-siz'; it takes "
        "world-size, set, with, layout, from-version, to-version, strict, fail-on, baseline, plain, no-verify, include, "
        "exclude, jobs, skip-unsupported, format (and the tables prove)"
    ]
    (tmp_path / "repo" / "pyproject.toml").write_text("[tool.neoconv]\nworld-size = 0\n")
    result = _run("neox2cerebras", source, "-o", tmp_path / "o.yaml")
    assert result.exit_code == 2 and "[tool.neoconv]: world-size: " in result.stderr and "0" in result.stderr
    (tmp_path / "repo" / "pyproject.toml").write_text("[tool.neoconv\nworld-size = 8\n")
    with pytest.raises(UsageError, match="not a TOML file neoconv can read"):
        find(source)


def test_batch_and_migrate_read_it_too(tmp_path: Path) -> None:
    source = _repo(tmp_path, 'world-size = 8\nset = ["model.vocab_size=50304"]\nlayout = { cerebras = "trainer" }\n')
    out = tmp_path / "out"
    result = _run("batch", "neox2cerebras", source.parent, "-o", out, "-q")
    assert result.exit_code == 0, result.stderr
    assert "\ntrainer:\n" in (out / "pythia-160m.yaml").read_text()
    legacy = tmp_path / "repo" / "configs" / "gpt2.yaml"
    shutil.copy(FIXTURES / "inputs" / "cerebras" / "gpt2-small-legacy.yaml", legacy)
    result = _run("migrate", "--check", legacy)
    assert result.exit_code == 1, result.stderr  # the file's trainer layout for cerebras files
    assert f"would migrate {legacy}" in result.stderr


def test_world_size_and_a_set_of_it_that_disagree_are_refused(tmp_path: Path) -> None:
    result = _run(
        "neox2cerebras", PYTHIA, "-o", tmp_path / "o.yaml", "--world-size", "8", "--set", "parallel.world_size=16"
    )
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "neoconv: error: --world-size 8 and --set parallel.world_size=16 disagree: give the world size once"
    )
    same = _run(
        "neox2cerebras", PYTHIA, "-o", tmp_path / "o.yaml", "--world-size", "8", "--set", "parallel.world_size=8", "-q"
    )
    assert same.exit_code == 0, same.stderr


def test_neoconv_config_says_which_file_applies(tmp_path: Path) -> None:
    source = _repo(
        tmp_path, 'world-size = 8\nlayout = { cerebras = "trainer" }\n\n[tool.neoconv.prove]\nenv = { neox = "/x" }\n'
    )
    result = _run("config", source.parent)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"{tmp_path / 'repo' / 'pyproject.toml'} [tool.neoconv]",
        "world-size = 8",
        'layout = { cerebras = "trainer" }',
        "[prove] (read by neoconv prove)",
    ]
    none = _run("config", tmp_path)
    assert none.exit_code == 0 and none.stdout.startswith(f"no project configuration file for {tmp_path}")
