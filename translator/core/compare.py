"""When two canonical values mean the same: one comparison for `neoconv diff` and for a
translation's check of its own output (light on imports: the CLI reads its default)."""

from __future__ import annotations

import math
from typing import Any

DEFAULT_RTOL = 1e-6  # `neoconv diff --rtol` and a translation's check of its own output


def values_equal(a: Any, b: Any, rtol: float = DEFAULT_RTOL) -> bool:
    """Two canonical values mean the same: numbers within `rtol` (1 and 1.0 alike, never a bool),
    lists item by item in order, mappings key by key, anything else by ==."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or math.isclose(a, b, rel_tol=rtol, abs_tol=0.0)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(values_equal(x, y, rtol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k], rtol) for k in a)
    return type(a) is type(b) and bool(a == b)
