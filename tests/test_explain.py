"""`neoconv explain`: every canonical field listed (no NAME or --list), and every spelling a reader
accepts explained (flat VeOmni keys, trainer-layout Cerebras paths, DeepSpeed tuning keys)."""

from __future__ import annotations

import json

import pytest

from neoconv.knowledge.catalogue import catalogue
from neoconv.cli import main
from neoconv.knowledge.registry import FORMATS


def test_no_name_lists_every_field_with_its_key_in_each_format(runner) -> None:
    """Regression (issue 18): an error said "`neoconv explain` lists the fields", but explain with no
    argument exited 2."""
    bare = runner.invoke(main, ["explain"])
    listed = runner.invoke(main, ["explain", "--list"])
    assert bare.exit_code == 0 and bare.stdout == listed.stdout
    heads = [line.split(" (")[0] for line in bare.stdout.splitlines() if not line.startswith(" ")]
    assert heads == list(catalogue())
    block = bare.stdout.split("model.num_layers (int, layers)\n")[1].split("\nmodel.")[0]
    assert "neox: num_layers" in block and "cerebras: model.num_hidden_layers" in block and "deepspeed: -" in block
    assert max(len(line) for line in bare.stdout.splitlines()) <= 100


def test_list_as_json(runner) -> None:
    data = json.loads(runner.invoke(main, ["explain", "--list", "--json"]).stdout)
    by = {item["field"]: item for item in data}
    assert set(by) == set(catalogue())
    assert by["optim.lr"]["keys"]["deepspeed"][0].startswith("optimizer.params.lr")  # (the scheduler block with it)
    assert by["model.num_layers"]["keys"]["deepspeed"] is None and set(by["optim.lr"]["keys"]) == set(FORMATS)


def test_the_message_naming_explain_points_at_a_command_that_works(runner, pythia160m) -> None:
    result = runner.invoke(main, ["neox2cerebras", str(pythia160m), "--set", "zzz.qqq=1"])
    assert result.exit_code == 2 and "`neoconv explain --list` lists the fields" in result.stderr


@pytest.mark.parametrize(
    "name, feeds, read_as",
    [
        ("veomni:train.lr", "optim.lr", "train.optimizer.lr"),  # a flat-layout VeOmni key
        ("veomni:train.optimizer.lr", "optim.lr", None),
        ("cerebras:trainer.init.model.hidden_size", "model.hidden_size", "model.hidden_size"),  # trainer layout
        ("cerebras:trainer.init.optimizer.AdamW.weight_decay", "optim.weight_decay", "optimizer.weight_decay"),
        ("neox:num-layers", "model.num_layers", None),  # NeoX's dashed spelling
    ],
)
def test_every_spelling_a_reader_accepts_is_explained(runner, name: str, feeds: str, read_as: str | None) -> None:
    result = runner.invoke(main, ["explain", name, "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [f["field"] for f in data["fields"]][:1] == [feeds] and data.get("read_as") == read_as


def test_a_tuning_key_with_no_canonical_field_says_so(runner) -> None:
    result = runner.invoke(main, ["explain", "deepspeed:zero_optimization.reduce_bucket_size"])
    assert result.exit_code == 0
    assert "a DeepSpeed parameter" in result.stdout and "No canonical field" in result.stdout
    result = runner.invoke(main, ["explain", "deepspeed:zero_optimization.reduce_bucket_sise"])
    assert result.exit_code == 2 and "did you mean zero_optimization.reduce_bucket_size?" in result.stderr


def test_list_and_a_name_together_is_a_usage_error(runner) -> None:
    result = runner.invoke(main, ["explain", "--list", "optim.lr"])
    assert result.exit_code == 2 and "--list" in result.stderr
