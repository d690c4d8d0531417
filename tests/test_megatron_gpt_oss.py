"""gpt-oss's MLP in Megatron-LM arguments (issue 27): --quick-geglu (core_v0.15.0+) is the canonical
quick_geglu, gated x * sigmoid(1.702 x) (megatron/core/activations.py quick_gelu), its linear half used
as it is; TransformerConfig's glu_linear_offset and activation_func_clamp_value have no command-line
option at core_v0.19.0 (argument_utils.py copies only fields the namespace has), so gpt-oss's offset 1
and clamp 7 are named where Megatron cannot hold them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neoconv import translate
from neoconv.api import read_ir
from neoconv.core.report import Status

from test_hf_types import GPT_OSS_20B

BASE = (
    "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --max-position-embeddings 128\n"
    "--micro-batch-size 1 --lr 0.0003 --train-iters 10\n"
)


def args(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "run.args"
    path.write_text(BASE + extra + "\n")
    return path


def test_quick_geglu_reads_as_the_canonical_quick_geglu(tmp_path: Path) -> None:
    read = read_ir([str(args(tmp_path, "--quick-geglu"))], "megatron")
    ir = read.ir.plain()
    assert ir["model.activation"] == "quick_geglu" and read.lossy == {}
    assert ir["model.ffn_hidden_size"] == 4 * 64  # validate_args' 8/3 reduction is --swiglu's only
    assert ir.get("model.glu_linear_offset") is None and ir.get("model.activation_clamp") is None


def test_quick_geglu_round_trips_through_megatron(tmp_path: Path) -> None:
    result = translate([str(args(tmp_path, "--quick-geglu --ffn-hidden-size 96"))], "megatron", "megatron")
    assert "--quick-geglu" in result.dump().splitlines()
    assert result.report.by_source()["--quick-geglu"].status is Status.EXACT


def test_a_gelu_gated_mlp_is_still_only_near_quick_geglu(tmp_path: Path) -> None:
    result = translate(
        [str(args(tmp_path, "--quick-geglu"))], "megatron", "megatron", set_values={"model.activation": "geglu"}
    )
    said = [e for e in result.report.entries if e.fields == ("model.activation",) and e.status is Status.LOSSY]
    assert said and "x * sigmoid(1.702x)" in said[0].detail


def test_gpt_oss_to_megatron_is_quick_geglu_with_offset_and_clamp_named(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(GPT_OSS_20B))
    result = translate([str(config)], "hf", "megatron", set_values={"model.seq_length": 4096})
    assert "--quick-geglu" in result.dump().splitlines()
    lost = [e for e in result.report.entries if e.status in (Status.LOSSY, Status.DROPPED)]
    offset = [e for e in lost if "model.glu_linear_offset" in e.fields]
    clamp = [e for e in lost if "model.activation_clamp" in e.fields]
    assert offset and "TransformerConfig.glu_linear_offset has no command-line option" in offset[0].detail
    assert clamp and "activation_func_clamp_value has no command-line option" in clamp[0].detail
    assert not [e for e in lost if "model.activation" in e.fields]  # the gate itself is held


@pytest.mark.parametrize("release, held", [("core_v0.16", True), ("core_v0.8", False)])
def test_a_release_before_quick_geglu_names_it(release: str, held: bool, tmp_path: Path) -> None:
    result = translate([str(args(tmp_path, "--quick-geglu"))], "megatron", "megatron", target_version=release)
    assert ("--quick-geglu" in result.dump().splitlines()) is held
    entry = result.report.by_source()["--quick-geglu"]
    assert (entry.status is Status.EXACT) is held
