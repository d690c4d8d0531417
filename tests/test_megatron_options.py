"""Megatron-LM's argparse, as neoconv parses argument words (translator/formats/megatron/options.py):
the namespace by dest, flags, nargs, types, choices, argparse's rule for words starting with '-'."""

from __future__ import annotations

from pathlib import Path

import pytest

from neoconv.core.errors import InputError
from neoconv.formats.megatron.options import parse, table
from neoconv.formats.megatron.reader import READER
from neoconv.formats.megatron.syntax import words_of
from neoconv.services.validate_file import validate_file


def namespace(text: str):  # type: ignore[no-untyped-def]
    return parse(words_of(text, "f.args").args)


def test_the_namespace_is_keyed_by_dest_as_megatrons_is() -> None:
    found = namespace("--disable-bias-linear --no-load-optim --norm-epsilon 1e-6 --no-position-embedding\n")
    assert found.values == {
        "add_bias_linear": False,
        "no_load_optim": True,
        "layernorm_epsilon": 1e-6,
        "add_position_embedding": False,
    }
    assert found.written["add_bias_linear"] == "--disable-bias-linear"


def test_an_old_spelling_sets_the_same_dest_and_says_which_releases_parse_it() -> None:
    found = namespace("--layernorm-epsilon 1e-6\n")
    assert found.values == {"layernorm_epsilon": 1e-6}
    assert found.notes["layernorm_epsilon"] == (
        "--layernorm-epsilon is an option of Megatron-LM v1.0 to 23.06 only (core_v0.4.0 and later refuse it)"
    )


def test_values_are_typed_as_argparse_types_them() -> None:
    found = namespace(
        "--num-layers 24 --lr .0003 --split 949,50,1 --onnx-safe False --moe-layer-freq 2 "
        "--data-path 0.3 a 0.7 b --rampup-batch-size 16 8 300000\n"
    )
    assert found.values == {
        "num_layers": 24,
        "lr": 0.0003,
        "split": "949,50,1",
        "onnx_safe": True,  # type=bool: any non-empty text is True
        "moe_layer_freq": 2,
        "data_path": ["0.3", "a", "0.7", "b"],
        "rampup_batch_size": [16, 8, 300000],
    }


def test_flag_value_and_negative_numbers_follow_argparse() -> None:
    assert namespace("--min-lr=1e-5 --seed -1 --lr=-0.5\n").values == {"min_lr": 1e-5, "seed": -1, "lr": -0.5}
    with pytest.raises(InputError, match="argument --min-lr: expected one argument"):
        namespace("--min-lr -1e-5\n")  # not a negative number to argparse: an option
    with pytest.raises(InputError, match="ignored explicit argument 'true'"):
        namespace("--swiglu=true\n")


@pytest.mark.parametrize(
    "text, message",
    [
        ("--num-layers 1e6\n", "argument --num-layers: invalid int value: '1e6'"),
        ("--num-layers\n--lr 1\n", "argument --num-layers: expected one argument"),
        ("--rampup-batch-size 16 8\n", "argument --rampup-batch-size: expected 3 arguments"),
    ],
)
def test_what_argparse_refuses_is_an_input_error_with_the_line(text: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        namespace(text)
    assert message in err.value.message and err.value.line == 1 and err.value.file == "f.args"


def test_a_repeated_option_keeps_the_last_value_and_says_so() -> None:
    found = namespace("--lr 1e-4\n--min-lr 0\n--lr 3e-4\n")
    assert found.values["lr"] == 3e-4 and found.origins["lr"] == ("f.args", 3)
    assert found.notes["lr"] == "also given at line 1 (--lr 1e-4); argparse keeps the last"


def test_an_option_no_release_parsed_takes_the_words_up_to_the_next_option() -> None:
    found = namespace("--my-flag --my-list a b --num-layers 2\n")
    assert found.values == {"my_flag": True, "my_list": ["a", "b"], "num_layers": 2}
    assert found.unknown == {"my_flag", "my_list"}


def test_a_shell_expression_is_no_value_and_says_why_and_a_default_is_its_value() -> None:
    found = namespace('--save "${CKPT:-/tmp/ckpt}" --data-path $DATA\n')
    assert found.values == {"save": "/tmp/ckpt", "data_path": ["$DATA"]}  # bash's value when CKPT is not set
    assert found.notes["save"] == "${CKPT:-/tmp/ckpt}: its default '/tmp/ckpt', unless the environment sets CKPT"
    assert found.unresolved == {
        "data_path": "--data-path $DATA: not known here (DATA is not set in this file (the environment's))"
    }


def test_words_not_known_where_an_option_is_expected_are_named_not_refused() -> None:
    found = namespace("--num-layers 2 $EXTRA_ARGS --lr 1e-4\n")
    assert found.values == {"num_layers": 2, "lr": 1e-4}
    assert [(w.raw, w.why) for w in found.loose] == [
        ("$EXTRA_ARGS", "EXTRA_ARGS is not set in this file (the environment's)")
    ]


def test_a_value_no_release_takes_is_kept_and_named_as_a_forks() -> None:
    found = namespace("--normalization rmsnorm --tokenizer-type PretrainedFromHF --num-layers 2\n")
    assert found.values == {"normalization": "rmsnorm", "tokenizer_type": "PretrainedFromHF", "num_layers": 2}
    assert found.foreign["normalization"] == (
        "--normalization rmsnorm: not a choice of any Megatron-LM release (LayerNorm, RMSNorm): a fork's value?"
    )
    assert found.foreign["tokenizer_type"].startswith("--tokenizer-type PretrainedFromHF: not a choice of any")
    assert namespace("--normalization rmsnorm --normalization RMSNorm\n").foreign == {}  # the last one counts


def test_a_value_before_any_option_is_what_argparse_refuses() -> None:
    with pytest.raises(InputError, match="24: a value no option takes where an option is expected") as err:
        parse(words_of("torchrun pretrain_gpt.py 24 --num-layers 2\n", "run.sh").args)
    assert err.value.line == 1


def test_words_an_option_does_not_take_stay_with_it_as_a_forks_values() -> None:
    found = namespace("--num-experts 64 64 128 --num-layers 2\n")  # Megatron-DeepSpeed: experts per layer
    assert found.values == {"num_experts": ["64", "64", "128"], "num_layers": 2}
    assert found.foreign["num_experts"] == (
        "--num-experts 64 64 128: Megatron-LM's --num-experts takes one value, its argparse refuses 64 128: a fork's?"
    )


def test_a_forks_underscore_spelling_is_the_option_it_spells() -> None:
    found = namespace("--seq_length 2048 --max_position_embeddings 4096\n")  # Megatron-LLM's spelling
    assert found.values == {"seq_length": 2048, "max_position_embeddings": 4096} and not found.unknown
    assert "--seq_length is a fork's spelling (Megatron-LLM's) of --seq-length" in found.notes["seq_length"]


def test_the_option_table_holds_every_release() -> None:
    options = table().options
    assert len(options) > 970  # every option string of v1.0 ... HEAD
    assert options["--batch-size"].first == "v1.0" and options["--micro-batch-size"].first == "v2.0"
    assert options["--apply-query-key-layer-scaling"].absent == ("v2.0", "v2.5", "v2.6", "23.04", "23.06")
    assert table().parses(options["--norm-epsilon"], "core_v0.4") and not table().parses(
        options["--norm-epsilon"], "23.04"
    )
    assert not table().parses(options["--rotary-base"], "core_v0.4")  # core_v0.8.0 on
    assert options["--no-load-optim"].flag_value() is True and options["--disable-bias-linear"].flag_value() is False


def test_several_files_are_one_command_line(tmp_path: Path) -> None:
    (tmp_path / "model.args").write_text("--num-layers 2\n--lr 1e-4\n")
    (tmp_path / "train.args").write_text("--lr 3e-4\n")
    source = READER.read([str(tmp_path / "model.args"), str(tmp_path / "train.args")])
    assert source.tree == {"num_layers": 2, "lr": 3e-4}
    assert source.file_of("lr") == str(tmp_path / "train.args") and source.line_of("lr") == 1
    assert source.line_of("num_layers") == 1 and source.aliases["num_layers"] == "--num-layers"


def test_choices_of_a_list_option_are_checked_item_by_item() -> None:
    assert namespace("--moe-router-load-balancing-type aux_loss\n").values == {
        "moe_router_load_balancing_type": ["aux_loss"]
    }
    found = namespace("--moe-router-load-balancing-type aux_loss aux\n")
    assert found.values == {"moe_router_load_balancing_type": ["aux_loss", "aux"]}
    assert found.foreign["moe_router_load_balancing_type"].startswith(
        "--moe-router-load-balancing-type aux: not a choice of any Megatron-LM release"
    )


def test_choices_of_an_int_option_are_numbers_as_argparse_checks_them(tmp_path: Path) -> None:
    """`--timing-log-level` is type=int, choices=range(0, 3): 2 is a choice, 7 a fork's value, and
    validate takes the 2 it reads (its schema's choices were the strings '0', '1', '2')."""
    assert namespace("--timing-log-level 2\n").foreign == {}
    found = namespace("--timing-log-level 7\n")
    assert found.values == {"timing_log_level": 7}
    assert found.foreign["timing_log_level"].startswith("--timing-log-level 7: not a choice of any Megatron-LM release")
    path = tmp_path / "t.args"
    path.write_text("--timing-log-level 2\n")
    assert [p.key for p in validate_file(str(path), "megatron").problems if p.key == "--timing-log-level"] == []
