"""The one rule of neoconv's value caches: a cache holding more than its bound is emptied before the
next entry, so a batch of any size keeps memory flat (most values repeat across files)."""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def keep(cache: dict[K, V], key: K, value: V, bound: int) -> V:
    """Store `value` under `key` (the cache emptied first when it holds more than `bound`); returns it."""
    if len(cache) > bound:
        cache.clear()
    cache[key] = value
    return value
