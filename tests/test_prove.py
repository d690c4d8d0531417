"""`neoconv prove`: the comparison and the certificate against probe answers recorded from real runs
of the frameworks (fixtures/prove/<case>/: a.json and b.json as each probe printed them, the
translation's report, and case.json saying what was run; tools/prove_record.py writes them), the
regression cases of silent defects, and the commands (`prove`, `--prove` on a translation and on
batch, `--check-env`) with the probes' answers stood in by the recorded ones."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

from neoconv.cli import main
from neoconv.prove import Pair, ProveOptions, prove_many
from neoconv.prove.certificate import Certificate, Side
from neoconv.prove.compare import DIFFERENT, EQUAL, NOT_COMPARED, annotate, rows
from neoconv.prove.runner import ProbeAnswer

CASES = FIXTURES / "prove"
NEOX = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"


def case(name: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    folder = CASES / name
    return tuple(json.loads((folder / f"{part}.json").read_text()) for part in ("a", "b", "report", "case"))  # type: ignore[return-value]


def certificate(a: dict[str, Any], b: dict[str, Any], report: dict[str, Any] | None, rtol: float = 1e-6) -> Certificate:
    cert = Certificate(
        Side("a", a["probe"], ProbeAnswer(a["probe"], a)), Side("b", b["probe"], ProbeAnswer(b["probe"], b)), 8
    )
    cert.rows = rows(a, b, rtol)
    if report is not None:
        annotate(cert.rows, report)
        cert.report_file = "report.json"
    return cert


def row(cert: Certificate, name: str) -> Any:
    (found,) = [r for r in cert.rows if r.name == name]
    return found


RECORDED = sorted(p.name for p in CASES.iterdir() if (p / "case.json").is_file()) if CASES.is_dir() else []


@pytest.mark.parametrize("name", RECORDED)
def test_a_recorded_proof_gives_the_verdict_it_gave(name: str) -> None:
    a, b, report, ran = case(name)
    cert = certificate(a, b, report)
    assert cert.code == ran["exit_code"] and cert.verdict == ran["verdict"]


def test_neox_to_cerebras_both_layouts_every_figure_equal() -> None:
    for name in ("neox2cerebras-legacy", "neox2cerebras-trainer"):
        a, b, report, _ = case(name)
        cert = certificate(a, b, report)
        assert cert.code == 0 and not cert.differences, name
        lr = row(cert, "learning rate")
        # Pythia-160M: 143,000 steps, 1% warmup (1,430 steps), cosine to a tenth; Model Zoo's float32
        assert lr.status == EQUAL and lr.a["steps"] == lr.b["steps"] == 143_000 and lr.a["peak"] == 6e-4
        assert lr.detail["max_difference_of_peak"] < 1e-6 and lr.detail["compared_steps"] > 2000
        assert (row(cert, "global batch").a, row(cert, "global batch").b) == (256, 256)
        assert row(cert, "steps").status == EQUAL
        # NeoX leaves the vocabulary to its tokenizer: compared without it, then Model Zoo's total is the paper's
        params = row(cert, "parameters")
        assert (
            params.status == EQUAL
            and params.detail["a"]["without_vocab"] == params.detail["b"]["without_vocab"] == 85_056_000
        )
        assert params.detail["b"]["total"] == 162_322_944 == 85_056_000 + 1536 * 50_304
        # Model Zoo takes the sequence length from the data: no tokens per step there
        assert row(cert, "tokens per step").status == NOT_COMPARED and row(cert, "tokens per step").a == 256 * 2048


def test_neox_to_cerebras_a_gated_mlp_from_two_merged_files() -> None:
    a, b, report, _ = case("neox2cerebras-llama2")
    cert = certificate(a, b, report)
    assert cert.code == 0 and not cert.differences
    assert row(cert, "MLP width").a == row(cert, "MLP width").b == 11008  # NeoX's width as built, not intermediate_size
    params = row(cert, "parameters")
    assert params.detail["a"]["without_vocab"] == params.detail["b"]["without_vocab"] == 6_477_107_200
    assert params.detail["b"]["total"] == 6_477_107_200 + 8192 * 32_000  # untied: two vocabulary matrices
    assert (row(cert, "steps").a, row(cert, "global batch").a) == (320_000, 32)


def test_hf_to_megatron_the_same_model_on_both_sides() -> None:
    a, b, report, _ = case("hf2megatron")
    cert = certificate(a, b, report)
    assert cert.code == 0
    assert row(cert, "parameters").a == row(cert, "parameters").b == 8_030_261_248  # Llama 3.1 8B
    assert [r.name for r in cert.rows if r.status == EQUAL] == [
        "accepted",
        "parameters",
        "layers",
        "hidden size",
        "attention heads",
        "key/value heads",
        "MLP width",
        "vocabulary",
        "max positions",
    ]
    assert row(cert, "learning rate").status == NOT_COMPARED  # a config.json holds no run


def test_cerebras_to_veomni_llama_3_1_8b_on_both_sides() -> None:
    a, b, report, _ = case("cerebras2veomni")
    cert = certificate(a, b, report)
    assert cert.code == 0
    lr = row(cert, "learning rate")
    assert lr.status == EQUAL and lr.a["steps"] == lr.b["steps"] == 4768 and lr.detail["max_difference_of_peak"] < 1e-6
    assert row(cert, "parameters").a == row(cert, "parameters").b == 8_030_261_248
    assert (row(cert, "global batch").a, row(cert, "steps").a) == (960, 4768)
    # Model Zoo's cbfloat16 has no VeOmni counterpart: bf16, and the report says so
    precision = row(cert, "precision")
    assert (precision.a, precision.b, precision.status, precision.named) == ("cbfloat16", "bf16", DIFFERENT, True)
    assert [r.name for r in cert.differences] == ["precision"]


def test_veomni_to_neox_differs_at_the_first_step_only_as_the_report_says() -> None:
    a, b, report, _ = case("veomni2neox")
    cert = certificate(a, b, report)
    lr = row(cert, "learning rate")
    # VeOmni's warmup starts at lr_start (0); NeoX's AnnealingLR at lr / warmup steps (max(1, step))
    assert lr.status == DIFFERENT and lr.named and lr.detail["max_difference_step"] == 0
    assert lr.detail["a_at_step"] == 0.0 and lr.detail["b_at_step"] == pytest.approx(3e-4 / 1674)
    later = {s: v for s, v in zip(a["lr"]["steps"], a["lr"]["values"]) if s > 0}
    theirs = dict(zip(b["lr"]["steps"], b["lr"]["values"]))
    assert all(abs(theirs[s] - v) <= 1e-12 for s, v in later.items() if s in theirs)
    assert [(row(cert, n).a, row(cert, n).b) for n in ("global batch", "tokens per step", "steps")] == [
        (512, 512),
        (512 * 8192, 512 * 8192),
        (239_254, 239_254),
    ]
    params = row(cert, "parameters")  # NeoX does not know its vocabulary without the tokenizer files
    assert (
        params.status == EQUAL
        and params.detail["b"]["without_vocab"] == 6_979_588_096 == 8_030_261_248 - 8192 * 128_256
    )
    assert cert.code == 0


def test_deepspeed_to_neox_a_schedule_neox_cannot_hold_is_named() -> None:
    a, b, report, _ = case("deepspeed2neox")
    cert = certificate(a, b, report)
    lr = row(cert, "learning rate")
    assert lr.status == DIFFERENT and lr.named and "lossy" in lr.report  # OneCycle has no NeoX counterpart
    assert cert.code == 0 and cert.unnamed == []
    assert [(row(cert, n).a, row(cert, n).b) for n in ("global batch", "micro batch", "accumulation")] == [
        (512, 512),
        (32, 32),
        (2, 2),
    ]
    # without the report the same difference is not named: exit 1
    assert certificate(a, b, None).code == 1


# ---- silent defects a translation could have, as the frameworks would report them --------------------


def test_a_writer_that_drops_the_warmup_is_caught() -> None:
    a, b, report, _ = case("neox2cerebras-trainer")
    broken = copy.deepcopy(b)
    lr = broken["lr"]
    peak = max(lr["values"])
    lr["values"] = [peak if step < 1430 else value for step, value in zip(lr["steps"], lr["values"])]
    cert = certificate(a, broken, report)
    found = row(cert, "learning rate")
    assert found.status == DIFFERENT and not found.named and cert.code == 1
    assert found.detail["max_difference_step"] == 0 and found.detail["b_at_step"] == peak
    assert "learning rate" in cert.verdict and cert.verdict.startswith("not proven: 1 difference(s) not named")


def test_a_wrong_micro_batch_is_caught() -> None:
    a, b, report, _ = case("deepspeed2neox")
    broken = copy.deepcopy(b)
    broken["run"].update(micro_batch=16, global_batch=256, tokens_per_step=256 * 512)
    cert = certificate(a, broken, report)
    assert {r.name for r in cert.unnamed} == {"global batch", "micro batch"}  # the report said the batch was exact
    assert cert.code == 1


def test_an_output_the_target_refuses_while_the_report_says_exact_is_caught() -> None:
    a, b, report, _ = case("hf2megatron")
    refused = {**b, "accepted": False, "message": "AssertionError: at megatron/training/arguments.py:812: assert x"}
    report = {**report, "entries": [e for e in report["entries"] if e["status"] != "missing"]}  # nothing said missing
    cert = certificate(a, refused, report)
    assert [r.name for r in cert.rows] == ["accepted"]
    assert cert.rows[0].status == DIFFERENT and not cert.rows[0].named and cert.code == 1
    # a report listing what the target needs (missing) names the refusal
    told = {
        **report,
        "entries": [*report["entries"], {"status": "missing", "fields": ["train.steps"], "source_key": None}],
    }
    assert certificate(a, refused, told).code == 0
    # a source its own framework refuses proves nothing, whatever the report says
    cert = certificate(refused, refused, told)
    assert cert.code == 1 and cert.verdict.startswith("not proven: A, the source, is refused by its own framework (")


def test_a_parameter_count_that_differs_is_caught_unless_a_model_field_is_named() -> None:
    a, b, report, _ = case("hf2megatron")
    broken = copy.deepcopy(b)
    broken["parameters"]["total"] -= 4096 * 14336 * 3  # one MLP fewer
    cert = certificate(a, broken, report)
    assert row(cert, "parameters").status == DIFFERENT and cert.code == 1
    lossy = {**report, "entries": [*report["entries"], {"status": "lossy", "fields": ["model.ffn_hidden_size"]}]}
    assert row(certificate(a, broken, lossy), "parameters").named


# ---- the commands, with the recorded answers standing in for the probes --------------------------------


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The probes' answers: per format, the recorded answer the next run returns (or a problem)."""
    answers: dict[str, Any] = {}

    def fake_run(env: Any, jobs: list[dict[str, Any]], *, timeout: float = 0) -> list[ProbeAnswer]:
        given = answers[env.format]
        if isinstance(given, str):
            return [ProbeAnswer(env.format, None, given) for _ in jobs]
        answers.setdefault("jobs", {})[env.format] = jobs
        return [ProbeAnswer(env.format, copy.deepcopy(given)) for _ in jobs]

    monkeypatch.setattr("neoconv.prove.run", fake_run)
    return answers


def test_prove_prints_a_table_and_exits_with_its_verdict(runner: Any, recorded: dict[str, Any], tmp_path: Path) -> None:
    a, b, report, _ = case("neox2cerebras-trainer")
    recorded.update(neox=a, cerebras=b)
    out = tmp_path / "out.yaml"
    assert runner.invoke(
        main, ["neox2cerebras", str(NEOX), "--layout", "trainer", "--world-size", "8", "-o", str(out), "-q"]
    ).exit_code in (0, 1)
    (tmp_path / "report.json").write_text(json.dumps(report))
    result = runner.invoke(
        main, ["prove", str(NEOX), str(out), "--world-size", "8", "--report", str(tmp_path / "report.json")]
    )
    assert result.exit_code == 0, result.output + result.stderr
    lines = result.output.splitlines()
    assert lines[0].startswith(f"A: {NEOX} (neox) - GPT-NeoX") and lines[1].startswith(
        f"B: {out} (cerebras) - Cerebras Model Zoo 2.10.0"
    )
    assert any(line.startswith("learning rate") and line.endswith("equal") for line in lines)
    assert lines[-1] == "proven: both frameworks accept the files and every figure is equal"
    # the probes were told the world size and where the phases change (neoconv's reading of both files)
    job = recorded["jobs"]["neox"][0]
    assert job["world_size"] == 8 and {0, 1, 1430} <= set(job["lr_at"])
    as_json = json.loads(runner.invoke(main, ["prove", str(NEOX), str(out), "--world-size", "8", "--json"]).output)
    assert as_json["exit_code"] == 0 and as_json["a"]["format"] == "neox" and as_json["b"]["format"] == "cerebras"


def test_prove_exits_2_saying_why_a_side_could_not_run(runner: Any, recorded: dict[str, Any], tmp_path: Path) -> None:
    a, _, _, _ = case("neox2cerebras-trainer")
    recorded.update(neox=a, cerebras="no interpreter for Cerebras Model Zoo: give --env cerebras=PATH/TO/python")
    out = tmp_path / "out.yaml"
    runner.invoke(main, ["neox2cerebras", str(NEOX), "--world-size", "8", "-o", str(out), "-q"])
    result = runner.invoke(main, ["prove", str(NEOX), str(out), "--world-size", "8"])
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"not proven: B (cerebras, {out}): no interpreter for Cerebras Model Zoo: give --env cerebras=PATH/TO/python"
    )


def test_prove_without_a_report_counts_every_difference(runner: Any, recorded: dict[str, Any], tmp_path: Path) -> None:
    a, b, _, _ = case("deepspeed2neox")
    recorded.update(deepspeed=a, neox=b)
    src = (
        FIXTURES
        / "inputs"
        / "deepspeed"
        / sorted(p.name for p in (FIXTURES / "inputs" / "deepspeed").glob("*.json"))[0]
    )
    out = tmp_path / "x.yml"
    out.write_text("num_layers: 2\n")
    result = runner.invoke(main, ["prove", str(src), str(out), "--from-b", "neox"])
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "not proven: 1 difference(s) no translation report given (--report): learning rate"
    )


def test_prove_on_a_translation_proves_what_it_wrote(runner: Any, recorded: dict[str, Any], tmp_path: Path) -> None:
    a, b, _, _ = case("neox2cerebras-legacy")
    recorded.update(neox=a, cerebras=b)
    out = tmp_path / "out.yaml"
    result = runner.invoke(main, ["neox2cerebras", str(NEOX), "--world-size", "8", "-o", str(out), "--prove", "-q"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[-1] == "proven: both frameworks accept the files and every figure is equal"
    assert recorded["jobs"]["cerebras"][0]["files"] == [str(out)]
    broken = copy.deepcopy(b)
    broken["run"]["global_batch"] = 128
    recorded["cerebras"] = broken
    result = runner.invoke(main, ["neox2cerebras", str(NEOX), "--world-size", "8", "-o", str(out), "--prove", "-q"])
    assert result.exit_code == 1 and "global batch" in result.stderr.splitlines()[-1]
    refused = runner.invoke(main, ["neox2cerebras", str(NEOX), "--world-size", "8", "--prove"])
    assert (
        refused.exit_code == 2
        and "--prove runs the target framework on the written file: give -o OUT" in refused.stderr
    )


def test_batch_prove_records_a_proof_per_file(runner: Any, recorded: dict[str, Any], tmp_path: Path) -> None:
    a, b, _, _ = case("neox2cerebras-legacy")
    broken = copy.deepcopy(b)
    broken["run"]["steps"] = 1000
    recorded.update(neox=a, cerebras=broken)
    src = tmp_path / "src"
    src.mkdir()
    (src / "one.yml").write_text(NEOX.read_text())
    result = runner.invoke(
        main,
        ["batch", "neox2cerebras", str(src), "-o", str(tmp_path / "out"), "--world-size", "8", "--prove", "-j", "1"],
    )
    assert result.exit_code == 1, result.stderr
    assert (
        "not proven  one.yml: not proven: 1 difference(s) not named by the translation's report: steps" in result.stderr
    )
    assert result.stderr.splitlines()[-1] == "neoconv prove: 1 not proven"
    summary = json.loads((tmp_path / "out" / "neoconv-report.json").read_text())
    (entry,) = summary["files"]
    assert entry["proof"]["verdict"] == "not proven" and entry["proof"]["exit_code"] == 1
    assert [d["name"] for d in entry["proof"]["differences"]] == ["steps"] and summary["proofs"] == {"not proven": 1}
    check = runner.invoke(main, ["batch", "neox2cerebras", str(src), "-o", str(tmp_path / "out"), "--prove", "--check"])
    assert check.exit_code == 2 and "not with --check" in check.stderr


def test_check_env_says_what_is_ready(runner: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_check(env: Any) -> tuple[Any, Any]:
        if env.format == "hf":
            return {"name": "transformers", "version": "5.9.0"}, None
        return None, env.problem or "not here"

    monkeypatch.setattr("neoconv.prove.runner.check", fake_check)
    result = runner.invoke(main, ["prove", "--check-env", "--env", "neox=/nowhere/python"])
    assert result.exit_code == 1
    lines = dict(line.split(None, 1) for line in result.output.splitlines())
    assert lines["neox"] == "not ready: the GPT-NeoX interpreter /nowhere/python (from --env) is not an executable file"
    assert lines["hf"].startswith("ready: transformers 5.9.0 with ")
    assert set(lines) == {"cerebras", "deepspeed", "hf", "megatron", "neox", "veomni"}


def test_plot_without_matplotlib_says_so_in_one_line(
    runner: Any, recorded: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    real = builtins.__import__

    def no_matplotlib(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    a, b, _, _ = case("neox2cerebras-legacy")
    recorded.update(neox=a, cerebras=b)
    out = tmp_path / "out.yaml"
    runner.invoke(main, ["neox2cerebras", str(NEOX), "--world-size", "8", "-o", str(out), "-q"])
    result = runner.invoke(main, ["prove", str(NEOX), str(out), "--plot", str(tmp_path / "lr.png")])
    assert (
        "neoconv: warning: --plot needs matplotlib, which is not installed (pip install 'neoconv[plot]'); no plot was written"
        in result.stderr
    )
    assert not (tmp_path / "lr.png").exists() and result.exit_code == 0  # the certificate still decides


def test_plot_draws_both_curves(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install 'neoconv[plot]')")
    from neoconv.prove.plot import write_plot

    a, b, report, _ = case("neox2cerebras-trainer")
    write_plot(certificate(a, b, report), str(tmp_path / "lr.png"))
    assert (tmp_path / "lr.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_prove_many_probes_each_side_once_for_many_files(recorded: dict[str, Any], tmp_path: Path) -> None:
    a, b, _, _ = case("neox2cerebras-legacy")
    recorded.update(neox=a, cerebras=b)
    pairs = [Pair((str(NEOX),), str(tmp_path / f"{i}.yaml")) for i in range(3)]
    certs = prove_many(pairs, "neox", "cerebras", ProveOptions(world_size=8))
    assert len(certs) == 3 and len(recorded["jobs"]["neox"]) == 3 and len(recorded["jobs"]["cerebras"]) == 3
    assert [c.b.file for c in certs] == [p.output for p in pairs]
