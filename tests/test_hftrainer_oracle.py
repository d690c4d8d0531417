"""Oracle tier for the HF Trainer (`-m oracle`): transformers' own TrainingArguments, HfTrainerDeepSpeedConfig and
get_scheduler (tests/oracle_checks/check_hftrainer.py) run the train files neoconv reads and writes, at transformers
5.23.0 (`hftrainer`) and 4.57.1 (`hftrainer-4`); the learning rate of every step sampled and the global batch are
what neoconv says they are. Each test skips, saying why, when its oracle's interpreter is not configured."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import oracle
import pytest
import yaml

from neoconv import Status, translate
from neoconv.api import read_ir
from neoconv.schedule.fields import parse

pytestmark = pytest.mark.oracle

INPUTS = Path(__file__).resolve().parent.parent / "fixtures" / "inputs" / "hftrainer"
SFT, DS3 = INPUTS / "sft-zero3.yaml", INPUTS / "ds-zero3-auto.json"
LINEAR, DS_DECAY = INPUTS / "trainer-linear.json", INPUTS / "ds-warmupdecay-auto.json"
RELEASE = {"hftrainer": "5.23.0", "hftrainer-4": "4.57.1"}


def need(name: str) -> None:
    why = oracle.unavailable(name)
    if why:
        pytest.skip(why)


def run(name: str, jobs: list[dict[str, Any]]) -> dict[str, oracle.Verdict]:
    need(name)
    verdicts = oracle.run(name, jobs)
    errors = {k: v.error for k, v in verdicts.items() if v.verdict == "error"}
    assert not errors, f"the {name} check program failed (not the framework's verdict): {errors}"
    return verdicts


def steps_of(total: int) -> list[int]:
    """Steps to compare: the first ones, every warmup/decay boundary a schedule may have, and a spread."""
    return sorted({*range(0, min(total, 12)), *range(0, total + 5, max(1, total // 97)), total - 1, total, total + 3})


def copy_pair(train: Path, ds: Path | None, folder: Path, name: str = "train") -> Path:
    """The train file in `folder`, its `deepspeed:` naming the DeepSpeed config copied beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    document = json.loads(train.read_text()) if train.suffix == ".json" else yaml.safe_load(train.read_text())
    if ds is not None:
        (folder / ds.name).write_text(ds.read_text())
        document["deepspeed"] = ds.name
    out = folder / f"{name}.yaml"
    out.write_text(yaml.safe_dump(document))
    return out


def written(result: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(result.dump())
    for name, text in result.side_files.items():
        (path.parent / name).write_text(text)
    return path


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


# ---- the sources: what neoconv reads is what the Trainer runs -------------------------------------------------
SOURCES = [  # (train file, DeepSpeed config, the release it is of)
    (SFT, DS3, "hftrainer-4"),  # warmup_ratio: a 4.x file
    (LINEAR, DS_DECAY, "hftrainer"),
    (LINEAR, DS_DECAY, "hftrainer-4"),
    (LINEAR, None, "hftrainer"),
]


@pytest.mark.parametrize("train,ds,name", SOURCES, ids=lambda v: getattr(v, "name", v))
def test_a_train_file_runs_as_neoconv_reads_it(train: Path, ds: Path | None, name: str, tmp_path: Path) -> None:
    ir = read_ir([str(train)] + ([str(ds)] if ds else []), "hftrainer", world_size=8, source_version=RELEASE[name]).ir
    total = ir.get("train.steps")
    path = copy_pair(train, ds, tmp_path)
    verdict = run(name, [{"id": "src", "files": [str(path)], "world": 8, "strip": True, "lr_at": steps_of(total)}])[
        "src"
    ]
    assert verdict.accepted, verdict.error
    got = verdict.values
    assert (got["global_batch"], got["total_steps"]) == (ir.get("batch.global"), total)
    schedule = parse(ir.get("schedule.phases"))
    wrong = {k: (v, schedule.value(int(k))) for k, v in got["lr_at"].items() if not close(v, schedule.value(int(k)))}
    assert not wrong, wrong
    if ds is not None:  # every "auto" the Trainer fills: a value, equal to the arguments'
        filled = json.dumps(got["deepspeed"])
        assert '"auto"' not in filled
        assert got["deepspeed"].get("train_batch_size", ir.get("batch.global")) == ir.get("batch.global")
        assert got["deepspeed"]["train_micro_batch_size_per_gpu"] == ir.get("batch.micro")


# ---- every schedule, as get_scheduler computes it ---------------------------------------------------------------
SCHEDULES = [  # (lr_scheduler_type, lr_scheduler_kwargs, warmup_steps, total steps, releases)
    ("linear", {}, 10, 100, ("hftrainer", "hftrainer-4")),
    ("cosine", {}, 7, 60, ("hftrainer", "hftrainer-4")),
    ("cosine", {"num_cycles": 1.5}, 5, 80, ("hftrainer",)),
    ("cosine_with_restarts", {"num_cycles": 3}, 4, 90, ("hftrainer", "hftrainer-4")),
    ("polynomial", {"power": 2.0, "lr_end": 1e-6}, 10, 100, ("hftrainer", "hftrainer-4")),
    ("constant", {}, 0, 40, ("hftrainer", "hftrainer-4")),
    ("constant_with_warmup", {}, 12, 40, ("hftrainer", "hftrainer-4")),
    ("inverse_sqrt", {}, 10, 200, ("hftrainer", "hftrainer-4")),
    ("inverse_sqrt", {"timescale": 25}, 10, 200, ("hftrainer",)),
    ("cosine_with_min_lr", {"min_lr_rate": 0.1}, 6, 80, ("hftrainer", "hftrainer-4")),
    ("cosine_with_min_lr", {"min_lr": 2e-5}, 6, 80, ("hftrainer",)),
    ("cosine_warmup_with_min_lr", {"min_lr_rate": 0.1}, 8, 80, ("hftrainer", "hftrainer-4")),
    ("warmup_stable_decay", {"num_decay_steps": 20, "min_lr_ratio": 0.1}, 10, 100, ("hftrainer", "hftrainer-4")),
    (
        "warmup_stable_decay",
        {"num_stable_steps": 30, "num_decay_steps": 40, "decay_type": "linear"},
        10,
        90,
        ("hftrainer",),
    ),
]


@pytest.mark.parametrize("name", sorted(RELEASE))
def test_every_schedule_is_what_get_scheduler_gives(name: str, tmp_path: Path) -> None:
    jobs, expected = [], {}
    for i, (kind, kwargs, warmup, total, names) in enumerate(SCHEDULES):
        if name not in names:
            continue
        document = {
            "output_dir": "o",
            "learning_rate": 2e-4,
            "lr_scheduler_type": kind,
            "warmup_steps": warmup,
            "max_steps": total,
            **({"lr_scheduler_kwargs": kwargs} if kwargs else {}),
        }
        path = tmp_path / f"ta{i}.json"
        path.write_text(json.dumps(document))
        jobs.append({"id": f"{kind} {kwargs}", "files": [str(path)], "world": 1, "lr_at": steps_of(total)})
        expected[f"{kind} {kwargs}"] = parse(
            read_ir([str(path)], "hftrainer", source_version=RELEASE[name]).ir.get("schedule.phases")
        )
    wrong = {}
    for key, verdict in run(name, jobs).items():
        assert verdict.accepted, (key, verdict.error)
        bad = {
            k: (v, expected[key].value(int(k)))
            for k, v in verdict.values["lr_at"].items()
            if not close(v, expected[key].value(int(k)))
        }
        if bad:
            wrong[key] = bad
    assert not wrong, wrong


# ---- to the other frameworks and back: the Trainer runs the output as it ran the source ------------------------------
TARGETS = [
    ("neox", None),
    ("megatron", None),
    ("veomni", None),
    ("cerebras", "legacy"),
    ("cerebras", "trainer"),
    ("deepspeed", None),
]


def test_there_and_back_runs_as_the_source_ran(tmp_path: Path) -> None:
    """A DeepSpeed "auto" config with its TrainingArguments into every other format and back: the Trainer runs the
    output with the global batch and the learning rate of every step sampled of the source."""
    need("hftrainer-4")
    need("hftrainer")
    jobs, reports = [], {}
    for dst, layout in TARGETS:
        label = f"{dst}-{layout}" if layout else dst
        source = translate(
            [str(SFT)], "hftrainer", dst, with_files=[(str(DS3), "hftrainer")], world_size=8, layout=layout
        )
        total = source.ir.get("train.steps")
        suffix = ".args" if dst == "megatron" else ".json" if dst == "deepspeed" else ".yaml"
        there = written(source, tmp_path / label / f"out{suffix}")
        for form in ("concrete", "auto"):  # values the Trainer checks against its own, or "auto" it fills
            out = tmp_path / label / form / "run.yaml"
            back = translate([str(there)], dst, "hftrainer", world_size=8, output=str(out), layout=form)
            if (
                back.ir.get("train.steps") is None
            ):  # DeepSpeed JSON has no run length: missing, given as the report says
                assert any(
                    e.status is Status.MISSING and "--set train.steps=N" in e.detail for e in back.report.entries
                )
                back = translate(
                    [str(there)],
                    dst,
                    "hftrainer",
                    world_size=8,
                    output=str(out),
                    layout=form,
                    set_values={"train.steps": total},
                )
            assert any('"auto"' in text for text in back.side_files.values()) is (form == "auto"), label
            jobs.append(
                {
                    "id": f"{label} {form}",
                    "files": [str(written(back, out))],
                    "world": 8,
                    "steps": total,
                    "lr_at": steps_of(total),
                }
            )
            reports[f"{label} {form}"] = [source.report, back.report]
    src = run(
        "hftrainer-4",
        [
            {
                "id": "s",
                "files": [str(copy_pair(SFT, DS3, tmp_path / "src"))],
                "world": 8,
                "strip": True,
                "lr_at": steps_of(1200),
            }
        ],
    )["s"]
    assert src.accepted, src.error
    for label, out in run("hftrainer", jobs).items():
        assert out.accepted, (label, out.error)
        assert out.values["global_batch"] == src.values["global_batch"] == 128, label
        worst = max(abs(out.values["lr_at"][k] - v) for k, v in src.values["lr_at"].items())
        # NeoX's AnnealingLR warms up as lr x max(1, t) / W, DeepSpeed's Warmup* schedulers a step late: the reports say so
        named = any(
            e.status is Status.LOSSY and "schedule.phases" in e.fields for r in reports[label] for e in r.entries
        )
        assert worst <= 1e-17 or named, (label, worst)
        assert worst > 0 or not label.startswith("neox")


# ---- an epoch-based run: its steps from the dataset's size, as the Trainer counts them ------------------------------
EPOCHS = [  # (samples, world, per_device_train_batch_size, gradient_accumulation_steps, num_train_epochs, drop_last)
    (52002, 8, 4, 8, 3, False),  # a partial last accumulation: 4.57 on counts it
    (100, 3, 4, 3, 1.5, False),  # a fraction of an epoch, batches not a multiple of the processes
    (100, 3, 4, 3, 2, True),  # dataloader_drop_last
    (7, 8, 2, 4, 3, False),  # fewer batches than processes: one update an epoch
]


@pytest.mark.parametrize("name", sorted(RELEASE))
def test_an_epoch_based_run_has_the_trainers_steps(name: str, tmp_path: Path) -> None:
    jobs, expected = [], {}
    for i, (samples, world, micro, accum, epochs, drop) in enumerate(EPOCHS):
        document = {
            "output_dir": "o",
            "per_device_train_batch_size": micro,
            "gradient_accumulation_steps": accum,
            "num_train_epochs": epochs,
            "dataloader_drop_last": drop,
            "learning_rate": 1e-4,
            "lr_scheduler_type": "cosine",
            "warmup_steps": 2,
        }
        path = tmp_path / f"ta{i}.json"
        path.write_text(json.dumps(document))
        ir = read_ir(
            [str(path)],
            "hftrainer",
            world_size=world,
            source_version=RELEASE[name],
            set_values={"train.epoch_samples": samples},
        ).ir
        expected[str(i)] = (ir.get("train.steps"), parse(ir.get("schedule.phases")))
        jobs.append(
            {
                "id": str(i),
                "files": [str(path)],
                "world": world,
                "samples": samples,
                "lr_at": steps_of(ir.get("train.steps")),
            }
        )
    for key, verdict in run(name, jobs).items():
        assert verdict.accepted, (key, verdict.error)
        steps, schedule = expected[key]
        assert verdict.values["epoch_steps"] == steps, (EPOCHS[int(key)], verdict.values["epoch_steps"], steps)
        wrong = {k: v for k, v in verdict.values["lr_at"].items() if not close(v, schedule.value(int(k)))}
        assert not wrong, (key, wrong)
