"""Apply mapping tables: ingest (source leaves -> canonical IR) and emit (IR -> target leaves).

Every source leaf is recorded in a ledger during ingest (owned by a rule, unsupported, a known
extension, or unknown); emit turns the ledger into report entries, so each leaf lands in exactly
one entry. Translation is default-aware: a value the source left at its default is written
explicitly only when the target's default differs (status `defaulted`).

Modules, one job each:
  ledger.py      what ingest hands to emit: the IR, each leaf's fate, the raw values
  rule.py        one rule applied: its reading, its writing, `product:` rules solved, the caches' keys
  ingest.py      source leaves -> IR, rule by rule in dependency order; the leaves no rule takes
  entries.py     IR -> target leaves, rule by rule in table order (emit; the source's defaults the target
                 needs), and the report: one entry per source leaf, then what no leaf says
  difference.py  two readings compared field by field (diff, and a translation's check of its output)
"""

from .entries import emit
from .ingest import ingest
from .ledger import Ingested, LeafFate

__all__ = ["Ingested", "LeafFate", "emit", "ingest"]
