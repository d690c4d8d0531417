"""Read/write matrix tests in the sqlglot style: one construct's canonical values and, for every
registered format (and each of its layouts), the smallest config snippet that expresses them.

A test module lists `Row`s and ends with `test_cells, test_read, test_write = matrix(ROWS)`:

- read:  each snippet, read with neoconv.api.read_ir, gives the row's canonical values
         (`"lr@T"` names the learning rate of optimizer step T, t = 0 first, computed from the IR);
- write: each other format's snippet, translated into this one, gives this snippet's keys and
         values, and the report carries the row's fields: `exact` when the target leaf holds the
         source leaf's value, `converted` when it holds another spelling of it, never anything else.

Every registered format must have a cell in every row (the columns come from the registry, so a
newly registered format fails the matrix until its rows say how it expresses each construct):
- `Cell(snippet, side=...)`: the format expresses the values (`side` for a format that keeps the
  architecture apart: VeOmni's HF config.json);
- `No(reason, kind=...)`: it cannot; writing the row into it names the loss (`dropped`/`lossy`
  entry of that kind for the row's fields);
- `Lossy(snippet, kind, side=...)`: it writes an approximation (the snippet) and reports `lossy`
  with that kind; it is not read, being another value.
(`kind` may be a tuple: any of those kinds.) A format added later keeps its cells in a file of its
own (CELLS: row name -> its Cell, No or Lossy): tests/matrix_cells/<fmt>.py for a neoconv format, its
package's `matrix` module for one outside neoconv (tests/extra_formats/toyjob/matrix.py), so that no
row is edited for it.
A format whose reader takes no parsed mapping as its users' files are written (Megatron-LM's
argument files) has its snippet written as such a file (`FILES`) for reading and as a translation's
source; its writer's document is compared with the snippet as is (`--flag: value`, a flag `True`).
A real translation bug is named in the row's `bugs` (which cases show it: fnmatch patterns over the
case ids, a target `+` being every format that expresses the construct; and one line saying what goes
wrong): those cases are strict xfails, so they fail the day the bug is fixed.
"""

from __future__ import annotations

import fnmatch
import math
import shlex
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Union

import pytest

from neoconv.api import load, read_ir, translate
from neoconv.io.documents import flatten
from neoconv.knowledge.registry import FORMATS
from neoconv.core.report import Entry, Status
from neoconv.core.errors import NothingToWrite


def columns() -> list[str]:
    """`format` or `format/layout` for every registered format, in the registry's order."""
    return [
        f"{name}/{layout}" if layout else name for name, spec in FORMATS.items() for layout in (spec.layouts or (None,))
    ]


def split(column: str) -> tuple[str, str | None]:
    name, _, layout = column.partition("/")
    return name, layout or None


@dataclass(frozen=True)
class Cell:
    snippet: dict[str, Any]
    side: dict[str, Any] | None = None  # the model config kept apart (a format that takes one)
    # what the writer writes from another format when it spells the values another way than the
    # (shortest) snippet read (a framework default written out, NeoX's 3x width without mlp_multiple_of)
    writes: dict[str, Any] | None = None
    writes_side: dict[str, Any] | None = None


@dataclass(frozen=True)
class No:
    reason: str  # why the format cannot express the construct (a test id shows it)
    # the report's message kind when the row is written into it; several: any of them (the kind may
    # depend on what the source says: a value stated is `no_counterpart`, one derived `derived_lost`)
    kind: str | tuple[str, ...] = "no_counterpart"
    status: Status = Status.DROPPED


@dataclass(frozen=True)
class Lossy:
    snippet: dict[str, Any]  # what the format writes instead
    kind: str | tuple[str, ...]  # the lossy entry's message kind (several: any of them)
    side: dict[str, Any] | None = None


def kinds_of(cell: No | Lossy) -> set[str]:
    return {cell.kind} if isinstance(cell.kind, str) else set(cell.kind)


Column = Union[Cell, No, Lossy]


@dataclass
class Row:
    name: str
    values: dict[str, Any]  # canonical field (or "lr@T") -> value every Cell snippet means
    cells: dict[str, Column]
    options: dict[str, Any] = field(default_factory=dict)  # translate/read options (world_size, ...)
    context: tuple[str, ...] = ()  # fields of `values` a No/Lossy format may express (not the construct)
    # known translation bugs: a pattern over the test cases ("read COLUMN", "SOURCE -> TARGET",
    # fnmatch-style) -> what goes wrong, in one line; those cases are strict xfails
    bugs: dict[str, str] = field(default_factory=dict)


def ok(a: Any, b: Any, rtol: float = 1e-9) -> bool:
    """Equal, numbers within rtol (an int and its float are equal), lists item by item."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-15)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(ok(x, y, rtol) for x, y in zip(a, b))
    return bool(a == b)


# ---- the learning rate of step t from the IR ---------------------------------------------------


def lr_at(ir: Mapping[str, Any], t: int) -> float:
    """The lr of optimizer step t (0 = first) the IR's schedule fields mean (schemas/canonical.yaml):
    a warmup of warmup_type from warmup_start_lr to lr over warmup_steps, then the decay, whose
    linear form heads for 0 at decay_steps and is clamped at min_lr (GPT-NeoX's AnnealingLR) and
    whose cosine form reaches min_lr at decay_steps and holds; the whole lag_steps late."""
    if ir.get("schedule.phases") is not None:  # the schedule core's IR, once it lands
        from neoconv.schedule import Schedule

        return float(Schedule.from_json(ir["schedule.phases"]).value(t))
    lr = float(ir["optim.lr"])
    t = max(0, t - int(ir.get("schedule.lag_steps") or 0))
    warm = float(ir.get("schedule.warmup_steps") or 0.0)
    start = float(ir.get("schedule.warmup_start_lr") or 0.0)
    floor = float(ir.get("schedule.min_lr") or 0.0)
    if warm and t < warm:
        kind = ir.get("schedule.warmup_type") or "linear"
        if kind == "linear_clamped":
            return lr * max(1, t) / warm
        if kind == "log":
            return start + (lr - start) * math.log(t + 1) / math.log(warm)
        return start + (lr - start) * t / warm
    style = ir.get("schedule.decay_style") or "constant"
    end = float(ir.get("schedule.decay_steps") or 0)
    if style == "constant" or not end:
        return lr
    done = min(1.0, (t - warm) / (end - warm))
    if style == "linear":
        return max(floor, lr * (1.0 - done))
    if style == "cosine":
        return floor + (lr - floor) * (1.0 + math.cos(math.pi * done)) / 2.0
    raise AssertionError(f"lr_at: no canonical form for decay_style {style!r}")


def canonical(ir: Mapping[str, Any], name: str) -> Any:
    return lr_at(ir, int(name[3:])) if name.startswith("lr@") else ir.get(name)


# ---- running a cell --------------------------------------------------------------------------


def _model_config(column: str, cell: Cell | Lossy) -> dict[str, Any] | None:
    spec = FORMATS[split(column)[0]]
    return (cell.side or {}) if spec.takes_model_config else None  # never a file found on disk


def megatron_args(snippet: Mapping[str, Any]) -> str:
    """A Megatron-LM argument file, one `--option value` a line: a flag `True` is the bare option
    (a flag not given is left out, never `False`), a list its words, a value starting with `-`
    `--option=value` (argparse would take it for an option)."""
    lines = []
    for option, value in snippet.items():
        assert option.startswith("--"), f"megatron snippet key {option!r}: an option (--name)"
        if value is True:
            lines.append(option)
            continue
        assert value is not False and value is not None, f"{option}: leave a flag that is not given out"
        words = [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
        if words[0].startswith("-"):
            lines.append(f"{option}={' '.join(map(shlex.quote, words))}")
        else:
            lines.append(" ".join([option, *map(shlex.quote, words)]))
    return "\n".join(lines) + "\n"


# formats whose snippets are written as a file of their own syntax: name -> (file suffix, text)
FILES: dict[str, tuple[str, Callable[[Mapping[str, Any]], str]]] = {"megatron": (".args", megatron_args)}


@contextmanager
def config_of(column: str, cell: Cell) -> Iterator[Any]:
    """What a user gives for this cell: its snippet, or the file it is written as (FILES)."""
    fmt = split(column)[0]
    if fmt not in FILES:
        yield cell.snippet
        return
    suffix, render = FILES[fmt]
    with tempfile.TemporaryDirectory(prefix="matrix-") as tmp:
        path = Path(tmp) / f"config{suffix}"
        path.write_text(render(cell.snippet))
        yield str(path)


def read(row: Row, column: str) -> dict[str, Any]:
    cell = row.cells[column]
    assert isinstance(cell, Cell)
    options = {k: v for k, v in row.options.items() if k in ("world_size", "set_values", "source_version")}
    with config_of(column, cell) as config:
        ingested = read_ir(config, split(column)[0], model_config=_model_config(column, cell), **options)
    return ingested.ir.plain()


def write(row: Row, source: str, target: str) -> Any:
    cell = row.cells[source]
    assert isinstance(cell, Cell)
    (src, _), (dst, layout) = split(source), split(target)
    # translate() takes a model config as a path only; load() takes the parsed one
    with config_of(source, cell) as config:
        loaded = load(config, src, model_config=_model_config(source, cell))
        return translate(loaded, src, dst, layout=layout, **row.options)


def _subset(expected: Mapping[str, Any], actual: Mapping[str, Any], where: str) -> list[str]:
    got = flatten(dict(actual)) if actual else {}
    return [
        f"{where}{key}: expected {want!r}, got {got.get(key, '<absent>')!r}"
        for key, want in flatten(dict(expected)).items()
        if key not in got or not ok(got[key], want)
    ]


def megatron_value(document: Mapping[str, Any], key: str) -> Any:
    """The value argparse gives the dest an option (or a dest) names, from a `--option: value` document
    (a flag `True` when given: `--disable-bias-linear: True` is add_bias_linear False; absent, the default)."""
    from neoconv.formats.megatron.options import dest_of, table
    from neoconv.formats.megatron.reader import READER

    dest = (dest_of(key) or key) if key.startswith("-") else key
    namespace = READER.from_tree(dict(document)).tree if document else {}
    return namespace[dest] if dest in namespace else table().default(dest)


# formats whose keys are not values as written: name -> the value a key of a document means
VALUES: dict[str, Callable[[Mapping[str, Any], str], Any]] = {"megatron": megatron_value}


def _value(fmt: str, document: Mapping[str, Any], key: str) -> Any:
    if fmt in VALUES:
        return VALUES[fmt](document, key)
    return flatten(dict(document)).get(key, "<absent>")


def _target_value(result: Any, key: str, fmt: str) -> Any:
    """The written value of a report's target key (`file:key` for a side file's)."""
    key = key.removesuffix(" (unchanged)")  # a same-format translation's side-file key
    if ":" in key:
        return flatten(dict(result.written.model_config or {})).get(key.split(":", 1)[1], "<absent>")
    return _value(fmt, result.config, key)


def _carried(row: Row, source: str, target: str, result: Any) -> list[str]:
    """Entries about the row's fields (not its context): carried (`exact` or `converted`; `defaulted`
    when the source snippet relies on its framework's default), never `exact` for a value that changed. (A value carried unchanged may be `converted`: the engine
    says so for a leaf whose rule has further keys, docs/report.md: "folded into another key".)"""
    fields = {f for f in row.values if not f.startswith("lr@")} - set(row.context)
    leaves = flatten(dict(row.cells[source].snippet))  # type: ignore[union-attr]
    side = flatten(dict(getattr(row.cells[source], "side", None) or {}))
    problems = []
    for e in result.report.entries:
        if not fields.intersection(e.fields):
            continue
        stated = e.source_key is not None and e.source_key.split(":", 1)[-1] in {**leaves, **side}
        if e.status is Status.DEFAULTED and not stated:
            continue  # the source relied on its default and the target states it: what a default must do
        if e.status not in (Status.EXACT, Status.CONVERTED):
            problems.append(f"{_show(e)}: expected the value carried")
            continue
        if e.source_key is None or not e.targets:
            continue
        key = e.source_key.split(":", 1)[-1]
        src = split(source)[0]
        value = (
            VALUES[src](row.cells[source].snippet, key)
            if src in VALUES and key not in side  # type: ignore[union-attr]
            else leaves.get(key, side.get(key, "<absent>"))
        )
        written = [_target_value(result, t, split(target)[0]) for t in e.targets]
        if e.status is Status.EXACT and not all(ok(w, value) for w in written):
            problems.append(f"{_show(e)}: exact, but {value!r} was written as {written!r}")
    return problems


def _named(row: Row, cell: No | Lossy, result: Any) -> list[str]:
    """Writing into a format that cannot express the construct: nothing about it is carried, and
    what the report says of it has the cell's status and kind (a Lossy cell's loss must be named; a
    No cell's may have no entry, when the source relies on its own default)."""
    fields = {f for f in row.values if not f.startswith("lr@")} - set(row.context)
    status = Status.LOSSY if isinstance(cell, Lossy) else cell.status
    hits = [e for e in result.report.entries if fields.intersection(e.fields)]
    problems = [
        f"{_show(e)}: carried, but the format cannot express it"
        for e in hits
        if isinstance(cell, No)
        and e.status in (Status.EXACT, Status.CONVERTED)
        and e.kind != "used_to_derive"
        and fields.issuperset(e.fields)
    ]
    named = [e for e in hits if e.status is status and kinds_of(cell) & _kinds(e)]
    if isinstance(cell, Lossy) and not named:
        problems.append(
            f"no lossy entry of kind {cell.kind} for {sorted(fields)}; entries: " + "; ".join(_show(e) for e in hits)
        )
    if isinstance(cell, No):
        problems += [
            f"{_show(e)}: expected {status.value} {' or '.join(sorted(kinds_of(cell)))}"
            for e in hits
            if e.status is status and not kinds_of(cell) & _kinds(e)
        ]
    return problems


def _kinds(e: Entry) -> set[str]:
    return {kind for kind, _ in e.messages()}


def _show(e: Entry) -> str:
    return f"[{e.source_key} -> {e.target_key}: {e.status.value} {e.kind} {e.detail[:120]!r}]"


def check_read(row: Row, column: str) -> None:
    ir = read(row, column)
    wrong = {
        name: (want, canonical(ir, name)) for name, want in row.values.items() if not ok(canonical(ir, name), want)
    }
    assert not wrong, f"{row.name} read from {column}: field: (expected, read) {wrong}"


def check_write(row: Row, source: str, target: str) -> None:
    cell = row.cells[target]
    try:
        result = write(row, source, target)
    except NothingToWrite as exc:
        # the snippet is the construct alone, which the target cannot hold (an architecture into DeepSpeed
        # JSON), or holds only approximately with nothing of it written (Megatron's relu): the output would
        # hold defaults only, and is refused, naming what the target needs (issue 28)
        # (an hf cell's model class alone is the default family's, no value of the snippet)
        lost = isinstance(cell, Lossy) and not [k for k in cell.snippet if k != "model_type"]
        assert (isinstance(cell, No) or lost) and "would hold no setting" in str(exc), (
            f"{row.name} from {source} into {target}: {exc}"
        )
        return
    problems: list[str] = []
    if isinstance(cell, (Cell, Lossy)):
        # between layouts of one format the leaves are carried as written (the snippet itself)
        other = isinstance(cell, Cell) and split(source)[0] != split(target)[0]
        written = cell.writes if other and cell.writes is not None else cell.snippet  # type: ignore[union-attr]
        side = cell.writes_side if other and cell.writes_side is not None else cell.side  # type: ignore[union-attr]
        problems += _subset(written, result.config, "")
        if side is not None:
            problems += _subset(side, result.written.model_config or {}, "model config: ")
    problems += _carried(row, source, target, result) if isinstance(cell, Cell) else _named(row, cell, result)
    assert not problems, f"{row.name} written from {source} into {target}:\n  " + "\n  ".join(problems)


# ---- parametrisation -----------------------------------------------------------------------

COLUMNS = columns()


def _param(row: Row, case: str, *columns: str) -> Any:
    bugs = [why for pattern, why in row.bugs.items() if _matches(row, case, pattern, columns)]
    marks = [pytest.mark.xfail(strict=True, reason=f"known translation bug: {'; '.join(bugs)}")] if bugs else []
    return pytest.param(row, *columns, id=f"{row.name}: {case}", marks=marks)


def _matches(row: Row, case: str, pattern: str, columns: tuple[str, ...]) -> bool:
    """fnmatch, and a target `+`: every format that expresses the construct (a Cell or Lossy cell),
    whatever formats are registered (a misreading shows only where the value is written)."""
    if pattern.endswith(" -> +"):
        expresses = len(columns) == 2 and not isinstance(row.cells.get(columns[1]), No)
        return expresses and fnmatch.fnmatchcase(case.rpartition(" -> ")[0], pattern[: -len(" -> +")])
    return fnmatch.fnmatchcase(case, pattern)


def _missing(row: Row) -> list[str]:
    return [
        f"row {row.name!r} has no cell for the registered format {column!r}: give its snippet (Cell) or "
        f"why it cannot express the construct (No / Lossy)"
        for column in COLUMNS
        if column not in row.cells
    ]


def _packaged(row: str) -> dict[str, Column]:
    """The cells a format keeps in a file of its own (CELLS: row name -> a Column, or a dict of them
    by `format/layout`): tests/matrix_cells/<fmt>.py for a neoconv format, the `matrix` module of its
    package for one outside neoconv (tests/extra_formats). The rows' own cells come first."""
    import importlib

    found: dict[str, Column] = {}
    for name, spec in FORMATS.items():
        module = f"matrix_cells.{name}" if spec.own else f"{spec.package}.matrix"
        try:
            cells = importlib.import_module(module).CELLS
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        if row in cells:
            cell = cells[row]
            found.update(cell if isinstance(cell, dict) else {name: cell})
    return found


def hf_cell(veomni: Column | None) -> Column | None:
    """The `hf` cell a row's VeOmni cell implies: VeOmni keeps its architecture in an HF config.json
    (its `side`), read and written by the `hf` format's own modules; None when VeOmni's cell says
    something in its YAML too (the row then gives its own hf cell)."""
    if isinstance(veomni, No):
        return veomni
    if isinstance(veomni, Lossy) and not veomni.snippet:
        return Lossy(veomni.side or {}, veomni.kind)
    if isinstance(veomni, Cell) and not veomni.snippet and (veomni.writes is None or not veomni.writes):
        return Cell(veomni.side or {}, writes=veomni.writes_side)
    return None


def scoped_cell(nested: Column | None) -> Column | None:
    """The `veomni/scoped` cell (PR #1090) a row's nested VeOmni cell implies: the same run, its YAML keys
    where the scoped layout keeps them (mappings/veomni-layouts.yaml `scoped`), the config.json as is."""
    from dataclasses import replace

    from neoconv.formats.veomni.fields import fields
    from neoconv.io.documents import unflatten

    def move(tree: dict[str, Any] | None) -> dict[str, Any] | None:
        return unflatten({fields().to_scoped(k): v for k, v in flatten(tree).items()}) if tree else tree

    if isinstance(nested, Cell):
        return replace(nested, snippet=move(nested.snippet) or {}, writes=move(nested.writes))
    if isinstance(nested, Lossy):
        return replace(nested, snippet=move(nested.snippet) or {})
    return nested


def matrix(rows: list[Row]) -> tuple[Callable[..., None], Callable[..., None], Callable[..., None]]:
    """The module's tests over every row and every registered format: each row has a cell for every
    format; each Cell reads as the row's values; each Cell, written into every other column, gives
    that column's snippet (or the loss it names). A row without an `hf` cell takes the one its
    VeOmni cell implies (hf_cell), and one without a scoped VeOmni cell its nested one, moved (scoped_cell)."""
    for row in rows:
        row.cells = {
            **row.cells,
            **{column: cell for column, cell in _packaged(row.name).items() if column not in row.cells},
        }
        derived = hf_cell(row.cells.get("veomni/nested")) if "hf" in COLUMNS and "hf" not in row.cells else None
        if derived is not None:
            row.cells = {**row.cells, "hf": derived}
        scoped = scoped_cell(row.cells.get("veomni/nested")) if "veomni/scoped" in COLUMNS else None
        if scoped is not None and "veomni/scoped" not in row.cells:
            row.cells = {**row.cells, "veomni/scoped": scoped}
        stray = set(row.cells) - set(COLUMNS)
        assert not stray, f"row {row.name!r} has cells for unregistered formats {sorted(stray)}"
        assert any(isinstance(c, Cell) for c in row.cells.values()), f"row {row.name!r}: no format expresses it"
    given = lambda row: [c for c in COLUMNS if isinstance(row.cells.get(c), Cell)]  # noqa: E731
    reads = [_param(r, f"read {c}", c) for r in rows for c in given(r)]
    writes = [_param(r, f"{s} -> {t}", s, t) for r in rows for t in COLUMNS if t in r.cells for s in given(r) if s != t]

    @pytest.mark.parametrize("row", [pytest.param(r, id=r.name) for r in rows])
    def test_every_format_has_a_cell(row: Row) -> None:
        missing = _missing(row)
        assert not missing, "\n".join(missing)

    @pytest.mark.parametrize(("row", "column"), reads)
    def test_read(row: Row, column: str) -> None:
        check_read(row, column)

    @pytest.mark.parametrize(("row", "source", "target"), writes)
    def test_write(row: Row, source: str, target: str) -> None:
        check_write(row, source, target)

    return test_every_format_has_a_cell, test_read, test_write
