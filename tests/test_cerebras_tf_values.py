"""Model Zoo 1.x TensorFlow configs read as their code reads them (Cerebras/modelzoo R_1.6-1.9,
transformers/tf/<model>/utils.py set_defaults): `layer_norm_epsilon` goes through float(), so the
YAML 1.1 text `1e-5` is the number 1e-5 there."""

from __future__ import annotations

from pathlib import Path

import yaml

from neoconv import Status, translate
from neoconv.services.validate_file import validate_file

TF_BERT = """\
train_input:
    data_processor: "BertTfRecordsProcessor"
    data_dir: "./data"
    max_sequence_length: 128
    batch_size: 256
model:
    disable_nsp: False
    vocab_size: 30522
    hidden_size: 1024
    num_hidden_layers: 24
    num_heads: 16
    filter_size: 4096
    encoder_nonlinearity: 'gelu'
    layer_norm_epsilon: 1e-5
    max_position_embeddings: 512
    mixed_precision: True
optimizer:
    optimizer_type: "adamw"
    learning_rate: 0.0001
runconfig:
    max_steps: 900000
"""


def test_tf_bert_epsilon_text_is_the_number_its_code_reads(tmp_path: Path) -> None:
    source = tmp_path / "params_bert.yaml"
    source.write_text(TF_BERT)
    result = translate(source, "cerebras", "cerebras")
    entry = result.report.by_source()["model.layer_norm_epsilon"]
    assert "1e-5" in entry.detail and "float()" in entry.detail  # the text is named
    written = yaml.safe_load(result.dump())
    assert written["model"]["layer_norm_epsilon"] == 1e-5 and isinstance(written["model"]["layer_norm_epsilon"], float)
    out = tmp_path / "out.yaml"
    out.write_text(result.dump())
    problems = validate_file(str(out), "cerebras").problems
    assert not [p for p in problems if p.key == "model.layer_norm_epsilon"]


def test_a_pytorch_model_keeps_the_text(tmp_path: Path) -> None:
    source = tmp_path / "params_bert.yaml"
    source.write_text(TF_BERT.replace("BertTfRecordsProcessor", "BertCSVDataProcessor"))
    result = translate(source, "cerebras", "cerebras")
    assert yaml.safe_load(result.dump())["model"]["layer_norm_epsilon"] == "1e-5"  # torch would get the text
    entry = result.report.by_source()["model.layer_norm_epsilon"]  # carried as written, which the release refuses
    assert entry.status is Status.LOSSY and "refused_by_release" in [kind for kind, _ in entry.messages()]


TF_GPTJ_FINETUNING = """\
train_input:
  data_processor: "GptTfRecordsProcessor"
  data_dir: "./train"
  vocab_size: 50400
  max_sequence_length: 1024
  batch_size: 32
model:
  max_position_embeddings: 1024
  use_position_embeddings: False
  hidden_size: 4096
  num_heads: 16
  num_hidden_layers: 28
  filter_size: 16384
  nonlinearity: "gelu"
  rotary_dim: 64
  layer_norm_epsilon: 1.0e-5
  use_cache: False
  mixed_precision: True
optimizer:
  optimizer_type: "adamw"
  learning_rate: 5.0e-05
runconfig:
  max_steps: 500
"""


def test_tf_gptj_use_cache_does_not_decide_the_family(tmp_path: Path) -> None:
    """R_1.8 transformers/tf/gptj/GptJModel.py:83 reads model.use_cache; the key history's readers are the
    newest release's (t5, transformer): the key alone must not make a GPT-J an encoder-decoder."""
    source = tmp_path / "params_finetuning.yaml"
    source.write_text(TF_GPTJ_FINETUNING)
    result = translate(source, "cerebras", "neox")
    assert result.config["num_layers"] == 28 and result.config["hidden_size"] == 4096
    assert result.report.by_source()["model.use_cache"].status is Status.DROPPED
