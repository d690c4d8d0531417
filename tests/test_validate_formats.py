"""`neoconv validate` reads every format through the format's own reader (issue 27, item 6): the
formats come from the registry, so a new format's fixtures and outputs are validated with no edit.

- every fixture under fixtures/inputs/<format>/ validates as a config of its format (or of the format
  it is a companion of), with exactly the problems listed below for the few that have some on purpose;
- what neoconv writes for every pair (a few fixtures of each format into every format) validates as a
  config of the target, with at most the problems listed below (each a known fault of a translation,
  said where it is owned).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neoconv.api import translate
from neoconv.cli import main
from neoconv.formats.detect import detect_file
from neoconv.core.errors import InputError, NothingToWrite, UnsupportedFamily
from neoconv.knowledge.registry import FORMATS, get_format
from neoconv.services.validate_file import validate_file

from conftest import FIXTURES

INPUTS = FIXTURES / "inputs"
# fixture (relative to fixtures/inputs) -> the problems validate must find in it, by key as written
PROBLEMS = {
    "neox/pythia-160m.yml": ["optimizer.params.eps"],  # 1e-8, which YAML 1.1 reads as text
    "veomni/strict/nested-typo.yaml": ["train.optimizer.lr_warmup_ration"],
    "veomni/strict/latest-chunk.yaml": ["model.accelerator.chunk_mbs_config.enable"],
    "veomni/strict/scoped-dotted.yaml": ["model.optimizer.lr"],
    "veomni/strict/scoped-rmpad.yaml": ["train.rmpad"],
    "veomni/strict/scoped-typo.yaml": ["model.optimizer.lr_warmup_ration"],
    # a development branch's keys: no release declares them (tests/test_veomni_fork_keys.py)
    "veomni/strict/scoped-fork.yaml": ["infer.max_new_tokens", "train.validation_metrics"],
    # DeepSeek's own remote code reads these; transformers 5.23's DeepseekV2Config has no such field
    "hf/deepseek-v2-lite.json": ["aux_loss_alpha", "moe_layer_freq", "seq_aux"],
}
# fixtures no single-file validate reads: VeOmni's command-line option file goes after its YAML
NOT_ALONE = {"veomni/overrides.args"}


def fixtures() -> dict[str, tuple[str, Path]]:
    """`<format>/<fixture>` -> (the format whose folder holds it, its path) for every registered format: the
    files of fixtures/inputs/<format>/ and below (a test-only format: of its own fixtures/ folder)."""
    out = {}
    for fmt in FORMATS:
        spec = get_format(fmt)
        folder = INPUTS / fmt if spec.own else Path(spec.data or "") / "fixtures"
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            name = f"{fmt}/{path.relative_to(folder)}"
            if path.is_file() and not path.name.startswith("README") and name not in NOT_ALONE:
                out[name] = (fmt, path)
    return out


FIXTURES_OF = fixtures()
FIXTURE_FILES = [(name, fmt) for name, (fmt, _) in FIXTURES_OF.items()]


def format_of(name: str) -> str:
    """The format a fixture is (a companion in another format's folder: its own), as detection tells it;
    a syntax detection does not read (a test-only format's TOML): its folder's."""
    folder, path = FIXTURES_OF[name]
    try:
        return detect_file(str(path))
    except InputError:
        return folder


def test_every_registered_format_has_fixtures_to_validate() -> None:
    assert {fmt for _, fmt in FIXTURE_FILES} == set(FORMATS)


@pytest.mark.parametrize("name,folder", FIXTURE_FILES, ids=[n for n, _ in FIXTURE_FILES])
def test_each_fixture_validates_as_its_format(name: str, folder: str) -> None:
    result = validate_file(str(FIXTURES_OF[name][1]), format_of(name))
    # a companion beside a format's files is another format's (a NeoX YAML beside DeepSpeed JSON, VeOmni's
    # config.json, the HF Trainer's ds_config.json)
    assert result.format in {
        folder,
        *get_format(folder).companions.values(),
        "hf" if folder == "veomni" else folder,
        "deepspeed" if folder == "hftrainer" else folder,
    }
    assert sorted(p.key or "" for p in result.problems) == PROBLEMS.get(name, []), [p.render() for p in result.problems]


# (source format, target format) -> problems validate may find in the output (each a known fault, owned elsewhere)
KNOWN_OUTPUT_PROBLEMS = {
    # Megatron's --squared-relu written as NeoX activation relu2, which NeoX does not have (issue 28)
    ("megatron", "neox"): {"activation"},
}
SUFFIX = {"hf": ".json", "deepspeed": ".json", "megatron": ".args"}
# every fixture without problems, as the format it is (a companion in another format's folder too)
SOURCES = [(name, format_of(name)) for name, _ in FIXTURE_FILES if name not in PROBLEMS]
PER_SOURCE = 4  # fixtures of each source format translated into each target (spread over its folder): time


def sources_of(fmt: str) -> list[str]:
    names = [name for name, of in SOURCES if of == fmt]
    step = max(1, len(names) // PER_SOURCE)
    return names[::step][:PER_SOURCE]


@pytest.mark.parametrize("dst", [f for f in FORMATS if get_format(f).can_write])
@pytest.mark.parametrize("src", list(FORMATS))
def test_what_neoconv_writes_validates_as_the_target(src: str, dst: str, tmp_path: Path) -> None:
    """Each source fixture of `src` (read as its own format) into `dst`, written as the CLI writes it, then validated."""
    found, written, refused = {}, 0, 0
    for n, name in enumerate(sources_of(src)):
        out = tmp_path / str(n) / f"out{get_format(dst).suffix}"
        out.parent.mkdir()
        try:
            result = translate(
                [str(FIXTURES_OF[name][1])], src, dst, output=str(out), set_values={"model.vocab_size": 50304}
            )
        except (UnsupportedFamily, NothingToWrite):
            refused += 1  # refused, saying why: nothing written to validate
            continue
        out.write_text(result.dump())
        for side, text in result.side_files.items():
            (out.parent / side).write_text(text)
        written += 1
        problems = {p.key or p.message for p in validate_file(str(out), dst).problems}
        if problems - KNOWN_OUTPUT_PROBLEMS.get((src, dst), set()):
            found[name] = sorted(problems)
    assert found == {}
    assert written + refused > 0, "the source format has no fixture"
    assert written or src == dst or refused, "no fixture of the source wrote an output"


def test_validate_reads_a_megatron_launcher_and_an_hf_config_json(runner) -> None:
    """The two formats validate could not read (issue 27): every key of an HF config.json was 'not a
    parameter'; a Megatron argument file or launcher was parsed as YAML."""
    for name in (
        "hf/llama-3.1-8b.json",
        "megatron/gpt3-175b.sh",
        "megatron/llama3-8b.args",
        "megatron/gpt-15b-ci.yaml",
    ):
        result = runner.invoke(main, ["validate", str(INPUTS / name)])
        assert result.exit_code == 0 and result.stdout == "", result.output
        fmt = "hf" if name.startswith("hf/") else "megatron"
        assert f"valid {fmt} config" in result.stderr


def test_a_problem_in_a_megatron_file_is_named_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.args"
    path.write_text(
        "--num-layers 2\n--hidden-size 64\n--num-attention-heads 5\n--seq-length 128\n--max-position-embeddings 128\n"
    )
    problems = validate_file(str(path)).problems
    assert [(p.line, p.key) for p in problems] == [(2, "--hidden-size")]
    assert "not divisible" in problems[0].message


def test_a_key_no_transformers_class_has_is_named(tmp_path: Path) -> None:
    config = (INPUTS / "hf" / "llama-2-7b.json").read_text().replace('"hidden_size"', '"hidden_sise"', 1)
    path = tmp_path / "config.json"
    path.write_text(config)
    problems = validate_file(str(path)).problems
    assert [p.key for p in problems] == ["hidden_sise"]
    assert problems[0].line == config.splitlines().index(next(l for l in config.splitlines() if "hidden_sise" in l)) + 1
