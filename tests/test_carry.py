"""Cross-format translations carry the source's comments over to the keys they map to, where that
is unambiguous (issue 17): the header under neoconv's own, lines above a key, inline comments."""

from __future__ import annotations

from pathlib import Path

import yaml

from neoconv import translate
from neoconv.io.carry import source_comments
from neoconv.services.output_text import output_text

from conftest import FIXTURES

LEGACY = FIXTURES / "preserve" / "cerebras-legacy.yaml"


def test_comments_go_with_the_keys_they_map_to(tmp_path: Path) -> None:
    result = translate(LEGACY, "cerebras", "neox")
    text = output_text(result, str(LEGACY))
    assert yaml.safe_load(text) == yaml.safe_load(result.dump())  # comments only
    lines = text.splitlines()
    assert lines[3] == "# GPT-3 111M, one CS-2: the smallest model of our scaling sweep."  # under neoconv's header
    assert "layernorm_epsilon: 1.0e-05  # 1.0e-12 for single precision" in lines
    at = lines.index("train_batch_size: 120  # 120 = 120 * 1 * 1")
    assert lines[at - 1] == "# global batch = micro batch * num_csx * grad accum steps"
    assert lines[lines.index("train_iters: 9037") - 1] == "# steps = tokens / (batch_size * 2048)"
    assert result.report.target["comments_carried"] == 5


def test_a_comment_stays_behind_when_its_key_is_not_one_to_one() -> None:
    """`# warm-up` sits on the Cerebras schedule, which becomes several NeoX keys (and they come from
    more than it): no single key to put it on."""
    text = output_text(translate(LEGACY, "cerebras", "neox"), str(LEGACY))
    assert "warm-up" not in text and "use_cs_grad_accum" not in text


def test_neox_braces_files_and_block_scalars_are_read_by_indentation() -> None:
    lines = [
        "# header",
        "{",
        "  # the width",
        '  "hidden-size": 64,  # a comment',
        '  "optimizer": {',
        '    "type": "Adam",',
        "    # peak",
        '    "lr": 0.1',
        "  },",
        '  "note": |',
        "    # not a comment: data",
        '  "x": "a # b"',
        "}",
    ]
    header, notes = source_comments(lines, lambda k: k.replace("-", "_"))
    assert header == ["# header"]
    assert notes["hidden_size"][0] == ["# the width"] and notes["optimizer.lr"][0] == ["# peak"]
    assert "note.# not a comment" not in str(notes) and notes["x"][0] == []


def test_same_format_and_json_targets_are_not_touched_by_it(tmp_path: Path, pythia160m: Path) -> None:
    result = translate(pythia160m, "neox", "deepspeed")
    assert output_text(result, None) == result.dump() and "comments_carried" not in result.report.target
