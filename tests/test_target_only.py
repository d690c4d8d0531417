"""Values only the output has (the target needs them, the source never said them) are report
entries of their own, and `neoconv diff` shows them with what the report said: nothing appears
silently. One case per target format that adds any, with real values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from neoconv import translate
from neoconv.api import read_ir
from neoconv.cli import main
from neoconv.services.diff import diff_ir
from neoconv.knowledge.registry import get_format
from neoconv.core.report import Status

from conftest import FIXTURES
from test_loss_proof import unnamed_differences

# the smallest legacy Model Zoo file: a global batch, no accumulation (Cerebras has no value for one)
CEREBRAS = """\
model: {hidden_size: 256, num_hidden_layers: 2, num_heads: 4, vocab_size: 1000, max_position_embeddings: 128}
optimizer: {optimizer_type: adamw, learning_rate: 0.001}
train_input: {batch_size: 8}
"""


def _cerebras(tmp_path: Path) -> Path:
    path = tmp_path / "to.yaml"
    path.write_text(CEREBRAS)
    return path


def _added(result: Any) -> dict[str, Any]:
    """target key -> the entry that says the translation added it"""
    return {e.target_key: e for e in result.report.entries if e.kind in ("added_for_target", "target_value")}


def test_neox_accumulation_added_for_a_cerebras_batch_is_reported_and_diff_says_so(runner, tmp_path: Path) -> None:
    source, out, report = _cerebras(tmp_path), tmp_path / "to-neox.yml", tmp_path / "report.json"
    done = runner.invoke(main, ["cerebras2neox", str(source), "-o", str(out), "--report", str(report)])
    assert done.exit_code == 0, done.stderr
    text = out.read_text()
    # the header still tells the file's readers, and the value is there
    assert "# added for NeoX to load it: gradient_accumulation_steps: 1 (the global batch is the micro batch x" in text
    assert "\ngradient_accumulation_steps: 1\n" in text
    # the text report names it, as defaulted
    assert "defaulted  -> gradient_accumulation_steps" in done.stderr
    assert "not in the source, added for GPT-NeoX: wrote gradient_accumulation_steps=1" in " ".join(done.stderr.split())
    # the JSON report: kind, fields, values
    (entry,) = [e for e in json.loads(report.read_text())["entries"] if e["kind"] == "added_for_target"]
    assert entry["status"] == "defaulted" and entry["source_key"] is None
    assert entry["target_key"] == "gradient_accumulation_steps" and entry["fields"] == ["batch.grad_accum"]
    assert entry["values"] == {
        "title": "GPT-NeoX",
        "written": {"gradient_accumulation_steps": 1},
        "why": "the global batch is the micro batch x data-parallel size",
    }
    # diff: the only-B line says why Cerebras holds no value (its table's reason, not "cannot express"),
    # and what the report said of it
    shown = runner.invoke(main, ["diff", str(source), str(out), "--report", str(report)]).stdout
    assert (
        "only-B   batch.grad_accum: 1 (train_batch_size, gradient_accumulation_steps) (Cerebras Model Zoo holds no "
        "value for it: Cerebras accumulates gradients automatically; the global batch is what carries over)  "
        "[report: defaulted]\n"
    ) in shown
    assert "cannot express" not in shown
    data = json.loads(runner.invoke(main, ["diff", str(source), str(out), "--report", str(report), "--json"]).stdout)
    (only_b,) = [c for c in data["not_expressible_in_both"] if c["a"] is None]
    assert only_b["field"] == "batch.grad_accum" and only_b["b"] == 1 and only_b["report"] == ["defaulted"]
    # a batch counts it with the file's statuses (8 defaulted: 7 of Model Zoo's defaults, and this one)
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.yaml").write_text(CEREBRAS)
    assert (
        runner.invoke(main, ["batch", "cerebras2neox", str(folder), "-o", str(tmp_path / "out"), "-j", "1"]).exit_code
        == 0
    )
    counts = json.loads((tmp_path / "out" / "neoconv-report.json").read_text())["files"][0]["counts"]
    assert (
        counts["defaulted"]
        == 8
        == 1
        + sum(
            e["status"] == "defaulted" and e["kind"] == "default_written"
            for e in json.loads(report.read_text())["entries"]
        )
    )
    # without the report, diff cannot tell who added it, and says no more than it knows
    bare = runner.invoke(main, ["diff", str(source), str(out)]).stdout
    assert (
        "only-B   batch.grad_accum: 1 (train_batch_size, gradient_accumulation_steps) (Cerebras Model Zoo holds" in bare
    )


def test_neox_zero_block_for_bf16_and_a_derived_accumulation(tmp_path: Path) -> None:
    result = translate(str(_bf16(tmp_path)), "cerebras", "neox")
    assert result.config["zero_optimization"] == {"stage": 0}
    zero = _added(result)["zero_optimization.stage"]
    assert zero.status is Status.DEFAULTED and zero.fields == ("parallel.zero_stage",)
    assert zero.values == {
        "title": "GPT-NeoX",
        "written": {"zero_optimization.stage": 0},
        "why": "NeoX needs a ZeRO block to load a bf16 config",
    }
    assert result.report.target["added_by_verification"] == 0  # the entries name it: nothing for the check to add
    # a global and a micro batch at an unknown data-parallel size: NeoX derives the accumulation (null)
    both = translate({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4}, "deepspeed", "neox")
    assert both.config["gradient_accumulation_steps"] is None
    derive = _added(both)["gradient_accumulation_steps"]
    assert derive.status is Status.DEFAULTED and derive.values["written"] == {"gradient_accumulation_steps": None}
    assert "wrote gradient_accumulation_steps=null (NeoX derives it from the global and micro batch)" in derive.detail


def _bf16(tmp_path: Path) -> Path:
    path = tmp_path / "bf16.yaml"
    path.write_text(
        CEREBRAS.replace(
            "max_position_embeddings: 128}", "max_position_embeddings: 128, mixed_precision: true, fp16_type: bfloat16}"
        )
    )
    return path


def test_deepspeed_runs_a_lone_global_batch_with_accumulation_one(runner, tmp_path: Path) -> None:
    # nothing written for it: DeepSpeed's own reading of train_batch_size alone (micro = global / dp)
    source, out, report = _cerebras(tmp_path), tmp_path / "ds.json", tmp_path / "report.json"
    assert (
        runner.invoke(
            main, ["cerebras2deepspeed", str(source), "-o", str(out), "--report", str(report), "-q"]
        ).exit_code
        == 0
    )
    assert json.loads(out.read_text())["train_batch_size"] == 8 and "gradient_accumulation_steps" not in out.read_text()
    (entry,) = [e for e in json.loads(report.read_text())["entries"] if e["kind"] == "target_value"]
    assert entry["status"] == "defaulted" and entry["fields"] == ["batch.grad_accum"]
    assert entry["target_key"] == "train_batch_size" and entry["values"]["value"] == 1
    assert entry["detail"] == (
        "DeepSpeed runs with batch.grad_accum=1 (from train_batch_size): Cerebras Model Zoo has no value "
        "for it (Cerebras accumulates gradients automatically; the global batch is what carries over)"
    )
    shown = runner.invoke(main, ["diff", str(source), str(out), "--report", str(report)]).stdout
    assert "only-B   batch.grad_accum: 1 (train_batch_size) (Cerebras Model Zoo holds no value for it: " in shown
    assert shown.splitlines()[0].endswith("[report: defaulted]")


def test_cerebras_const_keys_are_entries(pythia160m: Path) -> None:
    result = translate(pythia160m, "neox", "cerebras", world_size=8)
    assert result.config["model"]["attention_type"] == "scaled_dot_product"
    assert result.config["optimizer"]["correct_bias"] is True  # pythia's Adam with weight decay: AdamW
    added = _added(result)
    kinds = {key: (e.status, e.kind, dict(e.values["written"])) for key, e in added.items()}
    assert kinds == {
        "model.attention_type": (Status.DEFAULTED, "added_for_target", {"model.attention_type": "scaled_dot_product"}),
        "optimizer.correct_bias": (Status.DEFAULTED, "added_for_target", {"optimizer.correct_bias": True}),
    }
    assert added["optimizer.correct_bias"].detail.endswith("which the table writes when optim.type=adamw)")
    # in the trainer layout the entry names the key where it was written
    trainer = translate(pythia160m, "neox", "cerebras", world_size=8, layout="trainer")
    assert "trainer.init.model.attention_type" in _added(trainer)
    # an optimizer that is not AdamW gets no correct_bias, and no entry
    sgd = translate(
        {
            "num_layers": 2,
            "hidden_size": 64,
            "num_attention_heads": 4,
            "optimizer": {"type": "sgd", "params": {"lr": 0.1}},
        },
        "neox",
        "cerebras",
    )
    assert "correct_bias" not in sgd.config["optimizer"] and set(_added(sgd)) == {"model.attention_type"}


def test_a_model_name_the_trainer_layout_needs_and_a_legacy_file_never_gave() -> None:
    # Model Zoo 2.4+ builds the model trainer.init.model.name gives; a legacy file names none
    result = translate(
        FIXTURES / "inputs" / "cerebras" / "llama-warmup-cosine.yaml", "cerebras", "cerebras", layout="trainer"
    )
    assert result.config["trainer"]["init"]["model"]["name"] == "llama"
    entry = _added(result)["trainer.init.model.name"]
    assert entry.status is Status.DEFAULTED and entry.fields == ("model.family",)
    assert entry.detail == (
        "not in the source, added for Cerebras Model Zoo: wrote trainer.init.model.name='llama' (Model "
        "Zoo 2.4.0+ builds the model its name gives; the source names none: inferred from the block "
        "structure)"
    )
    # a trainer file that names its model: nothing added
    again = translate(FIXTURES / "inputs" / "cerebras" / "llama-trainer.yaml", "cerebras", "cerebras", layout="trainer")
    assert _added(again) == {}


def test_veomni_config_path_points_at_the_architecture_written_beside(pythia160m: Path) -> None:
    result = translate(pythia160m, "neox", "veomni", world_size=8, output="run.yaml")
    assert result.config["model"]["config_path"] == "run.config.json" and "run.config.json" in result.side_files
    entry = _added(result)["model.config_path"]
    assert entry.status is Status.DEFAULTED and entry.values["written"] == {"model.config_path": "run.config.json"}
    # a veomni -> veomni translation keeps the file's own config_path: nothing added
    same = translate(FIXTURES / "inputs" / "veomni" / "pythia-160m-nested.yaml", "veomni", "veomni")
    assert _added(same) == {}


def test_megatron_and_hf_add_nothing_the_source_did_not_say(tmp_path: Path, pythia160m: Path) -> None:
    for dst in ("megatron", "hf"):
        result = translate(pythia160m, "neox", dst, world_size=8)
        assert _added(result) == {}, dst
        out = tmp_path / f"out{get_format(dst).suffix}"
        out.write_text(result.dump())
        found = diff_ir(read_ir([str(pythia160m)], "neox", world_size=8), read_ir([str(out)], dst))
        assert [c.field for c in (*found.only_b, *found.inexpressible) if c.a is None] == [], dst


def test_a_value_only_the_output_has_fails_the_loss_proof_check_unless_named(monkeypatch, tmp_path: Path) -> None:
    from neoconv.formats.neox.writer import WRITER

    write = WRITER.write

    def careless(leaves, ctx):  # type: ignore[no-untyped-def]
        written = write(leaves, ctx)
        written.document["zero_optimization"] = {"stage": 2}  # added, and not said
        return written

    monkeypatch.setattr(WRITER, "write", careless)
    source = _cerebras(tmp_path)
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    unnamed, _ = unnamed_differences([source], "cerebras", "neox", tmp_path / "a", verify=False)
    assert unnamed == ["parallel.zero_stage: only in the output, 2"]
    # the translation's check of its output names it: the target's own value, from the key that gives it
    reports: list = []
    unnamed, _ = unnamed_differences([source], "cerebras", "neox", tmp_path / "b", reports)
    assert unnamed == []
    (entry,) = [e for e in reports[0].entries if e.kind == "target_value"]
    assert entry.status is Status.DEFAULTED and entry.target_key == "zero_optimization.stage"
    assert entry.detail.startswith("GPT-NeoX runs with parallel.zero_stage=2 (from zero_optimization.stage): Cerebras")
