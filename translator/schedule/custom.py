"""The opaque `custom` phase kind: a closed form with no neutral kind (a framework's restart
schedule, ...), registered by the module that reads it and evaluated through the registry."""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping, NamedTuple

from ..core import plugins
from .shapes import Shape


class CustomForm(NamedTuple):
    """A closed form with no neutral kind, registered by the module that reads it.

    value(args, s) is required; slope and breaks are optional (without both, the form is
    evaluated step by step when compared); repeats and bounds as Shape.repeats and Shape.bounds
    let a long run be compared by its period or cycle by cycle."""

    value: Callable[[Mapping[str, Any], float], float]
    slope: Callable[[Mapping[str, Any], float], float] | None = None
    breaks: Callable[[Mapping[str, Any], float, float], list[float] | None] | None = None
    tail: int = 0
    repeats: Callable[[Mapping[str, Any]], tuple[float, float] | None] | None = None
    bounds: Callable[[Mapping[str, Any]], tuple[float, float] | None] | None = None


FORMS: dict[str, CustomForm] = {}


def register_form(name: str, form: CustomForm) -> None:
    FORMS[name] = form


def known(name: Any) -> bool:
    """Whether a form is registered; a name `<format>.<form>` imports that format's scheduler module
    (which registers its forms; core/plugins.py says which) the first time: a phase read back from
    JSON needs no prior import."""
    if name in FORMS:
        return True
    prefix = name.split(".", 1)[0] if isinstance(name, str) and "." in name else ""
    module = plugins.module_of(prefix, "scheduler") if prefix.isidentifier() else None
    if module is not None:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError:
            return False
    return name in FORMS


class Custom(Shape):
    def __init__(self, form: str, args: Mapping[str, Any]) -> None:
        if not known(form):
            raise KeyError(form)
        self.form, self.args, self.name = FORMS[form], args, form
        self.structured = self.form.slope is not None and self.form.breaks is not None

    def value(self, s: float) -> float:
        return float(self.form.value(self.args, s))

    def slope(self, s: float) -> float | None:
        return None if self.form.slope is None else float(self.form.slope(self.args, s))

    def curve(self, s: float) -> float | None:
        return None

    def breaks(self, lo: float, hi: float) -> list[float] | None:
        return None if self.form.breaks is None else self.form.breaks(self.args, lo, hi)

    def repeats(self) -> tuple[float, float] | None:
        return None if self.form.repeats is None else self.form.repeats(self.args)

    def bounds(self) -> tuple[float, float] | None:
        return None if self.form.bounds is None else self.form.bounds(self.args)

    def tail(self) -> int:
        return self.form.tail
