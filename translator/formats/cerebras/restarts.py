"""cstorch 2.10's CosineAnnealingWarmRestarts as a custom schedule form: a cosine over the first T_0
steps, then (a cstorch 2.10 slip: T_cur is floor(t / T_0) * T_0 - T_0) whole periods alternating
initial and eta_min. Registered when imported (scheduler.py imports it; the schedule core imports
translator.formats.cerebras.scheduler when it meets the form's name)."""

from __future__ import annotations

import math
from typing import Any, Mapping

from ...schedule import custom
from ...schedule.shapes import MAX_BREAKS


def _restarts_value(args: Mapping[str, Any], s: float) -> float:
    a, t0, eta = args["initial"], args["T_0"], args["eta_min"]
    cur = s if s < t0 else math.floor(s / t0) * t0 - t0
    return eta + (a - eta) * (1.0 + math.cos(math.pi * cur / t0)) / 2.0


def _restarts_slope(args: Mapping[str, Any], s: float) -> float:
    a, t0, eta = args["initial"], args["T_0"], args["eta_min"]
    return 0.0 if s >= t0 else -(a - eta) * math.pi / (2.0 * t0) * math.sin(math.pi * s / t0)


def _restarts_breaks(args: Mapping[str, Any], lo: float, hi: float) -> list[float] | None:
    t0 = float(args["T_0"])
    if (hi - lo) / t0 > min((hi - lo) / 4 + 2, MAX_BREAKS):
        return None
    out, k = [], max(1, math.floor(lo / (t0 / 2)) + 1)
    while k * t0 / 2 <= hi:
        b = k * t0 / 2
        if b > lo and (b <= t0 or b % t0 == 0):
            out.append(b)
        k += 1
    return out


def _restarts_repeats(args: Mapping[str, Any]) -> tuple[float, float]:
    return (float(args["T_0"]), 2.0 * float(args["T_0"]))  # initial and eta_min, a period each


def _restarts_bounds(args: Mapping[str, Any]) -> tuple[float, float]:
    return (min(args["initial"], args["eta_min"]), max(args["initial"], args["eta_min"]))


RESTARTS = "cerebras.cosine_annealing_warm_restarts_2.10"
custom.register_form(
    RESTARTS,
    custom.CustomForm(
        _restarts_value, _restarts_slope, _restarts_breaks, repeats=_restarts_repeats, bounds=_restarts_bounds
    ),
)
