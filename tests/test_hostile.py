"""Hostile and broken input (issue 7): every way a file can be wrong is exit 2 and ONE line.

Each row of the table builds its own files in tmp_path and runs `neoconv neox2cerebras IN... -o OUT
--report REPORT` through click's runner. For every row: exit code 2, exactly one stderr line that
starts with `neoconv: error:`, names the file (and line for syntax and value errors) and says what
is wrong; no traceback anywhere; no output, report or temp file written; the inputs unchanged; and
the whole case done in well under a second (loading is bounded before anything is built).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from click.testing import CliRunner

from neoconv.io import documents as tin  # (reading input files is documents.py's too)
from neoconv.io import documents as tio
from neoconv.io import outputs as tout
from neoconv.api import translate
from neoconv.cli import main
from neoconv.core.errors import InputError, NeoconvError, OutputError
from neoconv.io.documents import flatten
from neoconv.knowledge.registry import FORMATS

# A small, valid NeoX config the value cases start from (our own fixture, not a corpus file).
BASE = """\
num_layers: 2
hidden_size: 64
num_attention_heads: 4
seq_length: 128
max_position_embeddings: 128
pos_emb: rotary
"""


def nest_flow(depth: int) -> str:
    return "a: " + "[" * depth + "]" * depth + "\n"


def nest_block(depth: int) -> str:
    return "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + "v: 1\n"


def laughs(kind: str) -> str:
    """Billion laughs: nine levels, each nine aliases of the one before (9**9 values expanded)."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 9):
        if kind == "list":
            lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
        else:
            lines.append(f"l{i}: &l{i} {{" + ", ".join(f"k{j}: *l{i - 1}" for j in range(9)) + "}")
    return "\n".join(lines) + "\n"


def flow_laughs() -> str:
    """The same bomb as one flow value, as it could be typed after --set FIELD=."""
    levels = ["&l0 [" + ", ".join(["lol"] * 9) + "]"]
    levels += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "[" + ", ".join(levels) + "]"


@dataclass
class Hostile:
    id: str
    text: str | bytes | None = None  # content of in.yml (None: `make` builds the inputs)
    expect: tuple[str, ...] = ()  # every one must be in the error line
    line: int | None = None  # the line number the message must carry
    name: str = "in.yml"
    make: Callable[[Path], list[str]] | None = None  # builds inputs, returns the CLI inputs
    extra: Callable[[Path], list[str]] | None = None  # replaces the default -o/--report options
    named: Callable[[Path], str] | None = None  # what the line must name (default: the first input)
    key: str | None = None  # the library error's .key


def _symlink_loop(tmp: Path) -> list[str]:
    (tmp / "loop_a.yml").symlink_to(tmp / "loop_b.yml")
    (tmp / "loop_b.yml").symlink_to(tmp / "loop_a.yml")
    return [str(tmp / "loop_a.yml")]


def _dangling(tmp: Path) -> list[str]:
    (tmp / "gone.yml").symlink_to(tmp / "never-there.yml")
    return [str(tmp / "gone.yml")]


def _folder(tmp: Path) -> list[str]:
    (tmp / "configs").mkdir()
    return [str(tmp / "configs")]


def _huge(tmp: Path) -> list[str]:
    path = tmp / "huge.yml"
    with open(path, "wb") as fh:  # a valid-looking start, then padding past the cap
        fh.write(BASE.encode())
        fh.truncate(tin.MAX_BYTES + 1)
    path.write_bytes(path.read_bytes().replace(b"\0", b" "))
    return [str(path)]


def _two_files(tmp: Path) -> list[str]:
    (tmp / "a.yml").write_text("num-layers: 2\nhidden_size: 64\n")
    (tmp / "b.yml").write_text("num_layers: 2\n")
    return [str(tmp / "a.yml"), str(tmp / "b.yml")]


def _same_basename(tmp: Path) -> list[str]:
    for sub in ("x", "y"):
        (tmp / sub).mkdir()
        (tmp / sub / "model.yml").write_text(BASE if sub == "x" else "train_iters: 10\n")
    return [str(tmp / "x" / "model.yml"), str(tmp / "y" / "model.yml")]


def _evil_name(tmp: Path) -> list[str]:
    return [str(tmp / "evil\n\x1b[2Jname.yml")]  # a missing file whose name carries a newline and an escape


def _base(tmp: Path) -> list[str]:
    (tmp / "in.yml").write_text(BASE)
    return [str(tmp / "in.yml")]


def _with_twice(tmp: Path) -> list[str]:
    (tmp / "ds.json").write_text('{"train_micro_batch_size_per_gpu": 4}\n')
    return _base(tmp)


def _out(path: str) -> Callable[[Path], list[str]]:
    return lambda tmp: ["-o", str(tmp / path)]


def _onto_symlinked_input(tmp: Path) -> list[str]:
    (tmp / "link.yaml").symlink_to(tmp / "in.yml")
    return ["-o", str(tmp / "link.yaml")]


CASES: list[Hostile] = [
    # ---- the file itself -------------------------------------------------------------------
    Hostile("missing file", make=lambda tmp: [str(tmp / "nope.yml")], expect=("no such file",)),
    Hostile("a folder", make=_folder, expect=("is a folder",)),
    Hostile("symlink loop", make=_symlink_loop, expect=("cannot read", "symbolic links")),
    Hostile("dangling symlink", make=_dangling, expect=("no such file",)),
    Hostile("empty file", text="", expect=("empty file",)),
    Hostile("only comments", text="# nothing here\n\n   \n# still nothing\n", expect=("empty document",)),
    Hostile(
        "not UTF-8", text=b"num_layers: 2\nname: caf\xe9\n", expect=("not UTF-8", "0xe9", "save it as UTF-8"), line=2
    ),
    Hostile("UTF-16", text="num_layers: 2\n".encode("utf-16"), expect=("UTF-16", "save it as UTF-8")),
    Hostile("binary", text=b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", expect=("binary file",)),
    Hostile("larger than the cap", make=_huge, expect=("larger than 16 MiB",)),
    Hostile(
        "file name with newline and escape",
        make=_evil_name,
        expect=("no such file", "evil\\n\\x1b[2Jname.yml"),
        named=lambda tmp: "evil\\n",
    ),
    # ---- syntax ----------------------------------------------------------------------------
    Hostile("unclosed flow list", text="num_layers: 2\nhidden_size: [64, 128\n", expect=("invalid YAML",), line=3),
    Hostile(
        "bad indentation", text="num_layers: 2\n  hidden_size: 64\n", expect=("invalid YAML", "mapping values"), line=2
    ),
    Hostile("tab indentation", text="optimizer:\n\ttype: Adam\n", expect=("invalid YAML", "tabs"), line=2),
    Hostile(
        "invalid JSON",
        name="in.json",
        text='{\n  "num_layers": 2,,\n  "hidden_size": 64\n}\n',
        expect=("invalid JSON", ":2:"),
        line=2,
    ),
    Hostile(
        "JSON unclosed object",
        name="in.json",
        text='{\n  "num_layers": 2,\n  "hidden_size": 64\n',
        expect=("invalid JSON",),
        line=4,
    ),
    Hostile("control character", text="num_layers: 2\nname: a\x07b\n", expect=("U+0007", "not allowed"), line=2),
    Hostile("two documents", text="num_layers: 2\n---\nhidden_size: 64\n", expect=("one YAML document",), line=2),
    Hostile("undefined alias", text="num_layers: *layers\n", expect=("invalid YAML", "undefined alias"), line=1),
    # ---- shape -----------------------------------------------------------------------------
    Hostile("top-level list", text="- num_layers: 2\n- hidden_size: 64\n", expect=("top level is a list",), line=1),
    Hostile("top-level scalar", text="just some words\n", expect=("top level is a string",), line=1),
    Hostile("top-level number", text="42\n", expect=("top level is a number",), line=1),
    Hostile(
        "top-level integer key",
        text="num_layers: 2\n12: 64\n",
        expect=("top-level key 12", "not a setting name"),
        line=2,
    ),
    Hostile("top-level null key", text="~: 2\n", expect=("top-level key ~", "null"), line=1),
    Hostile("empty key", text="'': 2\n", expect=("is not a setting name",), line=None),
    Hostile("list as a key", text="? [a, b]\n: 1\n", expect=("setting name, not a list",), line=1),
    Hostile(
        "dotted and nested spelling",
        text="optimizer.type: Adam\noptimizer:\n  type: Adam\n",
        expect=("optimizer.type: written both as one dotted key and as nested keys",),
        line=3,
        key="optimizer.type",
    ),
    # ---- the same key twice ----------------------------------------------------------------
    Hostile(
        "num-layers vs num_layers, different values",
        text="num-layers: 2\nnum_layers: 3\n",
        expect=("same NeoX setting", "2 at line 1, 3 here"),
        line=2,
    ),
    Hostile(
        "num-layers vs num_layers, same value",
        text="num-layers: 2\nnum_layers: 2\n",
        expect=("same NeoX setting", "both 2"),
        line=2,
    ),
    Hostile(
        "hyphen twin in another file",
        make=_two_files,
        expect=("also set in", "two files"),
        line=1,
        named=lambda tmp: str(tmp / "b.yml"),
    ),
    Hostile(
        "two files with one basename",
        make=_same_basename,
        expect=("also named model.yml",),
        named=lambda tmp: str(tmp / "y" / "model.yml"),
    ),
    Hostile(
        "boolean keys (would be a duplicate too)",
        text="fp16:\n  enabled: true\n  true: 1\n  yes: 2\n",
        expect=("key true is read as bool, not a setting name", "quote it"),
        line=3,
    ),
    # ---- wrong types -----------------------------------------------------------------------
    Hostile(
        "hidden_size is a word",
        text=BASE.replace("hidden_size: 64", 'hidden_size: "big"'),
        expect=("hidden_size", "expected integer", "'big'"),
        line=2,
        key="hidden_size",
    ),
    Hostile(
        "lr is a list",
        text=BASE + "optimizer:\n  type: Adam\n  params:\n    lr: [1]\n",
        expect=("optimizer.params.lr", "expected number", "list"),
        line=10,
        key="optimizer.params.lr",
    ),
    Hostile("top-level lr is a list", text=BASE + "lr: [1]\n", expect=("lr", "expected number"), line=7, key="lr"),
    Hostile(
        "boolean as a string",
        text=BASE + 'no_weight_tying: "true"\n',
        expect=("no_weight_tying", "expected boolean", "'true'"),
        line=7,
        key="no_weight_tying",
    ),
    Hostile(
        "fraction of a layer",
        text=BASE.replace("num_layers: 2", "num_layers: 2.5"),
        expect=("num_layers", "expected integer", "2.5"),
        line=1,
        key="num_layers",
    ),
    Hostile(
        "number as quoted string",
        text=BASE.replace("seq_length: 128", "seq_length: '128'"),
        expect=("seq_length", "expected integer"),
        line=4,
    ),
    Hostile(
        "block where a number goes", text=BASE + "optimizer: adam\n", expect=("optimizer", "expected object"), line=7
    ),
    Hostile(
        "date where a number goes",
        text=BASE.replace("seq_length: 128", "seq_length: 2024-02-30"),
        expect=("seq_length", "expected integer", "'2024-02-30'"),
        line=4,
    ),
    Hostile(
        "integer with 5000 digits",
        text=BASE + "train_iters: 1" + "0" * 5000 + "\n",
        expect=("cannot read", "as int", "4300 digits", "quote it"),
        line=7,
    ),
    # ---- out of range ----------------------------------------------------------------------
    Hostile(
        "negative size",
        text=BASE.replace("hidden_size: 64", "hidden_size: -64"),
        expect=("hidden_size", "at least 1", "-64"),
        line=2,
        key="hidden_size",
    ),
    Hostile(
        "zero layers", text=BASE.replace("num_layers: 2", "num_layers: 0"), expect=("num_layers", "at least 1"), line=1
    ),
    Hostile(
        "dropout above 1", text=BASE + "hidden_dropout: 1.5\n", expect=("hidden_dropout", "at most 1.0", "1.5"), line=7
    ),
    Hostile(
        "negative dropout", text=BASE + "attention_dropout: -0.1\n", expect=("attention_dropout", "at least 0"), line=7
    ),
    Hostile(
        "NaN size", text=BASE.replace("hidden_size: 64", "hidden_size: .nan"), expect=("hidden_size", "nan"), line=2
    ),
    Hostile(
        "NaN learning rate",
        text=BASE + "optimizer:\n  type: Adam\n  params:\n    lr: .NaN\n",
        expect=("optimizer.params.lr", "finite number", "nan"),
        line=10,
    ),
    Hostile(
        "infinite dropout",
        text=BASE + "hidden_dropout: .inf\n",
        expect=("hidden_dropout", "finite number", "inf"),
        line=7,
    ),
    Hostile(
        "overflowing float", text=BASE + "hidden_dropout: 1.0e999\n", expect=("hidden_dropout", "finite number"), line=7
    ),
    # ---- broken formulas (a value no release knows is a fork's: tests/test_fork_values.py) ---
    Hostile(
        "hidden size not divisible by heads",
        text=BASE.replace("num_attention_heads: 4", "num_attention_heads: 3"),
        expect=("hidden_size", "64 is not divisible by num_attention_heads=3"),
        line=2,
        key="hidden_size",
    ),
    Hostile(
        "heads not divisible by kv heads",
        text=BASE + "num_kv_heads: 3\n",
        expect=("num_attention_heads", "4 is not divisible by num_kv_heads=3"),
        line=3,
    ),
    Hostile(
        "loss-scale power of 10**30",
        text=BASE + "fp16:\n  enabled: true\n  initial_scale_power: " + "1" + "0" * 30 + "\n",
        expect=("fp16.initial_scale_power", "no usable power of two"),
        line=9,
    ),  # fmt: skip (2**p would fill the memory)
    Hostile(
        "malformed attention_config",
        text=BASE + "attention_config: [[5, 2]]\n",
        expect=("attention_config", "cannot compute"),
        line=7,
    ),
    # ---- input that tries to do harm -----------------------------------------------------------
    Hostile(
        "python/object/apply",
        text="num_layers: !!python/object/apply:os.system ['touch PWNED']\n",
        expect=("!!python/object/apply:os.system", "not allowed", "remove the tag"),
        line=1,
    ),
    Hostile(
        "python/name",
        text="num_layers: !!python/name:os.system\n",
        expect=("!!python/name:os.system", "not allowed"),
        line=1,
    ),
    Hostile(
        "python/object/new",
        text="x: !!python/object/new:subprocess.Popen [[touch, PWNED]]\n",
        expect=("!!python/object/new:subprocess.Popen", "not allowed"),
        line=1,
    ),
    Hostile("local tag", text="data: !include /etc/passwd\n", expect=("!include", "not allowed"), line=1),
    Hostile("binary tag", text="x: !!binary aGVsbG8=\n", expect=("!!binary", "remove the tag"), line=1),
    Hostile("billion laughs (lists)", text=laughs("list"), expect=("alias bomb",)),
    Hostile("billion laughs (mappings)", text=laughs("map"), expect=("alias bomb",)),
    Hostile("recursive alias", text="a: &a [1, *a]\n", expect=("points into its own block", "recursive"), line=1),
    Hostile("deep flow nesting", text=nest_flow(100_000), expect=("nested more than 100 levels",), line=1),
    Hostile("deep block nesting", text=nest_block(300), expect=("nested more than 100 levels",), line=101),
    Hostile("many values", text="".join(f"k{i}: {i}\n" for i in range(120_000)), expect=("more than 100000 values",)),
    Hostile(
        "empty nested key",
        text=BASE + "optimizer:\n  type: Adam\n  '': 1\n",
        expect=("key ''", "empty name part"),
        line=7,
        key="optimizer",
    ),
    Hostile(
        "value and block at once",
        text=BASE + "optimizer.params: 5\noptimizer:\n  params:\n    lr: 0.1\n",
        expect=("optimizer.params: is both a value and a block",),
        line=9,
        key="optimizer.params",
    ),
    Hostile(
        "alias bomb in --set",
        make=_base,
        extra=lambda tmp: ["-o", str(tmp / "out.yaml"), "--set", "optim.betas=" + flow_laughs()],
        expect=("alias bomb",),
        named=lambda tmp: "--set optim.betas",
    ),
    Hostile(
        "deep nesting in --set",
        make=_base,
        extra=lambda tmp: ["-o", str(tmp / "out.yaml"), "--set", "optim.betas=" + "[" * 5000],
        expect=("nested more than 100 levels",),
        named=lambda tmp: "--set optim.betas",
    ),
    # ---- round two (issue 13): numbers past the float range, values no framework accepts -------
    Hostile(
        "integer past the float range",
        text=BASE + "optimizer:\n  type: Adam\n  params:\n    lr: 1" + "0" * 400 + "\n",
        expect=("optimizer.params.lr", "past the float range"),
        line=10,
        key="optimizer.params.lr",
    ),
    Hostile(
        "integer past the float range in a formula's key",
        text=BASE + "train_iters: 1" + "0" * 400 + "\nwarmup: 0.01\n",
        expect=("train_iters", "past the float range"),
        line=7,
        key="train_iters",
    ),  # fmt: skip (not warmup)
    Hostile(
        "a float overflowing a formula",
        text=BASE + "train_iters: 1000\nwarmup: 1.7e+308\n",
        expect=("warmup", "finite number"),
        line=8,
        key="warmup",
    ),
    Hostile(
        "betas out of range",
        text=BASE + "optimizer:\n  type: Adam\n  params:\n    betas: [0.9, 2]\n",
        expect=("optimizer.params.betas", "item 1", "must be below 1.0"),
        line=10,
    ),
    Hostile(
        "betas not numbers",
        text=BASE + "optimizer:\n  type: Adam\n  params:\n    betas: [a, null]\n",
        expect=("optimizer.params.betas", "item 0", "expected a number"),
        line=10,
    ),
    Hostile(
        "three betas",
        text=BASE + "optimizer:\n  type: Adam\n  params:\n    betas: [0.9, 0.99, 0.999]\n",
        expect=("optimizer.params.betas", "a list of 2 values, got 3"),
        line=10,
    ),
    Hostile("rotary base 0", text=BASE + "rotary_emb_base: 0\n", expect=("rotary_emb_base", "must be above 0"), line=7),
    Hostile(
        "attention_config for more layers than the model has",
        text=BASE + "attention_config: [[[global], 3]]\n",
        expect=("attention_config", "covers 3 layers but num_layers is 2"),
        line=7,
    ),
    Hostile(
        "nested number key",
        text=BASE + "optimizer:\n  type: Adam\n  1.5: x\n",
        expect=("key 1.5 is read as float, not a setting name", "quote it"),
        line=9,
    ),
    Hostile(
        "nested null key",
        text=BASE + "optimizer:\n  type: Adam\n  params:\n    null: 1\n",
        expect=("key null is read as null",),
        line=10,
    ),
    Hostile(
        "not a NeoX config at all",
        text="train_input:\n  batch_size: 8\nmodel:\n  hidden_size: 64\nrunconfig:\n  max_steps: 10\n",
        expect=("GPT-NeoX", "cerebras"),  # the CLI: the command to use; the library: --from cerebras
        line=None,
    ),
    Hostile("no settings", text="{}\n", expect=("not a GPT-NeoX config: it has no settings",)),
    Hostile(
        "--set betas out of range",
        make=_base,
        extra=lambda tmp: ["-o", str(tmp / "out.yaml"), "--set", "optim.betas=[0.9, 2]"],
        expect=("item 1", "must be below 1.0"),
        named=lambda tmp: "--set optim.betas",
    ),
    Hostile(
        "--set three betas",
        make=_base,
        extra=lambda tmp: ["-o", str(tmp / "out.yaml"), "--set", "optim.betas=[0.9, 0.9, 0.9]"],
        expect=("a list of 2 values, got 3",),
        named=lambda tmp: "--set optim.betas",
    ),
    Hostile(
        "--set betas not numbers",
        make=_base,
        extra=lambda tmp: ["-o", str(tmp / "out.yaml"), "--set", 'optim.betas=["a", null]'],
        expect=("expected a number",),
        named=lambda tmp: "--set optim.betas",
    ),
    Hostile(
        "the same --with file twice",
        make=_with_twice,
        extra=lambda tmp: ["-o", str(tmp / "out.yaml"), "--with", str(tmp / "ds.json"), "--with", str(tmp / "ds.json")],
        expect=("is given twice",),
        named=lambda tmp: str(tmp / "ds.json"),
    ),
    # ---- where the output goes -----------------------------------------------------------------
    Hostile(
        "output into a missing folder",
        make=_base,
        extra=_out("no/such/dir/out.yaml"),
        expect=("output folder", "does not exist"),
        named=lambda tmp: str(tmp / "no/such/dir/out.yaml"),
    ),
    Hostile(
        "output onto the input",
        make=_base,
        extra=lambda tmp: ["-o", str(tmp / "in.yml")],
        expect=("refusing to overwrite the input file",),
    ),
    Hostile(
        "output onto the input via a symlink",
        make=_base,
        extra=_onto_symlinked_input,
        expect=("refusing to overwrite the input file",),
        named=lambda tmp: str(tmp / "link.yaml"),
    ),
    Hostile(
        "output is a folder",
        make=_base,
        extra=lambda tmp: ["-o", str(tmp)],
        expect=("is a folder",),
        named=lambda tmp: str(tmp),
    ),
    Hostile(
        "output folder is a file",
        make=_base,
        extra=lambda tmp: ["-o", str(tmp / "in.yml" / "out.yaml")],
        expect=("is not a folder",),
        named=lambda tmp: str(tmp / "in.yml" / "out.yaml"),
    ),
    Hostile(
        "report into a missing folder (config not written either)",
        make=_base,
        extra=lambda tmp: ["-o", str(tmp / "out.yaml"), "--report", str(tmp / "nope" / "r.json")],
        expect=("does not exist",),
        named=lambda tmp: str(tmp / "nope" / "r.json"),
    ),
    Hostile(
        "report onto the output",
        make=_base,
        extra=lambda tmp: ["-o", str(tmp / "out.yaml"), "--report", str(tmp / "out.yaml")],
        expect=("same file",),
        named=lambda tmp: str(tmp / "out.yaml"),
    ),
]


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every entry under root (symlinks not followed) with its bytes, to prove nothing changed."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for entry in dirnames + filenames:
            path = Path(dirpath) / entry
            is_file = path.is_file() and not path.is_symlink()
            out[str(path.relative_to(root))] = path.read_bytes() if is_file and path.stat().st_size < 1 << 20 else None
    return out


def _inputs(case: Hostile, tmp: Path) -> list[str]:
    if case.make is not None:
        return case.make(tmp)
    path = tmp / case.name
    path.write_bytes(case.text if isinstance(case.text, bytes) else (case.text or "").encode("utf-8"))
    return [str(path)]


def test_the_table_covers_the_issue() -> None:
    assert len(CASES) >= 40
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input_is_one_clear_line(case: Hostile, tmp_path: Path, runner: CliRunner, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # a tag that did run `touch PWNED` would leave the file here
    inputs = _inputs(case, tmp_path)
    options = (
        case.extra(tmp_path)
        if case.extra
        else ["-o", str(tmp_path / "out.yaml"), "--report", str(tmp_path / "report.json")]
    )
    before = _tree(tmp_path)
    started = time.process_time()  # CPU time: another process loading the machine does not count
    result = runner.invoke(main, ["neox2cerebras", *inputs, *options])
    elapsed = time.process_time() - started
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("neoconv: error: ")
    named = case.named(tmp_path) if case.named else inputs[0]
    assert named in line, line
    for fragment in case.expect:
        assert fragment in line, (fragment, line)
    if case.line is not None:
        assert f"{named}:{case.line}:" in line, line
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stdout == ""
    assert _tree(tmp_path) == before  # no output, report, temp file or side effect; inputs unchanged
    assert elapsed < 1.5, f"{case.id} took {elapsed:.2f}s"  # bounded: refused before anything is built


LIBRARY_CASES = [c for c in CASES if c.make is None and c.extra is None]


@pytest.mark.parametrize("case", LIBRARY_CASES, ids=[c.id for c in LIBRARY_CASES])
def test_library_raises_typed_errors_and_never_prints(case: Hostile, tmp_path: Path, capsys) -> None:
    path = _inputs(case, tmp_path)[0]
    with pytest.raises(InputError) as info:
        translate(path, "neox", "cerebras")
    exc = info.value
    assert isinstance(exc, NeoconvError)
    assert exc.file == path
    if case.line is not None:
        assert exc.line == case.line
    if case.key is not None:
        assert exc.key == case.key
    for fragment in case.expect:
        assert fragment in str(exc)
    assert capsys.readouterr() == ("", "")


def test_unreadable_file(tmp_path: Path, runner: CliRunner, monkeypatch) -> None:
    path = tmp_path / "secret.yml"
    path.write_text(BASE)
    path.chmod(0)
    if os.access(path, os.R_OK):  # root reads anything: make the OS refusal happen where io.py opens files
        real_open = tin._open_input

        def refusing_open(file: str) -> int:
            if Path(file) == path:
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file)

        monkeypatch.setattr(tin, "_open_input", refusing_open)
    result = runner.invoke(main, ["neox2cerebras", str(path), "-o", str(tmp_path / "out.yaml")])
    path.chmod(0o644)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"neoconv: error: {path}: permission denied; check the file's permissions"]
    assert not (tmp_path / "out.yaml").exists()


def test_unwritable_output_folder(tmp_path: Path, runner: CliRunner, monkeypatch) -> None:
    (tmp_path / "in.yml").write_text(BASE)

    def full_disk(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tout, "_open_new", full_disk)
    result = runner.invoke(main, ["neox2cerebras", str(tmp_path / "in.yml"), "-o", str(tmp_path / "out.yaml"), "-q"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"neoconv: error: {tmp_path / 'out.yaml'}: cannot write here: No space left on device"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.yml"]


def test_ctrl_c_while_writing_leaves_nothing(tmp_path: Path, runner: CliRunner, monkeypatch) -> None:
    """Interrupted after the temp files are written, before the rename: no output, no temp file."""
    (tmp_path / "in.yml").write_text(BASE)
    (tmp_path / "out.yaml").write_text("the previous output\n")

    def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(tout.os, "replace", interrupted)
    result = runner.invoke(
        main,
        [
            "neox2cerebras",
            str(tmp_path / "in.yml"),
            "-o",
            str(tmp_path / "out.yaml"),
            "--report",
            str(tmp_path / "report.json"),
            "-q",
        ],
    )
    assert result.exit_code == 130  # the shell convention for SIGINT
    assert result.stderr.splitlines() == ["neoconv: interrupted; nothing written"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.yml", "out.yaml"]
    assert (tmp_path / "out.yaml").read_text() == "the previous output\n"


def test_outputs_are_written_together_with_normal_permissions(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "in.yml").write_text(BASE)
    out, report = tmp_path / "out.yaml", tmp_path / "report.json"
    result = runner.invoke(
        main, ["neox2cerebras", str(tmp_path / "in.yml"), "-o", str(out), "--report", str(report), "-q"]
    )
    assert result.exit_code == 0, result.stderr
    assert out.read_text().count("hidden_size: 64") == 1 and '"entries"' in report.read_text()
    umask = os.umask(0o022)  # the test may read it so (the library must not)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's private 0600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.yml", "out.yaml", "report.json"]


def test_debug_shows_a_traceback_default_never(tmp_path: Path, runner: CliRunner) -> None:
    bad = tmp_path / "in.yml"
    bad.write_text(BASE.replace("hidden_size: 64", "hidden_size: big"))
    quiet = runner.invoke(main, ["neox2cerebras", str(bad)])
    loud = runner.invoke(main, ["neox2cerebras", str(bad), "--debug"])
    assert quiet.exit_code == loud.exit_code == 2
    assert "Traceback" not in quiet.stderr and len(quiet.stderr.splitlines()) == 1
    assert "Traceback (most recent call last)" in loud.stderr and "InputError" in loud.stderr
    assert loud.stderr.splitlines()[-1] == quiet.stderr.splitlines()[0]


def test_unexpected_exception_is_one_line_internal_error(tmp_path: Path, runner: CliRunner, monkeypatch) -> None:
    (tmp_path / "in.yml").write_text(BASE)

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr("neoconv.services.pipeline.emit", broken)
    result = runner.invoke(main, ["neox2cerebras", str(tmp_path / "in.yml")])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"neoconv: error: internal error while reading {tmp_path / 'in.yml'}: RuntimeError: boom\\nsecond line "
        "(rerun with --debug and report it)"
    ]


def test_stdin_is_read_bounded_and_named(runner: CliRunner) -> None:
    result = runner.invoke(main, ["neox2cerebras", "-"], input=b"\0\1\2")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "neoconv: error: -:1: binary file (contains NUL bytes); expected YAML or JSON text"
    ]


# ---- the loading rules, one by one, through the library ----------------------------------------


# A key given twice in one YAML mapping: NeoX (yaml.load), Model Zoo and VeOmni (yaml.safe_load) keep
# the last value and run the file, so it is read the same way (a config they run is not refused) and
# the report's note names the repeat, both lines and the value that is not used.
TWICE = [
    ("top-level", BASE + "hidden_size: 128\n", "hidden_size", 128, "hidden_size given twice (lines 2 and 7)", "64"),
    (
        "nested",
        BASE + "optimizer:\n  type: Adam\n  params:\n    lr: 0.1\n    lr: 0.2\n",
        "optimizer.params.lr",
        0.2,
        "optimizer.params.lr given twice (lines 10 and 11)",
        "0.1",
    ),
    (
        "flow mapping",
        BASE + "optimizer: {type: Adam, params: {lr: 0.1, eps: 1.0e-8, lr: 0.2}}\n",
        "optimizer.params.lr",
        0.2,
        "optimizer.params.lr given twice (lines 7 and 7)",
        "0.1",
    ),
    (
        "block",
        BASE
        + "optimizer:\n  type: Adam\n  params: {lr: 0.1, eps: 1.0e-6}\noptimizer:\n  type: Adam\n  params: {lr: 0.2}\n",
        "optimizer.params.lr",
        0.2,
        "optimizer given twice (lines 7 and 10)",
        "optimizer.params.eps, which the later block does not set",
    ),
]


@pytest.mark.parametrize("case", TWICE, ids=[c[0] for c in TWICE])
def test_a_key_given_twice_is_read_as_the_framework_reads_it(
    case: tuple[str, str, str, Any, str, str], tmp_path: Path
) -> None:
    _, text, leaf, value, said, first = case
    (tmp_path / "in.yml").write_text(text)
    result = translate(tmp_path / "in.yml", "neox", "neox")
    assert flatten(result.config)[leaf] == value
    note = result.report.source["note"]
    assert said in note and first in note, note
    assert "NeoX's YAML loader keeps the last" in note


def test_a_key_given_twice_with_one_value_needs_no_note(tmp_path: Path) -> None:
    (tmp_path / "in.yml").write_text(BASE + "hidden_size: 64\n")
    result = translate(tmp_path / "in.yml", "neox", "cerebras")
    assert "note" not in result.report.source
    entry = next(e for e in result.report.entries if e.source_key == "hidden_size")
    assert "given twice (lines 2 and 7)" in entry.detail  # still named on the setting, with -v


def test_a_key_given_twice_in_cerebras_and_veomni_files(tmp_path: Path) -> None:
    legacy = (
        "model:\n  hidden_size: 64\n  num_heads: 4\n  num_hidden_layers: 2\n  hidden_size: 128\n  vocab_size: 100\n"
    )
    (tmp_path / "c.yaml").write_text(legacy)
    got = translate(tmp_path / "c.yaml", "cerebras", "neox")
    assert got.config["hidden_size"] == 128
    assert "Model Zoo up to 2.4 (yaml.safe_load) keeps the last, as here: the first, 64" in got.report.source["note"]
    # Model Zoo 2.5+ loads params with UniqueKeyLoader, which refuses the repeat: the file is read as the
    # newest release its keys fit that runs it, and a later release named by the user is refused
    assert (
        got.report.source["version"] == "2.4.3"
        and "a key given twice: read as 2.4.3" in got.report.source["version_detail"]
    )
    with pytest.raises(InputError) as info:
        translate(tmp_path / "c.yaml", "cerebras", "neox", source_version="2.5")
    assert info.value.line == 5 and "model.hidden_size given twice (lines 2 and 5)" in info.value.message
    assert (
        "Cerebras Model Zoo 2.5.0 and later refuse that (UniqueKeyLoader: Found duplicate YAML key)"
        in info.value.message
    )
    assert translate(tmp_path / "c.yaml", "cerebras", "neox", source_version="2.4").config["hidden_size"] == 128
    (tmp_path / "v.yaml").write_text("train:\n  lr: 1.0e-4\n  lr: 2.0e-4\n")
    got = translate(tmp_path / "v.yaml", "veomni", "neox")
    assert got.config["optimizer"]["params"]["lr"] == 2.0e-4
    assert "train.lr given twice (lines 2 and 3); VeOmni's YAML loader" in got.report.source["note"]


def test_validate_names_a_repeat_by_what_the_release_does_with_it(tmp_path: Path) -> None:
    from neoconv.services.validate_file import validate_file

    legacy = (
        "model:\n  hidden_size: 64\n  num_heads: 4\n  num_hidden_layers: 2\n  hidden_size: 128\n  vocab_size: 100\n"
    )
    (tmp_path / "c.yaml").write_text(legacy)
    kept = [p.message for p in validate_file(str(tmp_path / "c.yaml"), "cerebras", version="2.4").problems]
    assert any("keeps the last, as here: the first, 64, is not used" in m for m in kept), kept
    refused = validate_file(str(tmp_path / "c.yaml"), "cerebras", version="2.10").problems
    assert [(p.line, p.message) for p in refused if "given twice" in p.message] == [
        (
            5,
            "model.hidden_size given twice (lines 2 and 5): Cerebras Model Zoo 2.5.0 and later refuse that "
            "(UniqueKeyLoader: Found duplicate YAML key): keep one",
        )
    ]


def test_yaml_duplicates_are_errors_unless_collected() -> None:
    text = "a:\n  b: 1\n  c: [1, {x: 1, x: 2}]\na:\n  b: 2\n"
    with pytest.raises(InputError, match="duplicate key 'x'"):
        tio.parse_yaml(text, "d.yml")
    found: list[Any] = []
    assert tio.parse_yaml(text, "d.yml", duplicates=found) == yaml.safe_load(text)
    assert [(d.path, d.first_line, d.line, d.shadowed) for d in found] == [
        (("a", "c", "1", "x"), 3, 3, 1),
        (("a",), 1, 4, {"b": 1, "c": [1, {"x": 2}]}),
    ]


def test_merge_keys_override_is_not_a_duplicate() -> None:
    text = "base: &b {lr: 0.1, eps: 1.0e-8}\nparams:\n  <<: *b\n  lr: 0.2\n"
    assert tio.parse_yaml(text, "m.yml")["params"] == {"lr": 0.2, "eps": 1.0e-8}
    # several merged mappings: the first one listed wins, keys written here win over all of them
    text = "a: &a {x: 1, y: 1}\nb: &b {x: 2, z: 2}\nc:\n  <<: [*a, *b]\n  z: 3\n"
    assert tio.parse_yaml(text, "m.yml")["c"] == {"x": 1, "y": 1, "z": 3}


def test_dates_stay_text_and_shared_blocks_still_load() -> None:
    data = tio.parse_yaml("run: 2024-01-31\ndefaults: &d {lr: 0.1}\ntrain: *d\n", "d.yml")
    assert data == {"run": "2024-01-31", "defaults": {"lr": 0.1}, "train": {"lr": 0.1}}


def test_limits_are_exact() -> None:
    assert tio.parse_yaml(nest_flow(tio.MAX_DEPTH - 1), "ok.yml")  # the mapping itself is level one
    with pytest.raises(InputError, match="nested more than 100 levels"):
        tio.parse_yaml(nest_flow(tio.MAX_DEPTH), "deep.yml")
    fits = "a: &a [" + ", ".join(["1"] * 990) + "]\nb: [" + ", ".join(["*a"] * 99) + "]\n"
    assert len(tio.parse_yaml(fits, "ok.yml")["b"]) == 99  # 99,103 values expanded: just under the cap
    with pytest.raises(InputError, match="alias bomb"):
        tio.parse_yaml(fits.replace("*a]", "*a, *a]"), "bomb.yml")


def test_json_parser_refuses_what_json_readers_refuse() -> None:
    with pytest.raises(InputError) as info:
        tio.parse_json('{\n  "a": 1,\n  "b": [1, 2,]\n}', "c.json")
    # the place Python's json module names: the bracket after the trailing comma, or (3.13+) the comma
    assert (info.value.file, info.value.line) == ("c.json", 3) and info.value.column in (13, 14)
    assert str(info.value).startswith(f"c.json:3:{info.value.column}: invalid JSON")
    with pytest.raises(InputError, match="duplicate key 'a'"):
        tio.parse_json('{"a": 1, "a": 2}', "c.json")
    with pytest.raises(InputError, match="NaN is not JSON"):
        tio.parse_json('{"lr": NaN}', "c.json")
    with pytest.raises(InputError, match="invalid JSON"):
        tio.parse_json('{"n": ' + "9" * 5000 + "}", "c.json")
    with pytest.raises(InputError, match="nested too deeply"):
        tio.parse_json("[" * 100_000 + "]" * 100_000, "c.json")
    with pytest.raises(InputError, match="top level is a list"):
        tio.parse_json("[1]", "c.json")


def test_flatten_is_bounded_for_python_mappings() -> None:
    loop: dict = {}
    loop["self"] = loop  # a library caller can hand over a cyclic mapping
    with pytest.raises(InputError, match="nested more than 100 levels") as info:
        translate(loop, "neox", "cerebras")
    assert info.value.file == "<config>" and info.value.key.startswith("self.self.self")
    with pytest.raises(InputError, match="more than 100000 settings"):
        tio.flatten({f"k{i}": i for i in range(tio.MAX_LEAVES + 1)})


def test_write_atomic_refuses_before_writing(tmp_path: Path) -> None:
    src = tmp_path / "in.yml"
    src.write_text("a: 1\n")
    with pytest.raises(OutputError, match="refusing to overwrite the input file") as info:
        tout.write_files_atomic({str(tmp_path / "ok.yaml"): "x", str(src): "y"}, inputs=[str(src)])
    assert info.value.file == str(src)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.yml"]  # the first target was not written either
    tout.write_atomic(tmp_path / "ok.yaml", "x: 1\n")
    assert (tmp_path / "ok.yaml").read_text() == "x: 1\n"


# ---- every reader shares the loader: the file-level cases for each source format ----------------

FILE_LEVEL = {
    "binary": (b"\x89PNG\r\n\x1a\n\0\0", "binary file"),
    "not UTF-8": (b"name: caf\xe9\n", "not UTF-8"),
    "empty": (b"", "empty file"),
    "top-level list": (b"[1, 2]\n", None),
    "syntax": (b'{"a": [1, 2\n', "invalid"),
    "python tag": (b"a: !!python/object/apply:os.system [ls]\n", None),
    "alias bomb": (laughs("list").encode(), None),
    "deep nesting": (nest_flow(50_000).encode(), None),
    # JSON readers (DeepSpeed, HF) refuse it as DeepSpeed does; YAML readers read it as PyYAML does
    # (the last value wins) and then find no setting of theirs
    "duplicate key": (b'{"a": 1, "a": 2}\n', None),
}


@pytest.mark.parametrize("src", sorted(f for f in FORMATS))
@pytest.mark.parametrize("kind", sorted(FILE_LEVEL))
def test_every_reader_refuses_broken_files(src: str, kind: str, tmp_path: Path, runner: CliRunner) -> None:
    if kind == "empty" and FORMATS[src].empty_allowed:
        pytest.skip(f"an empty {FORMATS[src].title} file is a config of its defaults (FormatSpec.empty_allowed)")
    data, expected = FILE_LEVEL[kind]
    path = tmp_path / f"in{FORMATS[src].suffix}"
    path.write_bytes(data)
    dst = next(f for f in FORMATS if f != src and FORMATS[f].can_write)
    result = runner.invoke(main, [f"{src}2{dst}", str(path), "-o", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 2, (result.stderr, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"neoconv: error: {path}"), result.stderr
    assert expected is None or expected in lines[0], lines[0]
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


# ---- round two (issue 13): what -o names is never replaced unless it is a regular file ----------

OUTPUT_TEXT = "model:\n"  # every translation of BASE to Cerebras writes a model section


def _translate_to(target: Path, tmp: Path, **popen: object) -> subprocess.CompletedProcess[bytes]:
    (tmp / "in.yml").write_text(BASE)
    cmd = [sys.executable, "-m", "neoconv", "neox2cerebras", str(tmp / "in.yml"), "-o", str(target), "-q"]
    return subprocess.run(cmd, timeout=60, **popen)  # type: ignore[call-overload, no-any-return]


def test_output_onto_a_fifo_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = _translate_to(fifo, tmp_path, capture_output=True)
    reader.join(timeout=30)  # a daemon: left blocked (not waited for) when nothing was written
    assert result.returncode == 0, result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still the FIFO, not a regular file renamed over it
    assert got and OUTPUT_TEXT in got[0].decode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.yml", "pipe.yaml"]


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_output_onto_a_device_node_is_written_through(tmp_path: Path) -> None:
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # this folder's own /dev/null
    null.chmod(0o666)
    result = _translate_to(null, tmp_path, capture_output=True)
    assert result.returncode == 0, result.stderr
    mode = os.lstat(null).st_mode
    assert stat.S_ISCHR(mode) and mode & 0o777 == 0o666 and os.lstat(null).st_rdev == os.makedev(1, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.yml", "null"]


@pytest.mark.parametrize("stdout_kind", ["pipe", "file"])
def test_output_through_a_link_to_stdout_is_written_there(tmp_path: Path, stdout_kind: str) -> None:
    link = tmp_path / "stdout.yaml"
    link.symlink_to("/proc/self/fd/1")
    if stdout_kind == "pipe":
        result = _translate_to(link, tmp_path, capture_output=True)
        written = result.stdout.decode()
    else:
        with open(tmp_path / "captured.txt", "wb") as fh:
            result = _translate_to(link, tmp_path, stdout=fh, stderr=subprocess.PIPE)
        written = (tmp_path / "captured.txt").read_text()
    assert result.returncode == 0, result.stderr
    assert os.readlink(link) == "/proc/self/fd/1"  # the link is still a link
    assert OUTPUT_TEXT in written
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_full_device_is_one_clear_line_and_nothing_else_is_written(tmp_path: Path, runner: CliRunner) -> None:
    full = tmp_path / "full"  # this folder's own /dev/full (a test must never risk the machine's)
    os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    (tmp_path / "in.yml").write_text(BASE)
    result = runner.invoke(
        main, ["neox2cerebras", str(tmp_path / "in.yml"), "-o", str(full), "--report", str(tmp_path / "r.json"), "-q"]
    )
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"neoconv: error: {full}: cannot write here: No space left on device"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full", "in.yml"]  # the report was not renamed into place
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_output_names_of_any_valid_length(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "in.yml").write_text(BASE)
    longest = tmp_path / ("x" * 250 + ".yaml")  # 255 bytes: valid, though a temp name built from all of it is not
    ok = runner.invoke(main, ["neox2cerebras", str(tmp_path / "in.yml"), "-o", str(longest), "-q"])
    assert ok.exit_code == 0, ok.stderr
    assert OUTPUT_TEXT in longest.read_text()
    too_long = tmp_path / ("x" * 300 + ".yaml")
    bad = runner.invoke(main, ["neox2cerebras", str(tmp_path / "in.yml"), "-o", str(too_long), "-q"])
    assert bad.exit_code == 2
    assert bad.stderr.splitlines() == [f"neoconv: error: {too_long}: cannot write here: File name too long"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.yml", longest.name]


# ---- round two: DeepSpeed JSON read as DeepSpeed reads it -----------------------------------------


@pytest.mark.parametrize(
    "text, expected, line",
    [
        ('{"train_batch_size": 8,\n "foo": 1e999}\n', "the number '1e999' is past the float range", 2),
        ('{"train_batch_size": 8,\n "optimizer": {"params": {"lr": -1e400}}}\n', "'-1e400' is past the float range", 2),
        (
            '{"train_batch_size": 8,\n "optimizer.type": "Lamb"}\n',
            "key 'optimizer.type' has a dot: DeepSpeed reads keys as written",
            2,
        ),
        (
            '{"train_batch_size": 8,\n "zero_optimization": {\n   "stage.x": 1}}\n',
            "(in zero_optimization) has a dot",
            3,
        ),
    ],
)
def test_deepspeed_json_that_deepspeed_reads_differently_is_refused(
    text: str, expected: str, line: int, tmp_path: Path, runner: CliRunner
) -> None:
    path = tmp_path / "ds.json"
    path.write_text(text)
    for dst in ("deepspeed", "cerebras"):
        result = runner.invoke(main, [f"deepspeed2{dst}", str(path), "-o", str(tmp_path / "out"), "-q"])
        assert result.exit_code == 2, result.stderr
        (only,) = result.stderr.splitlines()
        assert only.startswith(f"neoconv: error: {path}:{line}: ") and expected in only, only
        assert sorted(p.name for p in tmp_path.iterdir()) == ["ds.json"]


# ---- round two: what reaches the terminal ----------------------------------------------------------


def test_the_report_table_escapes_control_characters(tmp_path: Path, runner: CliRunner) -> None:
    path = tmp_path / "in.yml"
    path.write_text(BASE + '"\\e[31mevil\\nexact  fake -> row": 1\nx: "\\a\\e]0;title\\a"\n')
    result = runner.invoke(main, ["neox2neox", str(path), "-o", str(tmp_path / "out.yml"), "-v"])
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    rows = result.stderr.splitlines()
    assert sum(1 for row in rows if row.startswith("exact  fake")) == 0  # no forged row
    assert any("\\x1b[31mevil\\nexact  fake -> row" in row for row in rows)


# ---- round two: diff and roundtrip arguments -----------------------------------------------------


@pytest.mark.parametrize("rtol", ["-1", "inf", "nan"])
def test_diff_tolerance_must_be_finite_and_not_negative(rtol: str, tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "a.yml").write_text(BASE)
    for command in (
        ["diff", str(tmp_path / "a.yml"), str(tmp_path / "a.yml")],
        ["roundtrip", "neox2cerebras", str(tmp_path / "a.yml")],
    ):
        result = runner.invoke(main, [*command, "--rtol", rtol])
        assert result.exit_code == 2
        assert result.stderr.splitlines() == [
            f"neoconv: error: --rtol {float(rtol)}: give a finite number of at least 0 (e.g. 1e-6; 0 for exact)"
        ]


def test_diff_and_roundtrip_of_a_huge_number_name_the_key(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "a.yml").write_text(BASE)
    (tmp_path / "h.yml").write_text(BASE + "train_iters: 1" + "0" * 400 + "\n")
    for command in (
        ["diff", str(tmp_path / "h.yml"), str(tmp_path / "a.yml")],
        ["roundtrip", "neox2veomni", str(tmp_path / "h.yml")],
    ):
        result = runner.invoke(main, command)
        assert result.exit_code == 2
        assert result.stderr.splitlines() == [
            f"neoconv: error: {tmp_path / 'h.yml'}:7: train_iters: a number of 401 digits "
            "is past the float range (about 1.8e308) (fix the value)"
        ]


# ---- round two: VeOmni's side file, and files that are no config ---------------------------------


def test_veomni_side_file_is_named_after_the_output_and_never_clobbers(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "in.yml").write_text(BASE)
    mine = tmp_path / "config.json"  # a user's own HF config in the output folder
    mine.write_text('{"model_type": "mine"}\n')
    args = ["neox2veomni", str(tmp_path / "in.yml"), "-o", str(tmp_path / "out.yaml"), "-q"]
    assert runner.invoke(main, args).exit_code == 0
    assert mine.read_text() == '{"model_type": "mine"}\n'
    assert json.loads((tmp_path / "out.config.json").read_text())["num_hidden_layers"] == 2
    assert runner.invoke(main, args).exit_code == 0  # a re-run replaces what neoconv wrote there
    (tmp_path / "out.yaml").unlink()
    (tmp_path / "out.config.json").write_text('{"model_type": "theirs"}\n')  # not beside a neoconv output
    before = _tree(tmp_path)
    result = runner.invoke(main, args)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"neoconv: error: {tmp_path / 'out.config.json'} exists and was not written by "
        f"neoconv beside {tmp_path / 'out.yaml'}: move it, or choose another output name"
    ]
    assert _tree(tmp_path) == before


def test_veomni_side_file_needs_an_output_in_a_folder(tmp_path: Path, runner: CliRunner) -> None:
    (tmp_path / "in.yml").write_text(BASE)
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    result = runner.invoke(main, ["neox2veomni", str(tmp_path / "in.yml"), "-o", str(fifo), "-q"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"neoconv: error: this translation also writes pipe.config.json beside the "
        f"output: give -o a file name in a folder, not {fifo}"
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.yml", "pipe.yaml"]


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="no /proc here")
def test_a_file_that_is_no_config_is_refused(tmp_path: Path, runner: CliRunner) -> None:
    result = runner.invoke(main, ["neox2cerebras", "/proc/self/status", "-o", str(tmp_path / "out.yaml")])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "neoconv: error: /proc/self/status:1: not a GPT-NeoX config: none of its keys is a GPT-NeoX parameter"
    ]
    assert not list(tmp_path.iterdir())
