"""Megatron-LM argument files end to end: the fixtures (values of Megatron-LM's own example scripts)
into every format and back, Megatron -> Megatron keeping shell expressions, detection, and the
generated schema's classification of every option (tests/test_generated_files.py regenerates the
schema from the argparse facts it comes from)."""

from __future__ import annotations

from pathlib import Path

import pytest

from neoconv import translate
from neoconv.api import read_ir
from neoconv.formats.detect import detect_file
from neoconv.services.diff import roundtrip
from neoconv.knowledge.mapping import load_table
from neoconv.knowledge.registry import FORMATS
from neoconv.core.report import Status
from neoconv.knowledge.schema import load_schema

from conftest import FIXTURES
from test_loss_proof import NAMING, unnamed_differences

INPUTS = FIXTURES / "inputs" / "megatron"
FILES = sorted(p for p in INPUTS.iterdir() if p.suffix in (".args", ".sh", ".yaml"))
VERSION = {"gpt-345m-v2.args": "v2"}  # a v2.6 file: read as that release reads it
TARGETS = [f for f in FORMATS if f != "megatron"]


@pytest.mark.parametrize("dst", TARGETS)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_difference_of_a_megatron_translation_is_named(path: Path, dst: str, tmp_path: Path) -> None:
    options = {"source_version": VERSION[path.name]} if path.name in VERSION else {}
    unnamed, netted = unnamed_differences([path], "megatron", dst, tmp_path, **options)
    assert unnamed == []
    assert netted == []  # named by the mapping itself, not by the read-back check


@pytest.mark.parametrize("dst", TARGETS)
# world sizes: Mixtral's pipeline (4) has no place in a DeepSpeed file, so no world size splits its batch there
@pytest.mark.parametrize(
    "name, world", [("llama3-8b.args", 64), ("mixtral-8x7b.args", None), ("tiny-defaults.args", 8)]
)
def test_there_and_back_changes_only_what_a_report_names(name: str, world: int | None, dst: str) -> None:
    result, there, back = roundtrip([str(INPUTS / name)], "megatron", dst, world_size=world)
    named = {f for t in (there, back) for e in t.report.entries if e.status in NAMING for f in e.fields}
    # what the start file holds must come back or be named (a field it lacks takes the middle format's
    # default on the way: Megatron's "no --eval-interval, no evaluation" becomes NeoX's 1000)
    changed = {c.field for c in (*result.changed, *result.only_a)}
    assert changed <= named, sorted(changed - named)


def test_llama3_reaches_neox_with_its_architecture_and_schedule() -> None:
    result = translate(str(INPUTS / "llama3-8b.args"), "megatron", "neox", world_size=8)
    config = result.config
    assert {
        k: config.get(k)
        for k in (
            "num_layers",
            "hidden_size",
            "num_attention_heads",
            "num_kv_heads",
            "intermediate_size",
            "norm",
            "activation",
            "rotary_emb_base",
            "pos_emb",
            "no_weight_tying",
            "use_bias_in_mlp",
        )
    } == {
        "num_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_kv_heads": 8,
        "intermediate_size": 43008,  # NeoX's gated width: 14336 x 3
        "norm": "rmsnorm",
        "activation": "swiglu",
        "rotary_emb_base": 1000000,
        "pos_emb": "rotary",
        "no_weight_tying": True,
        "use_bias_in_mlp": False,
    }
    # 1,953,125,000 samples of 128 = 15,258,789 steps (a remainder of 8 samples: reported)
    assert config["train_iters"] == 15258789 and config["train_batch_size"] == 128
    entries = result.report.by_source()
    assert entries["--train-samples"].status is Status.LOSSY
    assert entries["--save"].status is Status.UNKNOWN
    assert "CHECKPOINT_PATH is not set in this file" in entries["--save"].detail
    assert "save" not in config  # "$CHECKPOINT_PATH" is never written as a path


def test_megatron_to_megatron_keeps_shell_expressions_and_respells_old_options(tmp_path: Path) -> None:
    source = tmp_path / "run.args"
    source.write_text(
        "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 32\n"
        "--max-position-embeddings 32 --micro-batch-size 1 --lr 1e-3 --train-iters 10\n"
        "--save \"${CKPT_DIR}/run\" --data-path $DATA --layernorm-epsilon 1e-6 --vocab-file '$V'\n"
    )
    result = translate(str(source), "megatron", "megatron")
    lines = result.dump().splitlines()
    assert '--save "${CKPT_DIR}/run"' in lines and "--data-path $DATA" in lines  # as written: still expands
    assert "--vocab-file '$V'" in lines  # a literal: still quoted
    assert "--norm-epsilon 1e-06" in lines  # current Megatron refuses --layernorm-epsilon
    entries = result.report.by_source()
    assert entries["--layernorm-epsilon"].status is Status.CONVERTED
    assert "written as --norm-epsilon" in entries["--layernorm-epsilon"].detail
    assert result.report.summary().get("lossy", 0) == 0 and result.report.target["added_by_verification"] == 0


def test_a_bash_script_of_arrays_becomes_an_argument_file_and_tells_the_world_size() -> None:
    result = translate(str(INPUTS / "gpt3-175b.sh"), "megatron", "megatron")
    lines = result.dump().splitlines()
    assert "--tensor-model-parallel-size 8" in lines and "--save $CHECKPOINT_PATH" in lines
    assert not any(line.startswith("--nproc") or "launcher" in line for line in lines)
    launcher = result.report.by_source()["launcher --nproc_per_node"]
    assert launcher.status is Status.DROPPED and "translate with --world-size 128" in launcher.detail


def test_the_global_batch_splits_by_the_world_size_the_launcher_names() -> None:
    # GPT-3 175B: tp 8 x pp 16 on 128 GPUs leaves one data-parallel rank: 1536 micro-batches of 1
    ir = read_ir([str(INPUTS / "gpt3-175b.sh")], "megatron", world_size=128).ir
    assert (ir.get("parallel.data_parallel_size"), ir.get("batch.grad_accum")) == (1, 1536)


def test_ci_yaml_entries_besides_the_arguments_are_named() -> None:
    result = translate(str(INPUTS / "gpt-15b-ci.yaml"), "megatron", "neox")
    entries = result.report.by_source()
    assert entries["ENV_VARS.CUDA_DEVICE_MAX_CONNECTIONS"].status is Status.DROPPED
    assert "CI test setting" in entries["TEST_TYPE"].detail
    assert result.config["rotary_pct"] == 0.5
    assert (
        "activation" not in result.config
    )  # --squared-relu: NeoX squares no activation (tests/test_megatron_boundary.py)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_megatron_files_are_detected_by_content(path: Path) -> None:
    assert detect_file(str(path)) == "megatron"


def test_neox_yaml_is_not_taken_for_megatron() -> None:
    # NeoX keys (num_layers, hidden_size, ...) are Megatron dests too: only --flag keys say Megatron
    assert detect_file(str(FIXTURES / "inputs" / "neox" / "pythia-160m.yml")) == "neox"


# ---- the generated schema ---------------------------------------------------------------------


def test_every_option_is_mapped_or_classified() -> None:
    """Nothing a release parsed is `unknown`: a dest no rule reads has a group with a reason, and the
    catch-all group holds only dests the table maps."""
    schema, table = load_schema("megatron"), load_table("megatron")
    mapped = {k for rule in table.rules for k in (*rule.keys, *rule.peek)} | set(table.unsupported)
    groups = {node["x-group"] for node in schema["properties"].values()}
    assert groups <= set(table.extension_reasons)
    loose = sorted(
        dest for dest, node in schema["properties"].items() if node["x-group"] == "other" and dest not in mapped
    )
    assert loose == []
    assert {"num_layers", "layernorm_epsilon", "add_bias_linear", "batch_size", "warmup"} <= set(schema["properties"])


@pytest.mark.parametrize("path", [p for p in FILES if p.suffix == ".args"], ids=lambda p: p.name)
def test_a_read_namespace_matches_the_schema(path: Path) -> None:
    from neoconv.formats.megatron.reader import READER
    from neoconv.services.validate import schema_errors

    assert schema_errors(READER.read([str(path)]).tree, "megatron") == []


def test_an_option_of_a_release_reads_as_known_and_a_made_up_one_as_unknown(tmp_path: Path) -> None:
    path = tmp_path / "run.args"
    path.write_text(
        "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --tp-comm-overlap --retro-workdir /r --num-layer 3\n"
    )
    entries = translate(str(path), "megatron", "neox").report.by_source()
    assert (
        entries["--tp-comm-overlap"].status is Status.DROPPED and "performance" in entries["--tp-comm-overlap"].detail
    )
    assert (
        entries["--retro-workdir"].status is Status.DROPPED
        and "another model family" in entries["--retro-workdir"].detail
    )
    assert (
        entries["--num-layer"].status is Status.UNKNOWN
        and "did you mean --num-layers?" in entries["--num-layer"].detail
    )
