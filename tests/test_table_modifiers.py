"""The rename modifiers `omit`, `warn_values`, `exponent_of`, `default_by` and `default_from`
(schemas/mapping.schema.json), on the table rules that replaced the formulas cerebras.clip,
neox.pipeline_size, neox.checkpoint_factor, veomni.grad_clip, neox.qk_norm, deepspeed.initial_scale_power,
cerebras.attention_dropout and cerebras.embedding_dropout."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from neoconv.api import translate
from neoconv.knowledge.formula import Approx, Formula
from neoconv.knowledge.mapping import load_table
from neoconv.core.report import Status

from conftest import FIXTURES

PYTHIA = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"
LLAMA = FIXTURES / "inputs" / "neox" / "llama-1b.yml"
MEGATRON = FIXTURES / "inputs" / "megatron"


def _formula(fmt: str, field: str) -> Formula:
    rule = load_table(fmt).rules_for_field(field)[0]
    assert rule.formula is not None and rule.formula.name.startswith("rename ")
    return rule.formula


# ---- omit ----------------------------------------------------------------------------------------


def test_omit_cerebras_no_clipping_is_no_max_gradient_norm() -> None:
    clip = _formula("cerebras", "optim.grad_clip")
    assert clip.read(optimizer_max_gradient_norm=None) == 0.0  # no key: no clipping
    assert clip.read(optimizer_max_gradient_norm=1.5) == 1.5
    assert clip.write(value=0.0) == {} and clip.write(value=0) == {}
    assert clip.write(value=1.0) == {"optimizer_max_gradient_norm": 1.0}


@pytest.mark.parametrize("clip,written", [(0.0, None), (2.5, 2.5)])
def test_omit_end_to_end_neox_to_cerebras(clip: float, written: float | None) -> None:
    done = translate([str(PYTHIA)], "neox", "cerebras", world_size=8, set_values={"optim.grad_clip": clip})
    optimizer = yaml.safe_load(done.dump())["optimizer"]
    assert optimizer.get("max_gradient_norm") == written


@pytest.mark.parametrize("raw,expected", [(None, 1), (0, 1), (1, 1), (4, 4)])
def test_omit_and_values_neox_pipeline_stages(raw: int | None, expected: int) -> None:
    """pipe_parallel_size 0 (no PipelineModule) and 1 (one stage) both run one stage: canonical 1,
    written by leaving the key out; more stages as given."""
    pipe = _formula("neox", "parallel.pipeline_size")
    assert pipe.read(pipe_parallel_size=raw) == expected
    assert pipe.write(value=1) == {}
    assert pipe.write(value=expected) == ({} if expected == 1 else {"pipe_parallel_size": expected})


def test_omit_pipeline_stages_from_megatron_to_neox() -> None:
    one = translate([str(MEGATRON / "gpt-15b-ci.yaml")], "megatron", "neox")  # --pipeline-model-parallel-size 1
    assert "pipe_parallel_size" not in yaml.safe_load(one.dump())
    sixteen = translate([str(MEGATRON / "gpt3-175b.sh")], "megatron", "neox")  # 16 stages
    assert yaml.safe_load(sixteen.dump())["pipe_parallel_size"] == 16


@pytest.mark.parametrize("raw,expected", [(None, 0), (0, 0), (500, 500)])
def test_omit_neox_no_checkpoint_factor_is_no_periodic_checkpoints(raw: int | None, expected: int) -> None:
    """No checkpoint_factor: NeoX saves no periodic checkpoints (interval 0), which is written by
    leaving the key out (checkpoint_factor 0 would make NeoX's save_iters range(0, train_iters, 0))."""
    factor = _formula("neox", "checkpoint.interval")
    assert factor.read(checkpoint_factor=raw) == expected
    assert factor.write(value=0) == {}
    assert factor.write(value=expected) == ({} if expected == 0 else {"checkpoint_factor": expected})


@pytest.mark.parametrize("interval,written", [(0, None), (2000, 2000)])
def test_omit_checkpoint_interval_end_to_end_neox(interval: int, written: int | None) -> None:
    done = translate([str(PYTHIA)], "neox", "neox", set_values={"checkpoint.interval": interval})
    assert yaml.safe_load(done.dump()).get("checkpoint_factor") == written


# ---- warn_values ---------------------------------------------------------------------------------


def test_warn_values_veomni_max_grad_norm() -> None:
    """clip_grad_norm_ always runs: .inf is no clipping (canonical 0); 0 zeroes every gradient,
    read as no clipping with the reason."""
    clip = _formula("veomni", "optim.grad_clip")
    assert clip.read(train_optimizer_max_grad_norm=math.inf) == 0.0
    zero = clip.read(train_optimizer_max_grad_norm=0)
    assert isinstance(zero, Approx) and zero.value == 0
    assert (
        zero.detail
        == "max_grad_norm 0 makes VeOmni's clip_grad_norm_ scale every gradient to zero; read as no clipping"
    )
    assert clip.read(train_optimizer_max_grad_norm=0.5) == 0.5 and clip.read(train_optimizer_max_grad_norm=None) is None
    assert clip.write(value=0.0) == {"train_optimizer_max_grad_norm": math.inf}
    assert clip.write(value=2.0) == {"train_optimizer_max_grad_norm": 2.0}


def test_warn_values_end_to_end_neox_to_veomni() -> None:
    done = translate([str(LLAMA)], "neox", "veomni", world_size=8, set_values={"optim.grad_clip": 0.0})
    text = done.dump()
    assert yaml.safe_load(text)["train"]["optimizer"]["max_grad_norm"] == math.inf


# ---- exponent_of ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["deepspeed", "neox"])
def test_exponent_of_initial_scale_power(fmt: str) -> None:
    power = _formula(fmt, "precision.initial_loss_scale")
    assert power.read(fp16_initial_scale_power=12) == 4096.0
    assert power.read(fp16_initial_scale_power=-2) == 0.25
    assert power.read(fp16_initial_scale_power=None) is None
    assert power.write(value=65536.0) == {"fp16_initial_scale_power": 16}
    assert power.write(value=2.0**29) == {"fp16_initial_scale_power": 29}  # log() is not exact there
    rounded: Any = power.write(value=1000.0)["fp16_initial_scale_power"]
    assert isinstance(rounded, Approx) and rounded.value == 10 and rounded.detail == "1000.0 is not a power of two"
    with pytest.raises(ValueError, match="no usable power of two"):
        power.read(fp16_initial_scale_power=10**30)


# ---- default_by, default_from ----------------------------------------------------------------------


@pytest.mark.parametrize("field", ["model.attention_dropout", "model.embedding_dropout"])
def test_default_by_family_then_from_hidden_dropout(field: str) -> None:
    """Model Zoo's GPT-2-derived models default attention_dropout_rate and embedding_dropout_rate to
    dropout_rate; the GPT-J backbone (gptj, gpt-neox) to 0.1 each (they were cerebras.attention_dropout
    and cerebras.embedding_dropout)."""
    rule = load_table("cerebras").rules_for_field(field)[0]
    assert rule.formula is not None and rule.derived
    assert rule.with_fields == {"by_family": "model.family", "from_hidden_dropout": "model.hidden_dropout"}
    key = "model_" + field.split(".")[1] + "_rate"
    read = rule.formula.read
    assert read(**{key: None}, by_family="gpt2", from_hidden_dropout=0.25) == 0.25
    assert read(**{key: None}, by_family=None, from_hidden_dropout=0.25) == 0.25
    assert read(**{key: None}, by_family="gptj", from_hidden_dropout=0.25) == 0.1
    assert read(**{key: None}, by_family="gpt-neox", from_hidden_dropout=0.0) == 0.1
    assert read(**{key: 0.05}, by_family="gptj", from_hidden_dropout=0.25) == 0.05  # the key wins
    assert rule.formula.write(value=0.3) == {key: 0.3}


@pytest.mark.parametrize(
    "name,model,expected",
    [
        ("gpt2-small-legacy.yaml", {"dropout_rate": 0.2, "attention_dropout_rate": None}, 0.2),
        ("gpt2-small-legacy.yaml", {"dropout_rate": 0.2, "attention_dropout_rate": 0.05}, 0.05),
        ("gptj-tiny-defaults.yaml", {"residual_dropout_rate": 0.2}, 0.1),
    ],
)
def test_default_by_and_from_end_to_end_cerebras_to_neox(
    name: str, model: dict[str, Any], expected: float, tmp_path: Path
) -> None:
    config = yaml.safe_load((FIXTURES / "inputs" / "cerebras" / name).read_text())
    config["model"].update(model)
    config["model"] = {k: v for k, v in config["model"].items() if v is not None}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    neox = yaml.safe_load(translate([str(path)], "cerebras", "neox").dump())
    assert neox["attention_dropout"] == expected and neox["hidden_dropout"] == 0.2


def test_warn_values_either_way_neox_qk_layernorm() -> None:
    """use_qk_layernorm true is one norm over [heads, head_dim] for q and k alike, not the canonical
    head_dim-wide norm each (it was the formula neox.qk_norm): lossy read and written."""
    qk = _formula("neox", "model.qk_norm")
    shape = (
        "NeoX's use_qk_layernorm is one LayerNorm over [heads, head_dim] applied to queries and keys alike "
        "(transformer.py), not a norm over head_dim for each"
    )
    read = qk.read(use_qk_layernorm=True)
    assert isinstance(read, Approx) and read.value is True and read.detail == shape
    assert qk.read(use_qk_layernorm=False) is False and qk.read(use_qk_layernorm=None) is None
    written = qk.write(value=True)["use_qk_layernorm"]
    assert isinstance(written, Approx) and written.value is True and written.detail == shape
    assert qk.write(value=False) == {"use_qk_layernorm": False}
    # VeOmni writes canonical 0 as .inf: the doubtful key value 0 is never written
    assert _formula("veomni", "optim.grad_clip").write(value=0.0) == {"train_optimizer_max_grad_norm": math.inf}
    done = translate([str(FIXTURES / "inputs" / "hf" / "qwen3-8b.json")], "hf", "neox")
    assert any(e.status is Status.LOSSY and shape in e.detail for e in done.report.entries)
