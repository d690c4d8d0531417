"""A launcher that sets variables and hands over to another script (`exec bash run_experiment.sh`), as LLM360's
and slime's do: when that script is given with it, it is read (never run) in a shell of its own whose environment
is what the first script exports (a variable it sets without exporting stays its own, as in bash), and its launch
line is the run; when it is not given, the refusal names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from neoconv import InputError, translate

EXPORTS = 'export NUM_LAYERS=32\nexport TP=2\nLR=1e-4\nexec bash "${BASE}/scripts/run_experiment.sh"\n'
EXPERIMENT = (
    "#!/bin/bash\nLR=${LR:-3e-4}\nITERS=${ITERS:-1000}\n"
    "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers $NUM_LAYERS --tensor-model-parallel-size $TP \\\n"
    "  --hidden-size 4096 --num-attention-heads 32 --seq-length 2048 --max-position-embeddings 2048 \\\n"
    "  --micro-batch-size 1 --global-batch-size 256 --lr $LR --train-iters $ITERS\n"
)


def scripts(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "run_7b.sh").write_text(EXPORTS)
    (tmp_path / "run_experiment.sh").write_text(EXPERIMENT)
    return tmp_path / "run_7b.sh", tmp_path / "run_experiment.sh"


@pytest.mark.parametrize("order", [0, 1])
def test_the_script_handed_over_to_is_read_with_the_first_one_s_variables(tmp_path: Path, order: int) -> None:
    given = list(scripts(tmp_path))
    result = translate(given if order == 0 else given[::-1], "megatron", "neox")
    ir = result.ir
    assert (ir.get("model.num_layers"), ir.get("parallel.tensor_size")) == (32, 2)
    assert ir.get("optim.lr") == 3e-4  # run_7b.sh sets LR=1e-4 without exporting it: the child's ${LR:-3e-4}
    assert ir.get("train.steps") == 1000
    by = result.report.by_source()
    layers = next(e for key, e in by.items() if "num-layers" in key)
    assert "NUM_LAYERS set in run_7b.sh (line 1)" in layers.detail
    notes = " ".join(result.report.source.get("notes", [])) + " ".join(str(v) for v in result.report.source.values())
    assert "run_experiment.sh read, it is given beside the script" in notes and "(not LR: set, not exported)" in notes


def test_without_it_the_refusal_names_the_script_to_give(tmp_path: Path) -> None:
    first, _ = scripts(tmp_path)
    with pytest.raises(InputError) as caught:
        translate([first], "megatron", "neox")
    assert 'it runs "${BASE}/scripts/run_experiment.sh" (line 4), not given: give that script with this one' in str(
        caught.value
    )


def test_the_second_script_alone_names_what_the_first_would_set(tmp_path: Path) -> None:
    _, second = scripts(tmp_path)
    result = translate([second], "megatron", "neox")
    unknown = [e for e in result.report.entries if e.status.value == "unknown"]
    assert any("NUM_LAYERS" in e.detail for e in unknown)


def test_scripts_that_run_each_other_stop(tmp_path: Path) -> None:
    (tmp_path / "a.sh").write_text("X=1\nbash b.sh\n")
    (tmp_path / "b.sh").write_text("Y=2\nbash a.sh\n")
    with pytest.raises(InputError) as caught:
        translate([tmp_path / "a.sh", tmp_path / "b.sh"], "megatron", "neox")
    assert "no Megatron arguments" in str(caught.value)  # each reads the other once, with the files it is given


def test_nothing_after_exec_runs(tmp_path: Path) -> None:
    first, second = scripts(tmp_path)
    first.write_text(
        EXPORTS + "torchrun pretrain_gpt.py --num-layers 2 --lr 9e-9\n"
    )  # never reached: exec replaced the shell
    result = translate([first, second], "megatron", "neox")
    assert (result.ir.get("model.num_layers"), result.ir.get("optim.lr")) == (32, 3e-4)


def test_declare_x_and_a_bare_export_export_too(tmp_path: Path) -> None:
    first, second = scripts(tmp_path)
    first.write_text('declare -x NUM_LAYERS=24\nTP=4\nexport TP\nLR=2e-4; export LR\nexec bash "run_experiment.sh"\n')
    ir = translate([first, second], "megatron", "neox").ir
    assert (ir.get("model.num_layers"), ir.get("parallel.tensor_size"), ir.get("optim.lr")) == (24, 4, 2e-4)


def test_assignments_before_the_command_are_that_script_s_environment(tmp_path: Path) -> None:
    """`NUM_LAYERS=32 bash run.sh`: bash gives the command NUM_LAYERS (and each assignment sees the ones
    before it); the values are noted with the line that sets them."""
    first, second = scripts(tmp_path)
    first.write_text("export TP=2\nNUM_LAYERS=32 LR=2e-4 ITERS=$((NUM_LAYERS * 10)) bash run_experiment.sh\n")
    result = translate([first, second], "megatron", "neox")
    ir = result.ir
    assert (ir.get("model.num_layers"), ir.get("parallel.tensor_size")) == (32, 2)
    assert (ir.get("optim.lr"), ir.get("train.steps")) == (2e-4, 320)
    layers = next(e for key, e in result.report.by_source().items() if "num-layers" in key)
    assert "NUM_LAYERS set for the command on line 2 of run_7b.sh" in layers.detail
    notes = " ".join(str(v) for v in result.report.source.values())
    assert "plus NUM_LAYERS, LR, ITERS set on that line for it alone" in notes


def test_assignments_before_exec_hand_over_too(tmp_path: Path) -> None:
    first, second = scripts(tmp_path)
    first.write_text("TP=4 NUM_LAYERS=16 exec bash run_experiment.sh\ntorchrun pretrain_gpt.py --num-layers 2\n")
    ir = translate([first, second], "megatron", "neox").ir
    assert (ir.get("model.num_layers"), ir.get("parallel.tensor_size")) == (16, 4)


def test_assignments_before_a_command_last_for_that_command_only(tmp_path: Path) -> None:
    """A prefix on another command changes neither this shell's value nor what a later command gets."""
    first, second = scripts(tmp_path)
    first.write_text(
        "export NUM_LAYERS=8\nNUM_LAYERS=32 TP=4 python prepare.py\nexport TP=2\nexec bash run_experiment.sh\n"
    )
    ir = translate([first, second], "megatron", "neox").ir
    assert (ir.get("model.num_layers"), ir.get("parallel.tensor_size")) == (8, 2)


def test_assignments_before_bash_c_are_in_the_string_s_shell(tmp_path: Path) -> None:
    src = tmp_path / "run.sh"
    src.write_text(
        "NUM_LAYERS=12 bash -c 'torchrun pretrain_gpt.py --num-layers $NUM_LAYERS --hidden-size 768 "
        "--num-attention-heads 12 --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 1 "
        "--global-batch-size 8 --lr 1e-4 --train-iters 10'\necho $NUM_LAYERS\n"
    )
    assert translate([src], "megatron", "neox").ir.get("model.num_layers") == 12
