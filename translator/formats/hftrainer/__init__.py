"""Hugging Face TrainingArguments train files (YAML or JSON: HfArgumentParser, LLaMA-Factory, TRL, axolotl), read
with the DeepSpeed config they run with (reader.py; "auto" filled as transformers fills it: auto.py) and written
with it as a side file (writer.py); the Trainer's schedules in scheduler.py, its formulas in formulas.py."""

from __future__ import annotations

from ..spec import FormatSpec

FORMAT = FormatSpec(
    name="hftrainer",
    title="HF TrainingArguments",
    reader=f"{__name__}.reader",
    writer=f"{__name__}.writer",
    suffix=".yaml",
    globs=("*.yaml", "*.yml"),
    # the DeepSpeed config written beside: concrete values (checked by the Trainer against its own), or `--layout auto`:
    # "auto" wherever transformers fills the value from the arguments (LLaMA-Factory's and axolotl's shipped configs)
    layouts=("concrete", "auto"),
    default_layout="concrete",
    one_release=True,  # HfArgumentParser takes the TrainingArguments fields of the release installed
    side_file_key="deepspeed",  # `deepspeed: out.ds_config.json`: diff, validate and prove read it with the file
)
