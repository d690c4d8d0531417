"""Apply mapping tables: ingest (source leaves -> canonical IR) and emit (IR -> target leaves).

Every source leaf is recorded in a ledger during ingest (owned by a rule, unsupported, a known
extension, or unknown); emit turns the ledger into report entries, so each leaf lands in exactly
one entry. Translation is default-aware: a value the source left at its default is written
explicitly only when the target's default differs (status `defaulted`).

Modules, one job each:
  ledger.py     what ingest hands to emit: the IR, each leaf's fate, the raw values
  ingest.py     source leaves -> IR, rule by rule in dependency order
  reading.py    one rule's reading of its keys' values (formula or simple transform), memoised
  classify.py   leaves no rule takes: unsupported, a known extension, or unknown (+ "did you mean")
  emit.py       IR -> target leaves, rule by rule in table order
  writing.py    one rule's writing of its fields (formula or simple transform)
  defaults.py   source defaults the target needs stated, or cannot keep
  entries.py    the report: one entry per source leaf, then what no leaf says
  losses.py     losses no leaf entry carries (values the target reads relative to a missing field)
  derived.py    values the source derived with no key of their own that the target has no place for
  solve.py      `product:` rules: the missing value solved for; what the target cannot solve
"""

from .emit import emit
from .ingest import ingest
from .ledger import Ingested, LeafFate

__all__ = ["Ingested", "LeafFate", "emit", "ingest"]
