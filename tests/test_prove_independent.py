"""The recorded certificates' figures (fixtures/prove) against an evaluation that uses neither neoconv nor
its probes: the learning rate at every recorded step from each framework's formula as its source states
it, the global batch from the files' batch keys, and the parameter count from the architecture's closed
form. (The same evaluation of fresh `neoconv prove` runs on the corpus files: outside the repository.)"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from conftest import FIXTURES

CASES = FIXTURES / "prove"


def answers(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    a, b = (json.loads((CASES / name / f"{side}.json").read_text()) for side in ("a", "b"))
    return a, b


def neox_annealing(lr: float, min_lr: float, warmup: float, total: int, style: str):  # type: ignore[no-untyped-def]
    """GPT-NeoX's AnnealingLR (megatron/learning_rates.py) as get_learning_rate_scheduler builds it:
    warmup_iter = warmup x lr_decay_iters; the rate optimizer step k uses is get_lr() at num_iters k."""
    warm = warmup * total

    def at(k: int) -> float:
        if warm > 0 and k <= warm:
            return lr * max(1, k) / warm
        n, end = k - warm, total - warm
        value = (
            min_lr + (lr - min_lr) / 2.0 * (math.cos(math.pi * n / end) + 1)
            if style == "cosine"
            else lr * (end - n) / end
        )
        return max(value, min_lr)

    return at


def gap_of_peak(curve: dict[str, Any], expected) -> float:  # type: ignore[no-untyped-def]
    peak = max(abs(v) for v in curve["values"])
    return max(abs(v - expected(k)) for k, v in zip(curve["steps"], curve["values"])) / peak


def llama(h: int, layers: int, heads: int, kv: int, ffn: int, vocab: int) -> int:
    """q, k, v, o, three MLP matrices and two norms a layer, a final norm, untied embeddings."""
    d = h // heads
    return layers * (2 * h * h + 2 * h * kv * d + 3 * h * ffn + 2 * h) + h + 2 * vocab * h


@pytest.mark.parametrize("name", ["neox2cerebras-legacy", "neox2cerebras-trainer"])
def test_pythia_160m_on_both_sides_as_neox_schedules_it(name: str) -> None:
    a, b = answers(name)
    # corpus neox/pythia/160M.yml: lr 6e-4, min_lr 6e-5, warmup 0.01, 143,000 decay iters, cosine
    expected = neox_annealing(6e-4, 6e-5, 0.01, 143_000, "cosine")
    assert gap_of_peak(a["lr"], expected) < 1e-12  # NeoX's own, in float64
    assert gap_of_peak(b["lr"], expected) < 1e-6  # Model Zoo's, in float32
    assert a["run"]["global_batch"] == 32 * 1 * 8 == b["run"]["global_batch"]  # micro x accumulation x world
    # GPT-NeoX: 12h^2 + 13h a layer, 2h final norm; 2h a vocabulary row (untied embeddings in and out)
    h, layers = 768, 12
    assert a["parameters"]["without_vocab"] == layers * (12 * h * h + 13 * h) + 2 * h
    assert a["parameters"]["per_vocab_row"] == 2 * h
    assert b["parameters"]["total"] == layers * (12 * h * h + 13 * h) + 2 * h + 2 * h * 50304


def test_llama_3_1_8b_from_model_zoo_to_veomni_as_each_schedules_it() -> None:
    a, b = answers("cerebras2veomni")
    # Model Zoo LinearLR 0 -> 7.5e-5 over 4,768 steps (its closed form: initial + (end - initial) x k / total)
    assert gap_of_peak(a["lr"], lambda k: 7.5e-5 * min(k, 4768) / 4768) < 1e-6
    # VeOmni (the translation: lr 7.49842701342e-05, lr_warmup_ratio 0.9998, constant): a warmup of
    # int(4,768 x ratio) steps from lr_start 0, then constant (veomni/optim/lr_scheduler.py)
    lr, warm = 7.49842701342e-05, int(4768 * 0.9998)
    assert gap_of_peak(b["lr"], lambda k: lr * k / warm if k < warm else lr) < 1e-12
    assert a["run"]["global_batch"] == b["run"]["global_batch"] == 960
    assert a["parameters"]["total"] == b["parameters"]["total"] == llama(4096, 32, 32, 8, 14336, 128256)
