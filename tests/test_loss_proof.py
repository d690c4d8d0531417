"""Loss-proof translation (issue 12): what a translation changes, reading its output back shows,
and the report names. Regression tests with real values for each case the issue lists."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from neoconv import translate
from neoconv.api import read_ir
from neoconv.core.ir import DEFAULT_RTOL, values_equal
from neoconv.services.diff import diff_ir, run_layout
from neoconv.core.errors import NeoconvError, NothingToWrite, UnsupportedFamily
from neoconv.knowledge.registry import FORMATS as REGISTERED
from neoconv.knowledge.registry import get_format
from neoconv.core.report import Status
from neoconv.schedule import max_difference
from neoconv.schedule.fields import parse

from conftest import CORPUS, FIXTURES, corpus_dir, corpus_files, format_inputs
from corpus_expectations import NO_RELEASE_HAD, NOT_A_CONFIG, NOT_RUNNABLE

LLAMA_DEFAULTS = FIXTURES / "inputs" / "cerebras" / "llama-tiny-defaults.yaml"


def _entry(result, target_key: str):  # type: ignore[no-untyped-def]
    return next(e for e in result.report.entries if e.target_key and target_key in e.target_key.split(", "))


def test_a_default_eps_reaches_the_key_neox_reads_for_the_norm() -> None:
    # Model Zoo's layer_norm_epsilon default (1e-5) feeds an RMSNorm; NeoX's rms_norm_epsilon
    # defaults to 1e-8, so the value must be written although layernorm_epsilon's default is 1e-5
    result = translate(LLAMA_DEFAULTS, "cerebras", "neox")
    assert result.config["norm"] == "rmsnorm"
    assert result.config["rms_norm_epsilon"] == 1e-5
    entry = _entry(result, "rms_norm_epsilon")
    assert entry.status is Status.DEFAULTED and entry.fields == ("model.norm_eps",)
    assert "rms_norm_epsilon=1e-08" in entry.detail


def test_reading_the_output_back_names_what_it_does_not_recover(monkeypatch, pythia160m: Path) -> None:
    from neoconv.formats.cerebras.writer import WRITER

    write = WRITER.write

    def careless(leaves, ctx):  # type: ignore[no-untyped-def]
        written = write(leaves, ctx)
        written.document["model"]["hidden_size"] = 1536  # a writer bug the report would not know of
        return written

    monkeypatch.setattr(WRITER, "write", careless)
    result = translate(pythia160m, "neox", "cerebras", world_size=8)
    entry = result.report.by_source()["hidden_size"]
    assert entry.status is Status.LOSSY and entry.fields == ("model.hidden_size",)
    assert (
        "model.hidden_size is 768 in the source, written as model.hidden_size=1536; reads back as 1536" in entry.detail
    )
    # the rotary fraction is rotary_dim / head width: 16 of 1536 / 12 reads back as 0.125, not 0.25
    rotary = result.report.by_source()["rotary_pct"]
    assert rotary.status is Status.LOSSY and "reads back as 0.125" in rotary.detail
    assert result.report.target["verified"] is True and result.report.target["added_by_verification"] == 2
    assert result.report.to_json()["target"]["added_by_verification"] == 2


def test_a_translation_says_it_was_verified(pythia160m: Path) -> None:
    result = translate(pythia160m, "neox", "deepspeed", world_size=8)
    assert result.report.target["verified"] is True and result.report.target["added_by_verification"] == 0
    fast = translate(pythia160m, "neox", "deepspeed", world_size=8, verify=False)
    assert "verified" not in fast.report.target and fast.dump() == result.dump()


def test_an_output_that_cannot_be_read_back_says_so(tmp_path: Path) -> None:
    # a Mamba model keeps a head count it ignores; as Cerebras attention layers it cannot run
    path = tmp_path / "gmlp.yml"
    path.write_text(
        "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 12\nattention_config: [[[gmlp], 2]]\n"
        "max_position_embeddings: 128\noptimizer: {type: Adam, params: {lr: 0.001}}\n"
    )
    result = translate(path, "neox", "cerebras", set_values={"model.vocab_size": 256})
    assert result.report.target["verified"] is False
    assert result.report.by_source()["attention_config"].status is Status.LOSSY  # gMLP blocks become attention
    unreadable = [e for e in result.report.entries if "cannot be read back" in e.detail]
    assert len(unreadable) == 1 and "not divisible by model.num_heads=12" in unreadable[0].detail


# ------------------------------------------------------------------------------------------------
# The property: whatever `diff` finds between a config and its translation, the report names.

NAMING = (Status.LOSSY, Status.DROPPED, Status.MISSING, Status.UNKNOWN)
FORMATS = tuple(REGISTERED)  # every format the registry finds


def unnamed_differences(paths: list[Path], src: str, dst: str, tmp: Path, reports: list | None = None, **options):  # type: ignore[no-untyped-def]
    """Translate, write the output (and its side files) as the CLI does, diff the files as a user
    would, and return the differences no lossy/dropped/missing/unknown entry names by its fields;
    also the fields the verification had to name (it names what the causes did not). `reports`
    collects the translation's report."""
    try:
        result = translate([str(p) for p in paths], src, dst, **options)
    except NothingToWrite:  # nothing of the source is a setting of the target: refused, naming what it needs
        return [], []
    if reports is not None:
        reports.append(result.report)
    out = tmp / f"out{get_format(dst).suffix}"
    out.write_text(result.dump())
    for name, text in result.side_files.items():
        (tmp / name).write_text(text)
    named = {name for e in result.report.entries if e.status in NAMING for name in e.fields}
    # a value only the output has (a field the source leaves unsaid, or one its format has no key for:
    # NeoX's accumulation for a Cerebras source) is named as lost, or as written though not in the source
    added = named | {name for e in result.report.entries if e.status is Status.DEFAULTED for name in e.fields}
    netted = [e.fields for e in result.report.entries if "reads back as" in e.detail]
    before = read_ir([str(p) for p in paths], result.report.source["format"], world_size=options.get("world_size"))
    try:  # as `diff --world-size` reads it: in the source's run (its model-parallel sizes the target cannot hold)
        back = read_ir([str(out)], dst, world_size=options.get("world_size"), context=run_layout(before.ir, dst))
    except NeoconvError as exc:  # a target that cannot hold the model at all (Mamba blocks as attention)
        # the report says so, or names what the output lacks to be a config of its own (a config.json
        # holds no batch: DeepSpeed's `missing` train_batch_size)
        said = any("cannot be read back" in e.detail or e.status is Status.MISSING for e in result.report.entries)
        return ([] if said else [f"output unreadable and the report does not say so: {exc}"]), netted
    found = diff_ir(before, back)
    only_b = [*found.only_b, *(c for c in found.inexpressible if c.a is None)]
    # a source value the target's format has no key for (a value its reader derived with no leaf of its
    # own too: NeoX's model.family, Model Zoo's embedding dropout) is named as lost, unless read back alike
    unheld = [c for c in found.inexpressible if c.a is not None and not values_equal(c.a, c.b, DEFAULT_RTOL)]
    unnamed = [
        f"{c.field}: {c.a!r} -> {c.b!r}" for c in (*found.changed, *found.only_a, *unheld) if c.field not in named
    ]
    unnamed += [f"{c.field}: only in the output, {c.b!r}" for c in only_b if c.field not in added]
    return unnamed, netted


INPUTS = FIXTURES / "inputs"
# (files, format): every format's hand-written inputs (conftest.format_inputs: one reader's defaults
# each, the shapes a reader takes), a format registered later included; and the inputs made of several
# files or kept in another format's folder
APART = {
    INPUTS / "deepspeed" / "neox-model.yml": "neox",
    INPUTS / "veomni" / "overrides.args": None,  # None: not alone
    INPUTS / "hftrainer" / "ds-zero3-auto.json": None,
    INPUTS / "hftrainer" / "ds-warmupdecay-auto.json": None,
}
FIXTURE_CONFIGS = [
    *[([p], fmt) for fmt in REGISTERED for p in format_inputs(fmt) if p not in APART],
    *[([p], fmt) for p, fmt in APART.items() if fmt is not None],
    ([FIXTURES / "cases" / "neox2cerebras" / "tiny-defaults" / "in.yml"], "neox"),
    ([INPUTS / "veomni" / "tinyllama-nested.yaml", INPUTS / "veomni" / "overrides.args"], "veomni"),
    # TrainingArguments with the DeepSpeed config they run with ("auto" filled as transformers fills it)
    ([INPUTS / "hftrainer" / "sft-zero3.yaml", INPUTS / "hftrainer" / "ds-zero3-auto.json"], "hftrainer"),
    ([INPUTS / "hftrainer" / "trainer-linear.json", INPUTS / "hftrainer" / "ds-warmupdecay-auto.json"], "hftrainer"),
]


@pytest.mark.parametrize(
    "paths,src,dst",
    [(paths, src, dst) for paths, src in FIXTURE_CONFIGS for dst in FORMATS if dst != src],
    ids=lambda v: "+".join(p.name for p in v) if isinstance(v, list) else v,
)
def test_every_difference_of_a_fixture_translation_is_named(
    paths: list[Path], src: str, dst: str, tmp_path: Path
) -> None:
    unnamed, netted = unnamed_differences(paths, src, dst, tmp_path)
    assert unnamed == []
    assert netted == []  # every difference is named by the mapping itself, not by the safety net


# the GPUs given on the command line (--world-size): what the reader derives from them is named too
WORLD_SIZED = [
    ([INPUTS / "neox" / "pythia-160m.yml"], "neox"),
    ([INPUTS / "deepspeed" / "neox-model.yml"], "neox"),
    *[([p], "deepspeed") for p in sorted((INPUTS / "deepspeed").glob("*.json"))[:3]],
    ([INPUTS / "megatron" / "mixtral-8x7b.args"], "megatron"),
    # formats with no data-parallel size: the target's own, from the GPUs (a `target_value`)
    ([INPUTS / "cerebras" / "gpt2-small-legacy.yaml"], "cerebras"),
    ([INPUTS / "hf" / "bloom-7b1.json"], "hf"),
    ([INPUTS / "hftrainer" / "sft-zero3.yaml", INPUTS / "hftrainer" / "ds-zero3-auto.json"], "hftrainer"),
]
# and one input of every other format (a format registered later)
WORLD_SIZED += [
    ([inputs[0]], fmt)
    for fmt in REGISTERED
    if fmt not in {f for _, f in WORLD_SIZED}
    if (inputs := [p for p in format_inputs(fmt) if p not in APART])
]


@pytest.mark.parametrize(
    "paths,src,dst",
    [(paths, src, dst) for paths, src in WORLD_SIZED for dst in FORMATS if dst != src],
    ids=lambda v: "+".join(p.name for p in v) if isinstance(v, list) else v,
)
def test_every_difference_of_a_translation_with_a_world_size_is_named(
    paths: list[Path], src: str, dst: str, tmp_path: Path
) -> None:
    unnamed, netted = unnamed_differences(paths, src, dst, tmp_path, world_size=8)
    assert unnamed == []
    assert netted == []


CORPUS_FOLDERS = {
    "neox": ["neox"],
    "cerebras": ["cerebras-legacy", "cerebras-trainer"],
    "deepspeed": ["deepspeed"],
    "veomni": ["veomni", "veomni-legacy"],
}
PATTERNS = {"neox": "**/*.yml", "cerebras": "**/*.yaml", "deepspeed": "**/*.json", "veomni": "**/*.yaml"}


@pytest.mark.slow
@pytest.mark.parametrize("src,dst", [(s, d) for s in FORMATS for d in FORMATS if s != d])
def test_every_difference_of_a_corpus_translation_is_named(src: str, dst: str, tmp_path: Path) -> None:
    if src not in CORPUS_FOLDERS:
        pytest.skip(f"the shared corpus has no {src} configs")
    files = [p for folder in CORPUS_FOLDERS[src] for p in corpus_files(folder, PATTERNS[src])]
    if not files:
        corpus_dir(CORPUS_FOLDERS[src][0])  # skips with the reason
    problems: dict[str, list[str]] = {}
    netted: dict[str, list[tuple[str, ...]]] = {}
    refused: dict[str, str] = {}
    unknown: dict[str, list[str]] = {}
    for i, path in enumerate(files):
        work = tmp_path / str(i)
        work.mkdir()
        name = str(path.relative_to(CORPUS))
        reports: list = []
        try:
            unnamed, net = unnamed_differences([path], src, dst, work, reports)
        except UnsupportedFamily:
            continue  # a model the target cannot hold (T5, BERT, ViT, Mamba ... into decoder-only formats)
        except NeoconvError as exc:  # anything else: only a file its own release cannot run either
            if name not in NOT_RUNNABLE and not any(s in str(exc) for s in NOT_A_CONFIG):
                refused[name] = str(exc)
            elif name in NOT_RUNNABLE:
                assert NOT_RUNNABLE[name] in str(exc), name
            continue
        if not reports:  # refused: nothing of the source is a setting of the target (NothingToWrite)
            continue
        # internal errors are not NeoconvErrors: they fail the test where they happen
        odd = [
            e.source_key or ""
            for e in reports[0].entries
            if e.status is Status.UNKNOWN and (e.source_key or "") not in NO_RELEASE_HAD.get(src, {})
        ]
        if odd:
            unknown[name] = odd
        if unnamed:
            problems[name] = unnamed
        if net:
            netted[name] = net
    assert refused == {}  # no refusal of a file its own release runs
    assert unknown == {}  # unknown only for keys no release of the framework ever had (corpus_expectations.py)
    assert problems == {}
    assert netted == {}  # the verification names nothing the mapping did not already name


# ------------------------------------------------------------------------------------------------
# The cases of issue 12, with real values

LLAMA_SCHEDULE = FIXTURES / "inputs" / "cerebras" / "llama-warmup-cosine.yaml"  # params_llama2_13b's schedule


def _written(result, tmp: Path, dst: str):  # type: ignore[no-untyped-def]
    out = tmp / f"out{get_format(dst).suffix}"
    out.write_text(result.dump())
    for name, text in result.side_files.items():
        (tmp / name).write_text(text)
    return read_ir([str(out)], dst)


def test_cerebras_step_count_and_warmup_reach_veomni(tmp_path: Path) -> None:
    # VeOmni has no step count: data.train_size tokens / (global batch x max_seq_len). Without a
    # sequence length (Model Zoo takes it from its data) the output runs with VeOmni's 2048
    result = translate(LLAMA_SCHEDULE, "cerebras", "veomni")
    data, optimizer = result.config["data"], result.config["train"]["optimizer"]
    assert "max_seq_len" not in data and math.ceil(data["train_size"] / (1024 * 2048)) == 476837
    assert int(476837 * optimizer["lr_warmup_ratio"]) == 2000
    back = _written(result, tmp_path, "veomni").ir
    assert back.get("train.steps") == 476837 and back.get("schedule.warmup_steps") == 2000.0
    assert back.get("schedule.decay_steps") == 476837
    missing = next(e for e in result.report.entries if e.status is Status.MISSING and e.fields == ("model.seq_length",))
    assert missing.target_key == "data.max_seq_len" and "--set model.seq_length=N" in missing.detail
    # with the sequence length given, train_size is sized for it
    given = translate(LLAMA_SCHEDULE, "cerebras", "veomni", set_values={"model.seq_length": 4096})
    assert given.config["data"]["max_seq_len"] == 4096
    assert math.ceil(given.config["data"]["train_size"] / (1024 * 4096)) == 476837


def test_a_cerebras_sequence_length_reaches_neox_or_is_missing(tmp_path: Path) -> None:
    result = translate(LLAMA_SCHEDULE, "cerebras", "neox")
    assert "seq_length" not in result.config
    entry = next(e for e in result.report.entries if e.target_key == "seq_length")
    assert entry.status is Status.MISSING and entry.fields == ("model.seq_length",)
    gptj = translate(FIXTURES / "inputs" / "cerebras" / "gptj-tiny-defaults.yaml", "cerebras", "neox")
    assert gptj.config["seq_length"] == 256  # train_input.max_sequence_length
    assert gptj.report.by_source()["train_input.max_sequence_length"].status is Status.EXACT


def test_what_a_run_cannot_do_without_is_missing(pythia160m: Path) -> None:
    cerebras = translate(pythia160m, "neox", "cerebras", world_size=8)
    missing = {e.target_key for e in cerebras.report.entries if e.status is Status.MISSING}
    assert {"train_input.data_processor", "train_input.data_dir"} <= missing  # Model Zoo 2.0.2: KeyError
    # a model and an lr (a model alone gives DeepSpeed nothing: refused, issue 28)
    lr = {"optimizer": {"type": "Adam", "params": {"lr": 6e-4}}}
    model_only = translate({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, **lr}, "neox", "deepspeed")
    batch = next(e for e in model_only.report.entries if e.status is Status.MISSING)
    assert batch.target_key == "train_batch_size" and batch.fields == (
        "batch.global",
        "batch.micro",
        "batch.grad_accum",
    )
    assert "train_batch_size" not in model_only.config and "train_micro_batch_size_per_gpu" not in model_only.config


def test_deepspeed_reads_back_the_warmup_cerebras_gave_it(tmp_path: Path) -> None:
    result = translate(LLAMA_SCHEDULE, "cerebras", "deepspeed")
    params = result.config["scheduler"]["params"]
    # DeepSpeed's warmup runs a step late: from warmup_min_ratio 1/2000 over 1999 steps it gives step t
    # Cerebras' lr t/2000 x peak exactly; only its cosine is a step into its shape (by 5e-10 at most)
    assert result.config["scheduler"]["type"] == "WarmupCosineLR"
    assert params["warmup_type"] == "linear" and params["warmup_num_steps"] == 1999
    assert params["warmup_min_ratio"] == pytest.approx(1 / 2000)
    lossy = result.report.by_source()["optimizer.learning_rate"]
    assert lossy.status is Status.LOSSY and lossy.fields == ("schedule.phases",)
    # the largest difference, step by step (170207, reported before, is 1e-18 short of it)
    assert "differs by at most 5.174e-10 (step 170199: 0.000224686 instead of 0.000224687)" in lossy.detail
    back = _written(result, tmp_path, "deepspeed").ir
    assert (
        max_difference(parse(back.get("schedule.phases")), parse(result.ir.get("schedule.phases")), 476837).value
        < 6e-10
    )


def test_neox_warmup_against_cerebras_and_deepspeed_warmups(pythia160m: Path) -> None:
    # NeoX: lr x max(1, t) / W, its first two steps at lr/W: Cerebras runs it exactly (a step of lr/W first)
    cerebras = translate(pythia160m, "neox", "cerebras", world_size=8)
    assert cerebras.config["optimizer"]["learning_rate"][0] == {
        "scheduler": "Constant",
        "learning_rate": pytest.approx(6e-4 / 1430),
        "total_iters": 1,
    }
    assert cerebras.report.by_source()["warmup"].status is Status.CONVERTED
    # DeepSpeed's WarmupCosineLR is a step late: the closest, and by how much
    deepspeed = translate(pythia160m, "neox", "deepspeed", world_size=8)
    lag = deepspeed.report.by_source()["warmup"]
    assert lag.status is Status.LOSSY and lag.fields == ("schedule.phases",)
    assert "differs by at most 4.196e-07 (step 0: 0 instead of 4.196e-07)" in lag.detail
    # and a DeepSpeed schedule into NeoX: its warmup from warmup_min_ratio x lr, a step late
    back = translate(
        FIXTURES / "inputs" / "deepspeed" / "warmup-cosine-lr-zero2.json", "deepspeed", "neox", world_size=8
    )
    entry = back.report.by_source()["scheduler.type"]
    assert entry.status is Status.LOSSY and "at most 1.99e-05 (step 1: 9.995e-08 instead of 2e-05)" in entry.detail


def test_readers_derive_the_same_defaults(tmp_path: Path) -> None:
    # Model Zoo's GPT-2-derived models default embedding and attention dropout to dropout_rate (0.0
    # here); NeoX applies hidden_dropout to the embeddings: the same model, nothing to report
    result = translate(LLAMA_DEFAULTS, "cerebras", "neox")
    assert (
        result.ir.get("model.embedding_dropout") == 0.1 == result.ir.get("model.hidden_dropout")
    )  # dropout_rate default
    back = _written(result, tmp_path, "neox").ir
    assert back.get("model.embedding_dropout") == 0.1
    gptj = translate(FIXTURES / "inputs" / "cerebras" / "gptj-tiny-defaults.yaml", "cerebras", "neox")
    assert gptj.ir.get("model.attention_dropout") == 0.1 and gptj.ir.get("model.embedding_dropout") == 0.1
    # a LayerNorm has a bias in Model Zoo, NeoX and HF alike; an RMSNorm has none
    assert gptj.ir.get("model.norm_bias") is True and result.ir.get("model.norm_bias") is False
    veomni = translate(FIXTURES / "inputs" / "cerebras" / "gptj-tiny-defaults.yaml", "cerebras", "veomni")
    assert _written(veomni, tmp_path, "veomni").ir.get("model.norm_bias") is True
    assert veomni.report.target["added_by_verification"] == 0


def test_one_pipeline_stage_reads_back_from_veomni(pythia160m: Path, tmp_path: Path) -> None:
    result = translate(pythia160m, "neox", "veomni", world_size=8)  # pipe-parallel-size: 1
    entry = result.report.by_source()["pipe_parallel_size"]
    assert entry.status is Status.CONVERTED
    back = _written(result, tmp_path, "veomni").ir
    assert back.get("parallel.pipeline_size") == 1 and back.get("parallel.tensor_size") == 1
    assert (
        translate({"num_layers": 2, "train_micro_batch_size_per_gpu": 4}, "neox", "deepspeed").ir.get(
            "parallel.pipeline_size"
        )
        == 1
    )  # NeoX's default 0 is one stage too


def test_a_default_value_lost_has_an_entry_of_its_own() -> None:
    # NeoX's default betas (0.9, 0.999) against VeOmni's hard-coded (0.9, 0.95): the file has no leaf
    result = translate(FIXTURES / "cases" / "neox2cerebras" / "tiny-defaults" / "in.yml", "neox", "veomni")
    entry = next(e for e in result.report.entries if e.fields == ("optim.betas",))
    assert entry.status is Status.LOSSY and entry.source_key is None
    assert "GPT-NeoX default optim.betas=[0.9, 0.999]" in entry.detail and "(0.9, 0.95)" in entry.detail


@pytest.mark.parametrize("fmt", sorted(NO_RELEASE_HAD))
def test_the_unknown_keys_the_corpus_sweep_accepts_are_keys_of_no_release(fmt: str) -> None:
    from neoconv.knowledge.schema import load_history

    history = load_history(fmt)
    assert history is not None
    for key in NO_RELEASE_HAD[fmt]:
        assert history.record(key.strip()) is None or history.record(key.strip()) in history.blocks, key
