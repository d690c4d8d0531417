"""Layer 7, services: what the library offers on top of the engine and the formats: the translation
pipeline, its check of its own output (verify), diff and round trip, validate, explain, docs, the
arguments every entry point accepts and the policy that decides whether a run failed.
The layers, in order: translator/layers.py."""
