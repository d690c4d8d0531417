"""Loss-proof translation (issue 12): what a translation changes, reading its output back shows,
and the report names. Regression tests with real values for each case the issue lists."""

from __future__ import annotations

from pathlib import Path

from translator import translate
from translator.report import Status

from conftest import FIXTURES

LLAMA_DEFAULTS = FIXTURES / "inputs" / "cerebras" / "llama-tiny-defaults.yaml"


def _entry(result, target_key: str):  # type: ignore[no-untyped-def]
    return next(e for e in result.report.entries if e.target_key and target_key in e.target_key.split(", "))


def test_a_default_eps_reaches_the_key_neox_reads_for_the_norm() -> None:
    # Model Zoo's layer_norm_epsilon default (1e-5) feeds an RMSNorm; NeoX's rms_norm_epsilon
    # defaults to 1e-8, so the value must be written although layernorm_epsilon's default is 1e-5
    result = translate(LLAMA_DEFAULTS, "cerebras", "neox")
    assert result.config["norm"] == "rmsnorm"
    assert result.config["rms_norm_epsilon"] == 1e-5
    entry = _entry(result, "rms_norm_epsilon")
    assert entry.status is Status.DEFAULTED and entry.fields == ("model.norm_eps",)
    assert "rms_norm_epsilon=1e-08" in entry.detail


def test_reading_the_output_back_names_what_it_does_not_recover(monkeypatch, pythia160m: Path) -> None:
    from translator.formats import cerebras

    write = cerebras.write

    def careless(leaves, meta):  # type: ignore[no-untyped-def]
        document = write(leaves, meta)
        document["model"]["hidden_size"] = 1536  # a writer bug the report would not know of
        return document

    monkeypatch.setattr(cerebras, "write", careless)
    result = translate(pythia160m, "neox", "cerebras", world_size=8)
    entry = result.report.by_source()["hidden_size"]
    assert entry.status is Status.LOSSY and entry.fields == ("model.hidden_size",)
    assert "model.hidden_size is 768 in the source, written as model.hidden_size=1536; reads back as 1536" in entry.detail
    # the rotary fraction is rotary_dim / head width: 16 of 1536 / 12 reads back as 0.125, not 0.25
    rotary = result.report.by_source()["rotary_pct"]
    assert rotary.status is Status.LOSSY and "reads back as 0.125" in rotary.detail
    assert result.report.target["verified"] is True and result.report.target["added_by_verification"] == 2
    assert result.report.to_json()["target"]["added_by_verification"] == 2


def test_a_translation_says_it_was_verified(pythia160m: Path) -> None:
    result = translate(pythia160m, "neox", "deepspeed", world_size=8)
    assert result.report.target["verified"] is True and result.report.target["added_by_verification"] == 0
    fast = translate(pythia160m, "neox", "deepspeed", world_size=8, verify=False)
    assert "verified" not in fast.report.target and fast.dump() == result.dump()


def test_an_output_that_cannot_be_read_back_says_so(tmp_path: Path) -> None:
    # a Mamba model keeps a head count it ignores; as Cerebras attention layers it cannot run
    path = tmp_path / "mamba.yml"
    path.write_text("num_layers: 2\nhidden_size: 64\nnum_attention_heads: 12\nattention_config: [[[mamba], 2]]\n"
                    "max_position_embeddings: 128\noptimizer: {type: Adam, params: {lr: 0.001}}\n")  # fmt: skip
    result = translate(path, "neox", "cerebras", set_values={"model.vocab_size": 256})
    assert result.report.target["verified"] is False
    assert result.report.by_source()["attention_config"].status is Status.LOSSY  # mamba blocks become attention
    unreadable = [e for e in result.report.entries if "cannot be read back" in e.detail]
    assert len(unreadable) == 1 and "not divisible by model.num_heads=12" in unreadable[0].detail
