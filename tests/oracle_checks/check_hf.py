"""transformers' own config classes on HuggingFace config.json files: `AutoConfig.from_pretrained`
on a folder holding the file as config.json (what VeOmni's model loader does first).

Run with an interpreter that has transformers (no torch needed). Job keys: `files` (the JSON file),
or `model_type` with no file: the class's defaults, `AutoConfig.for_model(model_type)` (and, as
`values.fields` / `values.attribute_map`, each dataclass field's own default and the class's key aliases); `saved`: also report the config.json transformers itself writes
(`save_pretrained`) as `values.saved`; `count`: also build the causal LM on torch's meta device
(no memory, no weights) and report its number of parameters as `values.parameters` (tied weights once;
needs torch: the `hf-torch` oracle runs this program with VeOmni's interpreter, which has it).
`values` holds the class name and `to_dict()` of what transformers built, so that a test can compare
every key written with what the class kept. Nothing is replaced.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import tempfile
from typing import Any

from _protocol import framework, plain, serve


def field_defaults(cls: type) -> dict[str, Any]:
    """The class's own default of each field (transformers 5 configs are dataclasses), before its
    __post_init__ rewrites some from others (Qwen2's sliding_window is None without use_sliding_window)."""
    out: dict[str, Any] = {}
    for spec in dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ():
        if spec.default is not dataclasses.MISSING:
            out[spec.name] = plain(spec.default)
        elif spec.default_factory is not dataclasses.MISSING:
            out[spec.name] = plain(spec.default_factory())
    return out


def main() -> int:
    import transformers

    def check(job: dict[str, Any]) -> dict[str, Any]:
        if job.get("model_type"):
            with framework():
                built = transformers.AutoConfig.for_model(job["model_type"])
        else:
            (path,) = job["files"]
            folder = tempfile.mkdtemp(prefix="neoconv-oracle-hf-")
            try:
                shutil.copy(path, os.path.join(folder, "config.json"))
                with framework():
                    built = transformers.AutoConfig.from_pretrained(folder)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        values = {
            "transformers": transformers.__version__,
            "class": type(built).__name__,
            "model_type": built.model_type,
            "config": plain(built.to_dict()),
        }
        if job.get("model_type"):
            values["fields"], values["attribute_map"] = field_defaults(type(built)), dict(built.attribute_map)
        if job.get("count"):
            import torch  # outside framework(): a missing torch is this program's fault, not a verdict

            with framework(), torch.device("meta"):
                model = transformers.AutoModelForCausalLM.from_config(built)
            values["parameters"] = sum(p.numel() for p in model.parameters())
        if job.get("saved"):
            folder = tempfile.mkdtemp(prefix="neoconv-oracle-hf-")
            try:
                with framework():
                    built.save_pretrained(folder)
                with open(os.path.join(folder, "config.json")) as handle:
                    values["saved"] = json.load(handle)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        return values

    return serve(check)


if __name__ == "__main__":
    sys.exit(main())
