"""What keeping the formatting costs: preserve() next to the plain dump, per file, same run.

    python bench/preserve.py [--repeat 7]

For every VeOmni legacy file (veomni2veomni --layout nested), Cerebras legacy file
(cerebras2cerebras --layout trainer) and GPT-NeoX file (neox2neox: current spellings) of the
shared corpus, times (best of --repeat):
  translate  translate() (read, map, write the target document), what both paths share;
  dump       Translation.dump(): the plain text the migration writes today;
  preserve   preserve(source text, target document, moves): the format-keeping text instead;
  floor      PyYAML's C loader + C dumper on the same text (bench.py's floor, without the read);
and prints the totals, the median per file and the ratios preserve / dump, preserve / floor and
(translate + preserve) / (translate + dump). Nothing here asserts.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from neoconv import translate  # noqa: E402
from neoconv.core.errors import NeoconvError  # noqa: E402
from neoconv.io.preserve import moves_from_report, preserve  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
MIGRATIONS = [
    ("veomni", "nested", "veomni-legacy", "yaml"),
    ("cerebras", "trainer", "cerebras-legacy", "yaml"),
    ("neox", None, "neox", "yml"),
]


def best(run: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per measurement; the best is shown")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        sys.exit(f"no shared corpus at {CORPUS}")
    for fmt, layout, folder, suffix in MIGRATIONS:
        rows: list[tuple[float, float, float, float]] = []
        kept = 0
        for path in sorted((CORPUS / folder).glob(f"**/*.{suffix}")):
            try:
                result = translate(path, fmt, fmt, layout=layout)
            except NeoconvError:
                continue
            text = path.read_text(encoding="utf-8")
            moves = moves_from_report(result.report)
            document = dict(result.config)
            kept += preserve(text, document, moves, "yaml").preserved
            rows.append(
                (
                    best(lambda: translate(path, fmt, fmt, layout=layout), args.repeat),
                    best(result.dump, args.repeat),
                    best(lambda: preserve(text, document, moves, "yaml"), args.repeat),
                    best(lambda: yaml.dump(yaml.load(text, Loader=LOADER), Dumper=DUMPER), args.repeat),
                )
            )
        tr, du, pr, fl = (sum(col) for col in zip(*rows))
        med = [statistics.median(col) * 1000 for col in zip(*rows)]
        print(f"{fmt}2{fmt}{f' --layout {layout}' if layout else ''}: {len(rows)} files, formatting kept in {kept}")
        print(
            f"  total   translate {tr * 1000:7.1f} ms   dump {du * 1000:6.1f} ms   preserve {pr * 1000:6.1f} ms   floor {fl * 1000:6.1f} ms"
        )
        print(
            f"  median  translate {med[0]:7.2f} ms   dump {med[1]:6.2f} ms   preserve {med[2]:6.2f} ms   floor {med[3]:6.2f} ms per file"
        )
        print(
            f"  preserve / dump {pr / du:5.1f}x   preserve / floor {pr / fl:4.1f}x   "
            f"translate+preserve / translate+dump {(tr + pr) / (tr + du):5.2f}x"
        )


if __name__ == "__main__":
    main()
