"""Formats used only by the tests, each a package of its own here (its spec, reader, writer, table,
schema, fixtures and matrix cells): tests/conftest.py registers every one, and every shared test
that goes over the registered formats takes them in (docs/adding-a-framework.md)."""
