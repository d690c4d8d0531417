"""A long run's progress on stderr: on a terminal one line rewritten in place with the count, the rate
and the time left; piped (a CI log), a plain line now and then (every `every` seconds), never one per
file; nothing for a run that ends before the first of those."""

from __future__ import annotations

import time
from typing import Any, Callable, TextIO

from ..core.errors import printable


def eta(seconds: float) -> str:
    """'41 s', '3 min 05 s', '1 h 02 min'."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class Progress:
    """Call with (done, total, name) after each file."""

    def __init__(
        self,
        stream: TextIO,
        *,
        terminal: bool,
        every: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        width: int = 80,
    ) -> None:
        self.stream, self.terminal, self.every, self.clock, self.width = stream, terminal, every, clock, width
        self.start = clock()
        self.last = self.start

    def __call__(self, done: int, total: int, name: str) -> None:
        now = self.clock()
        if not self.terminal and now - self.last < self.every:
            return
        self.last = now
        elapsed = now - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        left = f", about {eta((total - done) / rate)} left" if rate > 0 and done < total else ""
        status = f"[{done}/{total}] {rate:.1f} files/s{left}"
        if not self.terminal:
            self.stream.write(f"neoconv batch: {status}\n")
            self.stream.flush()
            return
        room = max(0, self.width - len(status) - 2)
        shown = printable(name)
        shown = shown if len(shown) <= room else "..." + shown[-(room - 3) :] if room > 3 else ""
        self.stream.write("\r" + f"{status}  {shown:<{room}}"[: self.width] + ("\n" if done == total else ""))
        self.stream.flush()


def for_stream(stream: Any, quiet: bool, columns: int) -> Progress | None:
    """The progress a batch shows on `stream` (None with -q)."""
    if quiet:
        return None
    terminal = bool(getattr(stream, "isatty", lambda: False)())
    return Progress(stream, terminal=terminal, width=columns)
