"""The catalogue of canonical fields (schemas/canonical.yaml): name, type, unit, meaning, bounds."""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


from .errors import MappingTableError
from .resources import data_dir
from .yamlread import load as load_yaml

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
            if isinstance(value, int) and not -_FLOAT_MAX <= value <= _FLOAT_MAX:
                # every framework computes with it as a float: it would be infinity (or an OverflowError)
                raise ValueError(f"a number of {len(str(abs(value)))} digits is past the float range (about 1.8e308)")
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
        return value, note


@lru_cache(maxsize=None)
def catalogue() -> dict[str, Field]:
    path = data_dir("schemas") / "canonical.yaml"
    raw = load_yaml(path.read_text(encoding="utf-8"))
    fields: dict[str, Field] = {}
    for name, spec in raw["fields"].items():
        if not isinstance(spec, dict) or spec.get("type") not in TYPES or not spec.get("doc"):
            raise MappingTableError(f"{path.name}: field {name!r} needs a type in {TYPES} and a doc line")
        unknown = set(spec) - {"type", "doc", "unit", "enum", "min", "max", "above", "below", "items", "length"}
        if unknown:
            raise MappingTableError(f"{path.name}: field {name!r} has unknown attributes {sorted(unknown)}")
        items = spec.get("items")
        if items is not None and not (isinstance(items, dict) and items.get("type") in ("int", "float", "str", "bool")):
            raise MappingTableError(f"{path.name}: field {name!r}: items needs a scalar type")
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
        )
    return fields


def _no_item() -> Any:
    raise ValueError("expected a value, got null")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class Relation:
    """`dividend` must be a whole multiple of `divisor` (hidden size and attention heads)."""

    divisor: str
    dividend: str
    why: str
    unless: tuple[tuple[str, tuple[Any, ...]], ...] = ()  # (field, values) for which it does not hold

    def holds_for(self, values: dict[str, Any]) -> bool:
        return not any(values.get(name) in allowed for name, allowed in self.unless)


@lru_cache(maxsize=None)
def relations() -> tuple[Relation, ...]:
    path = data_dir("schemas") / "canonical.yaml"
    raw = load_yaml(path.read_text(encoding="utf-8"))
    known = catalogue()
    found: list[Relation] = []
    for item in raw.get("relations") or []:
        pair = item.get("divides") if isinstance(item, dict) else None
        if not (isinstance(pair, list) and len(pair) == 2 and all(f in known for f in pair) and item.get("why")):
            raise MappingTableError(f"{path.name}: relation {item!r} needs divides: [FIELD, FIELD] (catalogue fields) and why")
        unless = tuple((name, tuple(v if isinstance(v, list) else [v])) for name, v in (item.get("unless") or {}).items())
        found.append(Relation(pair[0], pair[1], item["why"], unless))
    return tuple(found)
