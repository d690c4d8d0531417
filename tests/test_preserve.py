"""The format-preserving rewrite engine on small hand-written cases (no shared corpus needed).

Each case states the source text, the target document and the moves, and the exact text expected;
the fixture tests run real same-format migrations of fixtures/preserve/* through the same oracle
the corpus test uses (comments counted, diff bounded, document equal)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import FIXTURES
from preserve_oracle import comment_texts, diff_problems, strictly_equal

from neoconv import translate
from neoconv.io.preserve import moves_from_report, preserve

HERE = FIXTURES / "preserve"


def _yaml(source: str, target: dict[str, Any], moves: list[tuple[str, str]] | None = None) -> str:
    rewrite = preserve(source, target, moves or [], "yaml")
    assert rewrite.preserved, rewrite.note
    assert strictly_equal(yaml.safe_load(rewrite.text), target)
    return rewrite.text


# -- YAML: what stays exactly as written


def test_an_unchanged_document_comes_back_byte_for_byte() -> None:
    source = "\ufeff# header\r\nlr: 3.0e-4   # peak\r\nflags: [a, 'b']\r\nname: \"x\"\r\nlast: 1"
    rewrite = preserve(source, {"lr": 3.0e-4, "flags": ["a", "b"], "name": "x", "last": 1}, [], "yaml")
    assert rewrite.text == source and rewrite.preserved


def test_a_changed_value_is_replaced_on_its_line_keeping_spacing_quotes_and_comment() -> None:
    source = 'a: 1\nlr:   3.0e-4    # peak, from the sweep\nname: "run-1"  # shown in wandb\nb: 2\n'
    assert _yaml(source, {"a": 1, "lr": 1.0e-4, "name": "run-2", "b": 2}) == (
        'a: 1\nlr:   0.0001    # peak, from the sweep\nname: "run-2"  # shown in wandb\nb: 2\n'
    )


def test_number_spellings_flow_lists_and_quoting_of_unchanged_values_are_kept() -> None:
    source = "x: 3.0e-4\nbetas: [0.9, 0.95]\ns: 'single'\nd: \"double\"\nyes_text: 'yes'\nchanged: 1\n"
    target = {"x": 3.0e-4, "betas": [0.9, 0.95], "s": "single", "d": "double", "yes_text": "yes", "changed": 2}
    assert _yaml(source, target) == source.replace("changed: 1", "changed: 2")


def test_a_changed_flow_list_stays_a_flow_list_on_its_line() -> None:
    assert (
        _yaml("betas: [0.9, 0.95]  # Adam\nk: 1\n", {"betas": [0.9, 0.999], "k": 1})
        == "betas: [0.9, 0.999]  # Adam\nk: 1\n"
    )


def test_a_moved_key_takes_the_comments_above_it_and_its_inline_comment() -> None:
    source = (
        "# file header\n\ntrain:\n  epochs: 3\n  # steps = 2T / (batch_size * 4096)\n  lr: 3.0e-4   # peak\n  seed: 1\n"
    )
    target = {"train": {"epochs": 3, "optimizer": {"lr": 3.0e-4}, "seed": 1}}
    assert _yaml(source, target, [("train.lr", "train.optimizer.lr")]) == (
        "# file header\n"
        "\n"
        "train:\n"
        "  epochs: 3\n"
        "  optimizer:\n"
        "    # steps = 2T / (batch_size * 4096)\n"
        "    lr: 3.0e-4   # peak\n"
        "  seed: 1\n"
    )


def test_a_renamed_key_keeps_its_place_value_text_and_comment() -> None:
    source = "a: 1\nold_name: 0x10  # hex on purpose\nz: 2\n"
    assert _yaml(source, {"a": 1, "new_name": 16, "z": 2}, [("old_name", "new_name")]) == (
        "a: 1\nnew_name: 0x10  # hex on purpose\nz: 2\n"
    )


def test_a_moved_mapping_is_shifted_as_one_block_with_its_inner_comments() -> None:
    source = (
        "model:   # the network\n"
        "    hidden: 768\n"
        "\n"
        "    # attention\n"
        "    heads: 12   # 64 per head\n"
        "run:\n"
        "    steps: 10\n"
    )
    target = {"trainer": {"init": {"model": {"hidden": 768, "heads": 12}}}, "run": {"steps": 10}}
    moves = [("model.hidden", "trainer.init.model.hidden"), ("model.heads", "trainer.init.model.heads")]
    assert _yaml(source, target, moves) == (
        "trainer:\n"
        "    init:\n"
        "        model:   # the network\n"
        "            hidden: 768\n"
        "\n"
        "            # attention\n"
        "            heads: 12   # 64 per head\n"
        "run:\n"
        "    steps: 10\n"
    )


def test_added_keys_go_where_the_target_puts_them_in_the_files_indentation() -> None:
    source = "a:\n    x: 1\n    z: 3\nlist:\n  - 1\n"
    target = {"a": {"x": 1, "y": {"deep": [1, 2]}, "z": 3}, "list": [1]}
    assert (
        _yaml(source, target)
        == "a:\n    x: 1\n    y:\n        deep:\n          - 1\n          - 2\n    z: 3\nlist:\n  - 1\n"
    )


def test_keys_that_stay_keep_the_source_order_even_when_the_target_orders_them_differently() -> None:
    # `new` follows `a`, the key the target puts before it
    assert _yaml("b: 1\na: 2\nc: 3\n", {"a": 2, "new": 0, "b": 1, "c": 3}) == "b: 1\na: 2\nnew: 0\nc: 3\n"


def test_a_removed_key_takes_its_own_comments_but_leaves_its_neighbours() -> None:
    source = "a: 1\n# about the next group\n\n# b only\nb: 2  # b inline\nc: 3  # c stays\n"
    rewrite = preserve(source, {"a": 1, "c": 3}, [], "yaml")
    assert rewrite.text == "a: 1\n# about the next group\n\nc: 3  # c stays\n"
    assert rewrite.dropped_comments == ["# b only", "# b inline"]


def test_two_keys_folded_into_one_keep_both_comments() -> None:
    source = "mode: fsdp1   # legacy\nfull_shard: true  # shard everything\nk: 1\n"
    target = {"fsdp": {"mode": "fsdp2"}, "k": 1}
    text = _yaml(source, target, [("mode", "fsdp.mode"), ("full_shard", "fsdp.mode")])
    assert text == "fsdp:\n  # shard everything\n  mode: fsdp2   # legacy\nk: 1\n"


def test_a_mapping_taken_apart_leaves_its_comment_with_its_first_key() -> None:
    source = "z: 0\n\n### Run settings\nrun:\n  steps: 10\n  log: 1\n"
    target = {"z": 0, "loop": {"steps": 10}, "logging": {"log": 1}}
    text = _yaml(source, target, [("run.steps", "loop.steps"), ("run.log", "logging.log")])
    assert text == "z: 0\nloop:\n  ### Run settings\n  steps: 10\nlogging:\n  log: 1\n"


def test_comments_inside_a_value_that_is_rewritten_whole_move_above_it() -> None:
    source = "sched:\n  - name: linear  # warm-up\n    steps: 10\n  # then flat\n  - name: constant\nk: 1\n"
    target = {"sched": [{"LinearLR": {"steps": 10}}, {"ConstantLR": {}}], "k": 1}
    assert _yaml(source, target) == (
        "# warm-up\n# then flat\nsched:\n  - LinearLR:\n      steps: 10\n  - ConstantLR: {}\nk: 1\n"
    )


def test_a_text_that_yaml_would_read_as_a_date_is_quoted_when_the_target_has_text() -> None:
    assert (
        _yaml("run: 2024-01-01  # the date we started\n", {"run": "2024-01-01"})
        == "run: '2024-01-01'  # the date we started\n"
    )


def test_a_block_scalar_moves_with_its_indentation_shifted() -> None:
    source = "prompt: |\n  line one\n    indented\nk: 1\n"
    target = {"data": {"prompt": "line one\n  indented\n"}, "k": 1}
    assert (
        _yaml(source, target, [("prompt", "data.prompt")]) == "data:\n  prompt: |\n    line one\n      indented\nk: 1\n"
    )


def test_crlf_line_endings_are_kept_for_new_lines_too() -> None:
    text = _yaml("# h\r\nx: 1\r\ny: 2\r\n", {"x": 1, "y": 3, "z": {"w": 1}})
    assert text == "# h\r\nx: 1\r\ny: 3\r\nz:\r\n  w: 1\r\n"


def test_no_line_break_at_the_end_stays_that_way() -> None:
    assert _yaml("a: 1\nb: 2", {"a": 1, "b": 3}) == "a: 1\nb: 3"


def test_comments_that_open_the_file_are_its_header_even_with_no_blank_line() -> None:
    source = "# Data manifest: which datasets, mixed how\nsources:\n- a\nk: 1\n"
    assert _yaml(source, {"k": 1}) == "# Data manifest: which datasets, mixed how\nk: 1\n"


def test_every_key_removed_leaves_an_empty_mapping_not_an_empty_document() -> None:
    assert _yaml("# data mix, not a config\n\nsources:\n- a\n", {}) == "# data mix, not a config\n\n{}\n"


def test_keys_with_dots_resolve_as_written() -> None:
    source = "train.lr: 1.0e-3  # flat key\nk: 1\n"
    target = {"train": {"optimizer": {"lr": 1.0e-3}}, "k": 1}
    text = _yaml(source, target, [("train.lr", "train.optimizer.lr")])
    assert text == "train:\n  optimizer:\n    lr: 1.0e-3  # flat key\nk: 1\n"


# -- YAML: what cannot be kept falls back, and says why


def test_an_anchor_the_migration_changes_falls_back_to_the_plain_dump_and_says_why() -> None:
    source = "base: &b {k: 1}\nother: *b\n"
    target = {"base": {"k": 2}, "other": {"k": 1}}
    rewrite = preserve(source, target, [], "yaml", plain=lambda: "PLAIN\n")
    assert (rewrite.preserved, rewrite.text) == (False, "PLAIN\n")
    assert "anchors and aliases" in rewrite.note


def test_an_alias_the_migration_leaves_alone_is_kept() -> None:
    source = "base: &b {k: 1}\nother: *b\nn: 1\n"
    assert _yaml(source, {"base": {"k": 1}, "other": {"k": 1}, "n": 2}) == source.replace("n: 1", "n: 2")


def test_a_one_line_flow_mapping_document_falls_back() -> None:
    rewrite = preserve("{a: 1, b: 2}\n", {"a": 1, "b": 3}, [], "yaml")
    assert not rewrite.preserved and "one key a line" in rewrite.note
    assert yaml.safe_load(rewrite.text) == {"a": 1, "b": 3}


def test_a_merge_key_mapping_is_rewritten_whole_and_still_loads_to_the_target() -> None:
    source = "base: &b\n  k: 1\nrun:\n  <<: *b\n  j: 2\n"
    target = {"base": {"k": 1}, "run": {"k": 1, "j": 3}}
    rewrite = preserve(source, target, [], "yaml")
    assert strictly_equal(yaml.safe_load(rewrite.text), target)
    assert rewrite.text.startswith("base: &b\n  k: 1\n")


def test_a_bad_fmt_is_refused() -> None:
    with pytest.raises(ValueError, match="yaml' or 'json"):
        preserve("a: 1\n", {"a": 1}, [], "toml")


# -- JSON


DS_CONFIG = (
    "{\n"
    '    "train_batch_size": 32,\n'
    '    "lr": 3e-4,\n'
    '    "betas": [0.9, 0.999],\n'
    '    "zero_optimization": {\n'
    '        "stage": 2,\n'
    '        "cpu_offload": true\n'
    "    }\n"
    "}\n"
)


def test_json_keeps_indent_width_order_and_number_spelling() -> None:
    target = {
        "train_batch_size": 64,
        "lr": 3e-4,
        "betas": [0.9, 0.999],
        "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}},
        "fp16": {"enabled": True},
    }
    rewrite = preserve(
        DS_CONFIG, target, [("zero_optimization.cpu_offload", "zero_optimization.offload_optimizer.device")], "json"
    )
    assert rewrite.preserved and strictly_equal(json.loads(rewrite.text), target)
    assert rewrite.text == (
        "{\n"
        '    "train_batch_size": 64,\n'
        '    "lr": 3e-4,\n'
        '    "betas": [0.9, 0.999],\n'
        '    "zero_optimization": {\n'
        '        "stage": 2,\n'
        '        "offload_optimizer": {\n'
        '            "device": "cpu"\n'
        "        }\n"
        "    },\n"
        '    "fp16": {\n'
        '        "enabled": true\n'
        "    }\n"
        "}\n"
    )


def test_json_unchanged_is_byte_for_byte_and_a_one_line_file_stays_on_one_line() -> None:
    assert preserve(DS_CONFIG, json.loads(DS_CONFIG), [], "json").text == DS_CONFIG
    one = '{"a": 1, "b": [1, 2], "c": {"d": 1}}'
    assert (
        preserve(one, {"a": 2, "b": [1, 2], "c": {"d": 1}}, [], "json").text == '{"a": 2, "b": [1, 2], "c": {"d": 1}}'
    )


def test_json_crlf_and_a_renamed_key_keep_their_place() -> None:
    source = '{\r\n  "a": 1,\r\n  "old": {\r\n    "c": 2\r\n  },\r\n  "z": 0\r\n}\r\n'
    rewrite = preserve(source, {"a": 1, "new": {"c": 2}, "z": 0}, [("old.c", "new.c")], "json")
    assert rewrite.text == '{\r\n  "a": 1,\r\n  "new": {\r\n    "c": 2\r\n  },\r\n  "z": 0\r\n}\r\n'


def test_json_that_is_not_json_falls_back() -> None:
    rewrite = preserve('{\n  // a comment\n  "a": 1\n}\n', {"a": 2}, [], "json")
    assert not rewrite.preserved and json.loads(rewrite.text) == {"a": 2}


# -- real migrations of hand-written fixtures, through the corpus test's oracle


def _check_migration(path: Path, fmt: str, layout: str, text: str | None = None) -> str:
    result = translate(path, fmt, fmt, layout=layout)
    source = text if text is not None else path.read_text(encoding="utf-8")
    target = dict(result.config)
    rewrite = preserve(source, target, moves_from_report(result.report), "yaml", plain=result.dump)
    assert rewrite.preserved, rewrite.note
    assert strictly_equal(yaml.safe_load(rewrite.text), target)
    before, after = comment_texts(source), comment_texts(rewrite.text)
    assert before - after == dict.fromkeys(rewrite.dropped_comments, 1) and after - before == {}
    assert diff_problems(source.replace("\r\n", "\n"), rewrite.text.replace("\r\n", "\n"), target) == []
    return rewrite.text


def test_veomni_flat_to_nested_fixture() -> None:
    text = _check_migration(HERE / "veomni-flat.yaml", "veomni", "nested")
    assert (
        "  optimizer:\n    # steps = 2T / (batch_size * 4096)\n    lr: 3.0e-4          # peak learning rate\n" in text
    )
    assert text.startswith("# Qwen3-8B SFT on tulu")
    assert "  data_type: 'conversation'\n" in text and "ops_to_save: [aten.addmm.default," in text


def test_cerebras_legacy_to_trainer_fixture() -> None:
    text = _check_migration(HERE / "cerebras-legacy.yaml", "cerebras", "trainer")
    assert "            layer_norm_epsilon: 1.0e-5 # 1.0e-12 for single precision\n" in text
    assert "# dropped by the trainer layout" not in text  # its key is gone (use_cs_grad_accum)


def test_crlf_fixture_migrates_with_crlf_kept(tmp_path: Path) -> None:
    crlf = (HERE / "veomni-flat.yaml").read_text().replace("\n", "\r\n")
    path = tmp_path / "crlf.yaml"
    path.write_bytes(crlf.encode())
    text = _check_migration(path, "veomni", "nested", crlf)
    assert text.count("\r\n") == text.count("\n") and text.endswith("\r\n")


# -- the pieces the wiring calls


def test_moves_come_from_report_entries_with_both_keys() -> None:
    from neoconv.core.report import Report, Status

    report = Report()
    report.add("train.lr", "train.optimizer.lr", Status.EXACT)
    report.add("train.data_parallel_mode", "train.accelerator.fsdp_config.fsdp_mode", Status.CONVERTED)
    report.add(
        "eval_input.batch_size",
        "trainer.fit.val_dataloader.batch_size, trainer.validate.val_dataloader.batch_size",
        Status.EXACT,
    )
    report.add("runconfig.use_cs_grad_accum", None, Status.DROPPED)
    report.add(None, "trainer.init.model.name", Status.DEFAULTED)
    assert moves_from_report(report) == [
        ("train.lr", "train.optimizer.lr"),
        ("train.data_parallel_mode", "train.accelerator.fsdp_config.fsdp_mode"),
        ("eval_input.batch_size", "trainer.fit.val_dataloader.batch_size"),
        ("eval_input.batch_size", "trainer.validate.val_dataloader.batch_size"),
    ]


def test_report_keys_resolve_through_keys_with_dots_and_into_lists() -> None:
    from neoconv.io.preserve.tree import resolve_target

    assert resolve_target({"a": 1, "a.b": 2}, "a.b") == ("a.b",)
    assert resolve_target({"a": {"b": 1}}, "a.b") == ("a", "b")
    assert resolve_target({"a": [{"x": 1}]}, "a.0.x") == ("a",)  # inside a list: the entry holding it
    assert resolve_target({3: {"k": 1}}, "3.k") == (3, "k")
    assert resolve_target({"a": 1}, "zz") is None


def test_a_move_into_a_list_keeps_the_lists_comments_with_it() -> None:
    source = "sched:  # the schedule\n  - {name: linear}\nk: 1\n"
    target = {"opt": {"sched": [{"name": "cosine"}]}, "k": 1}
    text = _yaml(source, target, [("sched.0.name", "opt.sched.0.name")])
    assert "# the schedule" in text and strictly_equal(yaml.safe_load(text), target)


def test_document_markers_stay_at_the_top_and_bottom_when_the_first_key_moves() -> None:
    source = "%YAML 1.1\n---\n# about old\nold: 1\nk: 2\n...\n"
    text = _yaml(source, {"new": {"old": 1}, "k": 3}, [("old", "new.old")])
    assert text == "%YAML 1.1\n---\nnew:\n  # about old\n  old: 1\nk: 3\n...\n"


# -- GPT-NeoX style: one {...} mapping, one key a line, comments between


NEOX = """# NeoX-style
{
  # parallelism
  "pipe-parallel-size": 1,
  "model-parallel-size": 2,   # two GPUs a layer

  "optimizer": {
    "type": "Adam",
    "params": {
      "lr": 0.0006,
      "eps": 1.0e-8
    }
  },
  "last": true
}
"""


def test_a_braces_mapping_is_edited_key_by_key_with_commas_where_needed() -> None:
    target = {
        "pipe_parallel_size": 1,
        "model_parallel_size": 2,
        "optimizer": {"type": "Adam", "params": {"lr": 0.0006, "eps": 1.0e-8, "betas": [0.9, 0.95]}},
        "last": True,
        "added": {"x": 1},
    }
    moves = [("pipe_parallel_size", "pipe_parallel_size"), ("model_parallel_size", "model_parallel_size")]
    assert _yaml(NEOX, target, moves) == (
        NEOX.replace('"pipe-parallel-size"', '"pipe_parallel_size"')
        .replace('"model-parallel-size"', '"model_parallel_size"')
        .replace('"eps": 1.0e-8\n', '"eps": 1.0e-8,\n      "betas": [0.9, 0.95]\n')
        .replace('"last": true\n', '"last": true,\n  "added": {\n    "x": 1\n  }\n')
    )


def test_removing_the_last_entries_of_a_braces_mapping_leaves_valid_yaml() -> None:
    moves = [("pipe_parallel_size", "pipe_parallel_size")]  # as NeoX reports it: its own spelling
    rewrite = preserve(
        NEOX, {"pipe_parallel_size": 1, "optimizer": {"type": "Adam", "params": {"lr": 0.0006}}}, moves, "yaml"
    )
    assert rewrite.preserved and yaml.safe_load(rewrite.text) == {
        "pipe_parallel_size": 1,
        "optimizer": {"type": "Adam", "params": {"lr": 0.0006}},
    }
    assert rewrite.text.startswith('# NeoX-style\n{\n  # parallelism\n  "pipe_parallel_size": 1,\n')
    assert rewrite.dropped_comments == ["# two GPUs a layer"]


def test_a_braces_mapping_emptied_loses_its_closing_brace_line_once() -> None:
    source = '{\n  "model": {\n    "on": {\n      "a": []\n    }\n  },\n  "k": 1\n}\n'
    assert _yaml(source, {"model": {"on": {}}, "k": 1}) == '{\n  "model": {\n    "on": {}\n  },\n  "k": 1\n}\n'
