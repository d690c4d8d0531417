"""Running a probe: its jobs in one process of the framework's interpreter (its start-up, torch's
import, costs seconds), offline and without a GPU, in an empty folder; one answer per job."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
# the probe's end of a pipe only neoconv writes to: when neoconv is gone (killed, or its parent dying
# with it), the probe reads its end closed and stops itself and everything it started (probes/_probe.py)
LIFELINE = "NEOCONV_PROBE_LIFELINE"
_LIVE: set[subprocess.Popen[str]] = set()  # probe processes running now (one per side)
_LIVE_LOCK = threading.Lock()


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


def _probe_process(argv: list[str], work: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run a probe to its end in a session of its own (what it starts is its process group), holding
    the write end of its lifeline; on a timeout or an interrupt (Ctrl-C) the whole group is killed."""
    lifeline, held = os.pipe()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=work,
            env={**os.environ, **QUIET_ENV, LIFELINE: str(lifeline)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            pass_fds=(lifeline,),
            start_new_session=True,
        )
    except BaseException:
        os.close(held)
        raise
    finally:
        os.close(lifeline)
    with _LIVE_LOCK:
        _LIVE.add(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        _kill(proc)
        raise
    finally:
        os.close(held)
        with _LIVE_LOCK:
            _LIVE.discard(proc)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _kill(proc: subprocess.Popen[str]) -> None:
    """The probe's process group (the probe and what it started), then the probe reaped."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:  # gone already
        pass
    try:
        proc.communicate(timeout=10)
    except (subprocess.TimeoutExpired, ValueError, OSError):  # its pipes already read by a thread interrupted
        pass


@contextmanager
def probes_die_with_this() -> Iterator[None]:
    """Around waiting for probes run by other threads: an interrupt (Ctrl-C) of this one kills them
    first (a thread waiting on its probe sees no KeyboardInterrupt)."""
    try:
        yield
    except BaseException:
        with _LIVE_LOCK:
            running = list(_LIVE)
        for proc in running:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
        raise


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
            proc = _probe_process([str(env.python), str(env.spec.path), str(listing)], work, timeout)
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
            proc = _probe_process([str(env.python), str(env.spec.path), "--check", str(listing)], work, timeout)
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
