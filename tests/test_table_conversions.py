"""Table rules that replaced formulas (issue 19): DeepSpeed's ZeRO stage (an `enum` with `types`,
in the DeepSpeed and NeoX tables), each rule's reading and writing with real values, and translations
that go through it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from translator.api import translate
from translator.errors import InputError
from translator.formula import Extension, Formula
from translator.mapping import load_table
from translator.report import Status

from conftest import FIXTURES

ZERO3 = FIXTURES / "inputs" / "deepspeed" / "onecycle-zero3.json"
PYTHIA = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"
SEARCH = "a search space for DeepSpeed's autotuner, which picks the ZeRO stage at run time"


def _rule_formula(fmt: str, field: str) -> Formula:
    rules = load_table(fmt).rules_for_field(field)
    assert len(rules) == 1 and rules[0].formula is not None
    return rules[0].formula


def _entry(done: Any, key: str) -> Any:
    return next(e for e in done.report.entries if key in (e.source_key, e.target_key))


# ---- DeepSpeed's ZeRO stage: enum 0-3, a list or "all" the autotuner's, a null refused ------------


@pytest.mark.parametrize("fmt", ["deepspeed", "neox"])
def test_zero_stage_reads_and_writes_the_four_stages(fmt: str) -> None:
    stage = _rule_formula(fmt, "parallel.zero_stage")
    for n in (0, 1, 2, 3):
        assert stage.read(zero_optimization_stage=n) == n
        assert stage.write(value=n) == {"zero_optimization_stage": n}
    assert load_table(fmt).rules_for_field("parallel.zero_stage")[0].default == 0


@pytest.mark.parametrize("fmt", ["deepspeed", "neox"])
def test_zero_stage_search_spaces_are_extensions_and_the_rest_is_refused(fmt: str) -> None:
    stage = _rule_formula(fmt, "parallel.zero_stage")
    assert stage.read(zero_optimization_stage=[1, 2]) == Extension(SEARCH)
    assert stage.read(zero_optimization_stage=[]) == Extension(SEARCH)
    assert stage.read(zero_optimization_stage="all") == Extension(SEARCH)
    for bad, shown in ((4, "4"), (-1, "-1"), ("2", "'2'"), ("ALL", "'ALL'"), (True, "True"), (None, "None")):
        with pytest.raises(ValueError, match=rf"^zero_optimization\.stage must be 0, 1, 2 or 3, got {shown}$"):
            stage.read(zero_optimization_stage=bad)


def test_zero_stage_end_to_end(tmp_path: Path) -> None:
    """Stage 3 reaches NeoX as it is; an autotuner's list is carried to DeepSpeed and dropped for
    Cerebras with the reason; stage 7 and an explicit null are bad input, named by file and line."""
    tree = json.loads(ZERO3.read_text())
    assert tree["zero_optimization"]["stage"] == 3
    done = translate([str(ZERO3)], "deepspeed", "neox", world_size=8)
    assert yaml.safe_load(done.dump())["zero_optimization"]["stage"] == 3 and done.ir.get("parallel.zero_stage") == 3
    path = tmp_path / "ds.json"
    tree["zero_optimization"]["stage"] = [0, 3]
    path.write_text(json.dumps(tree, indent=1))
    again = translate([str(path)], "deepspeed", "deepspeed", world_size=8)
    assert json.loads(again.dump())["zero_optimization"]["stage"] == [0, 3]
    dropped = _entry(translate([str(path)], "deepspeed", "cerebras", world_size=8), "zero_optimization.stage")
    assert dropped.status is Status.DROPPED and dropped.detail.endswith(SEARCH)
    for bad, shown in ((7, "7"), (None, "None")):
        tree["zero_optimization"]["stage"] = bad
        path.write_text(json.dumps(tree, indent=1))
        line = [n for n, text in enumerate(path.read_text().splitlines(), 1) if text.strip().startswith('"stage"')][0]
        with pytest.raises(InputError, match=rf"must be 0, 1, 2 or 3, got {shown}") as info:
            translate([str(path)], "deepspeed", "neox", world_size=8)
        assert info.value.line == line and info.value.key == "zero_optimization.stage"


def test_zero_stage_from_neox_to_deepspeed() -> None:
    done = translate([str(PYTHIA)], "neox", "deepspeed", world_size=8, set_values={"parallel.zero_stage": 2})
    assert json.loads(done.dump())["zero_optimization"]["stage"] == 2
