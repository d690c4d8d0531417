"""Coverage-guided fuzzing of the loaders and the translation (local only; not run in CI).

    pip install atheris
    python tools/fuzz_atheris.py -max_total_time=600 [corpus_dir]

Each input is read as a config file of a format chosen by its first byte and translated to another
format. A NeoconvError is a clean outcome; any other exception (or a crash, or a hang past
-timeout) is a finding. The hypothesis suite in tests/test_fuzz.py checks the same contract in CI.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from translator.api import translate
    from translator.errors import NeoconvError
    from translator.registry import FORMATS

PAIRS = [(src, dst) for src in sorted(FORMATS) for dst in sorted(FORMATS) if FORMATS[dst].can_write]
WORKDIR = Path(tempfile.mkdtemp(prefix="neoconv-fuzz-"))


def one_input(data: bytes) -> None:
    if not data:
        return
    src, dst = PAIRS[data[0] % len(PAIRS)]
    path = WORKDIR / f"input{FORMATS[src].suffix}"
    path.write_bytes(data[1:])
    try:
        result = translate(str(path), src, dst)
        result.dump()
        result.report.render_table(verbose=True)
    except NeoconvError:
        pass


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
