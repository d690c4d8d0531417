"""Keys for the engine's per-table and per-rule caches: a batch of thousands of configs repeats
most values (norm: layernorm, seq_length: 2048, a scheduler's block), so a rule's reading or
writing of the same values is worked out once. Blocks (dicts, lists) are keyed by their types,
order and values; shared results holding blocks are handed out as copies."""

from __future__ import annotations

from typing import Any

_MEMO_TYPES = frozenset({str, int, bool, type(None)})
IMMUTABLE = _MEMO_TYPES | {float}
_MEMO_BLOCK = 64  # at most this many values in the blocks of one key: larger ones are worked out afresh


def memo_key(rule: Any, version: str | None, present: dict[str, Any], inputs: dict[str, Any] | None = None) -> tuple[Any, ...] | None:
    """A key for a rule's reading (or writing) of these values, or None when they are not small
    scalars or small blocks of them."""
    parts: list[Any] = [id(rule), version]
    for key, value in (present.items() if not inputs else (*present.items(), ("|", None), *inputs.items())):
        kind = type(value)
        if kind is float:
            value = value.hex()  # keeps -0.0 apart from 0.0, and a NaN equal to itself
        elif kind is dict or kind is list:
            value = _frozen(value, [_MEMO_BLOCK])
            if value is None:
                return None
        elif kind not in _MEMO_TYPES or (kind is str and len(value) > 200):
            return None
        parts += (key, kind, value)  # the type too: 1, 1.0 and true are different settings
    return tuple(parts)


def _frozen(value: Any, budget: list[int]) -> Any:
    """A block of small scalars as a hashable value that keeps types and order apart, or None."""
    budget[0] -= 1
    kind = type(value)
    if budget[0] < 0:
        return None
    if kind is float:
        return (kind, value.hex())
    if kind in _MEMO_TYPES:
        return (kind, value) if kind is not str or len(value) <= 200 else None
    if kind is dict or kind is list:
        items = value.items() if kind is dict else enumerate(value)
        out: list[Any] = [kind]
        for key, item in items:
            frozen = _frozen(item, budget)
            if frozen is None or type(key) not in (str, int):
                return None
            out += (key, frozen)
        return tuple(out)
    return None


class WithBlocks(list):  # type: ignore[type-arg]
    """A cached result some of whose values are blocks: copied each time it is handed out."""


def shareable(value: Any) -> bool:
    """Immutable, or a plain block of immutable values (shared as copies: copy_block)."""
    kind = type(value)
    if kind in IMMUTABLE:
        return True
    if kind is dict:
        return all(type(k) is str and shareable(v) for k, v in value.items())
    if kind is list:
        return all(shareable(v) for v in value)
    return False


def copy_block(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: copy_block(v) for k, v in value.items()}
    if kind is list:
        return [copy_block(v) for v in value]
    return value
