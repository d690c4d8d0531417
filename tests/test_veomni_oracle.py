"""Oracle tier: HuggingFace's own config classes and VeOmni's own parser read what neoconv writes.

* transformers (no torch needed): every written config.json is built with
  `AutoConfig.for_model(model_type, **fields)` and every value must survive; mappings/hf.yaml's keys
  and defaults are checked against the classes. Skipped when transformers is not installed.
* VeOmni's `parse_args` (veomni/arguments/arguments_types.py and parser.py, read from a VeOmni git
  clone: $VEOMNI_GIT or ../.mirror/ByteDance-Seed+VeOmni/repo) at the commit of each layout. Its
  imports of logging, env, fs and NPU/kernel checks are stubbed (they need torch or hardware); the
  dataclasses, their __post_init__ checks and the argparse options are VeOmni's own. Skipped when
  the clone is not there.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import types
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CORPUS, FIXTURES, ROOT, corpus_files

from oracles import _stub as stub_module
from translator import translate
from translator.api import read_ir
from translator.formats.hf import model_types as hf_config
from translator.io import flatten

pytestmark = pytest.mark.oracle

HERE = FIXTURES / "inputs" / "veomni"
COMMITS = {"nested": "d9774494f5d8042321386c65c9406e732a271501", "flat": "ac3b9f01c3cabeea5e32764cf704cd4570ffa438"}
# transformers 5 moves the classic RoPE keys into rope_parameters
MOVED = {"rotary_pct": "partial_rotary_factor", "partial_rotary_factor": "partial_rotary_factor",
         "rotary_emb_base": "rope_theta", "rope_theta": "rope_theta"}  # fmt: skip


def _transformers() -> Any:
    return pytest.importorskip("transformers", reason="transformers is not installed (pip install transformers; no torch needed)")


def _built(config: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    transformers = _transformers()
    fields = dict(config)
    model_type = fields.pop("model_type")
    built = transformers.AutoConfig.for_model(model_type, **fields)
    return built, built.to_dict()


def _value(built: Any, data: dict[str, Any], key: str) -> Any:
    if key in MOVED and "rope_parameters" in data:
        return (data["rope_parameters"] or {}).get(MOVED[key])
    return data[key] if key in data else getattr(built, key)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-12)
    return a == b


def _written_configs() -> list[tuple[str, Path, dict[str, Any]]]:
    out = []
    sources = [("neox", FIXTURES / "inputs" / "neox" / "pythia-160m.yml")]
    sources += [("neox", p) for p in corpus_files("neox")]
    sources += [("cerebras", p) for p in corpus_files("cerebras-legacy", "**/*.yaml") + corpus_files("cerebras-trainer", "**/*.yaml")]
    for src, path in sources:
        try:
            result = translate(path, src, "veomni", set_values={"model.vocab_size": 50304})
        except Exception:  # noqa: BLE001 - the source reader refuses some corpus files; test_veomni_corpus covers them
            continue
        if result.ir.get("model.attention_kind") not in (None, "dense"):
            continue  # Mamba / RWKV blocks: reported lossy, no HF class can hold them
        if "config.json" in result.side_files:
            out.append((src, path, json.loads(result.side_files["config.json"])))
    return out


def test_every_written_config_json_is_accepted_by_its_hf_class() -> None:
    _transformers()
    configs = _written_configs()
    assert configs, "nothing was written"
    for src, path, config in configs:
        built, data = _built(config)
        assert built.model_type == config["model_type"]
        for key, value in config.items():
            if key == "model_type":
                continue
            assert _same(_value(built, data, key), value), f"{path}: {key} = {value!r} became {_value(built, data, key)!r}"


@pytest.mark.parametrize("model_type", sorted(hf_config.table().types))
def test_hf_table_matches_the_transformers_class(model_type: str) -> None:
    transformers = _transformers()
    built = transformers.AutoConfig.for_model(model_type)
    data = built.to_dict()
    spec = hf_config.table().types[model_type]
    for key in spec.keys.values():
        assert key in data or key in MOVED or hasattr(built, key), f"{model_type} has no {key}"
    for key, default in spec.defaults.items():
        if key in ("partial_rotary_factor",) and model_type in ("llama", "mistral"):
            continue  # not a class field: read from rope_parameters with default 1.0
        if key in ("num_key_value_heads", "n_inner") and default is None:
            continue  # the class fills these in (= heads, 4 x hidden)
        got = _value(built, data, key)
        assert _same(got, default), f"{model_type}.{key}: hf.yaml says {default!r}, transformers {got!r}"


def test_a_transformers5_config_reads_back(tmp_path: Path) -> None:
    """A config.json transformers itself saves (rope_parameters) reads as the same architecture."""
    _transformers()
    config = json.loads(translate(FIXTURES / "inputs" / "neox" / "pythia-160m.yml", "neox", "veomni",
                                  set_values={"model.vocab_size": 50304}).side_files["config.json"])  # fmt: skip
    built, _ = _built(config)
    folder = tmp_path / "saved"
    built.save_pretrained(folder)
    saved = json.loads((folder / "config.json").read_text())
    assert "rope_parameters" in saved  # the transformers 5 layout
    (tmp_path / "run.yaml").write_text("model:\n  config_path: saved\ndata:\n  train_path: x\n")
    ir = read_ir([str(tmp_path / "run.yaml")], "veomni").ir
    assert ir.get("model.rotary_fraction") == 0.25 and ir.get("model.rotary_base") == 10000.0
    assert ir.get("model.activation") == "gelu_tanh" and ir.get("model.num_layers") == 12


# ---- VeOmni's own parser ------------------------------------------------------------------------


def _veomni_git() -> Path | None:
    given = os.environ.get("VEOMNI_GIT")
    where = Path(given) if given else ROOT.parent / ".mirror" / "ByteDance-Seed+VeOmni" / "repo"
    return where if (where / "HEAD").exists() or (where / ".git").exists() else None


class _Logger:
    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def _stub(name: str, **attrs: Any) -> types.ModuleType:
    return stub_module(name, package=True, **attrs)  # VeOmni's modules import each other relatively


@lru_cache(maxsize=None)
def veomni_parser(layout: str) -> Any:
    """VeOmni's arguments package at the layout's commit, under a private package name."""
    where = _veomni_git()
    if where is None:
        pytest.skip("no VeOmni clone: set $VEOMNI_GIT (github.com/ByteDance-Seed/VeOmni)")
    git = ["git", "--git-dir", str(where / ".git" if (where / ".git").exists() else where)]
    root = f"_veomni_oracle_{layout}"
    _stub(root)
    _stub(f"{root}.utils.logging", get_logger=lambda name=None: _Logger())
    _stub(f"{root}.utils.env", get_env=lambda name, default=None: default)
    _stub(f"{root}.utils.fs", is_non_local=lambda path: False, copy_to_local=lambda path, verbose=False: path)
    _stub(f"{root}.utils.import_utils", is_torch_npu_available=lambda: False, is_package_available=lambda name: True)
    _stub(f"{root}.utils.helper", get_cache_dir=lambda: "/tmp")
    _stub(f"{root}.utils.hdfs_io", copy=None, exists=None, makedirs=None)
    _stub(f"{root}.ops.config.registry", list_ops=lambda: [])
    _stub(f"{root}.arguments")
    modules = {}
    for name in ("arguments_types", "parser"):
        try:
            source = subprocess.run([*git, "show", f"{COMMITS[layout]}:veomni/arguments/{name}.py"],
                                    capture_output=True, text=True, check=True).stdout  # fmt: skip
        except (OSError, subprocess.CalledProcessError) as exc:
            pytest.skip(f"cannot read VeOmni at {COMMITS[layout]}: {exc}")
        module = types.ModuleType(f"{root}.arguments.{name}")
        module.__package__ = f"{root}.arguments"
        sys.modules[module.__name__] = module
        exec(compile(source, f"veomni/arguments/{name}.py", "exec"), module.__dict__)  # noqa: S102 - VeOmni's own code
        modules[name] = module
    return modules


def veomni_parse(layout: str, config: Path, options: list[str] | None = None, world: int = 1) -> Any:
    modules = veomni_parser(layout)
    argv, environ = sys.argv, dict(os.environ)
    sys.argv = ["train.py", str(config), *(options or [])]
    os.environ["WORLD_SIZE"] = str(world)
    try:
        return modules["parser"].parse_args(modules["arguments_types"].VeOmniArguments)
    finally:
        sys.argv = argv
        os.environ.clear()
        os.environ.update(environ)


def _runnable(document: dict[str, Any], path: Path, layout: str) -> Path:
    """The written YAML plus the keys the report says are missing (a dataset, a tokenizer, and in
    the flat layout an output folder)."""
    document = yaml.safe_load(yaml.safe_dump(document))
    document.setdefault("data", {}).setdefault("train_path", "dataset")
    document.setdefault("model", {}).setdefault("tokenizer_path", "tokenizer")
    if layout == "flat":
        document.setdefault("train", {}).setdefault("output_dir", "output")
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.mark.parametrize("layout", ["nested", "flat"])
def test_veomni_parses_what_neoconv_writes(layout: str, tmp_path: Path) -> None:
    veomni_parser(layout)
    sources = [("neox", FIXTURES / "inputs" / "neox" / "pythia-160m.yml")] + [("neox", p) for p in corpus_files("neox")]
    checked = 0
    for src, path in sources:
        try:
            result = translate(path, src, "veomni", layout=layout, world_size=8, set_values={"model.vocab_size": 50304})
        except Exception:  # noqa: BLE001 - refused by the NeoX reader (covered elsewhere)
            continue
        if any(e.target_key == "model.config_path" for e in result.report.entries):
            continue  # a fragment without a model (local_setup.yml): reported missing
        args = veomni_parse(layout, _runnable(dict(result.config), tmp_path / "run.yaml", layout))
        lr = args.train.optimizer.lr if layout == "nested" else args.train.lr
        assert lr == (result.ir.get("optim.lr") or 5e-5)  # VeOmni's default when the source has none
        steps = result.ir.get("train.steps")
        if steps is not None and "train_size" in result.config.get("data", {}):
            args.compute_train_steps()
            assert args.train_steps * args.train.num_train_epochs == steps, path  # VeOmni counts the same steps
        checked += 1
    assert checked


def test_veomni_counts_the_steps_neoconv_reads_from_its_corpus() -> None:
    """compute_train_steps x num_train_epochs on each corpus config == neoconv's train.steps."""
    veomni_parser("nested")
    compared = 0
    refused: list[str] = []
    for layout, folder in (("nested", "veomni"), ("flat", "veomni-legacy")):
        for path in corpus_files(folder, "**/*.yaml"):
            tree = yaml.safe_load(path.read_text())
            if "train" not in tree:
                continue
            ir = read_ir([str(path)], "veomni").ir
            world = ir.get("parallel.sequence_size") or 1
            try:
                args = veomni_parse(layout, path, world=world)
            except (ValueError, AssertionError) as exc:  # VeOmni itself refuses it: an Ascend-only config, or a
                refused.append(f"{path.name}: {exc}")  # task config whose model comes from its own script
                continue
            if not args.train.dyn_bsz:
                continue  # the dataset length decides
            args.compute_train_steps()
            assert args.train_steps * args.train.num_train_epochs == ir.get("train.steps"), path
            compared += 1
    assert compared >= 40 and len(refused) <= 5, refused


def test_option_files_read_as_veomnis_argparse_reads_them() -> None:
    options = []
    for line in (HERE / "overrides.args").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            options += line.split()
    args = veomni_parse("nested", HERE / "tinyllama-nested.yaml", options)
    ours = flatten(read_ir([str(HERE / "tinyllama-nested.yaml"), str(HERE / "overrides.args")], "veomni").source.tree)
    assert args.train.optimizer.lr == ours["train.optimizer.lr"] == 2e-4
    assert args.train.gradient_checkpointing.enable is ours["train.gradient_checkpointing.enable"] is False
    assert args.train.optimizer.no_decay_modules == ours["train.optimizer.no_decay_modules"] == ["LlamaRMSNorm", "Embedding"]
    assert args.data.max_seq_len == ours["data.max_seq_len"] == 4096
    assert args.train.wandb.enable is ours["train.wandb.enable"] is True


@pytest.mark.parametrize("name", ["text/llama3.yaml", "text/qwen3.yaml", "multimodal/qwen2_vl/qwen2_vl.yaml"])
def test_migrated_legacy_configs_parse_at_head(name: str, tmp_path: Path) -> None:
    path = CORPUS / "veomni-legacy" / name
    if not path.exists():
        pytest.skip("the shared corpus is not present")
    migrated = translate(path, "veomni", "veomni", layout="nested")
    out = tmp_path / "migrated.yaml"
    out.write_text(migrated.dump())
    world = migrated.ir.get("parallel.sequence_size") or 1
    args = veomni_parse("nested", out, world=world)
    assert args.train.accelerator.fsdp_config.fsdp_mode == "fsdp2" and args.train.init_device == "meta"
    old = veomni_parse("flat", path, world=world)
    assert args.train.optimizer.lr == old.train.lr and args.data.train_size == old.data.train_size
    args.compute_train_steps()
    old.compute_train_steps()
    assert args.train_steps == old.train_steps
