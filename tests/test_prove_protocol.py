"""The probe protocol, the runner, the environments and the project configuration file of `neoconv
prove`, with a stand-in probe run by this interpreter (the frameworks' probes themselves are in the
oracle tier: tests/test_prove_oracle.py)."""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from neoconv.core.errors import UsageError
from neoconv.prove.config import ProveConfig, find
from neoconv.prove.environments import Environment, parse_pairs, resolve
from neoconv.prove.probes import HERE, ProbeSpec, probes
from neoconv.prove.runner import check, run

FAKE = """\
import os, sys
sys.path.insert(0, {probes!r})
from _probe import STUBS, LrCurve, Refused, framework, main

PROBE = {{"framework": "Fake", "checkout": None, "imports": [], "install": "", "source": None}}

def load(job):
    if job.get("source") == "broken":
        raise ImportError("no module named fake_framework")
    STUBS.add("fake.world", "answers the world size")
    return {{"name": "Fake", "version": "1.0"}}

def probe(job, result):
    print("framework chatter on stdout")  # must not reach the result stream
    with open(job["files"][0]) as handle:
        text = handle.read()
    if "refuse" in text:
        with framework():
            raise ValueError("the fake framework refuses this file")
    if "gpu" in text:
        with framework():
            raise RuntimeError("Found no NVIDIA driver on your system")
    if "crash" in text:
        raise KeyError("a fault of the probe itself")
    if text == "bends":  # warmup to step 1000, constant to 60000, then a linear decay
        curve = LrCurve(100_000, job)
        for t in range(100_000):
            curve.record(t, min(t, 1000) / 1000 if t < 60_000 else 1.0 - (t - 60_000) / 40_000)
        result["lr"] = curve.result("bends")
        return
    STUBS.ran("fake.world")
    steps = int(text.split()[0])
    curve = LrCurve(steps, job)
    for t in range(steps):
        curve.record(t, min(1.0, (t + 1) / 10) * 1e-3)
    result["lr"] = curve.result("fake warmup")
    result["run"] = {{"global_batch": 8 * job["world_size"], "steps": steps}}

sys.exit(main("fake", load, probe))
"""


@pytest.fixture
def fake(tmp_path: Path) -> ProbeSpec:
    path = tmp_path / "fake_probe.py"
    path.write_text(FAKE.format(probes=str(HERE)))
    return ProbeSpec("fake", path, "Fake", None, None, (), "", None)


def env(spec: ProbeSpec, source: str | None = None, problem: str | None = None) -> Environment:
    return Environment("fake", spec, sys.executable, source, "--env", problem)


def config(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_probe_answers_each_job_in_order_with_its_own_values(fake: ProbeSpec, tmp_path: Path) -> None:
    (tmp_path / "short").write_text("20")
    (tmp_path / "bad").write_text("refuse")
    answers = run(
        env(fake),
        [{"files": [str(tmp_path / "short")], "world_size": 4}, {"files": [str(tmp_path / "bad")], "world_size": 4}],
    )
    first, second = answers
    assert first.problem is None and first.result is not None
    assert first.result["accepted"] is True and first.result["framework"] == {"name": "Fake", "version": "1.0"}
    assert first.result["run"] == {"global_batch": 32, "steps": 20}
    assert first.result["lr"]["steps"] == list(range(20)) and first.result["lr"]["values"][9] == pytest.approx(1e-3)
    # the framework's refusal is a verdict with its own message, not a failure to run
    assert second.problem is None and second.result is not None and second.result["accepted"] is False
    assert second.result["message"] == "ValueError: the fake framework refuses this file"
    # every stand-in is listed with how often it ran in the process
    assert second.result["stubs"] == [{"name": "fake.world", "why": "answers the world size", "calls": 1}]


def test_a_fault_of_the_probe_or_of_the_import_is_a_side_that_could_not_run(fake: ProbeSpec, tmp_path: Path) -> None:
    (tmp_path / "crash").write_text("crash")
    (crashed,) = run(env(fake), [{"files": [str(tmp_path / "crash")], "world_size": 8}])
    assert crashed.result is None and crashed.problem is not None
    assert crashed.problem.startswith("the Fake probe failed: KeyError")
    (tmp_path / "gpu").write_text("gpu")
    (gpu,) = run(env(fake), [{"files": [str(tmp_path / "gpu")], "world_size": 8}])
    assert gpu.result is None and gpu.problem == (
        "the Fake probe could not run it without a GPU: the framework asked for "
        "a GPU, which a probe never uses: RuntimeError: Found no NVIDIA driver on "
        "your system"
    )
    (broken,) = run(env(fake, source="broken"), [{"files": [str(tmp_path / "crash")], "world_size": 8}])
    assert broken.result is None and broken.problem is not None
    assert "could not import it" in broken.problem and "no module named fake_framework" in broken.problem


def test_an_environment_with_a_problem_is_not_started(fake: ProbeSpec) -> None:
    (answer,) = run(env(fake, problem="no interpreter for Fake"), [{"files": ["x"]}])
    assert answer.result is None and answer.problem == "no interpreter for Fake"


def test_a_probe_that_runs_too_long_is_stopped_with_the_reason(fake: ProbeSpec, tmp_path: Path) -> None:
    slow = tmp_path / "slow_probe.py"
    slow.write_text("import time\ntime.sleep(30)\n")
    (answer,) = run(env(replace(fake, path=slow)), [{"files": ["x"]}], timeout=1)
    assert answer.result is None and answer.problem == "the Fake probe did not finish in 1 s (--timeout)"


def test_check_loads_the_framework_only(fake: ProbeSpec) -> None:
    assert check(env(fake)) == ({"name": "Fake", "version": "1.0"}, None)
    framework, problem = check(env(fake, source="broken"))
    assert framework is None and problem is not None and "no module named fake_framework" in problem


def test_the_lr_curve_keeps_every_step_of_a_short_run_and_the_bends_of_a_long_one(
    fake: ProbeSpec, tmp_path: Path
) -> None:
    (tmp_path / "long").write_text("bends")
    (answer,) = run(env(fake), [{"files": [str(tmp_path / "long")], "world_size": 8, "lr_at": [50_000]}])
    assert answer.result is not None
    got = answer.result["lr"]
    assert not got["every_step"] and got["complete"] and got["stepped"] == 100_000
    kept = set(got["steps"])
    assert {999, 1000, 1001, 59_999, 60_000, 60_001} <= kept  # the bends, with their neighbours
    assert {49_999, 50_000, 50_001} <= kept  # a step the job asked for
    assert 0 in kept and 99_999 in kept and len(kept) < 2_200  # a grid, not every step
    values = dict(zip(got["steps"], got["values"]))
    assert values[1000] == 1.0 and values[80_000] == pytest.approx(0.5)
    # the grid is spaced over the longer run of both files: both sides record the same steps
    (other,) = run(env(fake), [{"files": [str(tmp_path / "long")], "world_size": 8, "grid_steps": 200_000}])
    assert other.result is not None and set(range(0, 100_000, 100)) <= set(other.result["lr"]["steps"])


def test_every_shipped_probe_says_what_it_needs() -> None:
    shipped = probes()
    assert set(shipped) == {"cerebras", "deepspeed", "hf", "megatron", "neox", "veomni"}
    for fmt, spec in shipped.items():
        assert spec.framework and spec.install, fmt
        assert spec.path.name == f"{fmt}_probe.py"
        # a probe imports only the standard library, _probe and its framework: never neoconv
        text = spec.path.read_text()
        assert "translator" not in text and "neoconv." not in text.replace("neoconv.toml", ""), fmt
    assert shipped["neox"].needs_checkout and shipped["megatron"].needs_checkout
    assert not shipped["veomni"].needs_checkout and shipped["veomni"].installed == "veomni"
    assert dict(shipped["cerebras"].hints) == {"model_name": "model.family"}


def test_env_and_src_options_name_a_format_and_a_path() -> None:
    assert parse_pairs(("neox=/opt/neox/bin/python",), "--env") == {"neox": "/opt/neox/bin/python"}
    with pytest.raises(UsageError, match=r"--env neox: give FORMAT=PATH"):
        parse_pairs(("neox",), "--env")
    with pytest.raises(UsageError, match=r"no probe for 'gpt'; formats with one: cerebras"):
        parse_pairs(("gpt=/x",), "--src")


def test_an_environment_says_why_it_cannot_run(tmp_path: Path) -> None:
    empty = ProveConfig()
    missing = resolve("neox", {"neox": str(tmp_path / "nope" / "python")}, {}, empty)
    assert (
        missing.problem
        == f"the GPT-NeoX interpreter {tmp_path / 'nope' / 'python'} (from --env) is not an executable file"
    )
    no_checkout = resolve("neox", {"neox": sys.executable}, {}, empty)
    assert no_checkout.problem is not None and no_checkout.problem.startswith(
        "GPT-NeoX is used from a source checkout: give it with --src neox=PATH"
    )
    wrong_tree = resolve("neox", {"neox": sys.executable}, {"neox": str(tmp_path)}, empty)
    assert wrong_tree.problem == f"{tmp_path} is not a GPT-NeoX source tree: it has no megatron/neox_arguments"
    # this interpreter has no Megatron-LM stack: said, with the option that names another one
    here = resolve("deepspeed", {}, {}, empty)
    if here.problem is not None:
        assert here.origin == "the current interpreter"
        assert here.problem.startswith("no interpreter for DeepSpeed: give --env deepspeed=PATH/TO/python")


def test_the_configuration_file_names_the_environments_once(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    (project / "sub").mkdir(parents=True)
    config(
        project,
        "pyproject.toml",
        """\
        [tool.neoconv.prove]
        env = { neox = "envs/neox/bin/python" }
        src = { neox = "/opt/gpt-neox" }
    """,
    )
    found = find(project / "sub")
    assert found.file == str(project / "pyproject.toml")
    assert found.env == {"neox": str(project / "envs/neox/bin/python")}  # relative to the file's folder
    assert found.src == {"neox": "/opt/gpt-neox"}
    chosen = resolve("neox", {}, {}, found)
    assert chosen.python == str(project / "envs/neox/bin/python") and chosen.origin == str(project / "pyproject.toml")
    assert resolve("neox", {"neox": sys.executable}, {}, found).origin == "--env"  # the command line wins
    # a .neoconv.toml nearer the current folder is read first, with a [prove] table
    config(project / "sub", ".neoconv.toml", '[prove]\nenv = { hf = "/opt/hf/bin/python" }\n')
    assert find(project / "sub").env == {"hf": "/opt/hf/bin/python"}
    # a pyproject.toml without a neoconv table is passed over
    (tmp_path / "other").mkdir()
    config(tmp_path / "other", "pyproject.toml", "[tool.black]\nline-length = 100\n")
    assert find(tmp_path / "other") == ProveConfig()


@pytest.mark.parametrize(
    "text, message",
    [
        ("[prove]\nenv = 3\n", r"\[prove\] env must map format names to paths"),
        ("[prove]\npython = {}\n", r"\[prove\] has no key 'python': it takes env and src"),
        ("[prove\n", r"not a TOML file neoconv can read"),
    ],
)
def test_a_broken_configuration_file_is_one_clear_line(tmp_path: Path, text: str, message: str) -> None:
    config(tmp_path, ".neoconv.toml", text)
    with pytest.raises(UsageError, match=message) as caught:
        find(tmp_path)
    assert str(tmp_path / ".neoconv.toml") in str(caught.value) and "\n" not in str(caught.value)


def test_the_recorded_fixtures_are_json_a_probe_wrote() -> None:
    root = Path(__file__).resolve().parent.parent / "fixtures" / "prove"
    for side in sorted(root.glob("*/[ab].json")):
        data = json.loads(side.read_text())
        assert data["protocol"] == 1 and data["probe"] in probes(), side
