"""Megatron-LM argument files: the words a shell (and Megatron's CI script) would hand to argparse,
in the three syntaxes the reader takes (translator/formats/megatron/syntax.py, lexer.py)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neoconv.core.errors import InputError, NeoconvError
from neoconv.formats.megatron.syntax import syntax_of, words_of


def texts(source: str, name: str = "f.args") -> list[str]:
    return [a.text for a in words_of(source, name).args]


# ---- argument files: bash's word rules, not shlex's ---------------------------------------------


def test_continuations_quotes_and_comments() -> None:
    assert texts('--a 1 \\\n  --b "x y" # c\n--c\n') == ["--a", "1", "--b", "x y", "--c"]


def test_a_hash_inside_a_word_is_no_comment() -> None:
    assert texts("--lr 1e-4#x\n") == ["--lr", "1e-4#x"]


def test_single_quotes_are_literal_and_double_quotes_expand() -> None:
    literal, expanded = words_of("--save '$P' --load \"$P\"\n", "f.args").args[1::2]
    assert (literal.text, literal.resolved) == ("$P", True)
    assert (expanded.raw, expanded.resolved, expanded.why) == (
        '"$P"',
        False,
        "P is not set in this file (the environment's)",
    )


def test_what_the_file_cannot_give_stays_unresolved_and_defaults_and_arithmetic_are_read() -> None:
    words = words_of("--a $1 --b ${X:-y}/z --c $(date) --d $((2*4)) --e `pwd`\n", "f.args").args
    assert [(w.text, w.resolved) for w in words[1::2]] == [
        ("$1", False),
        ("y/z", True),
        ("$(date)", False),
        ("8", True),
        ("`pwd`", False),
    ]
    assert words[3].note == "${X:-y}: its default 'y', unless the environment sets X"
    assert [words[k].why for k in (1, 5)] == ["$1 is the script's 1st argument", "`date` is a command's output"]


def test_an_args_file_with_shell_syntax_is_refused_with_its_line() -> None:
    with pytest.raises(InputError) as err:
        words_of("--num-layers 2\n--moe-layer-freq ([0]+[1])\n", "f.args")
    assert err.value.line == 2 and "quote the value" in err.value.message
    with pytest.raises(InputError, match="unterminated double quote") as err:
        words_of('--num-layers 2\n--save "x\n', "f.args")
    assert err.value.line == 2


@pytest.mark.parametrize(
    "text, syntax",
    [
        ("# c\n\n--num-layers 2\n", "args"),
        ("#!/bin/bash\nA=(\n--x 1\n)\n", "bash"),
        ("export X=1\n", "bash"),
        ("torchrun pretrain_gpt.py --x 1\n", "bash"),
        ("MODEL_ARGS:\n  --x: 1\n", "yaml"),
        ("--x: 1\n", "yaml"),
        ("echo start\ntorchrun x.py\n", "bash"),
        ("#!/bin/bash\nENV_VARS: 1\n", "bash"),
    ],
)
def test_the_syntax_is_told_by_the_first_line_that_is_not_a_comment(text: str, syntax: str) -> None:
    assert syntax_of(text) == syntax


# ---- bash scripts of arrays -------------------------------------------------------------------

SCRIPT = """#!/bin/bash
export CUDA_DEVICE_MAX_CONNECTIONS=1
GPUS_PER_NODE=8
CHECKPOINT_PATH=$1
WORLD_SIZE=$(($GPUS_PER_NODE*2))
DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes 2
)
MODEL_ARGS=(
    --num-layers 96  # layers
    --hidden-size 12288
)
TRAINING_ARGS=(
    --micro-batch-size 1
    "--split '99,1,0'"
    --step-batch-size-schedule "0:16 2.4B:320"
)
TRAINING_ARGS+=(--save "$CHECKPOINT_PATH")
torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \\
    ${TRAINING_ARGS[@]} \\
    ${MODEL_ARGS[@]}
"""


def test_the_launch_line_orders_the_arrays_and_names_the_launchers_words() -> None:
    words = words_of(SCRIPT, "run.sh")
    assert [a.text for a in words.launcher] == ["--nproc_per_node", "8", "--nnodes", "2"]
    assert words.launcher[1].note == "$GPUS_PER_NODE = '8' (line 3)"  # the file's own literal assignment
    assert [a.text for a in words.args] == [
        "--micro-batch-size",
        "1",
        "--split",
        "'99,1,0'",
        "--step-batch-size-schedule",
        "0:16 2.4B:320",
        "--save",
        "$CHECKPOINT_PATH",
        "--num-layers",
        "96",
        "--hidden-size",
        "12288",
    ]
    assert [a.line for a in words.args[-4:]] == [11, 11, 12, 12]


def test_array_elements_are_split_as_an_unquoted_expansion_splits_them_and_said_so() -> None:
    args = words_of(SCRIPT, "run.sh").args
    split = args[3]  # "--split '99,1,0'": bash passes the quotes on
    assert "quote characters" in split.note and "'99,1,0'" in split.note
    value = args[5]  # one value with blanks: kept whole, as meant
    assert "would pass 2 words" in value.note
    save = args[7]  # $CHECKPOINT_PATH = $1: unknown
    assert not save.resolved and save.why == "CHECKPOINT_PATH = $1 (line 4): $1 is the script's 1st argument"


def test_a_quoted_array_expansion_keeps_its_elements() -> None:
    script = 'A=( "--x 1" )\ntorchrun p.py "${A[@]}"\n'
    assert texts(script, "run.sh") == ["--x 1"]


def test_string_variables_of_arguments_are_split_and_keep_what_is_known() -> None:
    # the 23.04 examples' style: GPT_ARGS="... \\\n ..." expanded unquoted on the launch line
    script = 'CKPT=$2\nGPT_ARGS="\n  --num-layers 24 \\\n  --lr 1e-4 --save $CKPT"\ntorchrun pretrain_gpt.py $GPT_ARGS --fp16\n'
    words = words_of(script, "run.sh").args
    assert [(a.text, a.resolved) for a in words] == [
        ("--num-layers", True),
        ("24", True),
        ("--lr", True),
        ("1e-4", True),
        ("--save", True),
        ("$CKPT", False),
        ("--fp16", True),
    ]
    assert words[2].line == 4


def test_a_command_substitution_that_only_echoes_is_its_words() -> None:
    """A Swiss AI benchmark's `DATA_PATH_STR=$(IFS=' '; echo "${DATA_PATH_LIST[*]}")`: echo prints its words,
    nothing runs, so the data path is known (it was "a command's output"); `IFS=,` joins with commas; a
    pipe, an option or another program stays unknown."""
    script = (
        "L=(/d/a_text_document /d/b_text_document)\n"
        'DATA=$(IFS=\' \'; echo "${L[*]}")\nFREQ=$(IFS=,; echo "${L[*]}")\nNAME=`echo run $FREQ`\n'
        'torchrun p.py --data-path $DATA --save "$NAME" --load "$(echo x | tr x y)" --tensorboard-dir $(echo -n t)\n'
    )
    words = words_of(script, "run.sh").args
    assert [(a.text, a.resolved) for a in words] == [
        ("--data-path", True),
        ("/d/a_text_document", True),
        ("/d/b_text_document", True),
        ("--save", True),
        ("run /d/a_text_document,/d/b_text_document", True),
        ("--load", True),
        ("$(echo x | tr x y)", False),
        ("--tensorboard-dir", True),
        ("$(echo -n t)", False),
    ]
    assert words[6].why == "`echo x | tr x y` is a command's output"
    nest = "X=" + "$(echo " * 20 + "a" + ")" * 20 + "\ntorchrun p.py --save $X\n"  # deeper than echoes are read
    assert [a.resolved for a in words_of(nest, "run.sh").args] == [True, False]


def test_without_a_launch_line_the_arrays_are_the_arguments_in_file_order() -> None:
    assert texts("A=( --lr 1 )\nB=(\n  --fp16\n)\nA+=( --bf16 )\n", "x.sh") == ["--lr", "1", "--bf16", "--fp16"]


@pytest.mark.parametrize(
    "script, line, what",
    [
        ("A=( --lr 1\n", 1, "not closed"),
        ("A=( --x )\ntorchrun --nproc_per_node 8 ${A[@]}\n", None, "no command launches a Python training script"),
        ("if true; then\n  A=( --lr 1 )\n", 1, "`fi` expected for the `if` at line 1"),
        ("CKPT=<path to checkpoint>\n", 1, "`< path to checkpoint >` is a placeholder to fill in"),
        # Habana's run_mixtral.sh: its own defaults (TP=${HL_TP:-2}, expert TP off) take the branch that exits
        (
            "TP=${HL_TP:-2}\nEP_TP=${HL_EP_TP:-0}\nif [[ $EP_TP -eq 0 && $TP -ne 1 ]]; then\n  echo no\n  exit 1\nfi\n"
            "torchrun pretrain_gpt.py --num-layers 2 --tensor-model-parallel-size $TP\n",
            3,
            "stops at line 5 (exit) before any launch line: the `if` at line 3 takes that branch with the values the "
            "script gives",
        ),
    ],
)
def test_a_script_bash_refuses_or_without_a_launch_is_refused_with_its_line(
    script: str, line: int | None, what: str
) -> None:
    with pytest.raises(InputError) as err:
        words_of(script, "run.sh")
    assert err.value.line == line and what in err.value.message and err.value.file == "run.sh"
    assert "YAML" not in err.value.message


# ---- Megatron's CI YAML ------------------------------------------------------------------------


def test_ci_yaml_becomes_the_words_its_training_script_passes() -> None:
    text = (
        "ENV_VARS:\n  NCCL_IB_SL: 1\nMODEL_ARGS:\n  --swiglu: true\n  --num-layers: 32\n  --lr: 4.5e-4\n"
        '  --data-path: $DATA_BLEND\n  --step-batch-size-schedule: "0:384 200B:768"\n  --x: [1, 2]\n'
    )
    words = words_of(text, "model_config.yaml")
    assert [(a.text, a.resolved) for a in words.args] == [
        ("--swiglu", True),
        ("--num-layers", True),
        ("32", True),
        ("--lr", True),
        ("0.00045", True),
        ("--data-path", True),
        ("${DATA_BLEND}", False),
        ("--step-batch-size-schedule", True),
        ("0:384 200B:768", True),
        ("--x", True),
        ("1", True),
        ("2", True),
    ]
    assert words.extra == {"ENV_VARS": {"NCCL_IB_SL": 1}} and words.extra_lines == {"ENV_VARS": 1}
    assert [a.line for a in words.args[:3]] == [4, 5, 5]


@pytest.mark.parametrize(
    "text, what",
    [
        ("MODEL_ARGS:\n  --swiglu: false\n", "passes `--swiglu false`"),
        ("MODEL_ARGS:\n  num-layers: 2\n", "not an option"),
        ("TEST_TYPE: release\n", "no MODEL_ARGS"),
    ],
)
def test_ci_yaml_that_the_ci_script_could_not_pass_is_refused(text: str, what: str) -> None:
    with pytest.raises(InputError, match=what):
        words_of(text, "model_config.yaml")


# ---- any text: words or one clear error ---------------------------------------------------------

SHELL = list(" \t\n\\'\"$`#(){}[]|&;<>=+-:*@!?~0123456789abxyz_") + [
    "--num-layers",
    "--lr",
    "--swiglu",
    "--data-path",
    "A=(",
    ")",
    "${A[@]}",
    "torchrun",
    "pretrain_gpt.py",
    "$((1+2))",
    "${X:-y}",
    "$(date)",
    "export",
    "if",
    "MODEL_ARGS:",
    "\n  --lr: ",
    "true",
    "\\\n",
    "'",
    '"',
]


@settings(
    max_examples=int(os.environ.get("NEOCONV_FUZZ_EXAMPLES", "0")) or 150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(st.lists(st.sampled_from(SHELL), max_size=40).map("".join))
def test_any_text_is_read_or_refused_in_one_line(text: str) -> None:
    from neoconv.formats.megatron.options import parse

    try:
        parse(words_of(text, "f.args").args)
    except NeoconvError as exc:
        assert "\n" not in str(exc) and exc.file == "f.args"
