"""Model Zoo 1.x TensorFlow configs read as their code reads them (Cerebras/modelzoo R_1.6-1.9,
transformers/tf/<model>/utils.py set_defaults): `layer_norm_epsilon` goes through float(), so the
YAML 1.1 text `1e-5` is the number 1e-5 there."""

from __future__ import annotations

from pathlib import Path

import yaml

from neoconv import Status, translate
from neoconv.services.validate import validate_file

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
    assert result.report.by_source()["model.layer_norm_epsilon"].status is Status.EXACT
