"""`neoconv prove` on a source its own release refuses for a key the translation's report names
`unknown` (a fork's value): the refusal is named by the report, never an unnamed difference; the
source is probed again without the named keys and the rest of the run is compared. The probes'
answers are the recorded ones (fixtures/prove), changed the way the framework answers (the oracle
tier runs the real one: tests/test_prove_oracle.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

from neoconv.prove import Pair, ProveOptions, prove_many
from neoconv.prove.compare import DIFFERENT, EQUAL
from neoconv.prove.named import named_keys
from neoconv.prove.runner import ProbeAnswer

CASE = FIXTURES / "prove" / "neox2cerebras-legacy"
OUTPUT: dict[str, Any] = {}
FORK_KEY = "use_fork_fused_rope"
REFUSAL = f"ValueError: Key {FORK_KEY} is not a NeoX argument"  # what the stand-in framework says


def recorded(name: str) -> dict[str, Any]:
    return json.loads((CASE / f"{name}.json").read_text())


@pytest.fixture
def fork_refused(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """NeoX refuses the source while it holds the fork's key and accepts it without (as its
    validate_keys does); Model Zoo accepts the output (OUTPUT's answer when a test puts one there).
    Returns the NeoX jobs in the order run."""
    seen: list[dict[str, Any]] = []

    def fake_run(env: Any, jobs: list[dict[str, Any]], *, timeout: float = 0) -> list[ProbeAnswer]:
        if env.format == "cerebras":
            return [ProbeAnswer("cerebras", copy.deepcopy(OUTPUT.get("b") or recorded("b"))) for _ in jobs]
        out = []
        for job in jobs:
            seen.append(job)
            result = recorded("a")
            if FORK_KEY in (job.get("without") or ()):
                result["without"] = [FORK_KEY]
            else:
                result.update(accepted=False, message=REFUSAL, lr=None, parameters=None)
            out.append(ProbeAnswer("neox", result))
        return out

    monkeypatch.setattr("neoconv.prove.run", fake_run)
    return seen


def report(*extra: dict[str, Any]) -> dict[str, Any]:
    found = recorded("report")
    found["entries"] = [*found["entries"], *extra]
    return found


UNKNOWN = {"source_key": FORK_KEY, "target_key": None, "status": "unknown", "fields": [], "kind": "unknown"}


def certify(tmp_path: Path, given: dict[str, Any] | None) -> Any:
    src = tmp_path / "src.yml"
    src.write_text(f'{{"train_iters": 10, "{FORK_KEY}": true}}\n')
    pair = Pair((str(src),), str(tmp_path / "out.yaml"), given, "r.json" if given else None)
    return prove_many([pair], "neox", "cerebras", ProveOptions(world_size=8))[0]


def test_a_source_refused_for_a_key_the_report_names_unknown_is_named_and_the_rest_compared(
    fork_refused: list[dict[str, Any]], tmp_path: Path
) -> None:
    cert = certify(tmp_path, report(UNKNOWN))
    # probed as it is first (the release's verdict), then without the named key
    assert [job.get("without") for job in fork_refused] == [None, [FORK_KEY]]
    accepted = cert.rows[0]
    assert (accepted.name, accepted.a, accepted.b, accepted.status) == ("accepted", False, True, DIFFERENT)
    assert accepted.named and accepted.report == ("unknown",) and REFUSAL in accepted.note
    # the rest of the run is compared: every figure as recorded
    figures = {r.name: r.status for r in cert.rows[1:] if r.core}
    assert figures == {n: EQUAL for n in ("learning rate", "global batch", "steps", "parameters")} | {
        "tokens per step": "n/a"
    }
    assert cert.unnamed == [] and cert.code == 0
    assert cert.verdict.startswith(f"proven: A, the source, is refused by its release for {FORK_KEY}, which the")
    assert cert.to_json()["a"]["result"]["refused"] == REFUSAL


def test_without_the_reports_unknown_entry_the_refusal_is_not_named(
    fork_refused: list[dict[str, Any]], tmp_path: Path
) -> None:
    for given in (recorded("report"), None):
        fork_refused.clear()
        cert = certify(tmp_path, given)
        assert len(fork_refused) == 1 and "without" not in fork_refused[0]  # nothing named: not probed again
        assert [r.name for r in cert.rows] == ["accepted"] and not cert.rows[0].named
        assert cert.code == 1 and cert.verdict.startswith("not proven: A, the source, is refused by its own framework")


def test_a_source_still_refused_without_the_named_keys_is_refused_for_something_else(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def refuses_always(env: Any, jobs: list[dict[str, Any]], *, timeout: float = 0) -> list[ProbeAnswer]:
        if env.format == "cerebras":
            return [ProbeAnswer("cerebras", recorded("b")) for _ in jobs]
        return [
            ProbeAnswer("neox", {**recorded("a"), "accepted": False, "message": "ValueError: another"}) for _ in jobs
        ]

    monkeypatch.setattr("neoconv.prove.run", refuses_always)
    cert = certify(tmp_path, report(UNKNOWN))
    assert cert.rows[0].a is False and not cert.rows[0].named and cert.code == 1
    assert "another" in cert.verdict


def test_a_difference_of_the_rest_is_still_caught(fork_refused: list[dict[str, Any]], tmp_path: Path) -> None:
    broken = recorded("b")
    broken["run"]["global_batch"] = 128  # a planted defect: the report says the global batch is exact
    OUTPUT["b"] = broken
    try:
        cert = certify(tmp_path, report(UNKNOWN))
    finally:
        OUTPUT.clear()
    assert cert.rows[0].named and [r.name for r in cert.unnamed] == ["global batch"]
    assert cert.code == 1 and cert.verdict.startswith("not proven: A, the source, is refused by its release for")


def test_the_keys_a_refusal_may_be_for() -> None:
    gas = {"source_key": "gas", "status": "dropped", "fields": [], "kind": "unsupported_key"}
    entries = [
        UNKNOWN,
        {"source_key": "a.b, c", "status": "unknown"},
        {"source_key": "seq_length", "status": "dropped", "fields": ["model.seq_length"]},  # a meaning: never
        gas,
        {"source_key": None, "status": "unknown"},
        UNKNOWN,
    ]
    assert named_keys({"entries": entries}) == [FORK_KEY, "a.b", "c"]
    # a dropped key with no meaning carried, when the release's refusal names it (NeoX's output-only gas)
    said = "TypeError: __init__() got an unexpected keyword argument 'gas' (seq_length)"
    assert named_keys({"entries": entries}, said) == [FORK_KEY, "a.b", "c", "gas"]
    assert named_keys({"entries": [gas]}, "ValueError: gasket") == []
    assert named_keys(None) == []
