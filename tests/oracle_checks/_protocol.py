"""What every check program shares: jobs in, one verdict line per job out.

The check programs run under each framework's own interpreter (see tests/oracle.py), so this module
uses the standard library only and nothing of neoconv.

Jobs: `check.py --jobs FILE` reads one JSON object per line, `{"id": ..., "files": [...], ...}`
(the other keys are the program's own: world size, override values); or, by hand,
`check.py [--world N] FILE...` makes one job per file. Each job prints exactly one line on stdout:

    {"id": ..., "verdict": "accepted" | "rejected" | "error", "error": "<ExceptionType>: <message>" | null, "values": {...}}

"rejected" means the framework's own code raised (inside a `with framework():` block); "error" means
the check program itself failed (a fault to fix here, never counted as the framework's verdict).

`values` holds what the framework derived (batch sizes, peak learning rate, ...), for the tests to
compare with what neoconv meant. Frameworks print freely, so from the moment this module is imported
the verdict lines go to the original stdout and everything else written to fd 1 goes to stderr. Exit code: 0 when every job was
accepted, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any

# what the check programs share with neoconv's probes (translator/prove/probes/_probe.py, standard library only):
# one copy of the result stream, the framework() block and its exceptions, plain(), and the stand-ins
PROBES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "translator", "prove", "probes")
sys.path.insert(0, os.path.normpath(PROBES))

from _probe import RESULT as VERDICTS  # noqa: E402 - at import, before any framework module: some print then
from _probe import Refused, StubUsed, describe, framework  # noqa: E402
from _probe import plain as _plain  # noqa: E402

__all__ = ["PROBES", "Refused", "StubUsed", "VERDICTS", "describe", "framework", "plain", "serve", "set_dotted"]


def _jobs(argv: list[str] | None) -> Iterator[dict[str, Any]]:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", help="JSON lines, one job per line")
    parser.add_argument("--world", type=int, default=8, help="world size (GPUs) for jobs given as files")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args(argv)
    if args.jobs:
        with open(args.jobs) as handle:
            for line in handle:
                if line.strip():
                    yield json.loads(line)
    for path in args.files:
        yield {"id": path, "files": [path], "world": args.world}


def serve(check: Callable[[dict[str, Any]], dict[str, Any]], argv: list[str] | None = None) -> int:
    """Run `check` on every job; it returns the derived values, or raises Refused."""
    out = VERDICTS
    failed = 0
    for job in _jobs(argv):
        try:
            values = check(job)
            line = {"id": job["id"], "verdict": "accepted", "error": None, "values": values}
        except Refused as exc:
            failed += 1
            line = {"id": job["id"], "verdict": "rejected", "error": str(exc), "values": {}}
        except Exception as exc:  # noqa: BLE001 - the check program's own fault: said apart, with a traceback
            traceback.print_exc()
            failed += 1
            line = {"id": job["id"], "verdict": "error", "error": describe(exc), "values": {}}
        out.write(json.dumps(line, default=repr) + "\n")
    out.flush()
    return 1 if failed else 0


def plain(value: Any) -> Any:
    """A JSON-able copy of a framework value, infinities and NaN kept (the tests compare them)."""
    return _plain(value, finite=False)


def set_dotted(tree: dict[str, Any], dotted: str, value: Any) -> None:
    """tree[a][b][c] = value for "a.b.c", creating the dicts on the way."""
    *parents, leaf = dotted.split(".")
    node = tree
    for key in parents:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[leaf] = value
