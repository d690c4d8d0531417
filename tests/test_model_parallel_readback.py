"""O3 (issue #28): a DeepSpeed JSON written from a model-parallel source holds the global batch at the
source's data-parallel size (world / tensor x pipeline), and no model parallelism: DeepSpeedConfig takes
that size from the training code's model-parallel unit (deepspeed.initialize(mpu=...): `world_size =
mpu.get_data_parallel_world_size()`); the JSON has no key for Megatron-style tensor or pipeline
parallelism (`tensor_parallel.autotp_size` is DeepSpeed's own AutoTP, another run). So neoconv's
read-back and `neoconv diff` read the JSON in the source's run: its model-parallel sizes given, as
--world-size is, and still said as values the JSON cannot hold. Inputs written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import cli_runner
from neoconv import translate
from neoconv.cli import main

NEOX = """\
{
  "pipe-parallel-size": 2,
  "model-parallel-size": 2,
  "num_layers": 4,
  "hidden_size": 256,
  "num_attention_heads": 8,
  "seq_length": 512,
  "max_position_embeddings": 512,
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 2,
  "optimizer": {"type": "Adam", "params": {"lr": 0.0003, "betas": [0.9, 0.95], "eps": 1.0e-8}},
  "train_iters": 1000,
  "lr_decay_iters": 1000,
  "lr_decay_style": "constant",
  "warmup": 0.0,
}
"""

MEGATRON = """\
--num-layers 4
--hidden-size 256
--num-attention-heads 8
--seq-length 512
--max-position-embeddings 512
--tensor-model-parallel-size 4
--micro-batch-size 2
--global-batch-size 16
--lr 0.0003
--lr-decay-style constant
--train-iters 1000
"""


@pytest.mark.parametrize(
    ("name", "text", "src", "dp"), [("mp.yml", NEOX, "neox", 2), ("mp.args", MEGATRON, "megatron", 2)]
)
def test_the_json_of_a_model_parallel_run_reads_back_in_that_run(
    tmp_path: Path, name: str, text: str, src: str, dp: int
) -> None:
    path = tmp_path / name
    path.write_text(text)
    result = translate(path, src, "deepspeed", world_size=8)
    config = result.config
    # the batch holds at the source's data-parallel size, not at 8 ranks
    assert (
        config["train_batch_size"]
        == config["train_micro_batch_size_per_gpu"] * config["gradient_accumulation_steps"] * dp
    )
    assert "tensor_parallel" not in config  # no AutoTP: the training code's model-parallel unit shards the model
    assert result.report.target["verified"] is True
    assert not [e for e in result.report.entries if e.kind == "unreadable_output"]


@pytest.mark.parametrize(("name", "text", "src"), [("mp.yml", NEOX, "neox"), ("mp.args", MEGATRON, "megatron")])
def test_diff_reads_the_json_with_the_sources_model_parallel_sizes(
    tmp_path: Path, name: str, text: str, src: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    out = tmp_path / "ds.json"
    done = cli_runner().invoke(main, [f"{src}2deepspeed", str(path), "-o", str(out), "--world-size", "8"])
    assert done.exit_code == 0, done.stderr
    compared = cli_runner().invoke(main, ["diff", str(path), str(out), "--world-size", "8", "--json"])
    assert compared.exit_code in (0, 1), compared.stderr
    said = json.loads(compared.stdout)
    inexpressible = {c["field"]: c for c in said["not_expressible_in_both"]}
    assert inexpressible["parallel.tensor_size"]["b"] is None  # still A's alone: the JSON cannot hold it
    changed = {c["field"] for c in said["changed"] + said["only_in_a"] + said["only_in_b"]}
    assert not changed & {"batch.global", "batch.micro", "batch.grad_accum"}
    alone = tmp_path / "alone.json"  # the same JSON in a run without model parallelism: DeepSpeed's assertion
    alone.write_text(out.read_text())
    plain = tmp_path / "plain.yml"
    plain.write_text(
        text.replace('"model-parallel-size": 2', '"model-parallel-size": 1')
        .replace("--tensor-model-parallel-size 4", "--tensor-model-parallel-size 1")
        .replace('"pipe-parallel-size": 2', '"pipe-parallel-size": 1')
    )
    refused = cli_runner().invoke(main, ["diff", str(plain), str(alone), "--world-size", "8", "--from-a", src])
    assert refused.exit_code == 2 and "batch" in refused.stderr
