"""Oracle tier of `neoconv prove`: each framework's probe run by its own interpreter on our fixtures,
and translations with a silent defect injected into neoconv's writer caught by the frameworks'
own code. Opt-in (`pytest -m oracle`); each test skips, saying why, when its framework's
environment is not set (tools/oracle_setup.sh builds them all; `. DIR/oracle.env`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

from neoconv import translate
from neoconv.prove import ProveOptions, prove
from neoconv.prove.config import ProveConfig
from neoconv.prove.environments import resolve
from neoconv.prove.runner import run

pytestmark = pytest.mark.oracle

# format -> (interpreter variable, source tree variable) of tools/oracle_setup.sh's oracle.env
ENVIRONMENTS = {
    "neox": ("NEOCONV_ORACLE_NEOX", "NEOX_SRC"),
    "deepspeed": ("NEOCONV_ORACLE_DEEPSPEED", None),
    "cerebras": ("NEOCONV_ORACLE_CEREBRAS", "MODELZOO_SRC"),
    "veomni": ("NEOCONV_ORACLE_VEOMNI", "VEOMNI_SRC"),
    "hf": ("NEOCONV_ORACLE_VEOMNI", None),  # transformers with torch (the parameter count)
    "megatron": ("NEOCONV_ORACLE_MEGATRON", "MEGATRON_SRC"),
}
SETUP = "tools/oracle_setup.sh builds it; then `. DIR/oracle.env`"
NEOX = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"


def options(*formats: str) -> ProveOptions:
    env, src = {}, {}
    for fmt in formats:
        python_var, source_var = ENVIRONMENTS[fmt]
        if not os.environ.get(python_var):
            pytest.skip(f"${python_var} is not set (the {fmt} probe's interpreter; {SETUP})")
        env[fmt] = os.environ[python_var]
        if source_var:
            if not os.environ.get(source_var):
                pytest.skip(f"${source_var} is not set (the {fmt} source tree; {SETUP})")
            src[fmt] = os.environ[source_var]
    return ProveOptions(world_size=8, env=env, src=src, config=ProveConfig())


def probe(fmt: str, path: Path, **job: Any) -> dict[str, Any]:
    opts = options(fmt)
    (answer,) = run(resolve(fmt, opts.env, opts.src, ProveConfig()), [{"files": [str(path)], "world_size": 8, **job}])
    assert answer.problem is None, answer.problem
    assert answer.result is not None
    return answer.result


def written(result: Any, path: Path) -> Path:
    path.write_text(result.dump())
    for name, text in result.side_files.items():
        (path.parent / name).write_text(text)
    return path


def to_cerebras(source: Path, layout: str = "legacy", **options: Any) -> Any:
    """A NeoX file in Model Zoo's layout, with what the report lists as missing given (the data)."""
    loader = "train_input" if layout == "legacy" else "trainer.fit.train_dataloader"
    data = {f"{loader}.data_processor": "GptHDF5MapDataProcessor", f"{loader}.data_dir": "./data"}
    return translate(
        str(source),
        "neox",
        "cerebras",
        world_size=8,
        layout=layout,
        set_values={"model.vocab_size": 50304},
        target_values=data,
        **options,
    )


def short_neox(tmp_path: Path, lr: str = "0.0006") -> Path:
    """Pythia-160M's architecture and schedule shape, over 3,000 steps (the probes step every step)."""
    text = (
        NEOX.read_text()
        .replace('"train_iters": 143000', '"train_iters": 3000')
        .replace('"lr_decay_iters": 143000', '"lr_decay_iters": 3000')
    )
    text = text.replace('"lr": 0.0006', f'"lr": {lr}')
    path = tmp_path / "pythia-160m-short.yml"
    path.write_text(text)
    return path


def test_the_neox_probe_runs_neox_own_code(tmp_path: Path) -> None:
    got = probe("neox", short_neox(tmp_path))
    assert got["accepted"] is True and got["framework"]["name"] == "GPT-NeoX"
    assert got["run"]["global_batch"] == 256 and got["run"]["data_parallel"] == 8 and got["run"]["steps"] == 3000
    lr = got["lr"]
    assert lr["every_step"] and lr["values"][0] == pytest.approx(6e-4 / 30) and lr["values"][30] == pytest.approx(6e-4)
    assert got["parameters"]["without_vocab"] == 85_056_000 and got["parameters"]["per_vocab_row"] == 1536
    assert {s["name"] for s in got["stubs"] if s["calls"]} >= {
        "NeoXArgs.enable_logging",
        "torch.distributed fake process group",
    }


def test_the_deepspeed_probe_runs_deepspeed_own_scheduler() -> None:
    got = probe("deepspeed", FIXTURES / "inputs" / "deepspeed" / "warmup-decay-lr-zero1.json", steps_hint=100)
    assert got["accepted"] is True and got["lr"]["scheduler"] == "DeepSpeed WarmupDecayLR"
    assert got["run"]["zero_stage"] == 1 and got["lr"]["stepped"] == 100


def test_the_hf_and_megatron_probes_build_the_same_model(tmp_path: Path) -> None:
    hf = probe("hf", FIXTURES / "inputs" / "hf" / "llama-3.1-8b.json")
    assert hf["parameters"]["total"] == 8_030_261_248
    result = translate(
        str(FIXTURES / "inputs" / "hf" / "llama-3.1-8b.json"),
        "hf",
        "megatron",
        world_size=8,
        set_values={
            "model.seq_length": 8192,
            "train.steps": 100,
            "optim.lr": 3e-4,
            "batch.micro": 1,
            "batch.global": 64,
        },
        target_values={"data_path": ["/data/x"], "tokenizer_type": "NullTokenizer"},
    )
    got = probe("megatron", written(result, tmp_path / "llama.args"))
    assert got["accepted"] is True, got["message"]
    assert (
        got["parameters"]["total"] == 8_030_261_248
        and got["run"]["accumulation"] == 8
        and got["lr"]["values"][0] == 3e-4
    )


def test_the_cerebras_probe_builds_model_zoo_model(tmp_path: Path) -> None:
    for layout in ("legacy", "trainer"):
        result = to_cerebras(short_neox(tmp_path), layout)
        got = probe("cerebras", written(result, tmp_path / f"{layout}.yaml"))
        assert got["accepted"] is True, got["message"]
        assert (
            got["parameters"]["total"] == 162_322_944
            and got["run"]["global_batch"] == 256
            and got["lr"]["total_steps"] == 3000
        )


def test_the_cerebras_probe_reads_a_file_that_sets_no_loop(tmp_path: Path) -> None:
    """A legacy file without runconfig.max_steps (a DeepSpeed source holds no step count) has no loop:
    the probe says there are no steps; it crashed on `None.max_steps`."""
    import yaml

    result = to_cerebras(short_neox(tmp_path), "legacy")
    document = yaml.safe_load(result.dump())
    for key in ("max_steps", "num_steps", "eval_frequency", "eval_steps"):  # the trainer's loop settings
        document["runconfig"].pop(key, None)
    document["optimizer"].pop("grad_accum_steps", None)
    path = tmp_path / "no-steps.yaml"
    path.write_text(yaml.safe_dump(document))
    got = probe("cerebras", path)
    assert got["run"]["steps"] is None and got["run"]["global_batch"] == 256


def test_a_translation_proven_end_to_end(tmp_path: Path) -> None:
    opts = options("neox", "cerebras")
    source = short_neox(tmp_path)
    result = to_cerebras(source, "trainer")
    cert = prove(
        [str(source)],
        str(written(result, tmp_path / "out.yaml")),
        "neox",
        "cerebras",
        report=result.report.to_json(),
        options=opts,
    )
    assert cert.code == 0, cert.render()
    assert {r.name: r.status for r in cert.rows}["learning rate"] == "equal"


def test_a_writer_that_drops_the_warmup_is_caught_by_the_frameworks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opts = options("neox", "cerebras")
    from neoconv.formats.cerebras import lr_render as cerebras_schedule
    from neoconv.schedule.model import Schedule

    real = cerebras_schedule.render

    def no_warmup(schedule: Any, steps: int | None = None) -> Any:
        """The defect: the phases before the peak are not written (the run starts at the peak)."""
        peak = max(max(p.start, p.end) for p in schedule.phases)
        first = next(i for i, p in enumerate(schedule.phases) if p.start == peak)
        return real(Schedule(schedule.phases[first:]), steps)

    monkeypatch.setattr(cerebras_schedule, "render", no_warmup)
    # a schedule no other test writes: neoconv remembers what it wrote for the same values
    source = short_neox(tmp_path, lr="0.00059")
    result = to_cerebras(source, verify=False)
    cert = prove(
        [str(source)],
        str(written(result, tmp_path / "out.yaml")),
        "neox",
        "cerebras",
        report=result.report.to_json(),
        options=opts,
    )
    lr = {r.name: r for r in cert.rows}["learning rate"]
    assert lr.status == "different" and not lr.named and cert.code == 1, cert.render()


def test_a_wrong_micro_batch_is_caught_by_the_frameworks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opts = options("deepspeed", "neox")
    source = FIXTURES / "inputs" / "deepspeed" / "warmup-decay-lr-zero1.json"
    model = {
        "model.num_layers": 2,
        "model.hidden_size": 64,
        "model.num_heads": 4,
        "model.max_position_embeddings": 128,
        "model.seq_length": 128,
        "train.steps": 200,
    }
    result = translate(str(source), "deepspeed", "neox", world_size=8, set_values=model)
    text = result.dump()
    micro = next(line for line in text.splitlines() if line.startswith("train_micro_batch_size_per_gpu:"))
    value = int(micro.split(":")[1])
    out = tmp_path / "out.yml"  # the defect: the micro batch written twice as large, the report unchanged
    out.write_text(
        text.replace(micro, f"train_micro_batch_size_per_gpu: {value * 2}").replace(
            "gradient_accumulation_steps:", "# was:"
        )
    )
    cert = prove([str(source)], str(out), "deepspeed", "neox", report=result.report.to_json(), options=opts)
    unnamed = {r.name for r in cert.unnamed}
    assert "micro batch" in unnamed or "accepted" in unnamed, cert.render()
    assert cert.code == 1


def test_prove_reads_a_megatron_launch_script_through_neoconvs_reading_of_it(tmp_path: Path) -> None:
    opts = options("megatron")
    script = tmp_path / "run.sh"
    script.write_text(
        "pkill -9 python\nNL=2\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers $NL "
        "--hidden-size 64 --num-attention-heads 4 --seq-length 32 --max-position-embeddings 32 "
        "--micro-batch-size 1 --global-batch-size 8 --train-iters 10 --lr 1e-4 --mock-data "
        "--tokenizer-type NullTokenizer --vocab-size 1000\n"
    )
    result = translate(str(script), "megatron", "megatron")
    cert = prove(
        [str(script)],
        str(written(result, tmp_path / "run.args")),
        "megatron",
        "megatron",
        report=result.report.to_json(),
        options=opts,
    )
    assert cert.code == 0, cert.render()
    assert {r.name: r.status for r in cert.rows}["parameters"] == "equal"
