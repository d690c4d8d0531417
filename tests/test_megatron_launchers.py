"""Megatron launch scripts as people write them, read statically (translator/formats/megatron/script.py,
expand.py, conditions.py, launch.py): every construct real launchers wrap the launch line in, each a
small script written here with the values it must give (the flags read, the report's entries)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neoconv import translate
from neoconv.core.errors import InputError
from neoconv.formats.megatron.reader import READER
from neoconv.formats.megatron.syntax import words_of
from neoconv.core.report import Status

MODEL = "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 32 --max-position-embeddings 32"


def read(tmp_path: Path, script: str, name: str = "run.sh"):  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_text(script)
    return READER.read([str(path)])


def notes(source) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(source.reading_notes)


# ---- assignments, expansions -------------------------------------------------------------------


def test_assignments_exports_defaults_arrays_and_arithmetic_give_values(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""#!/bin/bash
export GPUS=${{GPUS_PER_NODE:-8}}
NODES=2
LAYERS=$(( 4 * 6 ))
HEADS=(16 32)
MODEL_ARGS=( {MODEL.replace("--num-layers 2", "--num-layers $LAYERS")} )
torchrun --nproc_per_node $GPUS --nnodes ${{NODES}} pretrain_gpt.py "${{MODEL_ARGS[@]}}" --ffn-hidden-size ${{HEADS[1]}}
""",
    )
    assert source.tree["num_layers"] == 24 and source.tree["ffn_hidden_size"] == 32
    assert source.tree["launcher"] == {"nproc_per_node": 8, "nnodes": 2}
    assert (
        "${GPUS_PER_NODE:-8}: its default '8', unless the environment sets GPUS_PER_NODE"
        in source.notes["launcher.nproc_per_node"]
    )
    assert "translate with --world-size 16" in source.notes["launcher.nproc_per_node"]


def test_a_flag_whose_value_the_script_does_not_give_is_an_unknown_entry_with_its_set(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text(f"CKPT=$1\ntorchrun --nproc_per_node 8 pretrain_gpt.py {MODEL} --lr $LR --save $CKPT\n")
    result = translate(str(path), "megatron", "neox")
    entries = result.report.by_source()
    assert entries["--lr"].status is Status.UNKNOWN
    assert entries["--lr"].detail == (
        "--lr $LR: not known here (LR is not set in this file (the environment's)); "
        "give the values with --set optim.lr=VALUE --set schedule.phases=VALUE"
    )
    assert entries["--save"].status is Status.UNKNOWN and "$1 is the script's 1st argument" in entries["--save"].detail
    assert result.config["num_layers"] == 2  # the rest translates
    given = translate(str(path), "megatron", "neox", set_values={"optim.lr": 3e-4})
    assert given.config["optimizer"]["params"]["lr"] == 3e-4


# ---- conditions ---------------------------------------------------------------------------------


def test_an_if_on_the_environment_takes_the_branch_its_defaults_take_and_says_so(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""A=( {MODEL} )
if [ -z "$PRECISION" ]; then
    A+=(--bf16)
else
    A+=(--fp16)
fi
if [[ "$USE_FP8" == "1" ]]; then
    A+=(--fp8-format hybrid)
fi
torchrun pretrain_gpt.py ${{A[@]}}
""",
    )
    assert source.tree["bf16"] is True and "fp16" not in source.tree and "fp8" not in source.tree
    said = notes(source)
    assert (
        'the `if` at line 2: `[ -z "$PRECISION" ]` (line 2) depends on values not known here (PRECISION is not '
        "set in this file (the environment's)): read as bash does without them: took the branch at line 2"
    ) in said
    assert 'the `if` at line 7: `[[ "$USE_FP8" == "1" ]]` (line 7)' in said and "no branch taken" in said


def test_a_test_the_script_decides_itself_is_read_without_a_note(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""TP=4
if [ $TP -gt 1 ]; then SP="--sequence-parallel"; fi
case $TP in
  1|2) EXTRA="--pipeline-model-parallel-size 1" ;;
  *) EXTRA="--pipeline-model-parallel-size 2" ;;
esac
torchrun pretrain_gpt.py {MODEL} --tensor-model-parallel-size $TP $SP $EXTRA
""",
    )
    assert source.tree["sequence_parallel"] is True and source.tree["pipeline_model_parallel_size"] == 2
    assert "depends on" not in notes(source)


def test_a_case_on_an_argument_reads_as_without_it(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""case "$1" in
  big) LAYERS=48 ;;
  *) LAYERS=12 ;;
esac
torchrun pretrain_gpt.py {MODEL.replace("--num-layers 2", "--num-layers $LAYERS")}
""",
    )
    assert source.tree["num_layers"] == 12
    assert (
        'the `case` at line 1: "$1" is not known here ($1 is the script\'s 1st argument): read as bash does '
        "without it: took the pattern at line 3"
    ) in notes(source)


def test_a_branch_that_stops_the_script_is_not_the_one_read(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""if [ ! -d "$CHECKPOINT_DIR" ]; then
    echo "no checkpoint directory"
    exit 1
fi
torchrun pretrain_gpt.py {MODEL}
""",
    )
    assert source.tree["num_layers"] == 2
    assert "stops the script (exit, line 3), so read the one that goes on: no branch taken" in notes(source)


def test_a_pattern_operator_on_a_variable_the_environment_gives_is_not_known(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""if [[ "${{HOSTNAME%%.*}}" != "node-1" ]]; then
    echo "run this on node-1" >&2
    exit 1
fi
torchrun pretrain_gpt.py {MODEL} --save ${{CKPT%/}}/run1 --load ${{CKPT:-/ckpt}}
""",
    )
    assert source.tree["num_layers"] == 2 and source.tree["load"] == "/ckpt"
    assert source.unknown_values["save"] == (
        "--save ${CKPT%/}/run1: not known here (CKPT is not set in this file (the environment's))"
    )
    assert (
        '`[[ "${HOSTNAME%%.*}" != "node-1" ]]` (line 1) depends on values not known here (HOSTNAME is not set '
        "in this file (the environment's)); the branch bash takes without them stops the script (exit, line 3)"
    ) in notes(source)


def test_a_variable_set_only_in_branches_not_taken_is_unknown_and_says_where(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""MODEL_SIZE=$2
if [ $MODEL_SIZE = 7B ]; then
    HIDDEN=4096
elif [ $MODEL_SIZE = 13B ]; then
    HIDDEN=5120
fi
torchrun pretrain_gpt.py {MODEL.replace("--hidden-size 64", "--hidden-size $HIDDEN")}
""",
    )
    assert "hidden_size" in source.unknown_values and source.tree["num_layers"] == 2
    assert source.unknown_values["hidden_size"] == (
        "--hidden-size $HIDDEN: not known here (HIDDEN is set only on lines 3, 5, which the run does not reach here)"
    )
    assert "MODEL_SIZE = $2 (line 1): $2 is the script's 2nd argument" in notes(source)


# ---- loops, functions, strings read as shell --------------------------------------------------


def test_a_bounded_loop_that_builds_the_moe_layer_pattern_is_evaluated(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""NUM_LAYERS=4
FREQ="["
for ((i=0; i<NUM_LAYERS; i++)); do
    if (( i == 0 )); then FREQ+="0"; else FREQ+=",1"; fi
done
FREQ+="]"
torchrun pretrain_gpt.py {MODEL.replace("--num-layers 2", "--num-layers $NUM_LAYERS")} --num-experts 8 --moe-layer-freq "$FREQ"
""",
    )
    assert source.tree["moe_layer_freq"] == "[0,1,1,1]" and source.tree["num_layers"] == 4


def test_a_loop_over_words_and_brace_ranges_is_evaluated(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""LIST=""
for n in {{0..3}}; do LIST="$LIST$n"; done
for w in a b; do LIST="$LIST-$w"; done
torchrun pretrain_gpt.py {MODEL} --data-path $LIST
""",
    )
    assert source.tree["data_path"] == ["0123-a-b"]


def test_a_loop_that_never_ends_is_read_no_further_and_named(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""N=0
while true; do N=$((N + 1)); done
torchrun pretrain_gpt.py {MODEL} --train-iters $N
""",
    )
    assert source.unknown_values["train_iters"].startswith(
        "--train-iters $N: not known here (N is set by the loop at line 2"
    )
    assert "the loop at line 2 runs more than 1,000 times: read no further" in notes(source)


def test_functions_eval_and_command_strings_are_read(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""launch() {{
    torchrun --nproc_per_node $1 pretrain_gpt.py {MODEL} --lr $2
}}
launch 4 1e-4
""",
    )
    assert source.tree["lr"] == 1e-4 and source.tree["launcher"]["nproc_per_node"] == 4
    source = read(tmp_path, f'CMD="torchrun pretrain_gpt.py {MODEL} --lr 2e-4"\necho $CMD\neval $CMD\n')
    assert source.tree["lr"] == 2e-4  # the echo is not a launch
    source = read(tmp_path, f"bcprun --nnodes 2 --npernode 8 -c 'python pretrain_gpt.py {MODEL} --lr 5e-4'\n")
    assert source.tree["lr"] == 5e-4


# ---- the launch line inside pipelines and wrappers ---------------------------------------------


@pytest.mark.parametrize(
    "line, launcher",
    [
        ("torchrun --nproc_per_node 8 pretrain_gpt.py {m} 2>&1 | tee logs/run.log", {"nproc_per_node": 8}),
        ("srun --nodes 2 --ntasks-per-node 1 torchrun --nnodes 2 pretrain_gpt.py {m}", {"nnodes": 2}),
        (
            "python -m torch.distributed.run --nproc_per_node 2 pretrain_gpt.py {m} &",
            {"m": "torch.distributed.run", "nproc_per_node": 2},
        ),
        ("deepspeed --num_gpus 4 pretrain_gpt.py {m} --deepspeed", {"num_gpus": 4}),
        ("ray job submit --address http://x:8265 --working-dir . -- python3 train.py {m}", None),
        ("cd /workspace && CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun pretrain_gpt.py {m} > log.txt", None),
        ("numactl --membind=0-3 python pretrain_gpt.py {m} | tee -a out.log", None),
    ],
)
def test_the_launch_is_found_inside_pipelines_and_wrappers(tmp_path: Path, line: str, launcher: dict | None) -> None:
    source = read(tmp_path, "mkdir -p logs\n" + line.format(m=MODEL) + "\n")
    assert (source.tree["num_layers"], source.tree["hidden_size"]) == (2, 64)
    assert source.tree.get("launcher") == launcher


def test_a_job_script_written_with_a_here_document_and_run_is_read(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""NODES=4
cat > job.sbatch <<EOT
#!/bin/bash
#SBATCH --nodes=$NODES
srun torchrun --nnodes $NODES pretrain_gpt.py \\
    {MODEL} --save \\$CKPT
EOT
sbatch job.sbatch
""",
    )
    assert source.tree["num_layers"] == 2 and source.tree["launcher"] == {"nnodes": 4}
    assert source.unknown_values["save"].startswith("--save $CKPT: not known here (CKPT is not set")
    assert source.line_of("num_layers") == 6
    assert "line 8: job.sbatch, which the script writes is read as the shell it runs" in notes(source)
    quoted = read(tmp_path, f"sbatch --nodes 2 <<'EOF'\npython pretrain_gpt.py {MODEL} --save $CKPT\nEOF\n")
    assert quoted.tree["num_layers"] == 2 and quoted.line_of("num_layers") == 2


def test_a_training_script_not_known_here_is_found_after_the_launchers_options(tmp_path: Path) -> None:
    source = read(
        tmp_path, f'DIST="--nproc_per_node 8 --standalone --nnodes=1"\ntorchrun $DIST $TRAIN_SCRIPT {MODEL}\n'
    )
    assert source.tree["num_layers"] == 2 and source.tree["launcher"] == {
        "nproc_per_node": 8,
        "standalone": True,
        "nnodes": 1,
    }
    assert (
        "the launch (line 2) runs $TRAIN_SCRIPT, a script not known here (TRAIN_SCRIPT is not set in this file "
        "(the environment's)): read as the training script"
    ) in notes(source)


def test_a_command_read_from_a_here_document_into_a_variable_is_launched(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""read -r -d '' COMMAND <<EOF
python pretrain_gpt.py \\
  {MODEL} --lr 2e-4
EOF
bcprun --debug --nnodes=2 --npernode=8 --cmd "${{COMMAND}}"
""",
    )
    assert (source.tree["lr"], source.tree["num_layers"]) == (2e-4, 2)
    assert source.line_of("lr") == 3
    first_line = read(tmp_path, "read CMD <<EOF\ntorchrun pretrain_gpt.py --num-layers 2\n--lr 1\nEOF\neval $CMD\n")
    assert first_line.tree == {"num_layers": 2}  # without -d '', read takes the first line


def test_a_placeholder_with_blanks_bash_would_split_is_unknown(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f'CKPT_SAVE_DIR="your model save ckpt path"\nARGS="{MODEL} --save $CKPT_SAVE_DIR"\n'
        "torchrun pretrain_gpt.py $ARGS --lr 1e-4\n",
    )
    assert source.tree["lr"] == 1e-4 and source.tree["num_layers"] == 2
    assert source.unknown_values["save"] == (
        "--save 'your model save ckpt path' (from $ARGS): a value with blanks, which bash passes as 5 words and "
        "Megatron's argparse refuses: a placeholder to fill in?"
    )


def test_words_not_known_after_a_fork_options_value_are_not_its_value(tmp_path: Path) -> None:
    # Pai-Megatron-Patch ends the launch with `--patch-tokenizer-type LLamaTokenizer ${sp_options} ...`
    source = read(
        tmp_path,
        f"torchrun pretrain_gpt.py {MODEL} --patch-tokenizer-type LLamaTokenizer $EXTRA_ARGS --fork-path $FORK_DIR\n",
    )
    assert (
        source.tree["patch_tokenizer_type"] == "LLamaTokenizer" and "patch_tokenizer_type" not in source.unknown_values
    )
    assert (
        "$EXTRA_ARGS (EXTRA_ARGS is not set in this file (the environment's)) stands where an option is expected"
        in notes(source)
    )
    assert (
        source.tree["fork_path"] == "$FORK_DIR" and "fork_path" not in source.unknown_values
    )  # not a parameter, first


def test_an_option_written_with_equals_and_a_value_not_known_is_read_as_that_option(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text(
        f'torchrun --nnodes=$NODES --nproc_per_node=8 pretrain_gpt.py {MODEL} --lr=$LR --save="$CK" --fork-x=$FX\n'
    )
    source = READER.read([str(path)])
    assert source.unknown_values["lr"] == "--lr $LR: not known here (LR is not set in this file (the environment's))"
    assert source.unknown_values["save"].startswith('--save "$CK": not known here (CK is not set')
    assert source.unknown_values["launcher.nnodes"].startswith("--nnodes $NODES: not known here (NODES is not set")
    assert source.tree["launcher"]["nproc_per_node"] == 8
    assert source.tree["fork_x"] == "$FX" and "fork_x" not in source.unknown_values  # not a parameter: said so first
    assert "stands where an option is expected" not in notes(source)
    same = translate(str(path), "megatron", "megatron")
    entries = same.report.by_source()
    assert entries["--fork-x"].status is Status.UNKNOWN and entries["--lr"].status is Status.EXACT
    written = same.dump()
    assert "--lr $LR\n" in written and '--save "$CK"\n' in written and "--fork-x $FX\n" in written


def test_one_launch_line_run_in_a_loop_is_read_once_naming_what_differs(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""run() {{
    torchrun pretrain_gpt.py {MODEL} --lr 1e-4 --exp-name "clock$1" --tensorboard-dir /tb
}}
for clock in 990 1080 1155; do
    run $clock
done
""",
    )
    assert source.tree["lr"] == 1e-4 and source.tree["exp_name"] == "clock990"
    assert (
        "the launch line (line 2) runs 3 times (a loop, or a function called again): read its first run; "
        "--exp-name differ between the runs"
    ) in notes(source)
    assert "the 3 runs of line 2 give clock990, clock1080, clock1155: the first read" in source.notes["exp_name"]
    assert "other commands not run as the training" not in notes(source)


def test_launch_lines_that_differ_are_still_several_runs(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text(f"torchrun pretrain_gpt.py {MODEL} --lr 1e-4\ntorchrun pretrain_gpt.py {MODEL} --lr 3e-4\n")
    with pytest.raises(InputError) as caught:
        READER.read([str(path)])
    assert "the script launches 2 different training runs (lines 1, 2)" in caught.value.message


def test_a_training_module_run_by_torchrun_is_the_launch(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        "python -m pip install -q wandb\n"
        f"uv run python -m torch.distributed.run --nproc_per_node 2 -m examples.pretrain_mimo {MODEL}\n",
    )
    assert source.tree["num_layers"] == 2 and source.tree["launcher"]["nproc_per_node"] == 2
    assert "other commands not run as the training: pip (line 1)" in notes(source)


def test_mindspores_msrun_is_a_launcher_naming_the_world_size(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f'ARGS="--worker_num 16 --local_worker_num 8 --log_dir=msrun_log"\nmsrun $ARGS pretrain_gpt.py {MODEL}\n',
    )
    assert source.tree["launcher"] == {"worker_num": 16, "local_worker_num": 8, "log_dir": "msrun_log"}
    assert "msrun starts 16 processes: translate with --world-size 16" in source.notes["launcher.worker_num"]


def test_a_config_fragment_without_a_launch_is_read_from_its_strings_of_options(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""HF_MODEL=meta-llama/Llama-3.1-8B
MODEL_ARGS=" \\
    --num-layers 32 --hidden-size 4096 \\
    --swiglu \\
"
TRAIN_ARGS="--lr 3e-4 --save $CKPT"
NOTE="not options"
""",
    )
    assert {k: source.tree.get(k) for k in ("num_layers", "hidden_size", "swiglu", "lr")} == {
        "num_layers": 32,
        "hidden_size": 4096,
        "swiglu": True,
        "lr": 3e-4,
    }
    assert "save" in source.unknown_values and source.line_of("swiglu") == 4
    assert "no command launches a training script: read the arguments of MODEL_ARGS, TRAIN_ARGS" in notes(source)


def test_commands_that_are_not_the_launch_and_files_not_given_are_named(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""source /opt/env/setup.sh
mkdir -p out
echo "starting"
pip install -q wandb
python tools/preprocess_data.py --input x.jsonl --output-prefix data
torchrun pretrain_gpt.py {MODEL} --data-path $DATA_PREFIX
""",
    )
    said = notes(source)
    assert "`source /opt/env/setup.sh` (line 1) is not read: what it sets is not known here" in said
    assert (
        "commands neoconv does not run (it reads the script only): mkdir (line 2), echo (line 3), pip (line 4)" in said
    )
    assert "other commands not run as the training: tools/preprocess_data.py (line 5)" in said
    assert source.unknown_values["data_path"] == (
        "--data-path $DATA_PREFIX: not known here (DATA_PREFIX is not set "
        "in this file (the environment's, or set by `source "
        "/opt/env/setup.sh` (line 1), which neoconv does not read))"
    )


def test_a_file_the_script_sources_is_read_when_given_beside_it(tmp_path: Path) -> None:
    config = tmp_path / "config.sh"
    config.write_text("""NUM_LAYERS=24
if [ -z "$SMALL" ]; then HEADS=16; else HEADS=8; fi
MODEL_ARGS=(--num-layers $NUM_LAYERS --hidden-size 1024 --num-attention-heads $HEADS)
""")
    train = tmp_path / "train.sh"
    train.write_text("""DIR=$(cd "$(dirname "$0")" && pwd)
source ${DIR}/config.sh
torchrun pretrain_gpt.py "${MODEL_ARGS[@]}" --seq-length 32 --max-position-embeddings 32 --train-iters $((NUM_LAYERS * 10))
""")
    source = READER.read([str(config), str(train)])
    assert {k: source.tree[k] for k in ("num_layers", "num_attention_heads", "train_iters")} == {
        "num_layers": 24,
        "num_attention_heads": 16,
        "train_iters": 240,
    }
    assert source.origins["num_layers"] == (str(train), 2)  # placed at the `source` line of the script
    assert source.notes["num_layers"] == "MODEL_ARGS set in config.sh (line 3); config.sh: $NUM_LAYERS = '24' (line 1)"
    said = notes(source)
    assert "`source config.sh` (line 2): read, it is given beside the script" in said
    assert 'config.sh: the `if` at line 2: `[ -z "$SMALL" ]` (line 2) depends on values not known here' in said
    assert "also given" not in said and not any("also given" in n for n in source.notes.values())  # read once
    alone = READER.read([str(train)])  # not given: named, its values unknown
    assert "num_layers" not in alone.tree and "`source ${DIR}/config.sh` (line 2) is not read" in notes(alone)


def test_a_command_substitution_anywhere_never_breaks_the_read(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""ITERATION=0
for (( node = 0; node <= 1; node++ )); do
    if $(ssh -q worker-"$node" "test -f \\"$ITERATION_FILE\\""); then
        LOCAL=$(ssh -q worker-"$node" cat $ITERATION_FILE)
        ITERATION=$(( ${{LOCAL}} > ${{ITERATION}} ? ${{LOCAL}} : ${{ITERATION}} ))
    fi
done
NAME=$(date +%s)-`hostname`
cat <<EOT > ds_config.json
{{ "train_batch_size": "$(echo ")")" }}
EOT
torchrun pretrain_gpt.py {MODEL} --train-iters 100
""",
    )
    assert source.tree["train_iters"] == 100


def test_several_different_runs_are_refused_with_their_lines(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        read(tmp_path, f"for lr in 1e-4 3e-4; do\n  torchrun pretrain_gpt.py {MODEL} --lr $lr\ndone\n")
    assert err.value.message.startswith("the script launches 2 different training runs (lines 2, 2) (--lr differ)")


def test_a_script_of_exports_that_hands_over_to_another_names_it(tmp_path: Path) -> None:
    path = tmp_path / "run_7b.sh"
    path.write_text('export NUM_LAYERS=32\nexport TP=2\nexec bash "${BASE}/scripts/run_experiment.sh"\n')
    with pytest.raises(InputError) as caught:
        READER.read([str(path)])
    assert (
        'it runs "${BASE}/scripts/run_experiment.sh" (line 3), not given: give that script with this one'
    ) in caught.value.message


def test_a_launch_through_a_wrapper_script_not_given_is_read_and_said(tmp_path: Path) -> None:
    source = read(tmp_path, f'OPTS="{MODEL} --lr 1e-4"\nmpirun -np 8 bash entry.sh pretrain_gpt.py "$OPTS"\n')
    assert source.tree["lr"] == 1e-4
    assert "goes through entry.sh, which is not given" in notes(source)


# ---- bad launchers: one clear line ---------------------------------------------------------------


@pytest.mark.parametrize(
    "value, what",
    [
        ("²", "--nproc_per_node ²: not a number of processes per node"),
        ("9" * 5000, "--nnodes 99999999999999999999...: not a number of nodes"),
    ],
)
def test_a_launcher_count_torchrun_refuses_is_one_clear_line(tmp_path: Path, value: str, what: str) -> None:
    option = "--nproc_per_node" if value == "²" else "--nnodes"
    path = tmp_path / "run.sh"
    path.write_text(f"torchrun {option} {value} pretrain_gpt.py {MODEL}\n")
    with pytest.raises(InputError) as err:
        translate(str(path), "megatron", "neox")
    assert err.value.message.startswith(what) and err.value.line == 1 and "\n" not in str(err.value)


def test_messages_about_a_shell_file_speak_of_shell(tmp_path: Path) -> None:
    for text in ("#!/bin/bash\nTEST_TYPE: release\n", "echo 'hi'\n", 'X="unterminated\n'):
        path = tmp_path / "run.sh"
        path.write_text(text)
        with pytest.raises(InputError) as err:
            translate(str(path), "megatron", "neox")
        assert "YAML" not in str(err.value) and "top level" not in str(err.value)


# ---- anything bash accepts is read ---------------------------------------------------------------

VALID = [
    "f() { :; }\nfunction g { echo $1; }\ng x\n",
    "x=$'a\\'b'\ny=$\"z\"\n",
    'while read -r line; do echo "$line"; done < file.txt\n',
    "until false; do break; done\n",
    "select x in a b; do break; done\n",
    "{ echo a; echo b; } > out 2>&1\n( cd /tmp && ls ) | wc -l\n",
    "[[ -n $X && ( $Y == a* || $Z =~ ^[0-9]+$ ) ]] && echo ok\n",
    "arr=([0]=a [2]=c)\necho ${#arr[@]} ${!arr[@]} ${arr[-1]}\n",
    "echo ${X#*/} ${X%%.*} ${X//a/b} ${X^^} ${X:1:2} ${#X} ${X:+y} ${X:?}\n",
    "cat <<-'EOF'\n\tliteral $x\n\tEOF\necho done\n",
    "diff <(ls a) <(ls b)\n",
    "case $x in (a) echo a;; b|c) echo b;& *) echo c;;& esac\n",
    "let 'x = 1 + 2' y++\n(( x > 1 )) && echo big\n",
    "time -p sleep 1\n! false\n",
    "echo a; echo b & wait\n",
]


@pytest.mark.parametrize("script", VALID)
def test_a_script_bash_accepts_is_never_refused_as_shell_syntax(tmp_path: Path, script: str) -> None:
    if shutil.which("bash"):
        assert subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True).returncode == 0
    try:
        words_of(script + f"torchrun pretrain_gpt.py {MODEL}\n", "run.sh")
    except InputError as exc:
        assert "shell syntax" not in exc.message, exc.message


def test_a_loop_that_waits_on_what_the_script_does_not_give_is_read_no_further(tmp_path: Path) -> None:
    source = read(
        tmp_path,
        f"""while true; do
    READY=$(ray status | grep -c NPU)
    if [ "$READY" -eq 8 ]; then break; else sleep 5; fi
done
torchrun pretrain_gpt.py {MODEL}
""",
    )
    assert source.tree["num_layers"] == 2
    assert "the `while` loop at line 1 changes nothing the script gives from one round to the next" in notes(source)


def test_a_script_that_runs_too_many_commands_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        read(tmp_path, "for a in {1..500}; do for b in {1..500}; do X=$a$b; done; done\n")
    assert err.value.message.startswith("the script runs more than 20,000 commands here") and err.value.line == 1


def test_a_loop_over_words_not_known_is_read_once(tmp_path: Path) -> None:
    source = read(
        tmp_path, f"for cfg in $(ls configs); do\n  torchrun pretrain_gpt.py {MODEL} --data-path $cfg\ndone\n"
    )
    assert source.tree["num_layers"] == 2
    assert source.unknown_values["data_path"] == (
        "--data-path $cfg: not known here (cfg is one of the words of the loop at line 1 (`ls configs` is a "
        "command's output))"
    )
    assert "the `for` loop at line 1 runs over words not known here" in notes(source)


def test_what_eval_reads_keeps_the_lines_and_the_unknown_words_of_the_file(tmp_path: Path) -> None:
    source = read(
        tmp_path, f'DIST="--nproc_per_node $GPUS"\nCMD="torchrun $DIST pretrain_gpt.py\n  {MODEL}"\neval $CMD\n'
    )
    assert source.tree["num_layers"] == 2 and source.line_of("num_layers") == 3
    assert source.unknown_values["launcher.nproc_per_node"] == (
        "--nproc_per_node ${GPUS}: not known here (GPUS is not set in this file (the environment's))"
    )


SNIPPETS = [
    "X=1",
    "export Y=${X:-2}",
    "A=(--lr 1 --fp16)",
    "A+=(--bf16)",
    "unset X",
    'echo "$X" | tee -a log',
    'if [ -n "$X" ]; then Z=1; elif [[ $Y == 2* ]]; then Z=2; else Z=3; fi',
    "case $Y in 1) W=a;; *) W=b;; esac",
    "for i in 1 2; do B=$i; done",
    "for ((i=0; i<2; i++)); do C+=($i); done",
    "while false; do :; done",
    "f() { local q=$1; echo $q; }",
    "f 3",
    "(cd /tmp && ls) > /dev/null 2>&1",
    "{ echo a; echo b; } &",
    "S=$(date +%s)",
    "T=`hostname`",
    "N=$(( ${#A[@]} + 1 ))",
    'eval "M=$X"',
    "[[ -f x ]] && source x || true",
    'cat <<EOF > f.json\n{"a": "$X"}\nEOF',
    "set -euo pipefail",
    "trap 'echo bye' EXIT",
    'D="$(ssh h "test -f \\"$X\\"")"',
    "torchrun --nproc_per_node 2 pretrain_gpt.py --num-layers 2 ${A[@]}",
]


@settings(
    max_examples=int(os.environ.get("NEOCONV_FUZZ_EXAMPLES", "0")) or 40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(st.lists(st.sampled_from(SNIPPETS), min_size=1, max_size=12))
def test_any_script_bash_accepts_is_read_or_refused_in_one_line_never_as_its_syntax(lines: list[str]) -> None:
    script = "\n".join(lines) + "\n"
    if shutil.which("bash") and subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True).returncode:
        return  # not a script bash reads: nothing to hold neoconv to
    try:
        words_of(script, "run.sh")
    except InputError as exc:
        assert "shell syntax" not in exc.message and "\n" not in str(exc), exc.message


# ---- words carried out of the script into an argument file -------------------------------------------


def test_a_defaulted_expansion_is_not_carried_where_it_would_read_as_its_default(tmp_path: Path) -> None:
    # `${MBS:-4}` with MBS=$9: in the script the 9th argument (else 4); in an argument file, where
    # nothing sets MBS, it reads as 4: not written, named missing with its --set
    path = tmp_path / "run.sh"
    path.write_text(
        f"MBS=$9\nGBS=${{10}}\ntorchrun pretrain_gpt.py {MODEL} --micro-batch-size ${{MBS:-4}} "
        "--global-batch-size 32 --train-iters $STEPS\n"
    )
    same = translate(str(path), "megatron", "megatron")
    entries = same.report.by_source()
    assert entries["--micro-batch-size"].status is Status.MISSING
    assert entries["--micro-batch-size"].fields == ("batch.micro",)
    assert entries["--train-iters"].status is Status.EXACT  # $STEPS reads back as the same unknown
    written = same.dump()
    assert "${MBS" not in written and "--global-batch-size 32\n" in written and "--train-iters $STEPS\n" in written
    assert written.count("# MISSING: --micro-batch-size — give --set batch.micro=VALUE") == 1
    back = tmp_path / "out.args"
    back.write_text(written)
    read_back = READER.read([str(back)])
    assert "micro_batch_size" not in read_back.tree and read_back.tree["global_batch_size"] == 32


def test_a_placeholder_with_blanks_is_written_as_one_quoted_word_and_named_missing(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text(f'SAVE="PATH TO SAVE MODEL"\ntorchrun pretrain_gpt.py {MODEL} --save ${{SAVE}} --load /ck\n')
    same = translate(str(path), "megatron", "megatron")
    entries = same.report.by_source()
    assert entries["--save"].status is Status.MISSING and entries["--save"].fields == ("checkpoint.save_dir",)
    assert entries["--load"].status is Status.EXACT
    written = same.dump()
    assert "--save 'PATH TO SAVE MODEL'\n" in written and "--load /ck\n" in written
    back = tmp_path / "out.args"
    back.write_text(written)
    assert READER.read([str(back)]).tree["save"] == "PATH TO SAVE MODEL"  # one word, as argparse takes it


def test_text_a_variable_splits_into_is_written_quoted_beside_the_expression_not_known(tmp_path: Path) -> None:
    # D="$PFX <data prefix>": bash passes `$PFX`, `<data`, `prefix>`; the argument file writes the
    # expression as it was and quotes the literal words (an unquoted `<` would be a redirection)
    path = tmp_path / "run.sh"
    path.write_text(f'D="$PFX <data prefix>"\ntorchrun pretrain_gpt.py {MODEL} --data-path ${{D}} --lr 1e-4\n')
    written = translate(str(path), "megatron", "megatron").dump()
    assert "--data-path ${PFX} '<data' 'prefix>'\n" in written
    back = tmp_path / "out.args"
    back.write_text(written)
    again = READER.read([str(back)])
    assert again.meta["words"]["data_path"] == ["${PFX}", "'<data'", "'prefix>'"] and again.tree["lr"] == 1e-4
    assert "data_path" in again.unknown_values  # still the expression not known here


def test_a_script_without_a_shebang_whose_first_line_is_a_command_is_detected_as_megatron(tmp_path: Path) -> None:
    # diff/validate/prove detect by content: a trainer's script (slime) gives Megatron's options
    # among more of its own, after `pkill`; it is shell, never YAML
    from neoconv.formats.detect import detect_file

    path = tmp_path / "run.sh"
    path.write_text(
        "pkill -9 sglang\nsleep 3\npython3 train.py --num-layers 2 --hidden-size 64 "
        "--actor-num-nodes 1 --rollout-batch-size 8 --n-samples-per-prompt 4 --colocate\n"
    )
    assert detect_file(str(path)) == "megatron"
    assert READER.read([str(path)]).tree["hidden_size"] == 64


def test_an_argument_file_of_mostly_a_trainers_own_options_is_detected_as_megatron(tmp_path: Path) -> None:
    # what megatron2megatron writes from such a trainer's script: one `--flag value` a line, most of them the
    # trainer's own (carried as unknown); validate and diff detect it by content, never as YAML
    from neoconv.formats.detect import detect_file

    path = tmp_path / "out.args"
    path.write_text(
        "# Megatron-LM arguments\n--attention-softmax-in-fp32\n--hidden-size 64\n--actor-num-nodes 1\n"
        "--rollout-batch-size 8\n--n-samples-per-prompt 4\n--colocate\n"
    )
    assert detect_file(str(path)) == "megatron"
    assert READER.read([str(path)]).tree["hidden_size"] == 64


def test_a_sample_schedule_without_train_iters_is_read_in_samples_not_refused(tmp_path: Path) -> None:
    # Retro's script gives --lr-*-samples and neither --train-iters nor --train-samples (its project
    # directory gives the length); Megatron asserts iteration-only options under `if args.train_iters:`
    path = tmp_path / "run.sh"
    path.write_text(
        f"torchrun pretrain_retro.py {MODEL} --micro-batch-size 4 --global-batch-size 256 --lr 6e-4 "
        "--min-lr 6e-5 --lr-decay-style cosine --lr-decay-samples 166400000 --lr-warmup-samples 25600\n"
    )
    config = translate(str(path), "megatron", "neox").config
    assert config["lr_decay_iters"] == 650000  # 166400000 / 256
    assert abs(config["warmup"] * 650000 - 100) <= 1  # 25600 / 256 steps (within NeoX's step count)
    given = tmp_path / "iters.sh"
    given.write_text(
        f"torchrun pretrain_gpt.py {MODEL} --global-batch-size 256 --lr 6e-4 --train-iters 1000 "
        "--lr-decay-samples 166400000\n"
    )
    with pytest.raises(InputError, match="--train-iters"):  # with --train-iters, Megatron's assertion holds
        translate(str(given), "megatron", "neox")


def test_heads_of_their_own_width_that_do_not_divide_hidden_are_refused_for_neox_not_written(tmp_path: Path) -> None:
    # GLM-4.7-style MLA: 20 heads of --kv-channels 192 in a 2048-wide model; NeoX asserts heads divide hidden
    path = tmp_path / "run.sh"
    path.write_text(
        "torchrun pretrain_gpt.py --num-layers 2 --hidden-size 2048 --num-attention-heads 20 "
        "--kv-channels 192 --seq-length 32 --max-position-embeddings 32 --lr 1e-4\n"
    )
    with pytest.raises(InputError, match="hidden_size 2048 is not divisible by num_attention_heads 20"):
        translate(str(path), "megatron", "neox")
    assert translate(str(path), "megatron", "megatron").config["--num-attention-heads"] == 20
    out = tmp_path / "out.yml"
    run = subprocess.run(
        [sys.executable, "-m", "neoconv", "megatron2neox", str(path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2 and not out.exists()


def test_prove_is_given_a_scripts_words_as_the_reader_makes_them_or_why_not(tmp_path: Path) -> None:
    # Megatron's probe runs Megatron's code, not bash: a script's job carries its words (P2)
    from neoconv.prove.hints import hints

    script = tmp_path / "run.sh"
    script.write_text(
        "pkill -9 python\nNL=2\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers $NL "
        "--hidden-size 64 --lr 1e-4\n"
    )
    args = tmp_path / "run.args"
    args.write_text("--num-layers 2\n--hidden-size 64\n--lr 1e-4\n")
    job_a, job_b = hints([str(script)], "megatron", [str(args)], "megatron", None)
    assert job_a["argv"] == ["--num-layers", "2", "--hidden-size", "64", "--lr", "1e-4"]
    assert "argv" not in job_b  # an argument file: the probe splits it itself
    unknown = tmp_path / "unknown.sh"
    unknown.write_text("torchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --save $CK\n")
    job_c, _ = hints([str(unknown)], "megatron", [str(args)], "megatron", None)
    assert "argv" not in job_c and job_c["argv_unknown"].startswith("$CK: CK is not set in this file")


CONDITIONS = [  # (condition, what bash says) -- `!` over `-a`/`&&` over `-o`/`||`, in both kinds of test
    ('[ ! "$X" = b -a -n "$X" ]', True),
    ('[ "$X" = b -o "$X" = a -a -z "$X" ]', False),
    ('[ ! -z "$X" -o "$X" = b ]', True),
    ("[ -a ]", True),  # one word: the text "-a" is not empty
    ("[ ! ]", True),
    ("[[ ! $X == b && ( -n $X || -z $X ) ]]", True),
    ("[[ $X == b || $X == a && -z $X ]]", False),
    ("[[ ! ! $X == a ]]", True),
]


@pytest.mark.parametrize("condition, expected", CONDITIONS)
def test_test_and_cond_share_one_and_or_not_descent(tmp_path: Path, condition: str, expected: bool) -> None:
    script = f"X=a\nif {condition}; then L=4; else L=2; fi\ntorchrun pretrain_gpt.py {MODEL.replace('--num-layers 2', '--num-layers $L')}\n"
    if shutil.which("bash"):  # the expectation is bash's own
        ran = subprocess.run(["bash", "-c", f"X=a; {condition}"], capture_output=True, timeout=10)
        assert (ran.returncode == 0) is expected
    assert read(tmp_path, script).tree["num_layers"] == (4 if expected else 2)
