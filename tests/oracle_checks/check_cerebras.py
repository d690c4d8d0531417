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

What is replaced, and why it cannot change a verdict silently: the stand-ins of neoconv's Model Zoo
probe (translator/prove/probes/cerebras_probe.py, whose `load` this program runs): the compiled
`cerebras_pytorch_lib` (built against another torch) answers only while cerebras-pytorch is imported,
after which any use raises StubUsed, reported as this program's own "error"; `bigcode_eval` is an
empty package (Model Zoo's code-evaluation callback imports it; it runs only in an evaluation);
`construct_multi_phase_trainer_config` is memoised (it builds classes from the model names alone,
which Model Zoo does once per process; this program validates hundreds of files in one). Data paths
absent here are pointed at placeholders by the probe's `placeholders`.
"""

from __future__ import annotations

import copy
import math
import os
import sys
import tempfile
import warnings
from typing import Any

from _protocol import framework, plain, serve, set_dotted
from cerebras_probe import LOADED, placeholders
from cerebras_probe import load as load_model_zoo

SENTINEL = "_neoconv_oracle_overlay"
LR_KEYS = {"learning_rate", "lr", "initial_learning_rate", "end_learning_rate", "max_lr", "base_lr", "eta_min"}


def load() -> tuple[Any, Any, Any]:
    """Model Zoo imported as neoconv's probe imports it (its stand-ins), from $MODELZOO_SRC."""
    src = os.environ.get("MODELZOO_SRC")
    if not src or not os.path.isdir(os.path.join(src, "cerebras", "modelzoo")):
        raise SystemExit(f"MODELZOO_SRC must name Model Zoo's src folder (got {src!r})")
    load_model_zoo({"source": src})
    return LOADED["is_legacy"], LOADED["convert"], LOADED["validate"]


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
