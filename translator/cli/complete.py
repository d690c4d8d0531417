"""Shell completion (click's: `eval "$(_NEOCONV_COMPLETE=bash_source neoconv)"`) for what is not a
command, a file or a fixed choice: canonical field names, framework keys, format pairs."""

from __future__ import annotations

import os

from click import Context, Parameter
from click.shell_completion import split_arg_string
from click.shell_completion import _SOURCE_BASH, BashComplete, CompletionItem, add_completion_class

from ..knowledge.registry import FORMATS, pairs


def _fields() -> list[str]:
    from ..knowledge.catalogue import catalogue

    return list(catalogue())


def _keys(fmt: str) -> list[str]:
    """The keys of a format, as `fmt:key`: those its table reads and writes, and every key of its
    schemas (each layout's: `cerebras:trainer.init.model.hidden_size`; keys only the target has, which
    `--set DST:KEY` gives: `cerebras:train_input.data_dir`)."""
    from ..knowledge.mapping import load_table
    from ..knowledge.schema import schema_index

    keys = {k for rule in load_table(fmt).rules for k in rule.keys}
    for name in FORMATS[fmt].schemas or (fmt,):
        keys.update(schema_index(name).all_keys())
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


class ColonBashComplete(BashComplete):
    """bash completion that completes `explain neox:KEY` and `--set cerebras:KEY`: bash splits words at
    the characters of COMP_WORDBREAKS, ':' among them, so click's own script hands over `neox`, `:`,
    `num` as three words and completes nothing. This one reads the line itself (COMP_LINE up to
    COMP_POINT) and answers with what follows the word's last ':', as bash-completion's
    __ltrim_colon_completions does."""

    source_template = _SOURCE_BASH.replace(
        "COMP_CWORD=$COMP_CWORD",
        'COMP_CWORD=$COMP_CWORD COMP_LINE="$COMP_LINE" COMP_POINT=$COMP_POINT COMP_WORDBREAKS="$COMP_WORDBREAKS"',
    )
    _trim = ""

    def get_completion_args(self) -> tuple[list[str], str]:
        line, point = os.environ.get("COMP_LINE"), os.environ.get("COMP_POINT", "")
        if line is None or not point.isdigit():
            return super().get_completion_args()
        typed = line[: int(point)]
        words = split_arg_string(typed)
        if not typed or typed[-1].isspace():
            words.append("")
        incomplete = words[-1] if words else ""
        if ":" in os.environ.get("COMP_WORDBREAKS", ":") and ":" in incomplete:
            self._trim = incomplete[: incomplete.rindex(":") + 1]
        return words[1:-1], incomplete

    def format_completion(self, item: CompletionItem) -> str:
        value = item.value
        if self._trim and isinstance(value, str) and value.startswith(self._trim):
            value = value[len(self._trim) :]
        return f"{item.type},{value}"


add_completion_class(ColonBashComplete)
