"""A value a train-file tool takes where TrainingArguments' type has none (mappings/hftrainer-dialects.yaml
`values:`): axolotl's gradient_checkpointing: offload / offload_disk (its schema: Literal["offload",
"offload_disk"] | bool; validation.py turns them into gradient checkpointing on plus its own activation offloading)
reads as checkpointing on, the offloading named lossy, never a refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from neoconv import InputError, Status, translate
from neoconv.services.validate_file import validate_file

AXOLOTL = (
    "base_model: meta-llama/Llama-3.2-1B\nsequence_len: 2048\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\n"
    "max_steps: 100\nlearning_rate: 0.0002\noutput_dir: ./out\n"
)


@pytest.mark.parametrize("value,where", [("offload", "CPU memory"), ("offload_disk", "disk")])
def test_axolotl_offload_reads_as_checkpointing_on_and_names_the_offload(
    tmp_path: Path, value: str, where: str
) -> None:
    path = tmp_path / "axolotl.yaml"
    path.write_text(AXOLOTL + f"gradient_checkpointing: {value}\n")
    result = translate([path], "hftrainer", "neox", world_size=8)
    assert result.ir.get("train.activation_checkpointing") is True
    entry = result.report.by_source()["gradient_checkpointing"]
    assert entry.status is Status.LOSSY and where in entry.detail and "activation_offloading" in entry.detail
    assert "checkpoint_activations: true" in result.dump()
    assert validate_file(str(path), "hftrainer").problems == []


def test_axolotl_plain_boolean_is_exact(tmp_path: Path) -> None:
    path = tmp_path / "axolotl.yaml"
    path.write_text(AXOLOTL + "gradient_checkpointing: true\n")
    entry = translate([path], "hftrainer", "neox", world_size=8).report.by_source()["gradient_checkpointing"]
    assert entry.status is Status.EXACT


def test_offload_in_plain_training_arguments_is_still_refused(tmp_path: Path) -> None:
    """HfArgumentParser reads gradient_checkpointing as a bool: 'offload' is no value there."""
    path = tmp_path / "args.yaml"
    path.write_text(
        "output_dir: ./out\nper_device_train_batch_size: 2\nmax_steps: 10\ngradient_checkpointing: offload\n"
    )
    with pytest.raises(InputError) as caught:
        translate([path], "hftrainer", "neox", world_size=8)
    assert caught.value.line == 4
