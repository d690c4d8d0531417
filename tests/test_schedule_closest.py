"""Closest forms: where a framework cannot hold a schedule, the writer keeps the peak, the warmup
length and the decay end, picks the shape with the smallest largest difference, and says what
that difference is and where (the cells of the rendering table).
Also the corpus schedules issue 16 names (Cerebras cosine warm-ups, T5's inverse square root,
multi-phase schedules): read, never a peak of 0, and rendered everywhere with their difference."""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml

from neoconv.schedule import Schedule, max_difference, peak, phase
from neoconv.formats.cerebras import scheduler as cerebras
from neoconv.formats.cerebras.lr_render import render as cerebras_render
from neoconv.formats.deepspeed import scheduler as deepspeed
from neoconv.formats.neox import scheduler as neox
from neoconv.formats.veomni import scheduler as veomni
from neoconv.schedule.fields import Rendering

from conftest import CORPUS

L, M = 1e-3, 1e-4


def brute(a: Schedule, b: Schedule, horizon: int) -> tuple[float, int]:
    diffs = [abs(a.value(t) - b.value(t)) for t in range(horizon)]
    top = max(diffs)
    return top, diffs.index(top)


def check_reported(source: Schedule, out: Rendering, horizon: int) -> None:
    """The rendering's difference is the step-by-step one, of the config as its framework reads it."""
    assert out.difference.value == pytest.approx(brute(source, out.schedule, horizon)[0], rel=1e-9, abs=1e-18)
    at = out.difference.step
    assert abs(source.value(at) - out.schedule.value(at)) == out.difference.value
    assert peak(out.schedule, horizon).value > 0  # never a peak of 0 for a source whose peak is above 0


def cs(*phases: dict[str, Any]) -> Schedule:
    return cerebras.read_trainer(
        [{"SequentialLR": {"schedulers": list(phases)}}] if len(phases) > 1 else list(phases)
    ).schedule


def lin(a: float, b: float, n: int) -> dict[str, Any]:
    return {"LinearLR": {"initial_learning_rate": a, "end_learning_rate": b, "total_iters": n}}


def cos(a: float, b: float, n: int) -> dict[str, Any]:
    return {"CosineDecayLR": {"initial_learning_rate": a, "end_learning_rate": b, "total_iters": n}}


# ---- NeoX: one warmup, one decay, a clamp -----------------------------------------------------------
def test_neox_linear_with_min_lr_is_exact_where_the_line_meets_min_lr_on_a_step() -> None:
    # decay L -> m over 9 steps: NeoX's line to 0 meets m at W + E (1 - m/L) = 4 + 10 * 0.9 = 13
    src = cs(lin(0.0, L, 4), lin(L, M, 9), {"ConstantLR": {"learning_rate": M}})
    out = neox.render(src, 30)
    assert {k: out.config[k] for k in ("lr_decay_style", "lr_decay_iters", "min_lr")} == {
        "lr_decay_style": "linear",
        "lr_decay_iters": 14,
        "min_lr": M,
    }
    assert out.config["warmup"] * 14 == pytest.approx(4)
    # all that differs is NeoX's first warmup step: L / W where the source starts from 0
    assert out.difference == (pytest.approx(L / 4), 0)
    check_reported(src, out, 30)
    assert out.detail(src, "GPT-NeoX") == (
        "GPT-NeoX has no exact form of this schedule: the closest differs by at most "
        "0.00025 (step 0: 0.00025 instead of 0)"
    )


def test_neox_linear_decay_ending_at_the_decay_end_misses_by_m_times_1_minus_m_over_L() -> None:
    src = cs(lin(L, M, 10), {"ConstantLR": {"learning_rate": M}})
    naive = neox.read({"lr": L, "min_lr": M, "warmup": 0.0, "lr_decay_iters": 10, "lr_decay_style": "linear"}).schedule
    assert max_difference(src, naive, 30) == (pytest.approx(M * (1 - M / L)), 9)
    out = neox.render(src, 30)  # the closest: the line to 0 meets m near step 10
    assert not out.exact and out.difference.value < M * (1 - M / L) / 5
    check_reported(src, out, 30)


def test_inverse_sqrt_into_neox_keeps_the_peak_and_reports_the_difference() -> None:
    src = cerebras.read_trainer([{"InverseSquareRootDecayLR": {"warmup_steps": 100, "scale": 1.0}}]).schedule
    assert peak(src, 400) == (0.1, 0)  # initial 1.0 / sqrt(100): a hold at 0.1 for 100 steps
    out = neox.render(src, 400)
    assert not out.exact and out.config["lr"] == 0.1
    assert 0 < out.difference.value < 0.05
    check_reported(src, out, 400)


def test_cosine_past_its_end_rises_in_neox_so_a_held_floor_is_lossy() -> None:
    src = cs(lin(0.0, L, 4), cos(L, M, 8), {"ConstantLR": {"learning_rate": M}})
    short = neox.render(src, 13)  # the run ends where the cosine does
    assert short.config["lr_decay_style"] == "cosine" and short.config["lr_decay_iters"] == 12
    assert short.difference == (pytest.approx(L / 4), 0)  # only NeoX's warmup start (L / W, not 0)
    # run on, NeoX's cosine climbs back after lr_decay_iters: that config is now far off ...
    rising = neox.read(short.config).schedule
    assert max_difference(src, rising, 40) == (
        pytest.approx(L - M),
        20,
    )  # a period of 2 x 8 steps: back at the peak at 20
    # ... and the closest form over 40 steps is another shape, no further off than the warmup start
    longer = neox.render(src, 40)
    assert longer.config["lr_decay_style"] != "cosine" and longer.difference.value == pytest.approx(L / 4)
    check_reported(src, longer, 40)


def test_exponential_decay_is_exact_in_neox_only_at_its_own_rate() -> None:
    half = cs(lin(0.0, L, 4), {"ExponentialLR": {"initial_learning_rate": L, "total_iters": 8, "decay_rate": 0.5}})
    out = neox.render(half, 30)
    assert out.config["lr_decay_style"] == "exponential"
    # NeoX decays by exp(-0.693) = 0.50007 per span, not 0.5: a small difference besides the warmup start
    assert out.difference.value == pytest.approx(L / 4)
    assert max(abs(half.value(t) - out.schedule.value(t)) for t in range(4, 30)) < 1e-4 * L
    own = neox.read({"lr": L, "warmup": 4 / 12, "lr_decay_iters": 12, "lr_decay_style": "exponential"}).schedule
    assert neox.render(own, 30).exact


# ---- DeepSpeed: one step late -------------------------------------------------------------------------
def test_warmup_cosine_in_deepspeed_lags_one_step_in_the_warmup() -> None:
    src = cs(lin(0.0, L, 4), cos(L, M, 8), {"ConstantLR": {"learning_rate": M}})
    same = {
        "type": "WarmupCosineLR",
        "params": {"total_num_steps": 12, "warmup_num_steps": 4, "cos_min_ratio": 0.1, "warmup_type": "linear"},
    }
    # the same numbers in DeepSpeed: L (t - 1) / W against L t / W, one step late all through the warmup
    assert max_difference(src, deepspeed.read(same, L).schedule, 20) == (pytest.approx(L / 4), 1)
    out = deepspeed.render(src, 20)  # the closest: a shorter warmup from L / 4 catches up with the lag
    assert out.config["scheduler"]["type"] == "WarmupCosineLR"
    assert {
        k: out.config["scheduler"]["params"][k] for k in ("total_num_steps", "warmup_num_steps", "warmup_min_ratio")
    } == {"total_num_steps": 12, "warmup_num_steps": 3, "warmup_min_ratio": 0.25}
    assert out.difference.value < L / 4
    check_reported(src, out, 20)
    assert veomni.render(src, 12).exact  # VeOmni's warmup starts on time


def test_a_decay_alone_is_exact_in_deepspeed_through_torch_by_name() -> None:
    src = cs({"CosineAnnealingLR": {"initial_learning_rate": L, "T_max": 10, "eta_min": M}})
    out = deepspeed.render(src, 50)
    assert out.exact and out.config == {
        "scheduler": {"type": "CosineAnnealingLR", "params": {"T_max": 10.0, "eta_min": M}},
        "optimizer_lr": L,
    }
    step = cs({"StepLR": {"initial_learning_rate": L, "step_size": 5, "gamma": 0.5}})
    assert deepspeed.render(step, 40).config["scheduler"]["type"] == "StepLR"
    lossy = veomni.render(step, 40)  # VeOmni has no step decay
    assert not lossy.exact
    check_reported(step, lossy, 40)


def test_log_warmup_has_no_form_outside_deepspeed() -> None:
    src = deepspeed.read({"type": "WarmupLR", "params": {"warmup_num_steps": 10, "warmup_max_lr": L}}, L).schedule
    assert [p.kind for p in src.phases] == ["constant", "log_warmup", "constant"]
    for framework in (cerebras, veomni):
        out = cerebras_render(src, 30) if framework is cerebras else veomni.render(src, 30)
        assert not out.exact
        check_reported(src, out, 30)


# ---- VeOmni: warmup + constant, linear to 1e-7 at the run's end, or cosine -----------------------------
def test_multi_phase_rewarm_into_veomni_is_its_closest_single_cycle() -> None:
    src = cs(
        lin(0.0, L, 10), cos(L, M, 40), lin(M, 5e-4, 10), cos(5e-4, 5e-5, 40), {"ConstantLR": {"learning_rate": 5e-5}}
    )
    out = veomni.render(src, 120)
    assert not out.exact
    assert out.config["lr"] == L and out.config["lr_warmup_ratio"] * 120 == pytest.approx(10.5)
    check_reported(src, out, 120)
    assert out.difference.value >= 4e-4 - M  # the second warmup's top (5e-4) against a decay already at its floor


def test_veomni_linear_ignores_lr_min_so_a_neox_min_lr_is_lossy() -> None:
    src = neox.read({"lr": L, "min_lr": M, "warmup": 0.1, "lr_decay_iters": 100, "lr_decay_style": "linear"}).schedule
    out = veomni.render(src, 120)
    assert not out.exact
    check_reported(src, out, 120)
    assert cerebras_render(src, 120).exact  # Model Zoo holds any sequence of these phases


# ---- corpus: the schedules issue 16 found written as lr 0 -----------------------------------------------
COSINE_WARMUPS = {
    "cerebras-legacy/gemma2/params_gemma2_9b_msl8k.yaml": (1e-4, 10, 160),
    "cerebras-legacy/gemma2/params_gemma2_27b_msl8k.yaml": (5e-5, 10, 160),
    "cerebras-trainer/gemma2/params_gemma2_9b_msl8k.yaml": (1e-4, 10, 160),
    "cerebras-trainer/gemma2/params_gemma2_27b_msl8k.yaml": (5e-5, 10, 160),
    "cerebras-trainer/gemma2/params_gemma2_9b_msl8k_swa_4k_sink_512.yaml": (1e-4, 10, 160),
    "cerebras-trainer/llama/params_llama3p1_405b_msl_128k.yaml": (3e-4, 90, 4678),
    "cerebras-trainer/llama/params_llama3p2_1b_msl_8k.yaml": (3e-4, 34, 666),
    "cerebras-trainer/llama/params_llama3p2_3b_msl_8k.yaml": (3e-4, 34, 666),
}
INVERSE_SQRT = {
    "cerebras-legacy/t5/t5_small.yaml": 10000,
    "cerebras-legacy/t5/t5_base.yaml": 10000,
    "cerebras-legacy/t5/t5_3B.yaml": 4363,
    "cerebras-legacy/t5/t5_11B.yaml": 8307,
    "cerebras-trainer/t5/t5_3B.yaml": 3870,
    "cerebras-trainer/t5/t5_11B.yaml": 8307,
    "cerebras-trainer/t5/t5_11B_muP.yaml": 8307,
}
MULTI_PHASE = {
    "cerebras-legacy/transformer/transformer_base.yaml": ["linear"] * 2,
    "cerebras-trainer/transformer/transformer_large.yaml": ["linear"] * 2,
    "cerebras-legacy/bert/fine_tuning/extractive_summarization/bert_base_summarization.yaml": ["linear"] * 2,
    "cerebras-legacy/bloom/params_bloom_7b.yaml": ["linear", "cosine", "constant"],
}


def corpus_schedule(rel: str) -> Schedule:
    path = CORPUS / rel
    if not path.exists():
        pytest.skip(f"{path} is not here (the corpus lives in ../shared/corpus)")
    data = yaml.safe_load(path.read_text())
    if "trainer" in data:
        return cerebras.read_trainer(data["trainer"]["init"]["schedulers"]).schedule
    opt = data["optimizer"]
    return cerebras.read_legacy(opt["learning_rate"], opt.get("adjust_learning_rate")).schedule


def render_everywhere(src: Schedule, horizon: int) -> dict[str, Rendering]:
    return {
        "neox": neox.render(src, horizon),
        "deepspeed": deepspeed.render(src, horizon),
        "veomni": veomni.render(src, horizon),
        "cerebras": cerebras_render(src, horizon),
    }


@pytest.mark.parametrize("rel", sorted(COSINE_WARMUPS))
def test_cosine_warmup_phases_are_read_and_never_written_with_lr_0(rel: str) -> None:
    top, warm, decay = COSINE_WARMUPS[rel]
    src = corpus_schedule(rel)
    kinds = [(p.kind, p.length, p.start, p.end) for p in src.phases]
    assert kinds == [("cosine", warm, 0.0, top), ("cosine", decay, top, pytest.approx(top / 10))]
    assert peak(src) == (top, warm)
    horizon = warm + decay + 50
    for name, out in render_everywhere(src, horizon).items():
        assert out.exact == (name == "cerebras"), name
        # the peak, never 0 (a lagging warmup may stop short of it by no more than the difference)
        assert top - out.difference.value <= peak(out.schedule, horizon).value <= top * (1 + 1e-12), name
        # a linear warmup where the source's is a cosine: the difference is in the warmup, below the peak
        assert 0 <= out.difference.value < top / 2, name


@pytest.mark.parametrize("rel", sorted(INVERSE_SQRT))
def test_t5_inverse_square_root_is_a_hold_then_one_over_sqrt_t(rel: str) -> None:
    warm = INVERSE_SQRT[rel]
    src = corpus_schedule(rel)
    (only,) = src.phases
    assert (only.kind, only.param("hold"), only.beyond) == ("inverse_sqrt", float(warm), "continue")
    assert only.start == pytest.approx(1.0 / math.sqrt(warm))  # Model Zoo's initial_learning_rate default 1.0
    assert src.value(4 * warm) == pytest.approx(only.start / 2)
    horizon = 10 * warm
    for name, out in render_everywhere(src, horizon).items():
        assert peak(out.schedule, horizon).value == pytest.approx(only.start), name
        assert out.exact == (name == "cerebras"), name
        assert out.difference.value < only.start, name


@pytest.mark.parametrize("rel", sorted(MULTI_PHASE))
def test_multi_phase_schedules_keep_their_phases(rel: str) -> None:
    src = corpus_schedule(rel)
    kinds = [p.kind for p in src.phases]
    assert kinds[: len(MULTI_PHASE[rel])] == MULTI_PHASE[rel] and len(kinds) >= len(MULTI_PHASE[rel])
    assert src.phases[0].start == 0.0 and peak(src).value > 0
    horizon = src.total_length + 100
    for name, out in render_everywhere(src, horizon).items():
        assert peak(out.schedule, horizon).value > 0, name
        if name == "cerebras":
            assert out.exact


def test_a_peak_of_0_only_for_a_source_whose_peak_is_0() -> None:
    zero = Schedule([phase("constant", 1, 0.0)])
    assert neox.render(zero, 10).config["lr"] == 0.0 and neox.render(zero, 10).exact
    assert deepspeed.render(zero, 10).config == {"scheduler": None, "optimizer_lr": 0.0}
    with pytest.raises(Exception, match="no config of this framework"):
        veomni.render(zero, 10)  # VeOmni divides by the lr: no VeOmni config trains at lr 0
    # a source above 0 never gets a 0 peak, even where the closest form is far off
    spike = Schedule([phase("constant", 5, 0.0), phase("constant", 1, L), phase("constant", 1, 0.0)])
    for framework in (neox, deepspeed, veomni):
        out = framework.render(spike, 20)
        assert peak(out.schedule, 20).value > 0, framework.__name__
        check_reported(spike, out, 20)
