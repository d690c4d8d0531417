"""transformers' own code on a HuggingFace config.json (run by an interpreter with transformers;
with torch too for the parameter count).

* Accepts: `AutoConfig.from_pretrained` on a folder holding the file as config.json (what a
  training script, VeOmni's loader among them, does first).
* Run: a config.json holds no training run (no batch, steps, learning rate, precision of a run).
* Model: the dimensions of the class transformers built (the text model of a multimodal config).
* Parameters: `AutoModelForCausalLM.from_config` on torch's meta device (no weights).

Nothing is replaced; downloads are off (the parent sets HF_HUB_OFFLINE).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from typing import Any

from _probe import CannotRun, Result, count_meta, describe, framework, main, package_version

PROBE = {
    "framework": "transformers",
    "checkout": None,
    "imports": ["transformers", "torch"],
    "install": "transformers at the release your runs use, and torch (CPU wheel) for the parameter count",
    "source": None,
}


def load(job: dict[str, Any]) -> dict[str, Any]:
    try:
        import transformers
    except ImportError as exc:
        raise CannotRun(f"transformers does not import with this interpreter: {describe(exc)}") from exc
    return {"name": "transformers", "version": transformers.__version__, "torch": package_version("torch")}


def probe(job: dict[str, Any], result: Result) -> None:
    import transformers

    (path,) = job["files"]
    folder = tempfile.mkdtemp(prefix="neoconv-prove-hf-")
    try:
        shutil.copy(path, os.path.join(folder, "config.json"))
        with framework():
            config = transformers.AutoConfig.from_pretrained(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    result["run"] = {"steps": None, "global_batch": None}
    result.note("a config.json holds no training run: only the architecture is compared")
    result["model"] = {
        "class": type(config).__name__,
        "model_type": config.model_type,
        "num_layers": getattr(text, "num_hidden_layers", None),
        "hidden_size": getattr(text, "hidden_size", None),
        "num_heads": getattr(text, "num_attention_heads", None),
        "num_kv_heads": getattr(text, "num_key_value_heads", None),
        "ffn_hidden_size": getattr(text, "intermediate_size", None),
        "vocab_size": getattr(text, "vocab_size", None),
        "max_position_embeddings": getattr(text, "max_position_embeddings", None),
    }
    if job.get("count_parameters", True):
        _parameters(transformers, config, text, result)


def _parameters(transformers: Any, config: Any, text: Any, result: Result) -> None:
    try:
        import torch  # noqa: F401
    except ImportError:
        result["parameters"] = {"error": "torch is not installed with this transformers: no meta-device build"}
        return
    vocab = getattr(text, "vocab_size", None)

    def build(rows: int) -> Any:
        text.vocab_size = rows
        with contextlib.redirect_stdout(sys.stderr):
            return transformers.AutoModelForCausalLM.from_config(config)

    try:
        with framework():
            count = count_meta(build, vocab, placeholder=vocab or 32000)
    except Exception as exc:  # noqa: BLE001 - the framework refusing to build is reported, not raised
        result["parameters"] = {"error": str(exc)[:500]}
        return
    count["how"] = "AutoModelForCausalLM.from_config on the meta device"
    result["parameters"] = count


if __name__ == "__main__":
    sys.exit(main("hf", load, probe))
