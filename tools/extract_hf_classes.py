#!/usr/bin/env python3
"""Extract `schemas/hf-classes.json`: every model type transformers builds a causal language model
for (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES), with its config class, its CausalLM class, and each field's
own default, as a given transformers release defines them.

What neoconv reads from it: which model_type values transformers defines (a config.json of a type
mappings/hf.yaml does not map is carried by hf2hf and named, not refused as unknown), which keys a
class has (validate: a key no class has is not a config.json parameter), and the class defaults the
table's `defaults:` must agree with (tests/test_hf_classes.py, without transformers).

The facts come from the transformers package itself: this program runs a second interpreter that
has it (`--python`, default $NEOCONV_ORACLE_HF, the oracle tier's transformers 5.23 environment) and
reads the classes there; nothing of transformers is imported into neoconv's own interpreter.

Usage: python tools/extract_hf_classes.py [--python PY] [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "schemas" / "hf-classes.json"

# run by the transformers interpreter: prints the JSON document
PROBE = r"""
import dataclasses, json, logging, warnings
warnings.filterwarnings("ignore")
import transformers
from transformers import AutoConfig, PreTrainedConfig
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES as CAUSAL
transformers.logging.set_verbosity_error()


def plain(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if dataclasses.is_dataclass(value):
        return {"<config>": type(value).__name__}
    return {"<value>": type(value).__name__}


def defaults(cls):
    out = {}
    for spec in dataclasses.fields(cls):
        if spec.name.startswith("_"):
            continue
        if spec.default is not dataclasses.MISSING:
            out[spec.name] = plain(spec.default)
        elif spec.default_factory is not dataclasses.MISSING:
            out[spec.name] = plain(spec.default_factory())
        else:
            out[spec.name] = {"<required>": True}
    return out


common = set(defaults(PreTrainedConfig))
types = {}
for name in sorted(CAUSAL):
    record = {"causal_lm": CAUSAL[name]}
    try:
        built = AutoConfig.for_model(name)
    except Exception as exc:  # a class whose own defaults it refuses (validate_architecture)
        record["refuses_its_defaults"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"[:300]
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING
        cls = CONFIG_MAPPING[name]
        built = None
    else:
        cls = type(built)
    record["class"] = cls.__name__
    record["encoder_decoder"] = bool(getattr(built, "is_encoder_decoder", False))
    record["sub_configs"] = sorted(getattr(cls, "sub_configs", None) or {})
    own = defaults(cls) if dataclasses.is_dataclass(cls) else {}
    record["fields"] = {k: v for k, v in own.items() if k not in common}
    for key, sub in sorted((getattr(cls, "sub_configs", None) or {}).items()):
        if dataclasses.is_dataclass(sub) and not getattr(sub, "model_type", ""):  # a block of the class (MPT's attn_config)
            record["fields"].update({f"{key}.{k}": v for k, v in defaults(sub).items() if k not in common})
    record["aliases"] = dict(sorted((getattr(cls, "attribute_map", None) or {}).items()))
    if built is not None:  # what __post_init__ made of the defaults, where it differs
        after = plain(built.to_dict())
        record["built"] = {k: v for k, v in sorted(after.items())
                           if k not in common and k in record["fields"] and v != record["fields"][k]}
        record["built"].update({k: v for k, v in sorted(after.items()) if k not in common and k not in record["fields"]
                                and not k.startswith("_") and k not in ("model_type", "transformers_version")})
    types[name] = record
print(json.dumps({"transformers": transformers.__version__, "common": sorted(common), "types": types}))
"""

COMMENT = (
    "extracted by tools/extract_hf_classes.py from the transformers package named below: every model_type "
    "with a causal-LM class (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES): its config class, CausalLM class, "
    "whether it is an encoder-decoder, its sub-configs, each dataclass field's own default (a "
    "block with no model_type of its own, MPT's attn_config, as dotted keys) "
    "(PreTrainedConfig's fields are in `common`), the class's attribute_map (`aliases`), and `built`: "
    "the values __post_init__ gives where they differ from the field's default, or keys it adds. "
    'A default transformers cannot write as JSON is {"<value>": type}, a field without one '
    '{"<required>": true}.'
)


def build(python: str) -> dict:
    proc = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, check=False, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"{python} could not list the transformers classes:\n{proc.stderr[-2000:]}")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"$comment": COMMENT, **data}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--python",
        default=os.environ.get("NEOCONV_ORACLE_HF"),
        help="an interpreter with transformers (default: $NEOCONV_ORACLE_HF)",
    )
    parser.add_argument("--output", default=str(OUTPUT))
    parser.add_argument("--check", action="store_true", help="fail if the file differs from what would be written")
    args = parser.parse_args()
    if not args.python:
        parser.error("give --python (an interpreter with transformers) or set $NEOCONV_ORACLE_HF")
    text = (
        json.dumps(build(args.python), indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    )  # dicts built from sets vary
    path = Path(args.output)
    if args.check:
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            print(f"{path} is stale: run tools/extract_hf_classes.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
