"""VeOmni's newest stored arguments (ByteDance-Seed/VeOmni@000bbdf5:veomni/arguments/arguments_types.py), the
release labelled #1125 (PR #1125 moved chat_template to model.*; PR #1075 made AdamW's betas a field; PR #1082
removed the SeedOmni V1 model fields): read (betas into the canonical Adam betas) and written (--to-version)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from neoconv import translate
from neoconv.core.errors import InputError
from neoconv.formats.veomni.fields import fields
from neoconv.knowledge.schema import load_history
from neoconv.io.documents import flatten

ROOT = Path(__file__).resolve().parent.parent
INPUTS = ROOT / "fixtures" / "inputs" / "veomni"
LATEST = INPUTS / "tinyllama-latest.yaml"
SCOPED = INPUTS / "tinyllama-scoped.yaml"


def _generator():  # type: ignore[no-untyped-def]
    from test_veomni_scoped import history_generator

    return history_generator()


def test_the_history_has_1125_after_1090_with_its_moves_and_fields() -> None:
    history = load_history("veomni")
    assert history is not None and history.labels[-1] == "#1125" and history.pr_release[1075] == "#1125"
    assert history.reads("model.chat_template", "#1125") and not history.reads("data.chat_template", "#1125")
    assert history.reads("data.chat_template", "#1090")
    assert not history.reads("model.accelerator.chunk_mbs_config.enable", "#1125")
    assert history.reads("model.accelerator.chunk_mbs_config.enable", "#1090")
    assert history.default_at("model.optimizer.betas", "#1125") == [0.9, 0.95]
    assert not history.reads("model.optimizer.betas", "#1090")
    assert history.default_at("model.broadcast_model_weights_from_rank0", "#1125") is True
    assert not history.reads("model.foundation", "#1125")
    moved = {r.old: r.new for r in history.renames if r.release == "#1125"}
    assert moved["data.chat_template"] == "model.chat_template"
    # the layout table moves the same keys (from the nested view) as the generator (from #1090's places)
    gen = _generator()
    for since, view, new in fields().later:
        assert since == gen.LATEST and gen.LATEST_MOVES[fields().to_scoped(view)] == new


def test_a_1125_file_reads_its_betas_as_the_canonical_adam_betas() -> None:
    result = translate(LATEST, "veomni", "neox")
    assert result.report.source["layout"] == "scoped" and result.report.source["version"] == "#1125"
    assert result.config["optimizer"]["params"]["betas"] == [0.9, 0.98]
    assert result.config["optimizer"]["params"]["lr"] == 4.0e-4
    assert not [e for e in result.report.entries if e.status.value == "unknown"]
    by_key = result.report.by_source()
    assert by_key["model.optimizer.betas"].status.value == "exact"
    # the same run as the #1090 file, apart from the betas it sets
    scoped = translate(SCOPED, "veomni", "neox").config
    assert scoped["optimizer"]["params"]["betas"] == [0.9, 0.95]
    assert {k: v for k, v in flatten(dict(result.config)).items() if "betas" not in k} == {
        k: v for k, v in flatten(dict(scoped)).items() if "betas" not in k
    }


def test_writing_1125_places_betas_chat_template_and_the_loading_flag(tmp_path: Path) -> None:
    back = translate(LATEST, "veomni", "veomni", target_version="#1125")
    assert back.report.target["version"] == "#1125" and back.report.target["layout"] == "scoped"
    assert flatten(dict(back.config)) == flatten(yaml.safe_load(LATEST.read_text()))
    # for #1090 the three keys go back where that release reads them, and the betas are lost
    old = translate(LATEST, "veomni", "veomni", target_version="#1090")
    config = old.config
    assert config["data"]["chat_template"] == "default"
    assert config["model"]["accelerator"]["broadcast_model_weights_from_rank0"] is True
    assert "betas" not in config["model"]["optimizer"] and "chat_template" not in config["model"]
    lossy = old.report.by_source()["model.optimizer.betas"]
    assert lossy.status.value == "lossy" and "VeOmni #1090 does not read model.optimizer.betas" in lossy.detail


def test_another_framework_written_for_1125_carries_its_betas(pythia160m: Path, tmp_path: Path) -> None:
    source = tmp_path / "betas.yml"
    source.write_text(pythia160m.read_text().replace('"betas": [0.9, 0.95]', '"betas": [0.9, 0.999]'))
    result = translate(source, "neox", "veomni", target_version="#1125", world_size=8)
    assert result.config["model"]["optimizer"]["betas"] == [0.9, 0.999]
    assert result.report.target["verified"] is True
    # #1090 hard-codes (0.9, 0.95): the source's betas are lost there, and named
    older = translate(source, "neox", "veomni", target_version="#1090", world_size=8)
    assert "betas" not in older.config["model"]["optimizer"]
    assert older.report.by_source()["optimizer.params.betas"].status.value == "lossy"
    # VeOmni's own value is exactly what #1090 hard-codes
    same = translate(pythia160m, "neox", "veomni", target_version="#1090", world_size=8)
    assert same.report.by_source()["optimizer.params.betas"].status.value == "exact"


def test_1125_refuses_what_it_removed() -> None:
    with pytest.raises(InputError) as caught:
        translate(INPUTS / "strict" / "latest-chunk.yaml", "veomni", "neox")
    assert caught.value.line == 8  # its first setting
    assert '"model.accelerator.chunk_mbs_config is not a field of AcceleratorConfig"' in caught.value.message
    assert "VeOmni #1125 refuses" in caught.value.message and "read by VeOmni #1090" in caught.value.message


def test_validate_knows_the_1125_keys_and_which_release_reads_them() -> None:
    from neoconv.services.validate_file import validate_file

    assert validate_file(str(LATEST)).valid and validate_file(str(LATEST), version="#1125").valid
    said = {p.key: p.message for p in validate_file(str(LATEST), version="#1090").problems}
    assert said["model.optimizer.betas"] == "VeOmni #1090 does not read model.optimizer.betas (read by #1125)"
    assert "model.chat_template" in said and "model.broadcast_model_weights_from_rank0" in said
