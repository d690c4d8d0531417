"""The pre-commit hooks (.pre-commit-hooks.yaml), run by pre-commit itself on a scratch git
repository: `pre-commit try-repo` with no args, and a two-line .pre-commit-config.yaml (issue 17).
pre-commit installs neoconv into an environment of its own (from a commit of this working tree)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("pre_commit", reason="pre-commit is not installed (pip install '.[test]')")
if shutil.which("git") is None:
    pytest.skip("git is not installed: pre-commit needs it", allow_module_level=True)

LEGACY = FIXTURES / "preserve" / "cerebras-legacy.yaml"
FLAT = FIXTURES / "preserve" / "veomni-flat.yaml"

pytestmark = pytest.mark.slow  # scratch repositories and pre-commit's own environments: the slow tier


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This working tree as a repository of one commit (tracked and new files), for pre-commit to
    install from: the hooks and code under test, committed or not."""
    copy = tmp_path_factory.mktemp("neoconv") / "neoconv"
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split("\0")
    for rel in filter(None, listed):
        if (ROOT / rel).is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, copy / rel)
    _git(copy, "init", "-q")
    _git(copy, "add", "-A")
    _git(copy, "commit", "-qm", "neoconv under test")
    return copy, _git(copy, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")  # installed hook environments, shared by the tests


def _scratch(tmp_path: Path, files: dict[str, Path | str]) -> Path:
    repo = tmp_path / "configs"
    repo.mkdir()
    _git(repo, "init", "-q")
    for name, content in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(content.read_text() if isinstance(content, Path) else content)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "configs")
    return repo


def _pre_commit(repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(home),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args, "--color", "never"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_try_repo_neoconv_check_works_without_args(project: tuple[Path, str], home: Path, tmp_path: Path) -> None:
    """Regression (issue 17): the documented try-repo command failed with "Missing argument 'SRC2DST'"."""
    repo = _scratch(tmp_path, {"gpt3.yaml": LEGACY, "qwen.yaml": FLAT, ".github/ci.yaml": "on: push\n"})
    run = _pre_commit(repo, home, "try-repo", str(project[0]), "neoconv-check", "--all-files")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "would migrate qwen.yaml" in run.stdout and "+  optimizer:\n" in run.stdout  # flat VeOmni: not current
    assert "gpt3.yaml" not in run.stdout.split("would migrate")[-1]  # a legacy Cerebras file is current Cerebras
    assert "Missing argument" not in run.stdout and "Traceback" not in run.stdout
    assert (repo / "qwen.yaml").read_text() == FLAT.read_text()  # a check writes nothing


def test_a_two_line_config_migrates_keeping_comments_then_passes(
    project: tuple[Path, str], home: Path, tmp_path: Path
) -> None:
    path, rev = project
    config = f"repos:\n  - {{repo: {path}, rev: {rev}, hooks: [{{id: neoconv-cerebras-trainer}}, {{id: neoconv-validate}}]}}\n"
    assert len(config.splitlines()) == 2
    repo = _scratch(tmp_path, {".pre-commit-config.yaml": config, "gpt3/111m.yaml": LEGACY, "notes.yaml": "a: 1\n"})
    first = _pre_commit(repo, home, "run", "--all-files")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout and "migrated gpt3/111m.yaml" in first.stdout
    migrated = (repo / "gpt3" / "111m.yaml").read_text()
    assert "trainer" in yaml.safe_load(migrated) and "# steps = tokens / (batch_size * 2048)" in migrated
    assert (repo / "notes.yaml").read_text() == "a: 1\n" and not list(repo.rglob("*.bak"))
    second = _pre_commit(repo, home, "run", "--all-files")
    assert second.returncode == 0, second.stdout + second.stderr


def test_the_validate_hook_names_each_problem(project: tuple[Path, str], home: Path, tmp_path: Path) -> None:
    path, rev = project
    config = f"repos:\n  - {{repo: {path}, rev: {rev}, hooks: [{{id: neoconv-validate}}]}}\n"
    bad = LEGACY.read_text().replace("num_heads: 12", "num_heads: 7")
    repo = _scratch(tmp_path, {".pre-commit-config.yaml": config, "bad.yaml": bad, "good.yaml": LEGACY})
    run = _pre_commit(repo, home, "run", "--all-files")
    assert run.returncode == 1
    assert "bad.yaml:19: model.hidden_size: 768 is not divisible by model.num_heads=7" in run.stdout, run.stdout
    assert "good.yaml" not in run.stdout
