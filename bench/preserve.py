"""What keeping the formatting costs: preserve() next to the plain dump, per file, same run.

    python bench/preserve.py [--repeat 7]

For every VeOmni legacy file (veomni2veomni --layout nested) and Cerebras legacy file
(cerebras2cerebras --layout trainer) of the shared corpus, times (best of --repeat):
  translate  translate() (read, map, write the target document), what both paths share;
  dump       Translation.dump(): the plain text the migration writes today;
  preserve   preserve(source text, target document, moves): the format-keeping text instead;
and prints the totals, the median per file and the ratio preserve / dump and
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

from translator import translate  # noqa: E402
from translator.errors import NeoconvError  # noqa: E402
from translator.preserve import moves_from_report, preserve  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
MIGRATIONS = [("veomni", "nested", "veomni-legacy"), ("cerebras", "trainer", "cerebras-legacy")]


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
    for fmt, layout, folder in MIGRATIONS:
        rows: list[tuple[float, float, float]] = []
        kept = 0
        for path in sorted((CORPUS / folder).glob("**/*.yaml")):
            try:
                result = translate(path, fmt, fmt, layout=layout)
            except NeoconvError:
                continue
            text = path.read_text(encoding="utf-8")
            moves = moves_from_report(result.report)
            document = dict(result.config)
            kept += preserve(text, document, moves, "yaml").preserved
            rows.append((
                best(lambda: translate(path, fmt, fmt, layout=layout), args.repeat),
                best(result.dump, args.repeat),
                best(lambda: preserve(text, document, moves, "yaml"), args.repeat),
            ))  # fmt: skip
        tr, du, pr = (sum(col) for col in zip(*rows))
        med = [statistics.median(col) * 1000 for col in zip(*rows)]
        print(f"{fmt}2{fmt} --layout {layout}: {len(rows)} files, formatting kept in {kept}")
        print(f"  total   translate {tr * 1000:7.1f} ms   dump {du * 1000:6.1f} ms   preserve {pr * 1000:6.1f} ms")
        print(f"  median  translate {med[0]:7.2f} ms   dump {med[1]:6.2f} ms   preserve {med[2]:6.2f} ms per file")
        print(f"  preserve / dump {pr / du:5.1f}x    translate+preserve / translate+dump {(tr + pr) / (tr + du):5.2f}x")


if __name__ == "__main__":
    main()
