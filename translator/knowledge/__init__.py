"""Layer 4, knowledge: what neoconv knows about the frameworks, as data and the code that loads it:
the formats that exist (registry), the catalogue of canonical fields, the mapping tables (mapping/),
schemas, key histories and releases, formulas, model families. Imports core, io and schedule.
The layers, in order: translator/layers.py."""
