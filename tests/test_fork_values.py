"""Issue #27 item 3: a value the release does not know is a fork's, not bad input. One rule for every
table shape and formula (translator/formula.py UnknownValue -> Foreign): an `unknown` entry for the
field, naming the value and the release, and the rest of the file translates; a same-format
translation carries it as written. The constructs are the forks' own (GPT-NeoX forks with their own
optimizers, norms, lr schedules, attention blocks and tokenizers; Megatron-DeepSpeed's tokenizer; a
DeepSpeed optimizer outside DeepSpeed's list), in small files written here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from neoconv.api import translate
from neoconv.core.report import Status

# a small NeoX model; each case adds one fork construct
NEOX = """\
num_layers: 4
hidden_size: 256
num_attention_heads: 4
seq_length: 512
max_position_embeddings: 512
pos_emb: rotary
optimizer: {type: Adam, params: {lr: 0.0006, betas: [0.9, 0.95], eps: 1.0e-8}}
min_lr: 0.00006
lr_decay_style: cosine
warmup: 0.01
train_iters: 20000
train_micro_batch_size_per_gpu: 8
gradient_accumulation_steps: 1
weight_decay: 0.1
"""


def _neox(tmp_path: Path, text: str) -> str:
    path = tmp_path / "fork.yml"
    path.write_text(text)
    return str(path)


def _entry(result: Any, key: str) -> Any:
    return next(e for e in result.report.entries if e.source_key == key)


@pytest.mark.parametrize(
    "edit,key,value,fields",
    [
        # optimizers forks add (the lamb and SOAP): NeoX's Literal has neither
        (("type: Adam", "type: lamb"), "optimizer.type", "lamb", ("optim.type",)),
        (("type: Adam", "type: SOAP"), "optimizer.type", "SOAP", ("optim.type",)),
        # norms: the layernorm_nonparam, and a NeoX fork's flash_rmsnorm (LorrinWWW/gpt-neox-llama)
        (
            ("pos_emb: rotary", "pos_emb: rotary\nnorm: layernorm_nonparam"),
            "norm",
            "layernorm_nonparam",
            ("model.norm",),
        ),
        (("pos_emb: rotary", "pos_emb: rotary\nnorm: flash_rmsnorm"), "norm", "flash_rmsnorm", ("model.norm",)),
        # a fork's attention block (hyena, LorrinWWW/gpt-neox-llama configs/h100/1.8B_hyena.yml)
        (
            ("pos_emb: rotary", "pos_emb: rotary\nattention_config: [[[hyena], 4]]"),
            "attention_config",
            "hyena",
            ("model.attention_kind",),
        ),
        # a position embedding and an MLP kind no NeoX release has
        (("pos_emb: rotary", "pos_emb: spiral"), "pos_emb", "spiral", ("model.position_embedding",)),
        (("pos_emb: rotary", "pos_emb: rotary\nmlp_type: gated"), "mlp_type", "gated", ("model.mlp_bias",)),
    ],
)
def test_a_forks_value_is_unknown_and_the_rest_translates(
    tmp_path: Path, edit: tuple[str, str], key: str, value: str, fields: tuple[str, ...]
) -> None:
    assert edit[0] in NEOX
    path = _neox(tmp_path, NEOX.replace(*edit))
    done = translate(path, "neox", "cerebras", world_size=8)
    entry = _entry(done, key)
    assert entry.status is Status.UNKNOWN and entry.kind == "not_a_value" and entry.fields == fields
    assert entry.values["value"] == value and entry.values["title"] == "GPT-NeoX"
    assert entry.values["release"] == done.report.source["version"]
    assert f"{value!r} is not a value of GPT-NeoX {done.report.source['version']}" in entry.detail
    assert "a fork's?" in entry.detail
    model = yaml.safe_load(done.dump())["model"]  # the rest translates
    assert (model["hidden_size"], model["num_hidden_layers"], model["num_heads"]) == (256, 4, 4)
    for field in fields:
        assert done.ir.get(field) is None  # the field gets no value (no default stands in for it)
    # a same-format translation (to the file's own release: a later one may have retired the key) carries it as
    # written, still named
    same = translate(path, "neox", "neox", world_size=8, target_version=done.report.source["version"])
    assert _entry(same, key).status is Status.UNKNOWN and "carried as written" in _entry(same, key).detail
    assert value in same.dump()


def test_a_forks_decay_style_keeps_the_peak_lr(tmp_path: Path) -> None:
    """infinite_cosine (zainsarwar865/gpt-neox c1_configs, its learning_rates.py): the schedule is
    unknown, the lr is not; the keys read with the style are named lossy, the style unknown."""
    path = _neox(tmp_path, NEOX.replace("lr_decay_style: cosine", "lr_decay_style: infinite_cosine"))
    done = translate(path, "neox", "cerebras", world_size=8)
    style = _entry(done, "lr_decay_style")
    assert style.status is Status.UNKNOWN and style.values["value"] == "infinite_cosine"
    assert style.fields == ("optim.lr", "schedule.phases") and style.values["fields"] == ["schedule.phases"]
    assert done.ir.get("optim.lr") == 0.0006 and done.ir.get("schedule.phases") is None
    warmup = _entry(done, "warmup")
    assert warmup.status is Status.LOSSY and "lr_decay_style='infinite_cosine'" in warmup.detail
    assert yaml.safe_load(done.dump())["optimizer"]["learning_rate"] == 0.0006


def test_a_tokenizer_the_release_lacks_is_unknown(tmp_path: Path) -> None:
    """A key no rule reads is checked against the release's Literal too (NeoX's tokenizer_type, from
    the key history): Llama3HFTokenizer is a fork's; at 2021-04-26, when tokenizer_type was any str, no
    release's list applies."""
    path = _neox(tmp_path, NEOX + "tokenizer_type: Llama3HFTokenizer\n")
    done = translate(path, "neox", "cerebras", world_size=8)
    entry = _entry(done, "tokenizer_type")
    assert entry.status is Status.UNKNOWN and entry.values["value"] == "Llama3HFTokenizer"
    assert "TiktokenTokenizer" in entry.values["known"]
    known = translate(_neox(tmp_path, NEOX + "tokenizer_type: hftokenizer\n"), "neox", "cerebras", world_size=8)
    assert _entry(known, "tokenizer_type").status is Status.DROPPED  # NeoX matches its Literal in any case
    old = translate(path, "neox", "cerebras", world_size=8, source_version="2021-04-26")
    assert _entry(old, "tokenizer_type").status is Status.DROPPED


def test_upstream_non_parametric_layernorm_reads(tmp_path: Path) -> None:
    """NeoX's own non_parametric_layernorm (2025-02-18, megatron/model/norms.py) was refused: it is a
    norm without weight or bias, Model Zoo's nonparametric-layernorm."""
    path = _neox(tmp_path, NEOX.replace("pos_emb: rotary", "pos_emb: rotary\nnorm: non_parametric_layernorm"))
    done = translate(path, "neox", "cerebras", world_size=8)
    assert done.ir.get("model.norm") == "non_parametric_layernorm" and done.ir.get("model.norm_bias") is False
    assert yaml.safe_load(done.dump())["model"]["norm_type"] == "nonparametric-layernorm"


def test_a_target_that_needs_the_forks_field_names_it_missing(tmp_path: Path) -> None:
    """NeoX refuses an optimizer block without a type and DeepSpeed builds no optimizer from one: the
    type is `missing` with its --set (Model Zoo's table already says it needs one)."""
    path = _neox(tmp_path, NEOX.replace("type: Adam", "type: SOAP"))
    for dst in ("neox", "deepspeed", "cerebras"):
        source = path
        if dst == "neox":  # from DeepSpeed, so that the writer works from canonical values
            source = str(tmp_path / "ds.json")
            Path(source).write_text(
                json.dumps(
                    {
                        "train_batch_size": 64,
                        "train_micro_batch_size_per_gpu": 8,
                        "optimizer": {"type": "SOAP", "params": {"lr": 0.001}},
                    }
                )
            )
        done = translate(source, "deepspeed" if dst == "neox" else "neox", dst, world_size=8)
        missing = [e for e in done.report.entries if e.status is Status.MISSING and "optim.type" in e.fields]
        assert missing and "--set optim.type=" in missing[0].detail, dst
        assert _entry(done, "optimizer.type").status is Status.UNKNOWN


def test_deepspeed_optimizer_outside_its_list(tmp_path: Path) -> None:
    """The `cases` shape: no reading case names the value (DeepSpeed's list and torch.optim's names):
    the one rule, not an error case per table."""
    path = tmp_path / "ds.json"
    path.write_text(
        json.dumps(
            {
                "train_batch_size": 64,
                "train_micro_batch_size_per_gpu": 8,
                "optimizer": {"type": "SOAP", "params": {"lr": 0.001}},
                "zero_optimization": {"stage": 4},
            }
        )
    )
    done = translate(str(path), "deepspeed", "neox", world_size=8)
    assert _entry(done, "optimizer.type").values["value"] == "SOAP"
    stage = _entry(done, "zero_optimization.stage")  # an enum's: ZeRO stage 4 is no DeepSpeed release's
    assert stage.status is Status.UNKNOWN and stage.values["value"] == 4 and stage.fields == ("parallel.zero_stage",)
    assert yaml.safe_load(done.dump())["train_batch_size"] == 64


def test_megatron_deepspeed_tokenizer(tmp_path: Path) -> None:
    """Megatron-DeepSpeed's --tokenizer-type PretrainedFromHF is no choice of any Megatron-LM release:
    argparse would refuse it, the fork runs it. Unknown, and the rest translates."""
    path = tmp_path / "bloom.args"
    path.write_text(
        "--num-layers 24\n--hidden-size 1024\n--num-attention-heads 16\n--seq-length 2048\n"
        "--max-position-embeddings 2048\n--tokenizer-type PretrainedFromHF\n--micro-batch-size 4\n"
        "--global-batch-size 64\n--lr 1e-4\n--train-iters 1000\n"
    )
    done = translate(str(path), "megatron", "neox", world_size=16)
    entry = _entry(done, "--tokenizer-type")
    assert entry.status is Status.UNKNOWN and "PretrainedFromHF" in entry.detail and "a fork's" in entry.detail
    assert yaml.safe_load(done.dump())["num_layers"] == 24


def test_a_forks_cerebras_scheduler(tmp_path: Path) -> None:
    """A scheduler name no Model Zoo release has: unknown, carried by both layouts (no crash)."""
    path = tmp_path / "params.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "train_input": {"data_processor": "GptHDF5DataProcessor", "data_dir": "./d", "batch_size": 64},
                "model": {
                    "name": "gpt2",
                    "vocab_size": 50257,
                    "hidden_size": 768,
                    "num_hidden_layers": 12,
                    "num_heads": 12,
                    "max_position_embeddings": 1024,
                },
                "optimizer": {
                    "optimizer_type": "AdamW",
                    "learning_rate": {
                        "scheduler": "WarmupStableDecay",
                        "initial_learning_rate": 6e-4,
                        "total_iters": 100,
                    },
                },
                "runconfig": {"max_steps": 100},
            }
        )
    )
    for layout in ("legacy", "trainer"):
        done = translate(str(path), "cerebras", "cerebras", layout=layout)
        entry = _entry(done, "optimizer.learning_rate.scheduler")
        assert entry.status is Status.UNKNOWN and entry.values["value"] == "WarmupStableDecay"
        assert "WarmupStableDecay" in done.dump()
