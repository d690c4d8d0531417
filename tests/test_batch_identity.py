"""Issue 16: global batch = micro batch x accumulation x data-parallel size, re-derived at the
target's own data-parallel size when a parallel dimension disappears (VeOmni's Ulysses for NeoX and
DeepSpeed, NeoX's tensor and pipeline parallelism for VeOmni): the output passes the target's own
batch check (NeoX check_batch_parameters, DeepSpeed _batch_assertion, VeOmni _derive_batch_config)
at the same world size, or `missing` says the --set that makes it hold."""

from __future__ import annotations

from pathlib import Path

import yaml

from neoconv import translate
from neoconv.core.report import Status

from conftest import FIXTURES

TINYLLAMA = FIXTURES / "inputs" / "veomni" / "tinyllama-nested.yaml"
CONFIG = str(FIXTURES / "inputs" / "veomni" / "tinyllama" / "config.json")


def _ulysses(tmp_path: Path, size: int, global_batch: int = 1024, micro: int = 8) -> Path:
    text = TINYLLAMA.read_text().replace("ulysses_size: 1", f"ulysses_size: {size}")
    text = text.replace("global_batch_size: 1024", f"global_batch_size: {global_batch}")
    text = text.replace("micro_batch_size: 8", f"micro_batch_size: {micro}")
    path = tmp_path / "ulysses.yaml"
    path.write_text(text)
    return path


def test_veomni_ulysses_into_neox_keeps_the_global_batch_at_neox_data_parallel_size(tmp_path: Path) -> None:
    # VeOmni at 8 GPUs, ulysses 4: dp 2, 1024 = 8 x 64 x 2. NeoX has no Ulysses: dp 8, 1024 = 8 x 16 x 8
    done = translate([str(_ulysses(tmp_path, 4))], "veomni", "neox", world_size=8, model_config=CONFIG)
    assert done.ir.get("parallel.data_parallel_size") == 2 and done.ir.get("batch.grad_accum") == 64
    out = done.config
    tb, mb, ga = out["train_batch_size"], out["train_micro_batch_size_per_gpu"], out["gradient_accumulation_steps"]
    assert (tb, mb, ga) == (1024, 8, 16) and tb == mb * ga * out["global_num_gpus"]
    said = next(e for e in done.report.entries if e.source_key == "train.micro_batch_size")
    assert said.status is Status.LOSSY and "micro 8 x accumulation 16" in said.detail


def test_veomni_ulysses_into_deepspeed_passes_deepspeeds_assertion_at_the_world_size(tmp_path: Path) -> None:
    done = translate([str(_ulysses(tmp_path, 4))], "veomni", "deepspeed", world_size=8, model_config=CONFIG)
    out = done.config
    # sequence_parallel_size written: DeepSpeedConfig divides the world by it (dp 2), 1024 = 8 x 64 x 2
    assert out["sequence_parallel_size"] == 4
    assert out["train_batch_size"] == out["train_micro_batch_size_per_gpu"] * out["gradient_accumulation_steps"] * 2


def test_neox_tensor_and_pipeline_parallelism_into_veomni(tmp_path: Path) -> None:
    # NeoX 1536 = 4 x 32 x 12 at 96 GPUs with model 2 x pipe 4; VeOmni at 96 GPUs runs 96 data-parallel ranks
    source = tmp_path / "neox.yml"
    source.write_text(
        "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\n"
        "max_position_embeddings: 128\nmodel_parallel_size: 2\npipe_parallel_size: 4\n"
        "train_micro_batch_size_per_gpu: 4\ngradient_accumulation_steps: 32\n"
    )
    done = translate([str(source)], "neox", "veomni", world_size=96)
    train = yaml.safe_load(done.dump())["train"]
    assert (train["global_batch_size"], train["micro_batch_size"]) == (1536, 4)
    assert train["global_batch_size"] % (train["micro_batch_size"] * 96) == 0  # VeOmni: accumulation 4


def test_a_global_batch_that_does_not_split_is_missing_with_the_set_that_makes_it(tmp_path: Path) -> None:
    # VeOmni at 8 GPUs, ulysses 4: dp 2, 1020 = 2 x 255 x 2; NeoX at dp 8 cannot split 1020
    done = translate([str(_ulysses(tmp_path, 4, 1020, micro=2))], "veomni", "neox", world_size=8, model_config=CONFIG)
    missing = {e.target_key: e.detail for e in done.report.entries if e.status is Status.MISSING}
    assert "--set batch.global=1016 or --set batch.global=1024" in missing["train_batch_size"]
    assert "train_batch_size" not in done.config
