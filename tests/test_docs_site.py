"""The documentation: the README is a front page, every page of docs/ is in the site's navigation, and
the site builds with `mkdocs build --strict` (no broken link, every API docstring found) wherever the
docs extra is installed (`pip install ".[docs]"`; .ci/run installs it and builds the site too)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def _nav_pages(nav: object) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(_nav_pages(item) for item in nav)) if nav else set()
    if isinstance(nav, dict):
        return set().union(*(_nav_pages(item) for item in nav.values()))
    return set()


def test_the_readme_is_a_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) < 20_000
    assert len(text.splitlines()) <= 180
    # the two commands CI and the hook depend on, as they were
    assert (
        "python3 -m venv .venv && .venv/bin/pip install . && \\\n"
        "  .venv/bin/neoconv neox2cerebras fixtures/inputs/neox/pythia-160m.yml --world-size 8 --set model.vocab_size=50304"
    ) in text
    assert 'python3 -m venv .venv && .venv/bin/pip install ".[test]" && .venv/bin/python -m pytest -q' in text


def test_every_readme_link_into_the_docs_exists() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert local, "the front page links into the docs"
    assert [link for link in local if not (ROOT / link).exists()] == []


def test_every_page_is_in_the_navigation() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    pages = {str(path.relative_to(ROOT / "docs")) for path in (ROOT / "docs").rglob("*.md")}
    assert pages - _nav_pages(config["nav"]) == set()
    assert _nav_pages(config["nav"]) - pages == set()


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None, reason='mkdocs is not installed (pip install ".[docs]")'
)
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    assert "translate" in api and "NeoconvError" in api  # the docstrings were found
