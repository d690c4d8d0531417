"""Cerebras Model Zoo's own config code on Model Zoo YAML files: what `cszoo config validate` runs
(`trainer/validate_configs.py::validate_config`): `convert_legacy_params_to_trainer_params` for a
legacy file, then `validate_trainer_params` (the pydantic models of every model, data processor,
optimizer, scheduler and callback).

Run with an interpreter that has cerebras-pytorch/cerebras-appliance (the release of the Model Zoo
source) and Model Zoo's Python dependencies (tools/oracle_setup.sh builds one), with
$MODELZOO_SRC = Model Zoo's `src` folder. Job keys:
* `files`: the YAML file.
* `set`: dotted key -> value, edited into the file as read (before any conversion): supplying the
  values a translation reported `missing` (Model Zoo's validator has no override option).
* `set_legacy`: the same for a trainer-layout file, with keys in the legacy layout: Model Zoo's own
  converter places them (an `optimizer.optimizer_type` takes the file's class-less optimizer
  settings with it, as the converter wraps a legacy optimizer block in its class).
* `model_name`: for a legacy file, `trainer.init.model.name` after conversion. Legacy files name no
  model; the model's run.py that reads them did (the converter adds none).
* `show`: also report the params as Model Zoo's converter left them (`values.converted`: before the
  model name and the placeholders below); with `convert_only`, run the converter and no validation.
* `placeholders` (default true): a data path (`*_dir`, `*_file`) that does not exist on this
  machine is pointed at an empty placeholder. Model Zoo checks that data paths exist when it
  validates; the datasets of the configs' authors are not here, and their absence says nothing
  about the config. Every replacement is listed in `values.placeholders`.

What is replaced, and why it cannot change a verdict silently:
* `cerebras.pytorch.lib.cerebras_pytorch_lib`, the compiled extension, is built against another
  torch release than the one installable here with a CPU wheel and cannot load. cerebras-pytorch
  touches it at import (its flag descriptors register names in the appliance config). The stand-in
  answers those import-time uses; once the import is done, any call into it, or any attribute it
  was not given, raises StubUsed, which this program reports as its own "error", never as the
  framework's verdict.
* `bigcode_eval` (a dependency Model Zoo pins as a GitHub archive, which no package index serves)
  is a permissive empty package: Model Zoo imports it for its code-evaluation callback, whose
  config is Model Zoo's own pydantic class; bigcode_eval itself runs only when an evaluation runs.
* `construct_multi_phase_trainer_config` is memoised: it builds classes from the model names alone,
  which Model Zoo does once per process (this program validates hundreds of files in one).
"""

from __future__ import annotations

import copy
import functools
import importlib.abc
import importlib.machinery
import math
import os
import sys
import tempfile
import types
import warnings
from typing import Any

from _protocol import StubUsed, framework, plain, serve, set_dotted

NOT_DATA = {"model_dir", "summary_dir", "compile_dir", "log_dir", "checkpoint_dir", "ckpt_dir"}
SENTINEL = "_neoconv_oracle_overlay"
LR_KEYS = {"learning_rate", "lr", "initial_learning_rate", "end_learning_rate", "max_lr", "base_lr", "eta_min"}


class _CompiledLibStandIn:
    """Answers whatever cerebras-pytorch asks of its compiled library while it is imported; after
    `close()`, only the attributes set so far can be read (and set again)."""

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
            children[attr] = _CompiledLibStandIn(f"{self._name}.{attr}")
        return children[attr]

    def __setattr__(self, attr: str, value: Any) -> None:
        object.__getattribute__(self, "_children")[attr] = value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not _CompiledLibStandIn.open:
            raise StubUsed(f"the compiled cerebras_pytorch_lib was called after import: {self._name}()")
        return _CompiledLibStandIn(f"{self._name}()")


class _EmptyPackages(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`bigcode_eval` and its submodules as empty packages whose every name is an inert class."""

    roots = ("bigcode_eval",)

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = []

        def anything(name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)
            return type(name, (), {"__init__": lambda self, *a, **k: None})

        module.__getattr__ = anything  # type: ignore[method-assign]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def load() -> tuple[Any, Any, Any]:
    src = os.environ.get("MODELZOO_SRC")
    if not src or not os.path.isdir(os.path.join(src, "cerebras", "modelzoo")):
        raise SystemExit(f"MODELZOO_SRC must name Model Zoo's src folder (got {src!r})")
    sys.modules["cerebras.pytorch.lib.cerebras_pytorch_lib"] = _CompiledLibStandIn("cerebras_pytorch_lib")  # type: ignore[assignment]
    sys.meta_path.insert(0, _EmptyPackages())
    sys.path.insert(0, src)
    import cerebras.modelzoo.trainer.validate as validate
    from cerebras.modelzoo.trainer.utils import convert_legacy_params_to_trainer_params, is_legacy_params

    # Model Zoo builds the pydantic classes of a model's whole config on every validation (cszoo
    # validates once per process): ~0.5 s and ~20 MB that are never freed, per file. The classes
    # depend on the model names only, so build them once per set of names.
    validate.construct_multi_phase_trainer_config = functools.lru_cache(maxsize=None)(
        validate.construct_multi_phase_trainer_config
    )
    # the validator imports model, data-processor and callback modules when it first builds a
    # config class: import them now, while the stand-in is open
    validate.construct_trainer_config("gpt2")
    _CompiledLibStandIn.open = False
    return is_legacy_params, convert_legacy_params_to_trainer_params, validate.validate_trainer_params


def resolve_path(path: str) -> str:
    """A path as Model Zoo resolves it ($MODELZOO_ROOT: its own files, e.g. BERT vocabularies)."""
    from cerebras.modelzoo.config.types import resolve_path as resolve

    return str(resolve(path))


def placeholders(node: Any, folder: str, changed: list[str]) -> None:
    if isinstance(node, list):
        for item in node:
            placeholders(item, folder, changed)
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        is_path = (key.endswith("_dir") or key.endswith("_file")) and key not in NOT_DATA
        if not is_path or isinstance(value, dict):
            placeholders(value, folder, changed)
            continue
        paths = value if isinstance(value, list) else [value]
        replaced = []
        for path in paths:
            if isinstance(path, str) and not os.path.exists(resolve_path(path)):
                stand_in = os.path.join(folder, path.strip("/").replace("/", "_") or "data")
                if key.endswith("_file"):
                    open(stand_in, "a").close()
                else:
                    os.makedirs(stand_in, exist_ok=True)
                changed.append(path)
                path = stand_in
            replaced.append(path)
        node[key] = replaced if isinstance(value, list) else replaced[0]


def merge(into: dict[str, Any], overlay: dict[str, Any]) -> None:
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value


def _rates(node: Any, key: str = "") -> list[float]:
    """Every learning rate an optimizer or scheduler entry names (the peak is the largest)."""
    if isinstance(node, dict):
        out: list[float] = []
        for k, v in node.items():
            if k == "InverseSquareRootDecayLR" and isinstance(v, dict):  # a * scale / sqrt(max(warmup, t))
                a, scale, hold = v.get("initial_learning_rate", 1.0), v.get("scale", 1.0), v.get("warmup_steps", 1.0)
                out.append(a * scale / math.sqrt(max(hold, 1.0)))
            else:
                out += _rates(v, k)
        return out
    if isinstance(node, list):
        return [r for item in node for r in _rates(item, key)]
    if key in LR_KEYS or key == "learning_rates":
        return [float(node)] if isinstance(node, (int, float)) and not isinstance(node, bool) else []
    return []


def main() -> int:
    import yaml

    is_legacy, convert, validate = load()
    folder = tempfile.mkdtemp(prefix="neoconv-oracle-data-")

    def check(job: dict[str, Any]) -> dict[str, Any]:
        (path,) = job["files"]
        with open(path) as handle:
            params = yaml.safe_load(handle)
        for key, value in job.get("set", {}).items():
            set_dotted(params, key, value)
        if job.get("set_legacy"):
            overlay: dict[str, Any] = {"model": {SENTINEL: True}}  # the converter needs a model section
            for key, value in job["set_legacy"].items():
                set_dotted(overlay, key, value)
            trainer_section = params.get("trainer")
            init = trainer_section.get("init") if isinstance(trainer_section, dict) else None
            given = overlay.get("optimizer")
            if (
                isinstance(given, dict)
                and "optimizer_type" in given
                and isinstance(init, dict)
                and isinstance(init.get("optimizer"), dict)
            ):
                # the file's optimizer settings without their class (the class was the missing key): the
                # converter wraps them in the class named, as it does for a legacy file's optimizer block
                overlay["optimizer"] = {**init.pop("optimizer"), **given}
            with framework():
                placed = convert(overlay)
            del placed["trainer"]["init"]["model"][SENTINEL]
            merge(params, placed)
        with warnings.catch_warnings(record=True) as caught, framework():
            warnings.simplefilter("always")
            legacy = is_legacy(params)
            trainer = convert(copy.deepcopy(params)) if legacy else copy.deepcopy(params)
            converted = copy.deepcopy(trainer) if job.get("show") else None
            if job.get("convert_only"):
                return {"legacy": legacy, "converted": plain(converted)}
            changed: list[str] = []
            phases = trainer.get("trainer") if isinstance(trainer, dict) else None
            for phase in phases if isinstance(phases, list) else [trainer]:
                model = phase.get("trainer", {}).get("init", {}).get("model") if isinstance(phase, dict) else None
                if legacy and job.get("model_name") and isinstance(model, dict):
                    model.setdefault("name", job["model_name"])
            if job.get("placeholders", True):
                placeholders(trainer, folder, changed)
            validate(copy.deepcopy(trainer))
        init = trainer["trainer"]["init"] if isinstance(trainer.get("trainer"), dict) else {}
        fit = trainer["trainer"].get("fit", {}) if isinstance(trainer.get("trainer"), dict) else {}
        train_loader = (fit or {}).get("train_dataloader") or {}
        rates = _rates({"optimizer": init.get("optimizer"), "schedulers": init.get("schedulers")})
        return {
            "legacy": legacy,
            "model_name": (init.get("model") or {}).get("name"),
            "batch_size": train_loader.get("batch_size") if isinstance(train_loader, dict) else None,
            "data_processor": train_loader.get("data_processor") if isinstance(train_loader, dict) else None,
            "lr_max": max(rates) if rates else None,
            "placeholders": changed,
            "warnings": [
                str(w.message)[:300] for w in caught if "extra keys" in str(w.message) or "unused" in str(w.message)
            ],
            "converted": plain(converted),
        }

    return serve(check)


if __name__ == "__main__":
    sys.exit(main())
