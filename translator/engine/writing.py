"""One rule's writing: the target keys and values a rule gives for its fields, and what emit
records per canonical field (the keys written, why a value was not, what was lost)."""

from __future__ import annotations

from typing import Any

from ..core.bounded import keep
from ..core.errors import UsageError
from ..core.ir import IR
from ..knowledge.mapping import Rule
from ..core.report import Message, as_message, reason
from ..knowledge.formula import Approx, Missing, Unexpressible, is_close, unwrap
from .memo import IMMUTABLE, copy_block, memo_key, shareable

Written = dict[str, tuple[Any, "Approx | None"]]  # target key -> (value, why it is approximate)

LOSS = ""  # write() key for "nothing written, and why" (a formula returning Approx)
MISSING = "\0missing:"  # write() key prefix: a key the target needs that the formula cannot give (Missing)


class Carried:
    """What emit did with one canonical field: the target keys and values written, and why not."""

    __slots__ = ("target_keys", "written", "lossy", "note", "skipped", "unwritable")

    def __init__(self) -> None:  # by hand: a dataclass's list factories cost more, once per field per file
        self.target_keys: list[str] = []
        self.written: list[Any] = []
        self.lossy: list[Message] = []
        self.note = ""
        self.skipped: Message | None = None  # why a rule matched but did not apply
        self.unwritable = False  # skipped because the target cannot take the value (not a `when`)


def write_formula(rule: Rule, ir: IR, version: str | None = None) -> Written:
    """Framework key -> (value, why it is approximate) a formula writes for its rule's fields.

    A formula may return Approx({...}, reason) to say the target cannot hold all of it, or map a
    key to Approx(None, reason) to say why that key is not written: both reach the report as lossy
    (under LOSS when nothing carries them).
    """
    assert rule.formula is not None
    kwargs = {arg: ir.get(name) for arg, name in rule.write_args}
    if "version" in rule.formula.write_params():  # a writing that depends on the target's release
        kwargs["version"] = version
    # the same values write the same keys: a batch repeats most of them (worked out once per rule)
    memo = memo_key(rule, version, kwargs)
    kept = rule.writes.get(memo) if memo is not None else None
    if kept is not None:
        return {key: (copy_block(value), approx) for key, (value, approx) in kept.items()}
    result = _written(rule, kwargs)
    if memo is not None and all(shareable(value) and (approx is None or type(approx.value) in IMMUTABLE)
                                for value, approx in result.values()):  # fmt: skip
        keep(rule.writes, memo, {key: (copy_block(value), approx) for key, (value, approx) in result.items()}, 200)
    return result


def _written(rule: Rule, kwargs: dict[str, Any]) -> Written:
    assert rule.formula is not None
    produced = rule.formula.write(**kwargs)
    losses: list[Approx] = [produced] if isinstance(produced, Approx) and produced.detail else []
    by_ident = rule.key_by_ident
    result: Written = {}
    for name, value in unwrap(produced)[0].items():
        if name not in by_ident:
            raise UsageError(f"formula {rule.formula.name} wrote {name!r}, which its rule does not declare")
        if isinstance(value, Missing):  # reported missing (emit), and the reason on the rule's leaves
            result[MISSING + by_ident[name]] = (None, Approx(None, value.hint))
            value = Approx(None, value.hint)
        if isinstance(value, Approx):
            if value.value is not None:
                result[by_ident[name]] = (value.value, value if value.detail else None)
            elif value.detail:
                losses.append(value)
        elif value is not None:
            result[by_ident[name]] = (value, None)
    if losses:
        parts = tuple(part for x in losses for part in (x.parts or ((x.detail, x.fields),)))
        fields = () if any(not names for _, names in parts) else tuple(dict.fromkeys(f for _, names in parts for f in names))
        result[LOSS] = (None, Approx(None, "; ".join(x.detail for x in losses), fields, parts))
    return result


def reason_for(approx: Approx, name: str) -> Message | None:
    """Why `approx` concerns canonical field `name`, as a message (None when it does not): one
    reason keeps its own kind; several are said together, as the formula joined them."""
    if approx.parts:
        mine = [why for why, names in approx.parts if not names or name in names]
        if len(mine) == 1:
            return as_message(mine[0])
    text = approx.detail_for(name)
    return as_message(text) if text else None


def write_simple(rule: Rule, value: Any) -> Written:
    """A rename, enum, scale or inversion: one key, one value."""
    assert rule.simple is not None and rule.key
    try:
        return {rule.key: (rule.simple.write(value), None)}
    except LookupError:
        raise Unexpressible(reason("no_counterpart_value", field=rule.fields[0], value=value, key=rule.key)) from None


UNDOCUMENTED = object()


def key_default(rule: Rule, key: str, version: str) -> Any:
    """The documented default of one of a rule's keys, or UNDOCUMENTED."""
    if key == rule.key:
        return rule.default_for(version) if rule.has_default(version) else UNDOCUMENTED
    return rule.defaults.get(key, UNDOCUMENTED)


def at_default(rule: Rule, written: Written, version: str) -> bool:
    """Every key a rule wrote holds its documented default (a key without one never does): NeoX's
    rms_norm_epsilon is checked against its own default 1e-8, not layernorm_epsilon's 1e-5."""
    for key, (value, _) in written.items():
        default = key_default(rule, key, version)
        if default is UNDOCUMENTED or not is_close(value, default):
            return False
    return True
