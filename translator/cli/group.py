"""`neoconv --help`: commands under headings, the SRC2DST pair commands last and one line per source
format (sixteen pairs listed one by one buried everything else)."""

from __future__ import annotations

import click

from ..knowledge.registry import FORMATS, pairs

# heading -> commands, in the order --help shows them; a command in none goes under "Other"
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Translate", ("convert", "batch", "migrate")),
    ("Check and inspect", ("validate", "explain", "formats", "diff", "roundtrip", "prove", "config")),
    ("Maintain", ("docs",)),
)


def pair_names() -> set[str]:
    return {f"{a}2{b}" for a, b in pairs()}


class SectionedGroup(click.Group):
    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        shown = {
            name: cmd for name in self.list_commands(ctx) if (cmd := self.get_command(ctx, name)) and not cmd.hidden
        }
        limit = formatter.width - 6 - max((len(n) for n in shown), default=0)
        pairs_ = pair_names()
        placed: set[str] = set()
        for heading, names in SECTIONS:
            rows = [(n, shown[n].get_short_help_str(limit)) for n in names if n in shown]
            placed.update(names)
            if rows:
                with formatter.section(heading):
                    formatter.write_dl(rows)
        other = [(n, c.get_short_help_str(limit)) for n, c in shown.items() if n not in placed and n not in pairs_]
        if other:
            with formatter.section("Other"):
                formatter.write_dl(other)
        rows = []
        for src in FORMATS:
            mine = [n for n in sorted(shown) if n in pairs_ and n.startswith(f"{src}2")]
            if mine:
                rows.append((f"{src}2*", ", ".join(mine)))
        if rows:
            with formatter.section(
                "Format pairs (neoconv SRC2DST IN... [options]: convert, with the formats in the name)"
            ):
                formatter.write_dl(rows)
