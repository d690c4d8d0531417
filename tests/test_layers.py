"""The package's layers (translator/layers.py): every module sits in one layer's package, imports only
its own layer and those below, and no chain of imports comes back to where it started. Every import
statement counts, wherever it is (module level, inside a function, under `if TYPE_CHECKING`): each is
read with `ast`, nothing is imported."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import pytest

from neoconv.layers import FRONT, LAYERS

ROOT = Path(__file__).resolve().parent.parent / "translator"
TOP = ("neoconv", "translator")  # how the package is named in an absolute import (installed, checkout)


class Import(NamedTuple):
    importer: str  # dotted module name inside the package ("" is the package's __init__)
    target: str
    line: int
    on_the_way: bool = False  # a package the import runs before the module it names


def _modules(root: Path) -> dict[str, Path]:
    """Dotted name (without the package's own) -> file; a package is its __init__."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


@lru_cache(maxsize=8)  # both tests read the same tree: parsed once
def _imports(root: Path) -> tuple[dict[str, Path], list[Import]]:
    """Every import of a module of the package by a module of the package. Importing `a.b.c` runs the
    packages `a` and `a.b` first: those count as imported too (unless the importer is inside them)."""
    modules = _modules(root)
    found: list[Import] = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".") if package else []
                    base = ".".join([*parts[: len(parts) - node.level + 1], *([node.module] if node.module else [])])
                elif node.module and node.module.split(".")[0] in TOP:
                    base = node.module.partition(".")[2]
                else:
                    continue
                for alias in node.names:  # `from pkg import module` imports the module
                    sub = f"{base}.{alias.name}" if base else alias.name
                    targets.append(sub if sub in modules else base)
            elif isinstance(node, ast.Import):
                targets = [a.name.partition(".")[2] for a in node.names if a.name.split(".")[0] in TOP]
            for target in targets:
                while target and target not in modules:  # a name inside a module
                    target = target.rpartition(".")[0]
                parts = target.split(".") if target else []
                for end in range(len(parts) + 1):  # the packages on the way, then the module
                    step = ".".join(parts[:end])
                    inside = name == step or name.startswith(step + ".") if step else True
                    if step in modules and step != name and not (inside and end < len(parts)):
                        found.append(Import(name, step, node.lineno, end < len(parts)))
    return modules, found


def _layer_of(name: str) -> str | None:
    """The layer package a module is in; "" for the package's front modules; None: in none."""
    head = name.split(".")[0]
    if name in ("", *FRONT):
        return ""
    return head if head in {layer.package for layer in LAYERS} else None


RANK = {layer.package: i for i, layer in enumerate(LAYERS)}


def _where(name: str) -> str:
    return f"translator/{name.replace('.', '/')}" if name else "translator/__init__.py"


def _may_import(layer: str) -> str:
    return ", ".join(x.package for x in LAYERS[: RANK[layer] + 1])


def layer_problems(root: Path) -> list[str]:
    modules, found = _imports(root)
    problems = []
    for name in modules:
        if _layer_of(name) is None:
            places = "; ".join(f"{x.package}/: {x.holds}" for x in LAYERS)
            problems.append(
                f"{_where(name)} is in no layer: put it in the package of the layer it belongs to "
                f"(translator/layers.py, lowest first: {places})"
            )
    for imp in found:
        source, target = _layer_of(imp.importer), _layer_of(imp.target)
        if source is None or target is None or imp.on_the_way:
            continue
        if target == "" and source != "":  # the package's front: api, layers, its __init__
            problems.append(
                f"{_where(imp.importer)}:{imp.line} imports {_where(imp.target)}, a front module of the "
                f"package: no layer imports those; take the name from the layer that defines it"
            )
        elif source and target and RANK[target] > RANK[source]:
            problems.append(
                f"{_where(imp.importer)}:{imp.line} (layer {source}) imports {_where(imp.target)} (layer {target}, "
                f"above it): a {source} module may import only {_may_import(source)}; move the code to the lowest "
                f"layer that has all it needs, or pass in from above what it needs (a parameter, a registration)"
            )
    return problems


def import_cycles(root: Path) -> list[list[Import]]:
    """One chain of imports per strongly connected group of modules (Tarjan), from a module back to it."""
    modules, found = _imports(root)
    edges: dict[str, dict[str, Import]] = {name: {} for name in modules}
    for imp in found:
        edges[imp.importer].setdefault(imp.target, imp)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for name in modules:
        if name not in index:
            visit(name)
    return [_chain(group, edges) for group in groups]


def _chain(group: list[str], edges: dict[str, dict[str, Import]]) -> list[Import]:
    """A shortest cycle through the group's first module (breadth first inside the group)."""
    start, members = group[0], set(group)
    paths: dict[str, list[Import]] = {start: []}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w, imp in edges[v].items():
            if w == start:
                return paths[v] + [imp]
            if w in members and w not in paths:
                paths[w] = paths[v] + [imp]
                queue.append(w)
    return []


def test_every_module_is_in_a_layer_and_imports_only_downwards() -> None:
    problems = layer_problems(ROOT)
    assert not problems, "\n".join(problems)


def test_no_import_cycle() -> None:
    cycles = import_cycles(ROOT)
    shown = [
        " -> ".join([_where(c[0].importer), *(f"{_where(i.target)} (line {i.line} of the one before)" for i in c)])
        for c in cycles
    ]
    assert not cycles, f"{len(cycles)} import cycle(s):\n" + "\n".join(shown)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "translator"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize(
    "statement",
    [
        "from ..formats.neox import reader",  # module level
        "def f():\n    from ..formats.neox.reader import READER",  # function level
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..formats import neox",  # for types only
        "import neoconv.formats.neox.reader",  # absolute
    ],
)
def test_an_upward_import_is_found_wherever_it_is(tmp_path: Path, statement: str) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "knowledge/__init__.py": "",
            "knowledge/tables.py": statement,
            "formats/__init__.py": "",
            "formats/neox/__init__.py": "",
            "formats/neox/reader.py": "",
        },
    )
    problems = layer_problems(root)
    assert len(problems) == 1 and problems[0].startswith("translator/knowledge/tables:"), problems
    assert "(layer knowledge) imports translator/formats" in problems[0]
    assert "may import only core, io, schedule, knowledge;" in problems[0]


def test_a_module_outside_every_layer_is_named_with_the_layers(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {"__init__.py": "", "extra/__init__.py": "", "extra/runner.py": "from ..core import x", "core/__init__.py": ""},
    )
    problems = layer_problems(root)
    assert [p.split(" is in no layer")[0] for p in problems] == ["translator/extra", "translator/extra/runner"]
    assert "services/: the translation pipeline" in problems[0]


def test_a_cycle_through_a_function_level_import_and_a_package_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "__init__.py": "",
            "engine/__init__.py": "from .emit import emit",
            "engine/emit.py": "def emit():\n    from ..services.diff import diff_ir",
            "services/__init__.py": "",
            "services/diff.py": "from ..engine.ledger import Ingested",
            "engine/ledger.py": "",
        },
    )
    cycles = import_cycles(root)
    assert len(cycles) == 1
    assert sorted(i.importer for i in cycles[0]) == ["engine", "engine.emit", "services.diff"]
    assert not import_cycles(
        _tree(
            tmp_path / "ok",
            {
                "__init__.py": "",
                "engine/__init__.py": "from .emit import emit",
                "engine/emit.py": "from .ledger import x",
                "engine/ledger.py": "",
            },
        )
    )
