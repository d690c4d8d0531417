"""The translation report: entries (entry.py) whose details are rendered from a closed catalogue
of message kinds (kinds.py), gathered in a Report (report.py)."""

from .kinds import STRICT_FAILURES, Entry, Status, said
from .kinds import KINDS, Message, Said, as_message, reason, render
from .report import Report

__all__ = [
    "KINDS",
    "STRICT_FAILURES",
    "Entry",
    "Message",
    "Report",
    "Said",
    "Status",
    "as_message",
    "reason",
    "render",
    "said",
]
