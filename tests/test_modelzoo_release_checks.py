"""Model Zoo 2.4+'s trainer code refuses constructs that 2.2/2.3 files hold and no key's schema says
(issue #28): the data processors the registry pairs with a model, the MNLI/SST2 `is_training` that 2.4
requires, the T5 lengths and BERT vocab files 2.4 compares with the model's, the multimodal keys 2.5
retired. `validate` names each (mappings/cerebras.yaml `checks:`); a same-format migration writes the
values the source's release derived (mappings/cerebras-migrations.yaml) or names what it leaves out,
and never calls a refused value exact. Inputs are small files written here, each holding the construct."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT

from neoconv import translate
from neoconv.core.report import Status
from neoconv.services.validate_file import validate_file

CLAIMS = {Status.EXACT, Status.CONVERTED, Status.DEFAULTED}

T5 = """\
train_input:
    data_processor: "T5DynamicDataProcessor"
    src_vocab_file: ./vocab.txt
    src_data_dir: ./data
    src_max_sequence_length: 256
    tgt_max_sequence_length: 64
    batch_size: 16
    shuffle: True
eval_input:
    data_processor: "T5DynamicDataProcessor"
    src_vocab_file: ./vocab.txt
    src_data_dir: ./data
    src_max_sequence_length: 256
    tgt_max_sequence_length: 64
    batch_size: 16
model:
    src_vocab_size: 32128
    d_model: 256
    d_kv: 32
    d_ff: 1024
    encoder_num_hidden_layers: 2
    decoder_num_hidden_layers: 2
    num_heads: 8
    relative_attention_num_buckets: 32
optimizer:
    optimizer_type: "Adam"
    learning_rate: 0.001
runconfig:
    max_steps: 100
"""

MNLI = """\
train_input:
    data_processor: "MNLIDataProcessor"
    data_dir: ./mnli/train
    vocab_file: ./vocab.txt
    max_sequence_length: 128
    batch_size: 32
eval_input:
    data_processor: "MNLIDataProcessor"
    data_dir: ./mnli/dev
    vocab_file: ./vocab.txt
    max_sequence_length: 128
    batch_size: 32
model:
    name: "bert/classifier"
    vocab_size: 30522
    hidden_size: 256
    num_hidden_layers: 2
    num_heads: 4
    filter_size: 1024
    num_labels: 3
optimizer:
    optimizer_type: "AdamW"
    learning_rate: 0.0001
runconfig:
    max_steps: 10
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _problems(path: Path, version: str) -> dict[str | None, str]:
    return {p.key: p.message for p in validate_file(str(path), "cerebras", version=version).problems}


def _trainer(model: str, loader: str) -> str:
    return f"trainer:\n  init:\n    model:\n{model}  fit:\n    train_dataloader:\n{loader}"


# ---- validate: what each release refuses ------------------------------------------------------------


def test_a_decoder_model_takes_only_the_gpt_data_processors(tmp_path: Path) -> None:
    """registry.yaml: a DPO file named after its policy model (mistral) with the dpo data processor."""
    loader = "      data_processor: DpoHDF5DataProcessor\n      data_dir: ./d\n      batch_size: 8\n"
    dpo = _write(tmp_path, "dpo.yaml", _trainer("      name: mistral\n      hidden_size: 64\n", loader))
    said = _problems(dpo, "2.10.0")
    assert "trainer.fit.train_dataloader.data_processor" in said
    assert "GptHDF5MapDataProcessor" in said["trainer.fit.train_dataloader.data_processor"]
    gpt = _write(
        tmp_path,
        "gpt.yaml",
        _trainer(
            "      name: mistral\n      hidden_size: 64\n",
            loader.replace("DpoHDF5DataProcessor", "GptHDF5MapDataProcessor"),
        ),
    )
    assert "trainer.fit.train_dataloader.data_processor" not in _problems(gpt, "2.10.0")


def test_unet_data_processors_are_refused_where_no_model_takes_them(tmp_path: Path) -> None:
    """U-Net is registered in 2.9.0 only (2.4-2.8 and 2.10 have no model taking its processors)."""
    path = _write(
        tmp_path,
        "unet.yaml",
        "train_input:\n  data_processor: CityscapesDataProcessor\n  batch_size: 4\n"
        "model:\n  name: unet\n  loss: ssce\n",
    )
    for release in ("2.10.0", "2.8.0", "2.4.0"):
        assert "train_input.data_processor" in _problems(path, release), release
    assert "train_input.data_processor" not in _problems(path, "2.9.0")
    assert "train_input.data_processor" not in _problems(path, "2.2.1")  # before the registry


def test_mnli_needs_is_training_from_2_4(tmp_path: Path) -> None:
    path = _write(tmp_path, "mnli.yaml", MNLI)
    said = _problems(path, "2.4.0")
    assert "is required" in said["train_input.is_training"] and "is required" in said["eval_input.is_training"]
    assert "train_input.is_training" not in _problems(path, "2.3.1")
    given = _write(
        tmp_path, "given.yaml", MNLI.replace("    batch_size: 32\n", "    batch_size: 32\n    is_training: true\n", 1)
    )
    assert "train_input.is_training" not in _problems(given, "2.4.0")


def test_t5_lengths_must_equal_the_models_from_2_4(tmp_path: Path) -> None:
    path = _write(tmp_path, "t5.yaml", T5)
    said = _problems(path, "2.10.0")
    assert "model.src_max_position_embeddings (null)" in said["train_input.src_max_sequence_length"]
    assert "train_input.tgt_max_sequence_length" in said
    assert "train_input.src_max_sequence_length" not in _problems(path, "2.3.1")  # derived there
    stated = T5.replace(
        "    src_vocab_size: 32128\n", "    src_vocab_size: 32128\n    src_max_position_embeddings: 256\n"
    )
    other = _write(tmp_path, "stated.yaml", stated)
    assert "train_input.src_max_sequence_length" not in _problems(other, "2.10.0")
    unequal = _write(
        tmp_path, "unequal.yaml", stated.replace("src_max_position_embeddings: 256", "src_max_position_embeddings: 512")
    )
    assert "(512)" in _problems(unequal, "2.10.0")["train_input.src_max_sequence_length"]


def test_multimodal_keys_retired_in_2_5_are_refused_there(tmp_path: Path) -> None:
    loader = "      data_processor: LlavaHDF5MapDataProcessor\n      data_dir: ./d\n      bos_token_id: 1\n"
    path = _write(tmp_path, "llava.yaml", _trainer("      name: llava\n", loader))
    assert "trainer.fit.train_dataloader.bos_token_id" in _problems(path, "2.5.0")
    assert "trainer.fit.train_dataloader.bos_token_id" not in _problems(path, "2.4.0")  # deprecated, ignored


# ---- a migration writes what the target release takes ----------------------------------------------


@pytest.mark.parametrize("layout", ["trainer", "legacy"])
def test_t5_migration_states_the_lengths_the_old_release_derived(tmp_path: Path, layout: str) -> None:
    path = _write(tmp_path, "t5.yaml", T5)
    result = translate(path, "cerebras", "cerebras", layout=layout, source_version="2.2.1", world_size=8)
    model = result.config["trainer"]["init"]["model"] if layout == "trainer" else result.config["model"]
    assert (model["src_max_position_embeddings"], model["tgt_max_position_embeddings"]) == (256, 64)
    added = [e for e in result.report.entries if e.target_key and e.target_key.endswith("max_position_embeddings")]
    assert len(added) == 2 and all(e.status is Status.DEFAULTED for e in added)
    assert result.report.target["valid"] is True
    kept = translate(path, "cerebras", "cerebras", layout=layout, source_version="2.2.1", target_version="2.3.1")
    assert "src_max_position_embeddings" not in str(kept.config)  # 2.3 derives it itself


def test_mnli_migration_says_which_loader_trains(tmp_path: Path) -> None:
    result = translate(
        _write(tmp_path, "mnli.yaml", MNLI), "cerebras", "cerebras", layout="trainer", source_version="2.2.1"
    )
    fit = result.config["trainer"]["fit"]
    assert fit["train_dataloader"]["is_training"] is True and fit["val_dataloader"]["is_training"] is False
    assert not any(p for p in result.report.entries if p.kind == "refused_by_release")


def test_a_data_processor_no_model_takes_is_not_exact(tmp_path: Path) -> None:
    text = (
        "train_input:\n  data_processor: SkmDataProcessor\n  data_dir: ./d\n  batch_size: 4\nmodel:\n  encoder_filters: [8, 16]\n"
        "  decoder_filters: [8]\n  convs_per_block: [3x3_conv]\n  downscale_method: max_pool\noptimizer:\n"
        "  optimizer_type: Adam\n  learning_rate: 0.001\nrunconfig:\n  max_steps: 10\n"
    )
    result = translate(
        _write(tmp_path, "unet.yaml", text), "cerebras", "cerebras", layout="trainer", source_version="2.0.2"
    )
    entry = result.report.by_source()["train_input.data_processor"]
    assert entry.status is Status.LOSSY and entry.kind == "refused_by_release"
    assert result.report.target["valid"] is False


def test_a_dpo_file_is_the_dpo_model_whatever_its_policy_model_is_named(tmp_path: Path) -> None:
    text = (
        "train_input:\n  data_processor: DpoHDF5DataProcessor\n  data_dir: ./d\n  batch_size: 8\nmodel:\n"
        "  dpo:\n    beta: 0.1\n  model_name: mistral\n  hidden_size: 64\n  num_hidden_layers: 2\n  num_heads: 4\n"
        "optimizer:\n  optimizer_type: AdamW\n  learning_rate: 0.0001\nrunconfig:\n  max_steps: 10\n"
    )
    result = translate(
        _write(tmp_path, "dpo.yaml", text), "cerebras", "cerebras", layout="trainer", source_version="2.2.1"
    )
    assert result.config["trainer"]["init"]["model"]["name"] == "dpo"
    entry = result.report.by_source()["train_input.data_processor"]
    assert entry.status is Status.EXACT
    # 2.4+ wants the policy model nested and named (not written yet): the report says the release refuses it
    refused = next(e for e in result.report.entries if e.target_key == "trainer.init.model.policy_model")
    assert refused.status is Status.LOSSY and refused.kind == "refused_by_release"
    assert result.report.target["valid"] is False


def test_model_name_is_read_by_2_10_as_the_model_s_name(tmp_path: Path) -> None:
    # 2.10's own tutorials name the model so (eeh_config.yaml): validate_trainer_params reads it as `name`
    text = (
        "trainer:\n  init:\n    model:\n      model_name: llama\n      hidden_size: 64\n      num_hidden_layers: 2\n"
        "      num_heads: 4\n      vocab_size: 100\n    optimizer:\n      AdamW:\n        learning_rate: 0.0001\n"
        "    loop:\n      max_steps: 10\n  fit:\n    train_dataloader:\n      data_processor: GptHDF5MapDataProcessor\n"
        "      data_dir: ./d\n      batch_size: 4\n"
    )
    result = translate(
        _write(tmp_path, "eeh.yaml", text), "cerebras", "cerebras", layout="trainer", target_version="2.10"
    )
    assert result.config["trainer"]["init"]["model"]["model_name"] == "llama"
    assert result.report.by_source()["trainer.init.model.model_name"].status is Status.EXACT
    assert result.report.target["valid"] is True


def test_a_2_3_dpo_model_name_beside_the_dpo_name_is_never_exact(tmp_path: Path) -> None:
    # 2.3's DPO model_name names the policy model; 2.10 reads it as `name` and refuses it beside name: dpo
    text = (
        "train_input:\n  data_processor: DpoHDF5DataProcessor\n  data_dir: ./d\n  batch_size: 8\nmodel:\n"
        "  dpo:\n    beta: 0.1\n  model_name: mistral\n  hidden_size: 64\n  num_hidden_layers: 2\n  num_heads: 4\n"
        "optimizer:\n  optimizer_type: AdamW\n  learning_rate: 0.0001\nrunconfig:\n  max_steps: 10\n"
    )
    result = translate(_write(tmp_path, "dpo.yaml", text), "cerebras", "cerebras", source_version="2.3.1")
    assert result.config["model"]["name"] == "dpo"
    entry = result.report.by_source()["model.model_name"]
    assert entry.status is Status.LOSSY and entry.kind == "refused_by_release"
    assert result.report.target["valid"] is False


FALCON_19 = """\
train_input:
    data_processor: "GptHDF5DataProcessor"
    data_dir: ./data
    batch_size: 8
model:
    hidden_size: 64
    num_hidden_layers: 2
    num_heads: 4
    vocab_size: 100
    max_position_embeddings: 128
    position_embedding_type: "rotary"
    use_untied_layer_norm: False
    embedding_dropout_rate: 0.0
    residual_dropout_rate: 0.05
    dropout_rate: 0.3
optimizer:
    optimizer_type: "AdamW"
    learning_rate: 0.0001
runconfig:
    max_steps: 10
"""


@pytest.mark.parametrize("layout", ["legacy", "trainer"])
def test_a_1_9_falcon_file_keeps_the_dropout_spelling_2_10_reads(tmp_path: Path, layout: str) -> None:
    # 2.10's GPTJModelConfig: dropout_rate = Field(alias="residual_dropout_rate"); both given is refused
    text = FALCON_19.replace("    hidden_size", "    name: falcon\n    hidden_size", 1)
    result = translate(
        _write(tmp_path, "falcon.yaml", text),
        "cerebras",
        "cerebras",
        layout=layout,
        source_version="1.9.1",
        target_version="2.10",
    )
    model = result.config["model"] if layout == "legacy" else result.config["trainer"]["init"]["model"]
    assert model["residual_dropout_rate"] == 0.05 and "dropout_rate" not in model
    entry = result.report.by_source()["model.dropout_rate"]
    assert entry.status is Status.DROPPED and "model.residual_dropout_rate is kept" in entry.detail
    assert result.report.by_source()["model.residual_dropout_rate"].status is Status.EXACT
    assert "model.dropout_rate" not in _problems(_write(tmp_path, "out.yaml", result.dump()), "2.10")


@pytest.mark.parametrize(
    ("own", "alias"),
    [
        ("  embd_pdrop: 0.2\n", "  embedding_dropout_rate: 0.1\n"),
        (
            "  attention_initializer: {name: truncated_normal, std: 0.01}\n",
            "  initializer: {name: normal, std: 0.02}\n",
        ),
    ],
)
def test_a_gptj_field_given_in_both_spellings_keeps_the_alias_2_10_reads(tmp_path: Path, own: str, alias: str) -> None:
    text = (
        "train_input:\n  data_processor: GptHDF5DataProcessor\n  data_dir: ./d\n  batch_size: 8\nmodel:\n"
        f"  name: gptj\n  hidden_size: 64\n{alias}{own}optimizer:\n  optimizer_type: AdamW\n  learning_rate: 0.0001\n"
        "runconfig:\n  max_steps: 10\n"
    )
    key, kept = own.split(":")[0].strip(), alias.split(":")[0].strip()
    result = translate(
        _write(tmp_path, "gptj.yaml", text), "cerebras", "cerebras", source_version="2.3.1", target_version="2.10"
    )
    assert key not in result.config["model"] and kept in result.config["model"]
    gone = [e for e in result.report.entries if (e.source_key or "").startswith(f"model.{key}")]
    assert gone and all(e.status is Status.DROPPED for e in gone)
    if "{" not in own:  # a block's leaves: 2.10 reads none of them under that name either, said so first
        assert f"model.{kept} is kept" in gone[0].detail


def test_both_dropout_spellings_are_kept_for_a_release_before_2_4_and_for_gpt2(tmp_path: Path) -> None:
    falcon = FALCON_19.replace("    hidden_size", "    name: falcon\n    hidden_size", 1)
    old = translate(
        _write(tmp_path, "f.yaml", falcon), "cerebras", "cerebras", source_version="1.9.1", target_version="2.3"
    )
    assert old.config["model"]["dropout_rate"] == 0.3
    gpt2 = FALCON_19.replace("    residual_dropout_rate: 0.05\n", "").replace(
        "    hidden_size", "    name: gpt2\n    hidden_size", 1
    )
    kept = translate(_write(tmp_path, "g.yaml", gpt2), "cerebras", "cerebras", target_version="2.10")
    assert kept.config["model"]["dropout_rate"] == 0.3


def test_multimodal_migration_leaves_out_what_2_5_retired(tmp_path: Path) -> None:
    loader = (
        "    data_processor: LlavaHDF5MapDataProcessor\n    data_dir: ./d\n    batch_size: 8\n    bos_token_id: 1\n"
    )
    text = (
        f"train_input:\n{loader}model:\n  name: llava\noptimizer:\n  optimizer_type: AdamW\n  learning_rate: 0.0001\n"
        "runconfig:\n  max_steps: 10\n"
    )
    result = translate(
        _write(tmp_path, "llava.yaml", text), "cerebras", "cerebras", layout="trainer", source_version="2.2.1"
    )
    assert "bos_token_id" not in result.config["trainer"]["fit"]["train_dataloader"]
    entry = result.report.by_source()["train_input.bos_token_id"]
    assert entry.status is Status.DROPPED and "2.5+ refuses it" in entry.detail
    old = translate(
        _write(tmp_path, "l2.yaml", text),
        "cerebras",
        "cerebras",
        layout="trainer",
        source_version="2.2.1",
        target_version="2.4.0",
    )
    assert old.config["trainer"]["fit"]["train_dataloader"]["bos_token_id"] == 1


def test_a_legacy_file_of_another_family_gets_the_name_its_model_takes(tmp_path: Path) -> None:
    """Model Zoo 2.4+ converts a legacy file to the trainer layout and builds the model its name gives:
    the legacy output names it as the trainer output does (the registry's model for the data processor)."""
    text = (
        "train_input:\n  data_processor: MultimodalSimpleHDF5MapDataProcessor\n  data_dir: ./d\n  batch_size: 8\n"
        "model:\n  image_model_list:\n    image_models: []\n  text_model:\n    name: LlamaModel\n"
        "optimizer:\n  optimizer_type: AdamW\n  learning_rate: 0.0001\nrunconfig:\n  max_steps: 10\n"
    )
    path = _write(tmp_path, "mm.yaml", text)
    result = translate(path, "cerebras", "cerebras", layout="legacy", source_version="2.2.1")
    assert result.config["model"]["name"] == "multimodal_simple"
    entry = next(e for e in result.report.entries if e.target_key == "model.name")
    assert entry.status is Status.DEFAULTED and entry.kind == "added_for_target"
    before = translate(path, "cerebras", "cerebras", layout="legacy", source_version="2.2.1", target_version="2.3.1")
    assert "name" not in before.config["model"]  # before 2.4 the run.py you launch is the model


def test_a_1x_gpt_input_precision_is_left_out_for_2_5(tmp_path: Path) -> None:
    """1.x GPT files set train_input.mixed_precision; 2.4's GPT data processor config reads and ignores it
    (deprecated), 2.5+ refuses it: left out and named, the model's precision carried."""
    text = (
        "train_input:\n  data_processor: GptHDF5DataProcessor\n  data_dir: ./d\n  batch_size: 8\n"
        "  mixed_precision: True\nmodel:\n  vocab_size: 1000\n  hidden_size: 64\n  num_hidden_layers: 2\n"
        "  num_heads: 4\n  filter_size: 256\n  max_position_embeddings: 128\n  mixed_precision: True\n"
        "optimizer:\n  optimizer_type: AdamW\n  learning_rate: 0.0001\nrunconfig:\n  max_steps: 10\n"
    )
    path = _write(tmp_path, "gpt.yaml", text)
    assert "train_input.mixed_precision" in _problems(path, "2.5.0")
    assert "train_input.mixed_precision" not in _problems(path, "2.4.0")
    result = translate(path, "cerebras", "cerebras", layout="trainer", source_version="1.9.1")
    assert "mixed_precision" not in result.config["trainer"]["fit"]["train_dataloader"]
    assert result.report.by_source()["train_input.mixed_precision"].status is Status.DROPPED
    assert result.config["trainer"]["init"]["precision"]["enabled"] is True
    kept = translate(path, "cerebras", "cerebras", layout="trainer", source_version="1.9.1", target_version="2.4.0")
    assert kept.config["trainer"]["fit"]["train_dataloader"]["mixed_precision"] is True


def test_every_migration_names_keys_and_releases_model_zoo_has() -> None:
    """mappings/cerebras-migrations.yaml: a typo would make a migration a silent no-op."""
    from neoconv.formats.cerebras.migrations import _data
    from neoconv.knowledge.schema import load_history

    history = load_history("cerebras")
    assert history is not None
    derived, retired, aliases = _data()
    assert derived and retired and aliases
    for rule in derived:
        for key in (rule.key, rule.processor_key, *((rule.source,) if rule.source else ())):
            assert key in history.keys, key
        assert {rule.until, rule.since} <= set(history.labels)
        assert history.position[rule.until] < history.position[rule.since]
    for gone in retired:
        assert all(leaf in history.keys for leaf in gone.keys), gone.keys
        assert gone.since in history.labels
    raw = json.loads((ROOT / "schemas" / "history" / "cerebras.json").read_text(encoding="utf-8"))
    names = {name for accepted in raw["model_names"].values() for name in accepted}
    for pair in aliases:
        assert history.keys[pair.alias].get("alias_of") == pair.key.split(".")[-1], pair
        assert pair.since in history.labels and pair.names <= names, pair
