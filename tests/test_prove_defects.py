"""A silent defect planted in a translation is caught by `neoconv prove`, for each pair of issue #29's
"Done when" that tests/test_prove.py does not plant one in (NeoX -> Cerebras legacy, Cerebras -> VeOmni,
VeOmni -> NeoX): the recorded answers of fixtures/prove/<case> with B's answer as its framework gives it
for the defective file, and the translation's report unchanged (it says exact or converted)."""

from __future__ import annotations

import copy
import json
from typing import Any

from conftest import FIXTURES

from neoconv.prove.certificate import Certificate, Side
from neoconv.prove.compare import DIFFERENT, annotate, rows
from neoconv.prove.runner import ProbeAnswer

CASES = FIXTURES / "prove"


def recorded(name: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    folder = CASES / name
    a, b, report = (json.loads((folder / f"{part}.json").read_text()) for part in ("a", "b", "report"))
    return a, b, report


def certify(a: dict[str, Any], b: dict[str, Any], report: dict[str, Any]) -> Certificate:
    cert = Certificate(
        Side("a", a["probe"], ProbeAnswer(a["probe"], a)), Side("b", b["probe"], ProbeAnswer(b["probe"], b)), 8
    )
    cert.rows = rows(a, b, 1e-6)
    annotate(cert.rows, report)
    cert.report_file = "report.json"
    return cert


def unnamed(cert: Certificate) -> list[str]:
    return [r.name for r in cert.unnamed]


def test_each_case_is_proven_as_recorded_before_a_defect_is_planted() -> None:
    for name in ("neox2cerebras-legacy", "cerebras2veomni", "veomni2neox"):
        assert certify(*recorded(name)).code == 0, name


def test_neox_to_cerebras_legacy_a_wrong_mlp_width_changes_the_built_model() -> None:
    a, b, report = recorded("neox2cerebras-legacy")
    broken = copy.deepcopy(b)
    # the defect: filter_size written 3072 -> 2048 (12 layers x 2 matrices x 768 x 1024 fewer, and their biases)
    broken["parameters"]["total"] -= 12 * (2 * 768 * 1024 + 1024)
    broken["parameters"]["without_vocab"] -= 12 * (2 * 768 * 1024 + 1024)
    broken["model"]["ffn_hidden_size"] = 2048
    cert = certify(a, broken, report)
    assert unnamed(cert) == ["parameters", "MLP width"] and cert.code == 1
    found = next(r for r in cert.rows if r.name == "parameters")
    assert (found.a, found.b) == (85_056_000, 162_322_944 - 12 * (2 * 768 * 1024 + 1024))


def test_cerebras_to_veomni_half_the_steps_is_caught() -> None:
    a, b, report = recorded("cerebras2veomni")
    broken = copy.deepcopy(b)
    broken["run"]["steps"] = 2384  # the defect: train_steps written half of Model Zoo's max_steps 4768
    cert = certify(a, broken, report)
    assert unnamed(cert) == ["steps"] and cert.code == 1


def test_cerebras_to_veomni_a_learning_rate_ten_times_too_large_is_caught() -> None:
    a, b, report = recorded("cerebras2veomni")
    broken = copy.deepcopy(b)
    broken["lr"]["values"] = [10 * v for v in b["lr"]["values"]]
    cert = certify(a, broken, report)
    assert unnamed(cert) == ["learning rate"] and cert.code == 1


def test_veomni_to_neox_a_wrong_run_length_is_caught() -> None:
    a, b, report = recorded("veomni2neox")
    broken = copy.deepcopy(b)
    broken["run"]["steps"] = 100_000  # the defect: train_iters not VeOmni's 239,254 steps
    cert = certify(a, broken, report)
    assert unnamed(cert) == ["steps"] and cert.code == 1


def test_a_learning_rate_difference_larger_than_the_one_the_report_states_is_not_named() -> None:
    """DeepSpeed's OneCycle has no NeoX form: the report names the closest one's difference, "at most
    0.003985"; a writer that wrote ten times the rates differs far more, and that is not named."""
    a, b, report = recorded("deepspeed2neox")
    lr = next(r for r in certify(a, b, report).rows if r.name == "learning rate")
    assert lr.named and not lr.exceeds and lr.detail["max_difference"] <= 0.003985 * 1.001
    broken = copy.deepcopy(b)
    broken["lr"]["values"] = [10 * v for v in b["lr"]["values"]]
    cert = certify(a, broken, report)
    lr = next(r for r in cert.rows if r.name == "learning rate")
    assert lr.status == DIFFERENT and lr.report == ("lossy",) and not lr.named and cert.code == 1
    assert lr.exceeds.startswith("the report names a learning rate difference of at most 0.003985; the frameworks")
    assert lr.to_json()["named"] is False and "exceeds" in lr.to_json()
