"""DeepSpeed JSON: every corpus file, each scheduler type and ZeRO stage, both directions, companions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from neoconv import InputError, Status, translate
from neoconv.cli import main
from neoconv.formats.cerebras.reader import READER as cerebras
from neoconv.formats.deepspeed.reader import READER as deepspeed
from neoconv.formats.deepspeed.writer import WRITER as deepspeed_writer
from neoconv.io.documents import flatten
from neoconv.formats.deepspeed.formulas import deepspeed_batch
from neoconv.formats.detect import detect_file
from neoconv.knowledge.formula import FORMULAS, Approx
from neoconv.knowledge.mapping import load_table
from neoconv.schedule.simple import simple
from neoconv.services.validate import schema_errors

from conftest import CORPUS, FIXTURES, cli_runner, corpus_dir, corpus_files

DS = FIXTURES / "inputs" / "deepspeed"
DS_CORPUS = corpus_files("deepspeed", "*.json")
# MANIFEST.md: shell templates with unquoted placeholders (kept as negative tests) ...
TEMPLATES = ("ds_config_gpt2_TEMPLATE.json", "ds_zero_stage_2_config_curriculum_fixed_linear.json")
# ... and GPT-NeoX argument files written in JSON, which are not DeepSpeed configs.
NEOX_ARGUMENTS = "gpt-neox__"


def kind(path: Path) -> str:
    if path.name.endswith(TEMPLATES):
        return "template"
    if path.name.startswith(NEOX_ARGUMENTS):
        return "neox"
    return "deepspeed"


def assert_accounted(result: Any, *paths: Path, prefix: dict[Path, str] | None = None) -> None:
    """Every source leaf lands in exactly one report entry (defaulted/missing entries name keys a file lacks)."""
    leaves: list[str] = []
    for path in paths:
        if path.suffix == ".json":
            data = json.loads(path.read_text())
        else:  # NeoX YAML: NeoX reads '-' as '_'
            data = {k.replace("-", "_"): v for k, v in yaml.safe_load(path.read_text()).items()}
        leaves += [(prefix or {}).get(path, "") + leaf for leaf in flatten(data)]
    # a missing entry without a target key is a source leaf whose value the launcher decides ("auto")
    targets = [
        e
        for e in result.report.entries
        if e.status is Status.DEFAULTED or (e.status is Status.MISSING and e.target_key)
    ]
    keys = [
        e.source_key
        for e in result.report.entries
        if e.source_key and not e.source_key.startswith("--set") and not any(e is t for t in targets)
    ]
    assert sorted(keys) == sorted(leaves)
    assert not {e.source_key for e in targets} & set(leaves)


def run_cli(runner: Any, *args: str) -> Any:
    return runner.invoke(main, list(args))


# ---- the corpus ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", DS_CORPUS, ids=lambda p: p.name)
def test_every_corpus_file_translates_or_fails_clearly(path: Path, runner: Any, tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    cli = run_cli(runner, "deepspeed2cerebras", str(path), "-o", str(out), "-q")
    if kind(path) == "template":
        assert cli.exit_code == 2
        lines = cli.stderr.strip().splitlines()
        assert len(lines) == 1 and "unquoted placeholders" in lines[0] and path.name in lines[0]
        assert "Traceback" not in cli.stderr
        return
    if kind(path) == "neox":
        # the file says plainly it is NeoX's: it is read as NeoX, and the report says so
        assert cli.exit_code == 0, cli.stderr
        result = translate(path, "deepspeed", "cerebras")
        assert result.report.source["format"] == "neox"
        assert "GPT-NeoX argument file" in result.report.source["note"]
        assert schema_errors(cerebras.read([str(out)]).tree, "cerebras") == []
        return
    if cli.exit_code == 2 and "would hold no setting of the source" in cli.stderr:
        # nothing of the file is Model Zoo's (an autotuning search space): refused in one line (issue 28)
        assert cli.stderr.count("\n") == 1 and path.name in cli.stderr and not out.exists()
        return
    assert cli.exit_code == 0, cli.stderr
    result = translate(path, "deepspeed", "cerebras")
    assert schema_errors(cerebras.read([str(out)]).tree, "cerebras") == []
    assert schema_errors(result.report.to_json(), "report") == []
    assert_accounted(result, path)


@pytest.mark.parametrize("path", [p for p in DS_CORPUS if kind(p) == "deepspeed"], ids=lambda p: p.name)
def test_deepspeed_to_deepspeed_keeps_every_leaf(path: Path) -> None:
    result = translate(path, "deepspeed", "deepspeed")
    assert result.config == json.loads(path.read_text())
    assert_accounted(result, path)
    # a leaf the target release no longer reads is kept, and named (aio.thread_count: 0.3.15..0.16.3)
    kept = {e.status for e in result.report.entries if e.source_key and e.kind != "refused_by_release"}
    assert kept <= {Status.EXACT, Status.CONVERTED, Status.UNKNOWN}
    assert all(e.status is Status.LOSSY for e in result.report.entries if e.kind == "refused_by_release")


def test_corpus_values_reach_cerebras() -> None:
    corpus_dir("deepspeed")
    qanet = translate(
        CORPUS / "deepspeed" / "DeepSpeedExamples__69785c7c__QANet-Pytorch__ds_bsz512_1cycle.json",
        "deepspeed",
        "cerebras",
        world_size=8,
    )
    opt = qanet.config["optimizer"]
    assert qanet.config["train_input"]["batch_size"] == 512
    assert opt["optimizer_type"] == "AdamW"  # DeepSpeed "Adam" is decoupled unless adam_w_mode is false
    assert opt["betas"] == [0.8, 0.999] and opt["eps"] == 1e-8 and opt["weight_decay"] == 3e-7
    # OneCycle with stairs (DeepSpeed 0.19.4+): the lr held on 100 levels per half, as Cerebras ConstantLR runs
    assert opt["learning_rate"][:2] == [
        {"scheduler": "Constant", "learning_rate": 0.004, "total_iters": 10},
        {"scheduler": "Constant", "learning_rate": 0.00411, "total_iters": 10},
    ]
    by = qanet.report.by_source()
    assert (
        by["scheduler.type"].status is Status.CONVERTED
        and by["scheduler.params.cycle_max_lr"].status is Status.CONVERTED
    )
    assert qanet.ir.get("batch.grad_accum") == 2  # 512 // 32 // 8, DeepSpeed's derivation

    moq = translate(
        CORPUS
        / "deepspeed"
        / "DeepSpeedExamples__7cce84a6__training__MoQ__huggingface-transformers__examples__tests__deepspeed__ds_config.json",
        "deepspeed",
        "cerebras",
    )
    assert moq.ir.get("parallel.zero_stage") == 2
    # WarmupLR without warmup_type warms up logarithmically (one step late): Cerebras has no log warmup
    assert [p["kind"] for p in moq.ir.get("schedule.phases")] == ["constant", "log_warmup", "constant"]
    assert moq.config["optimizer"]["learning_rate"][1]["total_iters"] == 500
    lossy = moq.report.by_source()["scheduler.type"]
    assert lossy.status is Status.LOSSY and lossy.fields == ("schedule.phases",)
    assert "differs by at most 1.641e-05 (step 80: 4.742e-06 instead of 2.115e-05)" in lossy.detail

    infinity = translate(
        CORPUS
        / "deepspeed"
        / "DeepSpeedExamples__ba7c0e55__megatron__Megatron-LM-v1.1.5-ZeRO3__examples__ds_zero_stage_infinity_config.json",
        "deepspeed",
        "cerebras",
        world_size=8,
    )
    typo = infinity.report.by_source()["zero_optimization.stage3_param_persitence_threshold"]
    assert typo.status is Status.UNKNOWN and "stage3_param_persistence_threshold" in typo.detail
    assert infinity.config["train_input"]["batch_size"] == 32  # micro 4 x accumulation 1 x 8 GPUs
    assert infinity.ir.get("parallel.zero_stage") == 3

    cifar = translate(
        CORPUS / "deepspeed" / "DeepSpeedExamples__d2bd5ebc__training__cifar__ds_config.json", "deepspeed", "cerebras"
    )
    assert cifar.config["model"]["fp16_type"] == "bfloat16"
    assert cifar.report.by_source()["bf16.loss_scale"].status is Status.UNKNOWN  # bf16 has no loss scaler
    assert "fp16.loss_scale" in cifar.report.by_source()["bf16.loss_scale"].detail


def test_neox_argument_files_are_read_with_the_neox_reader() -> None:
    corpus_dir("deepspeed")
    path = CORPUS / "deepspeed" / "gpt-neox__autotuning_configs__tune_1-3B.json"
    with pytest.raises(InputError, match="GPT-NeoX argument file") as info:
        deepspeed.read([str(path)])
    assert info.value.line == 2  # "pipe-parallel-size", the first NeoX key
    result = translate(path, "neox", "cerebras", world_size=8)
    assert result.config["model"]["hidden_size"] == 2048 and result.config["model"]["num_heads"] == 16
    assert result.config["train_input"]["batch_size"] == 8  # NeoX: micro 1 x GA 1 x 8 GPUs


# ---- each scheduler type and ZeRO stage (our fixtures) ------------------------------------


def test_warmup_lr_zero0() -> None:
    result = translate(DS / "warmup-lr-zero0.json", "deepspeed", "cerebras", world_size=4)
    ir = result.ir
    assert ir.get("parallel.zero_stage") == 0
    # WarmupLR runs one step late: its first step keeps warmup_min_lr, the peak comes at step 501
    assert ir.get("schedule.warmup_steps") == 501 and ir.get("schedule.decay_steps") is None
    assert ir.get("batch.grad_accum") == 8  # 256 // 8 // 4
    assert result.config["optimizer"]["learning_rate"] == [
        {"scheduler": "Constant", "learning_rate": 0.0, "total_iters": 1},
        {"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": 0.0003, "total_iters": 500},
        {"scheduler": "Constant", "learning_rate": 0.0003},
    ]
    assert result.report.by_source()["scheduler.params.warmup_num_steps"].status is Status.CONVERTED  # exact
    assert result.config["model"]["fp16_type"] == "bfloat16"
    assert result.config["optimizer"]["weight_decay"] == 0.1  # from optimizer.params, unlike NeoX


def test_warmup_decay_lr_zero1_reaches_its_floor_at_total_num_steps() -> None:
    result = translate(DS / "warmup-decay-lr-zero1.json", "deepspeed", "cerebras", world_size=16)
    ir = result.ir
    assert ir.get("parallel.zero_stage") == 1
    # DeepSpeed warms up from 6e-5, peaks at step 1001 (one step late) and decays linearly to 6e-5 at 10001
    assert ir.get("schedule.decay_steps") == 10001 and ir.get("schedule.min_lr") == 6e-5
    phases = result.config["optimizer"]["learning_rate"]
    assert phases[2] == {
        "scheduler": "Linear",
        "initial_learning_rate": 0.0006,
        "end_learning_rate": 6e-5,
        "total_iters": 9000,
    }
    assert phases[3] == {"scheduler": "Constant", "learning_rate": 6e-5}
    assert result.config["train_input"]["batch_size"] == 4 * 8 * 16
    assert result.config["optimizer"]["max_gradient_norm"] == 0.5
    assert result.config["optimizer"]["initial_loss_scale"] == 4096.0  # 2 ** initial_scale_power 12
    assert result.config["optimizer"]["steps_per_increase"] == 500
    # the lag is a leading step at warmup_min_lr: Cerebras holds it exactly
    assert phases[0] == {"scheduler": "Constant", "learning_rate": 6e-5, "total_iters": 1}
    assert result.report.by_source()["scheduler.params.warmup_min_lr"].status is Status.CONVERTED


def test_warmup_cosine_lr_zero2_uses_ratios_of_the_optimizer_lr() -> None:
    result = translate(DS / "warmup-cosine-lr-zero2.json", "deepspeed", "cerebras", world_size=8)
    ir = result.ir
    assert ir.get("parallel.zero_stage") == 2
    assert ir.get("schedule.min_lr") == pytest.approx(0.05 * 0.0002)  # cos_min_ratio x lr
    warmup = result.config["optimizer"]["learning_rate"][1]  # from warmup_min_ratio x lr
    assert warmup == {
        "scheduler": "Linear",
        "initial_learning_rate": pytest.approx(2e-5),
        "end_learning_rate": 2e-4,
        "total_iters": 2000,
    }
    assert ir.get("schedule.decay_steps") == 20000 and ir.get("schedule.warmup_steps") == 2001
    cosine = result.config["optimizer"]["learning_rate"][2]
    assert cosine["scheduler"] == "CosineDecay" and cosine["total_iters"] == 17999
    assert cosine["end_learning_rate"] == pytest.approx(1e-5)
    # DeepSpeed's first decay step is already one step into the cosine: no Cerebras class starts there
    lossy = result.report.by_source()["scheduler.type"]
    assert lossy.status is Status.LOSSY and "differs by at most 9.603e-09" in lossy.detail
    # adam_w_mode false: DeepSpeed's Adam adds weight decay to the gradient (L2), Cerebras' Adam too
    assert ir.get("optim.type") == "adam" and result.config["optimizer"]["optimizer_type"] == "Adam"
    with pytest.raises(InputError, match="batch assertion"):
        translate(DS / "warmup-cosine-lr-zero2.json", "deepspeed", "cerebras", world_size=16)  # 512 != 16 x 4 x 16


def test_onecycle_zero3_is_a_canonical_schedule() -> None:
    result = translate(DS / "onecycle-zero3.json", "deepspeed", "cerebras")
    assert result.ir.get("parallel.zero_stage") == 3
    # OneCycle up over 1000 steps and back over 1000, then its minimum: Cerebras Linear phases, exactly
    assert result.config["optimizer"]["learning_rate"] == [
        {"scheduler": "Linear", "initial_learning_rate": 0.01, "end_learning_rate": 0.1, "total_iters": 1000},
        {"scheduler": "Linear", "initial_learning_rate": 0.1, "end_learning_rate": 0.01, "total_iters": 1000},
        {"scheduler": "Constant", "learning_rate": 0.01},
    ]
    by = result.report.by_source()
    assert by["scheduler.type"].status is Status.CONVERTED
    assert result.config["optimizer"]["optimizer_type"] == "SGD" and result.config["optimizer"]["momentum"] == 0.9
    assert "max_gradient_norm" not in result.config["optimizer"]  # gradient_clipping 0.0: no clipping
    same = translate(DS / "onecycle-zero3.json", "deepspeed", "deepspeed")
    assert same.config["scheduler"] == json.loads((DS / "onecycle-zero3.json").read_text())["scheduler"]


def test_lr_range_test_and_lamb() -> None:
    result = translate(DS / "lr-range-test.json", "deepspeed", "cerebras", world_size=8)
    # a staircase range test: 1e-4 for 200 steps, then 1e-4 x (1 + 5): Cerebras ConstantLR runs
    assert result.config["optimizer"]["learning_rate"][:2] == [
        {"scheduler": "Constant", "learning_rate": 1e-4, "total_iters": 200},
        {"scheduler": "Constant", "learning_rate": 6e-4},
    ]
    assert result.report.by_source()["scheduler.type"].status is Status.CONVERTED
    assert result.config["optimizer"]["optimizer_type"] == "Lamb"
    assert result.config["train_input"]["batch_size"] == 16
    assert result.report.by_source()["optimizer.params.max_coeff"].status is Status.DROPPED


def test_log_warmup_and_the_version_aware_defaults() -> None:
    current = translate(DS / "warmup-lr-log.json", "deepspeed", "cerebras")
    old = translate(DS / "warmup-lr-log.json", "deepspeed", "cerebras", source_version="0.17.1")
    # WarmupLR's peak defaults to the optimizer's lr since 0.17.2 (#7360), to 0.001 before
    assert current.ir.get("optim.lr") == old.ir.get("optim.lr") == 0.0005  # the optimizer's own, as written
    assert current.config["optimizer"]["learning_rate"][-1] == 0.0005 or current.config["optimizer"]["learning_rate"][
        -1
    ] == {"scheduler": "Constant", "learning_rate": 0.0005}
    assert old.config["optimizer"]["learning_rate"][-1] == {"scheduler": "Constant", "learning_rate": 0.001}
    # gradient_clipping defaults to 1.0 since 0.19.3 (#8068), to 0.0 (none) before
    assert current.config["optimizer"]["max_gradient_norm"] == 1.0
    assert "max_gradient_norm" not in old.config["optimizer"]
    defaulted = next(e for e in current.report.entries if e.target_key == "optimizer.max_gradient_norm")
    assert defaulted.status is Status.DEFAULTED and defaulted.source_key == "gradient_clipping"
    assert current.ir.get("schedule.phases")[1]["kind"] == "log_warmup"  # Cerebras has none: the closest, lossy
    assert current.report.by_source()["scheduler.params.warmup_num_steps"].status is Status.LOSSY


def test_every_zero_stage_is_read() -> None:
    stages = {
        path.name: translate(path, "deepspeed", "deepspeed").ir.get("parallel.zero_stage")
        for path in sorted(DS.glob("*zero*.json"))
    }
    assert sorted(stages.values()) == [0, 1, 2, 3]


def test_hf_auto_placeholders_are_reported_and_kept_for_deepspeed() -> None:
    result = translate(DS / "hf-auto.json", "deepspeed", "cerebras", world_size=8)
    by = result.report.by_source()
    for leaf in ("train_micro_batch_size_per_gpu", "gradient_clipping", "optimizer.params.lr", "bf16.enabled"):
        assert by[leaf].status is Status.MISSING and '"auto"' in by[leaf].detail  # the launcher decides it
    assert (
        "give the values with --set batch.global=VALUE --set batch.micro=VALUE --set batch.grad_accum=VALUE"
        in by["train_micro_batch_size_per_gpu"].detail
    )
    assert by["scheduler.type"].status is Status.MISSING and "run time" in by["scheduler.type"].detail
    assert result.ir.get("optim.lr") is None and result.ir.get("precision.dtype") is None
    assert_accounted(result, DS / "hf-auto.json")
    same = translate(DS / "hf-auto.json", "deepspeed", "deepspeed")
    assert same.config == json.loads((DS / "hf-auto.json").read_text())
    given = translate(DS / "hf-auto.json", "deepspeed", "deepspeed", set_values={"batch.micro": 4})
    assert given.config["train_micro_batch_size_per_gpu"] == 4


def test_auto_inside_scheduler_params_is_the_launchers_and_the_rest_reads(tmp_path: Path) -> None:
    """Issue 27 item 2: "auto" in a scheduler's params (no optimizer block beside it) refused the file;
    now the schedule is missing with its --set, and every other key reads as usual."""
    path = tmp_path / "ds.json"
    path.write_text(
        json.dumps(
            {
                "train_micro_batch_size_per_gpu": 4,
                "gradient_accumulation_steps": 2,
                "gradient_clipping": 0.5,
                "scheduler": {
                    "type": "WarmupDecayLR",
                    "params": {
                        "warmup_min_lr": 0,
                        "warmup_max_lr": 2e-5,
                        "warmup_num_steps": "auto",
                        "total_num_steps": "auto",
                    },
                },
                "zero_optimization": {"stage": 2},
            }
        )
    )
    result = translate(path, "deepspeed", "neox", world_size=8)
    by = result.report.by_source()
    for leaf in ("scheduler.type", "scheduler.params.warmup_max_lr", "scheduler.params.warmup_num_steps"):
        assert (
            by[leaf].status is Status.MISSING and "--set optim.lr=VALUE --set schedule.phases=VALUE" in by[leaf].detail
        )
    assert result.ir.get("schedule.phases") is None
    assert (result.ir.get("batch.global"), result.ir.get("optim.grad_clip"), result.ir.get("parallel.zero_stage")) == (
        64,
        0.5,
        2,
    )
    assert_accounted(result, path)
    given = translate(path, "deepspeed", "neox", world_size=8, set_values={"optim.lr": 2e-5})
    assert given.ir.get("optim.lr") == 2e-5


def test_an_auto_config_with_a_key_only_neox_has_is_deepspeeds(tmp_path: Path) -> None:
    """Llama2-Chinese's ds_config_zero2.json: DeepSpeed settings full of "auto" and a top-level min_lr (NeoX's
    key, which DeepSpeed ignores) was refused as "a GPT-NeoX YAML config" (NeoX knows every key); "auto" is
    the HF Trainer's, so the file is DeepSpeed's and min_lr is named."""
    path = tmp_path / "ds_config_zero2.json"
    path.write_text(
        json.dumps(
            {
                "fp16": {"enabled": "auto", "loss_scale": 0},
                "zero_optimization": {"stage": 2},
                "optimizer": {"type": "AdamW", "params": {"lr": "auto", "weight_decay": "auto"}},
                "gradient_accumulation_steps": "auto",
                "train_micro_batch_size_per_gpu": "auto",
                "min_lr": 5e-7,
            }
        )
    )
    assert detect_file(str(path)) == "deepspeed"
    out = tmp_path / "out.yml"
    result = cli_runner().invoke(
        main, ["deepspeed2neox", str(path), "-o", str(out), "--report", str(tmp_path / "r.json")]
    )
    assert result.exit_code == 0, result.stderr
    entries = {e["source_key"]: e for e in json.loads((tmp_path / "r.json").read_text())["entries"]}
    assert entries["min_lr"]["status"] == "unknown"
    assert yaml.safe_load(out.read_text())["zero_optimization"]["stage"] == 2
    # a TrainingArguments file whose own `bf16: auto` (axolotl's) is no DeepSpeed block stays the trainer's
    axolotl = tmp_path / "axolotl.yaml"
    axolotl.write_text("base_model: m\nmicro_batch_size: 2\nlearning_rate: 1.0e-4\nbf16: auto\n")
    assert detect_file(str(axolotl)) == "hftrainer"


# ---- DeepSpeed as a target --------------------------------------------------------------------


def test_cerebras_to_deepspeed_values() -> None:
    corpus_dir("cerebras-legacy")
    path = CORPUS / "cerebras-legacy" / "gpt3" / "Cerebras_GPT" / "111m.yaml"
    result = translate(path, "cerebras", "deepspeed")
    ds = result.config
    assert schema_errors(ds, "deepspeed") == []
    assert ds["train_batch_size"] == 120
    assert ds["optimizer"]["type"] == "AdamW"
    assert ds["optimizer"]["params"] == {"lr": 0.0006, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.1}
    # Linear 0 -> 6e-4 over 1525 steps, Linear 6e-4 -> 6e-5 over 7512 more: WarmupDecayLR cannot start at 0
    # and end at 6e-5 (one parameter is both), so the closest is a cosine, and the report says by how much
    assert ds["scheduler"] == {
        "type": "WarmupCosineLR",
        "params": {
            "warmup_num_steps": 1525,
            "warmup_type": "linear",
            "total_num_steps": 9036,
            "warmup_min_ratio": 0.0,
            "cos_min_ratio": pytest.approx(0.1001198),
        },
    }
    lossy = result.report.by_source()["optimizer.learning_rate"]
    assert (
        lossy.status is Status.LOSSY
        and "differs by at most 5.683e-05 (step 7386: 0.0001219 instead of 0.0001787)" in lossy.detail
    )
    assert ds["gradient_clipping"] == 1.0
    assert list(ds)[:2] == ["train_batch_size", "optimizer"]  # the table's order
    assert deepspeed.read([_write(ds)]).tree == ds


def test_neox_to_deepspeed_values(pythia160m: Path) -> None:
    result = translate(pythia160m, "neox", "deepspeed", world_size=8)
    ds = result.config
    assert schema_errors(ds, "deepspeed") == []
    assert (ds["train_batch_size"], ds["train_micro_batch_size_per_gpu"], ds["gradient_accumulation_steps"]) == (
        256,
        32,
        1,
    )
    assert ds["optimizer"]["type"] == "AdamW"  # NeoX's Adam is FusedAdam in AdamW mode
    assert ds["optimizer"]["params"]["weight_decay"] == 0.01  # NeoX's top-level weight_decay moves into params
    # NeoX's first two steps at lr / W; DeepSpeed's one step later: the closest starts its warmup there
    assert ds["scheduler"] == {
        "type": "WarmupCosineLR",
        "params": {
            "warmup_num_steps": 1429,
            "warmup_type": "linear",
            "total_num_steps": 143000,
            "warmup_min_ratio": pytest.approx(1 / 1430),
            "cos_min_ratio": pytest.approx(0.1),
        },
    }
    lossy = result.report.by_source()["lr_decay_style"]
    assert lossy.status is Status.LOSSY and "at most 4.196e-07 (step 0: 0 instead of 4.196e-07)" in lossy.detail
    assert ds["fp16"]["enabled"] is True and ds["fp16"]["initial_scale_power"] == 12
    assert ds["zero_optimization"] == {"stage": 1}
    assert result.report.by_source()["gradient_clipping"].status is Status.LOSSY  # NeoX's clipping trap
    assert_accounted(result, pythia160m)


def test_canonical_schedules_written_as_deepspeed_schedulers() -> None:
    write = FORMULAS["deepspeed.lr_schedule"].write
    # a warmup from 6e-5 and a linear decay back to it, both on time: DeepSpeed's OneCycle, exactly (no lag)
    out = write(6e-4, simple(6e-4, 1000, "linear", 10000, 6e-5, 6e-5).to_json(), None)
    assert out == {
        "optimizer_params_lr": 6e-4,
        "scheduler_type": "OneCycle",
        "scheduler_params": {
            "cycle_min_lr": 6e-5,
            "cycle_max_lr": 6e-4,
            "cycle_first_step_size": 1000,
            "cycle_second_step_size": 9000,
            "cycle_momentum": False,
            "cycle_first_stair_count": 0,
            "cycle_second_stair_count": 0,
        },
    }
    # no DeepSpeed exponential decay after a warmup: the closest, and by how much
    out = write(1e-3, simple(1e-3, 10, "exponential", 100, 1e-5).to_json(), None)
    assert isinstance(out, Approx) and out.fields == ("schedule.phases",)
    assert out.detail == (
        "DeepSpeed has no exact form of this schedule: the closest differs by at most 0.0004512 "
        "(step 40: 0.0006667 instead of 0.0002154)"
    )
    # the target version decides: WarmupCosineLR before 0.19.3 rises again after total_num_steps
    old = write(1e-3, simple(1e-3, 10, "cosine", 100, 1e-5).to_json(), 200, version="0.17.1")
    new = write(1e-3, simple(1e-3, 10, "cosine", 100, 1e-5).to_json(), 200)
    assert new.value["scheduler_type"] == "WarmupCosineLR" and new.value != old.value  # type: ignore[union-attr]
    # constant without warmup: no scheduler at all (DeepSpeed keeps the optimizer's lr)
    assert write(1e-3, [{"kind": "constant", "length": 1, "start": 1e-3, "end": 1e-3}], None) == {
        "optimizer_params_lr": 1e-3
    }


def test_a_decay_without_warmup_is_a_torch_scheduler() -> None:
    """DeepSpeed's own schedulers warm up for 2 steps at least; torch's decay from step 0."""
    cosine = translate(
        {
            "optimizer": {
                "optimizer_type": "AdamW",
                "learning_rate": {
                    "scheduler": "CosineDecay",
                    "initial_learning_rate": 3e-4,
                    "end_learning_rate": 3e-5,
                    "total_iters": 5000,
                },
            }
        },
        "cerebras",
        "deepspeed",
    ).config
    assert cosine["scheduler"] == {"type": "CosineAnnealingLR", "params": {"T_max": 5000, "eta_min": 3e-5}}
    linear = translate(
        {
            "optimizer": {
                "optimizer_type": "AdamW",
                "learning_rate": {
                    "scheduler": "Linear",
                    "initial_learning_rate": 1e-3,
                    "end_learning_rate": 1e-4,
                    "total_iters": 900,
                },
            }
        },
        "cerebras",
        "deepspeed",
    ).config
    assert linear["scheduler"] == {
        "type": "LinearLR",
        "params": {"start_factor": 1.0, "end_factor": pytest.approx(0.1), "total_iters": 900},
    }
    back = translate(linear, "deepspeed", "cerebras").config["optimizer"]["learning_rate"]
    assert back[0] == {
        "scheduler": "Linear",
        "initial_learning_rate": 1e-3,
        "end_learning_rate": pytest.approx(1e-4),
        "total_iters": 900,
    }
    warmup = translate(
        {
            "optimizer": {"type": "AdamW", "params": {"lr": 1e-3}},
            "scheduler": {"type": "LinearLR", "params": {"start_factor": 0.01, "total_iters": 100}},
        },
        "deepspeed",
        "cerebras",
    )
    assert warmup.ir.get("schedule.warmup_steps") == 100 and warmup.ir.get("schedule.decay_steps") is None
    assert warmup.config["optimizer"]["learning_rate"] == [
        {
            "scheduler": "Linear",
            "initial_learning_rate": pytest.approx(1e-5),
            "end_learning_rate": 1e-3,
            "total_iters": 100,
        },
        {"scheduler": "Constant", "learning_rate": 1e-3},
    ]


def test_clipping_is_always_stated() -> None:
    for version in ("current", "0.17.1"):  # NeoX's default 1.0 is written whatever DeepSpeed's default is
        # (with a batch: a model alone gives DeepSpeed nothing, and is refused: issue 28)
        result = translate(
            {"num_layers": 2, "train_micro_batch_size_per_gpu": 4}, "neox", "deepspeed", target_version=version
        )
        assert result.config["gradient_clipping"] == 1.0
    # Cerebras without max_gradient_norm does not clip: DeepSpeed 0.19.3+ would clip at 1.0 unless told
    cs = translate({"optimizer": {"optimizer_type": "AdamW", "learning_rate": 1e-4}}, "cerebras", "deepspeed")
    assert cs.config["gradient_clipping"] == 0.0
    assert "scheduler" not in cs.config  # a constant lr: no scheduler
    assert cs.report.by_source()["optimizer.learning_rate"].status in (Status.EXACT, Status.CONVERTED)


def test_deepspeed_round_trip_through_cerebras_keeps_what_cerebras_holds(tmp_path: Path) -> None:
    there = translate(DS / "warmup-decay-lr-zero1.json", "deepspeed", "cerebras", world_size=16)
    path = tmp_path / "cs.yaml"
    path.write_text(there.dump())
    back = translate(path, "cerebras", "deepspeed").config
    assert back["train_batch_size"] == 512
    assert back["optimizer"] == {
        "type": "AdamW",
        "params": {"lr": 0.0006, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.1},
    }
    assert back["scheduler"]["type"] == "WarmupDecayLR"
    assert back["scheduler"]["params"]["total_num_steps"] == 10000
    assert (
        back["scheduler"]["params"]["warmup_min_lr"] == 6e-5 and back["scheduler"]["params"]["warmup_num_steps"] == 1000
    )
    assert back["gradient_clipping"] == 0.5
    assert back["fp16"] == {
        "enabled": True,
        "loss_scale": 0,
        "initial_scale_power": 12,
        "loss_scale_window": 500,
        "min_loss_scale": 1.0,
    }


# ---- companions: the NeoX half and the DeepSpeed half of one run ----------------------------


def test_neox_with_deepspeed_companion(runner: Any, tmp_path: Path) -> None:
    ds_file, model = DS / "warmup-decay-lr-zero1.json", DS / "neox-model.yml"
    result = translate(
        model,
        "neox",
        "cerebras",
        world_size=16,
        with_files=[(str(ds_file), "deepspeed")],
        set_values={"model.vocab_size": 50304},
    )
    # model_parallel_size 2 from the NeoX file: data-parallel 8, so 4 x 8 x 8 (not 4 x 8 x 16)
    assert result.config["train_input"]["batch_size"] == 256
    assert result.config["model"]["hidden_size"] == 2048
    assert result.config["optimizer"]["max_gradient_norm"] == 0.5
    assert_accounted(result, model, ds_file, prefix={ds_file: f"{ds_file}:"})
    out = tmp_path / "out.yaml"
    cli = run_cli(
        runner, "neox2cerebras", str(model), "--with", str(ds_file), "--world-size", "16", "-o", str(out), "-q"
    )
    assert cli.exit_code == 0, cli.stderr
    assert cerebras.read([str(out)]).tree["train_input"]["batch_size"] == 256


def test_deepspeed_with_neox_companion(runner: Any, tmp_path: Path) -> None:
    ds_file, model = DS / "warmup-decay-lr-zero1.json", DS / "neox-model.yml"
    alone = translate(ds_file, "deepspeed", "cerebras", world_size=16)
    assert alone.config["train_input"]["batch_size"] == 512  # plain DeepSpeed: data-parallel = 16 GPUs
    out = tmp_path / "out.yaml"
    cli = run_cli(
        runner, "deepspeed2cerebras", str(ds_file), "--with", str(model), "--world-size", "16", "-o", str(out), "-q"
    )
    assert cli.exit_code == 0, cli.stderr
    tree = cerebras.read([str(out)]).tree
    assert tree["train_input"]["batch_size"] == 256 and tree["model"]["num_hidden_layers"] == 24
    assert tree["runconfig"]["max_steps"] == 10000


def test_companions_that_disagree_are_an_error(tmp_path: Path) -> None:
    other = tmp_path / "ds.json"
    other.write_text(json.dumps({"train_micro_batch_size_per_gpu": 8, "gradient_accumulation_steps": 1}))
    neox = tmp_path / "model.yml"
    neox.write_text("num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\ntrain_micro_batch_size_per_gpu: 4\n")
    with pytest.raises(InputError, match="batch.micro"):
        translate(neox, "neox", "cerebras", with_files=[(str(other), "deepspeed")])


# ---- invalid input: one clear error ------------------------------------------------------------


@pytest.mark.parametrize(
    "config, message",
    [
        ({"fp16": {"enabled": True}, "bf16": {"enabled": True}}, "both enabled"),
        ({"scheduler": {"type": "WarmupDecayLR", "params": {"warmup_num_steps": 10}}}, "needs total_num_steps"),
        ({"scheduler": {"type": "WarmupLR", "params": {"total_num_steps": 10}}}, "takes no total_num_steps"),
        ({"scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": 0}}}, "warmup_num_steps must be at least 1"),
        ({"train_batch_size": 10, "train_micro_batch_size_per_gpu": 3}, "batch assertion"),
    ],
)
def test_invalid_configs_fail_with_one_clear_error(config: dict, message: str, tmp_path: Path, runner: Any) -> None:
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(config, indent=1))
    cli = run_cli(runner, "deepspeed2cerebras", str(path), "--world-size", "2", "-q")
    assert cli.exit_code == 2
    assert len(cli.stderr.strip().splitlines()) == 1 and message in cli.stderr and str(path) in cli.stderr


@pytest.mark.parametrize(
    "config, key, value",
    [
        ({"scheduler": {"type": "Cosine"}}, "scheduler.type", "Cosine"),
        ({"optimizer": {"type": "Adma"}}, "optimizer.type", "Adma"),
        ({"zero_optimization": {"stage": 4}}, "zero_optimization.stage", 4),
    ],
)
def test_names_no_release_has_are_unknown_not_refused(config: dict, key: str, value: Any, tmp_path: Path) -> None:
    """A scheduler, optimizer or ZeRO stage no DeepSpeed release names may be a fork's (DeeperSpeed's):
    the engine's one rule names it unknown, the rest translates."""
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"train_batch_size": 8, **config}, indent=1))
    done = translate(str(path), "deepspeed", "cerebras", world_size=2)
    entry = next(e for e in done.report.entries if e.source_key == key)
    assert entry.status is Status.UNKNOWN and entry.values["value"] == value


def test_duplicate_keys_and_templates_name_the_line(tmp_path: Path) -> None:
    dup = tmp_path / "dup.json"
    dup.write_text('{\n  "train_batch_size": 8,\n  "train_batch_size": 16\n}\n')
    with pytest.raises(InputError, match="duplicate key") as info:
        deepspeed.read([str(dup)])
    assert info.value.line == 2
    comment = tmp_path / "c.json"
    comment.write_text('{\n  "train_batch_size": 8,\n  // DeepSpeed reads hjson\n  "gradient_clipping": 1.0\n}\n')
    with pytest.raises(InputError, match="hjson") as info:
        deepspeed.read([str(comment)])
    assert info.value.line == 3
    shell = tmp_path / "s.json"
    shell.write_text('{"optimizer": {"type": "Adam", "params": {"lr": ${LR}}}}')
    with pytest.raises(InputError, match=r"placeholders \(\$\{LR\}\)"):
        deepspeed.read([str(shell)])
    template = tmp_path / "t.json"
    template.write_text('{\n  "steps_per_print": 10,\n  "train_batch_size": GB_SIZE\n}\n')
    with pytest.raises(InputError, match=r"unquoted placeholders \(GB_SIZE\)") as info:
        deepspeed.read([str(template)])
    assert info.value.line == 3


def test_an_autotuning_search_space_is_no_zero_stage() -> None:
    config = {
        "train_micro_batch_size_per_gpu": 1,
        "zero_optimization": {"stage": [0, 1, 2, 3]},
        "autotuning": {"enabled": True},
    }
    result = translate(config, "deepspeed", "cerebras", world_size=8)  # (a batch Model Zoo holds: not empty)
    assert result.ir.get("parallel.zero_stage") is None
    entry = result.report.by_source()["zero_optimization.stage"]
    assert entry.status is Status.DROPPED and "autotuner" in entry.detail
    assert translate(config, "deepspeed", "deepspeed").config == config


def test_other_optimizer_and_precision_spellings() -> None:
    rule = load_table("deepspeed").rules_for_field("optim.type")[0]  # (a cases rule: tests/test_table_cases.py)
    assert rule.formula is not None

    def read(name: str, adam_w_mode: bool | None, weight_decay: float | None = None) -> Any:
        assert rule.formula is not None
        return rule.formula.read(
            optimizer_type=name, optimizer_params_adam_w_mode=adam_w_mode, optimizer_params_weight_decay=weight_decay
        )

    assert read("OneBitAdam", None) == "onebitadam" and read("ZeroOneAdam", None) == "zerooneadam"
    assert read("adam", False, 0.01) == "adam" and read("AdamW", False) == "adamw"  # AdamW ignores adam_w_mode
    assert read("adam", False) == "adamw" and read("adam", False, 0.0) == "adamw"  # no weight decay: one algorithm
    assert read("SGD", None) == "sgd"
    assert type(read("RMSprop", None)).__name__ == "Extension"  # a torch optimizer with no canonical name
    assert isinstance(read("MuAdam", None), Approx) and read("MuAdam", None).value == "adam"
    amp = translate({"amp": {"enabled": True, "opt_level": "O1"}}, "deepspeed", "cerebras")
    assert amp.ir.get("precision.dtype") == "fp16"
    assert amp.report.by_source()["amp.enabled"].status is Status.LOSSY
    assert "0.19.8" in amp.report.by_source()["amp.opt_level"].detail  # DeepSpeed removed apex AMP
    deeper = translate({"fp16": {"enabled": True, "type": "bfloat16"}}, "deepspeed", "cerebras")
    assert deeper.ir.get("precision.dtype") == "bf16"  # DeeperSpeed's bf16 spelling (Pythia)


@pytest.mark.parametrize(
    "tb, mb, ga, dp, expected",
    [
        (512, 32, None, 8, (512, 32, 2)),  # TB + MB -> GA = TB // MB // dp
        (512, None, 4, 8, (512, 16, 4)),  # TB + GA -> MB = TB // dp // GA
        (None, 4, 8, 16, (512, 4, 8)),  # MB + GA -> TB
        (256, None, None, 8, (256, 32, 1)),  # TB only -> GA 1
        (None, 4, None, 8, (32, 4, 1)),  # MB only -> GA 1
        (512, 32, None, None, (512, 32, None)),  # no world size: GA unknown
        (None, None, 4, 8, (None, None, 4)),  # DeepSpeed alone refuses this; a NeoX file may hold the batch
    ],
)
def test_deepspeed_batch_resolution(tb, mb, ga, dp, expected) -> None:  # type: ignore[no-untyped-def]
    assert deepspeed_batch(tb, mb, ga, dp) == expected


def test_deepspeed_batch_floor_division_trap() -> None:
    with pytest.raises(ValueError, match="resolves to 0"):
        deepspeed_batch(32, 32, None, 8)  # 32 // 32 // 8 = 0: DeepSpeed asserts GA > 0
    with pytest.raises(ValueError, match="batch assertion"):
        deepspeed_batch(100, 8, None, 4)  # GA 3, but 8 x 3 x 4 = 96


@pytest.mark.parametrize("tb, mb, ga", [(30, 4, None), (32, 4, 3), (32, None, 5)])
def test_deepspeed_batch_no_world_size_runs_is_refused_without_one(tb, mb, ga) -> None:  # type: ignore[no-untyped-def]
    """Derive, then assert, as _configure_train_batch_size does: 30 = 4 x GA x dp has no whole solution,
    so no --world-size is needed to know DeepSpeed refuses the file."""
    with pytest.raises(ValueError, match="fails at every world size"):
        deepspeed_batch(tb, mb, ga, None)


@pytest.mark.parametrize("tb, mb, ga, dp", [(32, 4, None, 8), (36, 4, 3, 3), (32, None, 4, 8)])
def test_deepspeed_batch_a_file_some_world_size_runs_is_read(tb, mb, ga, dp) -> None:  # type: ignore[no-untyped-def]
    """Accepted after deriving at some world size: never refused without one, and resolved with it."""
    assert deepspeed_batch(tb, mb, ga, None)[0] == tb
    resolved = deepspeed_batch(tb, mb, ga, dp)
    assert resolved[0] == resolved[1] * resolved[2] * dp


def test_deepspeed_file_no_world_size_runs_is_refused_in_a_translation(tmp_path: Path) -> None:
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"train_batch_size": 30, "train_micro_batch_size_per_gpu": 4}))
    with pytest.raises(InputError, match="train_batch_size 30 is not a positive multiple of micro batch 4"):
        translate(str(path), "deepspeed", "neox")


def _write(document: dict) -> str:
    import tempfile

    handle = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    handle.write(deepspeed_writer.serialise(document))
    handle.close()
    return handle.name
