"""The `cases` shape: a decision table over several keys that decide a field together (DeepSpeed's
fp16 / bf16 / amp / torch_autocast blocks are one compute dtype), or several fields (Model Zoo's
norm_type and 1.9.1's switches are the norm and its bias), as ordered data instead of a formula
class: each reading case is a pattern over the rule's keys (and the file's release) giving the value
(several fields: field -> value, a field left out not set), approximately or not, an error or an
extension; each writing entry gives, for a value (several fields: field -> pattern) and the target's
release, the keys to write or the reason none can be."""

from __future__ import annotations

from copy import deepcopy
from typing import Any, Callable

from ...core.errors import MappingTableError
from ..formula import Approx, Extension, Formula, Unexpressible, field_ident, ident
from ..history import load_history, older
from ...core.report.kinds import reason as said
from ...core.report.kinds import short
from .shapes import _formula, same_value

_OUTCOMES = ("value", "error", "extension")


def cases(fmt: str, fields: tuple[str, ...], keys: tuple[str, ...], spec: dict[str, Any], fail: Callable[[str], MappingTableError],
          peek: tuple[str, ...] = ()) -> Formula:  # fmt: skip
    """The rule's formula, after checking that the cases name only the rule's keys (and match on its
    `peek` keys, another rule's, read only), fields and releases of the format's key history."""
    _check(spec, fail)
    folded, several = bool(spec.get("case_insensitive")), len(fields) > 1
    reads, writes = list(spec["read"]), list(spec["write"])
    for case in reads:
        if sum(k in case for k in _OUTCOMES) != 1 or ("lossy" in case and "value" not in case):
            raise fail("a reading case gives one of value (+ lossy), error or extension")
    for case in writes:
        if ("keys" in case) == ("error" in case) or ("lossy" in case and "keys" not in case):
            raise fail("a write entry gives the keys it writes (keys: {key: value}, + lossy) or an error")
    history = load_history(fmt)
    releases = history.position if history is not None else {}
    for writing, case in [(False, c) for c in reads] + [(True, c) for c in writes]:
        named = set(case.get("match", {})) - set(peek) | set(case.get("keys", {}))
        if named - set(keys):
            raise fail(f"cases name keys that are not the rule's: {sorted(named - set(keys))}")
        for bound in ("since", "before"):
            if bound in case and case[bound] not in releases:
                raise fail(f"{bound}: {case[bound]!r} is no release of {fmt}'s key history")
        _check_fields(case, fields, writing, fail)
    args = {key: ident(key) for key in keys}
    seen = {**args, **{key: ident(key) for key in peek}}  # what reading matches on
    by_release = any(b in c for c in reads for b in ("since", "before"))
    writes_by_release = any(b in c or "{version}" in c.get("lossy", c.get("error", "")) for c in writes for b in ("since", "before"))
    params = [field_ident(f) for f in fields] if several else ["value"]

    def holds(case: dict[str, Any], values: dict[str, Any], version: str) -> bool:
        fold = bool(case.get("case_insensitive", folded))  # (a case may say otherwise)
        return _in_releases(fmt, case, version) and all(
            _matches(values[key], pattern, fold) for key, pattern in case.get("match", {}).items())

    def read(**kw: Any) -> Any:
        values = {key: kw[arg] for key, arg in seen.items()}
        case = next((c for c in reads if holds(c, values, kw.get("version", ""))), None)
        if case is None:
            raise ValueError(f"no case for {', '.join(f'{k}={short(v)}' for k, v in values.items())}")
        if "error" in case:
            raise ValueError(_render(case["error"], values))
        if "extension" in case:
            return Extension(_render(case["extension"], values))
        value = deepcopy(case["value"])  # (the IR's own)
        if several:
            value = {field_ident(f): item for f, item in value.items()}
        return Approx(value, _render(case["lossy"], values), tuple(case.get("lost", ()))) if case.get("lossy") else value

    def write(**kw: Any) -> Any:
        version = kw.get("version") or ""
        given = {f: kw[p] for f, p in zip(fields, params)}
        for case in writes:
            wanted = case.get("value", {}) if several else ({fields[0]: case["value"]} if "value" in case else {})
            if not _in_releases(fmt, case, version) or not all(_matches(given[f], p, False) for f, p in wanted.items()):
                continue
            names = {"value": given[fields[0]], **given, "version": version}
            if "error" in case:
                raise Unexpressible(_render(case["error"], names))
            out = {args[key]: deepcopy(item) for key, item in case["keys"].items()}  # (the document's own)
            return Approx(out, _render(case["lossy"], names), tuple(case.get("lost", ()))) if case.get("lossy") else out
        raise Unexpressible(said("no_counterpart_value", field=fields[0], value=given[fields[0]], key=(keys or peek)[0]))

    common = _common_prefix(keys + peek)
    name = "cases " + "; ".join(_spelled(c, True, common, several) for c in reads) + "; writes " + "; ".join(
        _spelled(c, False, common, several) for c in writes)
    return _formula(name, read, [*seen.values()] + ["version"] * by_release, write,
                    params + ["version"] * writes_by_release)  # fmt: skip


def _check_fields(case: dict[str, Any], fields: tuple[str, ...], writing: bool, fail: Callable[[str], MappingTableError]) -> None:
    """A rule over several fields: a case's value is a mapping naming some of them (a writing entry's:
    field -> pattern); `lost` names them."""
    if set(case.get("lost", ())) - set(fields) or ("lost" in case and "lossy" not in case):
        raise fail(f"lost names the fields a lossy case approximates, of {list(fields)}")
    if len(fields) > 1 and "value" in case and (not isinstance(case["value"], dict) or set(case["value"]) - set(fields)):
        raise fail(f"a case of a rule over several fields gives its value as {{field: value}}, fields of {list(fields)}")
    if len(fields) > 1 and writing and not all(_pattern_ok(p) for p in case.get("value", {}).values()):
        raise fail(_BAD_PATTERN)


_PARTS = {"read": {"match", "since", "before", "value", "lossy", "lost", "error", "extension", "case_insensitive"},
          "write": {"value", "since", "before", "keys", "lossy", "lost", "error"}}


def _check(spec: dict[str, Any], fail: Callable[[str], MappingTableError]) -> None:
    """The shape's structure (the meta-schema describes it; the loader's checker reads only its top)."""
    if set(spec) - {"read", "write", "case_insensitive"} or not all(isinstance(spec.get(s), list) and spec[s] for s in _PARTS):
        raise fail("cases is {read: [cases], write: [entries]} (+ case_insensitive)")
    for side, allowed in _PARTS.items():
        for case in spec[side]:
            if not isinstance(case, dict) or set(case) - allowed or not isinstance(case.get("match", {}), dict):
                raise fail(f"a {side} case is a mapping of {sorted(allowed)} (match: a mapping)")
            if side == "write" and not isinstance(case.get("keys", {}), dict):
                raise fail("a write entry gives the keys it writes: keys: {key: value}")
            if not isinstance(case.get("lost", []), list):
                raise fail("lost is a list of the rule's fields")
            if any(not isinstance(case[m], str) for m in ("lossy", "error", "extension") if m in case):
                raise fail("lossy, error and extension are messages (strings)")
            if not all(_pattern_ok(p) for p in case.get("match", {}).values()):
                raise fail(_BAD_PATTERN)


_BAD_PATTERN = "a pattern is a value, a list of values, {not: pattern} or {truthy: true/false}"


def _pattern_ok(pattern: Any) -> bool:
    if isinstance(pattern, dict):
        return set(pattern) == {"not"} or (set(pattern) == {"truthy"} and isinstance(pattern["truthy"], bool))
    return True


def _matches(value: Any, pattern: Any, folded: bool) -> bool:
    """A key's value against a pattern: a value (null: absent), a list of them, {not: ...}, or
    {truthy: ...} (as the framework's `if key:` takes it: null, false, 0, "" and empty are not)."""
    if isinstance(pattern, dict):
        if "truthy" in pattern:
            return bool(value) is pattern["truthy"]
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


def _spelled(case: dict[str, Any], reading: bool, common: str, several: bool) -> str:
    """One case as explain and docs/mappings.md show it (keys without their common block)."""
    if reading:
        when = ", ".join(f"{k[len(common):]}={_pattern(p)}" for k, p in case.get("match", {}).items())
        outcome = _value(case["value"], several) if "value" in case else next(o for o in _OUTCOMES if o in case)
    else:
        when = _value(case["value"], several, _pattern) if "value" in case else ""
        outcome = "error" if "error" in case else (
            ", ".join(f"{k[len(common):]}={short(v)}" for k, v in case["keys"].items()) or "nothing")
    outcome += " (lossy)" * bool(case.get("lossy"))
    releases = " ".join(f"{b} {case[b]}" for b in ("since", "before") if b in case)
    return f"{' '.join(p for p in (when, releases) if p) or 'else'}: {outcome}"


def _value(value: Any, several: bool, spell: Callable[[Any], str] = short) -> str:
    """A case's value: of one field, or of several (field -> value, the fields by their last part)."""
    if several:
        return ", ".join(f"{field_ident(f)}={spell(v)}" for f, v in value.items()) or "nothing"
    return spell(value)


def _pattern(pattern: Any) -> str:
    if isinstance(pattern, dict):
        if "truthy" in pattern:
            return "set" if pattern["truthy"] else "unset"
        negated = pattern["not"]
        return f"not ({_pattern(negated)})" if isinstance(negated, list) and len(negated) > 1 else f"not {_pattern(negated)}"
    if isinstance(pattern, list):
        return "|".join(map(_pattern, pattern))
    return "absent" if pattern is None else short(pattern)
