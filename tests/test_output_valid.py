"""Every output valid in the target release (issue 28): a translation validates what it writes as
`neoconv validate --version RELEASE` does, and no entry calls a value `exact` or `converted` that the
target release refuses.

The sweep writes each output as the command line does (a same-format migration keeps the source's
text), then runs `validate` on the written file, apart from the translation's own check, and holds
the report to it: for every pair of the registry, every fixture input and every corpus file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from neoconv import translate
from neoconv.core.errors import NeoconvError, NothingToWrite
from neoconv.services.output_text import output_text, preservable
from neoconv.knowledge.registry import FORMATS, get_format
from neoconv.core.report import Entry, Report, Status, said
from neoconv.services.pipeline import read_ir
from neoconv.services.validate import apply_problems, validate_document
from neoconv.services.validate_file import validate_file


from conftest import CORPUS, FIXTURES, corpus_dir, corpus_files

PYTHIA = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"
CLAIMS = (Status.EXACT, Status.CONVERTED)
TARGETS = [(fmt, layout) for fmt, spec in FORMATS.items() for layout in (spec.layouts or (None,))]
SUFFIXES = {".yml", ".yaml", ".json", ".args", ".sh"}


def _entries_at(result: Any, key: str, statuses: tuple[Status, ...]) -> list[Entry]:
    """The entries of those statuses that write `key`, a block around it or a key inside it (a side
    file's key named by the file's role: `config.json:hidden_size`)."""
    spell = get_format(result.format).spell
    want = spell(key.split(":", 1)[1] if ":" in key else key)
    found = []
    for entry in result.report.entries:
        if entry.status not in statuses:
            continue
        for target in entry.targets:
            have = spell(target.split(":", 1)[1] if ":" in target else target)
            if (":" in target) != (":" in key):
                continue  # the main file's key and a side file's are different keys
            if have == want or have.startswith(want + ".") or want.startswith(have + "."):
                found.append(entry)
                break
    return found


def written_and_validated(path: Path, src: str, dst: str, layout: str | None, work: Path) -> tuple[Any, Any]:
    """Translate as the command line does, write the output and its side files into `work`, and
    validate the written file at the release the translation targets."""
    result = translate(
        [str(path)], src, dst, layout=layout, world_size=8, output=str(work / f"out{get_format(dst).suffix}")
    )
    out = work / f"out{get_format(dst).suffix}"
    out.write_text(output_text(result, str(path) if preservable(src, dst, [str(path)], []) else None))
    model_config = None
    for name, text in result.side_files.items():
        (work / name).write_text(text)
        if name.endswith("config.json"):
            model_config = str(work / name)
    return result, validate_file(str(out), dst, version=result.report.target["version"], model_config=model_config)


def offences(result: Any, validation: Any) -> list[str]:
    """What `validate` flags in the written file that the report calls exact or converted, and a
    report that says valid about a file validate flags."""
    found = [
        f"{p.key}: {p.message} (report: {e.status.value})"
        for p in validation.problems
        if p.key
        for e in _entries_at(result, p.key, CLAIMS)
    ]
    if validation.problems and result.report.target.get("valid") is not False:
        found.append(
            f"target.valid is {result.report.target.get('valid')!r}; validate: {validation.problems[0].render()}"
        )
    return found


def _inputs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in SUFFIXES)


FIXTURE_INPUTS = [
    (p, fmt) for fmt in FORMATS if (FIXTURES / "inputs" / fmt).is_dir() for p in _inputs(FIXTURES / "inputs" / fmt)
]


@pytest.mark.parametrize("path,src", FIXTURE_INPUTS, ids=[f"{s}:{p.name}" for p, s in FIXTURE_INPUTS])
def test_no_fixture_output_is_called_exact_where_its_release_refuses_it(path: Path, src: str, tmp_path: Path) -> None:
    found: dict[str, list[str]] = {}
    for i, (dst, layout) in enumerate(TARGETS):
        work = tmp_path / str(i)
        work.mkdir()
        try:
            result, validation = written_and_validated(path, src, dst, layout, work)
        except NeoconvError:
            continue  # refused: nothing written
        bad = offences(result, validation)
        if bad:
            found[f"{dst}/{layout}"] = bad
    assert found == {}


CORPUS_SOURCES = {
    "neox": ("neox", "**/*.yml"),
    "deepspeed": ("deepspeed", "**/*.json"),
    "cerebras-legacy": ("cerebras", "**/*.yaml"),
    "cerebras-trainer": ("cerebras", "**/*.yaml"),
    "veomni": ("veomni", "**/*.yaml"),
    "veomni-legacy": ("veomni", "**/*.yaml"),
}


@pytest.mark.slow  # a corpus sweep: every file into every target
@pytest.mark.parametrize("folder", list(CORPUS_SOURCES))
@pytest.mark.parametrize("dst,layout", TARGETS, ids=[f"{f}-{lay}" if lay else f for f, lay in TARGETS])
def test_no_corpus_output_is_called_exact_where_its_release_refuses_it(
    folder: str, dst: str, layout: str | None, tmp_path: Path
) -> None:
    src, pattern = CORPUS_SOURCES[folder]
    files = corpus_files(folder, pattern)
    if not files:
        corpus_dir(folder)  # skips, saying why
    found: dict[str, list[str]] = {}
    for i, path in enumerate(files):
        work = tmp_path / str(i)
        work.mkdir()
        try:
            result, validation = written_and_validated(path, src, dst, layout, work)
        except NeoconvError:
            continue
        bad = offences(result, validation)
        if bad:
            found[str(path.relative_to(CORPUS))] = bad
    assert found == {}


# ---- the mechanism, on constructs written here ---------------------------------------------------


def _writing(monkeypatch: pytest.MonkeyPatch, fmt: str, change: Any) -> None:
    """The format's writer, with `change` applied to every document it makes (a writer bug)."""
    writer = get_format(fmt).load_writer()
    write = writer.write

    def changed(leaves, ctx):  # type: ignore[no-untyped-def]
        written = write(leaves, ctx)
        change(written.document)
        return written

    monkeypatch.setattr(writer, "write", changed)


def test_a_value_the_release_refuses_is_not_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    # a writer that writes a value the key's Literal lacks: neoconv's reader carries it (it is no field of
    # the canonical model), NeoX refuses it
    _writing(monkeypatch, "neox", lambda doc: doc.update(output_layer_parallelism="row"))
    result = translate(PYTHIA, "neox", "neox")
    entry = result.report.by_source()["output_layer_parallelism"]
    # (the same-format check names first that the leaf did not come back as the source had it)
    refusals = [values for kind, values in entry.messages() if kind == "refused_by_release"]
    assert entry.status is Status.LOSSY and len(refusals) == 1
    values = refusals[0]
    assert list(values["problems"]) == ["output_layer_parallelism"]
    assert values["release"] == result.report.target["version"] and values["title"] == "GPT-NeoX"
    assert f"not valid in GPT-NeoX {result.report.target['version']}: " in entry.detail
    assert result.report.target["valid"] is False and result.report.target["verified"] is True
    # every other entry keeps its status: only the refused key changed
    clean = translate(PYTHIA, "neox", "neox", verify=False)
    before = {e.source_key: e.status for e in clean.report.entries if e.source_key != "output_layer_parallelism"}
    assert {
        e.source_key: e.status for e in result.report.entries if e.source_key != "output_layer_parallelism"
    } == before


def test_a_valid_output_says_so(pythia160m: Path) -> None:
    for dst in ("cerebras", "deepspeed", "veomni", "neox"):
        result = translate(pythia160m, "neox", dst, world_size=8)
        assert result.report.target["valid"] is True, dst
        assert not any(e.kind == "refused_by_release" for e in result.report.entries)
    unchecked = translate(pythia160m, "neox", "deepspeed", world_size=8, verify=False)
    assert "valid" not in unchecked.report.target and "verified" not in unchecked.report.target


def test_an_empty_output_is_refused_and_would_not_be_valid() -> None:
    # a config.json holds nothing DeepSpeed reads: the DeepSpeed file would be {} (issue 28's empty outputs);
    # the translation refuses to write it, and validate at the target release says why such a file fails
    with pytest.raises(NothingToWrite):
        translate(FIXTURES / "inputs" / "hf" / "pythia-70m.json", "hf", "deepspeed")
    found = validate_document({}, "deepspeed", read_ir, version="0.19.5")
    assert not found.valid and found.release == "0.19.5"


def _report(*entries: Entry) -> Report:
    report = Report()
    report.entries = list(entries)
    return report


def test_the_statuses_a_refusal_changes() -> None:
    """exact, converted and defaulted claim the value works: lossy, the refusal first (a default has no
    source leaf then); a loss says the refusal too; a missing key is left to its entry; a key no entry
    writes gets an entry of its own; a key inside a block an entry writes is that entry's."""
    report = _report(
        said("a", "x.a", Status.EXACT, (("renamed", {}),), ("f.a",)),
        said("b", "x.b", Status.CONVERTED, (("converted", {"value": 2}),), ("f.b",)),
        said(None, "x.c", Status.DEFAULTED, (("added_for_target", {"title": "T", "written": {"x.c": 1}}),)),
        said("d", "x.d", Status.LOSSY, (("approximated", {"reason": "rounded"}),)),
        said(None, "x.e", Status.MISSING, (("needs_value", {"field": "f.e"}),)),
        said("g", "x.g", Status.EXACT, (("renamed", {}),)),
        said("h", "y", Status.EXACT, (("carried", {}),)),
    )
    apply_problems(
        report,
        [
            ("x.a", "bad a"),
            ("x.b", "bad b"),
            ("x.c", "bad c"),
            ("x.d", "bad d"),
            ("x.e", "needs one"),
            ("z", "bad z"),
            ("y.inner", "bad inner"),
        ],
        "deepspeed",
        "0.19.5",
    )
    by_target = {e.target_key: e for e in report.entries}
    for key in ("x.a", "x.b", "x.c"):
        entry = by_target[key]
        assert entry.status is Status.LOSSY and entry.kind == "refused_by_release", key
        assert entry.values is not None and entry.values["problems"] == {key: f"bad {key[-1]}"}
        assert entry.detail.startswith(f"not valid in DeepSpeed 0.19.5: bad {key[-1]}")
    assert by_target["x.a"].source_key == "a" and by_target["x.c"].source_key is None
    assert by_target["x.b"].fields == ("f.b",)
    lossy = by_target["x.d"]
    assert lossy.status is Status.LOSSY and lossy.kind == "approximated" and lossy.detail.endswith("bad d")
    assert by_target["x.e"].status is Status.MISSING and by_target["x.e"].kind == "needs_value"
    assert by_target["x.g"].status is Status.EXACT  # not flagged: untouched
    assert by_target["y"].status is Status.LOSSY and by_target["y"].values["problems"] == {"y.inner": "bad inner"}
    own = by_target["z"]
    assert (
        own.source_key is None and own.status is Status.LOSSY and own.detail == "not valid in DeepSpeed 0.19.5: bad z"
    )
    assert len(report.entries) == 8


def test_a_key_the_report_lists_as_missing_stays_missing(tmp_path: Path) -> None:
    # a DeepSpeed file names no model: Model Zoo's trainer layout requires trainer.init.model.name, and
    # the report already says it is missing and how to give it
    path = tmp_path / "ds.json"
    path.write_text(json.dumps({"train_batch_size": 32, "optimizer": {"type": "AdamW", "params": {"lr": 1e-4}}}))
    result = translate(path, "deepspeed", "cerebras", layout="trainer", world_size=8)
    missing = [
        e for e in result.report.entries if e.status is Status.MISSING and "trainer.init.model.name" in e.targets
    ]
    assert missing and missing[0].kind != "refused_by_release"
    assert not any(
        e.kind == "refused_by_release"
        and e.status is not Status.MISSING
        and any(t.startswith("trainer.init.model") for t in e.targets)
        for e in result.report.entries
    )
    assert result.report.target["valid"] is False  # the file is not valid until the name is given


def test_validate_reads_a_legacy_optimizer_as_model_zoo_converts_it(tmp_path: Path) -> None:
    """Model Zoo 2.4+ converts a legacy file to the trainer layout before reading it (cerebras.pytorch
    reads an optimizer's settings as its class's arguments); before 2.4 the model code read them."""
    text = (
        "model: {hidden_size: 64, num_hidden_layers: 2, num_heads: 4, filter_size: 256, vocab_size: 1000,\n"
        "  max_position_embeddings: 128, use_bfloat16: true}\n"
        "optimizer: {optimizer_type: AdamW, learning_rate: 0.001, weight_decay: 0.01, betas: [0.9, 0.95]}\n"
        "runconfig: {max_steps: 10}\n"
    )
    path = tmp_path / "params.yaml"
    path.write_text(text)
    at_210 = {p.key: p.message for p in validate_file(str(path), "cerebras", version="2.10").problems}
    assert "optimizer.weight_decay" not in at_210 and "optimizer.betas" not in at_210
    assert "model.use_bfloat16" in at_210  # a model setting 2.10's model config does not have (renamed in 2.1)
    at_22 = {p.key for p in validate_file(str(path), "cerebras", version="2.2").problems}
    assert "optimizer.weight_decay" not in at_22 and "model.use_bfloat16" in at_22
    at_18 = {p.key for p in validate_file(str(path), "cerebras", version="1.8").problems}
    assert "optimizer.betas" in at_18  # read from 2.0 on (cerebras.pytorch)
    # the document in memory is validated the same way
    import yaml

    in_memory = {p.key for p in validate_document(yaml.safe_load(text), "cerebras", read_ir, version="1.8").problems}
    assert in_memory == at_18


# ---- the frameworks' own checks that no key's schema says (mappings: checks) -------------------


def test_every_check_names_keys_of_its_format() -> None:
    """A check's key and the keys of its condition are keys of the format's schema (a typo would make
    the check a silent no-op)."""
    from neoconv.knowledge.mapping import load_table
    from neoconv.knowledge.schema import load_schema

    def known(schema: dict[str, Any], key: str) -> bool:
        node: Any = schema
        for part in key.split("."):
            node = (node.get("properties") or {}).get(part) if isinstance(node, dict) else None
        return isinstance(node, dict)

    checked = 0
    for fmt in FORMATS:
        table = load_table(fmt)
        for check in table.checks:
            for key in (check.key, *check.when):
                assert known(load_schema(fmt), key), f"{fmt}: checks: {key} is not a key of schemas/{fmt}.schema.json"
            checked += 1
    assert checked >= 4


def _validated(tmp_path: Path, name: str, text: str, fmt: str, version: str | None = None) -> dict[str | None, str]:
    path = tmp_path / name
    path.write_text(text)
    return {p.key: p.message for p in validate_file(str(path), fmt, version=version).problems}


def test_deepspeed_refuses_a_fractional_loss_scale_floor_from_its_pydantic_release(tmp_path: Path) -> None:
    text = '{"train_batch_size": 32, "fp16": {"enabled": true, "loss_scale": 0, "min_loss_scale": 1e-10}}'
    assert "fp16.min_loss_scale" in _validated(tmp_path, "ds.json", text, "deepspeed", "0.19.5")
    assert "fp16.min_loss_scale" in _validated(tmp_path, "ds.json", text, "deepspeed", "0.17.1")
    assert "fp16.min_loss_scale" not in _validated(tmp_path, "ds.json", text, "deepspeed", "0.16.9")  # get_scalar_param


def test_deepspeed_refuses_a_zero_floor_only_with_dynamic_loss_scaling(tmp_path: Path) -> None:
    dynamic = '{"train_batch_size": 32, "fp16": {"enabled": true, "min_loss_scale": 0}}'  # loss_scale defaults to 0
    assert "fp16.min_loss_scale" in _validated(tmp_path, "a.json", dynamic, "deepspeed", "0.19.3")
    assert "fp16.min_loss_scale" not in _validated(tmp_path, "a.json", dynamic, "deepspeed", "0.19.2")  # before #8050
    static = '{"train_batch_size": 32, "fp16": {"enabled": true, "loss_scale": 128, "min_loss_scale": 0}}'
    assert "fp16.min_loss_scale" not in _validated(tmp_path, "b.json", static, "deepspeed", "0.19.5")
    off = '{"train_batch_size": 32, "fp16": {"min_loss_scale": 0}}'  # fp16.enabled defaults to false
    assert "fp16.min_loss_scale" not in _validated(tmp_path, "c.json", off, "deepspeed", "0.19.5")


def test_megatron_refuses_its_fsdps_with_an_emerging_optimizer(tmp_path: Path) -> None:
    base = "--num-layers 2\n--hidden-size 64\n--num-attention-heads 4\n"
    said = _validated(tmp_path, "a.args", base + "--optimizer muon\n--use-megatron-fsdp\n", "megatron")
    assert set(said) == {"--use-megatron-fsdp"}
    assert set(_validated(tmp_path, "b.args", base + "--optimizer muon\n--use-torch-fsdp2\n", "megatron")) == {
        "--use-torch-fsdp2"
    }
    assert _validated(tmp_path, "c.args", base + "--optimizer adam\n--use-megatron-fsdp\n", "megatron") == {}
    assert _validated(tmp_path, "d.args", base + "--optimizer muon\n--use-distributed-optimizer\n", "megatron") == {}


def test_a_neox_loss_scale_floor_deepspeed_refuses_is_not_carried_as_exact(tmp_path: Path) -> None:
    """NeoX hands its fp16 block to DeepSpeed as it is; DeepSpeed 0.17.1+ refuses a fractional floor."""
    path = tmp_path / "m.yml"
    path.write_text(PYTHIA.read_text().replace('"min_loss_scale": 1}', '"min_loss_scale": 1e-10}'))
    result = translate(path, "neox", "deepspeed", world_size=8)
    entry = result.report.by_source()["fp16.min_loss_scale"]
    assert entry.status not in CLAIMS
    fp16 = result.config.get("fp16") or {}
    if fp16.get("min_loss_scale") == 1e-10:  # written as the source says: the report says DeepSpeed refuses it
        assert entry.kind == "refused_by_release" and result.report.target["valid"] is False


def test_veomni_refuses_fsdp2_off_the_meta_device(tmp_path: Path) -> None:
    """TrainingArguments.__post_init__ asserts init_device meta for FSDP2 (#123+): the flat layout's
    data_parallel_mode, the nested layout's accelerator fsdp_mode (whose default is fsdp2 from #753)."""
    flat = "train:\n  data_parallel_mode: fsdp2\n  init_device: cuda\n  micro_batch_size: 1\n  lr: 1.0e-4\n"
    said = _validated(tmp_path, "flat.yaml", flat, "veomni", "#458")
    assert "train.init_device" in said and "train.data_parallel_mode='fsdp2'" in said["train.init_device"]
    assert "train.init_device" not in _validated(tmp_path, "old.yaml", flat, "veomni", "#113")  # before #123
    ddp = flat.replace("fsdp2", "ddp")
    assert "train.init_device" not in _validated(tmp_path, "ddp.yaml", ddp, "veomni", "#458")
    unset = "train:\n  init_device: cuda\n  micro_batch_size: 1\n  lr: 1.0e-4\n"  # flat: ddp by default
    assert "train.init_device" not in _validated(tmp_path, "unset.yaml", unset, "veomni", "#458")
    nested = "train:\n  init_device: cuda\n  micro_batch_size: 1\n  optimizer: {lr: 1.0e-4}\n"
    assert "train.init_device" in _validated(tmp_path, "n.yaml", nested, "veomni", "#1021")  # fsdp2 by default
    assert "train.init_device" not in _validated(tmp_path, "n2.yaml", nested, "veomni", "#744")  # ddp by default then
    meta = nested.replace("cuda", "meta")
    assert "train.init_device" not in _validated(tmp_path, "m.yaml", meta, "veomni", "#1021")


def test_a_veomni_run_off_the_meta_device_is_not_carried_as_exact(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "inputs" / "veomni" / "tinyllama", tmp_path / "tinyllama")
    run = tmp_path / "run.yaml"
    run.write_text(
        (FIXTURES / "inputs" / "veomni" / "tinyllama-nested.yaml")
        .read_text()
        .replace("init_device: meta", "init_device: cuda")
    )
    for layout in ("flat", "nested"):
        result = translate(run, "veomni", "veomni", layout=layout, world_size=8)
        entry = result.report.by_source()["train.init_device"]
        assert entry.status is Status.LOSSY and entry.kind == "refused_by_release", layout
        assert result.report.target["valid"] is False
