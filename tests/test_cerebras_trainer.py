"""Cerebras trainer layout (Model Zoo 2.3+): reading, writing, and the legacy -> trainer migration.

`cerebras2cerebras --layout trainer` must produce what Cerebras' own
convert_legacy_params_to_trainer_params produces (tests/test_oracle.py runs it on every legacy
corpus file), plus the `trainer.init.model.name` Model Zoo 2.4+ requires.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cerebras_corpus import (
    LEGACY,
    TRAINER,
    assert_report_covers,
    numbers,
    rel,
    translate_or_known,
)
from conftest import CORPUS, corpus_dir, same_canonical

from neoconv import InputError, Status, translate
from neoconv.formats.cerebras.reader import READER as cerebras
from neoconv.formats.cerebras.respell import respell
from neoconv.io.documents import flatten
from neoconv.knowledge.mapping import load_table
from neoconv.services.validate import schema_errors

# what mappings/cerebras-migrations.yaml has a migration write: the legacy key, by the reason given for it
_DERIVED = {
    item["by"]: item["key"]
    for item in yaml.safe_load(
        (Path(__file__).resolve().parent.parent / "mappings" / "cerebras-migrations.yaml").read_text()
    )["derived"]
}
_DERIVED_BY = tuple(_DERIVED)


def _migrated(report: Any) -> dict[str, Any]:
    """The values a migration wrote that the source's release derived, by their legacy keys."""
    return {
        _DERIVED[e.values["why"]]: next(iter(e.values["written"].values()))
        for e in report.entries
        if e.kind == "added_for_target" and e.values.get("why") in _DERIVED
    }


# ---- legacy -> trainer ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("path", LEGACY, ids=rel)
def test_every_legacy_file_migrates_to_the_trainer_layout(path: Path) -> None:
    result = translate_or_known(path, "cerebras", layout="trainer")
    if result is None:
        return
    document = yaml.safe_load(result.dump())
    assert schema_errors(document, "cerebras-trainer") == []
    assert set(document) == {"trainer"}
    assert isinstance(document["trainer"]["init"]["model"]["name"], str)
    assert_report_covers(result, path)
    # every leaf is carried, or dropped because the trainer layout (and Cerebras' converter) has no place for it;
    # a family's own precision default (not in the file) is written for the trainer, whose default differs
    # and the model name Model Zoo 2.4+ builds the model from, which no legacy file gives, is said as added
    for entry in result.report.entries:
        if entry.status is Status.DEFAULTED:
            if entry.kind == "release_default":  # a default the releases the file fits disagree on, named
                continue
            # or a value the source's release derived that the trainer's release wants stated (a migration)
            migrated = any(why in entry.detail for why in _DERIVED_BY)
            assert entry.kind == "added_for_target", entry
            assert entry.target_key == "trainer.init.model.name" or migrated, entry
            continue
        if entry.kind == "refused_by_release":  # carried, though the trainer of the release refuses it: named
            assert entry.status is Status.LOSSY and result.report.target["valid"] is False, entry
            continue
        assert entry.status in (Status.EXACT, Status.CONVERTED, Status.UNKNOWN, Status.DROPPED), entry
        if entry.status is Status.DROPPED:  # (or a model key Model Zoo 2.10 no longer reads, which it refuses)
            assert (
                "convert_legacy_params_to_trainer_params" in entry.detail
                or "ignores" in entry.detail
                or "Model Zoo 2.10.0 does not read model." in entry.detail
                or "reads the alias spelling for this field" in entry.detail  # (mappings/cerebras-migrations.yaml)
            ), entry


@pytest.mark.slow
@pytest.mark.parametrize("path", LEGACY, ids=rel)
def test_legacy_trainer_legacy_is_the_identity(path: Path, tmp_path: Path) -> None:
    there = translate_or_known(path, "cerebras", layout="trainer")
    if there is None:
        return
    middle = tmp_path / "trainer.yaml"
    middle.write_text(there.dump())
    back = translate(middle, "cerebras", "cerebras", layout="legacy")
    dropped = {e.source_key for e in there.report.entries if e.status is Status.DROPPED}
    original = {k: v for k, v in flatten(numbers(yaml.safe_load(path.read_text()))).items() if k not in dropped}
    if "optimizer.learning_rate" in original:  # written in the spellings Model Zoo 2.2+ reads (issue #28)
        original["optimizer.learning_rate"] = respell(original["optimizer.learning_rate"], "2.10.0").value
    # a model family whose mixed precision defaults to float16 (not the GPT families' bfloat16) gets it said
    # for the trainer layout, whose default is bfloat16 from 2.4
    added = {e.source_key: "float16" for e in there.report.entries if "code defaults it to" in e.detail}
    # the trainer file's model name comes back as the legacy model.name Model Zoo 2.4+ reads
    name = {"model.name": yaml.safe_load(middle.read_text())["trainer"]["init"]["model"]["name"]}
    assert flatten(yaml.safe_load(back.dump())) == {
        **original,
        **name,
        **_migrated(there.report),  # values the source's release derived, stated for 2.4+'s trainer
        **{k: v for k, v in added.items() if k == "model.fp16_type"},
    }


def test_gptj_6b_migration_values() -> None:
    corpus_dir("cerebras-legacy")
    result = translate(
        CORPUS / "cerebras-legacy" / "gptj" / "params_gptj_6B.yaml", "cerebras", "cerebras", layout="trainer"
    )
    init = result.config["trainer"]["init"]
    assert init["model"]["name"] == "gptj"  # inferred: legacy GPT-J configs carry residual_dropout_rate
    assert init["optimizer"] == {"adamw": {"eps": 1e-6, "weight_decay": 0.1, "correct_bias": True}}
    assert init["schedulers"] == [
        {
            "SequentialLR": {
                "schedulers": [
                    {"LinearLR": {"total_iters": 12800, "initial_learning_rate": 0.0, "end_learning_rate": 5.809e-5}},
                    {
                        "CosineDecayLR": {
                            "initial_learning_rate": 5.809e-5,
                            "total_iters": 1280000,
                            "end_learning_rate": 5.809e-6,
                        }
                    },
                    {"ConstantLR": {"learning_rate": 5.809e-6}},
                ]
            }
        }
    ]
    assert init["precision"] == {"enabled": True, "max_gradient_norm": 1.0}
    assert init["loop"] == {"max_steps": 1493333}
    assert init["checkpoint"] == {"steps": 10000} and init["logging"] == {"log_steps": 100} and init["seed"] == 1
    fit = result.config["trainer"]["fit"]
    assert fit["train_dataloader"]["batch_size"] == 120 and len(fit["train_dataloader"]["data_dir"]) == 10
    assert result.config["trainer"]["validate"]["val_dataloader"] == fit["val_dataloader"]
    by = result.report.by_source()
    assert by["optimizer.max_gradient_norm"].target_key == "trainer.init.precision.max_gradient_norm"
    assert by["optimizer.learning_rate"].target_key == "trainer.init.schedulers"
    assert by["runconfig.use_cs_grad_accum"].status is Status.DROPPED
    assert "model.name 'gptj' is inferred" in result.dump()


def test_scalar_lr_becomes_a_constant_scheduler_and_flags_become_callbacks() -> None:
    legacy = {
        "train_input": {"batch_size": 8, "micro_batch_size": 2},
        "model": {"hidden_size": 64, "num_heads": 4, "mixed_precision": True, "fp16_type": "bfloat16"},
        "optimizer": {"optimizer_type": "SGD", "learning_rate": 0.01, "log_summaries": True, "grad_accum_steps": 4},
        "runconfig": {"max_steps": 10, "max_checkpoints": 3, "num_csx": 2, "mode": "train", "checkpoint_path": "c.mdl"},
    }
    trainer = translate(legacy, "cerebras", "cerebras", layout="trainer").config["trainer"]
    init = trainer["init"]
    assert init["optimizer"] == {"SGD": {"learning_rate": 0.01}}
    assert init["schedulers"] == [{"ConstantLR": {"learning_rate": 0.01}}]
    assert init["precision"] == {"enabled": True, "fp16_type": "bfloat16", "log_loss_scale": True}
    assert init["loop"] == {"max_steps": 10, "grad_accum_steps": 4}
    assert init["callbacks"] == [
        {"ScopedTrainFlags": {"csx.performance.micro_batch_size": 2}},
        {"ComputeNorm": {}},
        {"KeepNCheckpoints": {"n": 3}},
    ]
    assert init["backend"] == {"cluster_config": {"num_csx": 2}}
    assert "micro_batch_size" not in trainer["fit"]["train_dataloader"] and trainer["fit"]["ckpt_path"] == "c.mdl"
    assert "mixed_precision" not in init["model"] and "validate" not in trainer  # no eval_input: no validate


def test_tensorflow_cosine_migrates_and_no_scheduler_crashes_the_trainer_layout() -> None:
    """TF Model Zoo 1.x's `scheduler: Cosine` (tf cosine_decay held at alpha x initial) has no cstorch
    class of that name: it becomes the CosineDecayLR that runs it (it was an internal error); a fork's
    name is carried as `unknown`; what Model Zoo's converter refuses is exit 2."""
    model = {
        "hidden_size": 64,
        "num_heads": 4,
        "num_hidden_layers": 2,
        "vocab_size": 100,
        "max_position_embeddings": 32,
    }
    phases = [
        {"scheduler": "Linear", "initial_learning_rate": 0.0, "end_learning_rate": 2e-4, "steps": 10},
        {"scheduler": "Cosine", "initial_learning_rate": 2e-4, "alpha": 0.25, "decay_steps": 90},
    ]
    legacy = {
        "model": model,
        "optimizer": {"optimizer_type": "adamw", "learning_rate": phases},
        "runconfig": {"max_steps": 100},
    }
    init = translate(legacy, "cerebras", "cerebras", layout="trainer").config["trainer"]["init"]
    cosine = init["schedulers"][0]["SequentialLR"]["schedulers"][1]
    # (decay_steps respelled total_iters, the Model Zoo 2.10 spelling)
    assert cosine == {"CosineDecayLR": {"initial_learning_rate": 2e-4, "end_learning_rate": 5e-5, "total_iters": 90}}
    fork = {**legacy, "optimizer": {"optimizer_type": "adamw", "learning_rate": [{**phases[0], "scheduler": "Wobbly"}]}}
    carried = translate(fork, "cerebras", "cerebras", layout="trainer")  # a fork's scheduler: named, carried as written
    assert carried.report.by_source()["optimizer.learning_rate"].status is Status.UNKNOWN
    assert list(carried.config["trainer"]["init"]["schedulers"][0]) == ["Wobbly"]
    clash = {
        **legacy,
        "optimizer": {
            "optimizer_type": "adamw",
            "learning_rate": [
                {**phases[0], "main_scheduler": "chained"},
                {**phases[1], "main_scheduler": "sequential"},
            ],
        },
    }
    with pytest.raises(InputError, match="conflicting main_scheduler") as err:  # Model Zoo's converter raises too
        translate(clash, "cerebras", "cerebras", layout="trainer")
    assert err.value.key == "optimizer.learning_rate"


# ---- trainer -> legacy / neox / trainer -----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("path", TRAINER, ids=rel)
def test_every_trainer_file_reads_and_converts(path: Path) -> None:
    legacy = translate_or_known(path, "cerebras", layout="legacy")
    if legacy is None:
        return
    assert_report_covers(legacy, path)
    document = yaml.safe_load(legacy.dump())
    # numbers(): a YAML 1.1 float string inside a list (one source file has '6e-06' in its schedule) is kept as written
    # a value kept as the user wrote it despite the documented type is named in the report instead
    # (or carried as written in the block of a model family neoconv does not read: not checked there)
    flagged = {e.source_key.split(".")[-1] for e in legacy.report.entries if "documented type" in e.detail}
    if legacy.report.source.get("unsupported_family"):
        flagged |= {
            e.source_key.split(".")[-1]
            for e in legacy.report.entries
            if (e.source_key or "").startswith("trainer.init.model.")
        }
    errors = [e for e in schema_errors(numbers(document), "cerebras") if e.split(":")[0].split(".")[-1] not in flagged]
    assert "trainer" not in document and errors == []
    neox = translate_or_known(path, "neox")
    if neox is None:  # a model family NeoX cannot hold: refused (translate_or_known checked the reason)
        return
    assert_report_covers(neox, path)
    assert schema_errors(yaml.safe_load(neox.dump()), "neox") == []


@pytest.mark.slow
@pytest.mark.parametrize("path", TRAINER, ids=rel)
def test_trainer_to_trainer_is_the_identity(path: Path) -> None:
    result = translate_or_known(path, "cerebras", layout="trainer")
    if result is None:
        return
    # top-level YAML 1.1 float strings ('1e-05') come out as numbers (reported converted); numbers() evens out the rest
    assert numbers(json.loads(json.dumps(result.config))) == numbers(yaml.safe_load(path.read_text()))
    assert all(e.target_key is None or e.target_key.startswith("trainer.") for e in result.report.entries)


def test_llama3_trainer_file_read_values() -> None:
    corpus_dir("cerebras-trainer")
    path = CORPUS / "cerebras-trainer" / "llama" / "params_llama3p1_8b_msl_8k.yaml"
    result = translate(path, "cerebras", "neox")
    ir = result.ir.plain()
    assert ir["model.family"] == "llama" and ir["model.num_kv_heads"] == 8 and ir["model.rotary_base"] == 500000.0
    assert ir["optim.type"] == "adam" and ir["optim.grad_clip"] == 1.0 and ir["precision.dtype"] == "cbf16"
    assert ir["schedule.warmup_steps"] == 4768 and "schedule.decay_steps" not in ir  # one rising LinearLR: then held
    by = result.report.by_source()
    assert by["trainer.init.optimizer.Adam"].target_key == "optimizer.type"
    assert by["trainer.init.precision.max_gradient_norm"].target_key == "deepspeed_extra_args.gradient_clipping"
    # the validate loaders repeat fit.val_dataloader: reported once each, as repeats
    assert "repeats trainer.fit.val_dataloader.batch_size" in by["trainer.validate.val_dataloader.batch_size"].detail
    # the line of a trainer key, for errors and reports
    source = cerebras.read([str(path)])
    assert source.line_of("model.rope_theta") == path.read_text().splitlines().index("      rope_theta: 500000.0") + 1


def test_a_list_of_trainers_is_refused_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "phases.yaml"
    path.write_text("trainer:\n- init: {model: {name: gpt2}}\n- init: {model: {name: gpt2}}\n")
    with pytest.raises(InputError, match="multi-phase training.*each list item in a file of its own") as err:
        translate(path, "cerebras", "neox")
    assert err.value.file == str(path)


def test_legacy_sections_beside_trainer_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text("trainer: {init: {model: {name: gpt2}}}\nmodel: {hidden_size: 64}\n")
    with pytest.raises(InputError, match="'model' beside `trainer`"):
        translate(path, "cerebras", "neox")


RUNCONFIG_BESIDE = """\
trainer:
  init:
    model_dir: ./m
    model: {name: gpt2, vocab_size: 50257, hidden_size: 768, num_hidden_layers: 12, num_heads: 12,
            max_position_embeddings: 1024}
    loop: {max_steps: 100}
    backend: {cluster_config: {python_paths: [src]}}
runconfig:
  max_steps: 500
  python_paths: [lib]
  checkpoint_steps: 50
"""


def test_a_runconfig_beside_trainer_is_merged_over_it_as_model_zoo_runs_it(tmp_path: Path) -> None:
    """Model Zoo 2.3+ (run_utils; the CLI's inject_cli_args_to_trainer_params) converts a runconfig beside
    `trainer` to its trainer places and merges it over the trainer (merge_recursively: its value wins, lists
    are joined): a GNN fork's files carry `runconfig: {python_paths: [src]}` this way."""
    path = tmp_path / "gnn.yaml"
    path.write_text(RUNCONFIG_BESIDE)
    done = translate(path, "cerebras", "cerebras", layout="trainer")
    init = done.config["trainer"]["init"]
    assert "runconfig" not in done.config
    assert init["loop"]["max_steps"] == 500 and init["checkpoint"]["steps"] == 50
    assert init["backend"]["cluster_config"]["python_paths"] == ["src", "lib"]
    steps = next(e for e in done.report.entries if e.source_key == "runconfig.max_steps")
    assert "trainer.init.loop.max_steps's 100" in steps.detail
    neox = translate(path, "cerebras", "neox", world_size=8)
    assert neox.config["train_iters"] == 500 and neox.config["checkpoint_factor"] == 50
    assert neox.report.source["layout"] == "trainer"


# ---- neox -> cerebras trainer -----------------------------------------------------------------------


def test_neox_to_trainer_names_the_model_and_trainer_paths(pythia160m: Path) -> None:
    result = translate(
        pythia160m, "neox", "cerebras", layout="trainer", world_size=8, set_values={"model.vocab_size": 50304}
    )
    init = result.config["trainer"]["init"]
    assert init["model"]["name"] == "gpt-neox" and init["model"]["use_untied_layer_norm"] is True
    assert init["model"]["rotary_dim"] == 16
    assert set(init["optimizer"]) == {"AdamW"} and init["optimizer"]["AdamW"]["eps"] == 1e-8
    sequential = init["schedulers"][0]["SequentialLR"]["schedulers"]
    # NeoX's first step at lr / W, its warmup, its cosine that rises again past lr_decay_iters: exactly
    assert [next(iter(s)) for s in sequential] == ["ConstantLR", "LinearLR", "CosineAnnealingLR"]
    assert result.report.by_source()["lr_decay_style"].status is Status.CONVERTED
    assert init["precision"]["fp16_type"] == "float16" and init["precision"]["loss_scaling_factor"] == "dynamic"
    assert result.config["trainer"]["fit"]["train_dataloader"]["batch_size"] == 256
    assert schema_errors(yaml.safe_load(result.dump()), "cerebras-trainer") == []
    by = result.report.by_source()
    assert by["num_layers"].target_key == "trainer.init.model.num_hidden_layers"
    assert by["train_iters"].target_key == "trainer.init.loop.max_steps"


def test_cli_layout_option(runner: Any, pythia160m: Path) -> None:
    from neoconv.cli import main

    result = runner.invoke(main, ["neox2cerebras", str(pythia160m), "--layout", "trainer", "-q"])
    assert result.exit_code == 0 and yaml.safe_load(result.stdout)["trainer"]["init"]["model"]["name"] == "gpt-neox"
    result = runner.invoke(main, ["neox2cerebras", str(pythia160m), "--layout", "flat", "-q"])
    assert result.exit_code == 2 and "legacy, trainer" in result.stderr


def test_round_trip_neox_trainer_neox_keeps_what_cerebras_expresses(pythia160m: Path, tmp_path: Path) -> None:
    there = translate(
        pythia160m, "neox", "cerebras", layout="trainer", world_size=8, set_values={"model.vocab_size": 50304}
    )
    middle = tmp_path / "t.yaml"
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
    assert len(carried) > 25
    assert "schedule.phases" in carried
    for name in carried:
        a, b = start.get(name), end.get(name)
        assert same_canonical(name, a, b, start.get("train.steps")), (name, a, b)
