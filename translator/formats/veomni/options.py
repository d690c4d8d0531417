"""Files of VeOmni command-line options (`--train.optimizer.lr 1e-4`, one or more per line), read
as VeOmni's argparse reads them: bools take yes/true/1 or stand alone, lists take several values."""

from __future__ import annotations

import shlex
from typing import Any

from ...core.errors import InputError
from .fields import HF, fields
from .settings import Setting


def _bool(text: str) -> bool:
    """VeOmni's _string_to_bool."""
    lowered = text.lower()
    if lowered in ("yes", "true", "t", "y", "1"):
        return True
    if lowered in ("no", "false", "f", "n", "0"):
        return False
    raise ValueError(f"boolean value expected, got {text!r}")


def _typed(node: dict[str, Any], values: list[str], option: str) -> Any:
    """An option's values converted the way VeOmni's argparse options convert them."""
    kinds = node.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    enum = node.get("x-choices")  # argparse choices (a Literal field)

    def one(text: str, kind: str | None) -> Any:
        if kind == "boolean":
            return _bool(text)
        if kind in ("integer", "number"):
            try:
                return int(text) if kind == "integer" else float(text)
            except ValueError:  # Python's own text would not name the option
                raise ValueError(
                    f"{option}: {text!r} is not {'an integer' if kind == 'integer' else 'a number'}"
                ) from None
        return text

    if "array" in kinds:
        if not values:
            raise ValueError(f"{option} expects at least one value")
        item = node.get("items", {}).get("type")
        return [one(v, item if isinstance(item, str) else None) for v in values]
    if "object" in kinds:
        raise ValueError(f"{option} is a mapping: VeOmni's command line cannot set it (write it in the YAML)")
    kind = next((k for k in kinds if k != "null"), None)
    if kind == "boolean":
        if len(values) > 1:
            raise ValueError(f"{option} takes one value")
        return True if not values else _bool(values[0])
    if len(values) != 1:
        raise ValueError(f"{option} takes exactly one value, got {len(values)}")
    if enum:
        kind = {bool: "boolean", int: "integer", float: "number"}.get(
            type(next(e for e in enum if e is not None)), kind
        )
        value = one(values[0], kind)
        if value not in enum:
            raise ValueError(f"{option}: invalid choice {value!r} (choose from {', '.join(map(str, enum))})")
        return value
    return one(values[0], kind)


def is_option_file(text: str) -> bool:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return stripped.startswith("--")
    return False


def option_settings(text: str, name: str) -> list[Setting]:
    """`--a.b value...` options, as VeOmni's argparse reads them (one option per key, values after it)."""
    spec = fields()
    tokens: list[tuple[str, int]] = []
    for number, text_line in enumerate(text.splitlines(), 1):
        try:
            tokens += [(t, number) for t in shlex.split(text_line, comments=True)]
        except ValueError as exc:
            raise InputError(f"cannot split the options: {exc}", file=name, line=number) from None
    out: list[Setting] = []
    i = 0
    while i < len(tokens):
        token, line = tokens[i]
        if not token.startswith("--"):
            raise InputError(f"unexpected argument {token!r}: expected --section.key value", file=name, line=line)
        option, sep, inline = token[2:].partition("=")
        values = [inline] if sep else []
        i += 1
        while not sep and i < len(tokens) and not tokens[i][0].startswith("--"):
            values.append(tokens[i][0])
            i += 1
        node = spec.node(option)
        if node is not None and "properties" in node:
            node = node.get("x-flat-scalar")  # --train.optimizer adamw (flat layout)
        if node is None or option.startswith(HF + "."):
            close = [
                k
                for k in spec.nodes
                if k.endswith("." + option.rsplit(".", 1)[-1]) and "properties" not in spec.nodes[k]
            ]
            hint = f"; did you mean --{close[0]}?" if close else ""
            raise InputError(
                f"unrecognized argument --{option}: VeOmni's argparse refuses it{hint}", file=name, line=line
            )
        try:
            value = _typed(node, values, f"--{option}")
        except ValueError as exc:
            raise InputError(str(exc), file=name, line=line, hint="fix the value") from None
        out.append(Setting(tuple(option.split(".")), value, f"--{option}", name, line))
    return out
