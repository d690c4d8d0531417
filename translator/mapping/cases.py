"""The `cases` shape: a decision table over several keys that decide one field together (DeepSpeed's
fp16 / bf16 / amp / torch_autocast blocks are one compute dtype), as ordered data instead of a
formula class: each reading case is a pattern over the rule's keys (and the file's release) giving
the value, approximately or not, an error or an extension; each writing entry gives, for a value
(and the target's release), the keys to write."""

from __future__ import annotations

from copy import deepcopy
from typing import Any, Callable

from ..errors import MappingTableError
from ..formula import Approx, Extension, Formula, Unexpressible, ident
from ..history import load_history, older
from ..report.kinds import reason as said
from ..report.kinds import short
from .shapes import _formula, same_value

_OUTCOMES = ("value", "error", "extension")


def cases(fmt: str, field: str, keys: tuple[str, ...], spec: dict[str, Any], fail: Callable[[str], MappingTableError]) -> Formula:
    """The rule's formula, after checking that the cases name only the rule's keys and releases of
    the format's key history."""
    _check(spec, fail)
    folded = bool(spec.get("case_insensitive"))
    reads, writes = list(spec["read"]), list(spec["write"])
    for case in reads:
        if sum(k in case for k in _OUTCOMES) != 1 or ("lossy" in case and "value" not in case):
            raise fail("a reading case gives one of value (+ lossy), error or extension")
    history = load_history(fmt)
    releases = history.position if history is not None else {}
    for case in reads + writes:
        named = set(case.get("match", {})) | set(case.get("keys", {}))
        if named - set(keys):
            raise fail(f"cases name keys that are not the rule's: {sorted(named - set(keys))}")
        for bound in ("since", "before"):
            if bound in case and case[bound] not in releases:
                raise fail(f"{bound}: {case[bound]!r} is no release of {fmt}'s key history")
    args = {key: ident(key) for key in keys}
    by_release = any(b in c for c in reads for b in ("since", "before"))
    writes_by_release = any(b in c or "{version}" in c.get("lossy", "") for c in writes for b in ("since", "before"))

    def holds(case: dict[str, Any], values: dict[str, Any], version: str) -> bool:
        return _in_releases(fmt, case, version) and all(
            _matches(values[key], pattern, folded) for key, pattern in case.get("match", {}).items())

    def read(**kw: Any) -> Any:
        values = {key: kw[arg] for key, arg in args.items()}
        case = next((c for c in reads if holds(c, values, kw.get("version", ""))), None)
        if case is None:
            raise ValueError(f"no case for {', '.join(f'{k}={short(v)}' for k, v in values.items())}")
        if "error" in case:
            raise ValueError(_render(case["error"], values))
        if "extension" in case:
            return Extension(_render(case["extension"], values))
        value = list(case["value"]) if isinstance(case["value"], list) else case["value"]
        return Approx(value, _render(case["lossy"], values)) if case.get("lossy") else value

    def write(**kw: Any) -> Any:
        value, version = kw["value"], kw.get("version") or ""
        for case in writes:
            if "value" in case and not _matches(value, case["value"], False) or not _in_releases(fmt, case, version):
                continue
            out = {args[key]: deepcopy(item) for key, item in case["keys"].items()}  # (the document's own)
            return Approx(out, _render(case["lossy"], {"value": value, "version": version})) if case.get("lossy") else out
        raise Unexpressible(said("no_counterpart_value", field=field, value=value, key=keys[0]))

    common = _common_prefix(keys)
    name = "cases " + "; ".join(_spelled(c, True, common) for c in reads) + "; writes " + "; ".join(
        _spelled(c, False, common) for c in writes)
    return _formula(name, read, [*args.values()] + ["version"] * by_release, write,
                    ["value"] + ["version"] * writes_by_release)  # fmt: skip


_PARTS = {"read": {"match", "since", "before", "value", "lossy", "error", "extension"},
          "write": {"value", "since", "before", "keys", "lossy"}}


def _check(spec: dict[str, Any], fail: Callable[[str], MappingTableError]) -> None:
    """The shape's structure (the meta-schema describes it; the loader's checker reads only its top)."""
    if set(spec) - {"read", "write", "case_insensitive"} or not all(isinstance(spec.get(s), list) and spec[s] for s in _PARTS):
        raise fail("cases is {read: [cases], write: [entries]} (+ case_insensitive)")
    for side, allowed in _PARTS.items():
        for case in spec[side]:
            if not isinstance(case, dict) or set(case) - allowed or not isinstance(case.get("match", {}), dict):
                raise fail(f"a {side} case is a mapping of {sorted(allowed)} (match: a mapping)")
            if side == "write" and not isinstance(case.get("keys"), dict):
                raise fail("a write entry gives the keys it writes: keys: {key: value}")
            if any(not isinstance(case[m], str) for m in ("lossy", "error", "extension") if m in case):
                raise fail("lossy, error and extension are messages (strings)")
            if any(isinstance(p, dict) and set(p) != {"not"} for p in case.get("match", {}).values()):
                raise fail("a pattern is a value, a list of values or {not: value(s)}")


def _matches(value: Any, pattern: Any, folded: bool) -> bool:
    """A key's value against a pattern: a value (null: absent), a list of them, or {not: ...}."""
    if isinstance(pattern, dict):
        return not _matches(value, pattern["not"], folded)
    if isinstance(pattern, list):
        return any(_matches(value, p, folded) for p in pattern)
    if pattern is None or value is None:
        return pattern is value
    if folded and isinstance(value, str) and isinstance(pattern, str):
        return value.lower() == pattern.lower()
    return same_value(value, pattern)


def _in_releases(fmt: str, case: dict[str, Any], version: str) -> bool:
    """The case's release range (`since`, `before`) holds (an unknown release counts as the newest)."""
    if "since" in case and older(fmt, version, case["since"]):
        return False
    return "before" not in case or older(fmt, version, case["before"])


def _render(template: str, names: dict[str, Any]) -> str:
    """A message with {name} and {name!r} replaced by the values (names are key paths, with dots)."""
    for name, value in names.items():
        template = template.replace(f"{{{name}!r}}", repr(value)).replace(f"{{{name}}}", str(value))
    return template


def _common_prefix(keys: tuple[str, ...]) -> str:
    """The block every key of the rule is in (`model.`), left out where the cases are spelled."""
    shared: list[str] = []
    for level in zip(*(k.split(".")[:-1] for k in keys)) if len(keys) > 1 else ():
        if len(set(level)) > 1:
            break
        shared.append(level[0])
    return "".join(f"{p}." for p in shared)


def _spelled(case: dict[str, Any], reading: bool, common: str) -> str:
    """One case as explain and docs/mappings.md show it (keys without their common block)."""
    if reading:
        when = ", ".join(f"{k[len(common):]}={_pattern(p)}" for k, p in case.get("match", {}).items())
        outcome = short(case["value"]) if "value" in case else next(o for o in _OUTCOMES if o in case)
        outcome += " (lossy)" * bool(case.get("lossy"))
    else:
        when = _pattern(case["value"]) if "value" in case else ""
        outcome = ", ".join(f"{k[len(common):]}={short(v)}" for k, v in case["keys"].items()) or "nothing"
        outcome += " (lossy)" * bool(case.get("lossy"))
    releases = " ".join(f"{b} {case[b]}" for b in ("since", "before") if b in case)
    return f"{' '.join(p for p in (when, releases) if p) or 'else'}: {outcome}"


def _pattern(pattern: Any) -> str:
    if isinstance(pattern, dict):
        return f"not {_pattern(pattern['not'])}"
    if isinstance(pattern, list):
        return "|".join(map(_pattern, pattern))
    return "absent" if pattern is None else short(pattern)
