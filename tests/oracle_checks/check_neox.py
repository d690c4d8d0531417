"""GPT-NeoX's own argument code on NeoX YAML files: `NeoXArgs.from_ymls(files, overwrite_values)`.

Run with an interpreter that has torch (CPU), deepspeed and what NeoX's `megatron` package imports
(tools/oracle_setup.sh builds one), and $NEOX_SRC = a GPT-NeoX source tree. Job keys:
`files` (merged as deepy.py merges them), `world` (NeoX's own `global_num_gpus` field, so no GPU or
hostfile is looked for), `set` (more `overwrite_values`: NeoX's override path, used to supply what
a translation reported `missing`; `overwrite_values` replaces top-level keys, so a dotted key such
as `optimizer.params.lr` is set inside a copy of the files' `optimizer` block, which then replaces it).

Everything runs as NeoX runs it (`from_ymls` -> `__post_init__`: validate_keys, calculate_derived,
validate_types, validate_values), with two replacements, neither of which reads a config value:
* `NeoXArgs.enable_logging` does nothing. NeoX's only creates `log_dir` (which may be an absolute
  path of the authors' cluster) and tees stdout into it; it checks nothing.
* `importlib.metadata.version("flash-attn")` answers "2.6.3" (other packages are looked up as
  usual). flash-attn needs CUDA to install; NeoX asks for its version only to decide whether sliding
  windows/ALiBi are supported by the installed kernel, which is a property of the machine.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

from _protocol import framework, serve, set_dotted

FLASH_ATTN_VERSION = "2.6.3"


def load() -> Any:
    src = os.environ.get("NEOX_SRC")
    if not src or not os.path.isdir(os.path.join(src, "megatron")):
        raise SystemExit(f"NEOX_SRC must name a GPT-NeoX source tree (got {src!r})")
    sys.path.insert(0, src)
    from importlib.metadata import version

    from megatron.neox_arguments import arguments  # type: ignore[import-not-found]

    arguments.NeoXArgs.enable_logging = lambda self: None
    arguments.version = lambda name: FLASH_ATTN_VERSION if name == "flash-attn" else version(name)
    return arguments.NeoXArgs


@contextlib.contextmanager
def logged() -> Iterator[list[str]]:
    """The messages NeoX logs meanwhile."""
    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(re.sub(r"\x1b\[[0-9;]*m", "", record.getMessage()))

    handler = Keep(level=logging.WARNING)
    logging.getLogger().addHandler(handler)
    try:
        yield said
    finally:
        logging.getLogger().removeHandler(handler)


def overwrite_values(files: list[str], values: dict[str, Any]) -> dict[str, Any]:
    import yaml

    written: dict[str, Any] = {}
    if any("." in key for key in values):
        for path in files:
            with open(path) as handle:
                written.update(yaml.load(handle, Loader=yaml.FullLoader) or {})  # as from_ymls reads them
    out: dict[str, Any] = {}
    for key, value in values.items():
        top, _, rest = key.partition(".")
        if rest:
            block = copy.deepcopy(out.get(top, written.get(top)))
            block = block if isinstance(block, dict) else {}
            set_dotted(block, rest, value)
            value = block
        out[top] = value
    return out


def main() -> int:
    neox_args = load()

    def check(job: dict[str, Any]) -> dict[str, Any]:
        overwrite = {"global_num_gpus": job.get("world", 8), **overwrite_values(job["files"], job.get("set", {}))}
        with framework(), logged() as said:
            try:
                args = neox_args.from_ymls(list(job["files"]), overwrite_values=overwrite)
            except Exception as exc:
                # NeoX logs each failed type/value check, then raises one summary ("types cannot be validated")
                fails = [line for line in said if "FAIL" in line]
                if not fails:
                    raise
                raise ValueError(f"{exc} | " + " | ".join(fails)) from exc
        keys = [
            "train_batch_size",
            "train_micro_batch_size_per_gpu",
            "gradient_accumulation_steps",
            "global_num_gpus",
            "model_parallel_size",
            "pipe_parallel_size",
            "precision",
            "lr",
            "min_lr",
            "lr_decay_style",
            "lr_decay_iters",
            "train_iters",
            "warmup",
            "optimizer_type",
            "num_layers",
            "hidden_size",
        ]
        values = {k: getattr(args, k, None) for k in keys}
        values["deepspeed_config"] = args.deepspeed_config
        return values

    return serve(check)


if __name__ == "__main__":
    sys.exit(main())
