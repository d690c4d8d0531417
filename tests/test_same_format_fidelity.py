"""A same-format translation gives every source leaf back, or names it truthfully (issue #27, the Model Zoo
trainer -> trainer migration): small trainer-layout files written here with the constructs real Model Zoo
2.x configs use (a GNN fork's `params: []`, a validate loop repeating the fit's val_dataloader)."""

from __future__ import annotations

from pathlib import Path

import yaml

from neoconv.api import translate
from neoconv.core.report import Report, Status
from neoconv.engine.difference import unreturned
from neoconv.knowledge.source import Source

TRAINER = """\
trainer:
  init:
    backend:
      backend_type: CSX
    model_dir: ./model_dir
    seed: 1
    model:
      name: llama
      vocab_size: 32000
      hidden_size: 512
      num_hidden_layers: 4
      num_heads: 8
      filter_size: 1376
      max_position_embeddings: 1024
      position_embedding_type: rotary
      nonlinearity: swiglu
      norm_type: rmsnorm
    optimizer:
      AdamW:
        weight_decay: 0.1
        params: []
    schedulers:
    - LinearLR:
        initial_learning_rate: 0.0003
        end_learning_rate: 0.0
        total_iters: 1000
    loop:
      max_steps: 1000
      eval_frequency: 500
      eval_steps: 10
  fit:
    train_dataloader:
      data_processor: GptHDF5MapDataProcessor
      data_dir: ./train
      batch_size: 64
    val_dataloader: &val
      data_processor: GptHDF5MapDataProcessor
      data_dir: ./val
      batch_size: 64
  validate:
    val_dataloader: *val
"""


def _file(tmp_path: Path) -> str:
    path = tmp_path / "params.yaml"
    path.write_text(TRAINER)
    return str(path)


def test_a_trainer_file_stays_a_trainer_file_with_every_leaf(tmp_path: Path) -> None:
    """No --layout, no --to-version: the source's layout (was the legacy default, which dropped the validate
    loop's loader as having no legacy key); the empty param-group list Model Zoo runs comes back."""
    done = translate(_file(tmp_path), "cerebras", "cerebras")
    assert done.report.target["layout"] == "trainer"
    trainer = yaml.safe_load(done.dump())["trainer"]
    assert trainer["init"]["optimizer"]["AdamW"] == {"weight_decay": 0.1, "params": []}
    assert trainer["validate"]["val_dataloader"] == {
        "data_processor": "GptHDF5MapDataProcessor",
        "data_dir": "./val",
        "batch_size": 64,
    }
    by = done.report.by_source()
    assert by["trainer.init.optimizer.AdamW.params"].status is Status.EXACT
    assert by["trainer.validate.val_dataloader.data_dir"].status is Status.EXACT
    assert not [e for e in done.report.entries if e.status in (Status.DROPPED, Status.LOSSY)]


def test_a_release_or_layout_asked_still_decides(tmp_path: Path) -> None:
    """--to-version 2.2.0 (before the trainer layout) writes the legacy layout, --layout legacy too; there the
    validate loop's loader is named (it repeats the fit's, which eval_input holds)."""
    old = translate(_file(tmp_path), "cerebras", "cerebras", target_version="2.2.0")
    assert old.report.target["layout"] == "legacy" and "eval_input" in old.config
    legacy = translate(_file(tmp_path), "cerebras", "cerebras", layout="legacy")
    assert legacy.config["eval_input"]["data_dir"] == "./val"
    assert legacy.report.by_source()["trainer.validate.val_dataloader.data_dir"].status is Status.DROPPED


def test_a_leaf_said_exact_that_the_output_does_not_give_back_is_named() -> None:
    """The check behind every same-format translation: a carried leaf (no canonical field reads it, so the
    read-back of fields cannot see it) said exact but absent or changed in the output becomes lossy."""
    source = Source(
        "cerebras",
        {"optimizer": {"params": [], "eps": 1e-8}, "model": {"x": 1}},
        ["a.yaml"],
        aliases={"optimizer.params": "trainer.init.optimizer.AdamW.params"},
    )
    back = Source("cerebras", {"optimizer": {"eps": 1e-8}, "model": {"x": 2}}, ["b.yaml"])
    report = Report()
    for key in ("trainer.init.optimizer.AdamW.params", "optimizer.eps", "model.x"):
        report.add(key, key, Status.EXACT)
    assert unreturned(report, source, back) == 2
    status = {e.source_key: e.status for e in report.entries}
    assert status == {
        "trainer.init.optimizer.AdamW.params": Status.LOSSY,
        "optimizer.eps": Status.EXACT,
        "model.x": Status.LOSSY,
    }
    assert "not written" in report.entries[0].detail and "reads back as 2" in report.entries[2].detail


def test_callbacks_keep_the_files_order(tmp_path: Path) -> None:
    """Callbacks run in list order: a trainer file's order comes back (a DINOv2 config's ScopedTrainFlags,
    KeepNCheckpoints, ComputeNorm), not the order Cerebras' legacy converter builds them in."""
    text = TRAINER.replace(
        "    loop:\n",
        "    callbacks:\n    - ScopedTrainFlags:\n        csx.performance.micro_batch_size: 16\n"
        "    - KeepNCheckpoints:\n        n: 2\n    - ComputeNorm: {}\n    loop:\n",
        1,
    )
    path = tmp_path / "params.yaml"
    path.write_text(text)
    done = translate(str(path), "cerebras", "cerebras")
    callbacks = yaml.safe_load(done.dump())["trainer"]["init"]["callbacks"]
    assert callbacks == [
        {"ScopedTrainFlags": {"csx.performance.micro_batch_size": 16}},
        {"KeepNCheckpoints": {"n": 2}},
        {"ComputeNorm": {}},
    ]
