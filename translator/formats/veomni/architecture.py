"""The HF config.json VeOmni loads the architecture from (model.config_path, else model.model_path,
relative to the YAML; or --model-config), read under `hf.` (translator/formats/hf)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import yaml

from ...core.errors import InputError, NeoconvError
from ...io.confined import leads_out
from ...io.documents import flatten, key_line, parse_json, read_text
from ...knowledge.source import Source
from ...io.yamlread import load as load_yaml
from ..hf import config_json
from ..hf import model_types as hf_config
from ..hf import multimodal
from .fields import CONFIG_JSON, HF, architecture_fields
from ..spec import ModelConfig
from .source import VeomniSource


def _config_json(source: Source, base: str, model_config: str | None) -> tuple[Path | None, str]:
    """The HF config.json VeOmni would load, or None and why not."""
    if model_config is not None:
        path = Path(model_config)
        if path.is_dir():
            path = path / CONFIG_JSON
        if not path.is_file():
            raise InputError("no such file (--model-config)", file=str(path))
        return path, ""
    found = source.tree.get("model")
    model: dict[str, Any] = found if isinstance(found, dict) else {}
    for key in ("config_path", "model_path"):  # VeOmni: config_path defaults to model_path
        where = model.get(key)
        if isinstance(where, str) and where:
            folder = Path(base).parent if base not in ("-", "<config>") else Path(".")
            out = leads_out(folder, where, f"the folder of {Path(base).name}")
            if out is not None:  # read only beside the YAML, as side files are (docs/input-safety.md)
                why = (
                    f"model.{key} is not followed: {out}, and neoconv reads a referenced file only from "
                    "beside the file naming it: give the HF config.json with --model-config FILE"
                )
                source.notes[f"model.{key}"] = why
                return None, why
            path = folder / where
            if path.is_dir():
                path = path / CONFIG_JSON
            if path.is_file():
                source.notes[f"model.{key}"] = f"the architecture is read from {path}, beside {Path(base).name}"
                return path, ""
            return None, (
                f"VeOmni reads the architecture from the HF config.json at model.{key} ({where!r} is no "
                f"folder or file beside {Path(base).name}): give it with --model-config FILE"
            )
    return (
        None,
        "the config names no model.config_path or model.model_path: give the HF config.json with --model-config FILE",
    )


def attach_architecture(source: VeomniSource, base: str, model_config: ModelConfig) -> None:
    if isinstance(model_config, Mapping):  # already parsed: a translation reading its own output back
        name, text, parsed, shown = CONFIG_JSON, "", dict(model_config), CONFIG_JSON
    else:
        path, why = _config_json(source, base, model_config)
        if path is None:
            source.meta["unsupplied"] = dict.fromkeys(architecture_fields(), why)
            return
        name, shown = str(path), path.name
        text = read_text(name)
        parsed = parse_json(text, name)
    wrapper = hf_config.table().wrappers.get(str(parsed.get("model_type")))
    nested: dict[str, str] = {}
    if wrapper is not None:  # a multimodal model: its decoder read, the rest set aside (VeOmni trains it whole)
        original = parsed
        parsed, nested, _ = multimodal.unwrap(parsed, wrapper, name, text)
    config, lifted = config_json.lift_rope_parameters(parsed)
    config = config_json.mark_explicit_nulls(config)
    model_type = config.get("model_type")
    if model_type not in hf_config.table().types:
        source.meta["unsupplied"] = dict.fromkeys(
            architecture_fields(),
            f"{shown} is {hf_config.unmapped_reason(str(model_type))}: give the architecture with --set",
        )
    source.tree[HF] = config
    # what a same-format translation's output is read back with (a multimodal file: as written)
    source.meta["model_config"] = original if wrapper is not None else config
    source.files.append(name)
    source.texts[name] = text
    source.leaf_files[HF] = name
    lines = _json_key_lines(text) if text else {}  # parsed in memory (a read-back): no lines to find
    for leaf in flatten({HF: config}):
        key = leaf[len(HF) + 1 :]
        written = config_json.written_as(key, lifted)
        written = f"{nested[written.split('.', 1)[0]]}.{written}" if written.split(".", 1)[0] in nested else written
        source.aliases[leaf] = f"{shown}:{written}"
        source.origins[leaf] = (
            name,
            lines.get(tuple(written.split("."))) if lines is not None else key_line(text, written),
        )
    if wrapper is not None:
        _aside_multimodal(source, config, wrapper, original)


def _aside_multimodal(source: VeomniSource, config: dict[str, Any], wrapper: Any, original: dict[str, Any]) -> None:
    """The rest of a multimodal model beside its decoder: set aside (carried by a format that trains it whole, the
    file refused by one of decoder language models)."""
    why = ("family_not_supported", {"what": wrapper.what})
    for key in [
        *wrapper.aside,
        *(multimodal.mrope_leaves(config) if wrapper.mrope else ()),
        *multimodal.nested_own(config, wrapper),
    ]:
        if key in config or "." in key:
            source.set_aside[f"{HF}.{key}"] = why
    source.meta["blocks_aside"] = [f"{HF}.{key}" for key in wrapper.aside if isinstance(config.get(key), dict)]
    if not wrapper.alone:
        source.meta["unsupported_family"] = {**multimodal.refusal(wrapper), "leaf": multimodal.LEAF}
        paths = {leaf: alias.split(":", 1)[1] for leaf, alias in source.aliases.items() if leaf.startswith(HF + ".")}
        source.meta["any_target"] = multimodal.carried(wrapper, original, paths)


def _json_key_lines(text: str) -> dict[tuple[str, ...], int] | None:
    """The line of every key of a JSON file, in one pass (a config.json of 20,000 keys is read in
    well under a second; a search per key took minutes). None when the YAML reader cannot read it."""
    lines: dict[tuple[str, ...], int] = {}
    try:
        load_yaml(text, key_lines=lines)
    except (yaml.YAMLError, NeoconvError):
        return None if len(text) < 1 << 16 else {}  # a small file is searched key by key instead
    return lines
