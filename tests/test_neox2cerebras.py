"""NeoX -> Cerebras on our fixtures and on every NeoX config in the shared corpus."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from neoconv import InputError, Status, translate
from neoconv.formats.cerebras.reader import READER as cerebras
from neoconv.io.documents import flatten
from neoconv.services.validate import schema_errors

from conftest import CORPUS, corpus_dir, corpus_files, runnable, translate_unless_not_attention, corpus_id

NEOX_FILES = [p for p in corpus_files("neox") if runnable(p)]
LOCAL_SETUP = CORPUS / "neox" / "local_setup.yml"


def source_leaves(*paths: Path) -> set[str]:
    leaves: set[str] = set()
    for path in paths:
        data = yaml.safe_load(path.read_text())
        leaves |= set(flatten({k.replace("-", "_"): v for k, v in data.items()}))
    return leaves


def assert_accounted(result, *paths: Path) -> None:
    """Every source leaf lands in exactly one report entry (defaulted entries name keys the file lacks)."""
    leaves = source_leaves(*paths)
    about_target = (Status.DEFAULTED, Status.MISSING)
    keys = [
        e.source_key
        for e in result.report.entries
        if e.source_key and not e.source_key.startswith("--set") and e.status not in about_target
    ]
    assert sorted(keys) == sorted(leaves)
    assert not {e.source_key for e in result.report.entries if e.status in about_target} & leaves


def reread(result, tmp_path: Path) -> dict:
    out = tmp_path / "out.yaml"
    out.write_text(result.dump())
    return cerebras.read([str(out)]).tree


@pytest.mark.parametrize("path", NEOX_FILES, ids=corpus_id(CORPUS / "neox"))
def test_every_corpus_config_translates(path: Path, tmp_path: Path) -> None:
    result = translate_unless_not_attention(path, "neox", "cerebras", world_size=8)
    if result is None:
        return
    tree = reread(result, tmp_path)
    assert schema_errors(tree, "cerebras") == []
    assert schema_errors(result.report.to_json(), "report") == []
    assert_accounted(result, path)


@pytest.mark.parametrize("path", [p for p in NEOX_FILES if p.name != "local_setup.yml"], ids=corpus_id(CORPUS / "neox"))
def test_every_corpus_config_with_local_setup(path: Path, tmp_path: Path) -> None:
    corpus_dir("neox")
    try:
        result = translate_unless_not_attention([path, LOCAL_SETUP], "neox", "cerebras", world_size=8)
        if result is None:
            return
    except InputError as exc:
        # NeoX itself refuses a key given in both files (including tensorboard-dir vs tensorboard_dir)
        assert "NeoX refuses a key given in two files" in str(exc)
        both = source_leaves(path) & source_leaves(LOCAL_SETUP)
        top = {k.split(".")[0] for k in source_leaves(path)} & {k.split(".")[0] for k in source_leaves(LOCAL_SETUP)}
        assert both or top, "the error must name a key that really is in both files"
        return
    assert schema_errors(reread(result, tmp_path), "cerebras") == []
    assert_accounted(result, path, LOCAL_SETUP)


def test_neox_20b_model_section_matches_what_cerebras_wrote() -> None:
    corpus_dir("neox")
    result = translate(
        CORPUS / "neox" / "20B.yml", "neox", "cerebras", world_size=96, set_values={"model.vocab_size": 50277}
    )
    model = result.config["model"]
    # Cerebras' own params_gpt_neox_20B.yaml (Model Zoo 2.0.2) for the same model:
    assert model["hidden_size"] == 6144 and model["num_hidden_layers"] == 44 and model["num_heads"] == 64
    assert model["filter_size"] == 24576
    assert model["rotary_dim"] == 24
    assert model["position_embedding_type"] == "rotary"
    assert model["use_untied_layer_norm"] is True
    assert model["share_embedding_weights"] is False
    assert model["layer_norm_epsilon"] == 1e-5
    assert model["residual_dropout_rate"] == model["attention_dropout_rate"] == model["embedding_dropout_rate"] == 0.0
    assert model["use_bias_in_output"] is False
    assert model["initializer"]["std"] == pytest.approx(math.sqrt(2 / (5 * 6144)))
    assert model["embedding_initializer"] == model["initializer"]
    assert model["output_layer_initializer"]["std"] == pytest.approx(2 / 44 / math.sqrt(6144))
    assert model["vocab_size"] == 50277
    # NeoX-20B sets bias_gelu_fusion: NeoX's fused GELU is the tanh approximation (HF gelu_new)
    assert model["nonlinearity"] == "gelu_new"
    assert result.report.target["model_family"] == "gpt-neox"
    # 96 GPUs, pipe 4 x model 2 -> data-parallel 12; micro 4 x accumulation 32 x 12 = 1536
    assert result.config["train_input"]["batch_size"] == 1536
    opt = result.config["optimizer"]
    assert opt["weight_decay"] == 0.01 and opt["betas"] == [0.9, 0.95] and opt["eps"] == 1e-8
    # AnnealingLR exactly: steps 0 and 1 at lr / W, the warmup to 0.97e-4 at step 1500, the cosine to
    # 0.97e-5 at 150000 (CosineAnnealingLR: it rises again past lr_decay_iters, as NeoX's does)
    assert opt["learning_rate"][:2] == [
        {"scheduler": "Constant", "learning_rate": pytest.approx(0.97e-4 / 1500), "total_iters": 1},
        {
            "scheduler": "Linear",
            "initial_learning_rate": pytest.approx(0.97e-4 / 1500),
            "end_learning_rate": 0.97e-4,
            "total_iters": 1499,
        },
    ]
    assert opt["learning_rate"][2] == {
        "scheduler": "CosineAnnealing",
        "initial_learning_rate": 0.97e-4,
        "T_max": 148500,
        "eta_min": pytest.approx(0.97e-5),
    }
    assert result.report.by_source()["lr_decay_style"].status is Status.CONVERTED
    assert result.config["runconfig"]["max_steps"] == 150000


def test_llama2_7b_gated_ffn_and_rmsnorm() -> None:
    corpus_dir("neox")
    result = translate(CORPUS / "neox" / "llama2" / "7B.yml", "neox", "cerebras")
    model = result.config["model"]
    assert model["filter_size"] == 11008  # NeoX 32768 with mlp_multiple_of 256, not 32768
    assert model["nonlinearity"] == "swiglu" and model["norm_type"] == "rmsnorm"
    assert model["layer_norm_epsilon"] == 1e-5
    assert model["rotary_dim"] == 128
    assert model["use_projection_bias_in_attention"] is False
    # hidden_dropout is left at NeoX's 0.0; Cerebras' llama default is 0.1, so it is written
    assert model["dropout_rate"] == 0.0
    assert result.report.target["model_family"] == "llama"
    entries = result.report.by_source()
    assert entries["intermediate_size"].status is Status.CONVERTED
    assert entries["mlp_multiple_of"].status is Status.CONVERTED
    defaulted = {e.target_key for e in result.report.entries if e.status is Status.DEFAULTED}
    assert "model.dropout_rate" in defaulted and "optimizer.eps" in defaulted and "optimizer.weight_decay" in defaulted
    missing = {e.target_key for e in result.report.entries if e.status is Status.MISSING}
    assert missing == {
        "model.vocab_size",
        "train_input.batch_size",
        "runconfig.max_steps",
        "train_input.data_processor",
        "train_input.data_dir",
    }


def test_fixture_pythia_statuses(pythia160m: Path) -> None:
    result = translate(pythia160m, "neox", "cerebras", world_size=8, set_values={"model.vocab_size": 50304})
    by = result.report.by_source()
    assert by["num_layers"].status is Status.EXACT and by["num_layers"].target_key == "model.num_hidden_layers"
    assert by["rotary_pct"].status is Status.CONVERTED and result.config["model"]["rotary_dim"] == 16
    assert by["no_weight_tying"].status is Status.CONVERTED
    assert result.config["model"]["share_embedding_weights"] is False
    assert by["gradient_clipping"].status is Status.LOSSY and "DeeperSpeed" in by["gradient_clipping"].detail
    assert by["init_method"].status is Status.LOSSY
    assert by["data_impl" if "data_impl" in by else "tokenizer_type"].status is Status.DROPPED
    assert (
        by["pipe_parallel_size"].detail.startswith("Cerebras weight streaming")
        and "pipe-parallel-size" in by["pipe_parallel_size"].detail
    )
    assert by["optimizer.params.eps"].status is Status.CONVERTED and "YAML 1.1" in by["optimizer.params.eps"].detail
    assert result.config["optimizer"]["eps"] == 1e-8
    assert result.config["train_input"]["batch_size"] == 256  # 32 x 1 x 8
    # only what Model Zoo needs and no NeoX config holds: the data (processor, folder)
    missing = [e for e in result.report.entries if e.status is Status.MISSING]
    assert [e.target_key for e in missing] == ["train_input.data_processor", "train_input.data_dir"]
    assert result.config["model"]["vocab_size"] == 50304
    assert result.config["optimizer"]["loss_scaling_factor"] == "dynamic"
    assert result.config["optimizer"]["initial_loss_scale"] == 4096.0


def test_without_world_size_the_global_batch_is_missing(pythia160m: Path) -> None:
    result = translate(pythia160m, "neox", "cerebras")
    missing = [e for e in result.report.entries if e.status is Status.MISSING]
    assert any(e.target_key == "train_input.batch_size" and "--world-size" in e.detail for e in missing)
    assert "batch_size" not in result.config.get("train_input", {})


def test_unknown_key_gets_a_suggestion(tmp_path: Path) -> None:
    cfg = tmp_path / "typo.yml"
    cfg.write_text("num_layers: 2\nhiden_size: 64\nnum_attention_heads: 4\n")
    result = translate(cfg, "neox", "cerebras")
    entry = result.report.by_source()["hiden_size"]
    assert entry.status is Status.UNKNOWN and "did you mean hidden_size" in entry.detail


def test_a_file_of_thousands_of_stray_keys_is_reported_quickly_without_suggestions(tmp_path: Path) -> None:
    base = "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\n"
    cfg = tmp_path / "stray.yml"
    cfg.write_text(base + "".join(f"stray_{i}_hiden_size: {i}\n" for i in range(3000)))
    result = translate(cfg, "neox", "cerebras")
    unknown = [e for e in result.report.entries if e.status is Status.UNKNOWN]
    assert len(unknown) == 3000  # every one still named
    assert sum("no suggestion: the file has too many unknown keys" in e.detail for e in unknown) >= 2900
    # a file with one of them afterwards gets the full search again
    single = tmp_path / "one.yml"
    single.write_text(base + "stray_2999_hiden_size: 1\n")
    entry = translate(single, "neox", "cerebras").report.by_source()["stray_2999_hiden_size"]
    assert entry.status is Status.UNKNOWN and "too many" not in entry.detail


def test_default_aware_dropouts(tmp_path: Path) -> None:
    cfg = tmp_path / "tiny.yml"
    cfg.write_text("num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\n")
    result = translate(cfg, "neox", "cerebras")
    # NeoX default dropout is 0.0 but Cerebras' gpt2 default is 0.1: written explicitly, reported defaulted
    assert result.config["model"]["dropout_rate"] == 0.0
    assert result.config["model"]["attention_dropout_rate"] == 0.0
    entry = next(e for e in result.report.entries if e.target_key == "model.dropout_rate")
    assert entry.status is Status.DEFAULTED and "0.1" in entry.detail
    # ... and the NeoX default learned position embedding is stated, not left to Cerebras
    assert result.config["model"]["position_embedding_type"] == "learned"
    assert "rotary_dim" not in result.config["model"]


def test_older_neox_release_defaults_are_versions(tmp_path: Path) -> None:
    cfg = tmp_path / "tiny.yml"
    cfg.write_text("num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\n")
    old = translate(cfg, "neox", "cerebras", source_version="configs-readme")
    assert old.config["model"]["dropout_rate"] == 0.1  # the old configs README documented 0.1
    assert old.config["optimizer"]["weight_decay"] == 0.01
