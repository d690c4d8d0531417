"""The extraction tools (tools/extract_*_facts.py) on small documents and sources written here: what
a row of each kind becomes in a facts file. (Re-extracting the real reference docs and mirrors is the
`upstream` tier; the generators' output from the committed facts is tests/test_generated_files.py.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT

sys.path.append(str(ROOT / "tools"))  # the tools import each other by name

import extract_cerebras_facts  # noqa: E402
import extract_neox_facts  # noqa: E402
import extract_veomni_facts  # noqa: E402

NEOX_ARGS = """Arguments for gpt-neox.


## NeoXArgsLRScheduler

LR Scheduler Arguments



- **lr_decay_style**: typing.Literal['constant', 'linear', 'cosine']

    Default = linear

    Learning rate decay function.



- **lr_decay_iters**: int

    Default = None

    Number of iterations to decay learning rate over.



## NeoXArgsOther

"""
# prompt_end's default is a newline: "Default = " then the blank line (spelled out: no trailing space to lose)
NEOX_ARGS += "- **prompt_end**: str\n\n    Default = \n\n\n    a single prompt's end.\n\n"

NEOX_README = """# Configuration

| Origin | Parameter name | Default value | Description |
|--------|----------------|---------------|-------------|
| DSL    | hostfile       | /job/hostfile | Hostfile path |
| DSL    | include        |               | Hardware to use |
| Meg    | weight-decay   | 0.01          | Weight decay |
"""


def test_neox_rows_keep_name_type_default_text_and_section(tmp_path: Path) -> None:
    (tmp_path / "gpt-neox-arguments.md").write_text(NEOX_ARGS, encoding="utf-8")
    (tmp_path / "gpt-neox-configs-readme.md").write_text(NEOX_README, encoding="utf-8")
    facts = {name: json.loads(text) for name, text in extract_neox_facts.facts(tmp_path).items()}
    assert facts["neox-arguments.json"]["args"] == [
        {
            "name": "lr_decay_style",
            "type": "typing.Literal['constant', 'linear', 'cosine']",
            "default": "linear",
            "group": "NeoXArgsLRScheduler",
        },
        {"name": "lr_decay_iters", "type": "int", "default": "None", "group": "NeoXArgsLRScheduler"},
        {"name": "prompt_end", "type": "str", "default": "\n", "group": "NeoXArgsOther"},  # a newline: kept as written
    ]
    assert facts["neox-configs-readme.json"]["rows"] == [
        {"origin": "DSL", "name": "hostfile", "default": "/job/hostfile"},
        {"origin": "DSL", "name": "include"},  # blank cell: no default stated
        {"origin": "Meg", "name": "weight_decay", "default": "0.01"},
    ]
    source = facts["neox-arguments.json"]["source"]
    assert source["document"] == "gpt-neox-arguments.md" and len(source["sha256"]) == 64
    assert "Learning rate decay function" not in json.dumps(facts)  # no description prose


CEREBRAS_R1 = """# YAML params

## Model params

| Parameter Name | Description | Supported Models |
| --- | --- | --- |
| hidden_size | The size of the transformer hidden layers (`int`, optional) Default: `768` | All |
| position_embedding_type | The type of position embedding. Accepted values: `"learned"`, `"rotary"`, `None`. (`str`, optional) Default: `"learned"` | GPT-2, GPT-3 |
| attention_dropout_rate | Dropout on attention (`float`, optional) Default: same as dropout | All |

## Runconfig params

| Key | Description | Supported mode |
| --- | --- | --- |
| max_steps | Steps to train (`int`, required) | All |
"""


def _rows(tmp_path: Path, r1: str) -> list[dict[str, Any]]:
    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "cerebras-modelzoo-params-r1.md").write_text(r1, encoding="utf-8")
    rows = []
    for row in extract_cerebras_facts.read_r1(reference / "cerebras-modelzoo-params-r1.md"):
        rows.append(
            {
                "sections": list(row.sections),
                "name": row.name,
                **extract_cerebras_facts.spec_to_json(extract_cerebras_facts.row_spec(row)),
            }
        )
    return rows


def test_cerebras_rows_keep_types_values_defaults_and_scope(tmp_path: Path) -> None:
    hidden, position, dropout, steps = _rows(tmp_path, CEREBRAS_R1)
    assert hidden == {
        "sections": ["model"],
        "name": "hidden_size",
        "default": 768,
        "default_text": None,
        "enum": None,
        "required": False,
        "scope": ["All"],
        "scope_kind": "models",
        "type": {"types": ["integer"], "literals": [], "items": []},
    }
    assert position["enum"] == ["learned", "rotary", None] and position["default"] == "learned"
    assert position["scope"] == ["GPT-2", "GPT-3"]
    assert "default" not in dropout and dropout["default_text"] == "same as dropout"  # a worded default
    assert steps["sections"] == ["runconfig"] and steps["required"] is True and steps["scope_kind"] == "devices"
    assert "default" not in steps


def test_cerebras_refuses_a_row_it_cannot_read(tmp_path: Path) -> None:
    bad = CEREBRAS_R1.replace("| hidden_size |", "| hidden size! |")
    with pytest.raises(extract_cerebras_facts.DocFormatError, match="unexpected parameter name"):
        _rows(tmp_path, bad)


VEOMNI_SOURCE = """
from dataclasses import dataclass, field
from typing import Literal, Optional


@dataclass
class OptimizerConfig:
    type: Literal["adamw", "muon"] = field(default="adamw", metadata={"help": "Optimizer  type."})
    lr: float = 5e-5
    betas: list = field(default_factory=list)
    path: str = field(metadata={"help": "Required."})
    device: str = field(default_factory=lambda: "cuda")


@dataclass
class TrainingArguments(Base):
    optimizer: Optional[OptimizerConfig] = field(default_factory=OptimizerConfig)
"""


def test_veomni_fields_keep_annotation_default_and_help() -> None:
    classes = extract_veomni_facts.dataclasses_in(VEOMNI_SOURCE, "args.py")
    assert list(classes) == ["OptimizerConfig", "TrainingArguments"]
    assert classes["TrainingArguments"].bases == ["Base"]
    fields = {f.name: f for f in classes["OptimizerConfig"].fields}
    assert (fields["type"].annotation, fields["type"].default, fields["type"].help) == (
        "Literal['adamw', 'muon']",
        "adamw",
        "Optimizer  type.",
    )
    assert fields["lr"].default == 5e-5 and fields["betas"].default == [] and fields["device"].default == "cuda"
    assert fields["path"].default is extract_veomni_facts.MISSING  # required
    assert classes["TrainingArguments"].fields[0].default is None  # a nested dataclass: its own fields say


def test_veomni_doc_defaults_are_read_per_flat_key(tmp_path: Path) -> None:
    doc = tmp_path / "veomni-arguments.md"
    doc.write_text(
        "| Name | Type | Description | Default Value |\n| --- | --- | --- | --- |\n"
        "| train.lr | float | Peak learning rate | 5e-5 |\n| model.model_path | str | Path | None |\n"
        "| other | str | not a key | x |\n",
        encoding="utf-8",
    )
    assert extract_veomni_facts.doc_defaults(doc) == [
        {"key": "train.lr", "default": "5e-5"},
        {"key": "model.model_path", "default": "None"},
    ]
