"""The format contract (translator/formats/spec.py): formats are found, not listed; each offers a
Reader and a Writer; what the shared code asks of a format it asks the spec."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from neoconv.core.errors import NeoconvError
from neoconv.formats.spec import FormatSpec, Reader, WriteContext, Writer
from neoconv.knowledge.registry import FORMATS, companion_format, get_format, pairs, register, register_installed

ROOT = Path(__file__).resolve().parent.parent


def test_every_format_package_is_found_and_helpers_are_not() -> None:
    # a subset: a new format package is found without an edit here (docs/adding-a-framework.md)
    assert {"cerebras", "deepspeed", "hf", "neox", "veomni"} <= set(FORMATS) and list(FORMATS) == sorted(FORMATS)
    # a subpackage without FORMAT would be a helper of other formats: every one here declares one
    assert all(getattr(importlib.import_module(spec.package), "FORMAT", None) is spec for n, spec in FORMATS.items())


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_a_spec_loads_its_reader_and_writer(name: str) -> None:
    spec = get_format(name)
    reader, writer = spec.load_reader(), spec.load_writer()
    assert isinstance(reader, Reader) and reader.format == name
    assert isinstance(writer, Writer) and writer.format == name
    assert spec.suffix.startswith(".") and spec.globs
    assert spec.default_layout is None or spec.default_layout in spec.layouts


def test_discovery_reads_specs_only() -> None:
    """Start-up imports every format package: they hold their spec and nothing else."""
    code = (
        "import sys\nfrom neoconv.knowledge.registry import FORMATS\nassert 'neox' in FORMATS\n"
        "print(sorted(m for m in sys.modules if m.startswith('neoconv.formats.') and m.count('.') > 2))\n"
        "print(sorted(m for m in ('yaml', 'neoconv.knowledge.source', 'neoconv.core.report') if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert run.stdout.splitlines() == ["[]", "[]"], run.stdout + run.stderr


def _toy_package(folder: Path) -> None:
    (folder / "toyformat").mkdir()
    (folder / "toyformat" / "__init__.py").write_text(
        "from neoconv.formats.spec import FormatSpec\n"
        "FORMAT = FormatSpec(name='toyformat', title='Toy', reader=f'{__name__}.reader', writer=f'{__name__}.writer')\n"
    )
    (folder / "notaformat").mkdir()
    (folder / "notaformat" / "__init__.py").write_text("")


@pytest.fixture
def restored_formats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The registry as it was after the test; the toy packages importable from tmp_path meanwhile."""
    assert "neox" in FORMATS  # (found before the test changes anything)
    saved = dict(dict.items(FORMATS))
    _toy_package(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    dict.clear(FORMATS)
    dict.update(FORMATS, saved)
    for name in ("toyformat", "notaformat"):
        sys.modules.pop(name, None)


def test_a_format_package_outside_neoconv_is_registered_by_name(restored_formats: Path) -> None:
    """docs/adding-a-framework.md: a package anywhere becomes a format by one registration call."""
    spec = register("toyformat")
    assert FORMATS["toyformat"] is spec and spec.title == "Toy" and spec.package == "toyformat"
    assert list(FORMATS) == sorted(FORMATS) and ("toyformat", "neox") in pairs()
    assert register("toyformat") is spec  # the same package again changes nothing
    with pytest.raises(ValueError, match="declares no FORMAT"):
        register("notaformat")


def test_an_installed_distribution_declares_its_formats_by_entry_point(restored_formats: Path) -> None:
    """A third party's package is a format once its distribution names it in the group `neoconv.formats`."""
    info = restored_formats / "neoconv_toy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: neoconv-toy\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[neoconv.formats]\ntoy = toyformat\n")
    assert "toyformat" not in FORMATS
    assert register_installed() == ["toyformat"]
    assert get_format("toyformat").title == "Toy"


@pytest.mark.parametrize(
    "path, main, expected",
    [
        ("ds_config.json", "neox", "deepspeed"),  # a NeoX run's DeepSpeed half
        ("local_setup.yml", "neox", "neox"),  # NeoX's own files merge
        ("neox.yml", "deepspeed", "neox"),  # beside a ds_config.json, a YAML file is NeoX's
        ("other.json", "deepspeed", "deepspeed"),
        ("ds.json", "cerebras", "deepspeed"),
        ("more.yaml", "veomni", "veomni"),
    ],
)
def test_companion_formats_come_from_the_main_format_spec(path: str, main: str, expected: str) -> None:
    assert companion_format(path, main) == expected


def test_key_spelling_is_the_formats_own() -> None:
    assert get_format("neox").spell("num-layers") == "num_layers"
    assert get_format("deepspeed").spell("train-batch-size") == "train-batch-size"


def test_a_header_is_a_writers_and_json_has_none() -> None:
    ctx = WriteContext(layout="legacy", model_family="gpt2", sources="a.yml")
    assert get_format("cerebras").load_writer().header({"model": {}}, ctx) == [
        "# Cerebras Model Zoo config (legacy layout) written by neoconv from a.yml",
        "# Model family: gpt2; run it with modelzoo/transformers/pytorch/gpt2/run.py",
    ]
    assert get_format("deepspeed").load_writer().header({}, ctx) == []


def test_a_reader_may_recognise_its_own_syntax_before_yaml_is_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """detect_file asks each reader's optional sniff_text first: a syntax that is not YAML or JSON
    (an argument file of `--flag value` words) is detected without an edit to detect.py."""
    from neoconv.formats.detect import detect_file

    path = tmp_path / "run.toy"
    path.write_text("@toy --num-layers 2\n")  # no YAML (`@` cannot start a plain scalar), no format's syntax
    reader = get_format("deepspeed").load_reader()
    monkeypatch.setattr(reader, "sniff_text", lambda text: 1.0 if text.startswith("@toy") else None, raising=False)
    assert detect_file(str(path)) == "deepspeed"
    monkeypatch.setattr(reader, "sniff_text", None, raising=False)
    with pytest.raises(NeoconvError):
        detect_file(str(path))


def test_neoconvs_own_header_tells_a_file_whose_few_keys_two_formats_know(tmp_path: Path) -> None:
    """`model: {config_path: ...}` alone is a Cerebras and a VeOmni key: hf2veomni and hf2cerebras write just
    that; the header line neoconv writes first names the framework, so validate/diff/prove read their output."""
    from neoconv.formats.detect import detect_file

    body = "model:\n  config_path: c.json\n"
    for fmt in ("veomni", "cerebras"):
        path = tmp_path / f"{fmt}.yaml"
        path.write_text(
            f"# {FORMATS[fmt].title.split()[0]} x config (nested layout) written by neoconv from a.json\n{body}"
        )
        assert detect_file(str(path)) == fmt
    (tmp_path / "plain.yaml").write_text("# VeOmni, by hand\n" + body)
    with pytest.raises(NeoconvError, match="could be cerebras or .*veomni"):
        detect_file(str(tmp_path / "plain.yaml"))


def test_a_writer_is_told_the_target_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that spells keys per release needs the version the user asked for (--to-version)."""
    from neoconv import translate

    seen: list[str | None] = []
    writer = get_format("deepspeed").load_writer()
    write = writer.write
    monkeypatch.setattr(writer, "write", lambda leaves, ctx: seen.append(ctx.version) or write(leaves, ctx))
    path = tmp_path / "ds.json"
    path.write_text('{"train_batch_size": 8}')
    translate(str(path), "deepspeed", "deepspeed", target_version="0.17.1")
    translate(str(path), "deepspeed", "deepspeed")
    assert seen == ["0.17.1", "0.19.5"]  # the newest release's label


def test_a_spec_still_giving_its_syntax_is_told_what_replaced_it() -> None:
    """Capabilities are declared, not inferred from a syntax (issue 26): a spec written before is told what to declare."""
    with pytest.raises(TypeError, match="declare what its files can do instead: comments=, editor="):
        FormatSpec(name="old", title="Old", reader="old.reader", writer="old.writer", syntax="json")  # type: ignore[arg-type]
    spec = FormatSpec(name="new", title="New", reader="new.reader", writer="new.writer", comments=False, editor="json")
    assert (spec.comments, spec.editor, spec.empty_allowed) == (False, "json", False)
