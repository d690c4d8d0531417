"""Hostile values for every numeric key of real configs (local; issue 32's message sweep).

    python tools/hostile_sweep.py [FORMAT ...] [--values=-1,0,1e308,huge,1.5]

Each numeric leaf of each config below is set in turn to each value (`huge` is 10**308 written as
an integer, `big` 2**63 + 1); the file is translated to two other formats and validated. A run
either translates (exit 0 or 1) or is refused with exactly one line that names the file and the
line (`FILE:LINE`), says how to fix it and stays short; any internal error, a run over 5 s, or a
refusal of another shape is listed. The configs are the project's own fixtures; the harness's real
configs stay outside the repository (tests/test_hostile_bounds.py holds a case of each class found).
"""

from __future__ import annotations

import json
import re
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "inputs"
CASES = {  # format: (fixture, pairs)
    "neox": ("neox/pythia-160m.yml", ["neox2cerebras", "neox2veomni", "neox2megatron"]),
    "cerebras": ("cerebras/llama-warmup-cosine.yaml", ["cerebras2neox", "cerebras2deepspeed"]),
    "deepspeed": ("deepspeed/warmup-cosine-lr-zero2.json", ["deepspeed2neox", "deepspeed2cerebras"]),
    "veomni": ("veomni/tinyllama-nested.yaml", ["veomni2neox", "veomni2megatron"]),
    "hf": ("hf/llama-3.1-8b.json", ["hf2neox", "hf2veomni"]),
    "hftrainer": ("hftrainer/trainer-linear.json", ["hftrainer2deepspeed", "hftrainer2neox"]),
    "megatron": ("megatron/gpt-15b-ci.yaml", ["megatron2neox", "megatron2cerebras"]),
}
NAMED = {"huge": 10**308, "big": 2**63 + 1}
# a refusal says what to do: one of these verbs, or the engine's "(fix the value)"
FIX = re.compile(
    r"\b(give|fix|remove|set|use|drop|write|pass|choose|make|rename|add|keep|split|lower|raise|enable|disable)\b",
    re.IGNORECASE,
)


def leaves(tree: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from leaves(value, (*path, key))
    elif isinstance(tree, (int, float)) and not isinstance(tree, bool):
        yield path


def put(tree: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(tree))
    node = copy
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return copy


def shape(line: str, name: str) -> list[str]:
    """What is wrong with a refusal's one line (nothing: it names the file and line and a fix)."""
    problems = []
    if not re.search(re.escape(name) + r":\d+", line):
        problems.append("no file:line")
    if not FIX.search(line.split(": ", 2)[-1]):
        problems.append("no fix")
    if len(line.split(name, 1)[-1]) > 400:  # the message after the file's name (a temp folder's is long)
        problems.append(f"{len(line)} characters")
    return problems


class _Hang(Exception):
    pass


def _alarm(*_: Any) -> None:
    raise _Hang


def sweep(formats: list[str], values: list[Any]) -> tuple[int, list[str]]:
    from click.testing import CliRunner
    from neoconv.cli import main

    signal.signal(signal.SIGALRM, _alarm)
    runs, defects = 0, []
    for fmt in formats:
        fixture, pairs = CASES[fmt]
        path = FIXTURES / fixture
        text = path.read_text()
        tree = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        for leaf in list(leaves(tree)):
            for value in values:
                with tempfile.TemporaryDirectory() as tmp:
                    src = Path(tmp) / path.name
                    changed = put(tree, leaf, value)
                    src.write_text(json.dumps(changed, indent=2) if path.suffix == ".json" else yaml.safe_dump(changed))
                    for pair in [*pairs, "validate"]:
                        args = (
                            ["validate", "--format", fmt, str(src)]
                            if pair == "validate"
                            else [pair, str(src), "-o", f"{tmp}/out", "-q"]
                        )
                        where = f"{pair} {'.'.join(map(str, leaf))}={str(value)[:12]}"
                        runs += 1
                        began = time.monotonic()
                        signal.alarm(20)
                        try:
                            result = _runner(CliRunner).invoke(main, args)
                        except _Hang:
                            defects.append(f"{where}: no answer in 20 s")
                            continue
                        finally:
                            signal.alarm(0)
                        if time.monotonic() - began > 5:
                            defects.append(f"{where}: {time.monotonic() - began:.1f} s")
                        err = result.stderr.strip()
                        if "internal error" in err or (
                            result.exception and not isinstance(result.exception, SystemExit)
                        ):
                            defects.append(f"{where}: internal error {err[:200]}")
                        elif result.exit_code == 2:
                            lines = err.splitlines() or [""]
                            found = shape(lines[0], src.name) + ([f"{len(lines)} lines"] if len(lines) > 1 else [])
                            if found:
                                defects.append(f"{where}: {'; '.join(found)} :: {lines[0][:300]}")
    return runs, defects


def _runner(cls: Any) -> Any:
    try:
        return cls(mix_stderr=False)  # click < 8.2
    except TypeError:
        return cls()


def main(argv: list[str]) -> int:
    wanted = [a for a in argv if not a.startswith("--values=")]
    given = next((a.split("=", 1)[1] for a in argv if a.startswith("--values=")), "-1,0,huge,big,1.5")
    values = [NAMED[v] if v in NAMED else json.loads(v) for v in given.split(",")]
    runs, defects = sweep(wanted or list(CASES), values)
    print(f"{runs} runs, {len(defects)} defects")
    print("\n".join(defects))
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
