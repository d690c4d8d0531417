"""VeOmni YAML writer: `--layout nested` (default) or `flat`; the key sets are VeOmni's dataclass
fields (schemas/veomni.schema.json, x-layouts) and nothing else is ever written, since VeOmni ignores
unknown keys without a word. Architecture from another framework becomes a config.json side file
that model.config_path points at, named after the output.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from ...core.errors import NeoconvError, UnsupportedFamily
from ...knowledge.schema import load_history
from ...io.documents import dump_yaml, flatten, unflatten
from ...knowledge.mapping import load_table
from ...core.report import Status
from ..hf import config_json
from ..hf.multimodal import carried_for
from ..spec import ExtraEntry, WriteContext, WriteResult, Writer, added_for_target
from .fields import CONFIG_JSON, HF, SECTIONS, fields, hf_keys


class VeomniWriter(Writer):
    format = "veomni"

    def write(self, leaves: dict[str, Any], ctx: WriteContext) -> WriteResult:
        layout = ctx.layout or "nested"
        same = ctx.source_format == self.format
        name = config_name(ctx.output)
        hf = {k[len(HF) + 1 :]: v for k, v in leaves.items() if k.startswith(HF + ".")}
        rest = {k: v for k, v in leaves.items() if not k.startswith(HF + ".")}
        moved: dict[str, str] = {}
        amend: dict[str, tuple[Status, str]] = {}
        extra: list[ExtraEntry] = [] if same or "model_type" not in hf else config_json.every_head_its_own(hf)
        for key in hf:
            moved[f"{HF}.{key}"] = f"{CONFIG_JSON if same else name}:{key}" + (" (unchanged)" if same else "")
        for key in hf_keys():  # also the config.json keys a report names as missing
            moved.setdefault(key, f"{name}:{key[len(HF) + 1 :]}")
        config = config_json.document(hf) if hf and not same else None
        whole = carried_for(ctx.source_shape, self.format) if not same else None
        if whole is not None and config is not None:  # a multimodal model VeOmni trains: its config.json as written
            _registered(whole, _release_of(ctx.version, layout), ctx.sources)
            config, paths = whole["document"], whole["paths"]
            moved.update({leaf: f"{name}:{path}" for leaf, path in paths.items()})  # (and the rest it carries)
            moved.update({f"{HF}.{k}": f"{name}:{paths.get(f'{HF}.{k}', k)}" for k in hf})
            extra = []
        if config is not None:
            rest["model.config_path"] = name
            extra.append(
                added_for_target(
                    "VeOmni",
                    "model.config_path",
                    name,
                    "VeOmni reads the architecture from the HF config.json written beside this file",
                )
            )
        if same:
            _migrate(rest, ctx.source_layout or "nested", layout, amend, extra, moved)
            _fold_margin(rest, ctx.source_shape.get("dyn_bsz_margin"), _release_of(ctx.version, layout), amend)
        else:
            extra += _needed(rest, bool(hf))
        document = _lay_out(rest, layout, moved, _release_of(ctx.version, layout))
        _unread_by_release(document, _release_of(ctx.version, layout), moved, amend)
        header = self.header(document, ctx)
        if config:
            header.append(
                f"# The architecture is the HF config {name} written beside this file (model_type "
                f"{config.get('model_type')}); VeOmni resolves model.config_path from the folder it is launched in"
            )
        # reading the output back uses the architecture written beside it, or (same format) the source's
        kept = ctx.source_shape.get("model_config") if same else None
        model_config = config if config is not None else kept if isinstance(kept, Mapping) else {}
        return WriteResult(
            document,
            header,
            side_files={name: config_json.dump(config)} if config else {},
            amended=amend,
            extra_entries=extra,
            target_paths=moved,
            model_config=model_config,
            place_of=_flat_place if layout == "flat" else None,
        )

    def header(self, document: dict[str, Any], ctx: WriteContext) -> list[str]:
        layout = ctx.layout or "nested"
        era = {"nested": "VeOmni since PR #538", "scoped": "VeOmni since PR #1090"}.get(layout, "VeOmni before PR #538")
        return [
            f"# VeOmni config ({layout} layout, {era}) written by neoconv"
            + (f" from {ctx.sources}" if ctx.sources else "")
        ]

    def serialise(self, document: dict[str, Any]) -> str:
        return dump_yaml(document)

    def unplaceable(self, leaf: str, layout: str | None, version: str | None = None) -> str | None:
        """Why a layout has no place for a view leaf (same-format translation), or None."""
        layout = layout or "nested"
        if leaf.startswith(HF + "."):
            return None
        if leaf == "train.enable_full_shard" and layout == "nested":
            return None  # the writer folds it into fsdp_mode (FSDP1 -> FSDP2)
        spec = fields()
        key = spec.back.get(leaf, leaf) if layout == "flat" else leaf
        scoped = layout == "scoped"
        layout = "nested" if scoped else layout  # the nested view, moved (PR #1090)
        found = spec.layouts_of(key) or _history_layouts(key)
        if not found and _history_layouts(_scoped_name(key)):  # a field only the scoped releases have (betas)
            if scoped:
                return None  # a release without it leaves it out (_unread_by_release)
            history = load_history("veomni")
            runs = history.runs(_scoped_name(key)) if history is not None else ""
            return f"only VeOmni {runs} has it ({_scoped_name(key)}, model-scoped layout): not written"
        if not found:
            history = load_history("veomni")
            if history is not None and version is not None and history.refuses_unknown(version):
                return (
                    f"not a field of VeOmni {version}, whose parser refuses every key it does not declare: not written"
                )
            return "not a VeOmni field (VeOmni's parser would ignore it): not written"
        if layout in found:
            return None
        if layout == "flat":
            return "the flat layout (VeOmni before PR #538) has no such field"
        return "the nested layout (VeOmni since PR #538) has no such field"


WRITER = VeomniWriter()


def _registered(whole: Mapping[str, Any], release: str | None, sources: str | None) -> None:
    """A multimodal model the target release's registry does not build yet is refused (VeOmni registers its
    models one by one: qwen3_vl from #164)."""
    from ...knowledge.schema import older

    since = whole.get("since", {}).get("veomni")
    if since and older("veomni", release, since):
        raise UnsupportedFamily(
            f"VeOmni {release} does not build HF {whole.get('name')} (its MODELING_REGISTRY has it from {since})",
            file=sources or None,
            hint=f"give --to-version {since} or later",
        )


def _scoped_name(key: str) -> str:
    """A view key as the newest (scoped) release spells it: model.optimizer.betas for train.optimizer.betas."""
    history = load_history("veomni")
    return fields().to_scoped(key, history.labels[-1]) if history is not None else key


def _history_layouts(key: str) -> tuple[str, ...]:
    """The layouts whose releases read a key the two schema commits lack (train.rmpad, dyn_bsz_margin:
    flat releases before #458): the writer leaves it out for a target release that does not read it."""
    history = load_history("veomni")
    if history is None or key not in history.keys:
        return ()
    mask = history.mask(key)
    from ...knowledge.versions import versions  # the table names the flat layout's last release (version_aliases)

    last_flat = history.position.get(versions("veomni").aliases.get("flat", ""), -1)
    flat_mask = (1 << (last_flat + 1)) - 1 if last_flat >= 0 else 0
    return tuple(name for name, bits in (("nested", history.every & ~flat_mask), ("flat", flat_mask)) if mask & bits)


def config_name(output: str | None) -> str:
    """The config.json written beside an output is named after it (out/b.yaml: out/b.config.json),
    so that two outputs in one folder never share, or overwrite, one architecture file."""
    if not output:
        return CONFIG_JSON
    stem, dot, _ = str(output).rpartition(".")
    return f"{stem if dot and stem else output}.{CONFIG_JSON}"


def _migrate(
    leaves: dict[str, Any],
    source_layout: str,
    layout: str,
    amend: dict[str, tuple[Status, str]],
    extra: list[ExtraEntry],
    moved: dict[str, str],
) -> None:
    """veomni2veomni across layouts: FSDP1 becomes FSDP2, and defaults that changed become explicit."""
    spec = fields()
    mode_key = spec.renames["train.data_parallel_mode"]
    full_shard = leaves.pop("train.enable_full_shard", None)
    nested = layout in ("nested", "scoped")  # scoped (PR #1090) is the nested view, moved
    if nested and full_shard is not None:
        moved["train.enable_full_shard"] = mode_key
        amend["train.enable_full_shard"] = (Status.CONVERTED, "FSDP1's sharding switch: folded into fsdp_mode")
    if nested and leaves.get(mode_key) == "fsdp1":
        shard = full_shard is not False
        leaves[mode_key] = "fsdp2" if shard else "ddp"
        device = "meta" if shard else "cuda"
        why = (
            "FSDP1 was removed after PR #538: FULL_SHARD is FSDP2 resharding after forward (ZeRO-3 either way)"
            if shard
            else "FSDP1 was removed after PR #538: NO_SHARD is plain DDP"
        )
        amend[mode_key] = (Status.CONVERTED, f"{why}; FSDP2 needs init_device meta, DDP cuda")
        if leaves.get("train.init_device") != device:
            if "train.init_device" in leaves:
                amend["train.init_device"] = (Status.CONVERTED, f"set to {device} for {leaves[mode_key]}")
            else:
                extra.append(
                    ExtraEntry("train.init_device", Status.CONVERTED, f"{device}: what {leaves[mode_key]} needs")
                )
            leaves["train.init_device"] = device
    if layout == "flat":  # a value only the nested era has (data_type dpo, PR #558): the flat parser refuses it
        for key in [k for k in leaves if (allowed := spec.choices(k, "flat")) is not None and leaves[k] not in allowed]:
            amend[key] = (
                Status.DROPPED,
                f"the flat layout (VeOmni before PR #538) has no {key} {leaves.pop(key)!r} "
                f"(its values: {', '.join(map(str, spec.choices(key, 'flat') or []))}): not written, "
                f"so its default {spec.default(key, 'flat')!r} applies",
            )
    if source_layout == layout or {source_layout, layout} == {"nested", "scoped"}:
        return  # the same fields and defaults, placed differently
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
        extra.append(
            ExtraEntry(
                view_key,
                Status.DEFAULTED,
                f"the {source_layout} layout's default {value!r} (not in the file) written: the {layout} layout's is {shown}",
            )
        )


def _fold_margin(
    leaves: dict[str, Any], margin: Any, release: str | None, amend: dict[str, tuple[Status, str]]
) -> None:
    """Before #458 a dynamic batch of a padding-free run was counted `dyn_bsz_margin` tokens short
    (compute_train_steps' eff), so data.train_size gave more steps; for a release that has no margin,
    train_size is re-sized to give the source's steps per epoch (the margin itself is named not written)."""
    history = load_history("veomni")
    if (
        not margin
        or history is None
        or release not in history.position
        or history.reads("train.dyn_bsz_margin", release)
    ):
        return
    tokens, batch = leaves.get("data.train_size"), leaves.get("train.global_batch_size")
    packed = leaves.get("train.dyn_bsz", True) and (
        leaves.get("train.rmpad", True) is not False or leaves.get("train.rmpad_with_pos_ids")
    )
    if not packed or not isinstance(tokens, int) or not isinstance(batch, int):
        return
    from .schedule import VEOMNI_MAX_SEQ_LEN, veomni_tokens_for

    seq = leaves.get("data.max_seq_len") or VEOMNI_MAX_SEQ_LEN
    micro = (leaves.get("train.micro_batch_size") or 1) * seq
    warmup = leaves.get("train.bsz_warmup_ratio") or 0.0
    steps = math.ceil(int(tokens * (1 + warmup / 2)) / (batch * seq * (micro - margin) / micro))
    leaves["data.train_size"] = veomni_tokens_for(steps, batch * seq, warmup)
    amend["data.train_size"] = (
        Status.CONVERTED,
        f"re-sized from {tokens} for the same {steps} steps per epoch: VeOmni "
        f"{release} does not count each dynamic batch dyn_bsz_margin={margin} tokens short",
    )


def _needed(leaves: dict[str, Any], wrote_config: bool) -> list[ExtraEntry]:
    """VeOmni keys with no canonical field that a run cannot do without."""
    out: list[ExtraEntry] = []
    if not wrote_config and not any(k in leaves for k in ("model.config_path", "model.model_path")):
        out.append(
            ExtraEntry(
                "model.config_path",
                Status.MISSING,
                "VeOmni needs the model: model.config_path (an HF config.json) or model.model_path; the source "
                "describes no architecture",
            )
        )
    if "data.train_path" not in leaves:
        out.append(
            ExtraEntry(
                "data.train_path",
                Status.MISSING,
                "VeOmni requires data.train_path (no default): convert the dataset for VeOmni and add its path",
            )
        )
    if wrote_config and not any(k in leaves for k in ("model.tokenizer_path", "model.model_path")):
        out.append(
            ExtraEntry(
                "model.tokenizer_path",
                Status.MISSING,
                "VeOmni loads the tokenizer from model.tokenizer_path, else model.config_path (the written "
                "config.json, which holds none): add the HF tokenizer folder or hub id",
            )
        )
    return out


def _release_of(version: str | None, layout: str) -> str | None:
    """The release a document is checked against: the one asked for, else (the current release, the
    default) the last release of its layout: a flat file without --to-version is for #458, the last
    flat release, which does not read the keys #458 removed (train.rmpad ...)."""
    from ...knowledge.versions import versions

    known = versions("veomni")
    if version is not None and version != known.newest:
        return version
    return known.aliases.get(layout, version)


def _unread_by_release(
    document: dict[str, Any], version: str | None, moved: dict[str, str], amend: dict[str, tuple[Status, str]]
) -> None:
    """Keys an older target release does not read (VeOmni ignores unknown keys: they would silently do
    nothing there) are left out, and their entries say so (lossy)."""
    history = load_history("veomni")
    if history is None or not version or version not in history.position:
        return
    view_of = {target: view for view, target in moved.items()}
    fixed = fields().hard_coded
    leaves = flatten(document)
    for key in [k for k in leaves if k in history.keys and not history.reads(k, version)]:
        _drop(document, key.split("."))
        view = view_of.get(key, key)
        if view in fixed and list(leaves[key]) == list(fixed[view]):
            amend[view] = (Status.EXACT, f"VeOmni {version} has no {key}: it hard-codes {fixed[view]}, the same")
            continue
        amend[view] = (Status.LOSSY, f"VeOmni {version} does not read {key} (read by {history.runs(key)}): not written")


def _drop(node: dict[str, Any], parts: list[str]) -> None:
    child = node.get(parts[0])
    if len(parts) == 1:
        node.pop(parts[0], None)
    elif isinstance(child, dict):
        _drop(child, parts[1:])
        if not child:  # an emptied block goes too
            node.pop(parts[0])


def _flat_place(key: str) -> str | None:
    """Where the flat layout keeps a (nested view) key the writer did not write: a missing one."""
    spec = fields()
    return "train.optimizer" if key == spec.renames["train.optimizer"] else spec.back.get(key)


def _lay_out(leaves: dict[str, Any], layout: str, moved: dict[str, str], release: str | None = None) -> dict[str, Any]:
    """View leaves -> the document in `layout`, checked against that layout's dataclass fields."""
    spec = fields()
    out: dict[str, Any] = {}
    for key, value in leaves.items():
        target = key
        if layout == "flat":
            target = "train.optimizer" if key == spec.renames["train.optimizer"] else spec.back.get(key, key)
        elif layout == "scoped":
            target = spec.to_scoped(key, release)
        if target != key:
            moved[key] = target
        out[target] = value
    older = set(load_table("veomni").releases.renamed)  # an older release's spelling (spellings.downgrade)
    checked = "nested" if layout == "scoped" else layout
    for key, value in out.items():
        placed = spec.layouts_of(spec.from_scoped(key) if layout == "scoped" else key, value)
        if placed and checked not in placed and key not in older:
            raise NeoconvError(f"internal error: {key} is not a field of the {layout} layout (mappings/veomni.yaml)")
    tree = unflatten(out)
    ordered = {section: tree.pop(section) for section in SECTIONS if section in tree}
    ordered.update(tree)
    return ordered
