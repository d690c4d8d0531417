"""VeOmni from PR #1090 refuses every YAML key no argument dataclass declares (ByteDance-Seed/VeOmni@0196ddbe:
veomni/arguments/parser.py `_reject_unknown_keys`, naming the new place of a key in `_RELOCATED_KEYS`).
A file read as such a release with such a key is one VeOmni cannot run: refused with VeOmni's reason
(exit 2, one line), not an `unknown` entry. Earlier releases ignored unknown keys: those stay `unknown`."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from neoconv import translate
from neoconv.cli import main
from neoconv.core.errors import InputError
from neoconv.knowledge.schema import load_history

STRICT = Path(__file__).resolve().parent.parent / "fixtures" / "inputs" / "veomni" / "strict"


def test_the_history_says_which_releases_refuse_undeclared_keys() -> None:
    history = load_history("veomni")
    assert history is not None and history.refuses_unknown_from == "#1090"
    assert history.refuses_unknown("#1090") and not history.refuses_unknown("#1021")
    assert not history.refuses_unknown("#538")


def test_a_misspelt_field_of_a_scoped_file_is_refused_with_veomnis_reason() -> None:
    with pytest.raises(InputError) as caught:
        translate(STRICT / "scoped-typo.yaml", "veomni", "neox")
    error = caught.value
    assert error.line == 12 and error.key == "model.optimizer.lr_warmup_ration"
    assert '"model.optimizer.lr_warmup_ration is not a field of OptimizerConfig"' in error.message
    assert error.message.endswith("did you mean model.optimizer.lr_warmup_ratio?")


def test_the_same_typo_in_a_nested_file_stays_unknown_as_that_parser_ignored_it() -> None:
    result = translate(STRICT / "nested-typo.yaml", "veomni", "neox")
    assert result.report.source["version"] == "#1021"
    unknown = [e for e in result.report.entries if e.status.value == "unknown"]
    assert [e.source_key for e in unknown] == ["train.optimizer.lr_warmup_ration"]
    assert result.config["optimizer"]["params"]["lr"] == 4.0e-4


def test_a_nested_file_read_as_1090_is_refused_where_veomni_names_the_new_place() -> None:
    with pytest.raises(InputError) as caught:
        translate(STRICT / "nested-typo.yaml", "veomni", "neox", source_version="#1090")
    assert caught.value.line == 12  # train.init_device, the first moved key of the file
    assert '"train.init_device has moved to model.accelerator.init_device"' in caught.value.message


def test_a_dotted_yaml_key_is_one_key_to_the_strict_parser() -> None:
    with pytest.raises(InputError) as caught:
        translate(STRICT / "scoped-dotted.yaml", "veomni", "neox")
    assert caught.value.line == 5
    assert '"model.optimizer.lr is not a field of ModelArguments"' in caught.value.message
    assert "write model.optimizer.lr nested" in caught.value.message


def test_a_key_of_an_older_release_is_refused_and_says_where_it_was_read() -> None:
    with pytest.raises(InputError) as caught:
        translate(STRICT / "scoped-rmpad.yaml", "veomni", "neox")
    message = caught.value.message
    assert '"train.rmpad is not a field of TrainingArguments"' in message
    assert "(train.rmpad is read by VeOmni fb1b0b2d.." in message


def test_the_command_exits_2_with_one_line_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.yml"
    result = CliRunner().invoke(main, ["veomni2neox", str(STRICT / "scoped-typo.yaml"), "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "scoped-typo.yaml:12:" in lines[0] and "OptimizerConfig" in lines[0]


def test_the_config_json_beside_a_scoped_file_is_not_checked_as_its_keys() -> None:
    # the architecture file's keys (hidden_size, ...) are HF's, read by transformers: not VeOmni fields
    veomni = STRICT.parent
    result = translate(
        veomni / "tinyllama-scoped.yaml", "veomni", "neox", model_config=str(veomni / "tinyllama" / "config.json")
    )
    assert result.report.source["version"] in ("#1090", "#1125")
    assert result.config["hidden_size"] == 2048 and result.config["num_layers"] == 22
