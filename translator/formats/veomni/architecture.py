"""The HF config.json VeOmni loads the architecture from (model.config_path, else model.model_path,
relative to the YAML; or --model-config), read under `hf.` (translator/formats/hf)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import yaml

from ...core.errors import InputError, NeoconvError
from ...io.documents import flatten, key_line, parse_json, read_text
from ...knowledge.source import Source
from ...io.yamlread import load as load_yaml
from ..hf import config_json
from ..hf import model_types as hf_config
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
            path = folder / where
            if path.is_dir():
                path = path / CONFIG_JSON
            if path.is_file():
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
    config, lifted = config_json.lift_rope_parameters(parsed)
    config = config_json.mark_explicit_nulls(config)
    model_type = config.get("model_type")
    if model_type not in hf_config.table().types:
        source.meta["unsupplied"] = dict.fromkeys(
            architecture_fields(),
            f"{shown} is {hf_config.unmapped_reason(str(model_type))}: give the architecture with --set",
        )
    source.tree[HF] = config
    source.meta["model_config"] = config  # what a same-format translation's output is read back with
    source.files.append(name)
    source.texts[name] = text
    source.leaf_files[HF] = name
    lines = _json_key_lines(text) if text else {}  # parsed in memory (a read-back): no lines to find
    for leaf in flatten({HF: config}):
        key = leaf[len(HF) + 1 :]
        written = config_json.written_as(key, lifted)
        source.aliases[leaf] = f"{shown}:{written}"
        source.origins[leaf] = (
            name,
            lines.get(tuple(written.split("."))) if lines is not None else key_line(text, written),
        )


def _json_key_lines(text: str) -> dict[tuple[str, ...], int] | None:
    """The line of every key of a JSON file, in one pass (a config.json of 20,000 keys is read in
    well under a second; a search per key took minutes). None when the YAML reader cannot read it."""
    lines: dict[tuple[str, ...], int] = {}
    try:
        load_yaml(text, key_lines=lines)
    except (yaml.YAMLError, NeoconvError):
        return None if len(text) < 1 << 16 else {}  # a small file is searched key by key instead
    return lines
