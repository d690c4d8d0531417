"""What every probe shares: the job in, one JSON result out, the record of stand-ins, the learning
rate curve and the parameter count on the meta device.

A probe runs under a framework's own interpreter (`python NAME_probe.py JOBS.jsonl`), so this module
uses the standard library only and nothing of neoconv. Each line of JOBS.jsonl is one job:

    {"id": ..., "files": [...], "world_size": 8, "source": "/path/to/checkout" | null,
     "lr_at": [steps...], "grid_steps": N | null, "steps_hint": N | null, "count_parameters": true, ...}

(a probe may read more keys: Model Zoo's `model_name`, Megatron's `argv`). For each job one line
is printed on the original stdout (frameworks print freely: from the moment this module is
imported, everything else written to fd 1 goes to stderr):

    {"id": ..., "probe": NAME, "protocol": 1, "framework": {"name", "version", ...},
     "accepted": bool, "message": the framework's own message when it refused the file,
     "stubs": [{"name", "why", "calls"}], "run": {...}, "model": {...}, "lr": {...} | null,
     "parameters": {...} | null, "notes": [...]}

`stubs` lists every stand-in the probe installed and how often it ran in this process (0: installed,
never needed). When the probe itself cannot run the framework (not importable, no source tree)
the line is `{"id": ..., "probe": NAME, "protocol": 1, "error": "...", "stage": "import" |
"probe" | "stub"}` and the exit code is 3; otherwise it is 0, whatever the frameworks' verdicts.

Every probe module defines `PROBE` (a literal dict neoconv reads without importing the module:
the framework's name, what the interpreter must import, where its source tree comes from, how to
install it), `load(job)` and `probe(job, result)`, and ends with `sys.exit(main(NAME, load, probe))`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterator
from typing import Any

PROTOCOL = 1
MAX_MESSAGE = 2000  # characters of a framework message kept (pydantic lists every field)
FULL_CURVE = 5000  # runs up to this many steps are recorded at every step
GRID = 2000  # longer runs: this many evenly spaced steps, plus the phase boundaries
MAX_STEPS = 5_000_000  # a scheduler is stepped at most this far (a run of more steps says so)
EXIT_PROBE_FAILED = 3


def _result_stream() -> Any:
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # framework prints (NeoX's argument dump, banners) go to stderr
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    return out


RESULT = _result_stream()  # at import, before any framework module is imported: some print then
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def describe(exc: BaseException) -> str:
    """An exception as one line: its type and its own message (colours and blank lines removed); a
    bare `assert` says nothing, so its place and line of code are given instead."""
    text = " | ".join(line.strip() for line in ANSI.sub("", str(exc)).splitlines() if line.strip())
    if not text and exc.__traceback__ is not None:
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        text = f"at {'/'.join(frame.filename.split(os.sep)[-3:])}:{frame.lineno}: {(frame.line or '').strip()}"
    return f"{type(exc).__name__}: {text}"[:MAX_MESSAGE]


class Refused(Exception):
    """The framework's own code raised: it does not accept the file."""

    def __init__(self, cause: BaseException | str) -> None:
        super().__init__(cause if isinstance(cause, str) else describe(cause))


class CannotRun(Exception):
    """The probe cannot run the framework here (not importable, no source tree): not a verdict."""

    def __init__(self, message: str, stage: str = "import") -> None:
        super().__init__(message)
        self.stage = stage


class StubUsed(Exception):
    """A stand-in that must not matter was relied on: the verdict would not be the framework's."""


GPU_ASKED = re.compile(r"NVIDIA driver|not compiled with CUDA|CUDA driver|no CUDA GPUs|cuda runtime", re.I)


@contextlib.contextmanager
def framework() -> Iterator[None]:
    """Around the framework's own calls: what they raise is the framework refusing the file, unless
    it failed asking for a GPU (a probe never uses one: then it could not run, which is no verdict)."""
    try:
        yield
    except (StubUsed, CannotRun):
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - frameworks raise anything; argparse exits
        if GPU_ASKED.search(str(exc)):
            raise CannotRun(f"the framework asked for a GPU, which a probe never uses: {describe(exc)}", "gpu") from exc
        raise Refused(exc) from exc


class Stubs:
    """The stand-ins a probe installs, and how often each ran: the result lists them all."""

    def __init__(self) -> None:
        self.known: dict[str, dict[str, Any]] = {}

    def add(self, name: str, why: str) -> None:
        self.known.setdefault(name, {"name": name, "why": why, "calls": 0})

    def ran(self, name: str) -> None:
        self.known[name]["calls"] += 1

    def wrap(self, name: str, why: str, func: Callable[..., Any]) -> Callable[..., Any]:
        """`func` standing in for a framework function; each call is counted under `name`."""
        self.add(name, why)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.ran(name)
            return func(*args, **kwargs)

        return counted

    def listing(self) -> list[dict[str, Any]]:
        return list(self.known.values())


STUBS = Stubs()


class Result(dict):  # type: ignore[type-arg]
    """The probe's answer: a dict with the protocol's keys."""

    def note(self, text: str) -> None:
        self["notes"].append(text)


def plain(value: Any) -> Any:
    """A JSON-able copy of a framework value (enums, paths, tuples, numpy scalars)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    for kind in (int, float):  # numpy and torch scalars
        try:
            if hasattr(value, "item"):
                return plain(kind(value.item()) if kind is float else value.item())
        except (TypeError, ValueError):
            pass
    return repr(value)


def package_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def source_revision(path: str) -> str | None:
    """The commit of a source checkout (a .git folder or file beside it), read without running git."""
    head = os.path.join(path, ".git", "HEAD")
    try:
        with open(head) as handle:
            ref = handle.read().strip()
        if ref.startswith("ref: "):
            with open(os.path.join(path, ".git", *ref[5:].split("/"))) as handle:
                return handle.read().strip()[:12]
        return ref[:12]
    except OSError:
        return None


def need_source(job: dict[str, Any], marker: str, what: str) -> str:
    """The framework's source tree from the job (`--src`), on sys.path; CannotRun when it is absent."""
    src = job.get("source")
    if not src:
        raise CannotRun(f"{what} is used from a source checkout: give it with --src (no source tree was named)")
    if not os.path.exists(os.path.join(src, marker)):
        raise CannotRun(f"{src} is not a {what} source tree (it has no {marker})")
    sys.path.insert(0, src)
    return str(src)


class LrCurve:
    """The learning rate at each optimizer step (step 0 is the first update), as the probe steps the
    framework's own scheduler: every step of runs up to FULL_CURVE steps; of longer runs, a grid of
    about GRID steps (spaced over the job's `grid_steps`, the longer of both files' runs, so that
    both sides record the same steps), the steps the job asks for (`lr_at`: both files' phase
    boundaries as neoconv reads them), and every step where the curve bends (a phase boundary: the
    change of slope is more than a millionth of the peak), each with its neighbours."""

    def __init__(self, total: int, job: dict[str, Any] | None = None) -> None:
        job = job or {}
        self.total = total
        self.every = total <= FULL_CURVE
        stride = max(1, max(total, int(job.get("grid_steps") or 0)) // GRID)
        self.keep = set(range(0, total, stride)) | {total - 1} if not self.every else set()
        for step in job.get("lr_at") or ():
            self.keep |= {step - 1, step, step + 1}
        self.points: dict[int, float] = {}
        self.previous: list[float] = []  # the last two rates
        self.peak = 0.0
        self.stepped = 0

    def record(self, step: int, rate: float) -> None:
        rate = float(rate)
        self.stepped = step + 1
        self.peak = max(self.peak, abs(rate))
        if self.every or step in self.keep:
            self.points[step] = rate
        elif len(self.previous) == 2:
            bend = abs((rate - self.previous[1]) - (self.previous[1] - self.previous[0]))
            if bend > 1e-6 * max(self.peak, 1e-300):
                for back, value in ((1, self.previous[1]), (2, self.previous[0])):
                    self.points.setdefault(step - back, value)
                self.points[step] = rate
                self.keep.add(step + 1)
        self.previous = (self.previous + [rate])[-2:]

    def result(self, scheduler: str, relative: bool = False) -> dict[str, Any]:
        steps = sorted(self.points)
        return {
            "scheduler": scheduler,
            "total_steps": self.total,
            "stepped": self.stepped,
            "complete": self.stepped >= self.total,
            "every_step": self.every,
            "relative": relative,
            "steps": steps,
            "values": [self.points[s] for s in steps],
        }


def steps_to_run(total: int | None, job: dict[str, Any], result: Result, own: str) -> int | None:
    """How many steps to step a scheduler: the run's own (`own` says where from), else the job's
    hint (the other file's run length; said in the notes), capped at MAX_STEPS."""
    if total is None or total <= 0:
        hint = job.get("steps_hint")
        if not hint:
            return None
        result.note(f"{own}; the learning rate is stepped over {hint} steps, the other file's run length")
        total = int(hint)
    if total > MAX_STEPS:
        result.note(f"the run has {total} steps; its scheduler was stepped over the first {MAX_STEPS}")
        total = MAX_STEPS
    return int(total)


def count_meta(build: Callable[[int], Any], vocab: int | None, placeholder: int) -> dict[str, Any]:
    """Parameters of the model `build(vocab)` makes on torch's meta device (no memory, no weights),
    counted once per tensor (tied weights once). The count of the vocabulary-sized matrices per
    token comes from a second build with one more row of vocabulary; a format that does not know
    its vocabulary (NeoX leaves it to the tokenizer files) is built with `placeholder` rows and its
    total is not given."""
    import torch

    def count(rows: int) -> int:
        with torch.device("meta"):
            model = build(rows)
        return sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())

    rows = vocab if vocab else placeholder
    first = count(rows)
    per_row = count(rows + 1) - first
    return {
        "total": first if vocab else None,
        "vocab": vocab,
        "per_vocab_row": per_row,
        "without_vocab": first - per_row * rows,
        "how": "built on the meta device",
    }


def _jobs(path: str) -> list[dict[str, Any]]:
    with open(path) if path != "-" else contextlib.nullcontext(sys.stdin) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main(
    name: str,
    load: Callable[[dict[str, Any]], dict[str, Any]],
    probe: Callable[[dict[str, Any], Result], None],
    argv: list[str] | None = None,
) -> int:
    """`PROBE.py [--check] JOBS.jsonl` ('-': stdin): one job per line, one result line per job (with
    the job's "id"). `load(job)` imports the framework once (it answers the framework's name and
    version; CannotRun when it cannot); `probe(job, result)` fills the result. `--check`: only load,
    and print the framework's name and version. Exit 0 when every job ran, 3 otherwise."""
    args = sys.argv[1:] if argv is None else argv
    check = bool(args) and args[0] == "--check"
    args = args[1:] if check else args
    if len(args) != 1:
        RESULT.write(
            json.dumps(
                {"probe": name, "protocol": PROTOCOL, "error": "usage: PROBE.py [--check] JOBS.jsonl", "stage": "probe"}
            )
            + "\n"
        )
        return EXIT_PROBE_FAILED
    code = 0
    loaded: dict[str, Any] = {}
    for job in _jobs(args[0]):
        result = Result(
            id=job.get("id"),
            probe=name,
            protocol=PROTOCOL,
            framework={},
            accepted=None,
            message=None,
            stubs=[],
            run={},
            model={},
            lr=None,
            parameters=None,
            notes=[],
        )
        try:
            if "framework" not in loaded:  # the framework is imported once per process
                loaded["framework"] = load(job)
            result["framework"] = loaded["framework"]
            if not check:
                probe(job, result)
                if result["accepted"] is None:
                    result["accepted"] = True
        except Refused as exc:
            result["accepted"], result["message"] = False, str(exc)
        except CannotRun as exc:
            result = Result(id=job.get("id"), probe=name, protocol=PROTOCOL, error=str(exc), stage=exc.stage)
            code = EXIT_PROBE_FAILED
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the probe's own fault (a framework exiting outside
            traceback.print_exc()  # its config code, too): said apart, with a traceback on stderr
            stage = "stub" if isinstance(exc, StubUsed) else "import" if "framework" not in loaded else "probe"
            result = Result(id=job.get("id"), probe=name, protocol=PROTOCOL, error=describe(exc), stage=stage)
            code = EXIT_PROBE_FAILED
        result["stubs"] = STUBS.listing()
        RESULT.write(json.dumps(result, default=repr) + "\n")
        RESULT.flush()
    return code
