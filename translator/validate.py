"""Full JSON Schema validation of configs and reports (jsonschema is imported only here)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .errors import InputError
from .schema import load_schema


@lru_cache(maxsize=None)
def _validator(name: str) -> Any:
    import jsonschema  # lazy: only validation needs it

    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema_errors(document: Any, name: str) -> list[str]:
    """Every schema violation as 'path: message', in a stable order."""
    errors = sorted(_validator(name).iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'.'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors]


def check(document: Any, name: str, file: str | None = None) -> None:
    problems = schema_errors(document, name)
    if problems:
        raise InputError(f"does not match the {name} schema: {problems[0]}", file=file)
