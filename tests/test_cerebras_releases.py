"""Model Zoo 1.6-1.8 TensorFlow schedules: `Cosine` is tf.compat.v1.train.cosine_decay over decay_steps,
held at alpha x the initial lr (Cerebras/modelzoo@R_1.7.1:modelzoo/common/tf/optimizers/Trainer.py)."""

from __future__ import annotations

from pathlib import Path

import yaml

from neoconv import translate

TF = """\
train_input: {data_processor: GptTfRecordsProcessor, batch_size: 32, max_sequence_length: 128}
model: {hidden_size: 64, num_hidden_layers: 2, num_heads: 4, vocab_size: 1000, max_position_embeddings: 128,
        mixed_precision: true}
optimizer:
  optimizer_type: adamw
  weight_decay_rate: 0.01
  learning_rate:
    - {scheduler: Linear, initial_learning_rate: 0.0, end_learning_rate: 0.0002, steps: 100}
    - {scheduler: Cosine, initial_learning_rate: 0.0002, decay_steps: 900, alpha: 0.1}
runconfig: {max_steps: 1000}
"""


def test_tensorflow_cosine_ends_at_alpha_times_the_initial_lr(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(TF)
    result = translate(path, "cerebras", "neox")
    neox = yaml.safe_load(result.dump())
    assert result.report.source["version_range"] == ["1.6.0", "1.9.1"]  # steps/decay_steps: 1.x names
    assert neox["lr_decay_style"] == "cosine" and neox["optimizer"]["params"]["lr"] == 0.0002
    assert neox["min_lr"] == 0.1 * 0.0002  # alpha x initial_learning_rate
    assert neox["warmup"] == 0.1 and neox["train_iters"] == 1000  # Linear over 100 of 1000 steps
    assert neox["weight_decay"] == 0.01  # weight_decay_rate, the 1.x name


def test_tensorflow_initializers_as_one_element_lists_are_read(tmp_path: Path) -> None:
    # TF Model Zoo 1.6-1.8 (gptj params) wrote each initializer as a one-element list with TF's
    # `stddev`; set_initializers takes item 0. A 2.x file would give the dict itself.
    path = tmp_path / "params.yaml"
    sigma, layers, hidden = 0.02, 2, 64
    wang = 2 / layers / hidden**0.5
    path.write_text(
        TF.replace(
            "mixed_precision: true}",
            (
                "mixed_precision: true,\n"
                f"        initializer: [{{name: normal, mean: 0.0, stddev: {sigma}}}],\n"
                f"        output_layer_initializer: [{{name: normal, mean: 0.0, stddev: {wang}}}]}}"
            ),
        )
    )
    result = translate(path, "cerebras", "neox", source_version="1.7.0")
    neox = yaml.safe_load(result.dump())
    assert neox["init_method"] == "normal" and neox["output_layer_init_method"] == "wang_init"
    assert neox["init_method_std"] == sigma
