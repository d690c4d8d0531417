"""GPT-NeoX as a target: output NeoX loads (NeoXArgs.from_ymls), with every value it needs stated.

The traps are NeoX's own (megatron/neox_arguments/arguments.py at ea7aefd8): gradient_clipping 1.0
is never forwarded to its pinned DeeperSpeed (default 0.0), bf16 needs a zero_optimization block,
the accumulation default is 1, validate_types refuses a float in an int field and an fp16 block
without `enabled`, validate_values refuses `save` without checkpoint_factor.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from cerebras_corpus import LEGACY, TRAINER, assert_report_covers, translate_or_known
from conftest import (
    CORPUS,
    corpus_dir,
    corpus_files,
    runnable,
    same_canonical,
    translate_unless_not_attention,
    corpus_id,
)

from neoconv import Status, translate
from neoconv.core.errors import UnsupportedFamily
from neoconv.formats.neox.reader import READER as neox
from neoconv.io.documents import flatten
from neoconv.knowledge.mapping import load_table
from neoconv.services.validate import schema_errors

CEREBRAS = LEGACY + TRAINER
NEOX = [
    p for p in corpus_files("neox") if ("num_layers" in p.read_text() or "num-layers" in p.read_text()) and runnable(p)
]
FLOAT_TEXT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def neox_tree(result: Any, tmp_path: Path) -> dict[str, Any]:
    """The written YAML, read back the way NeoX reads it (PyYAML, then our NeoX reader)."""
    out = tmp_path / "out.yml"
    out.write_text(result.dump())
    return neox.read([str(out)]).tree


@pytest.mark.slow
@pytest.mark.parametrize("path", CEREBRAS, ids=corpus_id(CORPUS))
def test_every_cerebras_file_converts_to_neox(path: Path, tmp_path: Path) -> None:
    result = translate_or_known(path, "neox")
    if result is None:
        return
    tree = neox_tree(result, tmp_path)
    assert schema_errors(tree, "neox") == []
    assert_report_covers(result, path)
    for key, value in flatten(tree).items():
        # PyYAML reads 1e-5 as a string and NeoX then crashes: every number must re-read as a number
        assert not (isinstance(value, str) and FLOAT_TEXT.match(value)), (key, value)
        assert "-" not in key.split(".")[0], key  # current underscore names only
    assert "weight_decay" not in tree.get("optimizer", {}).get("params", {})
    assert "gradient_clipping" in tree or "gradient_clipping" in tree.get("deepspeed_extra_args", {})
    if "train_batch_size" in tree:
        assert "gradient_accumulation_steps" in tree
    if tree.get("precision") == "bfloat16":
        assert tree["bf16"] == {"enabled": True} and "stage" in tree["zero_optimization"]
    if "fp16" in tree:
        assert tree["fp16"]["enabled"] is True and tree["precision"] == "fp16"


def test_llama2_7b_values() -> None:
    corpus_dir("cerebras-legacy")
    result = translate(CORPUS / "cerebras-legacy" / "llama" / "params_llama2_7b.yaml", "cerebras", "neox")
    cfg = result.config
    assert (cfg["num_layers"], cfg["hidden_size"], cfg["num_attention_heads"]) == (32, 4096, 32)
    assert cfg["activation"] == "swiglu" and cfg["intermediate_size"] == 3 * 11008  # NeoX's gated width
    assert cfg["norm"] == "rmsnorm" and cfg["rms_norm_epsilon"] == 1e-5 and cfg["pos_emb"] == "rotary"
    assert cfg["rotary_pct"] == 1.0 and cfg["no_weight_tying"] is True
    assert cfg["use_bias_in_attn_linear"] is False and cfg["use_bias_in_mlp"] is False
    assert cfg["hidden_dropout"] == 0.0 and cfg["attention_dropout"] == 0.0
    assert cfg["optimizer"] == {"type": "Adam", "params": {"lr": 3e-4, "betas": [0.9, 0.95], "eps": 1e-5}}
    assert cfg["weight_decay"] == 0.1
    # clipping 1.0 only reaches DeeperSpeed through deepspeed_extra_args
    assert cfg["deepspeed_extra_args"] == {"gradient_clipping": 1.0} and "gradient_clipping" not in cfg
    assert cfg["lr_decay_style"] == "cosine" and cfg["min_lr"] == 3e-5
    assert cfg["lr_decay_iters"] == 2000 + 474837 and cfg["warmup"] == pytest.approx(2000 / 476837)
    assert cfg["train_iters"] == 476837 and cfg["train_batch_size"] == 1024 and cfg["gradient_accumulation_steps"] == 1
    assert (
        cfg["precision"] == "bfloat16" and cfg["bf16"] == {"enabled": True} and cfg["zero_optimization"] == {"stage": 0}
    )
    assert cfg["save"] == "./model_dir" and cfg["checkpoint_factor"] == 10000
    # Cerebras' GPT-2 backbone scales its default output init by 1/sqrt(2L): NeoX's default, so not written
    assert "output_layer_init_method" not in cfg and "init_method" not in cfg
    text = result.dump()
    assert "# added for NeoX to load it: zero_optimization" in text and "1.0e-05" in text
    by = result.report.by_source()
    assert by["optimizer.max_gradient_norm"].target_key == "deepspeed_extra_args.gradient_clipping"
    assert by["model.embedding_dropout_rate"].status is Status.CONVERTED
    assert "hidden_dropout to the embeddings" in by["model.embedding_dropout_rate"].detail


def test_defaults_that_differ_are_written(tmp_path: Path) -> None:
    path = tmp_path / "small.yaml"
    path.write_text(
        "train_input: {batch_size: 16}\n"
        "model: {vocab_size: 1000, hidden_size: 64, num_hidden_layers: 2, num_heads: 4, filter_size: 256,\n"
        "        max_position_embeddings: 128, mixed_precision: true, fp16_type: float16, embedding_dropout_rate: 0.2,\n"
        "        dropout_rate: 0.0}\n"
        "optimizer: {optimizer_type: AdamW, learning_rate: 0.001, loss_scaling_factor: dynamic}\n"
        "runconfig: {max_steps: 100, model_dir: ./out}\n"
    )
    result = translate(path, "cerebras", "neox")
    cfg = result.config
    assert cfg["gradient_clipping"] == 0.0  # no max_gradient_norm: no clipping, stated against NeoX's 1.0
    assert cfg["weight_decay"] == 0.0 and cfg["optimizer"]["params"]["eps"] == 1e-6
    assert cfg["attention_dropout"] == 0.0  # Model Zoo's attention_dropout_rate defaults to dropout_rate
    assert cfg["lr_decay_style"] == "constant" and cfg["warmup"] == 0.0  # NeoX's default warmup is 0.01
    # Cerebras' dynamic scaler starts at 2**15 and grows every 2000 steps; DeepSpeed's at 2**16 / 1000
    assert cfg["precision"] == "fp16"
    assert cfg["fp16"] == {"enabled": True, "loss_scale": 0, "initial_scale_power": 15, "loss_scale_window": 2000}
    assert "save" not in cfg
    defaulted = {e.target_key: e for e in result.report.entries if e.status is Status.DEFAULTED}
    assert "gradient_clipping" in defaulted and "weight_decay" in defaulted
    by = result.report.by_source()
    assert by["model.embedding_dropout_rate"].status is Status.LOSSY
    assert "hidden_dropout 0 to the embeddings" in by["model.embedding_dropout_rate"].detail
    assert by["runconfig.model_dir"].status is Status.LOSSY and "checkpoint_factor" in by["runconfig.model_dir"].detail


def test_optimizers_neox_lacks_load_as_adam_and_say_so(tmp_path: Path) -> None:
    path = tmp_path / "adam.yaml"
    path.write_text(
        "model: {hidden_size: 64, num_hidden_layers: 2, num_heads: 4}\n"
        "optimizer: {optimizer_type: Adam, learning_rate: 0.001, weight_decay: 0.01}\n"
    )
    result = translate(path, "cerebras", "neox")
    assert result.config["optimizer"]["type"] == "Adam"
    entry = result.report.by_source()["optimizer.optimizer_type"]
    assert entry.status is Status.LOSSY and "(L2)" in entry.detail
    path.write_text(
        "model: {hidden_size: 64, num_hidden_layers: 2, num_heads: 4}\n"
        "optimizer: {optimizer_type: Adam, learning_rate: 0.001}\n"
    )
    # without weight decay coupled Adam is AdamW: nothing lost
    assert translate(path, "cerebras", "neox").report.by_source()["optimizer.optimizer_type"].status is Status.EXACT


def test_int_fields_stay_ints_and_one_warmup_phase_is_a_warmup() -> None:
    corpus_dir("cerebras-trainer")
    result = translate(CORPUS / "cerebras-trainer" / "llama" / "params_llama3p1_70b_msl_8k.yaml", "cerebras", "neox")
    cfg = result.config
    assert cfg["rotary_emb_base"] == 500000 and type(cfg["rotary_emb_base"]) is int
    # a lone LinearLR 0 -> 7.5e-5 over the run's 528 steps: its last step gets 7.5e-5 x 527 / 528, the peak
    # of the run; NeoX's first two steps get lr / W where Cerebras' get 0 and lr / W: the closest
    assert cfg["optimizer"]["params"]["lr"] == pytest.approx(7.5e-5 * 527 / 528) and cfg["lr_decay_style"] == "constant"
    assert cfg["warmup"] * cfg["lr_decay_iters"] == pytest.approx(528) and cfg["train_iters"] == 528
    lossy = next(e for e in result.report.entries if "schedule.phases" in e.fields)
    assert lossy.status is Status.LOSSY and "(step 0: 1.418e-07 instead of 0)" in lossy.detail
    assert cfg["num_kv_heads"] == 8


def test_gpt_j_backbones_set_the_residual_and_norm_layout() -> None:
    corpus_dir("cerebras-legacy")
    gptj = translate(CORPUS / "cerebras-legacy" / "gptj" / "params_gptj_6B.yaml", "cerebras", "neox").config
    assert gptj["gpt_j_residual"] is True and gptj["gpt_j_tied"] is True
    assert gptj["output_layer_init_method"] == "wang_init" and gptj["precision"] == "bfloat16"
    falcon = translate(CORPUS / "cerebras-trainer" / "falcon" / "params_falcon_40b.yaml", "cerebras", "neox").config
    assert falcon["gpt_j_residual"] is True and falcon["gpt_j_tied"] is False  # use_untied_layer_norm: true


def test_micro_batch_without_accumulation_lets_neox_derive_it(tmp_path: Path) -> None:
    path = tmp_path / "mb.yaml"
    path.write_text("train_input: {batch_size: 64}\nmodel: {hidden_size: 64, num_hidden_layers: 2, num_heads: 4}\n")
    cfg = translate(path, "cerebras", "neox", set_values={"batch.micro": 4}).config
    assert cfg["train_batch_size"] == 64 and cfg["train_micro_batch_size_per_gpu"] == 4
    assert cfg["gradient_accumulation_steps"] is None  # null: NeoX computes 64 / 4 / data-parallel size


def test_missing_architecture_is_reported(tmp_path: Path) -> None:
    """A decoder config without its heads: NeoX's validate_values needs them, reported missing."""
    source = tmp_path / "params.yaml"
    source.write_text(
        "train_input:\n  data_processor: GptHDF5MapDataProcessor\n  data_dir: ./d\n  batch_size: 8\n"
        "model:\n  vocab_size: 1000\noptimizer:\n  optimizer_type: AdamW\n  learning_rate: 1.0e-4\n"
        "runconfig:\n  max_steps: 10\n"
    )
    result = translate(source, "cerebras", "neox")
    missing = {e.target_key for e in result.report.entries if e.status is Status.MISSING}
    assert "num_attention_heads" in missing


def test_an_mlp_on_mnist_is_refused_for_neox() -> None:
    corpus_dir("cerebras-trainer")
    with pytest.raises(UnsupportedFamily):
        translate(CORPUS / "cerebras-trainer" / "fc_mnist" / "params_cszoov2.yaml", "cerebras", "neox")


def test_same_format_carries_every_key_and_rewrites_only_what_was_set(pythia160m: Path) -> None:
    result = translate(pythia160m, "neox", "neox", set_values={"optim.lr": 1e-4})
    source = yaml.safe_load(pythia160m.read_text())
    cfg = result.config
    assert cfg["optimizer"]["params"]["lr"] == 1e-4
    assert cfg["gradient_clipping"] == source["gradient_clipping"]  # NeoX -> NeoX keeps NeoX's own meaning
    assert {k.replace("-", "_") for k in source} == set(cfg)
    by = result.report.by_source()
    assert by["--set optim.lr"].status is Status.EXACT and all(
        e.status is Status.EXACT for e in result.report.entries if e.source_key in ("num_layers", "data_path")
    )


@pytest.mark.parametrize("path", NEOX, ids=corpus_id(CORPUS / "neox"))
@pytest.mark.parametrize("layout", ["legacy", "trainer"])
def test_neox_cerebras_neox_keeps_what_cerebras_expresses(path: Path, layout: str, tmp_path: Path) -> None:
    there = translate_unless_not_attention(
        path,
        "neox",
        "cerebras",
        layout=layout,
        world_size=8,
        set_values={"model.vocab_size": 50304, "train.steps": 1000},
    )
    if there is None:
        return
    if there.ir.get("model.attention_kind") not in (None, "dense"):
        pytest.skip("Cerebras has dense attention only: the Cerebras config is not the same model")
    middle = tmp_path / "middle.yaml"
    middle.write_text(there.dump())
    back = translate(middle, "cerebras", "neox")
    owner = load_table("neox").key_owner()
    carried = {
        f
        for e in there.report.entries
        if e.status in (Status.EXACT, Status.CONVERTED) and e.source_key in owner
        for f in owner[e.source_key].fields
    }
    start, end = there.ir.plain(), back.ir.plain()
    for name in sorted(carried & set(start)):
        a, b = start[name], end.get(name)
        assert same_canonical(name, a, b, 1000), f"{name}: {a!r} came back as {b!r}"


def test_an_optimizer_block_always_says_its_type(tmp_path: Path) -> None:
    """NeoX's validate_types refuses an `optimizer` without `type` even when the type is its default
    (the oracle's 23 VeOmni sources that leave AdamW to VeOmni's default)."""
    source = tmp_path / "v.yaml"
    source.write_text(
        "model:\n  config_path: ./c\ndata:\n  train_path: /d\n  max_seq_len: 128\n"
        "train:\n  optimizer:\n    lr: 3.0e-4\n  global_batch_size: 64\n  micro_batch_size: 1\n"
        "  checkpoint:\n    output_dir: out\n"
    )
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "config.json").write_text(
        '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, '
        '"num_attention_heads": 4, "vocab_size": 128}'
    )
    done = translate([str(source)], "veomni", "neox", world_size=8)
    assert done.config["optimizer"]["type"] == "Adam" and done.config["optimizer"]["params"]["lr"] == 3.0e-4


def test_a_launcher_the_target_release_lacks_is_not_exact(tmp_path: Path) -> None:
    """NeoX typed `launcher` str until 2023-03 (deepspeed_args.py: launcher: str = "pdsh"), then
    Literal["pdsh", "openmpi", "mvapich", "slurm"]: `srun` carried into today's release is refused there."""
    path = tmp_path / "old.yml"
    path.write_text(
        "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\n"
        "max_position_embeddings: 128\ntrain_micro_batch_size_per_gpu: 4\ntrain_iters: 100\nlauncher: srun\n"
    )
    newest = translate(path, "neox", "neox", source_version="2022-12-06")
    entry = newest.report.by_source()["launcher"]
    assert entry.status is Status.UNKNOWN and "srun" in entry.detail and "slurm" in entry.detail
    assert newest.config["launcher"] == "srun"  # carried as written, named
    same = translate(path, "neox", "neox", source_version="2022-12-06", target_version="2022-12-06")
    assert same.report.by_source()["launcher"].status is Status.EXACT  # a str at that release: NeoX takes any text
