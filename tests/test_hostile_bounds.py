"""Work bounded whatever a number in the input says, and refusals that name where (issue 32, round
three's leftovers): no loop runs as many times as a value read from a file, a huge number is shown
by its size, and a refusal names the file, the line of the key at fault and the fix."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
from conftest import cli_runner

from neoconv.cli import main
from neoconv.core.errors import InputError, abbreviated
from neoconv.formats.hf.window import write_window
from neoconv.formats.veomni.schedule import veomni_ratio, veomni_tokens_for

NEOX = """\
num_layers: 2
hidden_size: 64
num_attention_heads: 4
seq_length: 128
max_position_embeddings: 128
pos_emb: rotary
optimizer: {{type: Adam, params: {{lr: 0.0006}}}}
min_lr: 0.00006
train_micro_batch_size_per_gpu: {micro}
train_iters: {iters}
lr_decay_iters: {decay}
lr_decay_style: cosine
warmup: 0.01
"""


def _refusal(
    tmp_path: Path, pair: str, *extra: str, micro: object = 4, iters: object = 1000, decay: object = 1000
) -> str:
    src = tmp_path / "in.yml"
    src.write_text(NEOX.format(micro=micro, iters=iters, decay=decay))
    out = tmp_path / "out"
    result = cli_runner().invoke(main, [pair, str(src), "-o", str(out), "-q", *extra])
    assert result.exit_code == 2, result.stderr
    assert "internal error" not in result.stderr and not out.exists()
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    return lines[0]


@pytest.mark.parametrize(
    "count, total",
    [(2**60 - 1, 2**60), (3, 10**15), (10**15 - 1, 10**15), (1, 2**53), (2**62 + 12345, 2**63 - 1), (7, 3)],
)
def test_the_ratio_veomni_truncates_is_found_by_halving_not_by_stepping(count: int, total: int) -> None:
    began = time.process_time()
    ratio = veomni_ratio(count, total)
    assert time.process_time() - began < 0.5
    assert int(total * ratio) >= count
    below = math.nextafter(ratio, 0.0)  # the first such float: the one below it falls short
    assert int(total * below) < count or round(count / total, 17) == ratio


def test_the_train_size_search_is_bounded_for_the_largest_sizes_veomni_counts() -> None:
    began = time.process_time()
    for steps, batch_tokens, warmup in [(2**20, 2**32, 0.0), (1, 2**52, 0.0), (10**6, 10**9, 0.5), (3, 1, 0.007)]:
        tokens = veomni_tokens_for(steps, batch_tokens, warmup)
        assert math.ceil(int(tokens * (1 + warmup / 2)) / batch_tokens) == steps
        assert math.ceil(int((tokens - 1) * (1 + warmup / 2)) / batch_tokens) <= steps
    assert time.process_time() - began < 0.5


def test_an_every_nth_window_pattern_of_many_layers_is_read_from_its_first_full_layer() -> None:
    # before: each n from 2 to the layer count was tried, a list of every layer each time (20,000
    # layers: 30 s; the 100,000 a Megatron pattern may list: hours)
    layers = 50_000
    kw = {"family": "gemma3", "position_embedding": "rotary", "sliding_window": 512, "num_layers": layers}
    every_sixth = ["full" if (i + 1) % 6 == 0 else "sliding" for i in range(layers)]
    began = time.process_time()
    assert write_window({**kw, "attention_layer_types": every_sixth}) == {
        "hf_sliding_window": 512,
        "hf_sliding_window_pattern": 6,
    }
    broken = [*every_sixth[:-1], "full" if every_sixth[-1] == "sliding" else "sliding"]
    written = write_window({**kw, "attention_layer_types": broken})
    assert "hf_sliding_window_pattern" not in written.value and len(written.value["hf_layer_types"]) == layers
    assert time.process_time() - began < 2


def test_a_number_of_hundreds_of_digits_is_shown_by_its_size() -> None:
    assert abbreviated(f"got {10**308}, not 9223372036854775807") == (
        "got 1.00e+308 (a 309-digit number), not 9223372036854775807"
    )
    assert abbreviated("file_123456789012345678901234.yaml") == "file_123456789012345678901234.yaml"
    assert InputError(f"got {-(7 * 10**40)}", hint=f"at most {10**30}").message == "got -7.00e+40 (a 41-digit number)"


def test_a_huge_batch_is_refused_in_one_short_line(tmp_path: Path) -> None:
    line = _refusal(tmp_path, "neox2veomni", micro=10**308)
    assert "in.yml:9: train_micro_batch_size_per_gpu:" in line
    assert "1.00e+308 (a 309-digit number)" in line and len(line) < 250
    assert "fix the value" in line


def test_a_train_size_veomni_cannot_count_names_the_steps_line(tmp_path: Path) -> None:
    line = _refusal(tmp_path, "neox2veomni", "--world-size", "8", micro=10**9, iters=10**9, decay=10**9)
    assert "in.yml:10: train_iters:" in line and "2**53" in line and "give a smaller batch" in line


@pytest.mark.parametrize("decay, words", [(-5, "at least 0"), ("1e308", "2**53")])
def test_a_refused_decay_is_named_at_its_own_line(tmp_path: Path, decay: object, words: str) -> None:
    # before: at line 7, optimizer.params.lr's, the first key of the schedule's rule
    line = _refusal(tmp_path, "neox2cerebras", decay=decay)
    assert "in.yml:11: lr_decay_iters:" in line and words in line


def test_a_schedule_refusal_names_the_key_it_is_about_and_the_fix(tmp_path: Path) -> None:
    # min_lr's line (8), not optimizer.params.lr's (7), which the schedule's rule reads first
    src = tmp_path / "in.yml"
    src.write_text(NEOX.format(micro=4, iters=1000, decay=1000).replace("min_lr: 0.00006", "min_lr: 1.5"))
    result = cli_runner().invoke(main, ["neox2cerebras", str(src), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 2
    assert "in.yml:8: min_lr:" in result.stderr and result.stderr.rstrip().endswith("(fix the value)")


@pytest.mark.parametrize(
    "old, new, where",
    [
        ('"pipe-parallel-size": 1,', '"pipe-parallel-size": 1.5,', ":4: pipe_parallel_size:"),
        ('"model-parallel-size": 1,', f'"model-parallel-size": {10**23},', ":5: model_parallel_size:"),
    ],
)
def test_a_hyphenated_neox_key_is_named_at_its_line(tmp_path: Path, old: str, new: str, where: str) -> None:
    # before: the file without a line (the key looked up as NeoX's underscore spelling); a width no
    # model_parallel_size divides was blamed on intermediate_size, which the file does not set
    from conftest import FIXTURES

    src = tmp_path / "pythia.yml"
    text = (FIXTURES / "inputs" / "neox" / "pythia-160m.yml").read_text()
    assert old in text
    src.write_text(text.replace(old, new))
    result = cli_runner().invoke(main, ["neox2cerebras", str(src), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert f"pythia.yml{where}" in result.stderr


def test_a_deepspeed_scheduler_value_is_named_at_its_own_key(tmp_path: Path) -> None:
    from conftest import FIXTURES

    src = tmp_path / "ds.json"
    text = (FIXTURES / "inputs" / "deepspeed" / "warmup-cosine-lr-zero2.json").read_text()
    src.write_text(text.replace('"total_num_steps": 20000', '"total_num_steps": -1'))
    result = cli_runner().invoke(main, ["deepspeed2neox", str(src), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 2
    assert "ds.json:11: scheduler.params.total_num_steps:" in result.stderr and "(fix the value)" in result.stderr


@pytest.mark.parametrize(
    "value, expected",
    [
        (10**308, ":{line}: --hidden-size: a number of 309 digits"),  # the derived MLP width names its source
        (1.5, ":{line}: argument --hidden-size: invalid int value: '1.5' (give a whole number)"),
    ],
)
def test_a_megatron_refusal_names_the_line_and_the_fix(tmp_path: Path, value: object, expected: str) -> None:
    import yaml
    from conftest import FIXTURES

    tree = yaml.safe_load((FIXTURES / "inputs" / "megatron" / "gpt-15b-ci.yaml").read_text())
    tree["MODEL_ARGS"]["--hidden-size"] = value
    src = tmp_path / "ci.yaml"
    src.write_text(yaml.safe_dump(tree))
    line = next(i for i, text in enumerate(src.read_text().splitlines(), 1) if "--hidden-size:" in text)
    result = cli_runner().invoke(main, ["megatron2neox", str(src), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "ci.yaml" + expected.format(line=line) in result.stderr


def test_a_target_refusal_is_named_at_the_source_key_it_comes_from(tmp_path: Path) -> None:
    # before: `num_attention_heads: GPT-NeoX cannot build this model ...` with no file, no line, no fix
    import json

    from conftest import FIXTURES

    config = json.loads((FIXTURES / "inputs" / "hf" / "llama-3.1-8b.json").read_text())
    config["hidden_size"] = 2**63 + 1
    src = tmp_path / "config.json"
    src.write_text(json.dumps(config, indent=2))
    line = next(i for i, text in enumerate(src.read_text().splitlines(), 1) if '"num_attention_heads"' in text)
    result = cli_runner().invoke(main, ["hf2neox", str(src), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert f"config.json:{line}: num_attention_heads: GPT-NeoX cannot build this model" in result.stderr
    assert "give a hidden_size the heads divide" in result.stderr


def test_a_schedule_the_target_cannot_run_is_refused_with_the_fix(tmp_path: Path) -> None:
    line = _refusal(tmp_path, "neox2veomni", iters=0)
    assert "in.yml:7: optimizer.params.lr: VeOmni cannot run this learning-rate schedule" in line
    assert line.endswith(
        "(give the source a schedule the target runs (its steps, warmup and decay), or translate into another format)"
    )


def test_a_cosine_restarting_every_step_is_named_not_stepped(tmp_path: Path) -> None:
    # before: 10^9 restarts over 10^9 steps (the lr sampled at every restart) hung every target: the
    # comparison stepped the curve one step at a time
    import json

    src = tmp_path / "args.json"
    src.write_text(
        json.dumps(
            {
                "output_dir": "o",
                "per_device_train_batch_size": 16,
                "learning_rate": 3e-4,
                "lr_scheduler_type": "cosine_with_restarts",
                "lr_scheduler_kwargs": {"num_cycles": 10**9},
                "max_steps": 10**9,
            }
        )
    )
    report = tmp_path / "report.json"
    began = time.process_time()
    result = cli_runner().invoke(
        main,
        ["hftrainer2neox", str(src), "-o", str(tmp_path / "out.yml"), "--world-size", "8", "--report", str(report)],
    )
    assert time.process_time() - began < 5
    assert result.exit_code in (0, 1), result.stderr
    lost = [e for e in json.loads(report.read_text())["entries"] if "a cosine cycle of 1 steps" in e["detail"]]
    assert lost and lost[0]["status"] == "lossy"
