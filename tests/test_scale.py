"""Time linear in the number of keys: `validate` and the readers on files of thousands of keys (a
file of 5,000 unknown keys took 13 s, a Megatron CI YAML of 4,000 keys 14 s: the line of each key
was searched from the top of the file). Measured against the same file with fewer keys, in CPU
time, so that a loaded machine does not decide: quadratic work would be 400 times slower for 20
times the keys."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from neoconv.api import translate
from neoconv.io.documents import key_line
from neoconv.services.validate_file import validate_file

from conftest import FIXTURES

NEOX = (FIXTURES / "inputs" / "neox" / "pythia-160m.yml").read_text()
MEGATRON_CI = (FIXTURES / "inputs" / "megatron" / "gpt-15b-ci.yaml").read_text()


def _neox_with(n: int, folder: Path) -> str:
    body = NEOX.rstrip().rstrip("}")
    path = folder / f"neox-{n}.yml"
    path.write_text(body + "".join(f'  "unknown_key_{i}": {i},\n' for i in range(n)) + "}\n")
    return str(path)


def _megatron_ci_with(n: int, folder: Path) -> str:
    head, _, rest = MEGATRON_CI.partition("MODEL_ARGS:\n")
    path = folder / f"megatron-{n}.yaml"
    path.write_text(head + "MODEL_ARGS:\n" + "".join(f"  --unknown-option-{i}: {i}\n" for i in range(n)) + rest)
    return str(path)


def _cpu(run: Callable[[], object]) -> float:
    """The least CPU time of two runs."""
    times = []
    for _ in range(2):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)


def _grows_linearly(small: Callable[[], object], large: Callable[[], object], factor: int) -> None:
    small()  # imports, schemas and tables loaded before timing
    t_small, t_large = _cpu(small), _cpu(large)
    # linear work: about `factor` times; quadratic: factor^2. Three times linear is allowed for noise
    assert t_large < 3 * factor * t_small + 0.05, (t_small, t_large)


def test_validate_is_linear_in_unknown_keys(tmp_path: Path) -> None:
    small, large = _neox_with(300, tmp_path), _neox_with(6_000, tmp_path)
    result = validate_file(large, "neox")
    unknown = [p for p in result.problems if p.key and p.key.startswith("unknown_key_")]
    assert len(unknown) == 6_000
    assert unknown[-1].key == "unknown_key_5999" and unknown[-1].line == NEOX.rstrip().count("\n") + 6_000
    _grows_linearly(lambda: validate_file(small, "neox"), lambda: validate_file(large, "neox"), 20)


def test_validate_of_a_megatron_ci_yaml_is_linear_in_its_keys(tmp_path: Path) -> None:
    small, large = _megatron_ci_with(300, tmp_path), _megatron_ci_with(6_000, tmp_path)
    result = validate_file(large, "megatron")
    unknown = [p for p in result.problems if p.key and p.key.startswith("--unknown-option-")]
    assert len(unknown) == 6_000
    assert unknown[0].line == MEGATRON_CI.partition("MODEL_ARGS:\n")[0].count("\n") + 2
    _grows_linearly(lambda: validate_file(small, "megatron"), lambda: validate_file(large, "megatron"), 20)


def test_translating_a_file_of_many_keys_is_linear(tmp_path: Path) -> None:
    small, large = _megatron_ci_with(300, tmp_path), _megatron_ci_with(6_000, tmp_path)

    def run(path: str) -> Callable[[], object]:
        return lambda: translate([path], "megatron", "neox", verify=False)

    _grows_linearly(run(small), run(large), 20)


def test_key_line_finds_each_spelling_of_a_key() -> None:
    text = "a:\n  b: 1\n  - c: 2\n  \"d\": 3\n  --lr: 4\ne: {f: 5, 'g': 6}\nb: 7\n# h: 8\n"
    assert [key_line(text, k) for k in ("a", "a.b", "a.c", "a.d", "a.--lr", "e.f", "e.g", "b", "h", "e.z")] == [
        1,
        2,
        3,
        4,
        5,
        6,
        6,
        2,
        None,
        6,
    ]
    # a part after its parent: the `b` under `e` is none, `b` alone the first one
    assert key_line(text, "e.b") == 7
