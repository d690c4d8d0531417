"""neoconv benchmark: what a migration of a real repository costs, as a ratio to the YAML floor.

    python bench/bench.py [--pair neox2cerebras ...] [--files 1000] [--memory 10000] [--in-process]

A real migration sees each file once. So by default the files are not copies of each other: the
corpus configs of the pair's source format, each copy with its step counts shifted (so no two
files are alike and nothing remembered from one file answers another), and each is translated
once, by `neoconv batch SRC2DST TREE -o OUT -j 1 --world-size 8` as a command (start-up included,
the read-back on, as a user runs it). Measured in the same run on the same files:
  floor   read + PyYAML C loader + C dumper of each file, in a fresh process (CPU time);
  batch   the command's CPU time (user + system, from its resource usage) and peak RSS;
  ratio   batch CPU / floor CPU.
--memory N runs the command again on N distinct files and on N/10 of them: peak RSS at both.
--in-process adds, labelled as such, the old figure: the same files translated again and again in
one process, where what was remembered from the first round answers the later ones (not a
migration; it shows what the caches are worth).
Timings are the least of --repeat runs (the machine may be shared). Nothing here asserts.
"""

from __future__ import annotations

import argparse
import compileall
import fnmatch
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("NEOCONV_CORPUS") or ROOT.parent / "shared" / "corpus")  # as the tests find it
FIXTURES = ROOT / "fixtures" / "inputs"
SOURCES = {  # where a format's real configs are: the shared corpus, else the project's own fixtures
    "neox": [CORPUS / "neox"],
    "cerebras": [CORPUS / "cerebras-legacy", CORPUS / "cerebras-trainer"],
    "deepspeed": [CORPUS / "deepspeed"],
    "veomni": [CORPUS / "veomni", CORPUS / "veomni-legacy"],
    "hf": [FIXTURES / "hf"],
    "megatron": [FIXTURES / "megatron"],
}
PAIRS = (
    "neox2cerebras",
    "cerebras2neox",
    "deepspeed2neox",
    "veomni2neox",
    "neox2veomni",
    "hf2megatron",
    "neox2megatron",
)
# a step count, an interval, a length: shifted per copy (quoted JSON keys, YAML keys, --options)
_COUNT = re.compile(
    r"""(["']?-*[\w-]*(?:iters|interval|steps|max_position_embeddings|max-position-embeddings)[\w-]*["']?\s*[:=]?\s*)(\d+)"""
)

_FLOOR = """
import json, os, sys, time, yaml
L, D = yaml.CSafeLoader, yaml.CSafeDumper
files = [os.path.join(a, f) for a, _, names in os.walk(sys.argv[1]) for f in names]
start = time.process_time()
for f in files:
    with open(f, encoding="utf-8") as fh:
        text = fh.read()
    try:
        yaml.dump(yaml.load(text, Loader=L), Dumper=D)
    except yaml.YAMLError:  # a launch script or an args file: parsed as one scalar
        yaml.dump(text, Dumper=D)
print(time.process_time() - start, len(files))
"""


def distinct_tree(src: str, count: int, target: Path) -> int:
    """count files (at least) made of the source format's configs, copy k with every step count
    shifted by 7k + 1: no two alike. Returns how many."""
    sys.path.insert(0, str(ROOT))
    from neoconv.knowledge.registry import get_format

    globs = get_format(src).globs
    originals = [
        p
        for folder in SOURCES[src]
        if folder.is_dir()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and any(fnmatch.fnmatch(p.name, g) for g in globs)
    ]
    if src == "hf":  # HF's files are model folders' config.json: any .json of the fixtures is one
        originals = sorted(p for folder in SOURCES[src] for p in folder.glob("*.json"))
    if not originals:
        sys.exit(f"no {src} configs under {', '.join(map(str, SOURCES[src]))}")
    made, k = 0, 0
    while made < count:
        for path in originals:
            if made >= count:
                break
            text = path.read_text(encoding="utf-8")
            text = _COUNT.sub(lambda m: m.group(1) + str(int(m.group(2)) + 7 * k + 1), text)
            folder = next(f for f in SOURCES[src] if f in path.parents)
            out = target / f"c{k:04d}" / folder.name / path.relative_to(folder)
            if src == "hf":
                out = out.with_suffix("") / "config.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
            made += 1
        k += 1
    return made


def floor(tree: Path) -> float:
    out = subprocess.run([sys.executable, "-c", _FLOOR, str(tree)], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[0])


_CHILD = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
    "r = resource.getrusage(resource.RUSAGE_CHILDREN); print(r.ru_utime + r.ru_stime, r.ru_maxrss)"
)


def batch(pair: str, tree: Path, out: Path) -> tuple[float, float]:
    """CPU seconds and peak RSS (MB) of one `neoconv batch` command, from a fresh parent."""
    cmd = [
        sys.executable,
        "-m",
        "neoconv",
        "batch",
        pair,
        str(tree),
        "-o",
        str(out),
        "-q",
        "-j",
        "1",
        "--world-size",
        "8",
    ]
    got = subprocess.run(
        [sys.executable, "-c", _CHILD, *cmd], capture_output=True, text=True, check=True
    ).stdout.split()
    shutil.rmtree(out, ignore_errors=True)
    return float(got[0]), float(got[1]) / 1024


def in_process(pair: str, tree: Path, rounds: int) -> list[float]:
    """CPU seconds of each round of run_batch over the same files in one process."""
    sys.path.insert(0, str(ROOT))
    from neoconv.batch import BatchOptions, run_batch

    src, _, dst = pair.partition("2")
    times = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as out:
            start = time.process_time()
            run_batch(str(tree), out + "/o", BatchOptions(src, dst, jobs=1, translate_options={"world_size": 8}))
            times.append(time.process_time() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pair", action="append", help=f"SRC2DST (repeatable; default: {', '.join(PAIRS)})")
    parser.add_argument("--files", type=int, default=1000, help="distinct files per pair (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the least is shown")
    parser.add_argument("--memory", type=int, default=0, help="also peak RSS at N/10 and N distinct files")
    parser.add_argument("--in-process", action="store_true", help="also the same files again in one process")
    args = parser.parse_args()
    # commands start as after `pip install`: bytecode compiled (PYTHONDONTWRITEBYTECODE would make
    # every start compile every module again)
    compileall.compile_dir(str(ROOT / "translator"), quiet=1)
    print(f"{'pair':15} {'files':>6} {'floor':>8} {'batch CPU':>10} {'per file':>9} {'ratio':>7} {'peak RSS':>9}")
    for pair in args.pair or PAIRS:
        src = pair.partition("2")[0]
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / "src"
            n = distinct_tree(src, args.files, tree)
            base = min(floor(tree) for _ in range(args.repeat))
            runs = [batch(pair, tree, Path(tmp) / "out") for _ in range(args.repeat)]
            cpu, rss = min(r[0] for r in runs), min(r[1] for r in runs)
            print(
                f"{pair:15} {n:6d} {base:7.2f}s {cpu:9.2f}s {cpu / n * 1000:7.2f}ms {cpu / base:6.2f}x {rss:7.1f}MB",
                flush=True,
            )
            if args.in_process:
                rounds = in_process(pair, tree, args.repeat + 1)
                print(
                    f"{'':15} in one process, the same files again (caches warm; not a migration): first round "
                    f"{rounds[0]:.2f}s, later {min(rounds[1:]):.2f}s = {min(rounds[1:]) / base:.2f}x the floor",
                    flush=True,
                )
            if args.memory:
                for count in (args.memory // 10, args.memory):
                    big = Path(tmp) / f"mem{count}"
                    distinct_tree(src, count, big)
                    cpu, rss = batch(pair, big, Path(tmp) / "out")
                    print(f"{'':15} {count:6d} distinct files: peak RSS {rss:.1f} MB, CPU {cpu:.1f}s", flush=True)
                    shutil.rmtree(big)


if __name__ == "__main__":
    main()
