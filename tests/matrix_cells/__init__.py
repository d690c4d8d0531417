"""The read/write matrix cells of a neoconv format added after the shared rows were written: one
module per format (`<fmt>.py`, CELLS: row name -> its Cell, No or Lossy; tests/matrix.py), so that a
new format's column is its own file, not an edit of every row. (A format outside neoconv keeps its
cells in its own package's `matrix` module: tests/extra_formats/toyjob/matrix.py.)"""
