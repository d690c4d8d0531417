"""Table rules that replaced formulas (issue 19): DeepSpeed's ZeRO stage (an `enum` with `types`,
in the DeepSpeed and NeoX tables) and NeoX's gradient clipping (`overridden_by` with `as_is` and
`through`): each rule's reading and writing with real values, and translations that go through it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from neoconv.api import translate
from neoconv.core.errors import InputError
from neoconv.knowledge.formula import Approx, Extension, Formula, UnknownValue
from neoconv.knowledge.mapping import load_table
from neoconv.core.report import Status

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
def test_zero_stage_search_spaces_are_extensions_and_other_stages_no_release_has(fmt: str) -> None:
    stage = _rule_formula(fmt, "parallel.zero_stage")
    assert stage.read(zero_optimization_stage=[1, 2]) == Extension(SEARCH)
    assert stage.read(zero_optimization_stage=[]) == Extension(SEARCH)
    assert stage.read(zero_optimization_stage="all") == Extension(SEARCH)
    for other in (4, -1, "2", "ALL", True):  # no stage of any release: the engine's one rule (unknown)
        with pytest.raises(UnknownValue) as foreign:
            stage.read(zero_optimization_stage=other)
        assert foreign.value.value == other and foreign.value.known == ("0", "1", "2", "3", "all")
    with pytest.raises(ValueError, match=r"^zero_optimization\.stage must be 0, 1, 2 or 3, got None$"):
        stage.read(zero_optimization_stage=None)  # a null is refused by DeepSpeed's config validation


def test_zero_stage_end_to_end(tmp_path: Path) -> None:
    """Stage 3 reaches NeoX as it is; an autotuner's list is carried to DeepSpeed and dropped for
    Cerebras with the reason; stage 7 is no release's (unknown), an explicit null bad input, named by file and line."""
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
    tree["zero_optimization"]["stage"] = 7
    path.write_text(json.dumps(tree, indent=1))
    seven = _entry(translate([str(path)], "deepspeed", "neox", world_size=8), "zero_optimization.stage")
    assert seven.status is Status.UNKNOWN and seven.values["value"] == 7
    tree["zero_optimization"]["stage"] = None
    path.write_text(json.dumps(tree, indent=1))
    line = [n for n, text in enumerate(path.read_text().splitlines(), 1) if text.strip().startswith('"stage"')][0]
    with pytest.raises(InputError, match=r"must be 0, 1, 2 or 3, got None") as info:
        translate([str(path)], "deepspeed", "neox", world_size=8)
    assert info.value.line == line and info.value.key == "zero_optimization.stage"


def test_zero_stage_from_neox_to_deepspeed() -> None:
    done = translate([str(PYTHIA)], "neox", "deepspeed", world_size=8, set_values={"parallel.zero_stage": 2})
    assert json.loads(done.dump())["zero_optimization"]["stage"] == 2


# ---- NeoX's gradient clipping: 1.0 is not passed on; deepspeed_extra_args overrides ------------

TRAP = (
    "NeoX only passes gradient_clipping to DeepSpeed when it is not 1.0; its pinned DeeperSpeed then defaults "
    "to 0.0, so the NeoX run had no clipping at all. Kept 1.0 as written; give --set optim.grad_clip=0 to "
    "reproduce the run exactly"
)


def test_neox_grad_clip_reads_the_trap_and_the_override() -> None:
    clip = _rule_formula("neox", "optim.grad_clip")
    read = clip.read
    assert read(gradient_clipping=0.5, deepspeed_extra_args_gradient_clipping=None) == 0.5
    assert read(gradient_clipping=0.0, deepspeed_extra_args_gradient_clipping=None) == 0.0
    assert read(gradient_clipping=None, deepspeed_extra_args_gradient_clipping=None) is None
    for one in (1.0, 1):
        assert read(gradient_clipping=one, deepspeed_extra_args_gradient_clipping=None) == Approx(one, TRAP)
    # NeoX compares with 1.0 exactly: a value that merely rounds to it is passed on
    assert read(gradient_clipping=1.0000000001, deepspeed_extra_args_gradient_clipping=None) == 1.0000000001
    # deepspeed_extra_args is merged last: DeepSpeed gets exactly its value, whatever gradient_clipping says
    assert read(gradient_clipping=1.0, deepspeed_extra_args_gradient_clipping=1.0) == 1.0
    assert read(gradient_clipping=0.5, deepspeed_extra_args_gradient_clipping=3) == 3
    assert read(gradient_clipping=None, deepspeed_extra_args_gradient_clipping=0.0) == 0.0


def test_neox_grad_clip_writes_one_through_deepspeed_extra_args() -> None:
    clip = _rule_formula("neox", "optim.grad_clip")
    assert clip.write(value=1.0) == {"deepspeed_extra_args_gradient_clipping": 1.0}
    assert clip.write(value=0.5) == {"gradient_clipping": 0.5}
    assert clip.write(value=0.0) == {"gradient_clipping": 0.0}
    assert clip.write(value=1.0000000001) == {"gradient_clipping": 1.0000000001}
    rule = load_table("neox").rules_for_field("optim.grad_clip")[0]
    assert rule.default == 1.0 and rule.always and rule.also == ("deepspeed_extra_args.gradient_clipping",)


def test_neox_grad_clip_end_to_end(tmp_path: Path) -> None:
    """Pythia's gradient_clipping 1.0 reaches DeepSpeed with the trap said; written back to NeoX it
    goes through deepspeed_extra_args; a DeepSpeed clip of 0.5 is NeoX's gradient_clipping; an
    override in deepspeed_extra_args wins."""
    assert yaml.safe_load(PYTHIA.read_text())["gradient_clipping"] == 1.0
    to_ds = translate([str(PYTHIA)], "neox", "deepspeed", world_size=8)
    assert json.loads(to_ds.dump())["gradient_clipping"] == 1.0
    entry = _entry(to_ds, "gradient_clipping")
    assert entry.status is Status.LOSSY and entry.detail == TRAP
    back = yaml.safe_load(translate([str(PYTHIA)], "neox", "neox", world_size=8).dump())
    assert back["gradient_clipping"] == 1.0 and "deepspeed_extra_args" not in back  # carried as written
    ds = tmp_path / "ds.json"
    ds.write_text(json.dumps({"train_batch_size": 16, "train_micro_batch_size_per_gpu": 2, "gradient_clipping": 0.5}))
    neox = yaml.safe_load(translate([str(ds)], "deepspeed", "neox", world_size=8).dump())
    assert neox["gradient_clipping"] == 0.5 and "deepspeed_extra_args" not in neox
    ds.write_text(json.dumps({"train_batch_size": 16, "train_micro_batch_size_per_gpu": 2, "gradient_clipping": 1.0}))
    neox = yaml.safe_load(translate([str(ds)], "deepspeed", "neox", world_size=8).dump())
    assert neox["deepspeed_extra_args"] == {"gradient_clipping": 1.0} and "gradient_clipping" not in neox
    tree = yaml.safe_load(PYTHIA.read_text())
    tree["deepspeed_extra_args"] = {"gradient_clipping": 0.25}
    path = tmp_path / "over.yml"
    path.write_text(yaml.safe_dump(tree))
    over = translate([str(path)], "neox", "deepspeed", world_size=8)
    assert json.loads(over.dump())["gradient_clipping"] == 0.25 and over.ir.get("optim.grad_clip") == 0.25
