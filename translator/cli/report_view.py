"""The report on the terminal: one table grouped by status, most severe first (missing, unknown,
lossy, dropped, defaulted; converted and exact only with -v), entries that give the same reason
folded into one row listing their keys, wrapped to the width. On a terminal it is a rich table
(colour unless NO_COLOR; rich is imported only then); piped, plain text lines that grep well
(each row starts with its status)."""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..core.errors import printable

if TYPE_CHECKING:
    from ..core.report import Entry, Report

# most severe first: what the run cannot do without, what the source framework does not know,
# what changed meaning, what was left out, what was written though the file did not say it
ORDER = ("missing", "unknown", "lossy", "dropped", "defaulted", "converted", "exact")
NOTABLE = frozenset(ORDER[:5])
STYLE = {
    "missing": "bold red",
    "unknown": "bold magenta",
    "lossy": "yellow",
    "dropped": "blue",
    "defaulted": "cyan",
    "converted": "green",
    "exact": "dim",
}


@dataclass
class Row:
    status: str
    sources: list[str] = field(default_factory=list)  # source keys (none: the target lacks or defaults a value)
    targets: list[str] = field(default_factory=list)
    reason: str = ""

    @property
    def keys(self) -> str:
        src = ", ".join(self.sources)
        tgt = ", ".join(self.targets)
        if src and tgt and self.targets != self.sources:
            return f"{src} -> {tgt}"
        return src or (f"-> {tgt}" if tgt else "-")


def rows(entries: Iterable[Entry], *, verbose: bool = False, detail: Callable[[Entry], str] | None = None) -> list[Row]:
    """The entries as table rows: by status in ORDER, entries with the same status, reason and target
    folded into one row (their source keys listed), else in report order. `detail` renders an
    entry's reason (default: its detail)."""
    said = detail or (lambda e: e.detail)
    grouped: dict[str, dict[tuple[str, str], Row]] = {status: {} for status in ORDER}
    for entry in entries:
        status = entry.status.value
        if not verbose and status not in NOTABLE:
            continue
        reason = said(entry)
        target = entry.target_key or ""
        fold = (reason, target) if reason else (f"#{id(entry)}", target)  # no reason: nothing to fold on
        row = grouped.setdefault(status, {}).get(fold)
        if row is None:
            row = grouped[status][fold] = Row(status, targets=target.split(", ") if target else [], reason=reason)
        if entry.source_key and entry.source_key not in row.sources:
            row.sources.append(entry.source_key)
    return [row for status in grouped for row in grouped[status].values()]


def footer(report: Report) -> list[str]:
    """The lines after the table: counts, and what the report's source and target say."""
    from ..services.output_text import formatting_notes

    lines = []
    if report.source.get("note"):
        lines.append(f"note: {printable(str(report.source['note']))}")
    counts = ", ".join(f"{n} {s}" for s, n in report.summary().items() if n)
    lines.append(f"neoconv: {counts or 'nothing to translate'}")
    added = report.target.get("added_by_verification")
    if added:
        lines.append(f"neoconv: reading the output back found {added} difference(s) no entry named: listed as lossy")
    lines += [f"neoconv: {note}" for note in formatting_notes(report.target)]
    return lines


def width(stream: Any = None) -> int:
    """COLUMNS when set, else the width of the terminal `stream` is (100 when it is none: a pipe, a
    file), at least 60."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if not columns and stream is not None:
        try:
            columns = os.get_terminal_size(stream.fileno()).columns if stream.isatty() else 0
        except (OSError, ValueError, AttributeError):
            columns = 0
    return max(60, columns or 100)


def plain(
    report: Report, *, verbose: bool = False, columns: int | None = None, detail: Callable[[Entry], str] | None = None
) -> str:
    """Piped: each row as `STATUS  KEYS` and its reason below, indented, wrapped to `columns`."""
    columns = columns or width()
    out: list[str] = []
    pad = " " * 11
    for row in rows(report.entries, verbose=verbose, detail=detail):
        keys = printable(row.keys)
        out += _wrap(f"{row.status:<10} {keys}", columns, "", pad) or [row.status]
        if row.reason:
            out += _wrap(printable(row.reason), columns, pad, pad)
    return "".join(line + "\n" for line in out + footer(report))


def _wrap(text: str, columns: int, first: str, rest: str) -> list[str]:
    """Lines of at most `columns`, broken only between words: a key or a `--set` hint longer than a
    line stays whole (it must be copied as it is), past the width."""
    return textwrap.wrap(
        text, columns, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False, break_long_words=False
    )


def _longest_word(texts: Iterable[str]) -> int:
    return max((len(word) for text in texts for word in text.split()), default=0)


def terminal(
    report: Report,
    *,
    verbose: bool = False,
    color: bool = True,
    columns: int | None = None,
    file: Any = None,
    detail: Callable[[Entry], str] | None = None,
) -> None:
    """On a terminal: a rich table, grouped by status, wrapped to the width."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(
        file=file,
        width=columns or width(file),
        no_color=not color,
        force_terminal=True,
        highlight=False,
        soft_wrap=False,
        emoji=False,
        markup=False,
    )
    shown = rows(report.entries, verbose=verbose, detail=detail)
    # the columns' widths, worked out here: each at least its longest word (a key or a --set hint is
    # never broken), keys about 2/5 of the room (rich's own ratios with minimums crop words)
    room = console.width - len("defaulted") - 6  # three columns: two gaps of padding and a rule
    keys_width = max(
        _longest_word(printable(row.keys) for row in shown),
        min(room * 2 // 5, max((len(printable(r.keys)) for r in shown), default=0)),
    )
    why_width = room - keys_width
    if shown and why_width < _longest_word(printable(row.reason) for row in shown):
        # too narrow for columns that hold every key and hint whole: the plain layout, in colour
        pad = " " * 11
        for row in shown:
            style = STYLE.get(row.status, "") if color else ""
            for number, line in enumerate(_wrap(f"{row.status:<10} {printable(row.keys)}", console.width, "", pad)):
                text = Text(line)
                if number == 0:
                    text.stylize(style, 0, len(row.status))
                console.print(text)
            for line in _wrap(printable(row.reason), console.width, pad, pad) if row.reason else []:
                console.print(Text(line))
        shown = []
    if shown:
        table = Table(
            show_header=True, header_style="bold", expand=False, box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False
        )
        table.add_column("status", no_wrap=True)
        table.add_column("keys", overflow="fold", width=keys_width)
        table.add_column("why", overflow="fold", width=why_width)
        last = None
        for row in shown:
            if last is not None and row.status != last:
                table.add_section()
            style = STYLE.get(row.status, "") if color else ""
            table.add_row(
                Text(row.status if row.status != last else "", style=style),
                Text(printable(row.keys)),
                Text(printable(row.reason)),
            )
            last = row.status
        console.print(table)
    for line in footer(report):
        console.print(Text(line))


def use_terminal(stream: Any, color: str) -> tuple[bool, bool]:
    """(a table rather than plain lines, in colour) for --color auto|always|never on `stream`."""
    tty = bool(getattr(stream, "isatty", lambda: False)())
    if color == "never":
        return False, False
    if color == "always":
        return True, True
    return tty, tty and not os.environ.get("NO_COLOR")
