"""Files a translation writes beside its output (the HF Trainer's DeepSpeed JSON, VeOmni's config.json): the
report lists them with their role, and diff, validate and prove read the output with them, from the report
or from the output's own reference, never from outside the output's folder."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from neoconv.cli import main
from conftest import cli_runner

NEOX = """\
{
  "num_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
  "seq_length": 128, "max_position_embeddings": 128,
  "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 2, "train_iters": 100,
  "optimizer": {"type": "Adam", "params": {"lr": 0.0006, "betas": [0.9, 0.95], "eps": 1.0e-8}},
  "zero_optimization": {"stage": 2},
  "fp16": {"enabled": true},
  "gradient_clipping": 1.0,
  "weight_decay": 0.01,
}
"""
# what the DeepSpeed JSON beside the TrainingArguments holds, and nothing else does
HELD_IN_THE_JSON = ("parallel.zero_stage",)


@pytest.fixture
def translated(runner: Any, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A NeoX config, its hftrainer translation (with out.ds_config.json beside it) and the report."""
    source = tmp_path / "small.yml"
    source.write_text(NEOX)
    out, report = tmp_path / "out" / "out.yaml", tmp_path / "report.json"
    out.parent.mkdir()
    result = runner.invoke(
        main, ["neox2hftrainer", str(source), "-o", str(out), "--report", str(report), "--world-size", "8", "-q"]
    )
    assert result.exit_code == 0, result.stderr
    assert (out.parent / "out.ds_config.json").is_file()
    return source, out, report


def diff(runner: Any, a: Path, b: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(main, ["diff", str(a), str(b), "--world-size", "8", "--json", *extra])
    return result.exit_code, (json.loads(result.output) if result.exit_code in (0, 1) else {"error": result.stderr})


def fields(data: dict[str, Any]) -> dict[str, list[str]]:
    """Every difference's field -> what the report says of it."""
    found: dict[str, list[str]] = {}
    for kind in ("changed", "only_in_a", "only_in_b", "not_expressible_in_both"):
        for change in data.get(kind, ()):
            found[change["field"]] = list(change.get("report") or ())
    return found


def test_the_report_lists_the_side_file_with_its_role(translated: tuple[Path, Path, Path]) -> None:
    _, _, report = translated
    target = json.loads(report.read_text())["target"]
    assert target["side_files"] == [{"file": "out.ds_config.json", "role": "with"}]


def test_diff_with_the_report_reads_the_deepspeed_json(runner: Any, translated: tuple[Path, Path, Path]) -> None:
    source, out, report = translated
    code, data = diff(runner, source, out, "--report", str(report))
    assert code in (0, 1), data
    shown = fields(data)
    for name in HELD_IN_THE_JSON:
        assert name not in shown  # carried into the JSON and read from it: no difference at all
    unnamed = {name: said for name, said in shown.items() if not said or said == ["exact"]}
    assert unnamed == {}
    assert "deepspeed" not in data["extensions"].get("B", {})  # the reference is read as the file it names


def test_diff_without_a_report_follows_the_outputs_deepspeed_key(
    runner: Any, translated: tuple[Path, Path, Path]
) -> None:
    source, out, _ = translated
    _, data = diff(runner, source, out)
    assert "parallel.zero_stage" not in fields(data)
    # the JSON's value is the one read: changed there, the difference shows
    ds = out.parent / "out.ds_config.json"
    config = json.loads(ds.read_text())
    config["zero_optimization"]["stage"] = 3
    ds.write_text(json.dumps(config))
    _, data = diff(runner, source, out)
    (change,) = [c for c in data["changed"] if c["field"] == "parallel.zero_stage"]
    assert (change["a"], change["b"]) == (2, 3)


def test_a_side_file_the_report_lists_must_be_there(runner: Any, translated: tuple[Path, Path, Path]) -> None:
    source, out, report = translated
    (out.parent / "out.ds_config.json").unlink()
    code, data = diff(runner, source, out, "--report", str(report))
    assert code == 2
    assert "out.ds_config.json" in data["error"] and str(out) in data["error"]


@pytest.mark.parametrize("name", ["../outside.json", "/ABSOLUTE"])
def test_a_report_naming_a_file_outside_the_folder_is_refused(
    runner: Any, translated: tuple[Path, Path, Path], name: str
) -> None:
    source, out, report = translated
    outside = out.parent.parent / "outside.json"
    outside.write_text((out.parent / "out.ds_config.json").read_text())
    data = json.loads(report.read_text())
    data["target"]["side_files"] = [{"file": str(outside) if name == "/ABSOLUTE" else name, "role": "with"}]
    report.write_text(json.dumps(data))
    code, answer = diff(runner, source, out, "--report", str(report))
    assert code == 2 and "leads out of the output's folder" in answer["error"]


def _pointing_outside(out: Path, how: str) -> None:
    """The output's `deepspeed:` names a DeepSpeed JSON outside its folder (a path, or a symlink beside it)."""
    outside = out.parent.parent / "outside.json"
    outside.write_text(json.dumps({"zero_optimization": {"stage": 3}, "train_micro_batch_size_per_gpu": 4}))
    (out.parent / "out.ds_config.json").unlink()
    name = "../outside.json"
    if how == "symlink":
        os.symlink(outside, out.parent / "link.json")
        name = "link.json"
    out.write_text(out.read_text().replace("deepspeed: out.ds_config.json", f"deepspeed: {name}"))
    assert f"deepspeed: {name}" in out.read_text()


@pytest.mark.parametrize("how", ["parent", "symlink"])
def test_the_outputs_own_reference_is_never_followed_out_of_its_folder(
    runner: Any, translated: tuple[Path, Path, Path], how: str
) -> None:
    source, out, _ = translated
    _pointing_outside(out, how)
    _, data = diff(runner, source, out)
    (removed,) = [c for c in data["only_in_a"] if c["field"] == "parallel.zero_stage"]
    assert removed["a"] == 2  # stage 3 of the file outside was not read
    validated = runner.invoke(main, ["validate", str(out), "--json"])
    (result,) = json.loads(validated.output)
    assert all("outside.json" not in p["file"] for p in result["problems"])


def test_a_symlink_inside_the_folder_is_read(runner: Any, translated: tuple[Path, Path, Path]) -> None:
    source, out, _ = translated
    ds = out.parent / "out.ds_config.json"
    kept = out.parent / "kept.json"
    ds.rename(kept)
    os.symlink("kept.json", ds)
    _, data = diff(runner, source, out)
    assert "parallel.zero_stage" not in fields(data)


def test_validate_reads_the_side_file_and_points_into_it(runner: Any, translated: tuple[Path, Path, Path]) -> None:
    _, out, _ = translated
    assert runner.invoke(main, ["validate", str(out)]).exit_code == 0
    ds = out.parent / "out.ds_config.json"
    config = json.loads(ds.read_text())
    config["zero_optimization"]["stage"] = 7
    ds.write_text(json.dumps(config, indent=2))
    result = runner.invoke(main, ["validate", str(out), "--json"])
    assert result.exit_code == 1
    (problem,) = json.loads(result.output)[0]["problems"]
    assert problem["file"] == str(ds) and problem["key"] == "zero_optimization.stage"


def test_a_veomni_translation_lists_its_config_json_and_diff_reads_it(runner: Any, tmp_path: Path) -> None:
    source = tmp_path / "small.yml"
    source.write_text(NEOX)
    out, report = tmp_path / "out" / "out.yaml", tmp_path / "report.json"
    out.parent.mkdir()
    assert (
        runner.invoke(
            main, ["neox2veomni", str(source), "-o", str(out), "--report", str(report), "--world-size", "8", "-q"]
        ).exit_code
        == 0
    )
    assert json.loads(report.read_text())["target"]["side_files"] == [
        {"file": "out.config.json", "role": "model_config"}
    ]
    _, data = diff(runner, source, out, "--report", str(report))
    assert not [name for name in fields(data) if name.startswith("model.num_") or name == "model.hidden_size"]
    (out.parent / "out.config.json").unlink()
    code, answer = diff(runner, source, out, "--report", str(report))
    assert code == 2 and "out.config.json" in answer["error"]


def test_prove_gives_the_probes_the_side_files(
    translated: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import neoconv.prove as prove_module
    from neoconv.prove.runner import ProbeAnswer

    source, out, report = translated
    jobs: dict[str, list[dict[str, Any]]] = {}

    def fake_run(env: Any, given: list[dict[str, Any]], *, timeout: float = 0) -> list[ProbeAnswer]:
        jobs[env.format] = given
        return [ProbeAnswer(env.format, None, "not run in this test") for _ in given]

    monkeypatch.setattr("neoconv.prove.run", fake_run)
    monkeypatch.setattr("neoconv.prove.probes", lambda: {"neox": None, "hftrainer": None, "veomni": None})
    monkeypatch.setattr(
        "neoconv.prove.environments", lambda formats, options: {f: type("E", (), {"format": f})() for f in formats}
    )
    prove_module.prove(
        [str(source)], str(out), "neox", "hftrainer", report=json.loads(report.read_text()), world_size=8
    )
    assert jobs["hftrainer"][0]["files"] == [os.path.abspath(out), os.path.abspath(out.parent / "out.ds_config.json")]
    # VeOmni: its config.json is the B side's model config
    vo, vo_report = tmp_path / "vo" / "out.yaml", tmp_path / "vo.json"
    vo.parent.mkdir()

    assert (
        cli_runner()
        .invoke(
            main, ["neox2veomni", str(source), "-o", str(vo), "--report", str(vo_report), "--world-size", "8", "-q"]
        )
        .exit_code
        == 0
    )
    prove_module.prove([str(source)], str(vo), "neox", "veomni", report=json.loads(vo_report.read_text()), world_size=8)
    assert jobs["veomni"][0]["model_config"] == os.path.abspath(vo.parent / "out.config.json")
    assert "model_config" not in jobs["neox"][0]


def test_validate_with_the_report_reads_the_side_files_it_lists(
    runner: Any, translated: tuple[Path, Path, Path]
) -> None:
    _, out, report = translated
    ds = out.parent / "out.ds_config.json"
    config = json.loads(ds.read_text())
    config["zero_optimization"]["stage"] = 7
    ds.write_text(json.dumps(config, indent=2))
    # the output no longer names it: only the report says it was written beside it
    out.write_text(out.read_text().replace("deepspeed: out.ds_config.json\n", ""))
    assert runner.invoke(main, ["validate", str(out)]).exit_code == 0
    result = runner.invoke(main, ["validate", str(out), "--report", str(report), "--json"])
    assert result.exit_code == 1
    (problem,) = json.loads(result.output)[0]["problems"]
    assert problem["file"] == str(ds) and problem["key"] == "zero_optimization.stage"
    several = runner.invoke(main, ["validate", str(out), str(out), "--report", str(report)])
    assert several.exit_code == 2 and "one FILE" in several.stderr
