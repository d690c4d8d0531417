#!/usr/bin/env python3
"""Extract `schemas/hf-types.json`: every model_type transformers defines (CONFIG_MAPPING_NAMES) at the
releases neoconv reads config.json files of, with its config class, the kind of model it is, and the
model types of its nested configs (a multimodal model's text_config, vision_config, thinker_config).

What neoconv reads from it: a model_type transformers defines is never called remote code; a config.json
of a type no row of mappings/hf.yaml maps is named by its kind (a multimodal model, an encoder-decoder, a
vision model, ...); schemas/hf-classes.json keeps only the causal-LM types, with their fields.

The kind is the first of these the type's auto classes say (transformers' models/auto/modeling_auto.py
*_MAPPING_NAMES): multimodal (image-text-to-text, multimodal LM, vision-to-sequence), encoder-decoder
(sequence-to-sequence, speech-to-text), encoder (masked LM, text encoding without a causal LM), decoder
(causal LM), audio, vision, time-series; a type no task maps that is a nested config of another is
`part` (its `of`: where it sits); the rest `other`.

The facts come from the transformers packages themselves: each --python interpreter has one release, and
this program reads its classes there; nothing of transformers is imported into neoconv's own interpreter.

Usage: python tools/extract_hf_types.py --python PY [--python PY ...] [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "schemas" / "hf-types.json"

# run by each transformers interpreter: prints {release, types: {type: {class, tasks, parts}}}
PROBE = r"""
import json, warnings
warnings.filterwarnings("ignore")
import transformers
transformers.logging.set_verbosity_error()
import transformers.models.auto.modeling_auto as auto
from transformers.models.auto.configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES

tasks = {}
for name in dir(auto):
    if name.endswith("_MAPPING_NAMES") and name.startswith("MODEL_FOR_"):
        for kind in getattr(auto, name):
            tasks.setdefault(kind, []).append(name[len("MODEL_FOR_"):-len("_MAPPING_NAMES")])
types = {}
for kind, cls_name in sorted(CONFIG_MAPPING_NAMES.items()):
    parts = {}
    try:
        cls = CONFIG_MAPPING[kind]
        for key, sub in sorted((getattr(cls, "sub_configs", None) or {}).items()):
            inner = getattr(sub, "model_type", "")
            parts[key] = inner if isinstance(inner, str) and inner else None  # None: any config (AutoConfig)
    except Exception:  # a class its release cannot import (a missing optional package): its name stands
        pass
    types[kind] = {"class": cls_name, "tasks": sorted(tasks.get(kind, [])), "parts": parts}
base = getattr(transformers, "PreTrainedConfig", None) or transformers.PretrainedConfig  # (4.x's spelling)
common = sorted(base().to_dict())
print(json.dumps({"release": transformers.__version__, "types": types, "common": common}))
"""

# the first group a type's auto classes name is its kind (the docstring's order)
KINDS = (
    ("multimodal", ("IMAGE_TEXT_TO_TEXT", "MULTIMODAL_LM", "VISION_2_SEQ")),
    ("encoder-decoder", ("SEQ_TO_SEQ_CAUSAL_LM", "SPEECH_SEQ_2_SEQ")),
    ("encoder", ("MASKED_LM",)),
    ("decoder", ("CAUSAL_LM",)),
    ("encoder", ("TEXT_ENCODING",)),
    (
        "audio",
        (
            "CTC",
            "AUDIO_CLASSIFICATION",
            "AUDIO_FRAME_CLASSIFICATION",
            "AUDIO_XVECTOR",
            "TEXT_TO_WAVEFORM",
            "TEXT_TO_SPECTROGRAM",
            "RNNT",
            "TDT",
        ),
    ),
    ("time-series", ("TIME_SERIES_CLASSIFICATION", "TIME_SERIES_PREDICTION", "TIME_SERIES_REGRESSION")),
)
VISION = (
    "IMAGE",
    "OBJECT",
    "DEPTH",
    "SEMANTIC",
    "INSTANCE",
    "UNIVERSAL",
    "BACKBONE",
    "VIDEO",
    "ZERO_SHOT",
    "KEYPOINT",
    "POSE",
    "MASK_GENERATION",
    "MASKED_IMAGE",
    "CAUSAL_IMAGE",
    "DOCUMENT",
    "NORMAL",
    "POINTMAP",
    "TEXT_RECOGNITION",
    "TABLE_RECOGNITION",
)

COMMENT = (
    "extracted by tools/extract_hf_types.py from the transformers releases named in `releases`: every model_type "
    "of CONFIG_MAPPING_NAMES, its config class (`class`, the newest release's), its `kind` (multimodal, "
    "encoder-decoder, encoder, decoder, audio, vision, time-series, part (a nested config of another type: `of`), "
    "other; from the auto classes of modeling_auto.py), the model types of its nested configs (`parts`; null: any "
    "config) and, where not every release defines it, the releases that do (`in`); `common`: the keys every "
    "config of a release writes (PreTrainedConfig().to_dict(): 4.x's generation settings among them)."
)


def kind_of(tasks: list[str]) -> str:
    for kind, names in KINDS:
        if set(names) & set(tasks):
            return kind
    return "vision" if any(t.startswith(VISION) for t in tasks) else ""


def build(pythons: list[str]) -> dict:
    found = []
    for python in pythons:
        proc = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, check=False, timeout=900)
        if proc.returncode != 0:
            raise SystemExit(f"{python} could not list the transformers model types:\n{proc.stderr[-2000:]}")
        found.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    found.sort(key=lambda r: tuple(int(p) for p in r["release"].split(".")[:3]))
    releases = [r["release"] for r in found]
    types: dict[str, dict] = {}
    for record in found:  # the newest release's facts win
        for name, info in record["types"].items():
            entry = types.setdefault(name, {"in": []})
            entry["in"].append(record["release"])
            entry.update({"class": info["class"], "kind": kind_of(info["tasks"]), "parts": info["parts"]})
    for name, entry in types.items():
        for key, inner in entry["parts"].items():
            if inner in types and not types[inner]["kind"]:  # a nested config no task builds alone
                types[inner]["kind"] = "part"
                types[inner].setdefault("of", f"{name}.{key}")
    for entry in types.values():
        entry["kind"] = entry["kind"] or "other"
        if entry["in"] == releases:
            del entry["in"]
        if not entry["parts"]:
            del entry["parts"]
    common = {record["release"]: record["common"] for record in found}
    return {"$comment": COMMENT, "releases": releases, "types": dict(sorted(types.items())), "common": common}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", action="append", required=True, help="an interpreter with one transformers release")
    parser.add_argument("--output", default=str(OUTPUT))
    parser.add_argument("--check", action="store_true", help="fail if the file differs from what would be written")
    args = parser.parse_args()
    text = json.dumps(build(args.python), indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    path = Path(args.output)
    if args.check:
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            print(f"{path} is stale: run tools/extract_hf_types.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
