"""Semantic diff, round trip and format detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neoconv import InputError, translate
from neoconv.api import read_ir
from neoconv.cli import main
from neoconv.formats.detect import detect_file
from neoconv.services.diff import diff_ir, roundtrip
from neoconv.core.report import Status

from conftest import CORPUS, corpus_dir


def test_neox_against_its_cerebras_translation_differs_only_where_the_report_says(
    pythia160m: Path, tmp_path: Path
) -> None:
    out = tmp_path / "params.yaml"
    done = translate(pythia160m, "neox", "cerebras", world_size=8)
    out.write_text(done.dump())
    result = diff_ir(read_ir([str(pythia160m)], "neox", world_size=8), read_ir([str(out)], "cerebras"))
    # Cerebras runs NeoX's schedule step for step (its first step at lr / W, the cosine rising again);
    # the phase lists differ, the lrs do not. Cerebras takes the sequence length from its data
    assert [(c.field, c.a, c.b) for c in result.changed + result.only_a + result.only_b] == [
        ("model.seq_length", 2048, None)
    ]
    assert done.report.by_source()["seq_length"].status is Status.DROPPED
    # what Cerebras cannot express is listed, not counted as a difference
    assert "parallel.zero_stage" in {c.field for c in result.inexpressible}


def test_two_real_neox_configs_show_their_real_differences() -> None:
    corpus_dir("neox")
    a = read_ir([str(CORPUS / "neox" / "pythia" / "160M.yml")], "neox")
    b = read_ir([str(CORPUS / "neox" / "pythia" / "410M.yml")], "neox")
    result = diff_ir(a, b, rtol=1e-6)
    changed = {c.field: (c.a, c.b) for c in result.changed}
    assert changed["model.num_layers"] == (12, 24)
    assert changed["model.hidden_size"] == (768, 1024)
    assert changed["model.num_heads"] == (12, 16)
    # the schedules, by their lrs: 160M peaks at 6e-4, 410M at 3e-4 (the optimizer's lr is part of them)
    phases = next(c for c in result.changed if c.field == "schedule.phases")
    assert phases.difference == (0.0003, 1430) and "optim.lr" not in changed
    assert "lrs differ by up to 0.0003 (first at step 1430)" in result.render()
    assert "cosine 0.0006 -> 6e-05 (1 step of 141570), and on" in result.render()
    assert "model.rotary_fraction" not in changed  # both 0.25
    assert "train.steps" not in changed  # both 143000


def test_numeric_tolerance(tmp_path: Path) -> None:
    a, b = tmp_path / "a.yml", tmp_path / "b.yml"
    a.write_text(
        '{"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "optimizer": {"type": "Adam", "params": {"lr": 9.7e-5}}}'
    )
    b.write_text(
        '{"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "optimizer": {"type": "Adam", "params": {"lr": 0.000097}}}'
    )
    assert diff_ir(read_ir([str(a)], "neox"), read_ir([str(b)], "neox")).equal


def test_diff_cli_exit_codes_and_json(runner, tmp_path: Path, pythia160m: Path) -> None:
    other = tmp_path / "other.yml"
    # (the attention pattern covers every layer: NeoX asserts it)
    other.write_text(
        pythia160m.read_text()
        .replace('"num_layers": 12', '"num_layers": 24')
        .replace('[["flash"], 12]', '[["flash"], 24]')
    )
    result = runner.invoke(main, ["diff", str(pythia160m), str(other), "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["changed"] == [
        {"field": "model.num_layers", "a": 12, "b": 24, "a_keys": ["num_layers"], "b_keys": ["num_layers"]}
    ]
    result = runner.invoke(main, ["diff", str(pythia160m), str(pythia160m)])
    assert result.exit_code == 0 and "equal" in result.stdout


def test_roundtrip_neox_cerebras_keeps_expressible_fields(pythia160m: Path) -> None:
    result, there, back = roundtrip(
        [str(pythia160m)], "neox", "cerebras", world_size=8, set_values={"model.vocab_size": 50304}
    )
    lost = {c.field for c in result.changed + result.only_a}
    assert not lost, result.render()
    assert "parallel.zero_stage" in {c.field for c in result.inexpressible}


def test_detection(tmp_path: Path, pythia160m: Path) -> None:
    assert detect_file(str(pythia160m)) == "neox"
    out = tmp_path / "params.yaml"
    out.write_text(translate(pythia160m, "neox", "cerebras").dump())
    assert detect_file(str(out)) == "cerebras"
    odd = tmp_path / "odd.yml"
    odd.write_text("colour: blue\nshape: round\n")
    with pytest.raises(InputError, match="cannot tell"):
        detect_file(str(odd))


def test_diff_speaks_the_users_keys_and_the_reports_statuses(runner, tmp_path: Path) -> None:
    source = Path(__file__).resolve().parent.parent / "fixtures" / "inputs" / "cerebras" / "llama-warmup-cosine.yaml"
    trainer, out, report = tmp_path / "trainer.yaml", tmp_path / "neox.yml", tmp_path / "report.json"
    assert (
        runner.invoke(
            main, ["cerebras2cerebras", str(source), "--layout", "trainer", "-o", str(trainer), "-q"]
        ).exit_code
        == 0
    )
    assert (
        runner.invoke(main, ["cerebras2neox", str(trainer), "-o", str(out), "--report", str(report), "-q"]).exit_code
        == 0
    )
    result = runner.invoke(main, ["diff", str(trainer), str(out), "--report", str(report), "--json"])
    assert result.exit_code == 1, result.stderr
    data = json.loads(result.stdout)
    # the trainer paths the user wrote, not the legacy view the tables read (optimizer.learning_rate)
    # the trainer paths the user wrote, not the legacy view the tables read (optimizer.learning_rate); the
    # schedules by their lrs: NeoX's first step at lr / W where Cerebras' warmup starts at 0
    (change,) = data["changed"]
    assert change["field"] == "schedule.phases" and change["a_keys"] == ["trainer.init.schedulers"]
    assert change["b_keys"][0] == "optimizer.params.lr" and change["report"] == ["lossy"]
    assert change["difference"] == {"lr": 1.5e-07, "step": 0}
    vocab = next(c for c in data["not_expressible_in_both"] if c["field"] == "model.vocab_size")
    assert vocab["a_keys"] == ["trainer.init.model.vocab_size"]
    shown = runner.invoke(main, ["diff", str(trainer), str(out), "--report", str(report)]).stdout
    assert "changed  schedule.phases: lrs differ by up to 1.5e-07 (first at step 0)  [report: lossy]" in shown
    # what B cannot hold is shown with what the report said of it, like every other difference
    assert (
        "only-A   model.vocab_size: 32000 (trainer.init.model.vocab_size) (GPT-NeoX holds no value for it: NeoX pads the "
        "tokenizer's vocabulary at run time (make_vocab_size_divisible_by x model_parallel_size): give the tokenizer "
        "files)  [report: dropped]"
    ) in shown
    # and what only B has: the values the NeoX writer added so that NeoX loads the file, which Cerebras
    # has no value for (it accumulates by itself; it has no ZeRO), named by the report as added
    assert (
        "only-B   batch.grad_accum: 1 (train_batch_size, gradient_accumulation_steps) (Cerebras Model Zoo holds no "
        "value for it: Cerebras accumulates gradients automatically; the global batch is what carries over)  "
        "[report: defaulted]"
    ) in shown
    assert (
        "only-B   parallel.zero_stage: 0 (zero_optimization.stage) (Cerebras Model Zoo holds no value for it: "
        "Cerebras weight streaming has no ZeRO sharding)  [report: defaulted]"
    ) in shown
    grad_accum = next(c for c in data["not_expressible_in_both"] if c["field"] == "batch.grad_accum")
    assert grad_accum["a"] is None and grad_accum["b"] == 1 and grad_accum["report"] == ["defaulted"]
    assert grad_accum["not_held"].startswith("Cerebras Model Zoo holds no value for it: Cerebras accumulates")
    assert (
        "A (trainer.init.schedulers): linear 0 -> 0.0003 (2000 steps); cosine 0.0003 -> 3e-05 (474837 steps)" in shown
    )


def test_a_value_the_user_set_is_named_by_the_report_as_set(runner, pythia160m: Path, tmp_path: Path) -> None:
    # --set values differ from the source (or exist only in the output) because the user asked: the
    # report's set_written entries name them, so diff counts them as named
    out, report = tmp_path / "out.yaml", tmp_path / "report.json"
    args = [
        "neox2cerebras",
        str(pythia160m),
        "--world-size",
        "8",
        "--set",
        "model.vocab_size=50304",
        "-o",
        str(out),
        "--report",
        str(report),
        "-q",
    ]
    assert runner.invoke(main, args).exit_code == 0
    data = json.loads(
        runner.invoke(
            main, ["diff", str(pythia160m), str(out), "--report", str(report), "--world-size", "8", "--json"]
        ).stdout
    )
    differences = [*data["changed"], *data["not_expressible_in_both"]]
    vocab = next(c for c in differences if c["field"] == "model.vocab_size")
    assert vocab["a"] is None and vocab["b"] == 50304 and vocab["report"] == ["set"]
    shown = runner.invoke(
        main, ["diff", str(pythia160m), str(out), "--report", str(report), "--world-size", "8"]
    ).stdout
    assert "model.vocab_size: 50304" in shown and "[report: set]" in shown
    assert "not named as a loss" not in shown and "[report: no entry]" not in shown
