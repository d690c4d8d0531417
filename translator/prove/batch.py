"""`batch --prove`: a certificate per written file, proven once the whole tree is written (each side's
files in one process of its framework), recorded in the batch's per-file report (each file's
`proof`, and `proofs` counts) and in its summary lines."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..core.errors import printable
from .certificate import Certificate

PROVEN, NOT_PROVEN, NOT_RUN = "proven", "not proven", "not run"


def verdict(cert: Certificate) -> str:
    return NOT_RUN if cert.could_not_run else NOT_PROVEN if cert.unnamed else PROVEN


def prove_batch(
    to_prove: list[tuple[str, str, dict[str, Any]]], src_root: str, out_root: str, src: str, dst: str, options: Any
) -> dict[str, Certificate]:
    """Certificates by source (relative to SRC_DIR, as the per-file report names it)."""
    from . import pair_of, prove_many

    pairs = [
        pair_of((os.path.join(src_root, rel),), os.path.join(out_root, out), dst, report, "the translation's report")
        for rel, out, report in to_prove
    ]
    return dict(zip((rel for rel, _, _ in to_prove), prove_many(pairs, src, dst, options)))


def counts(certs: dict[str, Certificate]) -> dict[str, int]:
    out: dict[str, int] = {}
    for cert in certs.values():
        out[verdict(cert)] = out.get(verdict(cert), 0) + 1
    return out


def record(summary_file: Path, certs: dict[str, Certificate]) -> str:
    """Add each file's proof to the batch's per-file report (rewritten whole, atomically); '' when
    done, else why it could not be."""
    from ..io.outputs import replace_file

    try:
        data = json.loads(summary_file.read_text(encoding="utf-8"))
        for entry in data.get("files", ()):
            cert = certs.get(entry.get("source"))
            if cert is not None:
                entry["proof"] = {"verdict": verdict(cert), **cert.summary()}
        data["proofs"] = counts(certs)
        replace_file(str(summary_file), json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    except (OSError, ValueError) as exc:
        return f"{summary_file}: the proofs could not be recorded ({exc})"
    return ""


def summary_lines(certs: dict[str, Certificate]) -> str:
    """One line per file not proven, then the counts."""
    lines = []
    for source, cert in certs.items():
        if verdict(cert) != PROVEN:
            lines.append(f"{verdict(cert):<11} {printable(source)}: {printable(cert.verdict)}")
    shown = ", ".join(f"{n} {name}" for name, n in sorted(counts(certs).items()))
    lines.append(f"neoconv prove: {shown or 'no file written to prove'}")
    return "\n".join(lines) + "\n"
