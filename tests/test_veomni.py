"""VeOmni: the three input styles, both layouts, the HF config.json, and the pairs with real values."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
import yaml
from conftest import CORPUS, FIXTURES, corpus_dir

from neoconv import InputError, Status, load, translate
from neoconv.api import read_ir
from neoconv.cli import main
from neoconv.formats.veomni.fields import fields as veomni_fields
from neoconv.formats.veomni.reader import READER as veomni
from neoconv.io.documents import flatten

HERE = FIXTURES / "inputs" / "veomni"
NESTED = HERE / "tinyllama-nested.yaml"
FLAT = HERE / "tinyllama-flat.yaml"
DOTTED = HERE / "tinyllama-dotted.yaml"
OPTIONS = HERE / "overrides.args"
PYTHIA = HERE / "pythia-160m-nested.yaml"


def entries(result) -> dict:
    return {e.source_key: e for e in result.report.entries if e.source_key}


def targets(result, status: Status) -> dict:
    return {e.target_key: e for e in result.report.entries if e.status is status}


# ---- reading: three input styles ------------------------------------------------------------


# TinyLlama's run: 1e11 tokens / (1024 x 2048 tokens per step) -> ceil(47683.7) = 47684 steps;
# warmup int(47684 x 0.042) = 2002; the architecture comes from tinyllama/config.json.
TINYLLAMA = {
    "train.steps": 47684,
    "schedule.warmup_steps": 2002.0,
    "schedule.decay_steps": 47684,
    "schedule.min_lr": 4e-5,
    "optim.lr": 4e-4,
    "optim.weight_decay": 0.1,
    "optim.betas": [0.9, 0.95],
    "batch.global": 1024,
    "batch.micro": 8,
    "model.seq_length": 2048,
    "parallel.zero_stage": 3,
    "precision.dtype": "bf16",
    "checkpoint.save_dir": "tinyllama-1.1b",
    "checkpoint.interval": 2000,
    "train.seed": 42,
    "model.family": "llama",
    "model.num_layers": 22,
    "model.hidden_size": 2048,
    "model.num_heads": 32,
    "model.num_kv_heads": 4,
    "model.ffn_hidden_size": 5632,
    "model.vocab_size": 32000,
    "model.norm": "rmsnorm",
    "model.norm_eps": 1e-5,
    "model.activation": "swiglu",
    "model.rotary_base": 10000.0,
    "model.rotary_fraction": 1.0,
    "model.tie_embeddings": False,
    "model.attention_bias": False,
    "model.mlp_bias": False,
}


@pytest.mark.parametrize("path", [NESTED, FLAT, DOTTED], ids=["nested", "flat", "dotted"])
def test_the_three_input_styles_read_the_same_run(path: Path) -> None:
    ir = read_ir([str(path)], "veomni").ir
    assert {name: ir.get(name) for name in TINYLLAMA} == TINYLLAMA


def test_layout_is_told_by_the_keys() -> None:
    assert veomni.read([str(NESTED)]).layout == "nested"
    assert veomni.read([str(FLAT)]).layout == "flat"
    assert veomni.read([str(DOTTED)]).layout == "nested"  # train.optimizer.lr is a nested key
    flat = veomni.read([str(FLAT)])
    # the table view is nested; the report names the keys as written
    assert flat.tree["train"]["optimizer"]["lr"] == 4e-4
    assert flat.aliases["train.optimizer.lr"] == "train.lr"
    assert flat.aliases["train.optimizer.type"] == "train.optimizer"
    assert flat.aliases["train.accelerator.fsdp_config.fsdp_mode"] == "train.data_parallel_mode"


def test_flat_report_names_the_flat_keys() -> None:
    result = translate(FLAT, "veomni", "neox")
    by = entries(result)
    assert by["train.lr"].target_key.startswith("optimizer.params.lr, lr_decay_style")  # the whole schedule
    assert (
        by["train.lr"].status is Status.LOSSY and "(step 0: 1.998e-07 instead of 0)" in by["train.lr"].detail
    )  # NeoX's lr/W
    assert by["train.data_parallel_mode"].target_key == "zero_optimization.stage"
    assert result.config["zero_optimization"]["stage"] == 3


def test_dotted_keys_are_read_and_the_report_says_veomni_ignores_them() -> None:
    result = translate(DOTTED, "veomni", "cerebras")
    entry = entries(result)["data.max_seq_len"]
    assert "dotted key" in entry.detail and "--data.max_seq_len" in entry.detail
    # nested keys inside the dotted file carry no such note
    assert "dotted" not in entries(result)["data.train_path"].detail


def test_the_same_field_nested_and_dotted(tmp_path: Path) -> None:
    both = tmp_path / "both.yaml"
    both.write_text("train:\n  optimizer:\n    lr: 1.0e-4\ntrain.optimizer.lr: 2.0e-4\n")
    with pytest.raises(InputError) as err:
        veomni.read([str(both)])
    message = str(err.value)
    assert "train: optimizer: lr (line 3)" in message and "train.optimizer.lr (line 4)" in message
    assert "0.0001" in message and "0.0002" in message and err.value.line == 4
    agree = tmp_path / "agree.yaml"
    agree.write_text("model:\n  model_path: m\ntrain:\n  seed: 7\ntrain.seed: 7\n")
    source = veomni.read([str(agree)])
    assert source.tree["train"]["seed"] == 7
    assert "given twice with the same value" in source.notes["train.seed"]


def test_a_value_and_a_block_at_one_path(tmp_path: Path) -> None:
    clash = tmp_path / "clash.yaml"
    clash.write_text("train.optimizer: adamw\ntrain:\n  optimizer:\n    lr: 1.0e-4\n")
    with pytest.raises(InputError, match="both a value and a block"):
        veomni.read([str(clash)])


def test_mixed_layouts_are_an_error(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text("train:\n  lr: 1.0e-4\n  optimizer:\n    lr_min: 1.0e-6\n")
    with pytest.raises(
        InputError, match=r"mixes the flat layout \(train.lr\) with the nested one \(train.optimizer.lr_min\)"
    ):
        veomni.read([str(mixed)])


def test_option_file_overrides_the_yaml_as_veomni_does() -> None:
    result = translate([NESTED, OPTIONS], "veomni", "neox")
    source = read_ir([str(NESTED), str(OPTIONS)], "veomni").source
    assert source.tree["train"]["optimizer"]["no_decay_modules"] == ["LlamaRMSNorm", "Embedding"]  # nargs="+"
    assert source.tree["train"]["wandb"]["enable"] is True  # a bare boolean option
    assert result.config["optimizer"]["params"]["lr"] == 2e-4
    assert result.config["checkpoint_activations"] is False  # "false" through VeOmni's _string_to_bool
    assert result.config["seq_length"] == 4096 and result.config["train_batch_size"] == 512
    # 1e11 tokens / (512 x 4096) -> ceil(47683.7) = 47684 steps again
    assert result.config["train_iters"] == 47684
    lr = entries(result)["--train.optimizer.lr"]
    assert (
        lr.target_key.startswith("optimizer.params.lr, ")
        and "overrides 0.0004" in lr.detail
        and "overrides.args:2" in lr.detail
    )


@pytest.mark.parametrize(
    "line, message",
    [
        ("--train.optimizer.lrr 1e-4", "unrecognized argument --train.optimizer.lrr"),
        ("--train.seed seven", "--train.seed: 'seven' is not an integer"),
        ("--train.dyn_bsz maybe", "boolean value expected"),
        ("--train.optimizer.type sgd", "invalid choice 'sgd'"),
        ("--train.optimizer.no_decay_modules", "at least one value"),
        ("--model.model_config x", "is a mapping"),
        ("--train.seed 1 2", "takes exactly one value, got 2"),
    ],
)
def test_option_file_errors_name_the_line(tmp_path: Path, line: str, message: str) -> None:
    options = tmp_path / "bad.args"
    options.write_text("# options\n" + line + "\n--train.seed 1\n")
    with pytest.raises(InputError) as err:
        veomni.read([str(NESTED), str(options)])
    assert message in str(err.value) and err.value.line == 2 and err.value.file == str(options)


def test_two_yaml_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="VeOmni reads one YAML file"):
        veomni.read([str(NESTED), str(FLAT)])
    with pytest.raises(InputError, match="the YAML file comes first"):
        veomni.read([str(OPTIONS), str(NESTED)])


def test_an_option_given_twice_keeps_the_last_as_argparse_does(tmp_path: Path) -> None:
    options = tmp_path / "twice.args"
    options.write_text("--train.seed 1\n--train.seed 2\n")
    source = veomni.read([str(NESTED), str(options)])
    assert source.tree["train"]["seed"] == 2 and "overrides 1" in source.notes["train.seed"]


# ---- reading: the architecture in config.json ------------------------------------------------


def test_config_json_leaves_are_reported_as_written() -> None:
    result = translate(NESTED, "veomni", "cerebras")
    by = entries(result)
    assert by["config.json:num_hidden_layers"].target_key == "model.num_hidden_layers"
    assert by["config.json:intermediate_size"].target_key == "model.filter_size"
    assert result.config["model"]["filter_size"] == 5632
    assert result.config["model"]["attention_module"] == "multiquery_attention"
    assert result.config["model"]["extra_attention_params"] == {"num_kv_groups": 4}
    assert by["config.json:bos_token_id"].status is Status.DROPPED
    # every config.json leaf is in the report once
    config = json.loads((HERE / "tinyllama" / "config.json").read_text())
    assert {k for k in by if k.startswith("config.json:")} == {f"config.json:{k}" for k in flatten(config)}


def test_transformers5_rope_parameters_read_as_the_classic_keys() -> None:
    ir = read_ir([str(PYTHIA)], "veomni").ir
    assert ir.get("model.family") == "gpt-neox" and ir.get("model.parallel_residual") is True
    assert ir.get("model.rotary_fraction") == 0.25 and ir.get("model.rotary_base") == 10000.0
    assert ir.get("model.activation") == "gelu"  # HF "gelu" is the exact erf GELU
    result = translate(PYTHIA, "veomni", "neox")
    assert result.config["rotary_pct"] == 0.25 and result.config["gpt_j_residual"] is True
    assert entries(result)["config.json:rope_parameters.rope_theta"].target_key == "rotary_emb_base"
    # Pythia's 299,892,736,000 tokens / (1024 x 2048) = 143000 steps exactly
    assert result.config["train_iters"] == 143000 and result.config["lr_decay_iters"] == 143000


def test_without_config_json_every_architecture_key_is_missing() -> None:
    corpus_dir("veomni")
    result = translate(CORPUS / "veomni" / "text" / "llama3.yaml", "veomni", "cerebras")
    missing = targets(result, Status.MISSING)
    for key in (
        "model.hidden_size",
        "model.num_hidden_layers",
        "model.num_heads",
        "model.filter_size",
        "model.vocab_size",
    ):
        assert "meta-llama/Meta-Llama-3-8B" in missing[key].detail and "--model-config" in missing[key].detail
    assert "model" not in result.config or "hidden_size" not in result.config["model"]


def test_model_config_option_supplies_the_architecture() -> None:
    corpus_dir("veomni")
    result = translate(
        CORPUS / "veomni" / "text" / "llama3.yaml", "veomni", "neox", model_config=HERE / "tinyllama" / "config.json"
    )
    assert result.config["num_layers"] == 22 and result.config["num_kv_heads"] == 4
    assert "model.hidden_size" not in targets(result, Status.MISSING)
    with pytest.raises(Exception, match="keeps the model architecture in the config itself"):
        translate(FIXTURES / "inputs" / "neox" / "pythia-160m.yml", "neox", "veomni", model_config=HERE / "tinyllama")


def test_an_unmapped_model_type_says_so(tmp_path: Path) -> None:
    (tmp_path / "t5").mkdir()
    (tmp_path / "t5" / "config.json").write_text(json.dumps({"model_type": "t5", "d_model": 512, "num_heads": 8}))
    # (with an lr: the output holds a value of the file, issue 28)
    (tmp_path / "run.yaml").write_text(
        "model:\n  config_path: t5\ndata:\n  train_path: x\ntrain:\n  optimizer:\n    lr: 1.0e-4\n"
    )
    result = translate(tmp_path / "run.yaml", "veomni", "cerebras")
    assert "HF t5 (T5Config): an encoder-decoder model" in targets(result, Status.MISSING)["model.hidden_size"].detail
    detail = entries(result)["config.json:model_type"].detail
    assert "neoconv maps gpt_neox, gptj, gpt2, llama, mistral, mixtral, qwen2" in detail and "deepseek_v3" in detail


def test_cli_model_config_and_side_file(runner, tmp_path: Path) -> None:
    corpus_dir("veomni")
    out = tmp_path / "neox.yml"
    result = runner.invoke(
        main,
        [
            "veomni2neox",
            str(CORPUS / "veomni" / "text" / "llama3.yaml"),
            "--model-config",
            str(HERE / "tinyllama"),
            "-o",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load(out.read_text())["hidden_size"] == 2048
    result = runner.invoke(
        main, ["neox2veomni", str(FIXTURES / "inputs" / "neox" / "pythia-160m.yml"), "--world-size", "8", "-q"]
    )
    assert result.exit_code == 2 and "config.json" in result.stderr and "-o OUT" in result.stderr
    out = tmp_path / "veomni.yaml"
    result = runner.invoke(
        main,
        [
            "neox2veomni",
            str(FIXTURES / "inputs" / "neox" / "pythia-160m.yml"),
            "--world-size",
            "8",
            "-o",
            str(out),
            "-q",
        ],
    )
    assert result.exit_code == 0, result.stderr
    # named after the output, so that two outputs in one folder never share one
    assert json.loads((tmp_path / "veomni.config.json").read_text())["model_type"] == "gpt_neox"
    assert yaml.safe_load(out.read_text())["model"]["config_path"] == "veomni.config.json"
    assert not (tmp_path / "config.json").exists()


def test_the_config_json_read_is_never_overwritten(runner, tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text(NESTED.read_text().replace("config_path: tinyllama", "config_path: ."))
    (tmp_path / "config.json").write_text((HERE / "tinyllama" / "config.json").read_text())
    before = (tmp_path / "config.json").read_text()
    result = runner.invoke(main, ["veomni2veomni", str(tmp_path / "run.yaml"), "-o", str(tmp_path / "out.yaml"), "-q"])
    assert result.exit_code == 0, result.stderr  # same format: the config.json stays where it is
    result = runner.invoke(main, ["veomni2neox", str(tmp_path / "run.yaml"), "-o", str(tmp_path / "config.json"), "-q"])
    assert result.exit_code == 2 and (tmp_path / "config.json").read_text() == before


# ---- writing: into VeOmni --------------------------------------------------------------------


def test_neox_pythia_into_veomni_with_config_json() -> None:
    result = translate(
        FIXTURES / "inputs" / "neox" / "pythia-160m.yml",
        "neox",
        "veomni",
        world_size=8,
        set_values={"model.vocab_size": 50304},
    )
    config = json.loads(result.side_files["config.json"])
    assert config["model_type"] == "gpt_neox" and config["architectures"] == ["GPTNeoXForCausalLM"]
    assert config["rotary_pct"] == 0.25 and config["use_parallel_residual"] is True
    assert config["hidden_act"] == "gelu_new"  # NeoX bias_gelu_fusion is the tanh GELU
    assert config["tie_word_embeddings"] is False and config["vocab_size"] == 50304
    assert config["intermediate_size"] == 3072 and config["layer_norm_eps"] == 1e-5
    doc = result.config
    assert doc["model"]["config_path"] == "config.json"
    train = doc["train"]
    assert train["global_batch_size"] == 256 and train["micro_batch_size"] == 32  # 32 x 1 x 8 GPUs
    tokens = doc["data"]["train_size"]
    assert math.ceil(tokens / (256 * 2048)) == 143000  # VeOmni counts the same 143000 steps
    opt = train["optimizer"]
    assert opt["lr_decay_style"] == "cosine" and opt["lr_min"] == 6e-5
    assert int(143000 * opt["lr_warmup_ratio"]) == 1430  # NeoX warmup 0.01 of lr_decay_iters
    assert int(143000 * opt["lr_decay_ratio"]) == 143000
    assert train["accelerator"]["fsdp_config"]["fsdp_mode"] == "fsdp2" and train["init_device"] == "meta"
    assert train["checkpoint"] == {"output_dir": "checkpoints/pythia-160m", "save_steps": 1000}
    by = entries(result)
    assert by["zero_optimization.stage"].status is Status.LOSSY  # ZeRO-1 has no FSDP2 form
    assert by["fp16.enabled"].status is Status.LOSSY and "no loss scaler" in by["fp16.enabled"].detail
    assert by["optimizer.params.betas"].status is Status.CONVERTED  # [0.9, 0.95]: what VeOmni hard-codes
    assert by["num_layers"].target_key == "config.json:num_hidden_layers"
    missing = targets(result, Status.MISSING)
    assert set(missing) == {"data.train_path", "model.tokenizer_path"}


def test_neox_llama2_into_veomni_llama() -> None:
    corpus_dir("neox")
    result = translate(CORPUS / "neox" / "llama2" / "7B.yml", "neox", "veomni", set_values={"model.vocab_size": 32000})
    config = json.loads(result.side_files["config.json"])
    assert config["model_type"] == "llama" and config["hidden_act"] == "silu"
    assert config["intermediate_size"] == 11008  # NeoX 32768 with mlp_multiple_of 256
    assert config["rms_norm_eps"] == 1e-5 and config["attention_bias"] is False
    # 7B.yml leaves use_bias_in_mlp at NeoX's default (true): that model has MLP biases
    assert config["mlp_bias"] is True
    assert "num_key_value_heads" not in config  # no GQA in 7B.yml: Llama's default (= heads) is right
    betas = next(e for e in result.report.entries if "optim.betas=[0.9, 0.999]" in e.detail)
    assert betas.status is Status.LOSSY and "(0.9, 0.95)" in betas.detail  # NeoX's default, not in 7B.yml


def test_neox_20b_into_veomni_needs_the_vocab() -> None:
    corpus_dir("neox")
    result = translate(CORPUS / "neox" / "20B.yml", "neox", "veomni", world_size=96)
    missing = targets(result, Status.MISSING)
    assert "--set model.vocab_size=N" in missing["config.json:vocab_size"].detail
    config = json.loads(result.side_files["config.json"])
    assert config["num_hidden_layers"] == 44 and config["rotary_pct"] == 0.25 and config["rotary_emb_base"] == 10000.0
    assert result.config["train"]["global_batch_size"] == 1536  # micro 4 x accumulation 32 x dp 12


def test_cerebras_gpt2_and_gptj_into_veomni() -> None:
    corpus_dir("cerebras-legacy")
    gpt2 = json.loads(
        translate(CORPUS / "cerebras-legacy" / "gpt2" / "params_gpt2_small.yaml", "cerebras", "veomni").side_files[
            "config.json"
        ]
    )
    assert gpt2["model_type"] == "gpt2" and gpt2["n_embd"] == 768 and gpt2["n_inner"] == 3072
    assert gpt2["tie_word_embeddings"] is True and gpt2["resid_pdrop"] == 0.1
    gptj = json.loads(
        translate(CORPUS / "cerebras-legacy" / "gptj" / "params_gptj_6B.yaml", "cerebras", "veomni").side_files[
            "config.json"
        ]
    )
    assert gptj["model_type"] == "gptj" and gptj["rotary_dim"] == 64 and gptj["n_layer"] == 28


def test_flat_layout_writes_only_flat_fields() -> None:
    result = translate(FIXTURES / "inputs" / "neox" / "pythia-160m.yml", "neox", "veomni", layout="flat", world_size=8)
    train = result.config["train"]
    assert train["lr"] == 6e-4 and train["output_dir"] == "checkpoints/pythia-160m"
    assert train["data_parallel_mode"] == "fsdp2" and train["enable_reshard_after_forward"] is False
    assert train["enable_mixed_precision"] is True and "accelerator" not in train
    assert train["optimizer"] == "adamw"  # one scalar in the flat layout
    fields = veomni_fields()
    for leaf, value in flatten(dict(result.config)).items():
        assert "flat" in fields.layouts_of(leaf, value), leaf
    assert entries(result)["optimizer.params.lr"].target_key.startswith("train.lr, train.lr_start")


# ---- the layout migration ---------------------------------------------------------------------


def test_flat_to_nested_migration_gives_the_nested_file() -> None:
    result = translate(FLAT, "veomni", "veomni", layout="nested")
    assert flatten(dict(result.config)) == flatten(yaml.safe_load(NESTED.read_text()))
    assert result.side_files == {}  # the config.json stays where model.config_path points
    assert all(e.status is Status.EXACT for e in result.report.entries)


def test_nested_to_flat_writes_the_defaults_that_differ(tmp_path: Path) -> None:
    lean = tmp_path / "lean.yaml"
    lean.write_text("model:\n  model_path: m\ndata:\n  train_path: d\ntrain:\n  optimizer:\n    lr: 1.0e-4\n")
    result = translate(lean, "veomni", "veomni", layout="flat")
    train = result.config["train"]
    # nested defaults fsdp2 / meta / "output" are not the flat layout's (ddp / cuda / required)
    assert train["data_parallel_mode"] == "fsdp2" and train["init_device"] == "meta" and train["output_dir"] == "output"
    defaulted = targets(result, Status.DEFAULTED)  # (the mode and the device its mode needs: one rule, one entry)
    assert {key for keys in defaulted for key in keys.split(", ")} == {
        "train.data_parallel_mode",
        "train.init_device",
        "train.output_dir",
    }


def test_nested_only_fields_have_no_flat_place() -> None:
    corpus_dir("veomni")
    result = translate(CORPUS / "veomni" / "text" / "qwen3_moe_muon.yaml", "veomni", "veomni", layout="flat")
    entry = entries(result)["train.optimizer.muon_momentum"]
    assert entry.status is Status.DROPPED and "flat layout" in entry.detail
    typo = entries(result)["train.accelerator.offload.enable_activation"]
    assert typo.status is Status.DROPPED and "not a VeOmni field" in typo.detail


LEGACY_TO_HEAD = [
    "text/llama3.yaml",
    "text/qwen3.yaml",
    "text/deepseek.yaml",
    "multimodal/qwen2_vl/qwen2_vl.yaml",
    "dit/wan_sft.yaml",
]


@pytest.mark.parametrize("name", LEGACY_TO_HEAD)
def test_migration_matches_veomnis_own(name: str) -> None:
    """VeOmni's authors migrated these files themselves (PR #538): ours gives the same fields."""
    corpus_dir("veomni-legacy")
    ours = flatten(dict(translate(CORPUS / "veomni-legacy" / name, "veomni", "veomni", layout="nested").config))
    theirs = flatten(yaml.safe_load((CORPUS / "veomni" / name).read_text()))
    # their files set `accelerator.offload.*`, a key VeOmni ignores (the field is offload_config);
    # ours keeps what the flat file said under the real field
    theirs = {k: v for k, v in theirs.items() if not k.startswith("train.accelerator.offload.")}
    kept_by_us = {"train.accelerator.offload_config.enable_activation", "train.accelerator.fsdp_config.offload"}
    later = {
        "data.dyn_bsz_buffer_size",
        "model.ops_implementation.rotary_pos_emb_implementation",
        "model.ops_implementation.moe_implementation",
    }  # added or changed after the migration
    assert {k: v for k, v in ours.items() if k not in kept_by_us and k not in later} == {
        k: v for k, v in theirs.items() if k not in later
    }


def test_fsdp1_becomes_fsdp2_with_the_reason() -> None:
    corpus_dir("veomni-legacy")
    result = translate(CORPUS / "veomni-legacy" / "text" / "llama3.yaml", "veomni", "veomni", layout="nested")
    fsdp = result.config["train"]["accelerator"]["fsdp_config"]
    assert fsdp["fsdp_mode"] == "fsdp2" and result.config["train"]["init_device"] == "meta"
    by = entries(result)
    assert (
        by["train.data_parallel_mode"].status is Status.CONVERTED
        and "FSDP1 was removed" in by["train.data_parallel_mode"].detail
    )
    assert by["train.enable_full_shard"].target_key == "train.accelerator.fsdp_config.fsdp_mode"


# ---- semantics of single rules, with real values ------------------------------------------------


def test_dyn_bsz_batches_are_token_budgets() -> None:
    corpus_dir("veomni")
    result = translate(CORPUS / "veomni" / "text" / "llama3.yaml", "veomni", "deepspeed")
    by = entries(result)
    assert (
        by["train.global_batch_size"].status is Status.LOSSY and "token budgets" in by["train.global_batch_size"].detail
    )
    assert result.config["train_batch_size"] == 512


def test_linear_schedule_ignores_lr_min(tmp_path: Path) -> None:
    run = tmp_path / "run.yaml"
    run.write_text(
        "model:\n  model_path: m\ndata:\n  train_path: d\n  max_seq_len: 1024\n  train_size: 1024000000\n"
        "train:\n  global_batch_size: 100\n  optimizer:\n    lr: 1.0e-4\n    lr_min: 1.0e-5\n"
        "    lr_decay_style: linear\n    lr_decay_ratio: 0.5\n    lr_warmup_ratio: 0.1\n"
    )
    ir = read_ir([str(run)], "veomni")
    # 1024000000 / (100 x 1024) = 10000 steps; linear heads for 0 at the last whatever lr_decay_ratio, and is
    # floored at 1e-7 (not lr_min): 1e-4 x (10000 - t) / 9000 reaches 1e-7 at step 9991
    assert ir.ir.get("train.steps") == 10000 and ir.ir.get("schedule.decay_steps") == 9991
    assert ir.ir.get("schedule.warmup_steps") == 1000.0 and ir.ir.get("schedule.min_lr") == 1e-7
    result = translate(run, "veomni", "neox")
    # NeoX's linear to 0 clamped at min_lr 1e-7 is the same line; only its first step differs (lr / W)
    assert {k: result.config[k] for k in ("lr_decay_style", "warmup", "min_lr", "lr_decay_iters")} == {
        "lr_decay_style": "linear",
        "warmup": 0.1,
        "min_lr": 1e-7,
        "lr_decay_iters": 10000,
    }
    entry = entries(result)["train.optimizer.lr_min"]
    assert entry.status is Status.LOSSY and "at most 1e-07 (step 0: 1e-07 instead of 0)" in entry.detail


def test_cosine_decay_ratio_is_the_decay_end(tmp_path: Path) -> None:
    run = tmp_path / "run.yaml"
    run.write_text(
        "model:\n  model_path: m\ndata:\n  train_path: d\n  max_seq_len: 1024\n  train_size: 1024000000\n"
        "train:\n  global_batch_size: 100\n  num_train_epochs: 3\n  optimizer:\n    lr: 1.0e-4\n"
        "    lr_decay_style: cosine\n    lr_decay_ratio: 0.9\n"
    )
    ir = read_ir([str(run)], "veomni").ir
    assert ir.get("train.steps") == 30000  # 10000 per epoch, 3 epochs: the schedule spans all of them
    assert ir.get("schedule.decay_steps") == 27000  # int(30000 x 0.9); the lr then holds lr_min
    result = translate(run, "veomni", "cerebras")
    assert result.config["optimizer"]["learning_rate"] == [
        {"scheduler": "CosineDecay", "initial_learning_rate": 1e-4, "end_learning_rate": 1e-7, "total_iters": 27000},
        {"scheduler": "Constant", "learning_rate": 1e-7},
    ]


def test_neox_linear_decay_shorter_than_training_is_lossy(tmp_path: Path) -> None:
    cfg = tmp_path / "neox.yml"
    cfg.write_text(
        "train_iters: 1000\nlr_decay_iters: 800\nlr_decay_style: linear\nwarmup: 0.0\n"
        "optimizer: {type: Adam, params: {lr: 1.0e-4}}\ntrain_batch_size: 64\nseq_length: 128\n"
    )
    result = translate(cfg, "neox", "veomni")
    entry = entries(result)["lr_decay_iters"]
    # VeOmni's linear always reaches its floor at the run's last step: the closest is its cosine ending at 800
    assert entry.status is Status.LOSSY and "at most 1.053e-05 (step 176: 8.853e-05 instead of 7.8e-05)" in entry.detail
    opt = result.config["train"]["optimizer"]
    assert opt["lr_decay_style"] == "cosine" and int(1000 * opt["lr_decay_ratio"]) == 800


def test_max_grad_norm_zero_means_no_clipping_elsewhere() -> None:
    cfg = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"
    result = translate(cfg, "neox", "veomni", set_values={"optim.grad_clip": 0.0})
    assert result.config["train"]["optimizer"]["max_grad_norm"] == math.inf  # clip_grad_norm_ always runs
    assert "max_grad_norm: .inf" in result.dump()


# ---- DeepSpeed <-> VeOmni ---------------------------------------------------------------------


def _deepspeed() -> None:
    from neoconv.knowledge.registry import FORMATS

    if "deepspeed" not in FORMATS:
        pytest.skip("the deepspeed format is not registered")


def test_veomni_into_deepspeed_schedule() -> None:
    _deepspeed()
    result = translate(NESTED, "veomni", "deepspeed")
    # DeepSpeed's warmup runs a step late: the closest starts one step of VeOmni's warmup in
    assert result.config["scheduler"] == {
        "type": "WarmupCosineLR",
        "params": {
            "warmup_num_steps": 2001,
            "warmup_type": "linear",
            "total_num_steps": 47684,
            "warmup_min_ratio": pytest.approx(1 / 2002),
            "cos_min_ratio": 0.1,
        },  # lr_min 4e-5 / lr 4e-4
    }
    lossy = entries(result)["train.optimizer.lr"]
    assert (
        lossy.status is Status.LOSSY
        and "at most 7.17e-09 (step 18183: 0.00029958 instead of 0.00029959)" in lossy.detail
    )
    assert result.config["optimizer"]["params"]["betas"] == [0.9, 0.95]  # VeOmni's hard-coded betas, explicit
    assert result.config["zero_optimization"]["stage"] == 3 and result.config["bf16"]["enabled"] is True


def test_deepspeed_into_veomni_needs_the_steps() -> None:
    _deepspeed()
    source = FIXTURES / "inputs" / "deepspeed" / "warmup-cosine-lr-zero2.json"
    if not source.exists():
        pytest.skip("the DeepSpeed fixtures are not present")
    result = translate(source, "deepspeed", "veomni", world_size=8)
    opt = result.config["train"]["optimizer"]
    assert opt["lr_min"] == pytest.approx(1e-5)  # cos_min_ratio x lr
    # the ratios are of a step count the output cannot state: for the schedule's own length, said so
    assert "ratios computed for 20002 steps" in entries(result)["scheduler.params.warmup_num_steps"].detail
    missing = next(e for e in result.report.entries if e.target_key == "data.train_size")
    assert missing.status is Status.MISSING and "--set train.steps=N" in missing.detail
    assert entries(result)["optimizer.type"].status is Status.DROPPED  # Adam without adam_w_mode: coupled L2
    given = translate(
        source, "deepspeed", "veomni", world_size=8, set_values={"train.steps": 20000, "model.seq_length": 2048}
    )
    opt = given.config["train"]["optimizer"]
    # DeepSpeed's peak comes a step late (2001); its cosine ends at 20000 + 1, past the run
    assert int(20000 * opt["lr_warmup_ratio"]) == 2001 and int(20000 * opt["lr_decay_ratio"]) == 19999
    assert math.ceil(given.config["data"]["train_size"] / (512 * 2048)) == 20000


def test_reading_a_config_json_is_linear_in_its_keys(tmp_path: Path) -> None:
    """Reading config.json is linear in its keys (it searched the text once per key: 44 s for 20,000).
    Measured as CPU time against the same read of a tenth of the keys: linear is ~10x, quadratic ~100x."""
    base = json.loads((HERE / "tinyllama" / "config.json").read_text())

    def read(keys: int) -> float:
        folder = tmp_path / str(keys)
        folder.mkdir()
        (folder / "config.json").write_text(
            json.dumps({**base, **{f"extra_key_{i}": i for i in range(keys)}}, indent=2)
        )
        (folder / "run.yaml").write_text(NESTED.read_text().replace("config_path: tinyllama", "config_path: ."))
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            source = load(str(folder / "run.yaml"), "veomni")
            best = min(best, time.process_time() - started)
        last = f"hf.extra_key_{keys - 1}"
        assert source.tree["hf"][f"extra_key_{keys - 1}"] == keys - 1
        assert source.line_of(last) == (folder / "config.json").read_text().count("\n")  # the last key's line
        return best

    small, large = read(2_000), read(20_000)
    assert large < 30 * max(small, 1e-3), f"2,000 keys: {small:.3f}s, 20,000 keys: {large:.3f}s"


def test_a_data_type_the_flat_layout_lacks_is_dropped_with_its_reason() -> None:
    # data_type "dpo" came with PR #558; the flat era's DataArguments (ac3b9f01) take plaintext,
    # conversation, diffusion, classification and raise "Unknown data type: dpo"
    source = {
        "model": {"model_path": "./Qwen3-0.6B"},
        "data": {"train_path": "./prefs", "data_type": "dpo", "max_seq_len": 2048},
        "train": {
            "global_batch_size": 8,
            "micro_batch_size": 1,
            "optimizer": {"type": "adamw", "lr": 5e-7},
            "checkpoint": {"output_dir": "out"},
        },
        "dpo_config": {"beta": 0.1},
    }
    flat = translate(source, "veomni", "veomni", layout="flat")
    assert "data_type" not in flat.config["data"] and flat.config["data"]["max_seq_len"] == 2048
    entry = next(e for e in flat.report.entries if e.source_key == "data.data_type")
    assert entry.status is Status.DROPPED
    assert "no data.data_type 'dpo'" in entry.detail and "its default 'conversation' applies" in entry.detail
    nested = translate(source, "veomni", "veomni", layout="nested")
    assert nested.config["data"]["data_type"] == "dpo"
    plain = translate(
        {**source, "data": {**source["data"], "data_type": "plaintext"}}, "veomni", "veomni", layout="flat"
    )
    assert plain.config["data"]["data_type"] == "plaintext"


# ---- derive, then check, as TrainingArguments.__post_init__ does (issue #27 item 4) ---------------------

_BATCH_RUN = (
    "model:\n  model_path: m\ndata:\n  train_path: d\n  max_seq_len: 1024\n  train_size: 1024000000\n"
    "train:\n  global_batch_size: {gbs}\n  micro_batch_size: 4\n  accelerator:\n    ulysses_size: 2\n"
    "  optimizer:\n    lr: 1.0e-4\n"
)


def test_a_global_batch_no_world_size_runs_is_refused_without_one(tmp_path: Path) -> None:
    """_derive_batch_config after _validate_accelerator's dp = WORLD_SIZE / ulysses: global 30 over micro 4 is no
    whole accumulation at any dp, so VeOmni refuses the file whatever the GPUs (no --world-size needed)."""
    run = tmp_path / "run.yaml"
    run.write_text(_BATCH_RUN.format(gbs=30))
    with pytest.raises(InputError, match="global_batch_size 30 is not a multiple of micro_batch_size 4"):
        translate(run, "veomni", "neox")


def test_a_global_batch_some_world_size_runs_is_read_and_derived_with_one(tmp_path: Path) -> None:
    """Global 32 over micro 4 runs at dp 1, 2, 4, 8: read without a world size; with 16 GPUs and ulysses 2,
    dp = 8 and the accumulation VeOmni derives is 32 / (4 x 8) = 1; with 32 GPUs dp 16 no longer divides."""
    run = tmp_path / "run.yaml"
    run.write_text(_BATCH_RUN.format(gbs=32))
    assert read_ir([str(run)], "veomni").ir.get("batch.global") == 32
    at16 = read_ir([str(run)], "veomni", world_size=16).ir
    assert (at16.get("parallel.data_parallel_size"), at16.get("batch.grad_accum")) == (8, 1)
    with pytest.raises(InputError, match="not a multiple of micro_batch_size x data-parallel size = 64"):
        translate(run, "veomni", "neox", world_size=32)
