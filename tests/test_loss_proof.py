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
