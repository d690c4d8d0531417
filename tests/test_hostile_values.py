"""Absurd values in an input file (issue 32): each either translates in bounded time or is refused
with one line naming the file, the line and the key -- never a hang, never an internal error."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
from conftest import cli_runner

from neoconv.cli import main
from neoconv.knowledge.catalogue import Field
from neoconv.schedule.compare import max_difference
from neoconv.schedule.model import Schedule, ScheduleError, phase

NEOX = """\
num_layers: 2
hidden_size: 64
num_attention_heads: 4
seq_length: 128
max_position_embeddings: 128
pos_emb: rotary
optimizer: {{type: Adam, params: {{lr: 0.0006}}}}
min_lr: 0.00006
train_micro_batch_size_per_gpu: 4
train_iters: {train_iters}
lr_decay_iters: {decay}
lr_decay_style: cosine
warmup: 0.01
fp16: {{enabled: true, loss_scale: {loss_scale}}}
"""


def _run(tmp_path: Path, pair: str, **values: object) -> tuple[int, str]:
    src = tmp_path / "in.yml"
    src.write_text(NEOX.format(**{"train_iters": 1000, "decay": 1000, "loss_scale": 0, **values}))
    result = cli_runner().invoke(main, [pair, str(src), "-o", str(tmp_path / "out"), "-q"])
    assert "internal error" not in result.stderr
    return result.exit_code, result.stderr


def _refused(tmp_path: Path, pair: str, key: str, line: int, **values: object) -> str:
    code, err = _run(tmp_path, pair, **values)
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert f"in.yml:{line}:" in err and key in err
    assert not (tmp_path / "out").exists()
    return err


def test_a_mirror_cosine_over_a_long_run_is_compared_in_pieces_not_steps() -> None:
    # NeoX's cosine goes on past lr_decay_iters (it rises again): over 10^12 steps it turns millions
    # of times against a candidate's one long cosine. The long cosine's bound over a half of the run
    # is its values there (not its whole range), so halving prunes: before, every half was searched.
    turning = Schedule([phase("cosine", 1000, 6e-4, 6e-5, cycle="mirror", beyond="continue")])
    long = Schedule([phase("cosine", 10**12, 6e-4, 0.0, cycle="mirror", beyond="continue")])
    began = time.perf_counter()
    found = max_difference(turning, long, 10**12)
    assert time.perf_counter() - began < 2.0
    # the turning one peaks again at 6e-4 every 2000 steps; the long one is near 0 at the end
    assert found.value == pytest.approx(6e-4, rel=1e-6)
    assert found.step > 0.999 * 10**12  # at the end of the run (the first such step within 1e-10)


@pytest.mark.parametrize("steps", [2**53 + 1, "1e308"])
def test_a_run_longer_than_floats_count_steps_is_refused(tmp_path: Path, steps: object) -> None:
    # before: 1e308 train_iters hung every target (the schedule's turns at float precision never advance)
    err = _refused(tmp_path, "neox2neox", "train_iters", 10, train_iters=steps)
    assert "9007199254740992" in err


def test_a_decay_longer_than_floats_count_steps_is_refused(tmp_path: Path) -> None:
    code, err = _run(tmp_path, "neox2cerebras", decay="1e308")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "2**53" in err


def test_a_phase_past_2_53_steps_is_no_schedule() -> None:
    with pytest.raises(ScheduleError, match="2\\*\\*53"):
        Schedule([phase("linear", 2**53 + 1, 1.0, 0.0)])
    with pytest.raises(ScheduleError, match="2\\*\\*53"):
        Schedule([phase("constant", 2**52, 1.0), phase("constant", 2**52 + 1, 1.0)])
    assert Schedule([phase("linear", 2**53, 1.0, 0.0)]).total_length == 2**53  # the longest one is kept


def test_a_loss_scale_past_the_float_range_is_refused(tmp_path: Path) -> None:
    # before: OverflowError (an internal error) writing Megatron's --loss-scale
    _refused(tmp_path, "neox2megatron", "fp16.loss_scale", 14, loss_scale=10**400)
    code, _ = _run(tmp_path, "neox2megatron", loss_scale=4096)
    assert code in (0, 1)


def test_a_number_of_more_digits_than_str_allows_is_measured_not_printed() -> None:
    # str() of a 5,000-digit int raises ValueError (Python 3.11+): the message counts its digits
    for kind in ("int", "float", "any"):
        with pytest.raises(ValueError, match="a number of 5001 digits is past the float range"):
            Field("x", kind, "").check(10**5000)


def test_a_train_size_past_what_veomni_counts_in_floats_is_refused() -> None:
    # before: OverflowError (an internal error) for a Cerebras batch_size of 1e308 into VeOmni
    from neoconv.core.errors import InputError
    from neoconv.formats.veomni.schedule import veomni_tokens_for

    with pytest.raises(InputError, match="2\\*\\*53"):
        veomni_tokens_for(1000, 10**308, 0.0)
    tokens = veomni_tokens_for(1000, 2048 * 1024, 0.0)  # a real run still sized exactly
    assert -(-tokens // (2048 * 1024)) == 1000


def test_an_hf_model_of_absurdly_many_layers_is_refused_not_listed(tmp_path: Path) -> None:
    # before: a Gemma-2 config of 10^18 layers hung every target building its per-layer pattern
    import json

    cfg = {
        "model_type": "gemma2",
        "num_hidden_layers": 10**18,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "head_dim": 16,
        "intermediate_size": 128,
        "vocab_size": 256,
        "sliding_window": 64,
    }
    src = tmp_path / "config.json"
    src.write_text(json.dumps(cfg))
    result = cli_runner().invoke(main, ["hf2neox", str(src), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 2 and "internal error" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "num_hidden_layers" in result.stderr


def test_the_largest_micro_batch_that_splits_a_batch_is_found_from_its_factors() -> None:
    # before: counted down from the micro batch: a prime global batch of 10^12 + 39 samples hung
    from neoconv.knowledge.formula import largest_divisor_at_most, split

    for n in range(1, 200):
        for cap in range(1, 60):
            assert largest_divisor_at_most(n, cap) == max(d for d in range(1, min(n, cap) + 1) if n % d == 0)
    began = time.perf_counter()
    assert largest_divisor_at_most(10**12 + 39, 10**12) == 1  # a prime
    assert largest_divisor_at_most(2**40 * 3**5, 10**9) == 2**25 * 3**3  # 905,969,664: no 2^a 3^b is nearer 10^9
    done = split(10**12 + 39, 10**12 - 1, 1, 1, "1 GPU")
    assert not isinstance(done, str) and (done.micro, done.accum) == (1, 10**12 + 39)
    assert time.perf_counter() - began < 0.5


def test_the_peak_of_a_cycle_of_fractional_period_over_a_long_run_is_found_in_bounded_time() -> None:
    # Megatron's cosine over --lr-decay-samples / global batch steps (a fractional span) runs on past
    # its decay, turning ~10^8 times over --train-samples 10^18: before, the search for its peak split
    # every half of the run down to 4096 steps (a hang); a half with few turns is searched as it is
    from neoconv.schedule.compare import peak

    s = Schedule(
        [
            phase("linear", 3391, 0.0, 4.5e-4),
            phase(
                "cosine", 1688639, 4.5e-4, 4.5e-5, span=1688639.15625, shift=0.15625, cycle="mirror", beyond="continue"
            ),
        ]
    )
    began = time.perf_counter()
    top = peak(s, 868055555555555)
    assert time.perf_counter() - began < 1.0
    assert top.value == pytest.approx(4.5e-4, rel=1e-10)


def test_a_megatron_layer_pattern_is_bounded_by_the_list_it_makes() -> None:
    # before: each factor was at most 100,000 but ([1]*100000)*100000 listed 10^10 layers (a hang)
    from neoconv.formats.megatron.moe import layer_pattern

    assert layer_pattern("([0]*3+[1]*29)") == [0] * 3 + [1] * 29
    for text in ("([1]*100000)*100000", "[1]*100000+[0]"):
        began = time.perf_counter()
        with pytest.raises(ValueError, match="more than 100,000 layers"):
            layer_pattern(text)
        assert time.perf_counter() - began < 0.5


def test_a_layer_count_no_framework_could_build_is_refused_at_its_line(tmp_path: Path) -> None:
    src = tmp_path / "in.args"
    src.write_text(
        "--num-layers 1000000000000000000\n--hidden-size 64\n--num-attention-heads 4\n--seq-length 128\n"
        "--max-position-embeddings 128\n--micro-batch-size 1\n--num-experts 4\n--moe-layer-freq 2\n"
    )
    result = cli_runner().invoke(main, ["megatron2cerebras", str(src), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 2 and "internal error" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "in.args:1: --num-layers" in result.stderr


def test_where_a_long_stable_phase_ends_is_found_by_pieces_not_steps() -> None:
    # before: the HF Trainer writer walked the steps while the lr stayed at its peak (a WSD schedule's
    # stable phase of 10^12 steps: a hang); now by bisection on each monotone piece
    import math

    from neoconv.formats.hftrainer.scheduler import _stable_start
    from neoconv.schedule.compare import features

    def walked(s: Schedule, w: int) -> int:
        f = features(s, s.total_length + 1)
        t = max(w, int(f.peak_at))
        while t < s.total_length and math.isclose(s.value(t), f.peak, rel_tol=1e-12):
            t += 1
        return t

    for stable, kind in ((1, "linear"), (7, "cosine"), (30, "linear")):
        s = Schedule([phase("linear", 10, 0.0, 1e-3), phase("constant", stable, 1e-3), phase(kind, 25, 1e-3, 1e-4)])
        for w in range(12):
            assert _stable_start(s, features(s, s.total_length + 1), w) == walked(s, w)
    long = Schedule(
        [phase("linear", 100, 0.0, 1e-3), phase("constant", 10**12, 1e-3), phase("cosine", 10**6, 1e-3, 1e-4)]
    )
    began = time.perf_counter()
    # the cosine's first step is still the peak; its second is 2e-12 below it (past rel_tol 1e-12)
    assert _stable_start(long, features(long, long.total_length + 1), 100) == 100 + 10**12 + 1
    assert time.perf_counter() - began < 0.5


def test_a_staircase_of_long_stairs_is_written_by_bisection_not_by_steps() -> None:
    # before: Cerebras's ConstantLR per stair walked every step (50 stairs over 10^12 steps: a hang)
    from neoconv.formats.cerebras.lr_render import _stairs

    for stairs, n in ((4, 100), (7, 50), (1, 9)):
        p = phase("linear", n, 1e-3, 1e-4, stairs=stairs)
        lrs = [float(f"{p.shape().value(t):.15g}") for t in range(n)]  # step by step, as before
        runs = [(lr, sum(1 for _ in group)) for lr, group in itertools.groupby(lrs)]
        assert [(s["ConstantLR"]["learning_rate"], s["ConstantLR"]["total_iters"]) for s in _stairs(p, n)] == runs
    began = time.perf_counter()
    long = _stairs(phase("linear", 10**12, 1e-3, 1e-4, stairs=50), 10**12)
    assert time.perf_counter() - began < 0.5
    assert sum(s["ConstantLR"]["total_iters"] for s in long) == 10**12 and len(long) <= 51
