"""Formulas: named pairs of pure functions between framework values and canonical values.

Simple transforms (rename, invert, enum map, scale) are declared in the mapping tables and built
here. A formula is a pair of pure functions registered under a name:

* ``read(**kwargs)`` gets the rule's framework keys (dots become ``_``: ``fp16.type`` ->
  ``fp16_type``) and its ``with`` canonical fields (by last segment: ``model.hidden_size`` ->
  ``hidden_size``) and returns the canonical value, or a dict of values for multi-field rules.
* ``write(**kwargs)`` gets the canonical value as ``value`` (or each field by last segment) plus
  the ``with`` fields, and returns ``{key_ident: framework_value}``.

Either side may wrap a result in :class:`Approx` to say the value is only approximated; the
report then marks the entry ``lossy`` with the reason.

Where formulas live: a name ``fmt.name`` is registered by the ``formulas`` module of format ``fmt``'s
package (``translator/formats/<fmt>/formulas.py``: a format's own knowledge; the format registry knows
the package), a plain name by ``translator/knowledge/formulas_common.py`` (maths every table may share). Both are imported on the first lookup of one of their names, so start-up and a
translation pay only for the tables they load. This module names no framework.
"""

from __future__ import annotations

import importlib
import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Approx:
    """A value that only approximates the source's meaning, with the reason.

    `fields`: the canonical fields that lose something, when a multi-field formula knows (the
    cosine's missing clamp concerns the decay, not the peak lr); empty = all of the rule's fields.
    """

    value: Any
    detail: str
    fields: tuple[str, ...] = ()
    parts: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (why, its fields) when the reasons differ per field

    def detail_for(self, name: str) -> str:
        """The reasons that concern canonical field `name` ("" when none does)."""
        if self.parts:
            return "; ".join(why for why, names in self.parts if not names or name in names)
        return self.detail if not self.fields or name in self.fields else ""


@dataclass(frozen=True)
class Missing:
    """A key a write formula cannot give a value that the target needs: reported `missing` with the
    hint (the exact --set that gives it); the rule's leaves say why it is not written."""

    hint: str


@dataclass(frozen=True)
class Absent:
    """A reading whose keys say on purpose that the rule's fields have no value (an explicit null, a
    switch that is off: Mixtral's `sliding_window: null`, Qwen's `use_sliding_window: false`).

    The fields stay out of the IR, as when the file omits the keys, but the leaves are carried with
    this detail (what they mean), not dropped as values nothing could be derived from.
    """

    detail: str


@dataclass(frozen=True)
class Extension:
    """A formula's reading of a value with no canonical form (a cyclic lr schedule, ...).

    The rule's leaves stay framework extensions: carried by a same-format translation, dropped
    with this detail elsewhere.
    """

    detail: str


class Unrunnable(ValueError):
    """A reading finds a config its own framework could not run (NeoX's gated widths): the message
    says what is wrong and the fix, as it stands (the engine adds only file, line and key)."""


class Unexpressible(Exception):
    """The target has the key but not this value (e.g. an enum member it lacks); a write may raise it."""


def unwrap(value: Any) -> tuple[Any, str | None]:
    if isinstance(value, Approx):
        return value.value, value.detail
    return value, None


def ident(name: str) -> str:
    """Python identifier a formula sees for a framework key path."""
    return name.replace(".", "_").replace("-", "_")


def field_ident(name: str) -> str:
    """Python identifier a formula sees for a canonical field."""
    return name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Formula:
    name: str
    read: Callable[..., Any]
    write: Callable[..., dict[str, Any]]
    # signatures are read once at registration: the engine asks for them on every file
    _read_params: frozenset[str] = frozenset()
    _write_params: frozenset[str] = frozenset()

    def read_params(self) -> frozenset[str]:
        return self._read_params

    def write_params(self) -> frozenset[str]:
        return self._write_params


class _Registry(dict):  # type: ignore[type-arg]
    """Named formulas, imported on first use: `FORMULAS["fmt.name"]` imports
    formats/fmt/formulas.py, `FORMULAS["name"]` formulas_common.py."""

    def __init__(self) -> None:
        super().__init__()
        self.tried: set[str] = set()  # modules already imported (or found missing)

    def __missing__(self, name: str) -> Formula:
        module = _module_of(name)
        if module is not None and module not in self.tried:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:  # a namespace no format has: an unknown formula
                if not module.startswith(str(exc.name)):
                    raise
            self.tried.add(module)
            if name in self:
                return self[name]  # type: ignore[no-any-return]
        raise KeyError(name)

    def every(self) -> list[str]:
        """All names: every format's formulas imported (for an error message listing them)."""
        from .registry import FORMATS

        for namespace in ("", *FORMATS):
            try:
                self[f"{namespace}.?" if namespace else "?"]  # a miss that imports the namespace
            except KeyError:
                pass
        return sorted(self)


def _module_of(name: Any) -> str | None:
    """The module that registers a formula name, or None for a name no module can hold: `fmt.name`
    the formulas module of format `fmt` (the registry knows its package), a plain name formulas_common."""
    if not isinstance(name, str):
        return None
    namespace, dot, rest = name.partition(".")
    if not dot:
        return f"{__name__.rpartition('.')[0]}.formulas_common"
    if not namespace.isidentifier() or not rest:
        return None
    from .registry import module_of

    return module_of(namespace, "formulas")


FORMULAS: _Registry = _Registry()


def formula(name: str) -> Callable[[type], type]:
    """Register a class holding static ``read`` and ``write`` functions as a named formula."""

    def register(cls: type) -> type:
        read, write = cls.read, cls.write  # type: ignore[attr-defined]
        FORMULAS[name] = Formula(name, read, write, parameters(read), parameters(write))
        return cls

    return register


def parameters(func: Callable[..., Any]) -> frozenset[str]:
    """A function's parameter names, read from its code object (inspect.signature costs ~30 µs a
    call, paid for ~140 functions at every start); a generated function's declared signature wins."""
    if hasattr(func, "__signature__"):
        return frozenset(inspect.signature(func).parameters)
    code = func.__code__
    return frozenset(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])


# --------------------------------------------------------------------------------------------
# Simple transforms declared inline in the tables


@dataclass(frozen=True)
class Simple:
    """One key <-> one field: rename, boolean inversion, enum map or scaling."""

    kind: str  # rename | invert | enum | scale
    table: tuple[tuple[Any, Any], ...] = ()  # enum pairs (framework, canonical)
    factor: float = 1.0
    case_insensitive: bool = False

    def read(self, raw: Any) -> Any:
        if raw is None:
            return None
        if self.kind == "invert":
            if not isinstance(raw, bool):
                raise ValueError(f"expected true or false, got {raw!r}")
            return not raw
        if self.kind == "enum":
            probe = raw.lower() if self.case_insensitive and isinstance(raw, str) else raw
            for framework, canonical in self.table:
                fw = framework.lower() if self.case_insensitive and isinstance(framework, str) else framework
                if fw == probe:
                    return canonical
            allowed = ", ".join(str(f) for f, _ in self.table)
            raise ValueError(f"unknown value {raw!r}; expected one of {allowed}")
        if self.kind == "scale":
            if isinstance(raw, bool) or not isinstance(raw, (int, float)):
                raise ValueError(f"expected a number, got {raw!r}")
            return raw * self.factor
        return raw

    def write(self, value: Any) -> Any:
        if value is None:
            return None
        if self.kind == "invert":
            return not value
        if self.kind == "enum":
            for framework, canonical in self.table:
                if canonical == value:
                    return framework
            raise LookupError(value)
        if self.kind == "scale":
            out = value / self.factor
            return int(out) if isinstance(out, float) and out.is_integer() and isinstance(value, int) else out
        return value


def is_close(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        try:
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        except OverflowError:  # an int beyond any float: only exact equality can hold
            return bool(a == b)
    return bool(a == b)


def approx_of(value: Any, losses: list[tuple[str, tuple[str, ...]]]) -> Any:
    """`value`, or an Approx naming every loss and the fields they concern (all, if one does not say)."""
    if not losses:
        return value
    fields = () if any(not names for _, names in losses) else tuple(dict.fromkeys(n for _, names in losses for n in names))
    return Approx(value, "; ".join(dict.fromkeys(why for why, _ in losses)), fields, tuple(losses))
