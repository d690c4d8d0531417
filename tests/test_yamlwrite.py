"""neoconv.io.yamlwrite must write exactly what PyYAML writes (io.dump_yaml's settings), and take
the fast path for the shapes real configs have."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neoconv.io.documents import _PlainDumper
from neoconv.io.yamlwrite import dump


def pyyaml(data: Any, dumper: type = _PlainDumper) -> str:
    return yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=100)


class _PurePlainDumper(yaml.SafeDumper):
    """io._PlainDumper on PyYAML's pure-Python emitter (what runs where libyaml is missing)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


CONFIG_LIKE = {
    "model": {"name": "gpt2", "hidden_size": 768, "layer_norm_epsilon": 1.0e-05, "rotary": True, "dropout": 0.0},
    "optimizer": {"betas": [0.9, 0.95], "eps": 1e-08, "lr": 0.0006, "schedule": [{"total_iters": 10, "end": 1e16}]},
    "paths": ["data/train_text_document", "/mnt/ckpt/run-1", "./x", "/very/long/" + "x" * 120],
    "odd": ["yes", "No", "on", "null", "~", "1.0", "2024-01-02", "0x1F", "1_000", "12", "1e5", "a b c"],
    "nested": [[1, [2, 3]], [], {}, [{"a": {"b": [None, False]}}]],
    "empty": {},
    "inf": [float("inf"), float("-inf"), -0.0, 3.0, 123456789012345678901234567890],
}


def test_config_like_document_is_written_directly_and_as_pyyaml_writes_it() -> None:
    text = dump(CONFIG_LIKE)
    assert text is not None, "the common shapes must not fall back to PyYAML"
    assert text == pyyaml(CONFIG_LIKE) == pyyaml(CONFIG_LIKE, _PurePlainDumper)  # C or pure: the same text
    assert yaml.safe_load(text) == CONFIG_LIKE


@pytest.mark.parametrize(
    "value",
    ["", " lead", "trail ", "a: b", "a #b", "-x", "'q'", "tab\there", "multi\nline", "é", "w " * 60, ("t",), {1: 2}],
)
def test_hard_values_fall_back_to_pyyaml(value: Any) -> None:
    assert dump({"k": value}) is None


def test_nan_and_empty_document() -> None:
    assert dump({}) == pyyaml({}) == "{}\n"
    assert dump({"x": float("nan")}) == pyyaml({"x": float("nan")})


words = st.text(alphabet="abcxyzABZ019_./+@- ", min_size=0, max_size=30) | st.sampled_from(
    ["yes", "off", "null", "~", "1.5", "12", "0o7", "2001-12-14", "<<", "=", ".inf", "1e3", "1:20"]
)
scalars = st.none() | st.booleans() | st.integers() | st.floats() | words
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(words, inner, max_size=4), max_leaves=25
)


@settings(max_examples=300, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(words, values, max_size=6))
def test_fast_writer_matches_pyyaml_byte_for_byte(data: dict[str, Any]) -> None:
    text = dump(data)
    if text is not None:
        assert text == pyyaml(data) == pyyaml(data, _PurePlainDumper)
