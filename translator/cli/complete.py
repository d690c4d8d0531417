"""Shell completion (click's: `eval "$(_NEOCONV_COMPLETE=bash_source neoconv)"`) for what is not a
command, a file or a fixed choice: canonical field names, framework keys, format pairs."""

from __future__ import annotations

from click import Context, Parameter
from click.shell_completion import CompletionItem

from ..knowledge.registry import FORMATS, pairs


def _fields() -> list[str]:
    from ..knowledge.catalogue import catalogue

    return list(catalogue())


def _keys(fmt: str) -> list[str]:
    """The keys a format's table reads and writes, as `fmt:key`."""
    from ..knowledge.mapping import load_table

    keys = {k for rule in load_table(fmt).rules for k in rule.keys}
    return sorted(f"{fmt}:{k}" for k in keys)


def _format_prefixes(incomplete: str) -> list[str]:
    return [f"{f}:" for f in FORMATS if f"{f}:".startswith(incomplete)]


def field_or_key(ctx: Context, param: Parameter, incomplete: str) -> list[CompletionItem]:
    """`neoconv explain NAME`: a canonical field, or FORMAT:KEY."""
    fmt, colon, _ = incomplete.partition(":")
    if colon and fmt in FORMATS:
        return [CompletionItem(k) for k in _keys(fmt) if k.startswith(incomplete)]
    return [CompletionItem(f) for f in _fields() + _format_prefixes(incomplete) if f.startswith(incomplete)]


def assignment(ctx: Context, param: Parameter, incomplete: str) -> list[CompletionItem]:
    """`--set FIELD=VALUE` (or TARGET:KEY=VALUE): the name, with the `=` to go on typing."""
    if "=" in incomplete:
        return []
    fmt, colon, _ = incomplete.partition(":")
    if colon and fmt in FORMATS:
        return [CompletionItem(k + "=") for k in _keys(fmt) if k.startswith(incomplete)]
    names = [f + "=" for f in _fields()] + _format_prefixes(incomplete)
    return [CompletionItem(n) for n in names if n.startswith(incomplete)]


def pair(ctx: Context, param: Parameter, incomplete: str) -> list[CompletionItem]:
    """SRC2DST of batch and roundtrip."""
    return [CompletionItem(f"{a}2{b}") for a, b in pairs() if f"{a}2{b}".startswith(incomplete)]


def layouts(ctx: Context, param: Parameter, incomplete: str) -> list[CompletionItem]:
    """--layout of batch and convert: the target's layouts once the target is known."""
    # while completing an option's value, click has not yet given the arguments their names
    pair_ = str(ctx.params.get("pair") or next((a for a in ctx.args if "2" in a), ""))
    dst = ctx.params.get("dst") or pair_.partition("2")[2]
    specs = [FORMATS[dst]] if dst in FORMATS else list(FORMATS.values())
    names = sorted({layout for spec in specs for layout in spec.layouts})
    return [CompletionItem(n) for n in names if n.startswith(incomplete)]


def releases(ctx: Context, param: Parameter, incomplete: str) -> list[CompletionItem]:
    """validate --version: the releases of the format given with --format (all formats' otherwise)."""
    from ..knowledge.schema import history

    given = ctx.params.get("fmt") or next((b for a, b in zip(ctx.args, ctx.args[1:]) if a == "--format"), None)
    fmts = [given] if given in FORMATS else list(FORMATS)
    names: list[str] = []
    for fmt in fmts:
        known = history(fmt)
        if known is not None:
            names += [*known.aliases, *reversed(known.releases)]
    return [CompletionItem(n) for n in dict.fromkeys(names) if n.startswith(incomplete)]
