"""When a finished translation fails a run: the statuses that fail (`--fail-on`, `--strict`), the
entries already accepted (`--baseline`), and the one mapping from an outcome to an exit code.

Exit codes: 0 done; 1 done, but a file failed, an output would change (--check), an entry fails
the policy, a comparison found differences or a validation problems; 2 bad invocation or input
(cli/run.py turns those exceptions into it); 130 interrupted.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ..core.errors import UsageError
from ..core.report import STRICT_FAILURES, Entry, Report, Status

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # the shell's convention for SIGINT
MATCHED = ("status", "source_key", "target_key", "fields", "file")  # what a baseline entry is compared on


@dataclass(frozen=True)
class Policy:
    fail_on: frozenset[Status] = frozenset()
    # accepted entries: each a mapping of some of MATCHED; an entry matching every key one gives is accepted
    baseline: tuple[tuple[tuple[str, Any], ...], ...] = ()
    baseline_file: str = ""

    def failures(self, report: Report, file: str | None = None) -> list[Entry]:
        """The entries that fail: a status in fail_on, and not accepted by the baseline (`file`: the
        source as batch names it, relative to its folder, for baseline entries that name files)."""
        return [e for e in report.entries if e.status in self.fail_on and not self.accepted(e, file)]

    def accepted(self, entry: Entry, file: str | None = None) -> bool:
        shown = _matchable(entry)
        return any(all(_matches(k, v, shown, file) for k, v in accepted) for accepted in self.baseline)


def _matches(key: str, wanted: Any, shown: dict[str, Any], file: str | None) -> bool:
    if key == "file":  # a glob of source paths (batch's relative names); a single translation has none
        return file is not None and fnmatch.fnmatchcase(file, wanted)
    return bool(shown.get(key) == wanted)


def _matchable(entry: Entry) -> dict[str, Any]:
    return {
        "status": entry.status.value,
        "source_key": entry.source_key,
        "target_key": entry.target_key,
        "fields": tuple(entry.fields),
    }


def parse_fail_on(text: str | None, strict: bool) -> frozenset[Status]:
    """`--fail-on lossy,unknown` -> statuses; `--strict` alone means lossy, unknown, missing."""
    if text is None:
        return STRICT_FAILURES if strict else frozenset()
    names = [n.strip() for n in text.split(",") if n.strip()]
    known = {s.value: s for s in Status}
    wrong = [n for n in names if n not in known]
    if wrong or not names:
        raise UsageError(f"--fail-on {text!r}: give report statuses separated by commas ({', '.join(known)})")
    return frozenset(known[n] for n in names)


def load_baseline(path: str | None) -> tuple[tuple[tuple[str, Any], ...], ...]:
    """Accepted entries from a JSON file: a previous report ({"entries": [...]}) or a list of entries.
    An entry may give only some of status, source_key, target_key and fields (its detail is ignored:
    a value's size may change while the loss stays the same): `{"status": "lossy", "fields":
    ["schedule.warmup_type"]}` accepts that loss wherever it appears; with `"file": "llama/*.yml"` only
    in those files of a batch (a glob of the source paths batch lists)."""
    if not path:
        return ()
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"--baseline {path}: cannot read it ({exc.strerror or exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"--baseline {path}: not JSON ({exc})") from None
    entries = data.get("entries") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise UsageError(f'--baseline {path}: expected a report ({{"entries": [...]}}) or a list of entries')
    return tuple(_accepted(e, path) for e in entries)


def _accepted(entry: dict[str, Any], path: str) -> tuple[tuple[str, Any], ...]:
    given = {k: entry[k] for k in MATCHED if k in entry}
    if "status" not in given or given["status"] not in {s.value for s in Status}:
        raise UsageError(f"--baseline {path}: every entry needs a report status (got {entry!r:.80})")
    if "fields" in given:
        fields = given["fields"]
        if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
            raise UsageError(f"--baseline {path}: fields must be a list of canonical field names (got {fields!r:.80})")
        given["fields"] = tuple(fields)
    if "file" in given and not isinstance(given["file"], str):
        raise UsageError(f"--baseline {path}: file must be a glob of source paths (got {given['file']!r:.80})")
    return tuple(given.items())


def policy(fail_on: str | None = None, strict: bool = False, baseline: str | None = None) -> Policy:
    return Policy(parse_fail_on(fail_on, strict), load_baseline(baseline), baseline or "")


@dataclass
class Outcome:
    """What a command ended with, as far as its exit code cares: every command returns one, and
    `code` is the one place an outcome becomes an exit code (exceptions are cli/run.py's: a
    NeoconvError is EXIT_ERROR, Ctrl-C EXIT_INTERRUPTED)."""

    failed: int = 0  # files that could not be translated (batch)
    changed: int = 0  # outputs that would change (batch --check, docs --check)
    policy_failures: int = 0  # entries failing the policy (--strict, --fail-on, not in --baseline)
    differences: int = 0  # what a comparison found: diff, roundtrip, validate's problems
    unrecorded: str = ""  # the run's own record (batch's summary) could not be written
    errors: int = 0  # inputs that could not be read at all, when the command went on with the others

    @property
    def code(self) -> int:
        if self.errors:
            return EXIT_ERROR
        bad = self.failed or self.changed or self.policy_failures or self.differences or self.unrecorded
        return EXIT_FAILED if bad else EXIT_OK


def exit_code(outcome: Outcome) -> int:
    return outcome.code


def describe(failures: Iterable[Entry]) -> str:
    """'2 lossy, 1 missing' for a summary line."""
    counts: dict[str, int] = {}
    for e in failures:
        counts[e.status.value] = counts.get(e.status.value, 0) + 1
    return ", ".join(f"{n} {s}" for s, n in counts.items())
