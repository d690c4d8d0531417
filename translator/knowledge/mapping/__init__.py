"""Mapping tables (mappings/<format>.yaml) loaded into typed rules.

A typo in a table is a MappingTableError at load time, never a silent no-op: the grammar is the
meta-schema schemas/mapping.schema.json (grammar.py reads it); unknown canonical fields, unknown
formulas, formula signatures that do not match the declared keys, keys claimed twice and
dependency cycles are refused too (build.py, load.py).

Modules: grammar.py (the meta-schema), rules.py (Rule, Table), shapes.py (fixed, flags, list,
pick as read/write pairs), build.py (one rule), load.py (a table, its base, its read order).
"""

from .build import build_rule
from .grammar import RULE_ATTRIBUTES, grammar
from .load import load_table, load_table_file
from .rules import Rule, Table

_build_rule = build_rule  # the name the table tests use

__all__ = ["RULE_ATTRIBUTES", "Rule", "Table", "build_rule", "grammar", "load_table", "load_table_file"]
