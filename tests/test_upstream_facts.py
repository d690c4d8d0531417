"""The `upstream` tier (opt in: `pytest -m upstream`): the committed facts still say what their upstream
material says. Not a freshness test of a generated file (tests/test_generated_files.py is, and runs
everywhere): each test re-extracts from a reference document ($NEOCONV_REFERENCE, default
../shared/reference) or a framework's git mirror ($NEOCONV_MIRRORS/<owner+name>/repo, default
../.mirror) and compares byte for byte, and skips, naming what is missing, when that is not at hand.

  tools/facts/neox-*.json, cerebras-params-*.json  tools/extract_{neox,cerebras}_facts.py  reference docs
  tools/facts/veomni-*.json                        tools/extract_veomni_facts.py           VeOmni mirror + reference
  tools/facts/megatron-args.tsv                    (its commits; the rows came from Megatron's own parser)
  schemas/history/*.json                           tools/gen_*_history.py                  each framework's mirror
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import MIRRORS, REFERENCE, ROOT
from test_history import GENERATORS as HISTORIES

pytestmark = pytest.mark.upstream

TOOLS = ROOT / "tools"
NO_REFERENCE = (
    f"the reference documents {REFERENCE} are not present (they live beside the checkout; or set NEOCONV_REFERENCE)"
)


def mirror(owner_name: str) -> Path:
    return MIRRORS / owner_name / "repo"


def no_mirror(owner_name: str) -> str:
    return f"mirror {mirror(owner_name)} is not present (set NEOCONV_MIRRORS to a folder of <owner+name>/repo mirrors)"


def _check(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *command, "--check"], capture_output=True, text=True)


@pytest.mark.parametrize("tool", ["extract_neox_facts.py", "extract_cerebras_facts.py"])
def test_reference_facts_are_what_the_documents_say(tool: str) -> None:
    if not REFERENCE.is_dir():
        pytest.skip(NO_REFERENCE)
    run = _check(str(TOOLS / tool), "--reference", str(REFERENCE))
    assert run.returncode == 0, f"re-extract: python tools/{tool} --reference {REFERENCE}\n{run.stderr}"


def test_veomni_facts_are_what_the_clone_and_the_docs_say() -> None:
    if not mirror("ByteDance-Seed+VeOmni").is_dir():
        pytest.skip(no_mirror("ByteDance-Seed+VeOmni"))
    if not REFERENCE.is_dir():
        pytest.skip(NO_REFERENCE)
    run = _check(
        str(TOOLS / "extract_veomni_facts.py"),
        "--veomni",
        str(mirror("ByteDance-Seed+VeOmni")),
        "--reference",
        str(REFERENCE),
    )
    assert run.returncode == 0, f"re-extract: python tools/extract_veomni_facts.py\n{run.stderr}"


def test_megatron_facts_name_the_commits_of_the_tags_they_were_read_at() -> None:
    """The rows came from Megatron-LM's own argparse parser built at each tag (it needs Megatron's own
    environment to rebuild); what the mirror can confirm is which commit each tag and HEAD named."""
    repo = mirror("NVIDIA+Megatron-LM")
    if not repo.is_dir():
        pytest.skip(no_mirror("NVIDIA+Megatron-LM"))
    header = (TOOLS / "facts" / "megatron-args.tsv").read_text(encoding="utf-8")
    commits = dict(re.findall(r"^#   (\S+): ([0-9a-f]{40})$", header, re.M))
    assert commits
    for tag, commit in commits.items():
        if tag == "HEAD":  # the mirror may have moved on: the commit must still be there
            run = subprocess.run(["git", "-C", str(repo), "cat-file", "-t", commit], capture_output=True, text=True)
            assert run.stdout.strip() == "commit", commit
            continue
        run = subprocess.run(["git", "-C", str(repo), "rev-parse", f"{tag}^{{commit}}"], capture_output=True, text=True)
        assert run.stdout.strip() == commit, tag


@pytest.fixture(scope="module")
def histories() -> Iterator[dict[str, subprocess.Popen[str] | str]]:
    """Every history extraction started at once with --check (seconds to minutes each); a string
    instead of a process says why that one is skipped."""
    started: dict[str, subprocess.Popen[str] | str] = {}
    for fmt, (tool, owner_name) in sorted(HISTORIES.items()):
        if not mirror(owner_name).is_dir():
            started[fmt] = no_mirror(owner_name)
            continue
        started[fmt] = subprocess.Popen(
            [sys.executable, str(TOOLS / tool), "--repo", str(mirror(owner_name)), "--check"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    yield started
    for proc in started.values():
        if isinstance(proc, subprocess.Popen) and proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("fmt", sorted(HISTORIES))
def test_history_is_what_the_mirror_says(fmt: str, histories: dict[str, subprocess.Popen[str] | str]) -> None:
    proc = histories[fmt]
    if isinstance(proc, str):
        pytest.skip(proc)
    _, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, stderr
