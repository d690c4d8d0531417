"""HF TrainingArguments (hftrainer): the Trainer's schedules against transformers' own lr lambdas (copied here from
optimization.py at 5.23.0 / 4.46.3, so a change of neoconv's reading shows), warmup steps per release, DeepSpeed
"auto" filled as HfTrainerDeepSpeedConfig fills it, and translations whose lr at every step and global batch are the
source's."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from neoconv import InputError, Status, translate
from neoconv.api import read_ir
from neoconv.knowledge.catalogue import catalogue
from neoconv.services.validate_file import validate_file
from neoconv.formats.hftrainer import scheduler
from neoconv.formats.hftrainer.reader import READER
from neoconv.schedule.fields import parse

INPUTS = Path(__file__).resolve().parent.parent / "fixtures" / "inputs" / "hftrainer"
SFT, DS3 = INPUTS / "sft-zero3.yaml", INPUTS / "ds-zero3-auto.json"
LINEAR, DS_DECAY = INPUTS / "trainer-linear.json", INPUTS / "ds-warmupdecay-auto.json"
AXOLOTL = INPUTS / "axolotl-lora.yaml"


# ---- transformers' lambdas (optimization.py), the k-th optimizer step (k = 0 first) gets lr * f(k) -------------
def t_linear(k: int, w: int, n: int) -> float:
    return k / max(1, w) if k < w else max(0.0, (n - k) / max(1, n - w))


def t_cosine(k: int, w: int, n: int, c: float = 0.5, r: float = 0.0) -> float:
    if k < w:
        return k / max(1, w)
    p = (k - w) / max(1, n - w)
    return max(0.0, (0.5 * (1.0 + math.cos(math.pi * c * 2.0 * p))) * (1 - r) + r)


def t_restarts(k: int, w: int, n: int, c: int = 1) -> float:
    if k < w:
        return k / max(1, w)
    p = (k - w) / max(1, n - w)
    return 0.0 if p >= 1.0 else max(0.0, 0.5 * (1.0 + math.cos(math.pi * ((c * p) % 1.0))))


def t_poly(k: int, w: int, n: int, lr: float, end: float = 1e-7, power: float = 1.0) -> float:
    if k < w:
        return k / max(1, w)
    if k > n:
        return end / lr
    return ((lr - end) * (1 - (k - w) / (n - w)) ** power + end) / lr


def t_isqrt(k: int, w: int, ts: float) -> float:
    return k / max(1, w) if k < w else 1.0 / math.sqrt((k + ts - w) / ts)


def t_cos_warm_min(k: int, w: int, n: int, r: float, c: float = 0.5) -> float:
    if k < w:
        return (k + 1.0) / max(1.0, w)
    p = (k - w + 1.0) / max(1.0, n - w)
    return max(0.0, (0.5 * (1.0 + math.cos(math.pi * c * 2.0 * p))) * (1 - r) + r)


def t_wsd(k: int, w: int, s: int, d: int, m: float, decay: str = "cosine") -> float:
    if k < w:
        return (k / max(1, w)) * (1.0 - m) + m
    if k < w + s:
        return 1.0
    if k < w + s + d:
        p = (k - w - s) / max(1, d)
        f = 1.0 - p if decay == "linear" else 0.5 * (1.0 + math.cos(math.pi * 0.5 * 2.0 * p))
        return max(0.0, f * (1.0 - m) + m)
    return m


LR = 2e-4
CASES = [
    ("linear", {}, 10, 100, lambda k: t_linear(k, 10, 100)),
    ("linear", {}, 0, 50, lambda k: t_linear(k, 0, 50)),
    ("cosine", {}, 7, 60, lambda k: t_cosine(k, 7, 60)),
    ("cosine", {"num_cycles": 1.5}, 5, 80, lambda k: t_cosine(k, 5, 80, 1.5)),
    ("cosine_with_restarts", {"num_cycles": 3}, 4, 64, lambda k: t_restarts(k, 4, 64, 3)),
    ("polynomial", {"lr_end": 1e-6, "power": 2.0}, 10, 90, lambda k: t_poly(k, 10, 90, LR, 1e-6, 2.0)),
    ("constant", {}, 10, 50, lambda k: 1.0),
    ("constant_with_warmup", {}, 12, 50, lambda k: k / 12 if k < 12 else 1.0),
    ("inverse_sqrt", {}, 20, 200, lambda k: t_isqrt(k, 20, 20)),
    ("inverse_sqrt", {"timescale": 50}, 20, 200, lambda k: t_isqrt(k, 20, 50)),
    ("cosine_with_min_lr", {"min_lr_rate": 0.1}, 10, 100, lambda k: t_cosine(k, 10, 100, 0.5, 0.1)),
    ("cosine_with_min_lr", {"min_lr": 2e-5}, 10, 100, lambda k: t_cosine(k, 10, 100, 0.5, 0.1)),
    ("cosine_warmup_with_min_lr", {"min_lr_rate": 0.05}, 10, 100, lambda k: t_cos_warm_min(k, 10, 100, 0.05)),
    ("warmup_stable_decay", {"num_decay_steps": 30, "min_lr_ratio": 0.1}, 10, 100, lambda k: t_wsd(k, 10, 60, 30, 0.1)),
    (
        "warmup_stable_decay",
        {"num_decay_steps": 30, "decay_type": "linear"},
        10,
        100,
        lambda k: t_wsd(k, 10, 60, 30, 0.0, "linear"),
    ),
]


@pytest.mark.parametrize("kind,kwargs,w,n,f", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_every_step_is_what_get_scheduler_gives(kind, kwargs, w, n, f) -> None:  # type: ignore[no-untyped-def]
    s = scheduler.read(kind, LR, w, n, kwargs, "5.23.0").schedule
    for k in range(n + 20):
        assert s.value(k) == pytest.approx(LR * f(k), rel=1e-9, abs=1e-15), (kind, k)


def test_warmup_stable_decay_before_4_51_is_linear_then_cosine_from_zero() -> None:
    s = scheduler.read(
        "warmup_stable_decay",
        LR,
        10,
        None,
        {"num_stable_steps": 40, "num_decay_steps": 30, "min_lr_ratio": 0.1},
        "4.46.3",
    ).schedule
    for k in range(100):
        expected = k / 10 if k < 10 else t_wsd(k, 10, 40, 30, 0.1)
        assert s.value(k) == pytest.approx(LR * expected, rel=1e-9, abs=1e-15)
    with pytest.raises(Exception, match="decay_type"):
        scheduler.read(
            "warmup_stable_decay",
            LR,
            10,
            None,
            {"num_stable_steps": 40, "num_decay_steps": 30, "decay_type": "linear"},
            "4.46.3",
        )


def test_schedules_a_release_lacks_or_no_closed_form_holds() -> None:
    with pytest.raises(Exception, match="not a SchedulerType of transformers 4.46"):
        scheduler.read("cosine_warmup_with_min_lr", LR, 1, 10, {"min_lr_rate": 0.1}, "4.46.3")
    with pytest.raises(Exception, match="metric"):
        scheduler.read("reduce_lr_on_plateau", LR, 0, 10, {}, "5.23.0")
    with pytest.raises(Exception, match="lr_end"):
        scheduler.read("polynomial", 1e-7, 0, 10, {}, "5.23.0")  # transformers: lr_end must be smaller than initial lr


@pytest.mark.parametrize(
    "version,steps,ratio,total,expected",
    [
        ("4.57.1", 0, 0.03, 1000, 30),
        ("4.57.1", 50, 0.03, 1000, 50),
        ("4.57.1", 0, 0.031, 999, 31),
        ("5.10.0", 50, 0.03, 1000, 30),  # 5.0-5.10: warmup_ratio is moved into warmup_steps, and wins
        ("5.23.0", 0.05, None, 1000, 50),
        ("5.23.0", 1.0, None, 1000, 1),
        ("5.23.0", 12.7, None, 1000, 12),
        ("4.57.1", 0, 0.03, None, None),  # a ratio needs the total steps
    ],
)
def test_warmup_steps_per_release(version, steps, ratio, total, expected) -> None:  # type: ignore[no-untyped-def]
    assert scheduler.warmup_steps(steps, ratio, total, version) == expected


# ---- the train file with its DeepSpeed config -------------------------------------------------------------------
def test_auto_is_filled_as_transformers_fills_it() -> None:
    result = translate([SFT], "hftrainer", "neox", with_files=[(str(DS3), "hftrainer")], world_size=8)
    ir = result.ir
    assert (ir.get("batch.micro"), ir.get("batch.grad_accum"), ir.get("batch.global")) == (2, 8, 128)
    assert (
        ir.get("parallel.zero_stage"),
        ir.get("precision.dtype"),
        ir.get("optim.grad_clip"),
        ir.get("train.steps"),
    ) == (3, "bf16", 1.0, 1200)
    s = parse(ir.get("schedule.phases"))
    w = math.ceil(1200 * 0.1)  # 4.x (the file has warmup_ratio): ceil(N x warmup_ratio)
    for k in range(0, 1300, 7):
        assert s.value(k) == pytest.approx(1e-5 * t_cosine(k, w, 1200), rel=1e-9, abs=1e-15)
    by = result.report.by_source()
    assert "transformers fills it with 2 (per_device_train_batch_size)" in by["train_micro_batch_size_per_gpu"].detail
    assert by["zero_optimization.reduce_bucket_size"].status is Status.DROPPED
    assert "hidden_size x hidden_size" in by["zero_optimization.reduce_bucket_size"].detail
    assert "LLaMA-Factory" in by["template"].detail and by["template"].status is Status.DROPPED
    assert not [e for e in result.report.entries if e.status is Status.UNKNOWN]


def test_a_stated_value_the_arguments_contradict_is_refused(tmp_path: Path) -> None:
    ds = json.loads(DS3.read_text())
    ds["gradient_accumulation_steps"] = 4  # the file says 8: transformers raises on the mismatch
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(ds))
    with pytest.raises(
        InputError, match="gradient_accumulation_steps=4 is not the TrainingArguments' gradient_accumulation_steps=8"
    ):
        translate([SFT], "hftrainer", "neox", with_files=[(str(path), "hftrainer")])


def test_the_deepspeed_scheduler_runs_instead_of_the_trainers() -> None:
    """deepspeed_optim_sched: a `scheduler` block is DeepSpeed's WarmupDecayLR, its "auto" from the arguments."""
    from neoconv.formats.deepspeed import scheduler as ds

    result = translate([LINEAR], "hftrainer", "megatron", with_files=[(str(DS_DECAY), "hftrainer")], world_size=4)
    block = {
        "type": "WarmupDecayLR",
        "params": {"warmup_min_lr": 0, "warmup_max_lr": 3e-4, "warmup_num_steps": 100, "total_num_steps": 2000},
    }
    expected = ds.read(block, 3e-4, ds.LATEST).schedule
    got = parse(result.ir.get("schedule.phases"))
    assert all(got.value(k) == pytest.approx(expected.value(k), abs=1e-15) for k in range(0, 2100, 3))
    assert result.ir.get("batch.global") == 16 * 2 * 4 and result.ir.get("optim.betas") == [0.9, 0.95]


def test_a_deepspeed_path_is_never_opened_unless_named() -> None:
    result = translate([SFT], "hftrainer", "megatron", world_size=8)
    entry = result.report.by_source()["deepspeed"]
    assert "--with ds-zero3-auto.json" in entry.detail and result.ir.get("parallel.zero_stage") is None


def test_arguments_of_deepspeed_keys_alone_are_arguments_when_they_name_a_deepspeed_config(tmp_path: Path) -> None:
    """`bf16` is a key of both; `deepspeed` only of TrainingArguments (what deepspeed2hftrainer writes from a
    config of "auto" values holds just these two)."""
    args, ds = tmp_path / "args.yaml", tmp_path / "ds.json"
    args.write_text("bf16: true\ndeepspeed: ds.json\n")
    ds.write_text('{"zero_optimization": {"stage": 2}, "train_micro_batch_size_per_gpu": "auto"}')
    result = translate([args, ds], "hftrainer", "deepspeed", world_size=8)
    assert result.ir.get("parallel.zero_stage") == 2 and result.ir.get("precision.dtype") == "bf16"
    alone = translate([args], "hftrainer", "neox", world_size=8)
    assert "--with ds.json" in alone.report.by_source()["deepspeed"].detail


def test_only_epochs_leave_the_steps_missing(tmp_path: Path) -> None:
    path = tmp_path / "ta.yaml"
    path.write_text(
        "per_device_train_batch_size: 4\nlearning_rate: 1.0e-4\nnum_train_epochs: 2\nwarmup_ratio: 0.05\noutput_dir: o\n"
    )
    result = translate([path], "hftrainer", "neox")
    assert result.ir.get("train.epochs") == 2 and result.ir.get("schedule.phases") is None
    detail = result.report.by_source()["learning_rate"].detail
    assert "--set train.steps=N" in detail and "--set train.epoch_samples=S" in detail
    given = translate([path], "hftrainer", "neox", set_values={"train.steps": 400})
    s = parse(given.ir.get("schedule.phases"))
    assert [s.value(k) for k in (0, 10, 20, 400)] == pytest.approx([0.0, 5e-5, 1e-4, 0.0])


# what each --set a `missing` entry prints gives (the placeholder it spells -> a value)
GIVEN = {
    "train.epoch_samples": 52002,
    "train.steps": 600,
    "batch.global": 256,
    "batch.micro": 4,
    "batch.grad_accum": 8,
    "optim.grad_clip": 1.0,
    "precision.dtype": "bf16",
}


def given_in(detail: str) -> list[tuple[dict[str, object], int | None]]:
    """Every alternative a hint offers ("A with --world-size N, or B"): the --set values and the world size each gives."""
    out = []
    for part in re.split(r", or |; or ", detail):
        sets = {name: GIVEN[name] for name in re.findall(r"--set ([\w.]+)=\S+", part)}
        if sets:
            out.append((sets, 8 if "--world-size" in part else None))
    return out


@pytest.mark.parametrize("dst", ["neox", "megatron", "cerebras", "veomni"])
def test_an_epoch_based_run_says_how_to_give_its_steps_and_each_way_clears_the_mark(dst: str, tmp_path: Path) -> None:
    path = tmp_path / "ta.yaml"
    path.write_text(
        "output_dir: o\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 8\nlearning_rate: 2.0e-5\n"
        "num_train_epochs: 3\nlr_scheduler_type: cosine\nwarmup_ratio: 0.1\n"
    )
    result = translate([path], "hftrainer", dst, world_size=None)
    (entry,) = [e for e in result.report.entries if e.status is Status.MISSING and "train.steps" in e.fields]
    assert "num_train_epochs 3" in entry.detail
    ways = given_in(entry.detail)
    assert [sorted(sets) for sets, _ in ways] == [["train.epoch_samples"], ["train.steps"]] and ways[0][1] == 8
    for sets, world in ways:
        if (
            dst == "veomni"
        ):  # VeOmni's data.train_size counts the tokens of train.steps global batches: the world size too
            world = 8
        done = translate([path], "hftrainer", dst, world_size=world, set_values=sets)
        assert not [e for e in done.report.entries if e.status is Status.MISSING and "train.steps" in e.fields]
        # 52002 samples in batches of 4: 13001 batches, 1626 on each of 8 GPUs, 204 updates of 8 (5.x) x 3 epochs
        assert done.ir.get("train.steps") == (612 if "train.epoch_samples" in sets else 600)
        warmup = math.ceil(done.ir.get("train.steps") * 0.1)  # the peak after ceil(steps x warmup_ratio) steps
        assert parse(done.ir.get("schedule.phases")).value(warmup) == pytest.approx(2e-5)


@pytest.mark.parametrize(
    "version,samples,world,drop,expected",
    [
        ("5.23.0", 52002, 8, False, 612),  # a partial last accumulation is an update (4.57 on)
        ("4.51.3", 52002, 8, False, 609),  # ... not before: 1626 // 8 = 203 updates an epoch
        ("5.23.0", 100, 3, True, 6),  # dataloader_drop_last: 25 batches, 8 on each of 3 GPUs, 3 updates x 2 epochs
        ("5.23.0", 7, 8, False, 2),  # fewer batches than GPUs: one update an epoch
    ],
)
def test_the_steps_of_an_epoch_are_the_trainers(
    version: str, samples: int, world: int, drop: bool, expected: int
) -> None:
    accum = 8 if samples > 1000 else 3
    tree = {
        "output_dir": "o",
        "per_device_train_batch_size": 4,
        "gradient_accumulation_steps": accum,
        "num_train_epochs": 3 if samples > 1000 else 2,
        "dataloader_drop_last": drop,
    }
    ir = read_ir(
        tree, "hftrainer", world_size=world, source_version=version, set_values={"train.epoch_samples": samples}
    ).ir
    assert ir.get("train.steps") == expected
    tree["max_steps"] = 50  # max_steps above 0 is the run's length whatever the dataset
    assert (
        read_ir(tree, "hftrainer", world_size=world, set_values={"train.epoch_samples": samples}).ir.get("train.steps")
        == 50
    )


def test_every_set_a_missing_entry_prints_is_one_neoconv_takes() -> None:
    fields = catalogue()
    for dst in ("neox", "megatron", "cerebras", "veomni", "deepspeed"):
        for source in ([str(SFT)], [str(AXOLOTL)]):
            for e in translate(source, "hftrainer", dst).report.entries:
                if e.status is Status.MISSING:
                    for name in re.findall(r"--set ([\w.:-]+)=", e.detail):
                        assert name in fields or name.startswith(f"{dst}:"), (dst, e.target_key, name)


def test_axolotl_keys_are_read_as_the_arguments_they_are() -> None:
    result = translate([AXOLOTL], "hftrainer", "neox", world_size=2)
    assert (result.ir.get("batch.micro"), result.ir.get("batch.global"), result.ir.get("optim.type")) == (
        2,
        16,
        "adamw",
    )
    by = result.report.by_source()
    assert by["lora_r"].status is Status.DROPPED and "LoRA" in by["lora_r"].detail
    assert by["bf16"].status is Status.MISSING and "GPU supports it" in by["bf16"].detail
    assert "8-bit" in by["optimizer"].detail or by["optimizer"].status is Status.LOSSY
    assert not [e for e in result.report.entries if e.status is Status.UNKNOWN]


# ---- to the other frameworks and back: the lr at every step and the global batch ------------------------------------
TARGETS = [("neox", None), ("megatron", None), ("veomni", None), ("cerebras", "legacy"), ("cerebras", "trainer")]


@pytest.mark.parametrize("dst,layout", TARGETS)
def test_translations_keep_every_steps_lr_and_the_global_batch(dst: str, layout: str | None, tmp_path: Path) -> None:
    source = translate([SFT], "hftrainer", dst, with_files=[(str(DS3), "hftrainer")], world_size=8, layout=layout)
    src = parse(source.ir.get("schedule.phases"))
    out = tmp_path / ("out.args" if dst == "megatron" else "out.yaml")
    out.write_text(source.dump())
    for name, text in source.side_files.items():
        (tmp_path / Path(name).name).write_text(text)
    back = translate([out], dst, "hftrainer", world_size=8)
    assert back.ir.get("batch.global") == source.ir.get("batch.global") == 128
    got = parse(back.ir.get("schedule.phases"))
    worst = max(abs(got.value(k) - src.value(k)) for k in range(1201))
    if dst == "neox":  # AnnealingLR warms up as lr x max(1, t) / W: its first step is not 0, and the report says so
        assert worst > 0 and any(e.status is Status.LOSSY and "schedule" in e.detail for e in source.report.entries)
    else:
        assert worst <= 1e-17, (dst, worst)
    again = parse(translate([out], dst, "hftrainer", world_size=8).ir.get("schedule.phases"))
    assert again.to_json() == got.to_json()


def test_written_pair_runs_as_the_source_ran(tmp_path: Path) -> None:
    """Into the HF Trainer: a train file and a DeepSpeed config beside it, concrete values the Trainer checks."""
    megatron = translate([SFT], "hftrainer", "megatron", with_files=[(str(DS3), "hftrainer")], world_size=8)
    args = tmp_path / "run.args"
    args.write_text(megatron.dump())
    result = translate([args], "megatron", "hftrainer", world_size=8, output=str(tmp_path / "run.yaml"))
    ds = json.loads(result.side_files["run.ds_config.json"])
    assert (ds["train_batch_size"], ds["train_micro_batch_size_per_gpu"], ds["gradient_accumulation_steps"]) == (
        128,
        2,
        8,
    )
    assert ds["bf16"] == {"enabled": True} and ds["gradient_clipping"] == 1.0
    assert "auto" not in json.dumps(ds) and "deepspeed: run.ds_config.json" in result.dump()
    back = parse(result.ir.get("schedule.phases"))
    source = parse(megatron.ir.get("schedule.phases"))
    assert max(abs(back.value(k) - source.value(k)) for k in range(1201)) < 1e-18  # the run's 1200 steps
    assert result.config["lr_scheduler_type"] == "cosine" and result.config["warmup_steps"] == 120


# ---- what the Trainer takes as the run's length and batch ---------------------------------------------------------
def test_max_steps_is_the_runs_length_and_epochs_beside_it_are_not_written(tmp_path: Path) -> None:
    path = tmp_path / "ta.yaml"
    path.write_text("output_dir: o\nper_device_train_batch_size: 2\nmax_steps: 100\nnum_train_epochs: 3.0\n")
    read = translate([path], "hftrainer", "neox", world_size=2)
    assert (read.ir.get("train.steps"), read.ir.get("train.epochs")) == (100, None)  # trainer.py: max_steps > 0 wins
    assert "max_steps > 0 is the run's length" in read.report.by_source()["num_train_epochs"].detail
    veomni = INPUTS.parent / "veomni" / "tinyllama-flat.yaml"  # VeOmni states both: its steps count every epoch
    back = translate([veomni], "veomni", "hftrainer")
    assert back.config["max_steps"] == 47684 and "num_train_epochs" not in back.config
    entry = back.report.by_source()["train.num_train_epochs"]
    assert entry.status is Status.DROPPED and "only applies when train.steps=None" in entry.detail
    epochs = tmp_path / "e.yaml"
    epochs.write_text("output_dir: o\nper_device_train_batch_size: 2\nnum_train_epochs: 2\n")
    assert translate([epochs], "hftrainer", "hftrainer").config["num_train_epochs"] == 2


@pytest.mark.parametrize(
    "snippet,expected,missing",
    [
        # the world size decides the accumulation: without it, only a global batch equal to the micro batch says it (1)
        (
            {"train_batch_size": 32, "train_micro_batch_size_per_gpu": 32},
            {"per_device_train_batch_size": 32, "gradient_accumulation_steps": 1},
            None,
        ),
        (
            {"train_batch_size": 256, "train_micro_batch_size_per_gpu": 8},
            {"per_device_train_batch_size": 8},
            "gradient_accumulation_steps",
        ),
        (
            {"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8},
            {"per_device_train_batch_size": 4, "gradient_accumulation_steps": 8},
            None,
        ),
        ({"zero_optimization": {"stage": 1}}, {}, "per_device_train_batch_size"),  # the Trainer would run 8 per GPU
    ],
)
def test_a_batch_without_the_world_size(snippet: dict, expected: dict, missing: str | None) -> None:  # type: ignore[type-arg]
    result = translate(snippet, "deepspeed", "hftrainer")
    assert {k: result.config.get(k) for k in expected} == expected
    gaps = [e for e in result.report.entries if e.status is Status.MISSING and "batch.micro" in e.fields]
    assert [e.target_key for e in gaps] == ([missing] if missing else [])
    if missing == "gradient_accumulation_steps":
        assert (
            "gradient_accumulation_steps" not in result.config and result.config["deepspeed"]["train_batch_size"] == 256
        )
        assert "give --world-size N" in gaps[0].detail
        at8 = translate(snippet, "deepspeed", "hftrainer", world_size=8).config
        assert (at8["per_device_train_batch_size"], at8["gradient_accumulation_steps"]) == (8, 4)


# ---- another transformers release (hftrainer2hftrainer --to-version) ---------------------------------------------
def test_a_file_goes_to_another_release_with_the_fields_it_has(tmp_path: Path) -> None:
    path = tmp_path / "ta.yaml"
    path.write_text(
        "output_dir: o\noverwrite_output_dir: true\nper_device_train_batch_size: 2\nmax_steps: 100\n"
        "learning_rate: 1.0e-4\nlogging_dir: runs/x\nevaluation_strategy: steps\nwarmup_ratio: 0.1\n"
    )  # a 4.4x file
    source = translate([path], "hftrainer", "neox", world_size=1)
    assert parse(source.ir.get("schedule.phases")).value(5) == pytest.approx(1e-4 * 5 / 10)
    new = translate([path], "hftrainer", "hftrainer")  # the newest release, 5.23.0
    assert new.report.target["version"] == "5.23.0"
    assert new.config["warmup_steps"] == 0.1 and "warmup_ratio" not in new.config  # 5.x: below 1 is a ratio
    assert "overwrite_output_dir" not in new.config and "logging_dir" not in new.config
    assert new.config["eval_strategy"] == "steps" and "evaluation_strategy" not in new.config
    by = new.report.by_source()
    assert by["warmup_ratio"].status is Status.CONVERTED and by["warmup_ratio"].target_key == "warmup_steps"
    for gone in ("overwrite_output_dir", "logging_dir"):
        assert (
            by[gone].status is Status.DROPPED
            and "transformers 5.23.0 has no TrainingArguments field" in by[gone].detail
        )
    assert new.report.target["added_by_verification"] == 0
    again = tmp_path / "new.yaml"
    again.write_text(new.dump())
    assert (
        parse(translate([again], "hftrainer", "neox", world_size=1).ir.get("schedule.phases")).to_json()
        == parse(source.ir.get("schedule.phases")).to_json()
    )
    old = translate([again], "hftrainer", "hftrainer", target_version="4.57.1")  # back to a 4.x: warmup_ratio
    assert old.config["warmup_ratio"] == 0.1 and "warmup_steps" not in old.config
    assert old.report.by_source()["warmup_steps"].status is Status.CONVERTED


def test_an_older_release_gets_its_own_spelling_and_a_schedule_it_has(tmp_path: Path) -> None:
    path = (
        tmp_path / "ta.yaml"
    )  # a 5.x file: eval_strategy, warmup_steps below 1 (a ratio), cosine_with_min_lr (4.38 on)
    path.write_text(
        "output_dir: o\nper_device_train_batch_size: 2\nmax_steps: 100\nlearning_rate: 1.0e-4\n"
        "eval_strategy: steps\nwarmup_steps: 0.1\nlr_scheduler_type: cosine_with_min_lr\n"
        "lr_scheduler_kwargs: {min_lr_rate: 0.1}\n"
    )
    source = parse(translate([path], "hftrainer", "neox", world_size=1).ir.get("schedule.phases"))
    old = translate([path], "hftrainer", "hftrainer", target_version="4.36.2", output=str(tmp_path / "old.yaml"))
    assert old.config["evaluation_strategy"] == "steps" and "eval_strategy" not in old.config  # 4.41 renamed it
    assert old.config["lr_scheduler_type"] not in (
        "cosine_with_min_lr",
        "cosine_warmup_with_min_lr",
        "warmup_stable_decay",
    )
    assert old.config["warmup_steps"] == 10 and "warmup_ratio" not in old.config
    by = old.report.by_source()
    assert (
        by["lr_scheduler_type"].status is Status.LOSSY
        and "transformers 4.36.2 cannot run" in by["lr_scheduler_type"].detail
    )
    assert by["lr_scheduler_kwargs.min_lr_rate"].status is Status.LOSSY
    assert "# HF TrainingArguments for transformers 4.36.2 written by neoconv" in old.dump()
    (tmp_path / "old.yaml").write_text(old.dump())
    back = parse(
        translate([tmp_path / "old.yaml"], "hftrainer", "neox", world_size=1, source_version="4.36.2").ir.get(
            "schedule.phases"
        )
    )
    worst = max(abs(back.value(k) - source.value(k)) for k in range(101))
    assert 0 < worst < 1e-5 and f"{worst:.4g}" in by["lr_scheduler_type"].detail  # the closest, its difference named
    newer = translate([path], "hftrainer", "hftrainer", target_version="4.46.3")  # 4.46 has it: kept, the ratio moved
    assert newer.config["lr_scheduler_type"] == "cosine_with_min_lr" and newer.config["warmup_ratio"] == 0.1


def test_validate_judges_a_file_at_its_own_release_or_the_one_named(tmp_path: Path) -> None:
    old = tmp_path / "old.yaml"  # a 4.4x file: fields 5.x no longer has
    old.write_text(
        "output_dir: o\nmax_steps: 100\nevaluation_strategy: steps\noverwrite_output_dir: true\nwarmup_ratio: 0.1\n"
    )
    own = validate_file(str(old), "hftrainer")
    assert own.valid and own.release == "4.46.3"  # the newest release whose TrainingArguments has them all
    newest = validate_file(str(old), "hftrainer", version="5.23.0")
    assert {p.key for p in newest.problems} == {"evaluation_strategy", "overwrite_output_dir", "warmup_ratio"}
    mixed = tmp_path / "mixed.yaml"  # evaluation_strategy (until 4.46) beside use_cache (5.0 on): no release runs it
    mixed.write_text("output_dir: o\nmax_steps: 10\nevaluation_strategy: steps\nuse_cache: false\n")
    assert [p.key for p in validate_file(str(mixed), "hftrainer").problems] == ["evaluation_strategy"]
    kind = tmp_path / "kind.yaml"  # a value the named release refuses: cosine_with_min_lr is 4.38 on
    kind.write_text(
        "output_dir: o\nmax_steps: 100\nlr_scheduler_type: cosine_with_min_lr\nlr_scheduler_kwargs: {min_lr_rate: 0.1}\n"
    )
    assert validate_file(str(kind), "hftrainer", version="4.46.3").valid
    refused = validate_file(str(kind), "hftrainer", version="4.36.2").problems
    assert refused and "not a SchedulerType of transformers 4.36.2" in refused[0].message
    written = translate([kind], "hftrainer", "hftrainer", target_version="4.36.2")  # what --to-version 4.36.2 writes
    out = tmp_path / "written.yaml"
    out.write_text(written.dump())
    assert validate_file(str(out), "hftrainer", version="4.36.2").valid


def test_a_tensorboard_directory_is_written_only_to_releases_that_read_it(pythia160m: Path) -> None:
    kept = translate(
        pythia160m,
        "neox",
        "hftrainer",
        world_size=8,
        target_version="5.10.0",
        set_values={"logging.tensorboard_dir": "tb"},
    )
    assert kept.config["logging_dir"] == "tb"
    newest = translate(pythia160m, "neox", "hftrainer", world_size=8, set_values={"logging.tensorboard_dir": "tb"})
    assert "logging_dir" not in newest.config  # 5.11+: TENSORBOARD_LOGGING_DIR from the environment
    entry = next(e for e in newest.report.entries if "logging.tensorboard_dir" in e.fields)
    assert entry.status is Status.DROPPED


# ---- --layout auto: "auto" wherever transformers fills the value ----------------------------------------------------
def test_layout_auto_writes_what_transformers_fills_as_auto(tmp_path: Path) -> None:
    megatron = INPUTS.parent / "megatron" / "llama3-8b.args"
    concrete = translate([str(megatron)], "megatron", "hftrainer", world_size=8, output=str(tmp_path / "c.yaml"))
    auto = translate(
        [str(megatron)], "megatron", "hftrainer", world_size=8, layout="auto", output=str(tmp_path / "a.yaml")
    )
    plain, filled = json.loads(concrete.side_files["c.ds_config.json"]), json.loads(auto.side_files["a.ds_config.json"])
    assert (
        plain["train_batch_size"],
        plain["train_micro_batch_size_per_gpu"],
        plain["gradient_accumulation_steps"],
    ) == (128, 1, 16)
    assert {
        k: filled[k]
        for k in (
            "train_batch_size",
            "train_micro_batch_size_per_gpu",
            "gradient_accumulation_steps",
            "gradient_clipping",
        )
    } == dict.fromkeys(
        ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "gradient_clipping"),
        "auto",
    )
    assert filled["bf16"] == {"enabled": "auto"} and filled["zero_optimization"] == plain["zero_optimization"]
    assert auto.report.target["layout"] == "auto" and auto.report.target["added_by_verification"] == 0
    for result, name in ((concrete, "c"), (auto, "a")):
        (tmp_path / f"{name}.yaml").write_text(result.dump())
        (tmp_path / f"{name}.ds_config.json").write_text(result.side_files[f"{name}.ds_config.json"])
    back = [
        translate(
            [str(tmp_path / f"{n}.yaml"), str(tmp_path / f"{n}.ds_config.json")], "hftrainer", "neox", world_size=8
        )
        for n in ("c", "a")
    ]
    assert back[0].ir.plain() == back[1].ir.plain()
    assert back[1].report.source["layout"] == "auto" and back[0].report.source["layout"] == "concrete"
    again = translate(
        [str(tmp_path / "a.yaml"), str(tmp_path / "a.ds_config.json")],
        "hftrainer",
        "hftrainer",
        output=str(tmp_path / "d.yaml"),
    )  # the default layout: concrete
    assert json.loads(again.side_files["d.ds_config.json"])["train_micro_batch_size_per_gpu"] == 1


def test_the_deepspeed_schedulers_run_length_is_concrete_or_auto_as_asked(tmp_path: Path) -> None:
    """trainer_config_finalize fills the scheduler's total_num_steps and warmup_num_steps from the run's length."""
    concrete = translate(
        [str(LINEAR), str(DS_DECAY)], "hftrainer", "hftrainer", world_size=4, output=str(tmp_path / "c.yaml")
    )
    params = json.loads(concrete.side_files["c.ds_config.json"])["scheduler"]["params"]
    assert params == {"warmup_min_lr": 0, "warmup_max_lr": 3e-4, "warmup_num_steps": 100, "total_num_steps": 2000}
    assert concrete.report.by_source()["scheduler.params.total_num_steps"].status is Status.CONVERTED
    for name, text in {"c.yaml": concrete.dump(), **concrete.side_files}.items():
        (tmp_path / name).write_text(text)
    auto = translate(
        [str(tmp_path / "c.yaml"), str(tmp_path / "c.ds_config.json")],
        "hftrainer",
        "hftrainer",
        layout="auto",
        output=str(tmp_path / "a.yaml"),
    )
    assert json.loads(auto.side_files["a.ds_config.json"])["scheduler"]["params"] == dict.fromkeys(params, "auto")
    longer = dict(params, total_num_steps=2500)  # a value transformers would not fill stays as it is (and is refused)
    (tmp_path / "c.ds_config.json").write_text(json.dumps({"scheduler": {"type": "WarmupDecayLR", "params": longer}}))
    with pytest.raises(InputError, match="total_num_steps"):
        translate([str(tmp_path / "c.yaml"), str(tmp_path / "c.ds_config.json")], "hftrainer", "neox")


# ---- constructs of real train files (TRL / open-r1 recipes, axolotl model cards) ------------------------------------
def test_a_grpo_recipe_reads_with_every_key_named(tmp_path: Path) -> None:
    path = tmp_path / "grpo.yaml"
    path.write_text(
        "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\ntorch_dtype: bfloat16\ndataset_name: some/dataset\n"
        "do_eval: false\nbf16: true\nnum_generations: 7\nmax_prompt_length: 512\nuse_vllm: true\n"
        "vllm_gpu_memory_utilization: 0.7\nreward_funcs: [accuracy, format]\nbenchmarks: []\n"
        "hub_model_revision: v00.00\nlearning_rate: 3.0e-06\nlr_scheduler_type: cosine\nwarmup_ratio: 0.1\n"
        "num_train_epochs: 0.1\nper_device_train_batch_size: 16\ngradient_accumulation_steps: 4\n"
        "save_steps: 0.1\nlogging_steps: 5\ndo_eval: true\noutput_dir: data/out\n"
    )
    result = translate([path], "hftrainer", "megatron", world_size=8)
    by = result.report.by_source()
    assert not [e.source_key for e in result.report.entries if e.status is Status.UNKNOWN]
    assert (
        "TRL" in by["num_generations"].detail
        and "TRL" in by["dataset_name"].detail
        and "ModelConfig" in by["torch_dtype"].detail
    )
    assert "open-r1" in by["hub_model_revision"].detail and "TRL" in by["reward_funcs"].detail
    assert "a fraction of an epoch" in by["num_train_epochs"].detail and by["num_train_epochs"].status is Status.DROPPED
    assert "a ratio of the run's steps" in by["save_steps"].detail  # 0.1 of steps neoconv does not know
    assert "given twice (lines 4 and 21)" in by["do_eval"].detail and result.ir.get("train.log_interval") == 5
    with_steps = translate([path], "hftrainer", "megatron", world_size=8, set_values={"train.steps": 450})
    assert with_steps.ir.get("checkpoint.interval") == 45 and with_steps.config["--save-interval"] == 45


def test_axolotl_remapped_keys_are_its_own() -> None:
    result = translate(
        {
            "base_model": "m",
            "model_type": "LlamaForCausalLM",
            "micro_batch_size": 2,
            "num_epochs": 1,
            "learning_rate": 1e-4,
            "sequence_len": 1024,
        },
        "hftrainer",
        "neox",
    )
    entry = result.report.by_source()["model_type"]
    assert entry.status is Status.DROPPED and "axolotl" in entry.detail


def test_an_amp_block_is_filled_as_4x_fills_it(tmp_path: Path) -> None:
    ds = tmp_path / "ds.json"
    ds.write_text(
        json.dumps({"train_micro_batch_size_per_gpu": "auto", "amp": {"enabled": "auto", "opt_level": "auto"}})
    )
    ta = tmp_path / "ta.json"
    ta.write_text(json.dumps({"output_dir": "o", "per_device_train_batch_size": 4, "fp16": True, "max_steps": 10}))
    result = translate([str(ta), str(ds)], "hftrainer", "neox", world_size=2)
    by = result.report.by_source()
    assert "transformers fills it with False" in by["amp.enabled"].detail  # fp16_backend is not apex
    assert "transformers fills it with 'O1'" in by["amp.opt_level"].detail
    assert not [
        e for e in result.report.entries if e.status is Status.MISSING and (e.source_key or "").startswith("amp")
    ]


MARK = re.compile(r"^\s*# MISSING: (\S+) — give (.+)$", re.M)


@pytest.mark.parametrize(
    "source,src,dst",
    [
        (DS_DECAY, "deepspeed", "hftrainer"),  # the micro batch, the run's length
        (None, "hftrainer", "neox"),  # epochs: the dataset's size with the world size
    ],
)
def test_each_missing_mark_of_the_output_says_what_clears_it(
    source: Path | None, src: str, dst: str, tmp_path: Path
) -> None:
    if source is None:
        source = tmp_path / "ta.yaml"
        source.write_text(
            "output_dir: o\nper_device_train_batch_size: 4\ngradient_accumulation_steps: 8\nnum_train_epochs: 3\n"
        )
    marks = dict(MARK.findall(translate([str(source)], src, dst).dump()))
    assert {"per_device_train_batch_size", "max_steps"} <= set(marks) if dst == "hftrainer" else "train_iters" in marks
    for key, give in marks.items():
        if key not in ("per_device_train_batch_size", "max_steps", "train_iters"):
            continue  # the model's architecture: a NeoX config needs it whatever the source
        sets = {name: GIVEN[name] for name in re.findall(r"--set ([\w.]+)=\S+", give)}
        assert sets and "VALUE" not in give.split("=")[0], give  # a --set of a field neoconv takes, as typed
        done = translate([str(source)], src, dst, set_values=sets, world_size=8 if "--world-size" in give else None)
        assert key not in dict(MARK.findall(done.dump())), (key, give)
        assert not [e for e in done.report.entries if e.status is Status.MISSING and key in (e.target_key or "")]


# ---- DeepSpeed "auto" without its TrainingArguments: the launcher's values, each given as the report says ------------
def test_an_auto_config_alone_says_the_set_of_each_value_and_each_clears_its_mark() -> None:
    result = translate([str(DS3)], "deepspeed", "neox")
    held = [e for e in result.report.entries if e.status is Status.MISSING and e.source_key]
    assert {e.source_key for e in held} >= {"train_batch_size", "gradient_clipping", "bf16.enabled"}
    sets: dict[str, object] = {}
    for entry in held:
        ways = given_in(entry.detail)
        assert ways, entry.detail  # every one says the --set that gives it
        sets.update(ways[0][0])
    assert {"batch.micro", "batch.grad_accum", "optim.grad_clip", "precision.dtype"} <= set(sets)
    given = translate([str(DS3)], "deepspeed", "neox", world_size=8, set_values=sets)
    still = [e.source_key for e in given.report.entries if e.status is Status.MISSING and e.source_key]
    assert not still, still
    by = given.report.by_source()
    assert (
        by["train_micro_batch_size_per_gpu"].status is Status.CONVERTED
        and "--set batch.micro" in by["train_micro_batch_size_per_gpu"].detail
    )
    assert (given.config["train_micro_batch_size_per_gpu"], given.config["gradient_accumulation_steps"]) == (4, 8)
    assert given.config["bf16"]["enabled"] is True
