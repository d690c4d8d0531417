"""neoconv benchmark: ratios against the YAML parse/emit floor, measured in the same run.

    python bench/bench.py [--corpus ../shared/corpus/neox] [--synthetic 10000] [--jobs 2]

Measures, on the same files:
  (a) the floor: yaml C-loader load + C-dumper dump of each file;
  (b) `neoconv batch` at -j 1 and -j N (files/s and ratio to the floor);
  (c) translate() alone, with a per-stage profile (read, map, write, report);
  (d) cold start of `neoconv --help` and of one translation, next to `python -c pass` and
      `python -c "import yaml"`;
  (e) with --synthetic N: a generated tree of N configs (copies of the corpus with varied
      sizes) at -j N, time and peak memory at 1/10 and all of N, to show how cost grows.
Benchmarks are not tests: nothing here asserts; the README quotes the targets.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from translator.api import read_ir  # noqa: E402
from translator.batch import BatchOptions, run_batch  # noqa: E402
from translator.engine import emit  # noqa: E402
from translator.io import dump_json  # noqa: E402
from translator.mapping import load_table  # noqa: E402
from translator.registry import get_format  # noqa: E402

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def config_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.yml") if "num_layers" in p.read_text() or "num-layers" in p.read_text())


def floor(files: list[Path], repeat: int = 3) -> float:
    """Seconds to load and dump every file once with PyYAML's C loader/dumper (best of repeat)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for path in files:
            yaml.dump(yaml.load(path.read_text(), Loader=LOADER), Dumper=DUMPER, sort_keys=False)
        best = min(best, time.perf_counter() - start)
    return best


def stages(files: list[Path], src: str, dst: str) -> dict[str, float]:
    totals = {"read": 0.0, "map": 0.0, "write": 0.0, "report": 0.0}
    writer = get_format(dst).load()
    table = load_table(dst)
    for path in files:
        t0 = time.perf_counter()
        source = get_format(src).load().read([str(path)])
        t1 = time.perf_counter()
        ingested = read_ir(source, src)
        leaves, report = emit(ingested, table, dst)
        t2 = time.perf_counter()
        writer.dump(writer.write(leaves, {}), {})
        t3 = time.perf_counter()
        dump_json(report.to_json())
        t4 = time.perf_counter()
        totals["read"] += t1 - t0
        totals["map"] += t2 - t1
        totals["write"] += t3 - t2
        totals["report"] += t4 - t3
    return totals


def batch_time(src_dir: Path, jobs: int, src: str, dst: str) -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        run_batch(str(src_dir), out + "/o", BatchOptions(src, dst, jobs=jobs, translate_options={"world_size": 8}))
        return time.perf_counter() - start


def cold(cmd: list[str], repeat: int = 5) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def synthetic_tree(files: list[Path], count: int, target: Path) -> None:
    """count configs built from the corpus files, some padded with extra (unknown) keys to vary size."""
    for i in range(count):
        path = files[i % len(files)]
        text = path.read_text()
        if i % 3 == 0:
            text = text.rstrip().rstrip("}") + ",\n" + ",\n".join(f'  "extra_key_{j}": {j}' for j in range(i % 50)) + "\n}\n" if text.rstrip().endswith("}") else text
        folder = target / f"d{i // 500:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"c{i:05d}.yml").write_text(text)


def peak_rss_mb_of(cmd: list[str]) -> tuple[float, float]:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    elapsed = time.perf_counter() - start
    return elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus" / "neox"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--synthetic", type=int, default=0, help="also run a generated tree of N configs")
    args = parser.parse_args()
    corpus = Path(args.corpus)
    files = config_files(corpus)
    if not files:
        sys.exit(f"no NeoX configs under {corpus}")
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "src"
        for path in files:
            dest = tree / path.relative_to(corpus)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, dest)
        n = len(files)
        base = floor(files)
        print(f"files: {n} NeoX configs from {corpus}")
        print(f"(a) floor  yaml C load+dump      {base * 1000:8.1f} ms   {n / base:8.0f} files/s   1.00x")
        for jobs in sorted({1, args.jobs}):
            t = batch_time(tree, jobs, "neox", "cerebras")
            print(f"(b) batch  -j {jobs:<2}                 {t * 1000:8.1f} ms   {n / t:8.0f} files/s   {t / base:5.2f}x floor")
        read_ir(str(files[0]), "neox")  # tables compiled once per process: keep that out of (c)
        prof = stages(files, "neox", "cerebras")
        total = sum(prof.values())
        print(f"(c) translate() alone           {total * 1000:8.1f} ms   {n / total:8.0f} files/s   {total / base:5.2f}x floor")
        for stage, seconds in prof.items():
            print(f"      {stage:<7} {seconds * 1000:8.1f} ms  ({seconds / total:5.1%})")
        py = sys.executable
        neoconv = [py, "-m", "translator"]
        t_pass = cold([py, "-c", "pass"])
        t_yaml = cold([py, "-c", "import yaml"])
        t_help = cold(neoconv + ["--help"])
        t_one = cold(neoconv + ["neox2cerebras", str(files[0]), "-q"])
        print(f"(d) cold start: python -c pass {t_pass * 1000:6.0f} ms | import yaml {t_yaml * 1000:6.0f} ms | "
              f"neoconv --help {t_help * 1000:6.0f} ms (+{(t_help - t_yaml) * 1000:.0f} ms over yaml) | "
              f"one translation {t_one * 1000:6.0f} ms")
        if args.synthetic:
            big = Path(tmp) / "synthetic"
            synthetic_tree(files, args.synthetic, big)
            for count in sorted({max(1, args.synthetic // 10), args.synthetic}):
                part = Path(tmp) / f"part{count}"
                if count == args.synthetic:
                    part = big
                else:
                    for folder in sorted(big.iterdir())[: max(1, count // 500)]:
                        shutil.copytree(folder, part / folder.name)
                n_files = sum(1 for _ in part.rglob("*.yml"))
                cmd = neoconv + ["batch", "neox2cerebras", str(part), "-o", str(Path(tmp) / f"out{count}"), "-q", "-j", str(args.jobs)]
                elapsed, rss = peak_rss_mb_of(cmd)
                print(f"(e) synthetic {n_files:6d} files -j {args.jobs}: {elapsed:6.1f} s  {n_files / elapsed:7.0f} files/s  peak RSS {rss:6.0f} MB")


if __name__ == "__main__":
    main()
