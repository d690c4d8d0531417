"""Learning-rate schedules of any shape: the canonical piecewise form (model), exact comparison
(compare, closest forms too), editing (ops)."""

from .compare import Difference, Extreme, max_difference, peak
from .model import NotRepresentable, Phase, Schedule, ScheduleError, phase

__all__ = [
    "Difference",
    "Extreme",
    "NotRepresentable",
    "Phase",
    "Schedule",
    "ScheduleError",
    "max_difference",
    "peak",
    "phase",
]
