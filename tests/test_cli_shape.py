"""The command line's shape (issue 18): options defined once, help grouped with valid values,
options only where they apply, shell completion, usage errors for --set."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from neoconv.cli import main
from neoconv.knowledge.registry import FORMATS

ROOT = Path(__file__).resolve().parent.parent


def test_every_option_is_defined_once_in_the_options_module() -> None:
    for path in sorted((ROOT / "translator" / "cli").glob("*.py")):
        if path.name != "options.py":
            assert "click.option(" not in path.read_text(), (
                f"{path.name} defines an option: define it in cli/options.py"
            )
    text = (ROOT / "translator" / "cli" / "options.py").read_text()
    flags = re.findall(r'click\.option\(\s*(?:"-\w", )?"(--[\w-]+)"', text)
    # the same flag is defined twice only where it means another thing (-o: a file, a folder, the docs file)
    repeated = {f for f in flags if flags.count(f) > 1}
    assert repeated <= {"--output", "--report", "--quiet", "--check", "--layout"}, repeated


def test_top_level_help_groups_commands_and_puts_the_pairs_last_one_line_per_source(runner) -> None:
    text = runner.invoke(main, ["--help"]).stdout
    headings = [line for line in text.splitlines() if line and not line.startswith(" ") and line.endswith(":")]
    assert headings[-4:] == ["Translate:", "Check and inspect:", "Maintain:", headings[-1]]
    assert headings[-1].startswith("Format pairs")
    pairs_part = text.split(headings[-1])[1]
    for src in FORMATS:
        assert f"{src}2*" in pairs_part
    assert "neox2cerebras" not in text.split(headings[-1])[0]  # no pair before the pairs' heading
    assert text.index("convert") < text.index("validate") < text.index("neox2cerebras")


def test_options_show_only_where_they_apply_with_their_values(runner) -> None:
    veomni = runner.invoke(main, ["veomni2cerebras", "--help"]).stdout
    neox = runner.invoke(main, ["neox2neox", "--help"]).stdout
    assert "--model-config" in veomni and "--model-config" not in neox  # the format contract says who takes one
    assert "--layout [legacy|trainer]" in veomni and "--layout" not in neox  # NeoX has one layout
    # a release: a label of the format's key history or a name standing for one (too many to list in help)
    assert "--from-version RELEASE" in veomni and "--to-version RELEASE" in veomni
    assert "Source VeOmni YAML release" in " ".join(veomni.split()) and "the release the file's keys tell" in " ".join(
        neox.split()
    )
    for status in ("missing", "unknown", "lossy", "dropped", "defaulted"):
        assert status in neox.split("--fail-on STATUS")[1].split("--baseline")[0]
    batch = runner.invoke(main, ["batch", "--help"]).stdout
    assert "cerebras: legacy, trainer" in batch and "veomni: nested, flat" in batch


def test_a_bad_choice_names_the_valid_values(runner, pythia160m: Path) -> None:
    result = runner.invoke(main, ["neox2cerebras", str(pythia160m), "--to-version", "r9"])
    assert result.exit_code == 2 and "not a Cerebras Model Zoo release" in result.stderr
    assert "known: 1.6.0, 1.6.1" in result.stderr and "r2 (= 2.1.1), r1 (= 2.2.1)" in result.stderr
    result = runner.invoke(main, ["neox2cerebras", str(pythia160m), "--model-config", "x.json"])
    assert result.exit_code == 2 and "--model-config" in result.stderr.splitlines()[-1]  # click's own usage error


@pytest.mark.parametrize(
    "value", ["model.vocab_size=", "model.vocab_size=  ", "model.vocab_size=null", "=5", "model.vocab_size"]
)
def test_an_empty_or_malformed_set_is_a_usage_error(runner, pythia160m: Path, value: str, tmp_path: Path) -> None:
    """Regression (issue 18): `--set model.vocab_size=` exited 0 and reported both "no counterpart" and "missing"."""
    out = tmp_path / "out.yaml"
    result = runner.invoke(main, ["neox2cerebras", str(pythia160m), "--set", value, "-o", str(out)])
    assert result.exit_code == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "--set" in result.stderr
    assert not out.exists()


def _complete(runner, line: str) -> list[str]:
    words = line.split(" ")
    env = {"_NEOCONV_COMPLETE": "bash_complete", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
    result = runner.invoke(main, [], env=env, prog_name="neoconv")
    return [row.split(",", 1)[1] for row in result.stdout.splitlines()]


def test_shell_completion_of_commands_formats_fields_and_values(runner) -> None:
    assert {"validate", "explain", "convert", "neox2cerebras"} <= set(_complete(runner, "neoconv "))
    assert _complete(runner, "neoconv neox2c") == ["neox2cerebras"]
    assert _complete(runner, "neoconv convert --from ") == sorted(FORMATS)
    fields = _complete(runner, "neoconv explain model.hidden_s")
    assert fields == ["model.hidden_size"]
    assert "neox:" in _complete(runner, "neoconv explain ne")
    assert "neox:rotary_pct" in _complete(runner, "neoconv explain neox:rotary")
    assert _complete(runner, "neoconv neox2cerebras x.yml --set model.vocab_s") == ["model.vocab_size="]
    assert _complete(runner, "neoconv neox2cerebras x.yml --fail-on lossy,mi") == ["lossy,missing"]
    releases = _complete(runner, "neoconv neox2veomni x.yml --to-version ")
    assert {"nested", "flat", "#538", "v0.1.8", "current"} <= set(releases)
    assert _complete(runner, "neoconv neox2veomni x.yml --to-version #62") == ["#62", "#627"]
    assert sorted(_complete(runner, "neoconv batch neox2")) == sorted(f"neox2{d}" for d in FORMATS)
    assert _complete(runner, "neoconv validate x.yml --format cerebras --version 2.1") == [
        "2.1",
        "2.10",
        "2.10.0",
        "2.1.1",
        "2.1.0",
    ]
    assert _complete(runner, "neoconv batch neox2veomni src --layout ") == ["flat", "nested", "scoped"]


def test_docs_check_needs_the_file_it_checks(runner) -> None:
    """Issue 18: `docs --check` without -o printed '- is stale'."""
    bare = runner.invoke(main, ["docs", "--check"])
    assert bare.exit_code == 2 and "give it with -o" in bare.stderr and "stale" not in bare.stderr
    fresh = runner.invoke(main, ["docs", "--check", "-o", str(ROOT / "docs" / "mappings.md")])
    assert fresh.exit_code == 0, fresh.stderr


def test_importing_the_library_leaves_the_umask_alone() -> None:
    """Issue 18: importing neoconv.io.documents changed the process umask (a library must not)."""
    code = (
        "import os; before = os.umask(0o027); os.umask(before); import neoconv.io.documents, neoconv.api, neoconv.batch; "
        "after = os.umask(0); print(oct(before), oct(after))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == out[1]
