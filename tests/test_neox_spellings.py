"""GPT-NeoX's `-`/`_` twins as NeoXArgs.from_ymls reads them: each key is checked as written against the
keys so far, which are all stored with `_`. A repeat written with `_` is refused ("duplicate keys with
previously loaded file"); one written with `-` silently overwrites the earlier value, so the file runs
with the later value (Lisennlp/gpt-neox-j configs/6-7B.yml gives scaled_upper_triang_masked_softmax_fusion
at line 14 and its hyphen twin at line 55)."""

from __future__ import annotations

from pathlib import Path

import pytest

from neoconv import translate
from neoconv.core.errors import InputError

MODEL = "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\nmax_position_embeddings: 128\n"


def test_a_hyphen_twin_after_the_underscore_key_overwrites_it_and_is_named(tmp_path: Path) -> None:
    src = tmp_path / "6-7B.yml"
    src.write_text(MODEL + "hidden_dropout: 0.0\ntrain_iters: 10\nhidden-dropout: 0.25\n")
    result = translate(src, "neox", "neox")
    assert result.config["hidden_dropout"] == 0.25  # NeoX runs the later value
    note = result.report.source["note"]
    assert "'hidden_dropout' (line 6) and 'hidden-dropout' (line 8)" in note
    assert "the first, 0.0, is not used" in note


def test_the_underscore_twin_after_the_hyphen_key_is_refused_as_neox_refuses_it(tmp_path: Path) -> None:
    src = tmp_path / "a.yml"
    src.write_text(MODEL + "hidden-dropout: 0.0\nhidden_dropout: 0.25\n")
    with pytest.raises(InputError) as caught:
        translate(src, "neox", "neox")
    assert caught.value.line == 7 and "same NeoX setting" in str(caught.value)


def test_a_hyphen_twin_in_a_later_file_overwrites_the_first_files_value(tmp_path: Path) -> None:
    (tmp_path / "model.yml").write_text(MODEL + "hidden_dropout: 0.0\n")
    (tmp_path / "setup.yml").write_text("train_iters: 10\nhidden-dropout: 0.25\n")
    result = translate([tmp_path / "model.yml", tmp_path / "setup.yml"], "neox", "neox")
    assert result.config["hidden_dropout"] == 0.25
    assert "(line 6 of model.yml) and 'hidden-dropout' (line 2 of setup.yml)" in result.report.source["note"]
