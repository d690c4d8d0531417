"""The `oracle` tier's runner: each framework's own config code, run by that framework's interpreter.

The check programs (tests/oracle_checks/check_*.py) run in the frameworks' environments, which
neoconv's does not have to share (torch, DeepSpeed, Model Zoo, VeOmni pin incompatible versions).
Each is given by environment variables (tools/oracle_setup.sh builds them all and writes them to
an env file to source):

| oracle          | interpreter                    | source tree                  |
| neox            | NEOCONV_ORACLE_NEOX            | NEOX_SRC (GPT-NeoX checkout) |
| deepspeed       | NEOCONV_ORACLE_DEEPSPEED       | (the installed deepspeed)    |
| deepspeed-old   | NEOCONV_ORACLE_DEEPSPEED_OLD   | (an older deepspeed release) |
| cerebras        | NEOCONV_ORACLE_CEREBRAS        | MODELZOO_SRC (Model Zoo src) |
| veomni          | NEOCONV_ORACLE_VEOMNI          | VEOMNI_SRC (nested layout)   |
| veomni-flat     | NEOCONV_ORACLE_VEOMNI          | VEOMNI_FLAT_SRC (flat layout)|
| hf              | NEOCONV_ORACLE_HF              | (the installed transformers) |
| hf-torch        | NEOCONV_ORACLE_HF              | (transformers 5.23 and torch)|
| hftrainer       | NEOCONV_ORACLE_HFTRAINER       | (transformers 5.23, accelerate, deepspeed, torch) |
| hftrainer-4     | NEOCONV_ORACLE_HFTRAINER_4     | (the same with transformers 4.57) |

`unavailable(name)` says why one cannot run (tests skip with that reason); `run(name, jobs)` runs a
batch of jobs in one process (start-up of torch-based code costs seconds) and returns one Verdict
per job.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHECKS = Path(__file__).resolve().parent / "oracle_checks"


@dataclass(frozen=True)
class Oracle:
    name: str
    script: str
    python_var: str
    source_var: str | None = None
    source_marker: str = ""  # a path inside the source tree that must exist
    on_pythonpath: bool = False  # the framework package is imported from the source tree


ORACLES = {
    o.name: o
    for o in [
        Oracle("neox", "check_neox.py", "NEOCONV_ORACLE_NEOX", "NEOX_SRC", "megatron/neox_arguments"),
        Oracle("deepspeed", "check_deepspeed.py", "NEOCONV_ORACLE_DEEPSPEED"),
        Oracle("deepspeed-old", "check_deepspeed.py", "NEOCONV_ORACLE_DEEPSPEED_OLD"),
        Oracle("cerebras", "check_cerebras.py", "NEOCONV_ORACLE_CEREBRAS", "MODELZOO_SRC", "cerebras/modelzoo"),
        Oracle("veomni", "check_veomni.py", "NEOCONV_ORACLE_VEOMNI", "VEOMNI_SRC", "veomni/arguments", True),
        Oracle("veomni-flat", "check_veomni.py", "NEOCONV_ORACLE_VEOMNI", "VEOMNI_FLAT_SRC", "veomni/arguments", True),
        Oracle("hf", "check_hf.py", "NEOCONV_ORACLE_HF"),
        # check_hf.py's meta-device builds (parameter counts) need torch: the hf environment has it (and the
        # transformers release the HF tables follow, 5.23, which defines the newest types)
        Oracle("hf-torch", "check_hf.py", "NEOCONV_ORACLE_HF"),
        # the HF Trainer's TrainingArguments, HfTrainerDeepSpeedConfig and get_scheduler, at a 5.x and a 4.x release
        Oracle("hftrainer", "check_hftrainer.py", "NEOCONV_ORACLE_HFTRAINER"),
        Oracle("hftrainer-4", "check_hftrainer.py", "NEOCONV_ORACLE_HFTRAINER_4"),
    ]
}
SETUP = "tools/oracle_setup.sh builds them; then `. /tmp/neoconv-oracle/oracle.env`"


@dataclass
class Verdict:
    id: str
    verdict: str  # accepted | rejected | error (the check program failed, not the framework)
    error: str | None = None
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        return self.verdict == "accepted"


def unavailable(name: str) -> str | None:
    """Why oracle `name` cannot run here (None when it can)."""
    oracle = ORACLES[name]
    python = os.environ.get(oracle.python_var)
    if not python:
        return f"${oracle.python_var} is not set (the {name} oracle's interpreter; {SETUP})"
    if not os.access(python, os.X_OK):
        return f"${oracle.python_var}={python} is not an executable"
    if oracle.source_var:
        source = os.environ.get(oracle.source_var)
        if not source:
            return f"${oracle.source_var} is not set (the {name} source tree; {SETUP})"
        if not (Path(source) / oracle.source_marker).exists():
            return f"${oracle.source_var}={source} has no {oracle.source_marker}"
    return None


def run(name: str, jobs: Iterable[dict[str, Any]], *, timeout: float = 1800) -> dict[str, Verdict]:
    """Run `jobs` (dicts with a unique "id") through oracle `name` in one process."""
    jobs = list(jobs)
    if not jobs:
        return {}
    why = unavailable(name)
    if why:
        raise RuntimeError(why)
    oracle = ORACLES[name]
    env = dict(os.environ)
    if oracle.source_var and oracle.on_pythonpath:
        env["PYTHONPATH"] = os.environ[oracle.source_var]
    with tempfile.TemporaryDirectory(prefix=f"neoconv-oracle-{name}-") as work:
        listing = Path(work) / "jobs.jsonl"
        listing.write_text("".join(json.dumps(job) + "\n" for job in jobs))
        # cwd: frameworks create folders relative to it (NeoX's logs, Cerebras' model_dir)
        proc = subprocess.run(
            [os.environ[oracle.python_var], str(CHECKS / oracle.script), "--jobs", str(listing)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    out: dict[str, Verdict] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            data = json.loads(line)
            out[data["id"]] = Verdict(data["id"], data["verdict"], data.get("error"), data.get("values") or {})
    for job in jobs:  # the process died before reaching them
        if job["id"] not in out:
            tail = " | ".join(proc.stderr.strip().splitlines()[-5:])
            out[job["id"]] = Verdict(job["id"], "error", f"no verdict (exit {proc.returncode}): {tail}"[:2000])
    return out


def run_many(batches: dict[str, list[dict[str, Any]]], *, workers: int = 2) -> dict[str, dict[str, Verdict]]:
    """Several oracles' batches, `workers` processes at a time."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {name: pool.submit(run, name, jobs) for name, jobs in batches.items() if jobs}
        return {name: future.result() for name, future in futures.items()}
