"""A migration across the release that retired a key: what the key built is written in the keys the
target release reads (gpt-neox@2024-09-10 dropped mlp_type; `llama` had built LLaMAParallelMLP, whose
width is 256*ceil(int(8h/3)/256) when intermediate_size is not given, without biases)."""

from __future__ import annotations

from pathlib import Path

import yaml

from neoconv import Status, translate

LLAMA_MLP = """\
num_layers: 2
hidden_size: 512
num_attention_heads: 8
seq_length: 128
max_position_embeddings: 128
pos_emb: rotary
norm: rmsnorm
model_parallel_size: 2
mlp_type: llama
activation: silu
train_iters: 10
optimizer: {type: Adam, params: {lr: 0.0001}}
"""


def test_mlp_type_llama_migrates_as_the_width_and_biases_it_built(tmp_path: Path) -> None:
    src = tmp_path / "llama.yml"
    src.write_text(LLAMA_MLP)
    result = translate(src, "neox", "neox", world_size=8)
    written = yaml.safe_load(result.dump())
    # int(8 * 512 / 3) = 1365 -> 1536 (a multiple of 256); the newest ParallelMLP gates 2/3 of intermediate_size
    assert written["intermediate_size"] == 3 * 1536
    assert written["use_bias_in_mlp"] is False and written["activation"] == "swiglu"
    assert "mlp_type" not in written
    entries = result.report.entries
    assert not [e for e in entries if e.status is Status.LOSSY], [e.detail for e in entries if e.status is Status.LOSSY]
    out = tmp_path / "out.yml"
    out.write_text(result.dump())
    # read back: the same MLP as the source built, in every format's terms
    assert translate(out, "neox", "hf").config["intermediate_size"] == 1536
    assert translate(src, "neox", "hf").config["intermediate_size"] == 1536
    assert translate(out, "neox", "hf").config.get("mlp_bias", False) is False


LLAMA_19 = """\
train_input: {data_processor: GptHDF5DataProcessor, data_dir: ./train, batch_size: 8}
model:
    vocab_size: 32000
    hidden_size: 256
    position_embedding_type: "rotary"
    rotary_dim: 64
    share_embedding_weights: False
    max_position_embeddings: 256
    num_hidden_layers: 2
    use_rms_norm: True
    num_heads: 4
    filter_size: 688
    nonlinearity: "swiglu"
    use_ffn_bias: False
    mixed_precision: True
optimizer:
    optimizer_type: "AdamW"
    beta1: 0.9
    beta2: 0.95
    disable_lr_steps_reset: False
    learning_rate: 3.0e-4
runconfig: {max_steps: 100}
"""


def test_model_zoo_19s_use_rms_norm_migrates_as_the_norm_it_chose(tmp_path: Path) -> None:
    """The same rule in Model Zoo: 1.9.1's use_rms_norm (Cerebras/modelzoo@70a5b031 llama params_llama_7b.yaml)
    is retired by 2.10's pydantic model config; dropping it would build a LayerNorm llama."""
    src = tmp_path / "params_llama.yaml"
    src.write_text(LLAMA_19)
    result = translate(src, "cerebras", "cerebras", layout="legacy")
    assert result.report.source["version"] == "1.9.1"
    model = yaml.safe_load(result.dump())["model"]
    assert model["norm_type"] == "rmsnorm" and "use_rms_norm" not in model
    assert result.report.by_source()["model.use_rms_norm"].status is Status.CONVERTED
