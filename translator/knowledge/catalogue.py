"""The catalogue of canonical fields (schemas/canonical.yaml): name, type, unit, meaning, bounds; and its
`relations:`, checked after each read: a config that breaks one could not run in its own framework,
and is an input error naming its key."""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, TypeGuard

from ..core.errors import InputError, MappingTableError, UsageError
from ..core.ir import IR, Origin
from ..core.resources import data_dir
from ..io.documents import plain_copy
from ..io.yamlread import load as load_yaml
from .source import Source

TYPES = ("int", "float", "bool", "str", "list", "dict", "any")
_FLOAT_MAX = sys.float_info.max
_FLOAT_TEXT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    doc: str
    unit: str = ""
    enum: tuple[str, ...] = ()
    min: float | None = None
    max: float | None = None
    above: float | None = None  # exclusive bounds: a rotary base above 0, an Adam beta below 1
    below: float | None = None
    items: "Field | None" = None  # a list's items (Adam's betas: numbers in [0, 1))
    length: int | None = None  # a list's exact length
    # what an absent value means, where that is a value (no qk-norm: false; no muP multiplier: 1.0):
    # two configs, one stating it and one leaving it out, describe the same model
    none_means: Any = None
    validate: str = ""  # a named check of the whole value (VALIDATORS), e.g. the schedule's phases
    summary_of: str = ""  # a read-only summary of another field (compared through that field)
    covered_by: str = ""  # compared only when no config has this other field (which then decides the run)

    def check(self, value: Any) -> tuple[Any, str]:
        """Coerce a value to this field's type; returns (value, note) or raises ValueError."""
        note = ""
        if value is None:
            return None, note
        if self.type in ("int", "float"):
            if isinstance(value, bool):
                raise ValueError(f"expected a number, got the boolean {value}")
            if isinstance(value, str):
                if self.type == "float" and _FLOAT_TEXT.match(value.strip()):
                    note = f"read the string {value!r} as a number (YAML 1.1 needs a dot in floats)"
                    value = float(value)
                else:
                    raise ValueError(f"expected a number, got the string {value!r}")
            if not isinstance(value, (int, float)):
                raise ValueError(f"expected a number, got {type(value).__name__} {value!r}")
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"expected a finite number, got {value}")
            _within_floats(value)
            if self.type == "float" and isinstance(value, int):
                value = float(value)
            if self.type == "int":
                if isinstance(value, float):
                    if not value.is_integer():
                        raise ValueError(f"expected a whole number, got {value}")
                    value = int(value)
            if self.min is not None and value < self.min:
                raise ValueError(f"must be at least {self.min}, got {value}")
            if self.max is not None and value > self.max:
                raise ValueError(f"must be at most {self.max}, got {value}")
            if self.above is not None and value <= self.above:
                raise ValueError(f"must be above {self.above}, got {value}")
            if self.below is not None and value >= self.below:
                raise ValueError(f"must be below {self.below}, got {value}")
        elif self.type == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"expected true or false, got {value!r}")
        elif self.type == "str":
            if not isinstance(value, str):
                raise ValueError(f"expected a string, got {type(value).__name__} {value!r}")
            if self.enum and value not in self.enum:
                raise ValueError(f"expected one of {', '.join(self.enum)}; got {value!r}")
        elif self.type == "list":
            if not isinstance(value, list):
                raise ValueError(f"expected a list, got {value!r}")
            if self.length is not None and len(value) != self.length:
                raise ValueError(f"expected a list of {self.length} values, got {len(value)}: {_short(value)}")
            if self.items is not None:
                checked = []
                for i, item in enumerate(value):
                    try:
                        checked.append(self.items.check(item)[0] if item is not None else _no_item())
                    except ValueError as exc:
                        raise ValueError(f"item {i} of {_short(value)}: {exc}") from None
                value = checked
        elif self.type == "dict":
            if not isinstance(value, dict):
                raise ValueError(f"expected a mapping, got {value!r}")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):  # `any`: a number is still a float
            _within_floats(value)
            if self.enum and isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"expected a finite number or one of {', '.join(self.enum)}; got {value}")
        elif self.enum and isinstance(value, str) and value not in self.enum:  # `any`: its enum names the words
            raise ValueError(f"expected a number or one of {', '.join(self.enum)}; got {value!r}")
        if self.validate:
            value = VALIDATORS[self.validate]()(value)
        return value, note


def _within_floats(value: int | float) -> None:
    """Every framework computes with a number as a float: one past the float range would be
    infinity there (or an OverflowError). Digits counted from the bits: str() refuses 4300+ digits."""
    if isinstance(value, int) and not -_FLOAT_MAX <= value <= _FLOAT_MAX:
        low = int((abs(value).bit_length() - 1) * math.log10(2))  # floor(log10 |value|), or one short of it
        digits = low + 1 + (abs(value) >= 10 ** (low + 1))
        raise ValueError(f"a number of {digits} digits is past the float range (about 1.8e308)")


def _schedule_check() -> Any:
    from ..schedule.fields import check_phases  # only when a schedule is read

    return check_phases


# name -> a function returning the check (imported on first use): the value checked, or ValueError
VALIDATORS = {"schedule": _schedule_check}


@lru_cache(maxsize=None)
def catalogue() -> dict[str, Field]:
    path = data_dir("schemas") / "canonical.yaml"
    raw = load_yaml(path.read_text(encoding="utf-8"))
    fields: dict[str, Field] = {}
    for name, spec in raw["fields"].items():
        if not isinstance(spec, dict) or spec.get("type") not in TYPES or not spec.get("doc"):
            raise MappingTableError(f"{path.name}: field {name!r} needs a type in {TYPES} and a doc line")
        unknown = set(spec) - {
            "type",
            "doc",
            "unit",
            "enum",
            "min",
            "max",
            "above",
            "below",
            "items",
            "length",
            "validate",
            "summary_of",
            "covered_by",
            "none_means",
        }
        if spec.get("validate") is not None and spec["validate"] not in VALIDATORS:
            raise MappingTableError(f"{path.name}: field {name!r}: validate must be one of {sorted(VALIDATORS)}")
        if unknown:
            raise MappingTableError(f"{path.name}: field {name!r} has unknown attributes {sorted(unknown)}")
        items = spec.get("items")
        if items is not None and not (isinstance(items, dict) and items.get("type") in ("int", "float", "str", "bool")):
            raise MappingTableError(f"{path.name}: field {name!r}: items needs a scalar type")
        if items is not None and "enum" in items:
            items = {**items, "enum": tuple(items["enum"])}
        fields[name] = Field(
            name=name,
            type=spec["type"],
            doc=spec["doc"],
            unit=spec.get("unit", ""),
            enum=tuple(spec.get("enum", ())),
            min=spec.get("min"),
            max=spec.get("max"),
            above=spec.get("above"),
            below=spec.get("below"),
            items=Field(f"{name}[]", doc=spec["doc"], **items) if items is not None else None,
            length=spec.get("length"),
            none_means=spec.get("none_means"),
            validate=spec.get("validate", ""),
            summary_of=spec.get("summary_of", ""),
            covered_by=spec.get("covered_by", ""),
        )
    return fields


def absent_means(name: str, value_of: Callable[[str], Any], depth: int = 0) -> Any:
    """What leaving field `name` out means (none_means): a value, another field's value
    ("=model.attention_bias"), or one field's divided by another's ("=model.hidden_size /
    model.num_heads": the head width), read with `value_of`; None when it means nothing or a field
    it needs is unknown."""
    spec = catalogue().get(name)
    meant = spec.none_means if spec is not None else None
    if not (isinstance(meant, str) and meant.startswith("=model.")):
        return meant
    # a field left out itself means what its own none_means says (a shared expert as wide as a routed
    # one, a routed one as the dense MLP)
    terms = [_given_or_meant(term.strip(), value_of, depth) for term in meant[1:].split("/")]
    if len(terms) == 1:
        return terms[0]
    top, bottom = terms
    if not (_whole(top) and _whole(bottom)) or bottom <= 0 or top % bottom:
        return None
    return top // bottom


def _given_or_meant(name: str, value_of: Callable[[str], Any], depth: int) -> Any:
    value = value_of(name)
    return absent_means(name, value_of, depth + 1) if value is None and depth < 4 else value


def _no_item() -> Any:
    raise ValueError("expected a value, got null")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Given:
    """In Relation.unless: "this field has any value" (an explicit head_dim)."""

    def __repr__(self) -> str:
        return "<any value>"


_GIVEN = _Given()


@dataclass(frozen=True)
class Relation:
    """`dividend` must be a whole multiple of `divisor` (hidden size and attention heads)."""

    divisor: str
    dividend: str
    why: str
    unless: tuple[tuple[str, tuple[Any, ...]], ...] = ()  # (field, values) for which it does not hold

    def holds_for(self, values: dict[str, Any]) -> bool:
        for name, allowed in self.unless:
            value = values.get(name)
            if value in allowed or (value is not None and any(a is _GIVEN for a in allowed)):
                return False
        return True

    @property
    def fields(self) -> tuple[str, str]:
        return (self.divisor, self.dividend)

    def broken(self, values: dict[str, Any]) -> str | None:
        divisor, dividend = values.get(self.divisor), values.get(self.dividend)
        if (
            not (_whole(divisor) and _whole(dividend))
            or divisor <= 0
            or dividend % divisor == 0
            or not self.holds_for(values)
        ):
            return None
        return f"{self.dividend}={dividend} is not divisible by {self.divisor}={divisor} ({self.why})"


@dataclass(frozen=True)
class AtMost:
    """`small` must not exceed `large` (experts per token and experts)."""

    small: str
    large: str
    why: str

    @property
    def fields(self) -> tuple[str, str]:
        return (self.small, self.large)

    def broken(self, values: dict[str, Any]) -> str | None:
        small, large = values.get(self.small), values.get(self.large)
        if not (_number(small) and _number(large)) or small <= large:
            return None
        return f"{self.small}={small} is more than {self.large}={large} ({self.why})"


@dataclass(frozen=True)
class Length:
    """The list `items` must have `count` entries (one attention kind per layer)."""

    items: str
    count: str
    why: str

    @property
    def fields(self) -> tuple[str, str]:
        return (self.items, self.count)

    def broken(self, values: dict[str, Any]) -> str | None:
        items, count = values.get(self.items), values.get(self.count)
        if not (isinstance(items, list) and _whole(count)) or len(items) == count:
            return None
        entries = "entry" if len(items) == 1 else "entries"
        return f"{self.items} has {len(items)} {entries} but {self.count}={count} ({self.why})"


Constraint = Relation | AtMost | Length


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@lru_cache(maxsize=None)
def constraints() -> tuple[Constraint, ...]:
    """Every relation of the catalogue (`divides`, `at_most`, `length`), in file order."""
    path = data_dir("schemas") / "canonical.yaml"
    raw = load_yaml(path.read_text(encoding="utf-8"))
    known = catalogue()
    found: list[Constraint] = []
    for item in raw.get("relations") or []:
        kinds = [k for k in ("divides", "at_most", "length") if isinstance(item, dict) and k in item]
        pair = item.get(kinds[0]) if len(kinds) == 1 else None
        if not (isinstance(pair, list) and len(pair) == 2 and all(f in known for f in pair) and item.get("why")):
            raise MappingTableError(
                f"{path.name}: relation {item!r} needs one of divides/at_most/length: [FIELD, FIELD] (catalogue fields) and why"
            )
        extra = set(item) - {kinds[0], "why", "unless", "unless_given"}
        if extra or (kinds[0] != "divides" and ("unless" in item or "unless_given" in item)):
            raise MappingTableError(f"{path.name}: relation {item!r} has unknown or unsupported attributes")
        if kinds[0] == "at_most":
            found.append(AtMost(pair[0], pair[1], item["why"]))
            continue
        if kinds[0] == "length":
            if known[pair[0]].type != "list" or known[pair[1]].type != "int":
                raise MappingTableError(f"{path.name}: relation {item!r}: length needs [LIST FIELD, INT FIELD]")
            found.append(Length(pair[0], pair[1], item["why"]))
            continue
        unless = [(name, tuple(v if isinstance(v, list) else [v])) for name, v in (item.get("unless") or {}).items()]
        given = item.get("unless_given") or []
        if not (isinstance(given, list) and all(f in known for f in given)):
            raise MappingTableError(f"{path.name}: relation {item!r}: unless_given needs a list of catalogue fields")
        unless += [(name, (_GIVEN,)) for name in given]
        found.append(Relation(pair[0], pair[1], item["why"], tuple(unless)))
    return tuple(found)


@lru_cache(maxsize=None)
def relations() -> tuple[Relation, ...]:
    """The `divides` relations (what the reader checks after each read today)."""
    return tuple(c for c in constraints() if isinstance(c, Relation))


def broken_relations(values: dict[str, Any]) -> list[tuple[Constraint, str]]:
    """Every relation the canonical `values` break, with a one-line reason each: a config its own
    framework could not run (a reader turns each into an input error naming the key)."""
    found = []
    for constraint in constraints():
        reason = constraint.broken(values)
        if reason is not None:
            found.append((constraint, reason))
    return found


def check_relations(source: Source, ir: IR) -> None:
    """A value breaking a relation the catalogue defines (heads dividing the width, kv heads dividing
    the heads, no more experts per token than experts, one attention kind per layer) names its key:
    a config its own framework could not run."""
    values = None
    for rel in constraints():
        if any(not ir.has(name) for name in rel.fields):
            continue  # cheap: most relations concern fields a config leaves out
        if values is None:
            values = ir.plain()
        reason = rel.broken(values)
        if reason is None:
            continue
        blamed, other = rel.fields[1], rel.fields[0]  # the dividend / the list / the larger side
        if isinstance(rel, (AtMost, Length)):
            blamed, other = rel.fields[0], rel.fields[1]
        value, partner = ir.fields[blamed], ir.fields[other]
        key = value.source_keys[0] if value.source_keys else blamed
        other_key = partner.source_keys[0] if partner.source_keys else other
        from_file = value.origin is not Origin.USER
        shown = values[blamed] if not isinstance(values[blamed], list) else f"{len(values[blamed])} entries"
        if isinstance(rel, AtMost):
            what = f"{shown} is more than {other_key}={values[other]}"
        elif isinstance(rel, Length):
            what = f"{shown} for {other_key}={values[other]}"
        else:
            what = f"{shown} is not divisible by {other_key}={values[other]}"
        raise InputError(
            f"{what} ({rel.why})",
            file=(value.file or source.file_of(key)) if from_file else None,
            line=source.line_of(key) if from_file else None,
            key=key,
            hint="fix one of them",
        )


def check_set(name: Any, value: Any, label: str = "--set") -> Any:
    """One canonical field's value, as --set or the library's set_values give it, checked against
    the catalogue (type, bounds, items): the checked value, or a UsageError naming the field."""
    known = catalogue()
    if not isinstance(name, str):
        raise UsageError(f"{label}: field names are strings, not {type(name).__name__} {name!r}")
    if name not in known:
        import difflib  # only for this message

        close = difflib.get_close_matches(name, list(known), n=1)
        hint = f"; did you mean {close[0]}?" if close else "; `neoconv explain --list` lists the fields"
        raise UsageError(f"{label} {name}: not a canonical field{hint}")
    try:
        if isinstance(value, (dict, list, tuple)):
            value = plain_copy({"v": value})["v"]  # bounded and plain, as a value typed on the command line is
        checked, _ = known[name].check(value)
    except InputError as exc:
        raise UsageError(f"{label} {name}: {exc.message}") from None
    except ValueError as exc:
        raise UsageError(f"{label} {name}: {exc}") from None
    return checked
