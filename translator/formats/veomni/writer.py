"""VeOmni YAML writer.

Writing. `--layout nested` (default) or `flat`; the key sets are VeOmni's dataclass fields
(schemas/veomni.schema.json, x-layouts) and nothing else is ever written, since VeOmni ignores
unknown keys without a word. Architecture from another framework becomes a config.json side file
that model.config_path points at.
"""

from __future__ import annotations

from typing import Any

import yaml

from ...errors import NeoconvError
from ...io import dump_yaml, unflatten
from ..hf import model_types as hf_config
from .fields import CONFIG_JSON, HF, SECTIONS, hf_keys, fields


def unplaceable(leaf: str, layout: str | None) -> str | None:
    """Why a layout has no place for a view leaf (same-format translation), or None."""
    layout = layout or "nested"
    if leaf.startswith(HF + "."):
        return None
    if leaf == "train.enable_full_shard" and layout == "nested":
        return None  # the writer folds it into fsdp_mode (FSDP1 -> FSDP2)
    spec = fields()
    key = spec.back.get(leaf, leaf) if layout == "flat" else leaf
    found = spec.layouts_of(key)
    if not found:
        return "not a VeOmni field (VeOmni's parser would ignore it): not written"
    if layout in found:
        return None
    if layout == "flat":
        return "the flat layout (VeOmni before PR #538) has no such field"
    return "the nested layout (VeOmni since PR #538) has no such field"


def write(leaves: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    layout = meta.get("layout") or "nested"
    same = meta.get("source_format") == "veomni"
    hf = {k[len(HF) + 1 :]: v for k, v in leaves.items() if k.startswith(HF + ".")}
    rest = {k: v for k, v in leaves.items() if not k.startswith(HF + ".")}
    moved: dict[str, str] = dict(meta.get("target_paths") or {})
    amend: dict[str, tuple[str, str]] = {}
    extra: list[tuple[str | None, str | None, str, str]] = []
    for key in hf:
        moved[f"{HF}.{key}"] = f"{CONFIG_JSON if same else config_name(meta)}:{key}" + (" (unchanged)" if same else "")
    for key in hf_keys():  # also the config.json keys a report names as missing
        moved.setdefault(key, f"{config_name(meta)}:{key[len(HF) + 1:]}")
    config = hf_config.document(hf) if hf and not same else None
    if config is not None:
        rest["model.config_path"] = config_name(meta)
    if same:
        _migrate(rest, meta.get("source_layout") or "nested", layout, amend, extra, moved)
    if not same:
        extra += _needed(rest, bool(hf))
    document = _lay_out(rest, layout, moved)
    document.config_json = config
    meta["target_paths"] = moved
    meta.setdefault("amend", {}).update(amend)
    meta.setdefault("extra_entries", []).extend(extra)
    return document


def _migrate(
    leaves: dict[str, Any],
    source_layout: str,
    layout: str,
    amend: dict[str, tuple[str, str]],
    extra: list[tuple[str | None, str | None, str, str]],
    moved: dict[str, str],
) -> None:
    """veomni2veomni across layouts: FSDP1 becomes FSDP2, and defaults that changed become explicit."""
    spec = fields()
    mode_key = spec.renames["train.data_parallel_mode"]
    full_shard = leaves.pop("train.enable_full_shard", None)
    if layout == "nested" and full_shard is not None:
        moved["train.enable_full_shard"] = mode_key
        amend["train.enable_full_shard"] = ("converted", "FSDP1's sharding switch: folded into fsdp_mode")
    if layout == "nested" and leaves.get(mode_key) == "fsdp1":
        shard = full_shard is not False
        leaves[mode_key] = "fsdp2" if shard else "ddp"
        device = "meta" if shard else "cuda"
        why = ("FSDP1 was removed after PR #538: FULL_SHARD is FSDP2 resharding after forward (ZeRO-3 either way)"
               if shard else "FSDP1 was removed after PR #538: NO_SHARD is plain DDP")  # fmt: skip
        amend[mode_key] = ("converted", f"{why}; FSDP2 needs init_device meta, DDP cuda")
        if leaves.get("train.init_device") != device:
            if "train.init_device" in leaves:
                amend["train.init_device"] = ("converted", f"set to {device} for {leaves[mode_key]}")
            else:
                extra.append((None, "train.init_device", "converted", f"{device}: what {leaves[mode_key]} needs"))
            leaves["train.init_device"] = device
    if source_layout == layout:
        return
    for flat_key in spec.carry_defaults:
        view_key = spec.renames.get(flat_key, flat_key)
        if view_key in leaves:
            continue
        value = spec.default(flat_key, "flat") if source_layout == "flat" else spec.default(view_key, "nested")
        if value is None:
            continue  # required in the source layout: a valid file has it
        leaves[view_key] = value
        target = spec.default(flat_key, "flat") if layout == "flat" else spec.default(view_key, "nested")
        shown = "required" if target is None else repr(target)
        extra.append((None, view_key, "defaulted",
                      f"the {source_layout} layout's default {value!r} (not in the file) written: the {layout} layout's is {shown}"))  # fmt: skip


def _needed(leaves: dict[str, Any], wrote_config: bool) -> list[tuple[str | None, str | None, str, str]]:
    """VeOmni keys with no canonical field that a run cannot do without."""
    out: list[tuple[str | None, str | None, str, str]] = []
    if not wrote_config and not any(k in leaves for k in ("model.config_path", "model.model_path")):
        out.append((None, "model.config_path", "missing",
                    "VeOmni needs the model: model.config_path (an HF config.json) or model.model_path; the source "
                    "describes no architecture"))  # fmt: skip
    if "data.train_path" not in leaves:
        out.append((None, "data.train_path", "missing",
                    "VeOmni requires data.train_path (no default): convert the dataset for VeOmni and add its path"))  # fmt: skip
    if wrote_config and not any(k in leaves for k in ("model.tokenizer_path", "model.model_path")):
        out.append((None, "model.tokenizer_path", "missing",
                    "VeOmni loads the tokenizer from model.tokenizer_path, else model.config_path (the written "
                    "config.json, which holds none): add the HF tokenizer folder or hub id"))  # fmt: skip
    return out


class Document(dict):  # type: ignore[type-arg]
    """The VeOmni YAML document; `config_json` is the HF config.json written beside it (or None),
    kept on the document so that `side_files` needs nothing else."""

    config_json: dict[str, Any] | None = None


for _dumper in {yaml.SafeDumper, getattr(yaml, "CSafeDumper", yaml.SafeDumper)}:  # yaml.safe_dump(result.config)
    _dumper.add_representer(Document, yaml.representer.SafeRepresenter.represent_dict)


def _lay_out(leaves: dict[str, Any], layout: str, moved: dict[str, str]) -> Document:
    """View leaves -> the document in `layout`, checked against that layout's dataclass fields."""
    spec = fields()
    out: dict[str, Any] = {}
    for key, value in leaves.items():
        target = key
        if layout == "flat":
            target = "train.optimizer" if key == spec.renames["train.optimizer"] else spec.back.get(key, key)
            if target != key:
                moved[key] = target
        out[target] = value
    for key, value in out.items():
        placed = spec.layouts_of(key, value)
        if placed and layout not in placed:
            raise NeoconvError(f"internal error: {key} is not a field of the {layout} layout (mappings/veomni.yaml)")
    tree = unflatten(out)
    ordered = Document((section, tree.pop(section)) for section in SECTIONS if section in tree)
    ordered.update(tree)
    return ordered


def dump(document: dict[str, Any], meta: dict[str, Any]) -> str:
    source = f" from {meta['from']}" if meta.get("from") else ""
    layout = meta.get("layout") or "nested"
    era = "VeOmni since PR #538" if layout == "nested" else "VeOmni before PR #538"
    lines = [f"# VeOmni config ({layout} layout, {era}) written by neoconv{source}"]
    config = getattr(document, "config_json", None)
    if config:
        lines.append(f"# The architecture is the HF config {config_name(meta)} written beside this file (model_type "
                     f"{config.get('model_type')}); VeOmni resolves model.config_path from the folder it is launched in")  # fmt: skip
    return "\n".join(lines) + "\n" + dump_yaml(document)


def config_name(meta: dict[str, Any]) -> str:
    """The config.json written beside an output is named after it (out/b.yaml: out/b.config.json),
    so that two outputs in one folder never share, or overwrite, one architecture file."""
    output = meta.get("output")
    if not output:
        return CONFIG_JSON
    stem, dot, _ = str(output).rpartition(".")
    return f"{stem if dot and stem else output}.{CONFIG_JSON}"


def side_files(document: dict[str, Any], meta: dict[str, Any]) -> dict[str, str]:
    config = getattr(document, "config_json", None)
    return {config_name(meta): hf_config.dump(config)} if config else {}
