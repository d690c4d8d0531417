"""A porting tool that calls neoconv as a library, as its authors would write it; tests/test_types.py
checks it with `mypy --strict` against the installed package (its py.typed and explicit exports)."""

from __future__ import annotations

import sys
from pathlib import Path

import neoconv
from neoconv import Entry, InputError, NeoconvError, Report, Status, Translation, UsageError, dump, load, translate
from neoconv.core.errors import OutputError


def losses(report: Report) -> list[Entry]:
    return [entry for entry in report.entries if entry.status in (Status.LOSSY, Status.DROPPED)]


def port(path: Path, world_size: int) -> str:
    try:
        result: Translation = translate(str(path), src="neox", dst="cerebras", world_size=world_size)
    except InputError as exc:
        raise SystemExit(f"{exc.file}:{exc.line}: {exc.message}") from None
    except (UsageError, OutputError, NeoconvError) as exc:
        raise SystemExit(str(exc)) from None
    counts: dict[str, int] = result.report.summary()
    print(neoconv.__version__, counts.get(Status.LOSSY.value, 0), [e.source_key for e in losses(result.report)])
    return result.dump()


def reread(text_path: Path) -> str:
    source = load(str(text_path), "cerebras")
    return dump(source.tree, "cerebras")


if __name__ == "__main__":
    sys.stdout.write(port(Path(sys.argv[1]), int(sys.argv[2])))
