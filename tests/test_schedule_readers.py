"""What the framework readers refuse, what they note, and the spellings they accept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neoconv.schedule import NotRepresentable, Schedule, ScheduleError, max_difference
from neoconv.formats.cerebras import scheduler as cerebras
from neoconv.formats.deepspeed import scheduler as deepspeed
from neoconv.formats.neox import scheduler as neox
from neoconv.formats.veomni import scheduler as veomni

L, M = 1e-3, 1e-4
ORACLE = Path(__file__).resolve().parent.parent / "fixtures" / "schedule"


# ---- NeoX ---------------------------------------------------------------------------------------------
def test_neox_cosine_spelled_with_a_capital_trains_a_constant_lr() -> None:
    r = neox.read({"lr": L, "warmup": 0.25, "lr_decay_iters": 12, "lr_decay_style": "Cosine"})
    assert r.schedule.values([2, 3, 50]) == [pytest.approx(2 * L / 3), pytest.approx(L), L]  # W = 0.25 x 12
    assert "compares exactly" in r.notes[0]


@pytest.mark.parametrize(
    "cfg, message",
    [
        ({"lr": L, "lr_decay_style": "cosine"}, "needs train_iters or lr_decay_iters"),
        ({"lr": L, "min_lr": 2e-3, "train_iters": 10}, "min_lr 0.002 is above lr"),
        ({"lr": L, "warmup": 1.0, "train_iters": 10}, "nothing to decay over"),
        ({"lr": L, "lr_decay_fraction": 0.5}, "lr_decay_fraction needs train_iters"),
        ({"lr": "1e-3", "train_iters": 10}, "lr must be a number"),
    ],
)
def test_neox_configs_its_scheduler_cannot_run(cfg: dict, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        neox.read(cfg)


# ---- DeepSpeed --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "block, message, error",
    [
        ({"type": "warmupLR", "params": {}}, "names are case-sensitive", ScheduleError),
        ({"type": "WarmupLR", "params": {"warmup_steps": 10}}, "takes no warmup_steps", ScheduleError),
        ({"type": "WarmupDecayLR", "params": {"warmup_num_steps": 10}}, "needs total_num_steps", ScheduleError),
        ({"type": "LambdaLR", "params": {}}, "needs a function", NotRepresentable),
        ({"type": "ReduceLROnPlateau", "params": {}}, "a metric", NotRepresentable),
        (
            {"type": "CosineAnnealingWarmRestarts", "params": {"T_0": 5, "T_mult": 2}},
            "periods that grow",
            NotRepresentable,
        ),
        ({"type": "LinearLR", "params": {"start_factor": 0.0}}, "0 < start_factor", ScheduleError),
        ({"type": "WarmupLR", "params": {"warmup_num_steps": 2.5}}, "whole number", ScheduleError),
    ],
)
def test_deepspeed_scheduler_blocks_it_would_refuse(block: dict, message: str, error: type) -> None:
    with pytest.raises(error, match=message):
        deepspeed.read(block, L)


def test_deepspeed_needs_the_optimizer_lr_where_a_scheduler_scales_it() -> None:
    with pytest.raises(ScheduleError, match="optimizer's lr"):
        deepspeed.read({"type": "WarmupCosineLR", "params": {"total_num_steps": 10}}, None)
    assert deepspeed.read(None, 3e-4).schedule.values([0, 10**9]) == [3e-4, 3e-4]  # no scheduler: the optimizer's lr


def test_deepspeed_version_differences_are_noted() -> None:
    with pytest.raises(ScheduleError, match="no WarmupCosineLR"):
        deepspeed.read({"type": "WarmupCosineLR", "params": {"total_num_steps": 10}}, L, "0.12.2")
    stairs = {
        "type": "OneCycle",
        "params": {"cycle_min_lr": M, "cycle_max_lr": L, "cycle_first_step_size": 4, "cycle_first_stair_count": 2},
    }
    old, new = deepspeed.read(stairs, L, "0.19.3"), deepspeed.read(stairs, L, "0.19.4")
    assert "ignored before DeepSpeed 0.19.4" in old.notes[0] and not new.notes
    assert old.schedule.value(1) == pytest.approx(M + (L - M) / 4) and new.schedule.value(1) == M
    odd = deepspeed.read({"type": "WarmupLR", "params": {"warmup_type": "cubic", "warmup_num_steps": 4}}, L)
    assert "falls back" not in odd.notes[0] and "uses log" in odd.notes[0]
    assert [p.kind for p in odd.schedule.phases][1] == "log_warmup"


# ---- Cerebras ------------------------------------------------------------------------------------------
def test_cerebras_release_2_1_spellings_mean_the_same_schedule() -> None:
    old = cerebras.read_legacy(
        [
            {"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": L, "steps": 10},
            {"scheduler": "Exponential", "learning_rate": L, "decay_steps": 10, "decay_rate": 0.5},
        ]
    )
    new = cerebras.read_legacy(
        [
            {"scheduler": "LinearLR", "initial_learning_rate": 0.0, "end_learning_rate": L, "total_iters": 10},
            {"scheduler": "ExponentialLR", "initial_learning_rate": L, "total_iters": 10, "decay_rate": 0.5},
        ]
    )
    assert old.schedule == new.schedule
    assert any("steps: a release 2.1 spelling of total_iters" in n for n in old.notes)
    assert not cerebras.read_legacy(
        old_names := [{"scheduler": "CosineAnnealing", "learning_rate": L, "t_max": 8}], release="1.9.1"
    ).notes
    assert cerebras.read_legacy(old_names).schedule.value(8) == pytest.approx(0.0)


@pytest.mark.parametrize(
    "schedulers, message, error",
    [
        ([{"Spline": {}}], "no lr scheduler", ScheduleError),
        (
            [
                {
                    "SequentialLR": {
                        "schedulers": [{"ConstantLR": {"learning_rate": L}}, {"ConstantLR": {"learning_rate": M}}]
                    }
                }
            ],
            "needs total_iters",
            ScheduleError,
        ),
        (
            [
                {
                    "SequentialLR": {
                        "schedulers": [
                            {"ConstantLR": {"learning_rate": L, "total_iters": 3}},
                            {"ConstantLR": {"learning_rate": M}},
                        ],
                        "milestones": [4],
                    }
                }
            ],
            "differ from the sums",
            ScheduleError,
        ),
        ([{"InverseSquareRootDecayLR": {"warmup_steps": 0}}], "sqrt\\(0\\)", ScheduleError),
        (
            [{"CosineAnnealingWarmRestarts": {"initial_learning_rate": L, "T_0": 4, "T_mult": 2}}],
            "only T_mult 1",
            ScheduleError,
        ),
        ([{"LambdaLR": {"initial_learning_rate": L}}], "demo lambdas", NotRepresentable),
        ([{"ChainedLR": {"schedulers": []}}], "multiplies", NotRepresentable),
        (
            [
                {"ConstantLR": {"learning_rate": L}},
                {"StepLR": {"initial_learning_rate": L, "step_size": 2, "gamma": 0.5}},
            ],
            "2 lr schedulers",
            NotRepresentable,
        ),
    ],
)
def test_cerebras_schedulers_model_zoo_would_refuse(schedulers: list, message: str, error: type) -> None:
    with pytest.raises(error, match=message):
        cerebras.read_trainer(schedulers)


def test_cerebras_leaves_out_what_older_releases_ignored() -> None:
    # gpt2/params_gpt2_small.yaml's `alpha: 0.1` (Model Zoo 2.0 ignored it; 2.10 rejects it): said, left out
    r = cerebras.read_trainer(
        [{"LinearLR": {"initial_learning_rate": L, "end_learning_rate": 0.0, "total_iters": 5, "alpha": 0.1}}]
    )
    assert r.schedule.value(5) == 0.0 and r.schedule.value(0) == L
    assert r.notes == ("LinearLR takes no alpha: left out (Model Zoo 2.10 rejects it as an extra key)",)


def test_cerebras_reads_what_model_zoo_coerces_and_skips_what_is_not_an_lr_schedule() -> None:
    # YAML 1.1 reads 6e-06 as a string (corpus gptj TRC2); pydantic's float accepts it
    r = cerebras.read_trainer(
        [
            {"LinearLR": {"initial_learning_rate": 0.0, "end_learning_rate": "6e-06", "total_iters": 5}},
            {"CosineDecayWD": {"initial_val": 0.1, "end_val": 0.0, "total_iters": 5}},
        ]
    )
    assert r.schedule.value(5) == 6e-06
    assert "not an lr scheduler" in r.notes[0]


# ---- VeOmni -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cfg, message",
    [({"lr": 0.0}, "divide by the lr"), ({"lr": L, "lr_decay_style": "Cosine"}, "unknown lr_decay_style 'Cosine'")],
)
def test_veomni_configs_its_trainer_would_fail_on(cfg: dict, message: str) -> None:
    with pytest.raises(ScheduleError, match=message):
        veomni.read(cfg, 100)


# ---- every reading survives the JSON form (the IR field value) -------------------------------------------
def all_oracle_readings() -> list[Schedule]:
    out = []
    for case in json.loads((ORACLE / "oracle-neox.json").read_text())["cases"]:
        out.append(neox.read(case["config"]).schedule)
    for case in json.loads((ORACLE / "oracle-deepspeed.json").read_text())["cases"]:
        if "lrs" in case:
            out.append(deepspeed.read(case["scheduler"], case["optimizer_lr"], case["version"]).schedule)
    for case in json.loads((ORACLE / "oracle-veomni.json").read_text())["cases"]:
        out.append(veomni.read(case["config"], case["train_steps"]).schedule)
    for case in json.loads((ORACLE / "oracle-cerebras.json").read_text())["cases"]:
        if case["layout"] == "legacy":
            out.append(cerebras.read_legacy(case["learning_rate"], case.get("adjust_learning_rate")).schedule)
        else:
            out.append(cerebras.read_trainer(case["schedulers"]).schedule)
    return out


def test_every_reading_round_trips_through_json() -> None:
    for s in all_oracle_readings():
        data = json.loads(json.dumps(s.to_json()))
        back = Schedule.from_json(data)
        assert back == s or max_difference(back, s, s.total_length + 50).value == 0.0
