"""Megatron at the boundary with the other formats and with itself (issues 27, 28, 32): RoPE scaling
both ways with the release of each flag, a fork's values, Megatron's CI YAML kept as a CI YAML,
outputs the target release accepts (--squared-relu into NeoX, muon beside FSDP), the `# MISSING:`
hint's own spelling, control characters of a comment, `validate` of every Megatron syntax."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from neoconv import translate
from neoconv.api import read_ir
from neoconv.cli import main
from neoconv.core.report import Status
from neoconv.services.validate import validate_file

from conftest import FIXTURES

INPUTS = FIXTURES / "inputs" / "megatron"
MODEL = (
    "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 32 --max-position-embeddings 131072\n"
    "--micro-batch-size 1 --lr 1e-4 --train-iters 10 --normalization RMSNorm --swiglu --disable-bias-linear\n"
)
LLAMA32 = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 2048,
    "intermediate_size": 8192,
    "num_attention_heads": 32,
    "num_hidden_layers": 16,
    "num_key_value_heads": 8,
    "max_position_embeddings": 131072,
    "rms_norm_eps": 1e-05,
    "rope_theta": 500000.0,
    "vocab_size": 128256,
    "tie_word_embeddings": True,
    "hidden_act": "silu",
    "rope_scaling": {
        "factor": 32.0,
        "high_freq_factor": 4.0,
        "low_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
}


def args_file(tmp_path: Path, text: str, name: str = "run.args") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---- issue 27 item 7: RoPE scaling at the Megatron boundary --------------------------------------


def test_llama31_scaling_with_the_legacy_rotary_flag_reaches_hf(tmp_path: Path) -> None:
    source = args_file(
        tmp_path, MODEL + "--use-rotary-position-embeddings --no-position-embedding --use-rope-scaling\n"
    )
    result = translate(source, "megatron", "hf")
    assert result.config["rope_scaling"] == {
        "rope_type": "llama3",
        "factor": 8.0,
        "original_max_position_embeddings": 8192,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
    }
    entry = result.report.by_source()["--use-rope-scaling"]
    assert entry.status is Status.CONVERTED and "rope_scaling" in str(entry.target_key)


def test_llama32_factor_is_written_as_the_option_since_core_v0_11_and_named_as_not_read(tmp_path: Path) -> None:
    source = tmp_path / "config.json"
    source.write_text(json.dumps(LLAMA32))
    result = translate(str(source), "hf", "megatron")
    assert result.config["--use-rope-scaling"] is True and result.config["--rope-scaling-factor"] == 32.0
    lossy = [e for e in result.report.entries if "--rope-scaling-factor" in str(e.target_key)]
    assert lossy and lossy[0].status is Status.LOSSY
    assert "(an option since core_v0.11.0): pretrain_gpt.py's GPT builders never pass it on" in lossy[0].detail
    # a release range before it has no option: named, not written
    older = translate(str(source), "hf", "megatron", target_version="core_v0.8")
    assert "--rope-scaling-factor" not in older.config and "--use-rope-scaling" not in older.config


def test_a_megatron_rope_scaling_factor_reads_as_the_8_pretrain_gpt_applies(tmp_path: Path) -> None:
    source = args_file(tmp_path, MODEL + "--position-embedding-type rope --use-rope-scaling --rope-scaling-factor 32\n")
    ingested = read_ir([source], "megatron")
    assert ingested.ir.get("model.rope_scaling_factor") == 8.0


# ---- issue 27 item 3: a fork's values ------------------------------------------------------------


def test_a_forks_tokenizer_is_an_unknown_entry_naming_it_and_the_rest_translates(tmp_path: Path) -> None:
    source = args_file(tmp_path, MODEL + "--tokenizer-type PretrainedFromHF --tokenizer-name-or-path /m\n")
    result = translate(source, "megatron", "neox")
    entry = result.report.by_source()["--tokenizer-type"]
    assert entry.status is Status.UNKNOWN
    assert entry.detail.startswith("--tokenizer-type PretrainedFromHF: not a choice of any Megatron-LM release (")
    assert result.config["num_layers"] == 2 and result.config["hidden_size"] == 64
    same = translate(source, "megatron", "megatron")  # carried for the fork, still named
    assert same.config["--tokenizer-type"] == "PretrainedFromHF"
    assert same.report.by_source()["--tokenizer-type"].status is Status.UNKNOWN


def test_a_forks_negative_eval_iters_reads_as_no_evaluation(tmp_path: Path) -> None:
    source = args_file(tmp_path, MODEL + "--eval-iters -1 --eval-interval 1000\n")
    assert read_ir([source], "megatron").ir.get("train.eval_steps") == 0  # do_valid = eval_iters > 0


def test_one_expert_is_the_dense_mlp_and_a_negative_moe_frequency_is_pythons_modulo(tmp_path: Path) -> None:
    dense = read_ir([args_file(tmp_path, MODEL + "--num-experts 1\n")], "megatron").ir
    assert dense.get("model.moe_num_experts") is None
    moe = read_ir([args_file(tmp_path, MODEL + "--num-experts 8 --moe-layer-freq -2\n")], "megatron").ir
    assert (moe.get("model.moe_num_experts"), moe.get("model.moe_layer_interval")) == (8, 2)


# ---- issue 28: Megatron's CI YAML keeps its container; outputs the target release accepts --------


def test_megatron2megatron_of_a_ci_yaml_keeps_model_args_and_says_formatting_truthfully(tmp_path: Path) -> None:
    source = INPUTS / "gpt-15b-ci.yaml"
    out = tmp_path / "model_config.yaml"
    result = CliRunner().invoke(
        main, ["megatron2megatron", str(source), "-o", str(out), "--report", str(tmp_path / "r.json")]
    )
    assert result.exit_code == 0, result.output
    written = yaml.safe_load(out.read_text())
    assert list(written) == ["ENV_VARS", "TEST_TYPE", "MODEL_ARGS"]
    assert written["MODEL_ARGS"]["--num-layers"] == 32 and written["MODEL_ARGS"]["--data-path"] == "$DATA_BLEND"
    assert out.read_text() == source.read_text()  # nothing to migrate: the file as it was
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["target"]["formatting"] == {"kept": True}
    plain = translate(str(source), "megatron", "megatron").config  # the plain form is the CI layout too
    assert list(plain) == ["ENV_VARS", "TEST_TYPE", "MODEL_ARGS"]


def test_a_shell_or_args_source_says_why_its_formatting_is_not_kept(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["megatron2megatron", str(INPUTS / "gpt3-175b.sh"), "-o", str(tmp_path / "x.args")])
    assert (
        "wrote the plain layout, not the source's formatting: the source is a bash script: its arguments are "
        "written as an argument file, its shell code is not kept"
    ) in result.output
    assert "YAML" not in result.output


def test_squared_relu_is_not_written_as_an_activation_neox_lacks() -> None:
    result = translate(str(INPUTS / "gpt-15b-ci.yaml"), "megatron", "neox")
    assert "activation" not in result.config
    entry = result.report.by_source()["--squared-relu"]
    assert entry.status is Status.DROPPED and entry.detail.startswith("NeoX has no relu2 activation (bilinear, geglu,")


@pytest.mark.parametrize(
    "version, written, said",
    [
        (
            "current",
            {"--optimizer": "muon", "--use-distributed-optimizer": True},
            "Megatron refuses its FSDP with --optimizer muon: ZeRO-3 is written as --use-distributed-optimizer",
        ),
        ("core_v0.16", {"--optimizer": "muon"}, "Megatron-LM core_v0.16 refuses any sharding with --optimizer muon"),
    ],
)
def test_muon_beside_fsdp2_is_written_as_megatron_accepts(
    tmp_path: Path, version: str, written: dict, said: str
) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    for path in (FIXTURES / "inputs" / "veomni" / "tinyllama").iterdir():
        (folder / "tinyllama").mkdir(exist_ok=True)
        (folder / "tinyllama" / path.name).write_text(path.read_text())
    text = (
        (FIXTURES / "inputs" / "veomni" / "tinyllama-flat.yaml")
        .read_text()
        .replace("optimizer: adamw", "optimizer: muon")
    )
    (folder / "muon.yaml").write_text(text)
    result = translate(str(folder / "muon.yaml"), "veomni", "megatron", world_size=8, target_version=version)
    assert {k: result.config.get(k) for k in written} == written
    assert "--use-megatron-fsdp" not in result.config and "--ckpt-format" not in result.config
    sharding = [e for e in result.report.entries if said in e.detail]
    assert sharding and sharding[0].status is Status.LOSSY


# ---- issue 32: the hint's own spelling, control characters of a comment -------------------------


@pytest.mark.parametrize("key", ["--data-path", "data_path"])
def test_the_missing_hints_spelling_is_accepted_and_clears_the_mark(tmp_path: Path, key: str) -> None:
    source = str(FIXTURES / "inputs" / "neox" / "pythia-160m.yml")
    runner = CliRunner()
    base = ["neox2megatron", source, "--world-size", "8", "--set", "model.vocab_size=50304"]
    hinted = runner.invoke(main, base)
    assert "# MISSING: --data-path — give --set megatron:--data-path=VALUE" in hinted.stdout
    given = runner.invoke(main, [*base, "--set", f"megatron:{key}=/data/pile_text"])
    assert given.exit_code == 0, given.output
    assert "--data-path /data/pile_text" in given.stdout.splitlines() and "MISSING: --data-path" not in given.stdout


def test_control_characters_of_a_megatron_comment_never_reach_a_yaml_output_raw(tmp_path: Path) -> None:
    source = tmp_path / "run.args"
    source.write_bytes("# run \x1b[31m red \x0b tab \r cr \x85 nel \u2028 ls\n".encode() + MODEL.encode())
    out = tmp_path / "neox.yml"
    result = CliRunner().invoke(main, ["megatron2neox", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "# run \\x1b[31m red \\x0b tab \\r cr \\x85 nel \\u2028 ls" in text.splitlines()
    yaml.safe_load(text)  # neoconv's own output reads back
    assert CliRunner().invoke(main, ["neox2neox", str(out)]).exit_code == 0


# ---- validate reads every Megatron syntax ---------------------------------------------------------


@pytest.mark.parametrize("name", ["gpt-345m-v2.args", "llama3-8b.args", "gpt3-175b.sh", "gpt-15b-ci.yaml"])
def test_validate_reads_megatron_files_of_every_syntax(name: str) -> None:
    found = validate_file(str(INPUTS / name), version=None)
    assert found.format == "megatron" and found.problems == []


def test_validate_reads_its_own_args_output_and_names_problems_with_their_lines(tmp_path: Path) -> None:
    written = translate(
        str(FIXTURES / "inputs" / "neox" / "pythia-160m.yml"),
        "neox",
        "megatron",
        world_size=8,
        set_values={"model.vocab_size": 50304},
    )
    out = tmp_path / "out.args"
    out.write_text(written.dump())
    assert validate_file(str(out)).problems == []
    bad = args_file(
        tmp_path, "--num-layers 2\n--hidden-size 65\n--num-attention-heads 4\n--my-fork-flag 3\n", "bad.args"
    )
    problems = [(p.line, p.key) for p in validate_file(bad).problems]
    assert problems == [(2, "--hidden-size"), (4, "--my-fork-flag")]


def test_validate_of_a_launcher_names_no_run_time_value_as_a_problem(tmp_path: Path) -> None:
    script = args_file(
        tmp_path, f"CKPT=$1\ntorchrun pretrain_gpt.py {MODEL.replace(chr(10), ' ')} --save $CKPT\n", "run.sh"
    )
    assert validate_file(script).problems == []


def test_migrate_leaves_a_launcher_or_an_args_file_alone_and_says_why(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text((INPUTS / "gpt3-175b.sh").read_text())
    args = tmp_path / "run.args"
    args.write_text("# layers\n--num-layers 2\n--layernorm-epsilon 1e-6\n")
    result = CliRunner().invoke(main, ["migrate", str(script), str(args)])
    assert result.exit_code == 0
    assert script.read_text() == (INPUTS / "gpt3-175b.sh").read_text() and args.read_text().startswith("# layers")
    assert (
        f"skipped  {script}: the source is a bash script: its arguments are written as an argument file"
        in result.output
    )
    assert "YAML" not in result.output
