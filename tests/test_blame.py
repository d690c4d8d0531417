"""Issue #32: a value refused by a rule reading several keys is named at the key the user wrote
(`gradient_accumulation_steps: 0` was blamed on per_device_train_batch_size, the rule's first key)."""

from __future__ import annotations

from pathlib import Path

import pytest

from neoconv.cli import main

TRAINER = "output_dir: out\nper_device_train_batch_size: {micro}\ngradient_accumulation_steps: {accum}\n"


@pytest.mark.parametrize(
    "micro,accum,key,line,got",
    [
        (4, 0, "gradient_accumulation_steps", 3, "0"),
        (0, 2, "per_device_train_batch_size", 2, "0"),
        (4, -3, "gradient_accumulation_steps", 3, "-3"),
    ],
)
def test_the_hf_trainer_batch_names_the_key_at_fault(
    runner, tmp_path: Path, micro: int, accum: int, key: str, line: int, got: str
) -> None:
    source = tmp_path / "args.yaml"
    source.write_text(TRAINER.format(micro=micro, accum=accum))
    out = tmp_path / "ds.json"
    result = runner.invoke(main, ["hftrainer2deepspeed", str(source), "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert f"args.yaml:{line}: {key}: must be at least 1, got {got}" in result.stderr
    other = ({"per_device_train_batch_size", "gradient_accumulation_steps"} - {key}).pop()
    assert other not in result.stderr
    checked = runner.invoke(main, ["validate", str(source), "--format", "hftrainer"])
    problems = [row for row in checked.stdout.splitlines() if "must be at least 1" in row]
    assert checked.exit_code == 1 and problems == [
        f"{source}:{line}: {key}: must be at least 1, got {got} (fix the value)"
    ]


def test_a_default_partner_still_blames_the_written_key(runner, tmp_path: Path) -> None:
    """per_device_train_batch_size left to the Trainer's default 8: the refusal is still the accumulation's."""
    source = tmp_path / "args.yaml"
    source.write_text("output_dir: out\ngradient_accumulation_steps: 0\n")
    result = runner.invoke(main, ["hftrainer2deepspeed", str(source), "-o", str(tmp_path / "ds.json")])
    assert (
        result.exit_code == 2 and "args.yaml:2: gradient_accumulation_steps: must be at least 1, got 0" in result.stderr
    )


@pytest.mark.parametrize(
    "fmt,text,line",
    [
        ("neox", "train_batch_size: 32\ntrain_micro_batch_size_per_gpu: 4\ngradient_accumulation_steps: 0\n", 3),
        (
            "deepspeed",
            '{"train_batch_size": 32,\n "train_micro_batch_size_per_gpu": 4,\n "gradient_accumulation_steps": 0}',
            3,
        ),
    ],
)
def test_neox_and_deepspeed_name_the_accumulation_too(runner, tmp_path: Path, fmt: str, text: str, line: int) -> None:
    source = tmp_path / ("c.yml" if fmt == "neox" else "c.json")
    source.write_text(text)
    result = runner.invoke(main, [f"{fmt}2cerebras", str(source), "-o", str(tmp_path / "o.yaml")])
    assert (
        result.exit_code == 2
        and f"{source.name}:{line}: gradient_accumulation_steps: must be at least 1, got 0" in result.stderr
    )
