"""Parameter types whose valid values come from the tables (versions) or the report (statuses):
listed in help and offered by shell completion, computed only when asked (start-up loads no table)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import click
from click.shell_completion import CompletionItem


class Lazy(click.ParamType):
    """One of a list of values known only once a table is loaded (a format's versions)."""

    def __init__(self, name: str, values: Callable[[], Sequence[str]], what: str) -> None:
        self.name = name
        self.values = values
        self.what = what  # "neox version", for the error message

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(self.values()) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        known = self.values()
        if value not in known:
            self.fail(f"{value!r}: unknown {self.what}; known: {', '.join(known)}", param, ctx)
        return value

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        return [CompletionItem(v) for v in self.values() if v.startswith(incomplete)]


def versions(fmt: str) -> Callable[[], tuple[str, ...]]:
    def listed() -> tuple[str, ...]:
        from ..knowledge.versions import versions as known

        return tuple(known(fmt).names())

    return listed


class Release(click.ParamType):
    """A release of one format: a label or any name standing for one (1.9, a date, #538, v0.14.4,
    current); checked by versions.resolve, which lists the valid names when it refuses one."""

    name = "release"

    def __init__(self, fmt: str, flag: str) -> None:
        self.fmt, self.flag = fmt, flag

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "RELEASE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from ..core.errors import UsageError
        from ..knowledge.versions import resolve

        try:
            resolve(self.fmt, value, self.flag)
        except UsageError as exc:
            self.fail(str(exc).split(": ", 1)[1] if ": " in str(exc) else str(exc), param, ctx)
        return value

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        return [CompletionItem(v) for v in versions(self.fmt)() if v.startswith(incomplete)]


def statuses() -> list[str]:
    from ..core.report import Status

    return [s.value for s in Status]


class StatusList(click.ParamType):
    """`--fail-on lossy,unknown`: report statuses separated by commas (checked by policy.py, which
    the library shares; here only completed and listed)."""

    name = "statuses"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "STATUS[,STATUS...]"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        done, _, last = incomplete.rpartition(",")
        given = set(done.split(",")) if done else set()
        prefix = done + "," if done else ""
        return [CompletionItem(prefix + s) for s in statuses() if s.startswith(last) and s not in given]
