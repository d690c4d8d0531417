"""Cerebras Model Zoo's own code on a Model Zoo YAML file (run by an interpreter with
cerebras-pytorch/cerebras-appliance of the Model Zoo release and Model Zoo's Python dependencies;
Model Zoo's `src` folder is the job's `source`, or the installed `cerebras.modelzoo`).

* Accepts: what `cszoo config validate` runs: `convert_legacy_params_to_trainer_params` for a
  legacy file, then `validate_trainer_params` (the pydantic classes of every model, data
  processor, optimizer, scheduler and callback).
* Run: the train dataloader's batch size (Model Zoo's batch is global), the loop's max_steps
  (else num_steps), grad_accum_steps, the data's max_sequence_length when the file gives it (else
  the preprocessed data's: unknown here), precision (fp16_type when mixed precision is on).
* Learning rate: the optimizer and schedulers the trainer builds from the validated config
  (`configure_trainer_from_config`: `init.optimizer(params=...)`, each `init.schedulers[i]
  (optimizer=...)`) on cerebras-pytorch's CPU backend, stepped once per optimizer step as
  `Trainer.training_step` steps them. Model Zoo computes learning rates as float32 tensors.
* Parameters: `init.model()` (the model class the trainer builds) on torch's meta device.

Stand-ins (listed in the result): cerebras-pytorch's compiled extension is built for another
torch than the CPU wheel installable here; while cerebras-pytorch is imported a stand-in answers
what it registers at import, and any later use raises (the probe then fails, never a verdict).
`bigcode_eval` (pinned by Model Zoo as a GitHub archive) is an empty package: only its
code-evaluation callback imports it. A data path (`*_dir`, `*_file`) that does not exist here is
pointed at an empty placeholder: Model Zoo checks data paths exist; the authors' data is not here.
A legacy file names no model (the run.py that reads it does): the job's `model_name` stands in.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import importlib.abc
import importlib.machinery
import os
import sys
import tempfile
import types
import warnings
from typing import Any

from _probe import STUBS, CannotRun, LrCurve, Result, StubUsed, count_meta, describe, framework, main, package_version
from _probe import steps_to_run

PROBE = {
    "framework": "Cerebras Model Zoo",
    "checkout": "cerebras/modelzoo",  # Model Zoo's src folder (--src cerebras=PATH/src), or installed
    "installed": "cerebras.modelzoo",
    "imports": ["torch", "cerebras.pytorch", "yaml", "pydantic"],
    "install": "cerebras-pytorch and cerebras-appliance of the Model Zoo release (--no-deps: they pin an old torch), "
    "a torch CPU wheel with its torchvision, and the pure-Python packages Model Zoo's requirements.txt names",
    "source": "git clone https://github.com/Cerebras/modelzoo and check out the Release_X.Y.Z tag of your release",
    "hints": {"model_name": "model.family"},  # a legacy file names no model: neoconv's reading of its family
}
NOT_DATA = {"model_dir", "summary_dir", "compile_dir", "log_dir", "checkpoint_dir", "ckpt_dir"}
COMPILED = "cerebras.pytorch.lib.cerebras_pytorch_lib"


class _CompiledLibStandIn:
    """Answers what cerebras-pytorch asks of its compiled library while it is imported; after
    `close()`, only attributes set so far can be read."""

    open = True

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_children", {})

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        children = object.__getattribute__(self, "_children")
        if attr not in children:
            if not _CompiledLibStandIn.open:
                raise StubUsed(f"the compiled cerebras_pytorch_lib was used after import: {self._name}.{attr}")
            STUBS.ran(COMPILED)
            children[attr] = _CompiledLibStandIn(f"{self._name}.{attr}")
        return children[attr]

    def __setattr__(self, attr: str, value: Any) -> None:
        object.__getattribute__(self, "_children")[attr] = value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not _CompiledLibStandIn.open:
            raise StubUsed(f"the compiled cerebras_pytorch_lib was called after import: {self._name}()")
        return _CompiledLibStandIn(f"{self._name}()")


class _EmptyPackages(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`bigcode_eval` as an empty package whose every name is an inert class."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.split(".")[0] == "bigcode_eval":
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = []
        STUBS.ran("bigcode_eval package")

        def anything(name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            return type(name, (), {"__init__": lambda self, *a, **k: None})

        module.__getattr__ = anything  # type: ignore[method-assign]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


LOADED: dict[str, Any] = {}


def load(job: dict[str, Any]) -> dict[str, Any]:
    src = job.get("source")
    if src:
        if not os.path.isdir(os.path.join(src, "cerebras", "modelzoo")):
            raise CannotRun(f"{src} is not Model Zoo's src folder (it has no cerebras/modelzoo)")
        sys.path.insert(0, src)
    STUBS.add(
        COMPILED,
        "answers cerebras-pytorch's import-time registrations (the extension is built for another "
        "torch); any use after import fails the probe",
    )
    STUBS.add("bigcode_eval package", "an empty package: imported for Model Zoo's code-evaluation callback only")
    sys.modules[COMPILED] = _CompiledLibStandIn("cerebras_pytorch_lib")  # type: ignore[assignment]
    sys.meta_path.insert(0, _EmptyPackages())
    try:
        import cerebras.modelzoo.trainer.validate as validate
        import cerebras.pytorch as cstorch
        from cerebras.modelzoo.trainer.utils import convert_legacy_params_to_trainer_params, is_legacy_params
    except ImportError as exc:
        raise CannotRun(
            f"Model Zoo does not import with this interpreter: {describe(exc)} (its src folder: --src cerebras=PATH)"
        ) from exc
    # the config classes depend on the model names only; Model Zoo builds them once per process (cszoo
    # validates one file): remembered per set of names, for a batch of files in one process
    validate.construct_multi_phase_trainer_config = functools.lru_cache(maxsize=None)(
        validate.construct_multi_phase_trainer_config
    )
    # the validator imports model, data-processor and callback modules when it first builds a config
    # class: build one now, while the stand-in answers
    validate.construct_trainer_config("gpt2")
    _CompiledLibStandIn.open = False
    LOADED.update(
        is_legacy=is_legacy_params,
        convert=convert_legacy_params_to_trainer_params,
        validate=validate.validate_trainer_params,
    )
    return {
        "name": "Cerebras Model Zoo",
        "version": cstorch.__version__,
        "source": src,
        "torch": package_version("torch"),
    }


def _placeholders(node: Any, folder: str, changed: list[str]) -> None:
    """Point data paths that do not exist here at empty placeholders (listed in `changed`)."""
    from cerebras.modelzoo.config.types import resolve_path

    if isinstance(node, list):
        for item in node:
            _placeholders(item, folder, changed)
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        is_path = (key.endswith("_dir") or key.endswith("_file")) and key not in NOT_DATA
        if not is_path or isinstance(value, dict):
            _placeholders(value, folder, changed)
            continue
        paths = value if isinstance(value, list) else [value]
        replaced = []
        for path in paths:
            if isinstance(path, str) and not os.path.exists(str(resolve_path(path))):
                stand_in = os.path.join(folder, path.strip("/").replace("/", "_") or "data")
                if key.endswith("_file"):
                    open(stand_in, "a").close()
                else:
                    os.makedirs(stand_in, exist_ok=True)
                changed.append(path)
                path = stand_in
            replaced.append(path)
        node[key] = replaced if isinstance(value, list) else replaced[0]


def probe(job: dict[str, Any], result: Result) -> None:
    import yaml

    is_legacy, convert, validate = LOADED["is_legacy"], LOADED["convert"], LOADED["validate"]
    (path,) = job["files"]
    with framework(), open(path) as handle:
        params = yaml.safe_load(handle)
    folder = tempfile.mkdtemp(prefix="neoconv-prove-data-")
    with warnings.catch_warnings(), framework():
        warnings.simplefilter("ignore")
        legacy = is_legacy(params)
        trainer = convert(copy.deepcopy(params)) if legacy else copy.deepcopy(params)
        phases = trainer.get("trainer") if isinstance(trainer, dict) else None
        for phase in phases if isinstance(phases, list) else [trainer]:
            model = phase.get("trainer", {}).get("init", {}).get("model") if isinstance(phase, dict) else None
            if legacy and isinstance(model, dict) and "name" not in model and job.get("model_name"):
                model["name"] = job["model_name"]
                STUBS.add(
                    "model name",
                    f"{job['model_name']}: a legacy file names no model (the run.py reading it "
                    "does); neoconv's reading of the file's family stands in",
                )
                STUBS.ran("model name")
        changed: list[str] = []
        _placeholders(trainer, folder, changed)
        if changed:
            STUBS.add("data paths", "absent here, pointed at empty placeholders: " + ", ".join(changed[:5]))
            STUBS.ran("data paths")
        configs = validate(copy.deepcopy(trainer))
    result["run"] = {"layout": "legacy" if legacy else "trainer"}
    if len(configs) > 1:
        result.note(f"{len(configs)} training phases: the first is probed")
    config = configs[0]
    _run(config, result)
    _lr(config, job, result)
    if job.get("count_parameters", True):
        _parameters(config, result)


def _run(config: Any, result: Result) -> None:
    init, fit = config.init, config.fit
    loader = fit.train_dataloader if fit is not None else None
    data = getattr(loader, "config", loader)
    batch = getattr(data, "batch_size", None)
    seq = getattr(data, "max_sequence_length", None)
    if seq is None:
        result.note("Model Zoo takes the sequence length from the preprocessed data: no tokens per step")
    loop = init.loop  # None in a file that sets no loop (no max_steps, num_steps or grad_accum_steps)
    steps = getattr(loop, "max_steps", None)
    steps = getattr(loop, "num_steps", None) if steps is None else steps
    precision = init.precision
    kind = {"float16": "fp16", "bfloat16": "bf16", "cbfloat16": "cbfloat16"}
    mixed = getattr(precision, "enabled", False)
    result["run"].update(
        {
            "world_size": None,
            "data_parallel": None,
            "global_batch": batch,
            "micro_batch": getattr(data, "micro_batch_size", None),
            "accumulation": getattr(loop, "grad_accum_steps", None),
            "steps": steps,
            "seq_length": seq,
            "tokens_per_step": batch * seq if batch and seq else None,
            "precision": kind.get(str(getattr(precision, "fp16_type", None)), "fp32") if mixed else "fp32",
            "zero_stage": None,
            "tensor_parallel": None,
            "pipeline_parallel": None,
            "optimizer": type(init.optimizer).__name__ if init.optimizer is not None else None,
        }
    )
    model = init.model.config if hasattr(init.model, "config") else init.model
    result["model"] = {
        "name": getattr(init.model, "name", None) or type(init.model).__name__,
        "num_layers": getattr(model, "num_hidden_layers", None),
        "hidden_size": getattr(model, "hidden_size", None),
        "num_heads": getattr(model, "num_heads", None),
        "num_kv_heads": _kv_heads(model),
        "ffn_hidden_size": getattr(model, "filter_size", None),
        "vocab_size": getattr(model, "vocab_size", None),
        "max_position_embeddings": getattr(model, "max_position_embeddings", None),
    }


def _kv_heads(model: Any) -> int | None:
    """Grouped-query attention's key/value heads (extra_attention_params.num_kv_groups), else one
    per attention head."""
    extra = getattr(model, "extra_attention_params", None)
    groups = extra.get("num_kv_groups") if isinstance(extra, dict) else None
    return groups if groups is not None else getattr(model, "num_heads", None)


def _lr(config: Any, job: dict[str, Any], result: Result) -> None:
    import cerebras.pytorch as cstorch
    import torch

    init = config.init
    if init.optimizer is None:
        result.note("no optimizer: no learning rate")
        return
    total = steps_to_run(result["run"]["steps"], job, result, "the loop sets no max_steps or num_steps")
    if total is None:
        result.note("no learning rate curve: the loop sets no max_steps or num_steps")
        return
    if "backend" not in LOADED:
        STUBS.add(
            "cerebras.pytorch backend", "CPU: the learning rates are computed as on any backend (float32 tensors)"
        )
        LOADED["backend"] = cstorch.backend("CPU")
        STUBS.ran("cerebras.pytorch backend")
    with framework(), contextlib.redirect_stdout(sys.stderr):
        optimizer = init.optimizer(params=[torch.nn.Parameter(torch.zeros(1))])
        schedulers = [make(optimizer=optimizer) for make in (init.schedulers or [])]
    lr_schedulers = [s for s in schedulers if isinstance(s, cstorch.optim.lr_scheduler.LRScheduler)]
    name = " + ".join(type(s).__name__ for s in lr_schedulers) or "none (the optimizer's learning_rate)"
    curve = LrCurve(total, job)
    with framework():
        for step in range(total):
            curve.record(step, float(optimizer.param_groups[0]["lr"]))
            # Trainer.training_step: optimizer_step (which changes no rate), then schedulers_step
            for scheduler in schedulers:
                scheduler.step()
    result["lr"] = curve.result(f"Model Zoo {name}")


def _parameters(config: Any, result: Result) -> None:
    make = config.init.model
    settings = make.config if hasattr(make, "config") else None
    vocab = getattr(settings, "vocab_size", None)

    def build(rows: int) -> Any:
        changed = (
            make.model_copy(update={"config": settings.model_copy(update={"vocab_size": rows})})
            if settings is not None
            else make
        )
        with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return changed()

    try:
        count = count_meta(build, vocab, placeholder=vocab or 50257)
    except StubUsed:
        raise
    except Exception as exc:  # noqa: BLE001 - a model this environment cannot build
        result["parameters"] = {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        return
    count["how"] = "init.model() on the meta device"
    result["parameters"] = count


if __name__ == "__main__":
    sys.exit(main("cerebras", load, probe))
