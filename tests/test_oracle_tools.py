"""The oracle tier's own machinery, in the default run (no framework needed): the check programs'
verdict protocol, the runner's skip reasons, and how the matrix sorts cases and compares them with
the work queue (tests/oracle_known_failures.yaml)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import oracle
import pytest
import yaml
from conftest import ROOT

from neoconv import translate
from neoconv.core.report import Entry, Report, Status

CHECKS = ROOT / "tests" / "oracle_checks"


def load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("oracle_matrix", ROOT / "tools" / "oracle_matrix.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


tool = load_tool()


# ---- the check programs' protocol ------------------------------------------------------------------


def test_verdict_lines_keep_framework_output_apart(tmp_path: Path) -> None:
    """stdout carries exactly one JSON line per job, whatever the framework prints; a framework
    exception is "rejected" with its message, a fault of the check program is "error"."""
    program = tmp_path / "check_fake.py"
    program.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(CHECKS)!r})\n"
        "from _protocol import framework, serve\n"
        "print('framework banner')\n"
        "def check(job):\n"
        "    print('chatter while loading', job['id'])\n"
        "    if job['id'] == 'bug':\n"
        "        return {}['missing']\n"
        "    with framework():\n"
        "        if job['id'] == 'bad':\n"
        "            raise AssertionError('\\x1b[91mTB 8 != 1 * 2 * 8\\x1b[0m\\nsecond line')\n"
        "    return {'world': job['world']}\n"
        "sys.exit(serve(check))\n"
    )
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text("".join(json.dumps({"id": i, "files": [], "world": 8}) + "\n" for i in ("good", "bad", "bug")))
    run = subprocess.run([sys.executable, str(program), "--jobs", str(jobs)], capture_output=True, text=True)
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(v["id"], v["verdict"]) for v in lines] == [("good", "accepted"), ("bad", "rejected"), ("bug", "error")]
    assert lines[0]["values"] == {"world": 8}
    assert lines[1]["error"] == "AssertionError: TB 8 != 1 * 2 * 8 | second line"  # colours gone, one line
    assert lines[2]["error"].startswith("KeyError")
    assert "framework banner" in run.stderr and "chatter while loading good" in run.stderr
    assert run.returncode == 1


@pytest.mark.parametrize("script", sorted(p.name for p in CHECKS.glob("check_*.py")))
def test_check_programs_use_nothing_of_neoconv(script: str) -> None:
    """They run in the frameworks' environments, where neoconv is not installed."""
    text = (CHECKS / script).read_text()
    imports = re.findall(r"^\s*(?:from|import) ([\w.]+)", text, re.M)
    assert not [name for name in imports if name.split(".")[0] in ("neoconv", "translator", "oracle", "conftest")], (
        imports
    )
    assert "framework()" in text  # every verdict comes from inside the framework's own calls


def test_runner_says_why_an_oracle_cannot_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("NEOCONV_ORACLE_NEOX", raising=False)
    assert "NEOCONV_ORACLE_NEOX is not set" in (oracle.unavailable("neox") or "")
    monkeypatch.setenv("NEOCONV_ORACLE_NEOX", sys.executable)
    monkeypatch.setenv("NEOX_SRC", str(tmp_path))
    assert "has no megatron/neox_arguments" in (oracle.unavailable("neox") or "")
    (tmp_path / "megatron" / "neox_arguments").mkdir(parents=True)
    assert oracle.unavailable("neox") is None


def test_runner_reports_a_dead_process_as_error_not_as_a_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEOCONV_ORACLE_HF", sys.executable)
    monkeypatch.setattr(oracle, "CHECKS", ROOT / "does-not-exist")
    got = oracle.run("hf", [{"id": "x", "files": []}])
    assert got["x"].verdict == "error" and "no verdict" in (got["x"].error or "")


# ---- the matrix --------------------------------------------------------------------------------------


def source(status: str, error: str | None = None, **values: Any) -> Any:
    src = tool.Source("neox/a.yml", Path("a.yml"), "neox", None, "neox", "neox")
    if status == "passes":
        src.verdict = oracle.Verdict("source:a", "accepted", None, values)
    else:
        src.verdict = oracle.Verdict("source:a", "rejected", error or "AssertionError: no batch")
        src.release = "Release_2.0.2" if status == "older" else None
    return src


def result(*entries: Entry) -> Any:
    return SimpleNamespace(report=Report(entries=list(entries)))


def classified(verdict: oracle.Verdict, src: Any, res: Any, supplied: tuple[str, ...] = ()) -> Any:
    case = tool.Case("neox/a.yml -> veomni-nested", "neox/a.yml", "veomni-nested", "pending", supplied=list(supplied))
    tool.classify(case, verdict, src, res)
    return case


def test_rejections_are_sorted_by_what_caused_them() -> None:
    msg = "ValueError: `global_batch_size` should be a multiple of 8."
    rejected = oracle.Verdict("x", "rejected", msg)
    assert classified(rejected, source("fails"), result()).category == "source-fails"
    assert classified(rejected, source("older", msg.replace("8", "16")), result()).category == "drift"
    assert (
        classified(rejected, source("older", "KeyError: 'name'"), result()).category == "neoconv"
    )  # not the same failure
    assert classified(rejected, source("passes"), result()).category == "neoconv"
    missing = Entry(None, "train.global_batch_size", Status.MISSING, "give --set batch.global=N")
    assert classified(rejected, source("passes"), result(missing)).category == "reported"
    # supplied and still refused: the report named the wrong key
    assert classified(rejected, source("passes"), result(missing), ("train.global_batch_size",)).category == "neoconv"
    note = Entry("a", "train.global_batch_size", Status.LOSSY, "dyn_bsz counts tokens")
    warns = Entry("a", "train.global_batch_size", Status.LOSSY, "VeOmni needs a multiple of micro x dp")
    assert classified(rejected, source("passes"), result(note)).category == "neoconv"
    assert classified(rejected, source("passes"), result(warns)).category == "reported"


def test_accepted_outputs_are_checked_for_the_same_run() -> None:
    src = source("passes", lr=6e-4, train_batch_size=256)
    ok = classified(oracle.Verdict("x", "accepted", None, {"lr_max": 6e-4, "global_batch_size": 256}), src, result())
    assert ok.outcome == "accepted" and ok.category is None and ok.values["batch_compared"] == [256, 256]
    zero = classified(oracle.Verdict("x", "accepted", None, {"lr_max": 0.0, "global_batch_size": 256}), src, result())
    assert zero.category == "lr0"
    other = classified(oracle.Verdict("x", "accepted", None, {"lr_max": 6e-4, "global_batch_size": 512}), src, result())
    assert other.category == "batch" and "512" in other.message
    # a batch the matrix supplied itself says nothing about the translation
    given = classified(
        oracle.Verdict("x", "accepted", None, {"global_batch_size": 512}), src, result(), ("train.global_batch_size",)
    )
    assert given.category is None
    both_zero = classified(oracle.Verdict("x", "accepted", None, {"lr_max": 0.0}), source("passes", lr=0.0), result())
    assert both_zero.category is None
    relative = classified(oracle.Verdict("x", "accepted", None, {"lr_max": 0.0, "lr_relative": True}), src, result())
    assert relative.category is None  # no optimizer lr in the DeepSpeed file: the script's is unknown


def test_the_work_queue_comparison_fails_both_ways() -> None:
    known = {"a -> neox": "neoconv: X", "b -> neox": "lr0: peak 0", "c -> neox": "neoconv: Y"}
    now = {"a -> neox": "neoconv: X, other wording", "b -> neox": "neoconv: Z", "d -> neox": "batch: 1 != 2"}
    new, changed = tool.compare_known(known, now)
    assert new == {"b -> neox": "neoconv: Z", "d -> neox": "batch: 1 != 2"}
    assert changed == ["b -> neox", "c -> neox"]
    assert tool.compare_known(now, now) == ({}, [])


def test_the_work_queue_is_a_list_of_goal_misses() -> None:
    known = yaml.safe_load(tool.KNOWN.read_text())
    # empty once every case meets the goal: the file stays, so the oracle tier fails on any new miss
    assert isinstance(known, dict), known
    kinds = {why.split(":", 1)[0] for why in known.values()}
    assert kinds <= tool.GOAL_MISSES, kinds
    targets = {case.split(" -> ")[1] for case in known}
    assert targets <= set(tool.TARGETS) | {"hf"}


def test_stand_ins_are_given_only_for_what_a_report_lists_as_missing(tmp_path: Path) -> None:
    standins = tool.Standins(tmp_path)
    src = tool.Source(
        "neox/pythia.yml", ROOT / "fixtures" / "inputs" / "neox" / "pythia-160m.yml", "neox", None, "neox", "neox"
    )
    out = tool.build_output(src, "veomni-nested", 8, tmp_path / "case", standins)
    missing = set(tool.missing_keys(translate(src.path, "neox", "veomni", world_size=8)))
    assert set(out.case.supplied) | set(out.case.unsupplied) == missing
    assert out.job["set"]["data.train_path"] == str(standins.data)  # VeOmni's --data.train_path
    assert (
        json.loads((tmp_path / "case" / "config.json").read_text())["vocab_size"] == 50304
    )  # the side file's missing key
    assert "config.json:vocab_size" in out.case.supplied and "model.vocab_size" not in out.job["set"]


def test_legacy_model_names_come_from_the_model_zoo_folder() -> None:
    assert tool.cerebras_model_name("cerebras-legacy/gpt3/Cerebras_GPT/111m.yaml") == "gpt3"
    assert tool.cerebras_model_name("cerebras-legacy/bert/fine_tuning/classifier/x.yaml") == "bert/classifier"


def test_trainer_layout_missing_keys_get_the_legacy_stand_ins(tmp_path: Path) -> None:
    assert tool.legacy_key("trainer.init.model.name") == "model.name"
    assert tool.legacy_key("trainer.fit.train_dataloader.data_processor") == "train_input.data_processor"
    assert tool.legacy_key("trainer.init.loop.max_steps") == "runconfig.max_steps"
    assert tool.legacy_key("trainer.init.optimizer.optimizer_type") == "optimizer.optimizer_type"
    standins = tool.Standins(tmp_path)
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4}))
    src = tool.Source("deepspeed/ds.json", path, "deepspeed", None, "deepspeed", "deepspeed")
    out = tool.build_output(src, "cerebras-trainer", 8, tmp_path / "trainer", standins)
    assert not out.case.unsupplied
    assert out.job["set_legacy"]["model.name"] == "gpt2"  # Model Zoo's converter places it at trainer.init.model.name
    assert out.job["set_legacy"]["train_input.data_processor"] == "GptHDF5MapDataProcessor"
    assert out.job["set_legacy"]["optimizer.optimizer_type"] == "AdamW"
    legacy = tool.build_output(src, "cerebras-legacy", 8, tmp_path / "legacy", standins)
    assert legacy.job["set"]["model.name"] == "gpt2" and "model_name" not in legacy.job  # no name from outside the file


def test_a_global_batch_below_the_world_is_checked_at_the_world_the_report_names(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "train_input": {"batch_size": 4, "data_processor": "GptHDF5MapDataProcessor", "data_dir": "./d"},
                "model": {"hidden_size": 64, "num_hidden_layers": 2, "num_heads": 4},
                "optimizer": {"optimizer_type": "AdamW", "learning_rate": 3e-4},
            }
        )
    )
    src = tool.Source("cerebras-legacy/x/params.yaml", path, "cerebras", "legacy", "cerebras-legacy", "cerebras")
    out = tool.build_output(src, "deepspeed", 8, tmp_path / "case", tool.Standins(tmp_path))
    assert (
        out.job["world"] == 4 and out.case.values["world"] == 4
    )  # gcd(4, 8): "--world-size N of a run it splits over"
    assert json.loads((tmp_path / "case" / "out.json").read_text())["train_batch_size"] == 4
    assert tool.fitting_world(translate(path, "cerebras", "deepspeed", world_size=4), 4) is None


def test_a_missing_seq_length_gets_the_runs_own_positions(tmp_path: Path) -> None:
    # NeoX refuses max_position_embeddings < seq_length: the stand-in follows the report's advice
    path = tmp_path / "params.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "train_input": {"batch_size": 8, "data_processor": "GptHDF5MapDataProcessor", "data_dir": "./d"},
                "model": {"hidden_size": 64, "num_hidden_layers": 2, "num_heads": 4, "max_position_embeddings": 1024},
                "optimizer": {"optimizer_type": "AdamW", "learning_rate": 3e-4},
            }
        )
    )
    src = tool.Source("cerebras-legacy/x/params.yaml", path, "cerebras", "legacy", "cerebras-legacy", "cerebras")
    out = tool.build_output(src, "neox", 8, tmp_path / "case", tool.Standins(tmp_path))
    assert "seq_length" in out.case.supplied and out.job["set"]["seq_length"] == 1024
