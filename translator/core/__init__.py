"""Layer 1, core: values and errors every other layer shares (the canonical IR's values, typed
exceptions, the report's entries and message kinds, value comparison, the cache bound, where the data
folders are). Imports nothing else of neoconv. The layers, in order: translator/layers.py."""

__version__ = "0.1.0"  # the package's release (setup.cfg reads it here; neoconv.__version__ re-exports it)
