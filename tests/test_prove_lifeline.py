"""A killed `neoconv prove` leaves no probe running: SIGTERM, Ctrl-C (SIGINT) or SIGKILL (its parent
dying with it) while both sides' probes run, and each probe, with the process it started, is gone.

The probes here stand in for a framework that takes long: each imports the shipped probes' `_probe`
(whose lifeline is what is tested), starts a child process, writes both ids and sleeps."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neoconv.prove.probes import HERE

pytestmark = pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")

SLOW_PROBE = f"""
import os, subprocess, sys, time
sys.path.insert(0, {str(HERE)!r})
import _probe  # the shipped probes' common module: it watches neoconv's lifeline
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open(os.path.join(os.environ["SLOW_PROBE_PIDS"], str(os.getpid())), "w") as handle:
    handle.write(f"{{os.getpid()}} {{child.pid}}")
time.sleep(120)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (dead, not yet reaped by an exited parent) counts as gone
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def wait_for(condition: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_killing_prove_kills_its_probes_and_what_they_started(tmp_path: Path, how: signal.Signals) -> None:
    probe = tmp_path / "slow_probe.py"
    probe.write_text(SLOW_PROBE)
    interpreter = tmp_path / "python"  # an interpreter that runs the slow probe whatever probe it is given
    interpreter.write_text(f'#!/bin/sh\nexec {sys.executable} {probe} "$@"\n')
    interpreter.chmod(0o755)
    pids = tmp_path / "pids"
    pids.mkdir()
    (tmp_path / "ds.json").write_text('{"train_batch_size": 8}\n')
    (tmp_path / "config.json").write_text('{"model_type": "llama"}\n')
    command = [sys.executable, "-m", "neoconv", "prove", "ds.json", "config.json", "--from-a", "deepspeed"]
    command += ["--from-b", "hf", "--env", f"deepspeed={interpreter}", "--env", f"hf={interpreter}"]
    env = {**os.environ, "SLOW_PROBE_PIDS": str(pids)}
    prove = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: len(list(pids.iterdir())) == 2, 60), "both probes should have started"
        time.sleep(0.3)  # the files are written whole
        started = [int(pid) for f in pids.iterdir() for pid in f.read_text().split()]
        assert len(started) == 4 and all(alive(pid) for pid in started)
        prove.send_signal(how)
        prove.wait(timeout=30)
        assert wait_for(lambda: not any(alive(pid) for pid in started), 20), [p for p in started if alive(p)]
    finally:
        if prove.poll() is None:
            prove.kill()
            prove.wait(timeout=30)
        for f in pids.iterdir():
            for pid in f.read_text().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
