"""Issue #27, VeOmni from PR #1090 on (strict parser): a key no release declares but that has the shape of a
setting (a field name under a known block, or a section of its own as a task script adds) is a fork's or a
development branch's (VeOmni@a653cf15 declares train.validation_metrics; the omniv2 branch an `infer` section):
`unknown`, the report saying no release declares it, and the rest translates. What is not a setting (a bare
value at the root, a name no dataclass field can have) stays refused, as do typos, moved and older keys
(tests/test_veomni_strict.py). Written for a strict release, such a key is left out and named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import cli_runner
from neoconv import translate
from neoconv.cli import main
from neoconv.core.errors import InputError

STRICT = Path(__file__).resolve().parent.parent / "fixtures" / "inputs" / "veomni" / "strict"
FORK = STRICT / "scoped-fork.yaml"


def _unknown(result: Any) -> dict[str, str]:
    return {e.source_key: e.detail for e in result.report.entries if e.status.value == "unknown"}


def test_a_fork_field_and_a_fork_section_are_unknown_and_the_rest_translates() -> None:
    result = translate(FORK, "veomni", "neox")
    assert result.report.source["version"] in ("#1090", "#1125")  # read as a strict release
    unknown = _unknown(result)
    assert sorted(unknown) == ["infer.max_new_tokens", "train.validation_metrics"]
    assert unknown["train.validation_metrics"].startswith("no VeOmni release declares train.validation_metrics")
    assert "no VeOmni release declares infer " in unknown["infer.max_new_tokens"]
    assert result.config["optimizer"]["params"]["lr"] == 4.0e-4
    assert result.config["train_batch_size"] == 1024 and result.config["train_micro_batch_size_per_gpu"] == 8
    assert result.config["seq_length"] == 2048


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    text = FORK.read_text()
    assert old in text
    path = tmp_path / "variant.yaml"
    path.write_text(text.replace(old, new).replace("../tinyllama", str(STRICT.parent / "tinyllama")))
    return path


def test_a_bare_value_at_the_root_is_not_a_setting_and_is_refused(tmp_path: Path) -> None:
    path = _variant(tmp_path, "infer:\n  max_new_tokens: 64\n", "fork_flag: true\n")
    with pytest.raises(InputError) as caught:
        translate(path, "veomni", "neox")
    assert caught.value.key == "fork_flag" and caught.value.line == 18
    assert '"fork_flag is not a field of the arguments root"' in caught.value.message


def test_a_name_no_dataclass_field_can_have_is_refused(tmp_path: Path) -> None:
    path = _variant(tmp_path, "validation_metrics:", "validation-metrics:")
    with pytest.raises(InputError) as caught:
        translate(path, "veomni", "neox")
    assert caught.value.key == "train.validation-metrics" and caught.value.line == 17


def test_a_typo_beside_a_declared_field_is_still_refused_with_did_you_mean(tmp_path: Path) -> None:
    path = _variant(tmp_path, "micro_batch_size: 8", "micro_batch_sise: 8")
    with pytest.raises(InputError) as caught:
        translate(path, "veomni", "neox")
    assert caught.value.line == 16 and caught.value.message.endswith("did you mean train.micro_batch_size?")


@pytest.mark.parametrize(
    ("release", "reason"),
    [
        ("#1125", "not a field of VeOmni #1125, whose parser refuses every key it does not declare: not written"),
        ("#1021", "not a VeOmni field (VeOmni's parser would ignore it): not written"),
    ],
)
def test_written_for_a_release_the_fork_keys_are_left_out_and_named(tmp_path: Path, release: str, reason: str) -> None:
    out = tmp_path / "out.yaml"
    args = ["veomni2veomni", str(FORK), "--to-version", release, "-o", str(out), "--report", str(tmp_path / "r.json")]
    run = cli_runner().invoke(main, args)
    assert run.exit_code == 0, run.output
    written = yaml.safe_load(out.read_text())
    assert "infer" not in written and "validation_metrics" not in written["train"]
    assert written["train"]["global_batch_size"] == 1024
    result = translate(FORK, "veomni", "veomni", target_version=release)
    dropped = {e.source_key: e.detail for e in result.report.entries if e.status.value == "dropped"}
    assert dropped["train.validation_metrics"].startswith(reason)
    assert dropped["infer.max_new_tokens"].startswith(reason)


def test_a_file_with_no_section_of_any_release_is_refused_as_not_a_config(tmp_path: Path) -> None:
    path = tmp_path / "data.yaml"
    path.write_text("steps: [encode, decode]\nname: edit\n")  # bare values at the root only
    with pytest.raises(InputError) as caught:
        translate(path, "veomni", "neox", source_version="#1125")
    assert "not a VeOmni config" in caught.value.message and "refuses" not in caught.value.message
