"""Layers without rotary embedding (canonical model.nope_layers): SmolLM3's no_rope_layers /
no_rope_layer_interval in a config.json (transformers 5.23 SmolLM3Config.__post_init__: layer i has
no RoPE when (i + 1) % interval == 0 unless the list says otherwise), Megatron-LM's --no-rope-freq
(N: the layers N, 2N, ... from 1, N dividing --num-layers; or a pattern, 1 = no RoPE), and the loss
named by every format that rotates every layer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import oracle
import pytest

from neoconv.api import read_ir, translate
from neoconv.core.errors import InputError
from neoconv.core.report import Status

from test_model_size import FIXTURES

SMOLLM3 = json.loads((FIXTURES / "smollm3-3b.json").read_text())
EVERY_4TH = [3, 7, 11, 15, 19, 23, 27, 31, 35]
LLAMA_1B = FIXTURES.parent / "neox" / "llama-1b.yml"  # 22 layers


def card(**changes: Any) -> dict[str, Any]:
    config = {**SMOLLM3, **changes}
    return {k: v for k, v in config.items() if v != "<omit>"}


def nope(config: dict[str, Any]) -> Any:
    return read_ir(config, "hf").ir.get("model.nope_layers")


def entries(result: Any, field: str) -> list[Any]:
    return [e for e in result.report.entries if field in e.fields]


# ---- reading a config.json ----------------------------------------------------------------------


def test_the_card_reads_as_every_fourth_layer_without_rope() -> None:
    assert nope(SMOLLM3) == EVERY_4TH


def test_the_class_default_interval_is_four_when_the_file_says_nothing() -> None:
    assert nope(card(no_rope_layers="<omit>", no_rope_layer_interval="<omit>")) == EVERY_4TH


def test_the_interval_lays_out_the_layers_from_the_fourth_when_the_list_is_absent() -> None:
    assert nope(card(no_rope_layers="<omit>", no_rope_layer_interval=3)) == list(range(2, 36, 3))
    # 36 layers, every 5th: 4, 9, ..., 34 (the class does not need the interval to divide the layers)
    assert nope(card(no_rope_layers="<omit>", no_rope_layer_interval=5)) == list(range(4, 36, 5))
    # an interval longer than the model: every layer rotates
    assert nope(card(no_rope_layers="<omit>", no_rope_layer_interval=40)) is None


def test_an_explicit_list_wins_over_the_interval() -> None:
    flags = [1] * 36
    flags[0] = flags[17] = 0
    assert nope(card(no_rope_layers=flags, no_rope_layer_interval=4)) == [0, 17]
    assert nope(card(no_rope_layers=[1] * 36)) is None  # every layer with RoPE: the field's absence


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"no_rope_layers": [1, 0] * 10}, "20 entries for 36 layers"),
        ({"no_rope_layers": [1, 2] * 18}, r"a list of 1 \(RoPE\) and 0"),
        ({"no_rope_layers": "<omit>", "no_rope_layer_interval": 0}, "whole number >= 1"),
    ],
)
def test_a_list_the_class_cannot_index_is_refused(changes: dict[str, Any], says: str) -> None:
    with pytest.raises(InputError, match=says):
        read_ir(card(**changes), "hf")


def test_a_class_without_nope_layers_says_it_does_not_read_the_keys() -> None:
    llama = json.loads((FIXTURES / "llama-2-7b.json").read_text())
    result = translate({**llama, "no_rope_layer_interval": 4}, "hf", "neox", set_values={"train.steps": 1})
    assert result.ir.get("model.nope_layers") is None
    said = [e for e in result.report.entries if e.source_key == "no_rope_layer_interval"]
    assert said and "HF llama does not read no_rope_layer_interval" in said[0].detail


# ---- SmolLM3's window: the layers without RoPE ----------------------------------------------------


def test_with_use_sliding_window_the_layers_without_rope_are_windowed() -> None:
    ir = read_ir(card(layer_types="<omit>", use_sliding_window=True, sliding_window=4096), "hf").ir
    assert ir.get("model.sliding_window") == 4096
    assert ir.get("model.attention_layer_types") == ["sliding" if i in EVERY_4TH else "full" for i in range(36)]
    # the card's explicit layer_types (every layer full) wins: no layer is windowed
    assert read_ir(card(use_sliding_window=True, sliding_window=4096), "hf").ir.get("model.sliding_window") is None
    # without use_sliding_window the width means nothing (SmolLM3Attention: use_sliding_window and the layer type)
    assert read_ir(card(layer_types="<omit>", sliding_window=4096), "hf").ir.get("model.sliding_window") is None


def test_the_class_s_own_window_pattern_is_written_as_the_switch_and_the_width(tmp_path: Path) -> None:
    config = card(layer_types="<omit>", use_sliding_window=True, sliding_window=4096)
    source = read_ir(config, "hf").ir
    out = tmp_path / "out.yaml"
    result = translate(config, "hf", "veomni", output=str(out))
    written = json.loads(result.side_files["out.config.json"])
    assert written["use_sliding_window"] is True and written["sliding_window"] == 4096 and "layer_types" not in written
    (tmp_path / "out.config.json").write_text(result.side_files["out.config.json"])
    out.write_text(result.dump())
    back = read_ir([str(out)], "veomni").ir
    for field in ("model.nope_layers", "model.sliding_window", "model.attention_layer_types"):
        assert back.get(field) == source.get(field), field


# ---- writing a config.json ------------------------------------------------------------------------


def test_a_model_without_nope_layers_is_written_with_rope_in_every_layer() -> None:
    """SmolLM3's class default is a layer without RoPE every 4th: a model that has none says so."""
    result = translate([str(LLAMA_1B)], "neox", "hf", set_values={"model.family": "smollm3", "model.vocab_size": 32000})
    assert result.config["model_type"] == "smollm3"
    assert result.config["no_rope_layers"] == [1] * 22 and "no_rope_layer_interval" not in result.config
    assert read_ir(dict(result.config), "hf").ir.get("model.nope_layers") is None


@pytest.mark.parametrize(("layers", "interval"), [([5, 11, 17], 6), ([0, 9], None)])
def test_the_layers_are_written_as_the_list_and_as_an_interval_when_they_are_one(
    layers: list[int], interval: Any
) -> None:
    result = translate(
        [str(LLAMA_1B)],
        "neox",
        "hf",
        set_values={"model.family": "smollm3", "model.vocab_size": 32000, "model.nope_layers": layers},
    )
    assert result.config["no_rope_layers"] == [0 if i in layers else 1 for i in range(22)]
    assert result.config.get("no_rope_layer_interval") == interval
    assert read_ir(dict(result.config), "hf").ir.get("model.nope_layers") == layers


def test_a_class_that_rotates_every_layer_names_the_loss() -> None:
    result = translate(SMOLLM3, "hf", "hf", set_values={"model.family": "llama"})
    lost = [e for e in entries(result, "model.nope_layers") if e.status is Status.LOSSY]
    assert lost, "the layers without RoPE vanished silently"


# ---- Megatron-LM --no-rope-freq ---------------------------------------------------------------------


def megatron_nope(tmp_path: Path, freq: str, layers: int = 36) -> Any:
    path = tmp_path / "run.args"
    path.write_text(
        f"--num-layers {layers} --hidden-size 2048 --num-attention-heads 16 --seq-length 4096 "
        f"--max-position-embeddings 4096 --position-embedding-type rope --no-rope-freq {freq}\n"
    )
    return read_ir([str(path)], "megatron").ir.get("model.nope_layers")


def test_megatron_reads_no_rope_freq_as_its_config_lays_it_out(tmp_path: Path) -> None:
    assert megatron_nope(tmp_path, "4") == EVERY_4TH  # [0,0,0,1] * 9: the layers 4, 8, ... from 1
    assert megatron_nope(tmp_path, "'([1]+[0]*35)'") == [0]
    assert megatron_nope(tmp_path, "'([0]*3+[1]*1)*9'") == EVERY_4TH
    assert megatron_nope(tmp_path, "0") is None  # `if self.no_rope_freq`: off


@pytest.mark.parametrize(("freq", "says"), [("5", "dividing --num-layers 36"), ("'([0]*3+[1])*4'", "gives 16 layers")])
def test_megatron_refuses_what_its_config_asserts_against(tmp_path: Path, freq: str, says: str) -> None:
    with pytest.raises(InputError, match=says):
        megatron_nope(tmp_path, freq)


def test_megatron_writes_the_interval_or_the_pattern(tmp_path: Path) -> None:
    assert translate(SMOLLM3, "hf", "megatron").config["--no-rope-freq"] == 4
    # 30 layers, every 4th: 4 does not divide 30 (Megatron would assert), so the pattern
    thirty = card(num_hidden_layers=30, no_rope_layers="<omit>")
    written = translate(thirty, "hf", "megatron").config["--no-rope-freq"]
    assert isinstance(written, str) and written.startswith("(")
    assert megatron_nope(tmp_path, f"'{written}'", layers=30) == [3, 7, 11, 15, 19, 23, 27]


def test_smollm3_goes_through_megatron_and_back(tmp_path: Path) -> None:
    out = tmp_path / "run.args"
    result = translate(SMOLLM3, "hf", "megatron", output=str(out))
    out.write_text(result.dump())
    assert not [e for e in entries(result, "model.nope_layers") if e.status in (Status.LOSSY, Status.DROPPED)]
    back = translate([str(out)], "megatron", "hf", set_values={"model.family": "smollm3"})
    assert back.config["no_rope_layers"] == SMOLLM3["no_rope_layers"] and back.config["no_rope_layer_interval"] == 4


def test_a_megatron_release_before_no_rope_freq_names_the_loss() -> None:
    """--no-rope-freq is parsed from core_v0.13.0: core_v0.8 (0.8.0 to 0.13.0) cannot hold it everywhere."""
    result = translate(SMOLLM3, "hf", "megatron", target_version="core_v0.8")
    assert "--no-rope-freq" not in result.config
    lost = [e for e in entries(result, "model.nope_layers") if e.status is Status.LOSSY]
    assert lost and "no option for no_rope_freq" in lost[0].detail


# ---- formats that rotate every layer ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("dst", "status", "why"),
    [
        ("neox", Status.LOSSY, "NeoX rotates queries and keys in every layer"),
        ("cerebras", Status.LOSSY, "Model Zoo's rotary embedding is one setting for every layer"),
        ("deepspeed", Status.DROPPED, "DeepSpeed has no counterpart for model.nope_layers"),
    ],
)
def test_a_format_without_nope_layers_names_the_loss(dst: str, status: Status, why: str) -> None:
    batch = {"batch.global": 8} if dst == "deepspeed" else {}  # DeepSpeed holds nothing of a config.json but a batch
    result = translate(SMOLLM3, "hf", dst, set_values=batch)
    said = {e.source_key: e for e in entries(result, "model.nope_layers")}
    assert set(said) >= {"no_rope_layers", "no_rope_layer_interval"}
    assert all(e.status is status and why in e.detail for e in said.values()), said


# ---- oracle: transformers reads what neoconv writes ---------------------------------------------------


@pytest.mark.oracle
def test_transformers_lays_out_the_layers_neoconv_writes(tmp_path: Path) -> None:
    """SmolLM3Config (transformers 5.23) builds no_rope_layers and layer_types from the written file as
    the canonical values say: the chosen layers without RoPE, none, and every 4th windowed."""
    why = oracle.unavailable("hf")
    if why:
        pytest.skip(why)
    cases = {  # name -> (--set values over the 22-layer NeoX Llama, layers without RoPE, windowed layers)
        "chosen": ({"model.nope_layers": [5, 11, 17]}, [5, 11, 17], []),
        "none": ({}, [], []),
        "windowed": (
            {
                "model.nope_layers": [3, 7, 11, 15, 19],
                "model.sliding_window": 1024,
                "model.attention_layer_types": ["sliding" if i in (3, 7, 11, 15, 19) else "full" for i in range(22)],
            },
            [3, 7, 11, 15, 19],
            [3, 7, 11, 15, 19],
        ),
    }
    jobs = []
    for name, (values, _, _) in cases.items():
        result = translate(
            [str(LLAMA_1B)], "neox", "hf", set_values={"model.family": "smollm3", "model.vocab_size": 32000, **values}
        )
        path = tmp_path / f"{name}.json"
        path.write_text(result.dump())
        jobs.append({"id": name, "files": [str(path)]})
    verdicts = oracle.run("hf", jobs)
    for name, (_, nope_layers, windowed) in cases.items():
        assert verdicts[name].accepted, verdicts[name].error
        built = verdicts[name].values["config"]
        assert [i for i, flag in enumerate(built["no_rope_layers"]) if not flag] == nope_layers, name
        assert [i for i, kind in enumerate(built["layer_types"]) if kind == "sliding_attention"] == windowed, name


def test_a_lost_nope_layer_is_not_a_lost_layer_count(tmp_path: Path) -> None:
    """The codec writes for every model (its fields include model.num_layers, so that a SmolLM3 without
    NoPE layers says so): a loss it names is of model.nope_layers only, never of the layer count."""
    result = translate(SMOLLM3, "hf", "veomni", set_values={"model.family": "llama"}, output=str(tmp_path / "run.yaml"))
    assert [e.status for e in result.report.entries if e.source_key == "num_hidden_layers"] == [Status.CONVERTED]
    lost = [e for e in entries(result, "model.nope_layers") if e.status is Status.LOSSY]
    assert {e.source_key for e in lost} == {"no_rope_layers", "no_rope_layer_interval"}
    assert all(e.fields == ("model.nope_layers",) and "HF llama applies RoPE in every layer" in e.detail for e in lost)
