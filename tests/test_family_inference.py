"""Issue #27 item 9: a family is never changed by inference. A Model Zoo 1.x file names no model; when its
model block has keys only models outside the decoder families read (the key history's `models`), it is
the family those models make, or its family cannot be told and it is refused with the --set that fixes
it. Files in the style of Model Zoo 1.x's TensorFlow configs (R_1.6-1.8), written here."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from neoconv.api import translate
from neoconv.core.errors import InputError, UnsupportedFamily
from neoconv.core.report import Status

BERT_LARGE_TF = """\
train_input:
    data_processor: "BertTfRecordsProcessor"
    data_dir: "./train_512k_uncased_msl128"
    max_sequence_length: 128
    max_predictions_per_seq: 20
    batch_size: 256
model:
    hidden_size: 1024
    use_position_embedding: True
    use_segment_embedding: True
    position_embedding_type: "learned"
    max_position_embeddings: 512
    share_embedding_weights: True
    num_hidden_layers: 24
    dropout_rate: 0.1
    layer_norm_epsilon: 1.0e-5
    num_heads: 16
    attention_dropout_rate: 0.1
    filter_size: 4096
    encoder_nonlinearity: "gelu"
    use_ffn_bias: True
    mixed_precision: True
optimizer:
    optimizer_type: "adamw"
    weight_decay_rate: 0.01
    epsilon: 1.0e-6
    max_gradient_norm: 1.0
    learning_rate:
        - {steps: 10000, scheduler: "Linear", initial_learning_rate: 0.0, end_learning_rate: 0.0001}
        - {scheduler: "Linear", initial_learning_rate: 0.0001, end_learning_rate: 0.0, steps: 1000000}
    loss_scaling_factor: "dynamic"
runconfig:
    max_steps: 900000
"""


def _file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "params.yaml"
    path.write_text(text)
    return str(path)


def test_a_tensorflow_bert_large_stays_a_bert(tmp_path: Path) -> None:
    """Its block reads as GPT-2's structure, but use_segment_embedding and encoder_nonlinearity are read by
    BERT's (and Linformer's, T5's, ...) code only, together by BERT's: a BERT, named so in the trainer file."""
    path = _file(tmp_path, BERT_LARGE_TF)
    done = translate(path, "cerebras", "cerebras", layout="trainer")
    assert done.config["trainer"]["init"]["model"]["name"] == "bert"
    assert done.report.source["unsupported_family"] == "bert"
    with pytest.raises(UnsupportedFamily, match="a BERT"):
        translate(path, "cerebras", "neox")


def test_keys_of_several_other_families_cannot_tell_the_family(tmp_path: Path) -> None:
    """relu_dropout_rate is read by T5's and Transformer's code only: no decoder, and not one family. Refused,
    naming the key and the --set; given the family, it translates as that family. (Not use_cache: 1.x's TF
    GPT-J reads it too, so it tells no family: test_cerebras_tf_values.)"""
    text = BERT_LARGE_TF.replace("    use_segment_embedding: True\n", "").replace(
        '    encoder_nonlinearity: "gelu"\n', "    relu_dropout_rate: 0.1\n"
    )
    path = _file(tmp_path, text.replace('"BertTfRecordsProcessor"', '"GptTfRecordsProcessor"'))
    with pytest.raises(InputError, match="cannot tell the model family") as err:
        translate(path, "cerebras", "cerebras", layout="trainer")
    assert err.value.key == "model.relu_dropout_rate" and "--set model.family=" in str(err.value)
    told = translate(path, "cerebras", "cerebras", layout="trainer", set_values={"model.family": "gptj"})
    assert told.config["trainer"]["init"]["model"]["name"] == "gptj"


def test_a_decoder_naming_no_model_is_still_read_from_its_blocks(tmp_path: Path) -> None:
    """Nothing changes for a GPT file: its keys are the decoders' (the family from its block structure)."""
    text = (
        BERT_LARGE_TF.replace("    use_segment_embedding: True\n", "")
        .replace('    encoder_nonlinearity: "gelu"\n', '    nonlinearity: "gelu"\n')
        .replace('"BertTfRecordsProcessor"', '"GptTfRecordsProcessor"')
    )
    done = translate(_file(tmp_path, text), "cerebras", "cerebras", layout="trainer")
    assert done.config["trainer"]["init"]["model"]["name"] == "gpt2"
    assert any(e.kind == "added_for_target" and e.status is Status.DEFAULTED for e in done.report.entries)
    assert yaml.safe_load(translate(_file(tmp_path, text), "cerebras", "neox").dump())["num_layers"] == 24


def test_a_model_named_by_model_name_is_not_guessed(tmp_path: Path) -> None:
    """Model Zoo 2.x configs may name the model `model_name` (its tutorials' eeh_config.yaml): a name, so
    nothing is inferred from keys (the key history knows model_name only from the DPO model's code)."""
    path = tmp_path / "eeh.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "trainer": {
                    "init": {
                        "model": {
                            "model_name": "llama",
                            "hidden_size": 4096,
                            "num_hidden_layers": 32,
                            "num_heads": 32,
                            "filter_size": 14336,
                            "vocab_size": 128256,
                            "max_position_embeddings": 8192,
                            "nonlinearity": "swiglu",
                            "norm_type": "rmsnorm",
                            "position_embedding_type": "rotary",
                            "rotary_dim": 128,
                        },
                        "optimizer": {"AdamW": {"learning_rate": 1e-4}},
                        "loop": {"max_steps": 10},
                    }
                }
            }
        )
    )
    done = translate(str(path), "cerebras", "neox")
    assert done.ir.get("model.family") == "llama" and yaml.safe_load(done.dump())["num_layers"] == 32


GNN_FORK = """\
trainer:
  init:
    model_dir: ./model_dir_gnn
    model:
      name: {name}
      n_feat: 500
      n_class: 3
      graphsage_hidden_dim: 128
      graphsage_num_layers: 2
      graphsage_aggregator: mean
    optimizer:
      AdamW: {{learning_rate: 0.01, weight_decay: 0.0005}}
    loop: {{max_steps: 200}}
  fit:
    train_dataloader: {{data_processor: GNNDataProcessor, dataset_name: PubMed, batch_size: 1}}
"""


@pytest.mark.parametrize("name", ["gnn", "graphsage", "gatv2"])
def test_a_model_no_decoder_family_names_is_never_read_as_one(tmp_path: Path, name: str) -> None:
    """A fork's graph network (a Model Zoo 2.6 GNN fork names its models gnn, graphsage, gatv2) is no decoder:
    never a GPT-2 made of defaults in another format; its own format carries its block as written."""
    path = tmp_path / "params_gnn.yaml"
    path.write_text(GNN_FORK.format(name=name))
    with pytest.raises(UnsupportedFamily, match=f"'{name}' model .*a fork's"):
        translate(str(path), "cerebras", "neox")
    with pytest.raises(UnsupportedFamily):
        translate(str(path), "cerebras", "hf")
    done = translate(str(path), "cerebras", "cerebras", layout="trainer")
    model = done.config["trainer"]["init"]["model"]
    assert model["name"] == name and model["graphsage_num_layers"] == 2 and "num_hidden_layers" not in model
    assert done.report.source["unsupported_family"] == name


@pytest.mark.parametrize("name", ["gpt-neox", "LlamaModel", "GPT3"])
def test_other_names_of_decoder_models_still_translate(tmp_path: Path, name: str) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "trainer": {
                    "init": {
                        "model": {
                            "name": name,
                            "hidden_size": 512,
                            "num_hidden_layers": 4,
                            "num_heads": 8,
                            "filter_size": 2048,
                            "vocab_size": 50257,
                            "max_position_embeddings": 1024,
                        },
                        "optimizer": {"AdamW": {"learning_rate": 1e-4}},
                        "loop": {"max_steps": 10},
                    }
                }
            }
        )
    )
    done = translate(str(path), "cerebras", "neox")
    assert yaml.safe_load(done.dump())["num_layers"] == 4 and "unsupported_family" not in done.report.source
