"""The layers of the package, lowest first: the one place their order is written down.

Each layer is a package of its own (`translator/<layer>/`). A module may import modules of its own
layer and of the layers below it, never one above (function-level and type-checking imports count
too), and no chain of imports may lead back to where it started. tests/test_layers.py reads this
list and checks every module with `ast`; nothing imports this module at run time.

What a layer needs from one above it is passed in (a parameter, a callback) or registered from above
at import time (formats register what they know: `knowledge/registry.py`), never imported.
"""

from __future__ import annotations

from typing import NamedTuple


class Layer(NamedTuple):
    package: str  # translator/<package>/
    holds: str  # what belongs here: the test's message quotes it to say where a new module goes


LAYERS: tuple[Layer, ...] = (
    Layer(
        "core",
        "values and errors every layer shares: the canonical IR's values, exceptions, report "
        "entries and message kinds, value comparison, the cache bound, where the data folders are",
    ),
    Layer(
        "io",
        "config files in and out: YAML/JSON reading with line numbers, YAML writing, dotted keys, "
        "atomic outputs, the format-preserving editor (preserve/), comments carried across formats",
    ),
    Layer("schedule", "learning-rate schedules: the canonical piecewise form, exact comparison, closest forms"),
    Layer(
        "knowledge",
        "what neoconv knows of the frameworks, as data and its loaders: the registry of formats, "
        "the catalogue, mapping tables (mapping/), schemas, key histories and releases, formulas, "
        "model families, the Source a reader hands on",
    ),
    Layer(
        "engine",
        "applying the tables: source leaves -> canonical IR -> target leaves, the ledger, the "
        "report's entries, the comparison of two readings",
    ),
    Layer("formats", "the format contract (spec.py: Reader, Writer) and one package per format; detection"),
    Layer(
        "services",
        "the translation pipeline and what the library offers around it: its check of its own "
        "output, diff and round trip, validate, explain, docs, arguments, the failure policy",
    ),
    Layer(
        "prove",
        "`neoconv prove`: the frameworks' own code on a source and its translation (probes/: one file per "
        "format, run by the framework's interpreter), the comparison and the certificate",
    ),
    Layer("batch", "a whole tree of configs: the walk, one file's job, the summary and the record"),
    Layer("cli", "the command line: options, commands, the report on the terminal, exit codes"),
)

# modules of the package itself: its front door (the lazy public names, `python -m`, the library API
# and this list); they may import any layer, and no layer imports them
FRONT: tuple[str, ...] = ("__init__", "__main__", "api", "layers")
