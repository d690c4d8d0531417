"""The library's contract (issue 13): every bad argument to translate/load/dump raises a
NeoconvError subclass with a clear message (never a TypeError, RecursionError or a silent
acceptance), and nothing is printed."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from neoconv import NeoconvError, dump, load, translate
from neoconv.core.errors import InputError, UsageError

ROOT = Path(__file__).resolve().parent.parent
BASE = {"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "seq_length": 128, "max_position_embeddings": 128}


@pytest.fixture
def base(tmp_path: Path) -> str:
    path = tmp_path / "base.yml"
    path.write_text(yaml.safe_dump(BASE))
    return str(path)


def _cyclic() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["model"] = loop
    return loop


def _deep(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth):
        node["k"] = {}
        node = node["k"]
    return root


CASES: list[tuple[str, Callable[[str], Any], type[NeoconvError], str]] = [
    ("config None", lambda b: translate(None, "neox", "cerebras"), UsageError, "not NoneType"),  # type: ignore[arg-type]
    ("config 42", lambda b: translate(42, "neox", "cerebras"), UsageError, "not int"),  # type: ignore[arg-type]
    ("config object", lambda b: translate(object(), "neox", "cerebras"), UsageError, "not object"),  # type: ignore[arg-type]
    ("config bytes", lambda b: translate(b"num_layers: 2", "neox", "cerebras"), UsageError, "is bytes"),  # type: ignore[arg-type]
    ("config list of ints", lambda b: translate([42], "neox", "cerebras"), UsageError, "config[0] must be a path"),  # type: ignore[list-item]
    ("empty path", lambda b: translate("", "neox", "cerebras"), UsageError, "empty file name"),
    ("NUL in a path", lambda b: translate("a\0b.yml", "neox", "cerebras"), UsageError, "NUL byte"),
    ("src a list", lambda b: translate(b, ["neox"], "cerebras"), UsageError, "unknown format ['neox']"),  # type: ignore[arg-type]
    ("dst a list", lambda b: translate(b, "neox", ["cerebras"]), UsageError, "unknown format ['cerebras']"),  # type: ignore[arg-type]
    (
        "set_values a list",
        lambda b: translate(b, "neox", "cerebras", set_values=["model.vocab_size=5"]),
        UsageError,
        "set_values must be a mapping",
    ),
    (
        "set_values unchecked type",
        lambda b: translate(b, "neox", "cerebras", set_values={"model.vocab_size": "abc"}),
        UsageError,
        "set_values model.vocab_size: expected a number, got the string 'abc'",
    ),
    (
        "set_values unknown field",
        lambda b: translate(b, "neox", "cerebras", set_values={"model.vocab": 5}),
        UsageError,
        "did you mean model.vocab_size",
    ),
    (
        "set_values bad betas",
        lambda b: translate(b, "neox", "cerebras", set_values={"optim.betas": [0.9, 2]}),
        UsageError,
        "set_values optim.betas",
    ),
    (
        "unknown option",
        lambda b: translate(b, "neox", "cerebras", worldsize=8),
        UsageError,
        "unknown option 'worldsize'; translate() takes set_values, world_size",
    ),
    (
        "world_size a string",
        lambda b: translate(b, "neox", "cerebras", world_size="8"),
        UsageError,
        "whole number of GPUs",
    ),
    ("world_size huge", lambda b: translate(b, "neox", "cerebras", world_size=10**400), UsageError, "world_size"),
    (
        "source_version unknown",
        lambda b: translate(b, "neox", "cerebras", source_version="zz"),
        UsageError,
        "--from-version 'zz': not a GPT-NeoX release; known: 2021-04-26, ",
    ),
    (
        "with_files a string",
        lambda b: translate(b, "neox", "cerebras", with_files="x.json"),
        UsageError,
        "(path, format) pairs",
    ),
    (
        "with_files a bad pair",
        lambda b: translate(b, "neox", "cerebras", with_files=[("x.json",)]),
        UsageError,
        "is not a (path, format) pair",
    ),
    ("load(5)", lambda b: load(5, "neox"), UsageError, "not int"),  # type: ignore[arg-type]
    ("load(None)", lambda b: load(None, "neox"), UsageError, "not NoneType"),  # type: ignore[arg-type]
    ("load model_config 5", lambda b: load(b, "veomni", model_config=5), UsageError, "model_config must be a path"),  # type: ignore[arg-type]
    ("dump a list", lambda b: dump([1, 2], "neox"), UsageError, "takes a mapping"),  # type: ignore[arg-type]
    (
        "dump NaN into JSON",
        lambda b: dump({"lr": math.nan}, "deepspeed"),
        InputError,
        "lr: nan cannot be written as JSON",
    ),
    ("dump infinity into JSON", lambda b: dump({"a": {"b": [1, math.inf]}}, "deepspeed"), InputError, "a.b[1]: inf"),
    ("dump a set", lambda b: dump({"a": {1, 2}}, "neox"), InputError, "a: set {1, 2} is not a config value"),
    ("dump an object", lambda b: dump({"a": object()}, "neox"), InputError, "a: object"),
    ("dump an object into JSON", lambda b: dump({"a": object()}, "deepspeed"), InputError, "a: object"),
    ("dump a cycle", lambda b: dump(_cyclic(), "neox"), InputError, "nested more than 100 levels"),
    ("dump a cycle into JSON", lambda b: dump(_cyclic(), "deepspeed"), InputError, "nested more than 100 levels"),
    (
        "cyclic VeOmni mapping",
        lambda b: translate(_cyclic(), "veomni", "neox"),
        InputError,
        "nested more than 100 levels",
    ),
    (
        "5,000-deep VeOmni mapping",
        lambda b: translate(_deep(5000), "veomni", "neox"),
        InputError,
        "nested more than 100 levels",
    ),
    (
        "5,000-deep Cerebras mapping",
        lambda b: translate(_deep(5000), "cerebras", "neox"),
        InputError,
        "nested more than 100",
    ),
    ("an object as a value", lambda b: translate({**BASE, "foo": object()}, "neox", "neox"), InputError, "foo: object"),
    (
        "a cycle inside a value",
        lambda b: translate({**BASE, "foo": [_cyclic()]}, "neox", "neox"),
        InputError,
        "nested more",
    ),
    (
        "an integer past the float range",
        lambda b: translate({**BASE, "hidden_size": 10**400}, "neox", "cerebras"),
        InputError,
        "hidden_size: a number of 401 digits is past the float range",
    ),
    (
        "a non-string nested key",
        lambda b: translate({**BASE, "optimizer": {1.5: 2}}, "neox", "neox"),
        InputError,
        "optimizer: key 1.5 is a number, not a setting name",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_arguments_raise_typed_errors(case: Any, base: str, capsys: pytest.CaptureFixture[str]) -> None:
    _, call, kind, fragment = case
    with pytest.raises(kind) as info:
        call(base)
    assert fragment in str(info.value), str(info.value)
    assert "\n" not in str(info.value)
    assert capsys.readouterr() == ("", "")


def test_set_values_are_used_as_checked(base: str) -> None:
    result = translate(base, "neox", "cerebras", set_values={"model.vocab_size": 50304.0, "optim.betas": (0.9, 0.95)})
    assert result.config["model"]["vocab_size"] == 50304 and type(result.config["model"]["vocab_size"]) is int
    assert result.config["optimizer"]["betas"] == [0.9, 0.95]


def test_a_mapping_is_copied_not_shared(base: str) -> None:
    config = {**BASE, "optimizer": {"type": "Adam", "params": {"lr": 0.001, "betas": (0.9, 0.95)}}}
    result = translate(config, "neox", "neox")
    config["optimizer"]["params"]["lr"] = 5.0  # a later change by the caller does not reach the result
    assert result.config["optimizer"]["params"] == {"lr": 0.001, "betas": [0.9, 0.95]}


def test_dump_writes_plain_documents_and_json_never_gets_nan() -> None:
    assert json.loads(dump({"train_batch_size": 8, "optimizer": {"params": {"betas": (0.9, 0.95)}}}, "deepspeed")) == {
        "train_batch_size": 8,
        "optimizer": {"params": {"betas": [0.9, 0.95]}},
    }
    assert "!!" not in dump({"a": [1, 2]}, "neox")


def test_the_same_file_twice_is_refused(base: str, tmp_path: Path) -> None:
    ds = tmp_path / "ds.json"
    ds.write_text('{"train_micro_batch_size_per_gpu": 4}\n')
    with pytest.raises(UsageError, match="given twice"):
        translate(base, "neox", "cerebras", with_files=[(str(ds), "deepspeed"), (str(ds), "deepspeed")])
    with pytest.raises(UsageError, match="given twice"):
        translate([base, base], "neox", "cerebras")


def test_importing_the_library_never_touches_the_umask(tmp_path: Path) -> None:
    """A library must not change process state: reading the umask means setting it (os.umask),
    which races with any other thread creating files. Outputs still get the usual mode."""
    code = (
        "import os\ncalls = []\nreal = os.umask\n"
        "os.umask = lambda mask: calls.append(mask) or real(mask)\n"
        "real(0o027)\n"
        "import neoconv.io.documents, neoconv.io.outputs, neoconv.api, neoconv.batch\n"
        "from neoconv.io.outputs import write_atomic, replace_file\n"
        f"write_atomic({str(tmp_path / 'a.yaml')!r}, 'a: 1\\n')\n"
        f"replace_file({str(tmp_path / 'b.yaml')!r}, 'b: 1\\n')\n"
        "print(calls)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert run.stdout.strip() == "[]", run.stdout + run.stderr
    assert (tmp_path / "a.yaml").stat().st_mode & 0o777 == 0o640  # 0o666 less the umask 027
    assert (tmp_path / "b.yaml").stat().st_mode & 0o777 == 0o640
