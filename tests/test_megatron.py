"""Megatron-LM argument files as a source and a target: what each construct reads as (canonical
values, with Megatron's defaults and derivations) and is written as, with real values from
Megatron's arguments.py (d98e8a64) and its older releases."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from neoconv import translate
from neoconv.api import read_ir
from neoconv.engine import Ingested, emit
from neoconv.formats.megatron.writer import WRITER
from neoconv.formats.spec import WriteContext
from neoconv.core.ir import IR, Origin, Value
from neoconv.knowledge.mapping import load_table
from neoconv.core.report import Status
from neoconv.core.report.kinds import render
from neoconv.schedule.model import Schedule
from neoconv.schedule.simple import simple

# what Megatron refuses to run without (validate_args' required arguments, a length, a batch, an lr)
BASE = (
    "--num-layers 2 --hidden-size 4096 --num-attention-heads 32 --seq-length 128 --max-position-embeddings 128\n"
    "--micro-batch-size 1 --lr 0.0003 --train-iters 1000\n"
)


def read(tmp: Path, extra: str = "", **options: Any) -> dict[str, Any]:
    path = tmp / "run.args"
    path.write_text(BASE + extra + "\n")
    return read_ir([str(path)], "megatron", **options).ir.plain()


def losses(tmp: Path, extra: str, **options: Any) -> str:
    path = tmp / "run.args"
    path.write_text(BASE + extra + "\n")
    return "; ".join(
        render(kind, values) for kind, values in read_ir([str(path)], "megatron", **options).lossy.values()
    )


# ---- reading: Megatron's defaults and derivations ----------------------------------------------


def test_a_file_of_defaults_reads_as_megatrons_defaults(tmp_path: Path) -> None:
    ir = read(tmp_path)
    assert {
        k: ir.get(k)
        for k in (
            "model.activation",
            "model.ffn_hidden_size",
            "model.num_kv_heads",
            "model.norm",
            "model.norm_bias",
            "model.norm_eps",
            "model.position_embedding",
            "model.tie_embeddings",
            "model.attention_bias",
            "model.mlp_bias",
            "model.hidden_dropout",
            "model.attention_dropout",
            "model.embedding_dropout",
            "model.init_std",
            "model.init_method",
            "model.output_init_method",
            "model.parallel_residual",
            "model.family",
            "optim.type",
            "optim.betas",
            "optim.eps",
            "optim.weight_decay",
            "optim.grad_clip",
            "schedule.decay_steps",
            "schedule.warmup_steps",
            "schedule.min_lr",
            "precision.dtype",
            "train.eval_interval",
            "train.eval_steps",
            "train.seed",
            "train.log_interval",
            "parallel.tensor_size",
            "parallel.pipeline_size",
            "parallel.sequence_size",
            "parallel.zero_stage",
            "batch.grad_accum",
            "model.head_dim",
            "model.vocab_size",
        )
    } == {
        # GELU: the fused bias_gelu_impl (tanh) while biases are on; 4h; as many kv heads as heads
        "model.activation": "gelu_tanh",
        "model.ffn_hidden_size": 16384,
        "model.num_kv_heads": 32,
        "model.norm": "layernorm",
        "model.norm_bias": True,
        "model.norm_eps": 1e-5,
        "model.position_embedding": "learned",
        "model.tie_embeddings": True,
        "model.attention_bias": True,
        "model.mlp_bias": True,
        "model.hidden_dropout": 0.1,
        "model.attention_dropout": 0.1,
        "model.embedding_dropout": 0.1,
        "model.init_std": 0.02,
        "model.init_method": "normal",
        "model.output_init_method": "scaled_normal",
        "model.parallel_residual": False,
        "model.family": "gpt2",
        # --optimizer adam is AdamW; beta2 0.999; weight decay 0.01; linear decay to --min-lr 0 at train_iters
        "optim.type": "adamw",
        "optim.betas": [0.9, 0.999],
        "optim.eps": 1e-8,
        "optim.weight_decay": 0.01,
        "optim.grad_clip": 1.0,
        "schedule.decay_steps": 1000,
        "schedule.warmup_steps": 0.0,
        "schedule.min_lr": 0.0,
        "precision.dtype": "fp32",
        "train.eval_interval": None,  # no evaluation since core_v0.16.0
        "train.eval_steps": 100,
        "train.seed": 1234,
        "train.log_interval": 100,
        "parallel.tensor_size": 1,
        "parallel.pipeline_size": 1,
        "parallel.sequence_size": 1,
        "parallel.zero_stage": 0,
        "batch.grad_accum": 1,
        "model.head_dim": None,
        "model.vocab_size": None,  # derived by Megatron / the tokenizer's at run time
    }
    lrs = Schedule.from_json(ir["schedule.phases"])  # linear from --lr 3e-4 to 0 at --train-iters 1000
    assert [lrs.value(t) for t in (0, 500, 1000, 1200)] == pytest.approx([3e-4, 1.5e-4, 0.0, 0.0])


@pytest.mark.parametrize(
    "extra, expected",
    [
        # int((4h * 2/3) / 64) * 64 = 10880 for h = 4096 (Llama passes 11008 / 14336 explicitly)
        ("--swiglu", {"model.activation": "swiglu", "model.ffn_hidden_size": 10880, "model.family": "llama"}),
        ("--swiglu --ffn-hidden-size 14336", {"model.ffn_hidden_size": 14336}),
        ("--squared-relu", {"model.activation": "relu2", "model.ffn_hidden_size": 16384}),
        # no biases: no fusion, so exact GELU; --no-bias-gelu-fusion likewise
        ("--disable-bias-linear", {"model.activation": "gelu", "model.attention_bias": False, "model.mlp_bias": False}),
        ("--no-bias-gelu-fusion", {"model.activation": "gelu", "model.mlp_bias": True}),
        (
            "--disable-bias-linear --add-qkv-bias",
            {"model.attention_bias": True, "model.attention_output_bias": False, "model.mlp_bias": False},
        ),
        ("--group-query-attention --num-query-groups 8", {"model.num_kv_heads": 8}),
        (
            "--normalization RMSNorm --norm-epsilon 1e-6",
            {"model.norm": "rmsnorm", "model.norm_bias": False, "model.norm_eps": 1e-6, "model.family": "llama"},
        ),
        (
            "--position-embedding-type rope --rotary-percent 0.5 --rotary-base 500000",
            {"model.position_embedding": "rotary", "model.rotary_fraction": 0.5, "model.rotary_base": 500000.0},
        ),
        ("--use-rotary-position-embeddings", {"model.position_embedding": "rotary", "model.rotary_base": 10000.0}),
        ("--position-embedding-type none", {"model.position_embedding": "none", "model.rotary_base": None}),
        ("--untie-embeddings-and-output-weights", {"model.tie_embeddings": False}),
        ("--kv-channels 128", {"model.head_dim": 128}),
        ("--qk-layernorm --apply-layernorm-1p", {"model.qk_norm": True, "model.norm_unit_offset": True}),
        ("--hidden-dropout 0.0", {"model.hidden_dropout": 0.0, "model.embedding_dropout": 0.0}),
        ("--padded-vocab-size 50304", {"model.vocab_size": 50304}),
        # NullTokenizer: --vocab-size padded to a multiple of 128 x tensor-parallel size
        ("--tokenizer-type NullTokenizer --vocab-size 50257", {"model.vocab_size": 50304}),
        (
            "--tokenizer-type NullTokenizer --vocab-size 128256 --tensor-model-parallel-size 8",
            {"model.vocab_size": 129024, "parallel.tensor_size": 8},
        ),
        ("--optimizer sgd --sgd-momentum 0.8", {"optim.type": "sgd", "optim.momentum": 0.8}),
        ("--adam-beta2 0.95 --adam-eps 1e-6", {"optim.betas": [0.9, 0.95], "optim.eps": 1e-6}),
        ("--clip-grad 0", {"optim.grad_clip": 0.0}),
        ("--bf16", {"precision.dtype": "bf16", "precision.loss_scale": None}),
        # fp16 without --loss-scale: dynamic, from 2^32
        (
            "--fp16",
            {
                "precision.dtype": "fp16",
                "precision.loss_scale": "dynamic",
                "precision.initial_loss_scale": 4294967296.0,
                "precision.loss_scale_window": 1000,
                "precision.hysteresis": 2,
                "precision.min_loss_scale": 1.0,
            },
        ),
        ("--fp16 --loss-scale 1024", {"precision.loss_scale": 1024.0}),
        ("--use-distributed-optimizer", {"parallel.zero_stage": 1}),
        ("--use-megatron-fsdp --ckpt-format fsdp_dtensor", {"parallel.zero_stage": 3}),
        ("--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads", {"parallel.zero_stage": 2}),
        ("--use-torch-fsdp2", {"parallel.zero_stage": 3}),
        (
            "--recompute-granularity full --recompute-method uniform --recompute-num-layers 1",
            {"train.activation_checkpointing": True},
        ),
        (
            "--eval-interval 500 --eval-iters 10 --log-interval 10 --seed 7",
            {"train.eval_interval": 500, "train.eval_steps": 10, "train.log_interval": 10, "train.seed": 7},
        ),
        (
            "--save /ckpt --save-interval 100 --load /old --tensorboard-dir /tb --wandb-project p",
            {
                "checkpoint.save_dir": "/ckpt",
                "checkpoint.interval": 100,
                "checkpoint.load_dir": "/old",
                "logging.tensorboard_dir": "/tb",
                "logging.wandb_project": "p",
                "logging.use_wandb": True,
            },
        ),
        # mixture of experts (examples/mixtral): 8 experts, top 2, aux loss 0.01
        (
            "--num-experts 8 --moe-router-topk 2 --moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 1e-2",
            {
                "model.moe_num_experts": 8,
                "model.moe_experts_per_token": 2,
                "model.moe_aux_loss_coef": 0.01,
                "model.moe_router_scoring": "softmax",
                "model.moe_layer_interval": None,
            },
        ),  # None: every layer (none_means 1)
        (
            '--num-experts 4 --moe-shared-expert-intermediate-size 2816 --moe-layer-freq "([0]*1+[1]*1)"',
            {
                "model.moe_shared_experts": 1,
                "model.moe_shared_ffn_hidden_size": 2816,
                "model.moe_first_dense_layers": 1,
                "model.moe_layer_interval": None,
                "model.moe_experts_per_token": 2,
            },
        ),
        ("--num-experts 0", {"model.moe_num_experts": None}),
        # the router (moe_utils.topk_routing_with_score_function, router.sinkhorn_load_balancing):
        # softmax over the chosen logits = renormalised; softmax first, or sinkhorn: as they are
        ("--num-experts 8", {"model.moe_normalize_top_k": True}),
        ("--num-experts 8 --moe-router-pre-softmax", {"model.moe_normalize_top_k": False}),
        (
            "--num-experts 8 --moe-router-load-balancing-type sinkhorn",
            {"model.moe_normalize_top_k": False, "model.moe_router_scoring": "sinkhorn"},
        ),
        # Llama 3.1's scaling, every number hard-coded (--rope-scaling-factor never reaches GPTModel)
        (
            "--position-embedding-type rope --use-rope-scaling",
            {
                "model.rope_scaling_type": "llama3",
                "model.rope_scaling_factor": 8.0,
                "model.rope_low_freq_factor": 1.0,
                "model.rope_high_freq_factor": 4.0,
                "model.rope_original_max_positions": 8192,
            },
        ),
    ],
)
def test_a_construct_reads_as(extra: str, expected: dict[str, Any], tmp_path: Path) -> None:
    ir = read(tmp_path, extra)
    assert {k: ir.get(k) for k in expected} == expected


@pytest.mark.parametrize(
    "extra, reason",
    [
        ("--num-query-groups 8", "--num-query-groups 8 without --group-query-attention is ignored"),
        (
            "--weight-decay-incr-style linear --start-weight-decay 0.0 --end-weight-decay 0.1",
            "weight decay ramps (linear)",
        ),
        ("--recompute-activations", "selective recompute"),
        ("--multi-latent-attention", "multi-latent attention"),
        ("--position-embedding-type mrope", "mrope RoPE"),
        ("--use-rope-scaling", "no effect with --position-embedding-type learned_absolute"),
        ("--optimizer muon", "--muon-scalar-optimizer"),
    ],
)
def test_a_reading_that_is_only_approximate_says_why(extra: str, reason: str, tmp_path: Path) -> None:
    assert reason in losses(tmp_path, extra)


# ---- the schedule, in samples, converted to the canonical (GPT-NeoX) shapes ----------------------


def test_a_linear_decay_to_min_lr_reads_as_megatron_runs_it(tmp_path: Path) -> None:
    # Megatron: 0 -> 3e-4 over 100 steps, then 3e-4 -> 3e-5 linearly to step 1000, then 3e-5
    ir = read(tmp_path, "--min-lr 3e-5 --lr-decay-iters 1000 --lr-warmup-iters 100 --lr-warmup-init 1e-5")
    assert (ir["schedule.warmup_steps"], ir["schedule.decay_steps"], ir["schedule.min_lr"]) == (100.0, 1000, 3e-5)
    lrs = Schedule.from_json(ir["schedule.phases"])
    peak, floor, init, warm = 3e-4, 3e-5, 1e-5, 100
    for step in (0, 50, 100, 400, 999, 1000, 1500):  # optimizer_param_scheduler.get_lr, step by step
        if step <= warm:
            megatron = init + (peak - init) * step / warm
        else:
            megatron = floor + (peak - floor) * (1 - min(1.0, (step - warm) / (1000 - warm)))
        assert lrs.value(step) == pytest.approx(megatron, rel=1e-12)


def test_inverse_square_root_and_wsd_read_as_megatron_runs_them(tmp_path: Path) -> None:
    lrs = Schedule.from_json(
        read(tmp_path, "--lr-decay-style inverse-square-root --lr-warmup-iters 100 --min-lr 1e-4")["schedule.phases"]
    )
    # max(min_lr, lr sqrt(W / n)) after the warmup, min_lr past --train-iters 1000
    assert [lrs.value(t) for t in (100, 400, 900, 1000, 1001)] == pytest.approx([3e-4, 1.5e-4, 1e-4, 1e-4, 1e-4])
    assert lrs.value(225) == pytest.approx(3e-4 * (100 / 225) ** 0.5)
    lrs = Schedule.from_json(
        read(tmp_path, "--lr-decay-style WSD --lr-wsd-decay-style linear --lr-wsd-decay-iters 200")["schedule.phases"]
    )
    # the peak until step 800 (= 1000 - 200), then linearly to --min-lr 0 at step 1000
    assert [lrs.value(t) for t in (0, 800, 900, 1000)] == pytest.approx([3e-4, 3e-4, 1.5e-4, 0.0])


def test_warmup_fraction_and_samples(tmp_path: Path) -> None:
    # examples/gpt3: --lr-warmup-fraction .001 of --lr-decay-iters 430000 = 430 steps
    ir = read(tmp_path, "--lr-decay-style cosine --lr-decay-iters 430000 --lr-warmup-fraction .001 --min-lr 6e-6")
    assert (ir["schedule.warmup_steps"], ir["schedule.decay_steps"], ir["schedule.min_lr"]) == (430.0, 430000, 6e-6)
    path = tmp_path / "samples.args"  # sample-based: steps of the global batch (1024 here)
    path.write_text(
        BASE.replace("--train-iters 1000", "--train-samples 1024000") + "--global-batch-size 1024 "
        "--lr-decay-samples 512000 --lr-warmup-samples 102400\n"
    )
    ir = read_ir([str(path)], "megatron").ir.plain()
    assert (ir["train.steps"], ir["schedule.warmup_steps"], ir["schedule.decay_steps"]) == (1000, 100.0, 500)


def test_a_cosine_that_ends_before_the_run_holds_the_floor(tmp_path: Path) -> None:
    assert losses(tmp_path, "--lr-decay-style cosine --lr-decay-iters 800 --min-lr 1e-5") == ""  # exact
    lrs = Schedule.from_json(
        read(tmp_path, "--lr-decay-style cosine --lr-decay-iters 800 --min-lr 1e-5")["schedule.phases"]
    )
    assert [lrs.value(t) for t in (0, 400, 800, 900)] == pytest.approx([3e-4, (3e-4 + 1e-5) / 2, 1e-5, 1e-5])


def test_a_schedule_with_no_canonical_form_keeps_its_lr_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "wsd.args"
    path.write_text(BASE + "--lr-decay-style WSD --lr-wsd-decay-iters 100\n")  # annealing: exponential
    done = translate(str(path), "megatron", "neox")
    entries = done.report.by_source()
    assert entries["--lr-decay-style"].status is Status.LOSSY
    assert "WSD annealing 'exponential' has no canonical shape" in entries["--lr-decay-style"].detail
    assert "only its lr 0.0003 is written" in entries["--lr"].detail
    assert done.config["optimizer"]["params"]["lr"] == 3e-4 and done.ir.get("schedule.phases") is None


# ---- batch and parallelism -----------------------------------------------------------------------


def test_the_batch_identity_with_context_parallel_ranks(tmp_path: Path) -> None:
    # dp = WORLD_SIZE / (tp x pp x cp); accumulation = global / (micro x dp)
    extra = "--global-batch-size 64 --micro-batch-size 2 --tensor-model-parallel-size 2 --context-parallel-size 2"
    ir = read(tmp_path, extra, world_size=8)
    assert (ir["parallel.data_parallel_size"], ir["batch.global"], ir["batch.grad_accum"]) == (2, 64, 16)
    ir = read(tmp_path, "--micro-batch-size 2", world_size=8)  # no --global-batch-size: one micro-batch per rank
    assert (ir["batch.global"], ir["batch.grad_accum"]) == (16, 1)


def test_a_batch_megatron_would_refuse_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="not a multiple of micro 2 x data-parallel size 8"):
        read(tmp_path, "--global-batch-size 60 --micro-batch-size 2", world_size=8)
    with pytest.raises(Exception, match="--fp16 and --bf16"):
        read(tmp_path, "--fp16 --bf16")


def test_a_global_batch_no_world_size_runs_is_refused_without_one(tmp_path: Path) -> None:
    """validate_args derives the data-parallel size, then the micro-batch calculator asserts global %
    (micro x dp) == 0: 30 over micro 4 fails at every dp, so no --world-size is needed to know it."""
    with pytest.raises(Exception, match="30 is not a multiple of micro 4: .* fails at every world size"):
        read(tmp_path, "--global-batch-size 30 --micro-batch-size 4")
    assert read(tmp_path, "--global-batch-size 32 --micro-batch-size 4")["batch.global"] == 32  # runs at dp 1, 2, 4, 8


def test_kv_channels_given_lifts_the_heads_divide_the_width_check(tmp_path: Path) -> None:
    """validate_args asserts hidden % heads == 0 only when it derives --kv-channels (hidden // heads): a width of
    1000 over 16 heads runs with --kv-channels 64 (and its SwiGLU width defaults to int(4 x 1000 x 2/3 / 64) x 64
    = 2624), and is refused without it."""
    extra = "--hidden-size 1000 --num-attention-heads 16 --swiglu"
    ir = read(tmp_path, extra + " --kv-channels 64")
    assert (ir["model.head_dim"], ir["model.ffn_hidden_size"]) == (64, 2624)
    with pytest.raises(Exception, match="1000 is not divisible by num_attention_heads=16"):
        read(tmp_path, extra)


def test_decrease_batch_size_if_needed_rounds_down_before_the_check(tmp_path: Path) -> None:
    """core_v0.9.0+ --decrease-batch-size-if-needed: the calculator rounds the global batch down to a multiple
    of micro x dp (30 at 4 x 4 trains 16 a step) instead of refusing; a batch that rounds to 0 micro-batches
    (30 at 4 x 16 = 64) is still refused (num_micro_batches >= 1)."""
    flag = "--global-batch-size 30 --micro-batch-size 4 --decrease-batch-size-if-needed"
    assert read(tmp_path, flag)["batch.global"] == 30  # no world size: nothing to round yet, and no refusal
    at4 = read(tmp_path, flag, world_size=4)
    assert (at4["batch.global"], at4["batch.grad_accum"]) == (16, 1)
    with pytest.raises(Exception, match="not a multiple of micro 4 x data-parallel size 16"):
        read(tmp_path, flag, world_size=16)


# ---- releases: old spellings read under their old meaning ---------------------------------------


@pytest.mark.parametrize(
    "extra, version, expected",
    [
        ("", "core_v0.14", {"train.eval_interval": 1000}),  # 1000 until core_v0.15.0
        ("", "core_v0.16", {"train.eval_interval": None}),
        # 23.04-23.06: --swiglu replaced a given --ffn-hidden-size with the derived width
        ("--swiglu --ffn-hidden-size 14336", "23.04", {"model.ffn_hidden_size": 10880}),
        ("--use-rotary-position-embeddings --no-position-embedding", "23.04", {"model.position_embedding": "rotary"}),
        ("--no-position-embedding", "23.04", {"model.position_embedding": "none"}),
        # NullTokenizer's vocabulary was --vocab-size + 1 (its EOD) until core_v0.17.0
        ("--tokenizer-type NullTokenizer --vocab-size 128256", "core_v0.16", {"model.vocab_size": 128384}),
        ("--checkpoint-activations", "v2", {"train.activation_checkpointing": True}),
        # v1.0: per-GPU --batch-size, --model-parallel-size, --warmup as a fraction of the decay span, exact GELU
        (
            "--batch-size 8 --model-parallel-size 2 --warmup 0.01",
            "v1",
            {"batch.micro": 8, "parallel.tensor_size": 2, "schedule.warmup_steps": 10.0, "model.activation": "gelu"},
        ),
    ],
)
def test_a_release_reads_its_files_as_it_ran_them(
    extra: str, version: str, expected: dict[str, Any], tmp_path: Path
) -> None:
    base = BASE.replace("--micro-batch-size 1 ", "") if "--batch-size" in extra else BASE
    path = tmp_path / "old.args"
    path.write_text(base + extra + "\n")
    ir = read_ir([str(path)], "megatron", source_version=version).ir.plain()
    assert {k: ir.get(k) for k in expected} == expected


def test_23_04_rope_on_top_of_learned_positions_is_lossy(tmp_path: Path) -> None:
    assert "adds RoPE to the learned absolute positions" in losses(
        tmp_path, "--use-rotary-position-embeddings", source_version="23.04"
    )
    with pytest.raises(Exception, match="--no-position-embedding is deprecated"):
        read(tmp_path, "--no-position-embedding")  # current Megatron refuses it without rope


# ---- writing -------------------------------------------------------------------------------------


def write(values: dict[str, Any], version: str | None = None) -> tuple[str, dict[str, Status]]:
    """Canonical values written as a Megatron argument file (the option lines) and the report's
    status per target key."""
    ingested = Ingested(IR({k: Value(v, Origin.EXPLICIT) for k, v in values.items()}), {}, {})
    leaves, report = emit(ingested, load_table("megatron"), "megatron", version=version)
    written = WRITER.write(leaves, WriteContext(version=version, source_format="canonical"))
    text = WRITER.dump(written)
    lines = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    statuses = {e.target_key or "": e.status for e in report.entries}
    statuses.update({k: s for k, (s, _) in written.amended.items()})
    return lines, statuses


@pytest.mark.parametrize(
    "values, lines",
    [
        ({"model.activation": "swiglu", "model.ffn_hidden_size": 11008}, "--swiglu\n--ffn-hidden-size 11008"),
        (
            {"model.activation": "gelu", "model.mlp_bias": True},
            "--no-bias-gelu-fusion",
        ),  # exact GELU needs the fusion off
        ({"model.activation": "gelu_tanh", "model.mlp_bias": True}, ""),  # Megatron's default
        (
            {"model.num_heads": 32, "model.num_kv_heads": 8},
            "--num-attention-heads 32\n--group-query-attention\n--num-query-groups 8",
        ),
        (
            {"model.norm": "rmsnorm", "model.norm_bias": False, "model.norm_eps": 1e-6},
            "--normalization RMSNorm\n--norm-epsilon 1e-06",
        ),
        (
            {"model.position_embedding": "rotary", "model.rotary_base": 500000.0, "model.rotary_fraction": 1.0},
            "--position-embedding-type rope\n--rotary-percent 1.0\n--rotary-base 500000",
        ),  # --rotary-base is an int
        (
            {"model.attention_bias": True, "model.attention_output_bias": False, "model.mlp_bias": False},
            "--disable-bias-linear\n--add-qkv-bias",
        ),
        ({"model.tie_embeddings": False}, "--untie-embeddings-and-output-weights"),
        # canonical linear (towards 0 at 1100, clamped at 3e-5) is Megatron's 3e-4 -> 3e-5 ending at 1000
        # 0 -> 3e-4 over 100 steps, linearly to 3e-5 at step 1000: Megatron's own shape
        (
            {"optim.lr": 3e-4, "schedule.phases": simple(3e-4, 100, "linear", 1000, 3e-5).to_json()},
            "--lr 0.0003\n--lr-decay-style linear\n--lr-decay-iters 1000\n--lr-warmup-iters 100\n--min-lr 3e-05",
        ),
        (
            {"optim.lr": 1e-4, "schedule.phases": simple(1e-4, 5, "cosine", 1000).to_json()},
            "--lr 0.0001\n--lr-decay-style cosine\n--lr-decay-iters 1000\n--lr-warmup-iters 5\n--min-lr 0.0",
        ),
        (
            {"batch.micro": 4, "batch.global": 512, "batch.grad_accum": 8, "parallel.data_parallel_size": 16},
            "--micro-batch-size 4\n--global-batch-size 512",
        ),
        (
            {"parallel.zero_stage": 2},
            "--use-megatron-fsdp\n--data-parallel-sharding-strategy optim_grads\n--ckpt-format fsdp_dtensor",
        ),
        (
            {"precision.dtype": "fp16", "precision.loss_scale": "dynamic", "precision.initial_loss_scale": 65536.0},
            "--fp16\n--initial-loss-scale 65536.0",
        ),
        (
            {"train.activation_checkpointing": True},
            "--recompute-granularity full\n--recompute-method uniform\n--recompute-num-layers 1",
        ),
        ({"checkpoint.save_dir": "my ckpt", "checkpoint.interval": 100}, "--save 'my ckpt'\n--save-interval 100"),
        ({"logging.use_wandb": True, "logging.wandb_project": "p"}, "--wandb-project p"),
    ],
)
def test_canonical_values_are_written_as(values: dict[str, Any], lines: str) -> None:
    assert write(values)[0] == lines


@pytest.mark.parametrize(
    "values, key, reason",
    [
        (
            {"model.activation": "gelu_tanh", "model.mlp_bias": False},
            "swiglu",
            "without biases Megatron's GELU is exact",
        ),
        ({"model.parallel_residual": True}, "", "no parallel attention + MLP block"),
        ({"optim.type": "adam", "optim.weight_decay": 0.1}, "optimizer", "always decouples weight decay"),
        ({"checkpoint.save_dir": "/ckpt"}, "save", "refuses --save without --save-interval"),
        ({"model.position_embedding": "alibi"}, "position_embedding_type", "no alibi position embedding"),
        ({"logging.use_wandb": False, "logging.wandb_project": "p"}, "wandb_project", "W&B logging is not on"),
    ],
)
def test_what_megatron_cannot_hold_is_reported_lossy(values: dict[str, Any], key: str, reason: str) -> None:
    ingested = Ingested(IR({k: Value(v, Origin.EXPLICIT) for k, v in values.items()}), {}, {})
    _, report = emit(ingested, load_table("megatron"), "megatron")
    lossy = [e for e in report.entries if e.status is Status.LOSSY]
    assert any(reason in e.detail for e in lossy), [e.detail for e in report.entries]


def test_each_release_gets_its_own_spelling_or_a_lossy_entry() -> None:
    values = {
        "model.norm": "layernorm",
        "model.norm_eps": 1e-6,
        "model.position_embedding": "rotary",
        "model.rotary_base": 500000.0,
        "optim.lr": 1e-4,
    }
    text, statuses = write(values, version="23.04")
    assert "--layernorm-epsilon 1e-06" in text and "--norm-epsilon" not in text
    assert "--rotary-base" not in text and statuses["rotary_base"] is Status.LOSSY  # core_v0.8.0 on
    assert "--position-embedding-type" not in text and statuses["position_embedding_type"] is Status.LOSSY
    text, _ = write(values)
    assert "--norm-epsilon 1e-06" in text and "--rotary-base 500000" in text


def test_a_default_that_changed_is_written_for_the_release_that_lacks_it() -> None:
    assert write({"train.eval_interval": 1000})[0] == "--eval-interval 1000"  # no default since core_v0.16.0
    ingested = Ingested(IR({"train.eval_interval": Value(1000, Origin.DEFAULT)}), {}, {})
    for version, expected in (("core_v0.14", {}), ("current", {"eval_interval": 1000})):
        leaves, _ = emit(ingested, load_table("megatron"), "megatron", version=version)
        assert leaves == expected, version


def test_dump_quotes_words_and_writes_leading_dashes_with_equals() -> None:
    from neoconv import dump

    text = dump(
        {"--seed": -1, "--data-path": ["0.3", "/d/a b", "0.7", "$HOME"], "--swiglu": True, "--fp16": False}, "megatron"
    )
    assert text.splitlines()[2:] == ["--seed=-1", "--data-path 0.3 '/d/a b' 0.7 '$HOME'", "--swiglu"]


# ---- sliding window (core_v0.15.0+): --window-size L,R and --window-attn-skip-freq -----------------

WINDOW_LAYERS = "--num-layers 8"  # (after BASE's --num-layers 2: the last of a repeated option counts)


@pytest.mark.parametrize(
    "extra, expected",
    [
        ("--window-size 4095,0", {"model.sliding_window": 4096, "model.attention_layer_types": None}),  # every layer
        ('--window-size "(4095,0)"', {"model.sliding_window": 4096}),  # tuple_type strips the parentheses
        # N: the layers N, 2N, ... numbered from 1 attend fully (is_layer_window_attention)
        (
            "--window-size 511,0 --window-attn-skip-freq 4",
            {
                "model.sliding_window": 512,
                "model.attention_layer_types": ["sliding"] * 3 + ["full"] + ["sliding"] * 3 + ["full"],
            },
        ),
        # a pattern, 1 = windowed
        (
            '--window-size 511,0 --window-attn-skip-freq "([0]*2+[1]*6)"',
            {"model.sliding_window": 512, "model.attention_layer_types": ["full"] * 2 + ["sliding"] * 6},
        ),
        # -1: no bound (with `=`: argparse takes -1,0 for an option otherwise)
        ("--window-size=-1,0", {"model.sliding_window": None, "model.attention_kind": "dense"}),
        ("--window-size 511,0 --window-attn-skip-freq 1", {"model.sliding_window": None}),
    ],  # every layer full
)
def test_a_window_reads_as_the_keys_a_query_sees(extra: str, expected: dict[str, Any], tmp_path: Path) -> None:
    ir = read(tmp_path, f"{WINDOW_LAYERS} {extra}")
    assert {k: ir.get(k) for k in expected} == expected
    assert ir.get("model.attention_kind") == "dense"


def test_a_window_that_sees_later_keys_or_a_pattern_of_other_length_is_said(tmp_path: Path) -> None:
    assert "a right window of 16" in losses(tmp_path, f"{WINDOW_LAYERS} --window-size 511,16")
    path = tmp_path / "run.args"
    path.write_text(BASE + f'{WINDOW_LAYERS} --window-size 511,0 --window-attn-skip-freq "[1]*3"\n')
    with pytest.raises(Exception, match=r"--window-attn-skip-freq gives 3 layers, --num-layers 8"):
        read_ir([str(path)], "megatron")


@pytest.mark.parametrize(
    "pattern, lines",
    [
        (None, "--window-size 4095,0"),
        (["sliding", "full"] * 4, "--window-size 4095,0\n--window-attn-skip-freq 2"),
        (
            ["full", "sliding"] * 4,
            "--window-size 4095,0\n--window-attn-skip-freq '([0]*1+[1]*1+[0]*1+[1]*1+[0]*1+[1]*1+[0]*1+[1]*1)'",
        ),
    ],
)
def test_a_window_is_written_as_megatron_reads_it(pattern: list[str] | None, lines: str, tmp_path: Path) -> None:
    values = {"model.num_layers": 8, "model.sliding_window": 4096, "model.attention_layer_types": pattern}
    text, _ = write(values)
    assert "\n".join(line for line in text.splitlines() if "window" in line) == lines
    path = tmp_path / "back.args"
    path.write_text(BASE + text + "\n")
    back = read_ir([str(path)], "megatron").ir
    assert back.get("model.sliding_window") == 4096 and back.get("model.attention_layer_types") == pattern


def test_a_release_before_the_window_options_says_it_loses_the_window() -> None:
    text, statuses = write({"model.num_layers": 8, "model.sliding_window": 4096}, version="core_v0.14")
    assert "--window-size" not in text and statuses["window_size"] is Status.LOSSY


# ---- YaRN (core_v0.19.0+ for GPT models: argument_utils._apply_yarn_config_from_args) ----------------


@pytest.mark.parametrize(
    "extra, expected",
    [  # Megatron's defaults: factor 1, 4096 original positions, betas 32 / 1, rounded correction range
        (
            "--position-embedding-type yarn",
            {
                "model.position_embedding": "rotary",
                "model.rope_scaling_type": "yarn",
                "model.rope_scaling_factor": 1.0,
                "model.rope_original_max_positions": 4096,
                "model.rope_yarn_beta_fast": 32.0,
                "model.rope_yarn_beta_slow": 1.0,
                "model.rope_yarn_truncate": None,
                "model.rope_attention_factor": None,
            },
        ),
        (
            "--position-embedding-type yarn --rotary-scaling-factor 40 --yarn-original-max-position-embeddings 4096 "
            "--mscale 0.707 --mscale-all-dim 0.707 --no-yarn-correction-range-round-to-int",
            {
                "model.rope_scaling_factor": 40.0,
                "model.rope_yarn_mscale": 0.707,
                "model.rope_yarn_mscale_all_dim": 0.707,
                "model.rope_yarn_truncate": False,
                "model.rope_attention_factor": None,
            },
        ),  # HF infers the same ratio (1.0)
        # --mscale alone: Megatron's ratio (0.1 x 2 x ln 4 + 1) / 1, which HF would not infer from mscale alone
        (
            "--position-embedding-type yarn --rotary-scaling-factor 4 --mscale 2",
            {
                "model.rope_yarn_mscale": 2.0,
                "model.rope_yarn_mscale_all_dim": 0.0,
                "model.rope_attention_factor": pytest.approx(0.2 * math.log(4) + 1),
            },
        ),
    ],
)
def test_yarn_reads_as_megatron_builds_it(extra: str, expected: dict[str, Any], tmp_path: Path) -> None:
    ir = read(tmp_path, extra)
    assert {k: ir.get(k) for k in expected} == expected


def test_yarn_is_written_with_megatron_s_options_and_reads_back() -> None:
    values = {
        "model.position_embedding": "rotary",
        "model.max_position_embeddings": 131072,
        "model.rope_scaling_type": "yarn",
        "model.rope_scaling_factor": 32.0,
        "model.rope_yarn_beta_fast": 32.0,
        "model.rope_yarn_beta_slow": 1.0,
    }
    text, _ = write(values)
    # the original length unset means max_position_embeddings to transformers; Megatron's default is 4096
    assert [line for line in text.splitlines() if "yarn" in line or "scaling" in line] == [
        "--position-embedding-type yarn",
        "--rotary-scaling-factor 32.0",
        "--yarn-original-max-position-embeddings 131072",
        "--yarn-beta-fast 32.0",
        "--yarn-beta-slow 1.0",
    ]
    old, statuses = write(values, version="core_v0.18")  # before the --yarn-* options
    assert "--yarn-original-max-position-embeddings" not in old
    assert statuses["yarn_original_max_position_embeddings"] is Status.LOSSY


def test_an_attention_factor_megatron_cannot_make_is_lossy() -> None:
    values = {
        "model.position_embedding": "rotary",
        "model.rope_scaling_type": "yarn",
        "model.rope_scaling_factor": 4.0,
        "model.rope_original_max_positions": 4096,
        "model.rope_attention_factor": 1.5,
    }
    ingested = Ingested(IR({k: Value(v, Origin.EXPLICIT) for k, v in values.items()}), {}, {})
    _, report = emit(ingested, load_table("megatron"), "megatron")
    lossy = [e.detail for e in report.entries if e.status is Status.LOSSY]
    assert any("multiplies cos and sin by 1.13863" in d and "not 1.5" in d for d in lossy), lossy


def test_an_activation_gpt_neox_lacks_is_named_not_written(tmp_path: Path) -> None:
    """--squared-relu reads as relu2; NeoX's activation Literal has no such name, so NeoX would refuse
    the file: the activation is not written and the report names it (it said `converted`)."""
    path = tmp_path / "run.args"
    path.write_text(BASE + "--squared-relu\n")
    result = translate([path], "megatron", "neox", world_size=8)
    assert "activation" not in result.config
    entry = result.report.by_source()["--squared-relu"]
    assert entry.status in (Status.DROPPED, Status.LOSSY) and "relu2" in entry.detail
