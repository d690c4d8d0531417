"""Running a probe: its jobs in one process of the framework's interpreter (its start-up, torch's
import, costs seconds), offline and without a GPU, in an empty folder; one answer per job."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .environments import Environment

DEFAULT_TIMEOUT = 1800.0  # seconds for one probe process (Model Zoo imports in ~30 s, steps a long run in minutes)
# no download (transformers, the HF hub), no GPU: a probe runs config code only
QUIET_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "CUDA_VISIBLE_DEVICES": "",
    "WANDB_MODE": "disabled",
    "PYTHONUNBUFFERED": "1",
}


@dataclass
class ProbeAnswer:
    """A probe's answer for one file, or why there is none (`problem`: the side could not be run)."""

    format: str
    result: dict[str, Any] | None
    problem: str | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "result": self.result,
            "problem": self.problem,
            "seconds": round(self.seconds, 2),
        }


def run(env: Environment, jobs: list[dict[str, Any]], *, timeout: float = DEFAULT_TIMEOUT) -> list[ProbeAnswer]:
    """Each job (a dict with "files" and the probe's other keys) probed by `env`; answers in order."""
    if env.problem:
        return [ProbeAnswer(env.format, None, env.problem) for _ in jobs]
    started = time.monotonic()
    numbered = [{**job, "id": i, "source": env.source} for i, job in enumerate(jobs)]
    with tempfile.TemporaryDirectory(prefix="neoconv-prove-") as work:
        listing = Path(work) / "jobs.jsonl"
        listing.write_text("".join(json.dumps(job) + "\n" for job in numbered), encoding="utf-8")
        try:
            proc = subprocess.run(
                [str(env.python), str(env.spec.path), str(listing)],
                cwd=work,
                env={**os.environ, **QUIET_ENV},
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            why = f"the {env.spec.framework} probe did not finish in {timeout:.0f} s (--timeout)"
            return [ProbeAnswer(env.format, None, why, time.monotonic() - started) for _ in jobs]
        except OSError as exc:
            why = f"the {env.spec.framework} interpreter {env.python} could not be started: {exc.strerror or exc}"
            return [ProbeAnswer(env.format, None, why, time.monotonic() - started) for _ in jobs]
    seconds = (time.monotonic() - started) / max(len(jobs), 1)
    answers: dict[int, dict[str, Any]] = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data.get("id"), int):
                answers[data["id"]] = data
    out = []
    for i in range(len(jobs)):
        data = answers.get(i)
        if data is None:
            tail = " | ".join(line for line in proc.stderr.strip().splitlines()[-3:])
            why = f"the {env.spec.framework} probe stopped without an answer (exit {proc.returncode}): {tail}"[:1500]
            out.append(ProbeAnswer(env.format, None, why, seconds))
        elif data.get("error"):
            stage = {
                "import": "could not import it",
                "stub": "relied on a stand-in",
                "gpu": "could not run it without a GPU",
            }.get(str(data.get("stage")), "failed")
            out.append(
                ProbeAnswer(env.format, None, f"the {env.spec.framework} probe {stage}: {data['error']}", seconds)
            )
        else:
            out.append(ProbeAnswer(env.format, data, None, seconds))
    return out


def check(env: Environment, *, timeout: float = 300.0) -> tuple[dict[str, Any] | None, str | None]:
    """Can `env` run its probe? (the framework's name and version, or why not): the probe loads the
    framework and nothing else."""
    if env.problem:
        return None, env.problem
    with tempfile.TemporaryDirectory(prefix="neoconv-prove-") as work:
        listing = Path(work) / "jobs.jsonl"
        listing.write_text(json.dumps({"id": 0, "files": [], "source": env.source}) + "\n", encoding="utf-8")
        try:
            proc = subprocess.run(
                [str(env.python), str(env.spec.path), "--check", str(listing)],
                cwd=work,
                env={**os.environ, **QUIET_ENV},
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except (subprocess.TimeoutExpired, OSError) as exc:
            return None, f"the {env.spec.framework} interpreter {env.python} did not answer: {exc}"
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if data.get("error"):
                return None, str(data["error"])
            return data.get("framework") or {}, None
    tail = " | ".join(proc.stderr.strip().splitlines()[-2:])
    return None, f"the {env.spec.framework} probe gave no answer (exit {proc.returncode}): {tail}"[:1000]
