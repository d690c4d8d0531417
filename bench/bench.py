"""neoconv benchmark: ratios against the YAML parse/emit floor, measured in the same run.

    python bench/bench.py [--pair neox2cerebras] [--corpus DIR] [--synthetic 10000] [--jobs 2] [--repeat 7]

Measures, on the same files (every file `neoconv batch` reads under the corpus folder):
  (a) the floor: read + PyYAML C-loader load + C-dumper dump of each file;
  (b) `neoconv batch` at -j 1 and -j N: in-process (run_batch, tables already compiled: the
      per-file cost a large migration pays) and as a command (with interpreter start-up);
  (c) translate() alone, with a per-stage profile (read, map, write, report);
  (d) cold start of `neoconv --help` and of one translation, next to `python -c pass` and
      `python -c "import yaml"`;
  (e) with --synthetic N: a generated tree of N configs (copies of the corpus, some padded with
      extra keys to vary size) at -j N: time, files/s, peak memory at N/10 and at N, and the
      floor over the same files.
Timings are the best of --repeat runs (the machine may be shared). Benchmarks are not tests:
nothing here asserts; the README quotes the targets.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neoconv.api import read_ir  # noqa: E402
from neoconv.batch import BatchOptions, run_batch, walk  # noqa: E402
from neoconv.engine import emit  # noqa: E402
from neoconv.core.errors import NeoconvError  # noqa: E402
from neoconv.io.documents import dump_json  # noqa: E402
from neoconv.knowledge.mapping import load_table  # noqa: E402
from neoconv.formats.spec import WriteContext  # noqa: E402
from neoconv.knowledge.registry import get_format  # noqa: E402

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
SRC, DST = "neox", "cerebras"  # set from --pair
OPTIONS = {"world_size": 8}
CORPUS_OF = {"neox": "neox", "cerebras": "cerebras-legacy", "deepspeed": "deepspeed", "veomni": "veomni"}


def best(run: Callable[[], object], repeat: int) -> float:
    """Fastest of `repeat` timed runs, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def batch_files(root: Path) -> list[Path]:
    return [Path(found.path) for found in walk(root, list(get_format(SRC).globs), []) if not found.status]


def floor(files: list[Path]) -> None:
    """Read, load and dump every file once with PyYAML's C loader/dumper."""
    for path in files:
        yaml.dump(yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER), Dumper=DUMPER, sort_keys=False)


def batch_in_process(src_dir: Path, jobs: int, repeat: int, plain: bool = False) -> float:
    """Best time of `repeat` batch runs, each into a fresh output folder (made and removed untimed).
    `plain`: --plain, the target's plain dump (no formatting kept, no comments carried over)."""
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            options = BatchOptions(SRC, DST, jobs=jobs, translate_options=dict(OPTIONS), plain=plain)
            run_batch(str(src_dir), out + "/o", options)
            times.append(time.perf_counter() - start)
    return min(times)


def batch_command(src_dir: Path, jobs: int) -> None:
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [sys.executable, "-m", "neoconv", "batch", f"{SRC}2{DST}", str(src_dir), "-o", out + "/o", "-q",
             "-j", str(jobs), "--world-size", "8"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
        )  # fmt: skip


def stages(files: list[Path]) -> dict[str, float]:
    totals = {"read": 0.0, "map": 0.0, "write": 0.0, "report": 0.0}
    reader, writer = get_format(SRC).load_reader(), get_format(DST).load_writer()
    table = load_table(DST)
    for path in files:
        t0 = time.perf_counter()
        try:
            source = reader.read([str(path)])
            t1 = time.perf_counter()
            leaves, report = emit(read_ir(source, SRC, **OPTIONS), table, DST)
        except NeoconvError:  # a file batch reports as failed: its time counts, it has no output
            continue
        t2 = time.perf_counter()
        writer.dump(writer.write(leaves, WriteContext()))
        t3 = time.perf_counter()
        dump_json(report.to_json())
        t4 = time.perf_counter()
        totals["read"] += t1 - t0
        totals["map"] += t2 - t1
        totals["write"] += t3 - t2
        totals["report"] += t4 - t3
    return totals


def cold(cmd: list[str], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def synthetic_tree(files: list[Path], count: int, target: Path) -> None:
    """count configs built from the corpus configs; every third padded with extra (unknown) keys."""
    texts = [p.read_text(encoding="utf-8") for p in files]
    for i in range(count):
        text = texts[i % len(texts)]
        if i % 3 == 0 and i % 50:
            extra = [f'"extra_key_{j}": {j}' for j in range(i % 50)]
            body = text.rstrip()
            if body.endswith("}"):  # a flow-style ({...}) file: the keys go inside the braces
                text = body[:-1].rstrip().rstrip(",") + ",\n  " + ",\n  ".join(extra) + "\n}\n"
            else:
                text = body + "\n" + "".join(f"{e}\n" for e in extra)
        folder = target / f"d{i // 500:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"c{i:05d}.yml").write_text(text, encoding="utf-8")


_RSS = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
    "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def timed_rss(cmd: list[str]) -> tuple[float, float]:
    """Seconds and peak RSS (MB, the largest of the command and its worker processes), measured
    from a fresh parent so one run's peak never shows in another's."""
    out = subprocess.run([sys.executable, "-c", _RSS, *cmd], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pair", default="neox2cerebras", help="SRC2DST to time (default neox2cerebras)")
    parser.add_argument("--corpus", help="folder of SRC configs (default: the shared corpus folder of SRC)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per measurement; the best is shown")
    parser.add_argument("--synthetic", type=int, default=0, help="also run a generated tree of N configs")
    args = parser.parse_args()
    global SRC, DST
    SRC, _, DST = args.pair.partition("2")
    if SRC not in CORPUS_OF or DST not in CORPUS_OF:
        sys.exit(f"--pair {args.pair}: expected SRC2DST with formats {', '.join(CORPUS_OF)}")
    corpus = Path(args.corpus or ROOT.parent / "shared" / "corpus" / CORPUS_OF[SRC])
    # commands start as after `pip install`: bytecode compiled (this checkout may run with
    # PYTHONDONTWRITEBYTECODE, which would make every start compile every module again)
    compileall.compile_dir(str(ROOT / "translator"), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "src"
        shutil.copytree(corpus, tree, ignore=shutil.ignore_patterns(".*"))
        files = batch_files(tree)
        if not files:
            sys.exit(f"no {SRC} configs under {corpus}")
        n = len(files)
        base = best(lambda: floor(files), args.repeat)
        print(f"files: {n} (every file `neoconv batch {SRC}2{DST}` reads under {corpus})")
        print(f"(a) floor  read + C load + C dump    {base * 1000:8.1f} ms  {n / base:7.0f} files/s   1.00x")
        batch_in_process(tree, 1, 1)  # compile the tables once, as one long batch does
        for jobs in sorted({1, args.jobs}):
            t = batch_in_process(tree, jobs, args.repeat)
            print(f"(b) batch  -j {jobs:<2} in-process          {t * 1000:8.1f} ms  {n / t:7.0f} files/s  {t / base:5.2f}x floor")
        t = batch_in_process(tree, 1, args.repeat, plain=True)
        what = "formatting kept" if SRC == DST else "comments carried"
        print(f"(b) batch  -j 1  in-process --plain  {t * 1000:8.1f} ms  {n / t:7.0f} files/s  {t / base:5.2f}x floor"
              f"  (the line above: {what})")  # fmt: skip
        for jobs in sorted({1, args.jobs}):
            t = best(lambda: batch_command(tree, jobs), max(3, args.repeat // 2))
            print(f"(b) batch  -j {jobs:<2} command             {t * 1000:8.1f} ms  {n / t:7.0f} files/s  {t / base:5.2f}x floor"
                  "  (with start-up)")  # fmt: skip
        configs = [p for p in files if _is_config(p)]
        prof = min((stages(configs) for _ in range(args.repeat)), key=lambda d: sum(d.values()))
        total = sum(prof.values())
        config_floor = best(lambda: floor(configs), args.repeat)
        print(f"(c) translate() alone, {len(configs)} configs  {total * 1000:8.1f} ms  {len(configs) / total:7.0f} files/s  "
              f"{total / config_floor:5.2f}x their floor")  # fmt: skip
        for stage, seconds in prof.items():
            print(f"      {stage:<7} {seconds * 1000:8.1f} ms  ({seconds / total:5.1%})")
        py = sys.executable
        neoconv = [py, "-m", "neoconv"]
        t_pass = cold([py, "-c", "pass"], args.repeat)
        t_yaml = cold([py, "-c", "import yaml"], args.repeat)
        t_help = cold(neoconv + ["--help"], args.repeat)
        t_one = cold(neoconv + [f"{SRC}2{DST}", str(configs[0]), "-q"], args.repeat)
        print(f"(d) cold start: python -c pass {t_pass * 1000:4.0f} ms | import yaml {t_yaml * 1000:4.0f} ms | "
              f"neoconv --help {t_help * 1000:4.0f} ms (+{(t_help - t_yaml) * 1000:.0f} ms over yaml) | "
              f"one translation {t_one * 1000:4.0f} ms")  # fmt: skip
        if args.synthetic:
            big = Path(tmp) / "synthetic"
            synthetic_tree(configs, args.synthetic, big)
            for count in sorted({max(1, args.synthetic // 10), args.synthetic}):
                part = big
                if count != args.synthetic:
                    part = Path(tmp) / f"part{count}"
                    for folder in sorted(big.iterdir())[: max(1, count // 500)]:
                        shutil.copytree(folder, part / folder.name)
                part_files = batch_files(part)
                part_floor = best(lambda: floor(part_files), 1)
                # the command at -j N, and for the smaller tree at -j 1 too: start-up included, amortised
                for jobs in sorted({args.jobs, 1}) if count != args.synthetic else [args.jobs]:
                    out = Path(tmp) / f"out{count}-{jobs}"
                    cmd = neoconv + ["batch", f"{SRC}2{DST}", str(part), "-o", str(out), "-q", "-j", str(jobs),
                                     "--world-size", "8"]  # fmt: skip
                    elapsed, rss = timed_rss(cmd)
                    shutil.rmtree(out, ignore_errors=True)
                    print(f"(e) synthetic {len(part_files):6d} files -j {jobs}: {elapsed:6.1f} s  "
                          f"{len(part_files) / elapsed:6.0f} files/s  {elapsed / part_floor:5.2f}x floor  "
                          f"peak RSS {rss:5.1f} MB  (floor {part_floor:5.1f} s)")  # fmt: skip


def _is_config(path: Path) -> bool:
    """A file batch translates (it skips NeoX's shared-settings fragments: no model in them)."""
    if SRC != "neox":
        return True
    text = path.read_text(encoding="utf-8")
    return "num_layers" in text or "num-layers" in text


if __name__ == "__main__":
    main()
