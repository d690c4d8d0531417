"""Every VeOmni corpus config (both layouts) to every other format, and NeoX / Cerebras into VeOmni."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS, corpus_files

from neoconv.formats.hf.model_types import table as hf_table
from neoconv import Status, translate
from neoconv.core.errors import InputError, UnsupportedFamily
from neoconv.cli import main
from neoconv.formats.veomni.fields import fields as veomni_fields
from neoconv.io.documents import flatten
from neoconv.knowledge.registry import FORMATS
from neoconv.services.validate import schema_errors

ALL_VEOMNI = corpus_files("veomni", "**/*.yaml") + corpus_files("veomni-legacy", "**/*.yaml")
# multisource data manifests (sources/names/schedule) are what data.train_path points at, not configs
MANIFESTS = [p for p in ALL_VEOMNI if "sources" in (yaml.safe_load(p.read_text()) or {})]
VEOMNI_FILES = [p for p in ALL_VEOMNI if p not in MANIFESTS]
TARGETS = [fmt for fmt in ("neox", "deepspeed", "cerebras") if fmt in FORMATS]
INTO = [("neox", p) for p in corpus_files("neox")] + [
    ("cerebras", p)
    for p in corpus_files("cerebras-legacy", "**/*.yaml") + corpus_files("cerebras-trainer", "**/*.yaml")
]
ABOUT_TARGET = (Status.DEFAULTED, Status.MISSING)


def ident(path: Path) -> str:
    return str(path.relative_to(CORPUS))


def assert_every_leaf_once(result, path: Path) -> None:
    """Every leaf of the file, as written (flat keys stay flat), is in exactly one entry."""
    leaves = set(flatten(yaml.safe_load(path.read_text())))
    keys = [
        e.source_key
        for e in result.report.entries
        if e.source_key and not e.source_key.startswith("--set") and e.status not in ABOUT_TARGET
    ]
    assert sorted(keys) == sorted(leaves)


@pytest.mark.slow
@pytest.mark.parametrize("path", VEOMNI_FILES, ids=ident)
@pytest.mark.parametrize("dst", TARGETS)
def test_every_veomni_config_translates(path: Path, dst: str) -> None:
    result = translate(path, "veomni", dst)
    assert_every_leaf_once(result, path)
    assert schema_errors(result.report.to_json(), "report") == []
    if dst != "neox":  # the NeoX schema lists what NeoX reads; its writer adds keys of its own
        assert (
            schema_errors(yaml.safe_load(result.dump()) if dst != "deepspeed" else json.loads(result.dump()), dst) == []
        )


@pytest.mark.slow
@pytest.mark.parametrize("path", VEOMNI_FILES, ids=ident)
@pytest.mark.parametrize("layout", ["nested", "flat"])
def test_every_veomni_config_migrates(path: Path, layout: str) -> None:
    result = translate(path, "veomni", "veomni", layout=layout)
    assert_every_leaf_once(result, path)
    document = yaml.safe_load(result.dump())
    assert schema_errors(document, "veomni") == []
    fields = veomni_fields()
    for leaf, value in flatten(document).items():  # only fields of the layout, never a key VeOmni ignores
        assert layout in fields.layouts_of(leaf, value), leaf


@pytest.mark.parametrize("path", MANIFESTS, ids=ident)
def test_data_manifests_are_refused_with_what_they_are(path: Path) -> None:
    with pytest.raises(InputError, match="a VeOmni data manifest .* not a training config: it is what data.train_path"):
        translate(path, "veomni", "neox")


@pytest.mark.slow
def test_every_veomni_config_through_the_cli(runner, tmp_path: Path) -> None:
    if not VEOMNI_FILES:
        pytest.skip("the shared corpus is not present")
    for path in VEOMNI_FILES:
        for dst in TARGETS:
            out = tmp_path / f"out.{dst}"
            result = runner.invoke(
                main, [f"veomni2{dst}", str(path), "-o", str(out), "--report", str(tmp_path / "r.json"), "-q"]
            )
            assert result.exit_code == 0, (path, dst, result.stderr)
            report = json.loads((tmp_path / "r.json").read_text())
            if "train" in yaml.safe_load(path.read_text()):
                assert report["source"]["layout"] == ("flat" if "veomni-legacy" in str(path) else "nested")


@pytest.mark.slow
@pytest.mark.parametrize("src, path", INTO, ids=lambda x: x if isinstance(x, str) else ident(x))
def test_neox_and_cerebras_configs_into_veomni(src: str, path: Path, tmp_path: Path) -> None:
    try:
        result = translate(path, src, "veomni", set_values={"model.vocab_size": 50304})
    except UnsupportedFamily as exc:  # a BERT, T5, ViT, ...: no decoder config to write (test_families)
        assert "holds decoder-only transformer language models" in str(exc)
        return
    except Exception as exc:  # the source reader refuses some corpus files (the frameworks do too)
        if "InputError" not in type(exc).__name__:
            raise
        pytest.skip(f"the {src} reader refuses it: {exc}")
    document = yaml.safe_load(result.dump())
    assert schema_errors(document, "veomni") == []
    missing = {e.target_key for e in result.report.entries if e.status is Status.MISSING}
    if result.ir.get("model.family") is None:  # no decoder LM (T5, ViT, ...): no HF decoder config
        assert "config.json" not in result.side_files
        if result.ir.get("model.hidden_size") is not None:
            assert any(
                "no decoder family" in e.detail
                for e in result.report.entries
                if e.status in (Status.DROPPED, Status.LOSSY)
            )
        return
    config = json.loads(result.side_files["config.json"])
    assert config["model_type"] in hf_table().types
    assert document["model"]["config_path"] == "config.json"
    # never silently the HF class's default model: the size is written or reported missing
    assert {"hidden_size", "n_embd"} & set(config) or "config.json:hidden_size" in missing
    keys = [e.source_key for e in result.report.entries if e.source_key and e.status not in ABOUT_TARGET]
    assert len(keys) == len(set(keys))  # no leaf twice
