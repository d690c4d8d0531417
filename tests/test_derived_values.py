"""Values a source reader derives with no key of their own (NeoX's model.family from its blocks,
its norm bias from `norm`, its embedding dropout from hidden_dropout; Model Zoo's embedding dropout
from dropout_rate; the HF class's norm under VeOmni; a data-parallel size from the GPUs) that the
target has no place for are named `dropped`: on the entry of the leaf they came from, or in one
entry of their own saying where they came from. `neoconv diff --report` then shows each as named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from neoconv import translate
from neoconv.cli import main
from neoconv.core.report import Entry, Status

from conftest import FIXTURES

# a NeoX file as the corpus writes them (neox/125M.yml's model block, its own values)
NEOX = """\
{
  "pipe_parallel_size": 1,
  "model_parallel_size": 1,
  "num_layers": 12,
  "hidden_size": 768,
  "num_attention_heads": 12,
  "seq_length": 2048,
  "max_position_embeddings": 2048,
  "norm": "layernorm",
  "pos_emb": "rotary",
  "no_weight_tying": true,
  "gpt_j_residual": false,
  "bias_gelu_fusion": false,
  "hidden_dropout": 0.1,
  "attention_dropout": 0.1,
  "optimizer": {"type": "Adam", "params": {"lr": 0.0006, "betas": [0.9, 0.95], "eps": 1.0e-8}},
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 2,
  "train_iters": 1000,
}
"""


def _neox(tmp_path: Path, text: str = NEOX) -> Path:
    path = tmp_path / "gpt.yml"
    path.write_text(text)
    return path


def _derived(entry: Entry) -> dict[str, Any]:
    """The derived_dropped message of an entry (its kind, or one of its further messages)."""
    return next(values for kind, values in entry.messages() if kind == "derived_dropped")


def test_neox_values_derived_for_deepspeed_are_dropped_on_their_leaves(tmp_path: Path) -> None:
    result = translate(_neox(tmp_path), "neox", "deepspeed", world_size=8)
    by_source = result.report.by_source()
    # the norm bias follows `norm` (a LayerNorm has one in NeoX): said on the norm's entry
    norm = by_source["norm"]
    assert norm.status is Status.DROPPED and norm.fields == ("model.norm", "model.norm_bias")
    assert norm.detail == (
        "DeepSpeed has no counterpart for model.norm, model.norm_bias; GPT-NeoX derives model.norm_bias=true from it"
    )
    assert _derived(norm) == {
        "title": "GPT-NeoX",
        "values": [{"field": "model.norm_bias", "value": True}],
        "own_entry": False,
    }
    # NeoX applies hidden_dropout to the embeddings
    dropout = by_source["hidden_dropout"]
    assert dropout.status is Status.DROPPED and dropout.fields == ("model.hidden_dropout", "model.embedding_dropout")
    assert _derived(dropout)["values"] == [{"field": "model.embedding_dropout", "value": 0.1}]
    # the family comes from several blocks: an entry of its own, saying which leaves
    (family,) = [e for e in result.report.entries if "model.family" in e.fields]
    assert family.source_key is None and family.status is Status.DROPPED and family.kind == "derived_dropped"
    assert family.fields == ("model.family",)
    assert family.detail == (
        "GPT-NeoX derives model.family='gpt2' (from gpt_j_residual, norm, bias_gelu_fusion, pos_emb) "
        "with no key of its own; DeepSpeed has no counterpart for model.family"
    )
    # DeepSpeed works the data-parallel size out from its batch sizes: not a loss, no entry says it
    assert result.config["train_batch_size"] == 64
    assert not [
        e for e in result.report.entries if "parallel.data_parallel_size" in e.fields and e.status is Status.DROPPED
    ]


def test_a_target_that_holds_the_derived_values_drops_none(tmp_path: Path) -> None:
    # Model Zoo has model.family, norm bias and embedding dropout: nothing derived is dropped
    result = translate(_neox(tmp_path), "neox", "cerebras")
    assert not [e for e in result.report.entries if any(k == "derived_dropped" for k, _ in e.messages())]
    assert result.ir.get("model.family") == "gpt2" and result.report.target["added_by_verification"] == 0


def test_cerebras_embedding_dropout_for_deepspeed(tmp_path: Path) -> None:
    # legacy: the GPT-2 model's embedding dropout defaults to dropout_rate (0.1): said on dropout_rate's entry
    legacy = translate(FIXTURES / "inputs" / "cerebras" / "gpt2-small-legacy.yaml", "cerebras", "deepspeed")
    entry = legacy.report.by_source()["model.dropout_rate"]
    assert entry.status is Status.DROPPED and entry.fields == ("model.hidden_dropout", "model.embedding_dropout")
    assert entry.detail == (
        "DeepSpeed has no counterpart for model.hidden_dropout, model.embedding_dropout; Cerebras Model "
        "Zoo derives model.embedding_dropout=0.1 from it"
    )
    # trainer: the attention and embedding dropouts default by the model's name and its dropout_rate
    trainer = translate(FIXTURES / "inputs" / "cerebras" / "llama-trainer.yaml", "cerebras", "deepspeed")
    (own,) = [e for e in trainer.report.entries if e.kind == "derived_dropped"]
    assert own.source_key is None and own.status is Status.DROPPED
    assert own.fields == ("model.attention_dropout", "model.embedding_dropout")
    assert _derived(own)["values"] == [
        {
            "field": "model.attention_dropout",
            "value": 0.0,
            "from": ["trainer.init.model.name", "trainer.init.model.dropout_rate"],
        },
        {
            "field": "model.embedding_dropout",
            "value": 0.0,
            "from": ["trainer.init.model.name", "trainer.init.model.dropout_rate"],
        },
    ]
    assert own.detail.endswith(
        "with no key of their own; DeepSpeed has no counterpart for model.attention_dropout, model.embedding_dropout"
    )


def test_veomni_architecture_from_the_hf_class_for_deepspeed() -> None:
    result = translate(FIXTURES / "inputs" / "veomni" / "pythia-160m-nested.yaml", "veomni", "deepspeed")
    by_source = result.report.by_source()
    derived = ("model.norm", "model.norm_bias", "model.attention_kind", "model.init_method", "model.output_init_method")
    # GPTNeoX's class fixes them: said on both leaves the class is read from, which the report shows as one row
    for leaf in ("config.json:model_type", "config.json:architectures"):
        entry = by_source[leaf]
        assert entry.status is Status.DROPPED and entry.fields == ("model.family", "model.position_embedding", *derived)
        assert [v["field"] for v in _derived(entry)["values"]] == list(derived)
        assert (
            "VeOmni derives model.norm='layernorm', model.norm_bias=true, model.attention_kind='dense'" in entry.detail
        )
    assert by_source["config.json:model_type"].detail == by_source["config.json:architectures"].detail
    # a shared norm of the parallel block follows the class and use_parallel_residual: its own entry
    (shared,) = [e for e in result.report.entries if e.kind == "derived_dropped"]
    assert shared.fields == ("model.parallel_shared_norm",)
    assert _derived(shared)["values"] == [
        {
            "field": "model.parallel_shared_norm",
            "value": False,
            "from": ["config.json:model_type", "config.json:architectures", "config.json:use_parallel_residual"],
        }
    ]


def test_a_data_parallel_size_from_the_gpus(tmp_path: Path) -> None:
    # global_num_gpus alone in the file: the data-parallel size rides on its entry, the reason said once
    alone = NEOX.replace('  "pipe_parallel_size": 1,\n  "model_parallel_size": 1,\n', "")
    path = _neox(tmp_path, alone.replace('"train_iters"', '"global_num_gpus": 16, "train_iters"'))
    result = translate(path, "neox", "cerebras")
    entry = result.report.by_source()["global_num_gpus"]
    assert entry.status is Status.DROPPED and entry.fields == ("parallel.world_size", "parallel.data_parallel_size")
    assert entry.detail == (
        "Cerebras systems are not GPUs; the global batch carries the data-parallel size; GPT-NeoX "
        "derives parallel.data_parallel_size=16 from it"
    )
    # --world-size: an entry of its own, naming the --set value and the leaves
    given = translate(_neox(tmp_path), "neox", "cerebras", world_size=8)
    (own,) = [e for e in given.report.entries if e.kind == "derived_dropped"]
    assert own.fields == ("parallel.data_parallel_size",) and own.status is Status.DROPPED
    assert _derived(own)["values"] == [
        {
            "field": "parallel.data_parallel_size",
            "value": 8,
            "from": ["--set parallel.world_size", "model_parallel_size", "pipe_parallel_size"],
        }
    ]
    assert given.config["train_input"]["batch_size"] == 64  # the global batch carries it


def test_diff_shows_the_derived_values_as_named(runner, tmp_path: Path) -> None:
    source, out, report = _neox(tmp_path), tmp_path / "ds.json", tmp_path / "report.json"
    done = runner.invoke(
        main, ["neox2deepspeed", str(source), "-o", str(out), "--report", str(report), "--world-size", "8"]
    )
    assert done.exit_code == 0, done.stderr
    assert "GPT-NeoX derives model.family='gpt2' (from gpt_j_residual, norm," in " ".join(done.stderr.split())
    shown = runner.invoke(main, ["diff", str(source), str(out), "--report", str(report), "--world-size", "8"]).stdout
    lines = shown.splitlines()  # values as the config files spell them (issue 31), not Python's reprs
    for name, value in (("model.family", "gpt2"), ("model.norm_bias", "true"), ("model.embedding_dropout", "0.1")):
        assert f"only-A   {name}: {value} (derived) (no key of DeepSpeed holds it)  [report: dropped]" in lines, name
    assert not [line for line in lines if "no entry" in line or "not named" in line]
    # the world size, read on both sides, is no difference
    assert not [line for line in lines if "parallel.world_size" in line]
    data = json.loads(
        runner.invoke(
            main, ["diff", str(source), str(out), "--report", str(report), "--world-size", "8", "--json"]
        ).stdout
    )
    unheld = {c["field"]: c for c in data["not_expressible_in_both"]}
    assert unheld["model.family"]["a"] == "gpt2" and unheld["model.family"]["report"] == ["dropped"]
    assert unheld["model.norm_bias"]["report"] == ["dropped"] and unheld["model.embedding_dropout"]["report"] == [
        "dropped"
    ]
    assert all(
        c["report"] and set(c["report"]) & {"dropped", "lossy"}
        for c in data["not_expressible_in_both"]
        if c["a"] is not None
    )


def test_the_targets_own_data_parallel_size_from_the_gpus_is_said() -> None:
    # Model Zoo has no data-parallel size; DeepSpeed reads one from the GPUs given: the target's own value
    result = translate(
        FIXTURES / "inputs" / "cerebras" / "gpt2-small-legacy.yaml", "cerebras", "deepspeed", world_size=8
    )
    (entry,) = [e for e in result.report.entries if e.kind == "target_value"]
    assert entry.status is Status.DEFAULTED and entry.fields == ("parallel.data_parallel_size",)
    assert entry.source_key is None and entry.target_key is None
    assert entry.detail == (
        "DeepSpeed runs with parallel.data_parallel_size=8 (from --set parallel.world_size): Cerebras "
        "Model Zoo has no value for it (Cerebras systems are not GPUs; the global batch carries the "
        "data-parallel size)"
    )
    assert result.config["train_batch_size"] == 256 and result.config["train_micro_batch_size_per_gpu"] == 32
