"""VeOmni's model.config_path is followed only to a file beside the YAML naming it, as every side file
is (docs/input-safety.md), and the report names what was read or why not (issue 32: it was followed
anywhere, `../` and absolute paths and symlinks included, and named nowhere)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, cli_runner

from neoconv.cli import main

VEOMNI = FIXTURES / "inputs" / "veomni"


def _tree(tmp_path: Path, config_path: str) -> Path:
    """run/a.yaml naming `config_path`; secret/config.json beside run/ holds a 4096-wide model."""
    (tmp_path / "run").mkdir()
    secret = tmp_path / "secret"
    secret.mkdir()
    config = json.loads((VEOMNI / "tinyllama" / "config.json").read_text())
    secret.joinpath("config.json").write_text(json.dumps({**config, "hidden_size": 4096}))
    text = (VEOMNI / "tinyllama-nested.yaml").read_text()
    assert "config_path: tinyllama\n" in text
    src = tmp_path / "run" / "a.yaml"
    src.write_text(text.replace("config_path: tinyllama\n", f"config_path: {config_path}\n"))
    return src


def _translate(src: Path, tmp_path: Path) -> tuple[dict, str]:
    report = tmp_path / "report.json"
    out = tmp_path / "out.yml"
    result = cli_runner().invoke(main, ["veomni2neox", str(src), "-o", str(out), "--report", str(report)])
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(report.read_text()), out.read_text()


def _config_path_entry(report: dict) -> dict:
    return next(e for e in report["entries"] if e.get("source_key") == "model.config_path")


@pytest.mark.parametrize("where", ["../secret", "ABSOLUTE", "link"])
def test_a_config_path_leading_out_of_the_folder_is_not_followed_and_named(tmp_path: Path, where: str) -> None:
    if where == "ABSOLUTE":
        where = str(tmp_path / "secret")
    src = _tree(tmp_path, where)
    if where == "link":
        os.symlink(tmp_path / "secret", tmp_path / "run" / "link")
    report, out = _translate(src, tmp_path)
    assert report["source"]["files"] == [str(src)]
    assert "4096" not in out
    detail = _config_path_entry(report)["detail"]
    assert "model.config_path is not followed" in detail and "--model-config" in detail
    missing = [e for e in report["entries"] if e["status"] == "missing" and e.get("target_key") == "hidden_size"]
    assert missing and "model.config_path is not followed" in missing[0]["detail"]


def test_a_config_path_beside_the_yaml_is_read_and_named(tmp_path: Path) -> None:
    src = _tree(tmp_path, "model")
    shutil.copytree(tmp_path / "secret", tmp_path / "run" / "model")
    report, out = _translate(src, tmp_path)
    read = str(tmp_path / "run" / "model" / "config.json")
    assert report["source"]["files"] == [str(src), read]
    assert "hidden_size: 4096" in out
    assert f"the architecture is read from {read}, beside a.yaml" in _config_path_entry(report)["detail"]


def test_model_config_given_on_the_command_line_is_read_wherever_it_is(tmp_path: Path) -> None:
    src = _tree(tmp_path, "../secret")
    out = tmp_path / "out.yml"
    given = tmp_path / "secret" / "config.json"
    result = cli_runner().invoke(main, ["veomni2neox", str(src), "-o", str(out), "--model-config", str(given)])
    assert result.exit_code in (0, 1), result.stderr
    assert "hidden_size: 4096" in out.read_text()
