"""The check stage reads its output once where it can (issue 26): the validation's reading of the
output stands for the read-back's when validate.shared_reading says they are the same reading. Here
both are made, for every format's inputs into every format (with --world-size, which the read-back
gives again), and wherever the shared reading is taken it equals the read-back's own reading: every
field with its value, origin, keys and note, in the same order, the extensions, the leaves, the
approximate readings and the coerced values. The conditions are also seen to refuse a reading that
differs."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import format_inputs
from neoconv.core.errors import NeoconvError
from neoconv.engine import Ingested
from neoconv.knowledge.registry import FORMATS
from neoconv.services import pipeline
from neoconv.services import validate
from neoconv.services.validate import validate_output

PAIRS = [(src, dst) for src in sorted(FORMATS) for dst in sorted(FORMATS)]


def _shape(ingested: Ingested) -> Any:
    fields = [(n, repr(v.value), v.origin, v.source_keys, v.note) for n, v in ingested.ir.fields.items()]
    return fields, ingested.ir.extensions, ingested.raw, ingested.lossy, ingested.coerced


def _both(path: Any, src: str, dst: str) -> tuple[Ingested, Ingested | None] | None:
    """(the read-back's own reading, the shared one or None), or None when the file does not translate."""
    try:
        request = pipeline.Request.of(str(path), src, dst, {"world_size": 8})
        sources = pipeline.read(request)
        request = request.keeping_layout(sources.main)
        ingested = pipeline.canonical(sources, request)
        written = pipeline.write(ingested, request)
    except NeoconvError:
        return None
    out, model_config = written.result, written.result.model_config
    if model_config is None and FORMATS[dst].takes_model_config:
        model_config = {}
    found = validate_output(out.document, dst, written.version, out.side_files, model_config, pipeline.read_ir)
    reading = None if isinstance(found, NeoconvError) else found.reading
    args = (out.document, dst, written.layout, written.version, ingested, model_config)
    try:
        own = pipeline.read_back(*args)
    except NeoconvError:
        return None
    taken: list[Ingested | None] = []
    original = validate.shared_reading

    def recorded(*given: Any) -> Ingested | None:
        taken.append(original(*given))
        return taken[-1]

    validate.shared_reading = recorded  # type: ignore[assignment]
    try:
        pipeline.read_back(*args, reading) if reading is not None else None
    finally:
        validate.shared_reading = original  # type: ignore[assignment]
    return own, taken[0] if taken else None


@pytest.mark.parametrize("src, dst", PAIRS, ids=[f"{s}2{d}" for s, d in PAIRS])
def test_the_shared_reading_is_the_read_backs_own(src: str, dst: str) -> None:
    for path in format_inputs(src)[:4]:
        both = _both(path, src, dst)
        if both is None or both[1] is None:
            continue
        own, shared = both
        assert _shape(shared) == _shape(own), f"{path.name}: {src}2{dst}"


@pytest.mark.parametrize("src, dst", [("cerebras", "neox"), ("neox", "hf"), ("megatron", "neox")])
def test_the_shared_reading_is_taken(src: str, dst: str) -> None:
    """(the comparison above meets shared readings: outputs of several formats are read once)"""
    assert any((both := _both(path, src, dst)) is not None and both[1] is not None for path in format_inputs(src))


def test_a_reading_at_another_release_or_of_another_tree_is_not_shared() -> None:
    from neoconv.knowledge.mapping import load_table

    path = format_inputs("cerebras")[0]
    request = pipeline.Request.of(str(path), "cerebras", "neox", {})
    ingested = pipeline.canonical(pipeline.read(request), request)
    written = pipeline.write(ingested, request)
    found = validate_output(written.result.document, "neox", written.version, {}, None, pipeline.read_ir)
    assert not isinstance(found, NeoconvError) and found.reading is not None
    back = pipeline.load(written.result.document, "neox")
    back.version = written.version
    table = load_table("neox").for_layout(back.layout)
    assert validate.shared_reading(found.reading, back, table, {}, set()) is not None  # (the same reading: taken)
    other = pipeline.load({**written.result.document, "num_layers": 3}, "neox")
    other.version = written.version
    assert validate.shared_reading(found.reading, other, table, {}, set()) is None
    assert validate.shared_reading(found.reading, back, load_table("cerebras"), {}, set()) is None
    touched = {"model.num_layers": ingested.ir.fields["model.num_layers"]}
    assert validate.shared_reading(found.reading, back, table, touched, set()) is None  # a value a rule reads


def test_releases_read_alike_only_on_the_same_side_of_every_bound() -> None:
    """Model Zoo's precision cases read otherwise before 1.7.0 and 2.0.2: 2.3.1 and 2.10.0 read a file
    alike (the validation's release told from an output's keys, the release it was written for), 1.6.0
    and 2.10.0 do not; a formula that takes the release with no bounds reads every release otherwise."""
    from dataclasses import replace

    from neoconv.knowledge.mapping import load_table

    table = load_table("cerebras")
    precision = next(r for r in table.rules if r.key == "model.mixed_precision")
    assert precision.formula is not None and set(precision.formula.read_bounds or ()) >= {"1.7.0", "2.0.2"}
    assert validate._reads_alike(precision, "cerebras", "2.3.1", "2.10.0")
    assert not validate._reads_alike(precision, "cerebras", "1.6.0", "2.10.0")
    unbounded = replace(precision, formula=replace(precision.formula, read_bounds=None))
    assert not validate._reads_alike(unbounded, "cerebras", "2.3.1", "2.10.0")
    model_dir = next(r for r in table.rules if r.key == "runconfig.model_dir")  # './' until 1.8.0, then none
    assert not validate._reads_alike(model_dir, "cerebras", "1.8.0", "2.10.0")
    assert validate._reads_alike(model_dir, "cerebras", "2.3.1", "2.10.0")
