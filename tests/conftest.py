"""Shared fixtures: paths to our own fixtures and to the shared corpus (skipped when absent)."""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Any, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from neoconv.knowledge.registry import register

ROOT = Path(__file__).resolve().parent.parent
# formats used only by the tests (tests/extra_formats/<name>/): registered as a format package outside
# neoconv registers (docs/adding-a-framework.md), so every test that goes over the formats takes them in
EXTRA_FORMATS = sorted(
    p.name for p in (Path(__file__).parent / "extra_formats").iterdir() if (p / "__init__.py").is_file()
)
for _name in EXTRA_FORMATS:
    register(f"extra_formats.{_name}")


def extra_format_folders() -> list[Path]:
    return [Path(__file__).parent / "extra_formats" / name for name in EXTRA_FORMATS]


def format_inputs(fmt: str) -> list[Path]:
    """The hand-written inputs of a format, for the tests that go over every format: the files of
    fixtures/inputs/<fmt>/ (a test-only format: of its own fixtures/ folder), READMEs aside."""
    from neoconv.knowledge.registry import get_format

    spec = get_format(fmt)
    folder = FIXTURES / "inputs" / fmt if spec.own else Path(spec.data or "") / "fixtures"
    return (
        sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("README"))
        if folder.is_dir()
        else []
    )


@contextmanager
def own_formats_only() -> Iterator[None]:
    """The registry without the test-only formats meanwhile: for what pins neoconv's own output as it
    ships (fixtures/cases transcripts list every format neoconv has, and no more)."""
    from neoconv.knowledge.registry import FORMATS

    saved = dict(dict.items(FORMATS))
    for name, spec in saved.items():
        if not spec.own:
            dict.pop(FORMATS, name)
    try:
        yield
    finally:
        dict.clear(FORMATS)
        dict.update(FORMATS, saved)


FIXTURES = ROOT / "fixtures"
# the shared corpus beside the checkout; NEOCONV_CORPUS points elsewhere (the tests of the skip reasons)
CORPUS = Path(os.environ.get("NEOCONV_CORPUS") or ROOT.parent / "shared" / "corpus")
CORPUS_ABSENT = f"the shared corpus {CORPUS} is not present (it lives beside the checkout)"
# upstream material (the `upstream` tier re-extracts tools/facts/ from it): the reference documents beside
# the checkout, and a folder of <owner+name>/repo git mirrors ($NEOCONV_REFERENCE / $NEOCONV_MIRRORS elsewhere)
REFERENCE = Path(os.environ.get("NEOCONV_REFERENCE") or ROOT.parent / "shared" / "reference")
MIRRORS = Path(os.environ.get("NEOCONV_MIRRORS") or ROOT.parent / ".mirror")


# corpus files their own framework cannot run, which neoconv refuses (exit 2, naming the key and the fix):
# NeoX's mistral/7B.yml builds a 4779-wide gate and a 4778-wide output layer (intermediate_size 14336
# with swiglu; 43008 gives Mistral's 14336)
UNRUNNABLE = {"neox/mistral/7B.yml": "intermediate_size: 43008 gives a 14336-wide gated MLP"}


def runnable(path: Path) -> bool:
    return str(path.relative_to(CORPUS)) not in UNRUNNABLE if path.is_relative_to(CORPUS) else True


def same_canonical(name: str, a: object, b: object, steps: object = None) -> bool:
    """Two canonical values mean the same, as `neoconv diff` compares them: numbers to 1e-9, a
    schedule by its lr at every step of the run (within 1e-9 of its peak)."""
    import math

    from neoconv.schedule.fields import same

    if name == "schedule.phases" and a is not None and b is not None:
        return same(a, b, steps, 1e-9)
    return a == b or (isinstance(a, float) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-9))


def corpus_id(base: Path) -> Any:
    """A parametrize id function: a corpus path relative to `base` (pytest before 9 also asks for the
    id of the placeholder that stands for an empty list, when the corpus is absent)."""
    return lambda path: str(path.relative_to(base)) if isinstance(path, Path) else str(path)


def corpus_dir(name: str) -> Path:
    path = CORPUS / name
    if not path.is_dir():
        pytest.skip(f"shared corpus folder {path} is not present (it lives beside the checkout)")
    return path


def corpus_files(name: str, pattern: str = "**/*.yml") -> list[Path]:
    path = CORPUS / name
    return sorted(path.glob(pattern)) if path.is_dir() else []


def cli_runner(**options: Any) -> CliRunner:
    """A click test runner whose result has stdout and stderr apart, in every click release (`options`:
    CliRunner's own, such as env)."""
    try:
        return CliRunner(mix_stderr=False, **options)  # click < 8.2
    except TypeError:
        return CliRunner(**options)  # click >= 8.2 keeps stderr apart already


@pytest.fixture
def runner() -> CliRunner:
    return cli_runner()


@pytest.fixture
def pythia160m() -> Path:
    return FIXTURES / "inputs" / "neox" / "pythia-160m.yml"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens", action="store_true", help="rewrite fixtures/cases/**/expected.* from the current output"
    )


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test parametrized over corpus files has no parameters when the corpus is absent: pytest
    would skip it saying "got empty parameter set"; say why instead."""
    if CORPUS.is_dir():
        return
    for item in items:
        mark = item.get_closest_marker("skip")
        if mark is not None and str(mark.kwargs.get("reason", "")).startswith("got empty parameter set"):
            item.add_marker(pytest.mark.skip(reason=CORPUS_ABSENT), append=False)


def translate_unless_not_attention(config: Any, src: str, dst: str, **options: Any) -> Any:
    """translate(), or None for a NeoX model with no attention layers (all Mamba, all RWKV), which every
    format that writes an architecture refuses; the refusal is checked against the file's own pattern."""
    from neoconv import translate
    from neoconv.api import read_ir
    from neoconv.core.errors import UnsupportedFamily

    try:
        return translate(config, src, dst, **options)
    except UnsupportedFamily as exc:
        first = config[0] if isinstance(config, list) else config
        assert read_ir(first, src).ir.get("model.attention_kind") in ("mamba", "rwkv"), exc
        assert "holds decoder-only transformer language models" in str(exc)
        return None
