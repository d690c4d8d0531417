"""Record a `neoconv prove --json` run as a fixture of the default test tier (fixtures/prove/CASE/):
each side's probe answer (a.json, b.json), the translation's report (report.json) and what was run
(case.json: the command, the formats, the frameworks' versions). Absolute paths are cut to file
names: the answers are the probes' output, not the inputs.

    neoconv prove SRC OUT --report R.json --world-size 8 --json > cert.json
    python tools/prove_record.py CASE cert.json R.json --command "neoconv prove ..."
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ABSOLUTE = re.compile(r"(?<![\w.])/(?:[\w.+-]+/)+([\w.+-]+)")


def scrub(value: Any) -> Any:
    """Every absolute path in a value cut to its last part (a file or folder name)."""
    if isinstance(value, str):
        return ABSOLUTE.sub(lambda m: m.group(1), value)
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("case")
    parser.add_argument("certificate", help="the JSON `neoconv prove --json` printed")
    parser.add_argument("report", help="the translation's JSON report")
    parser.add_argument("--command", required=True, help="the translation and prove commands, as run")
    args = parser.parse_args()
    cert = json.loads(Path(args.certificate).read_text())
    folder = ROOT / "fixtures" / "prove" / args.case
    folder.mkdir(parents=True, exist_ok=True)
    for side in ("a", "b"):
        result = cert[side]["result"]
        if result is None:
            raise SystemExit(f"side {side} did not run: {cert[side]['problem']}")
        (folder / f"{side}.json").write_text(json.dumps(scrub(result), separators=(",", ":")) + "\n")
    report = json.loads(Path(args.report).read_text())
    (folder / "report.json").write_text(json.dumps(scrub(report), indent=1) + "\n")
    case = {
        "command": scrub(args.command),
        "a": os.path.basename(cert["a"]["file"]),
        "b": os.path.basename(cert["b"]["file"]),
        "a_format": cert["a"]["format"],
        "b_format": cert["b"]["format"],
        "world_size": cert["world_size"],
        "verdict": cert["verdict"],
        "exit_code": cert["exit_code"],
    }
    (folder / "case.json").write_text(json.dumps(case, indent=1) + "\n")


if __name__ == "__main__":
    main()
