"""The formats: one package per format (`<fmt>/`), each declaring its FormatSpec in its `__init__.py`
and offering a Reader and a Writer (spec.py, the contract). They are found, not listed
(knowledge/registry.py), so adding a framework touches nothing outside its package, its table, its
schema and its tests. A package without FORMAT would be a helper of other formats."""
