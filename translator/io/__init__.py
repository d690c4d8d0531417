"""Layer 2, io: config files in and out (YAML/JSON reading with line numbers, YAML writing, dotted
keys, atomic outputs), the format-preserving editor (preserve/) and comments carried across formats.
Imports only core. The layers, in order: translator/layers.py."""
