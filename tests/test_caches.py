"""The engine's per-table caches (defaults, recurring readings, stray-key classes) and the YAML
spelling caches must never change a result: every corpus file translates to the same text and
report with caches warm (in another order, after other files) as with caches empty."""

from __future__ import annotations

import json
import random

import pytest

from neoconv.api import translate
from neoconv.core.errors import NeoconvError
from neoconv.knowledge.mapping import load_table
from neoconv.knowledge.registry import FORMATS

from conftest import FIXTURES, corpus_dir, corpus_files

PAIRS = [
    ("neox", "cerebras", "neox", "**/*.yml"),
    ("cerebras", "neox", "cerebras-legacy", "**/*.yaml"),
    ("deepspeed", "neox", "deepspeed", "**/*.json"),
    ("veomni", "neox", "veomni", "**/*.yaml"),
]


def _clear_caches() -> None:
    from neoconv.io import yamlread, yamlwrite
    from neoconv.knowledge import versions
    from neoconv.schedule import fields

    for fmt in FORMATS:
        for table in (load_table(fmt), *load_table(fmt)._layouts.values()):
            table.default_reads.clear()
            table.value_reads.clear()
            table.leaf_kinds.clear()
            for rule in table.rules:
                rule.writes.clear()
    yamlread._RESOLVED.clear()
    yamlwrite._SPELLED.clear()
    versions._DETECTED.clear()
    for cache in (fields._PARSED, fields._RENDERED, fields._COMPARED, fields._SUMMARISED):
        cache.clear()


def _result(path: str, src: str, dst: str) -> tuple[str, str]:
    try:
        done = translate([path], src, dst, world_size=8)
    except NeoconvError as exc:
        return "error", str(exc)
    return done.dump(), json.dumps(done.report.to_json(), sort_keys=True)


@pytest.mark.slow
@pytest.mark.parametrize("src,dst,folder,pattern", PAIRS, ids=[f"{s}2{d}" for s, d, _, _ in PAIRS])
def test_warm_caches_give_what_empty_caches_give(src: str, dst: str, folder: str, pattern: str) -> None:
    corpus_dir(folder)  # skips, saying why, when the corpus is not beside the checkout
    files = [str(p) for p in corpus_files(folder, pattern)]
    assert files
    cold = {}
    for path in files:
        _clear_caches()
        cold[path] = _result(path, src, dst)
    warm_order = files * 2
    random.Random(8).shuffle(warm_order)
    for path in warm_order:
        assert _result(path, src, dst) == cold[path], path


def test_recurring_values_are_told_apart_by_type_and_sign(tmp_path) -> None:
    base = "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\nmax_position_embeddings: 128\n"
    outputs: dict[str, set[tuple[str, str]]] = {}
    for run, spelled in enumerate(("0", "0.0", "-0.0", "false", "0", "-0.0")):
        (tmp_path / str(run)).mkdir()
        path = tmp_path / str(run) / "c.yml"
        path.write_text(base + f"hidden_dropout: {spelled}\nweight_decay: {spelled}\n")
        text, report = _result(str(path), "neox", "cerebras")
        outputs.setdefault(spelled, set()).add((text, report.replace(str(path), "c.yml")))
    assert all(len(v) == 1 for v in outputs.values())  # the same spelling reads the same every time
    assert outputs["0"] != outputs["false"] and outputs["0.0"] != outputs["-0.0"]


def test_blocks_in_reading_keys_are_told_apart_by_type_order_and_size() -> None:
    from neoconv.engine.rule import memo_key

    rule = load_table("cerebras").read_order[0]
    key = lambda block: memo_key(rule, "2.4", {"k": block})  # noqa: E731
    assert key([{"a": 1}]) == key([{"a": 1}])
    assert len({key([{"a": 1}]), key([{"a": 1.0}]), key([{"a": True}]), key({"a": 1}), key([1])}) == 5
    assert key({"a": 1, "b": 2}) != key({"b": 2, "a": 1})
    assert key([0.0]) != key([-0.0])
    assert key(list(range(100))) is None  # a large block is read afresh: no key
    assert key([{"a": object()}]) is None


def test_a_remembered_schedule_is_handed_out_as_a_copy() -> None:
    path = str(FIXTURES / "inputs" / "neox" / "pythia-160m.yml")
    _clear_caches()
    cold = _result(path, "neox", "cerebras")
    first = translate([path], "neox", "cerebras", world_size=8)
    phases = first.ir.fields["schedule.phases"].value
    phases[0]["length"] = 123456  # a caller changing its IR changes no later translation
    phases.append({"kind": "constant", "length": 7, "start": 1.0, "end": 1.0})
    assert _result(path, "neox", "cerebras") == cold
