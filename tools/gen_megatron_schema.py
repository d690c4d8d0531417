#!/usr/bin/env python3
"""Generate schemas/megatron.schema.json: every command-line option Megatron-LM ever parsed.

The facts come from tools/facts/megatron-args.tsv (`--tsv`): one row per option string, with its
dest, action, type, arity, default, choices, first_tag, last_tag, absent_in and older_types, taken
from Megatron-LM's own argparse parser (megatron/arguments.py, later megatron/training/arguments.py)
at every release tag from v1.0 to core_v0.19.0 and at HEAD d98e8a64. Its header says where it came
from (the commits read) and what each column holds. Columns describe an option as defined at the last
tag that parses it.

The schema is keyed by argparse `dest`, as Megatron's namespace is: `--disable-bias-linear` sets
`add_bias_linear`, `--norm-epsilon` and the older `--layernorm-epsilon` both set
`layernorm_epsilon`. Per dest: the JSON type of its value (a flag is a boolean, `nargs` a list),
its default at the newest release that has it, `enum` (argparse choices), `x-group` (why an
option no mapping rule reads is not carried: mappings/megatron.yaml `extension_reasons`), and
`x-options`: every option string that sets it, with its action, arity (0, 1, 3, `0+` for
nargs='*', `1+` for nargs='+'), argparse type, the first and last release tag that parse it (`absent`: tags between them
that do not; `older_types`: tag -> the argparse type it had there). `x-tags` lists
the release tags in order; `x-versions` the version labels of mappings/megatron.yaml as tag
ranges, newest first (a label covers releases that read the mapped options alike).

The output is deterministic (sorted keys, fixed indentation) so a test regenerates it from the
committed TSV and compares byte for byte (--check).

Usage:
  python tools/gen_megatron_schema.py [--tsv FILE] [--output FILE] [--check]
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path
from typing import Any, Final

from schema_output import render, write_or_check  # tools/ is on sys.path when run as a script

REPO_ROOT: Final = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT: Final = REPO_ROOT / "schemas" / "megatron.schema.json"
DEFAULT_TSV: Final = REPO_ROOT / "tools" / "facts" / "megatron-args.tsv"
UNRECORDED: Final = "-"  # the TSV's default/choices of an option that does not describe its dest

TAGS: Final = (
    "v1.0",
    "v2.0",
    "v2.5",
    "v2.6",
    "23.04",
    "23.06",
    *(f"core_v0.{n}.0" for n in range(4, 20)),
    "HEAD",
)

# Version labels of mappings/megatron.yaml, newest first: releases that read the mapped options alike.
# current: YaRN options for GPT models (--yarn-*, core_v0.19.0); core_v0.18: --rampup-batch-size ignored,
# NullTokenizer vocabulary = --vocab-size (core_v0.18.0);
# core_v0.16: --eval-interval defaults to None, no evaluation (core_v0.16.0); core_v0.14:
# --padded-vocab-size (core_v0.14.0); core_v0.8: --rotary-base, Megatron-Core models by default;
# core_v0.4: --position-embedding-type, --normalization, --group-query-attention, --norm-epsilon,
# --lr-warmup-init, context parallelism; 23.04: --swiglu overrides --ffn-hidden-size, RoPE is added
# to learned positions; v2: sample-based scheduler, micro/global batch; v1: --batch-size, --warmup
# fraction, AnnealingLR.
VERSIONS: Final = {
    "current": ("core_v0.19.0", "HEAD"),
    "core_v0.18": ("core_v0.18.0", "core_v0.18.0"),
    "core_v0.16": ("core_v0.16.0", "core_v0.17.0"),
    "core_v0.14": ("core_v0.14.0", "core_v0.15.0"),
    "core_v0.8": ("core_v0.8.0", "core_v0.13.0"),
    "core_v0.4": ("core_v0.4.0", "core_v0.7.0"),
    "23.04": ("23.04", "23.06"),
    "v2": ("v2.0", "v2.6"),
    "v1": ("v1.0", "v1.0"),
}

# Why an option no rule maps is not carried: the first pattern matching a dest names its group
# (mappings/megatron.yaml gives each group its reason). Checked in this order.
GROUPS: Final = (
    ("launcher", r"^local_rank$"),
    ("batch", r"^(rampup_batch_size|step_batch_size_schedule|decrease_batch_size_if_needed)$"),
    (
        "inference",
        r"^(inference_|flash_decode|enable_chunked_prefill|disable_chunked_prefill|mlp_chunks_for_prefill|"
        r"nccl_all_reduce_for_prefill|num_speculative_tokens|use_legacy_static_engine|decode_only_cuda_graphs|"
        r"max_tokens_to_oom|cache_mla_latents|inference_)",
    ),
    ("rl", r"^(rl_|grpo_|langrl_|perform_rl_step|refit_method)"),
    (
        "other_models",
        r"^(bert_|ict_|retro_|biencoder_|dino_|img_|vision_|swin_|patch_dim|num_classes|num_channels|"
        r"classes_fraction|data_per_class_fraction|titles_data_path|evidence_data_path|block_data_path|"
        r"embedding_path|retriever_|query_in_block_prob|use_one_sent_docs|indexer_|short_seq_prob|mask_prob|"
        r"mask_type|mask_factor|output_bert_embeddings|faiss_use_gpu|report_topk_accuracies|"
        r"vision_pretraining|iter_per_epoch|sample_rate|encoder_|decoder_num_layers|decoder_seq_length|"
        r"t5_|vocab_extra_ids|pipeline_model_parallel_split_rank)",
    ),
    (
        "moe",
        r"^(moe_|num_experts$|expert_|overlap_moe_|ep_overlap_|delay_wgrad_compute|"
        r"overlap_dispatch_backward_with_experts_wgrad)",
    ),
    (
        "hybrid",
        r"^(mamba_|hybrid_|is_hybrid_model|linear_|gdp_|mhc_|enable_mhc|dsa_|mtp_|experimental_attention_variant|"
        r"softmax_type|attention_output_gate|qk_l2_norm|no_rope_freq|glu_linear_offset|"
        r"use_fused_weighted_squared_relu|activation_func_clamp_value|heterogeneous_layers_|window_|"
        r"q_lora_rank|kv_lora_rank|qk_head_dim|qk_pos_emb_head_dim|v_head_dim|multi_latent_attention|"
        r"mla_|mrope_section|yarn_|mscale|rotary_scaling_factor|rope_type|rope_scaling_factor|use_rope_scaling|"
        r"rotary_interleaved|rotary_seq_len_interpolation_factor|relative_attention_|"
        r"apply_residual_connection_post_layernorm|embedding_init_method_std|qk_clip|mup_|use_mup|"
        r"apply_query_key_layer_scaling|fp32_residual_connection)",
    ),
    (
        "precision",
        r"^(fp8|fp4|te_precision|first_last_layers_bf16|num_layers_at_|keep_fp8|reuse_grad_buf_for_mxfp8|"
        r"accumulate_allreduce_grads_in_fp32|fp32_allreduce|grad_reduce_in_bf16|fp16_lm_cross_entropy|"
        r"embedding_weights_in_fp32|disable_bf16_reduced_precision_matmul|main_grads_dtype|"
        r"main_params_dtype|exp_avg_dtype|exp_avg_sq_dtype|use_precision_aware_optimizer|logit_dtype|"
        r"kitchen_|use_kitchen|min_scale$)",
    ),
    (
        "optimizer",
        r"^(muon_|lion_|sgd_|optimizer_|use_torch_optimizer_for_cpu_offload|overlap_cpu_optimizer|"
        r"pin_cpu_|decoupled_|head_lr_mult|apply_wd_to_qk_layernorm|no_weight_decay_cond_type|"
        r"start_weight_decay|end_weight_decay|weight_decay_incr_style|lr_wsd_|"
        r"override_opt_param_scheduler|use_checkpoint_opt_param_scheduler|override_lr_scheduler|"
        r"use_checkpoint_lr_scheduler)",
    ),
    (
        "recompute",
        r"^(recompute_|checkpoint_num_layers|activations_checkpoint_|distribute_saved_activations|"
        r"distribute_checkpointed_activations|cpu_offloading|fine_grained_activation_offloading|"
        r"fine_grained_offloading_|activation_offload_|offload_modules|min_offloaded_tensor_size|"
        r"delay_offload_until_cuda_graph|delta_offload_bytes)",
    ),
    (
        "checkpoint",
        r"^(ckpt_|dist_ckpt_|distrib_optim_|async_|non_persistent_|auto_detect_ckpt_format|finetune|"
        r"pretrained_checkpoint|use_checkpoint_args|use_mp_args_from_checkpoint_args|"
        r"use_tokenizer_model_from_checkpoint_args|no_load_|no_save_|load_main_params_from_ckpt|"
        r"load_model_opt_format|exit_on_missing_checkpoint|save_retain_interval|"
        r"save_tokenizer_assets|use_dist_ckpt|use_persistent_ckpt_worker|override_ckpt_iteration|"
        r"strict_fsdp_dtensor_load|stream_ckpt_dequant|save_.*_interval|dump_param_to_param_group_map|"
        r"verify_integrity|iterations_to_skip|ckpt_step|logits_)",
    ),
    (
        "run_control",
        r"^(exit_|skip_train|train_sync_interval|adlr_autoresume|inprocess_|fault_injector_|straggler|"
        r"disable_straggler|enable_ft_package|calc_ft_timeouts|ft_num_warmup_iters|rerun_mode|"
        r"error_injection_|result_rejected_tracker_filename|check_for_|check_weight_hash|"
        r"flight_recorder_|gpu_sniff_test_interval|run_workload_inspector_server|barrier_with_L1_time|"
        r"enable_experimental|test_mode|deterministic_mode|batch_invariant_|full_validation|"
        r"multiple_validation_sets|validation_set_names|eval_micro_batch_size|eval_global_batch_size|"
        r"start_eval_at_iter|phase_transition_iterations|manual_gc|empty_unused_memory_level|"
        r"data_parallel_random_init|perform_initialization|init_model_with_meta_device|"
        r"use_cpu_initialization|lazy_mpu_init|fake_process_group|freeze_all_layers|"
        r"disable_jit_fuser|max_seqlen_per_dp_cp_rank|sft$|calculate_per_token_loss)",
    ),
    (
        "logging",
        r"^(log_|tensorboard_|wandb_|timing_log|profile|pytorch_profiler|use_pytorch_profiler|record_|memory_snapshot|one_logger|"
        r"enable_one_logger|app_tag_|otel_|config_logger_dir|logging_level|nvtx|indexer_log|"
        r"moe_per_layer_logging|save_activations)",
    ),
    (
        "data",
        r"^(data_|.*_data_path$|split$|mock_data|num_workers|dataloader_|reset_position_ids|reset_attention_mask|"
        r"eod_mask_loss|mmap_|create_attention_mask|fim_|sft_|object_storage_cache_path|s3_cache_path|"
        r"per_split_data_args_path|per_dataset_sequences_path|mid_level_dataset_surplus|"
        r"num_dataset_builder_threads|renormalize_blend_weights|offset_sampling_seed_by_dp_rank|"
        r"allow_ambiguous_pad_tokens|metadata_path|use_gigatoken|replication)",
    ),
    (
        "tokenizer",
        r"^(tokenizer_|vocab_file|merge_file|tiktoken_|special_tokens|null_tokenizer_|legacy_tokenizer|"
        r"chat_template|trust_remote_code|make_vocab_size_divisible_by|pad_vocab_size)",
    ),
    (
        "implementation",
        r"^(transformer_impl|spec$|deprecated_use_mcore_models|use_legacy_models|yaml_cfg|"
        r"attention_backend|use_flash_attn|flash_attention_version|openai_gelu|onnx_safe|"
        r"use_te_activation_func|use_transformer_engine_op_fuser|te_rng_tracker|"
        r"inference_rng_tracker|use_grouped_gemm_for_|use_mamba_mem_eff_path|"
        r"use_kitchen_attention|fused_residual_rmsnorm)",
    ),
    (
        "performance",
        r"(fusion|fused|_fusion_impl)|^(tp_comm_|overlap_|ddp_|cuda_graph|enable_cuda_graph|"
        r"external_cuda_graph|optimizer_cuda_graph|nccl_|use_sharp|sharp_|gtp_|fsdp_|megatron_fsdp_|"
        r"use_custom_fsdp|outer_dp_sharding_strategy|enable_full_sharding_in_hsdp|"
        r"num_distributed_optimizer_instances|torch_fsdp2_reshard_after_forward|"
        r"sequence_parallel|num_layers_per_virtual_pipeline_stage|num_virtual_stages_per_pipeline_rank|"
        r"microbatch_group_size_per_vp_stage|decoder_first_pipeline_num_layers|"
        r"decoder_last_pipeline_num_layers|account_for_|pipeline_model_parallel_layout|"
        r"pipeline_model_parallel_comm_backend|distributed_|DDP_impl|use_contiguous_buffers|"
        r"scatter_gather_tensors_in_pipeline|async_tensor_model_parallel_allreduce|align_|"
        r"delay_grad_reduce|delay_param_gather|defer_embedding_wgrad_compute|wgrad_deferral_limit|"
        r"use_ring_exchange_p2p|use_gloo_process_groups|use_tp_pp_dp_mapping|create_all_gather_group|"
        r"high_priority_|hierarchical_context_parallel_sizes|hybrid_context_parallel|cp_comm_type|"
        r"no_persist_layer_norm|persist_layer_norm|clone_scatter_output_in_embedding|"
        r"tensor_parallel_num_weight_shards|expert_tensor_parallel_num_weight_shards|"
        r"suggested_communication_unit_size|symmetric_ar_type|disable_symmetric_registration|"
        r"use_layer_wise_param_layout|enable_msc|disable_msc|mmap_warmup|data_impl|mlp_chunks_for_training|"
        r"standalone_embedding_stage|"
        r"use_distributed_optimizer|use_megatron_fsdp|use_torch_fsdp2|data_parallel_sharding_strategy)",
    ),
)


def _default(text: str, argtype: str, arity: str) -> Any:
    """The TSV writes defaults as JSON where it can (null, false, 1.0, []); a string otherwise."""
    if text == "":
        return None
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    if argtype in ("str", "") and arity == "1" and value is not None and not isinstance(value, str):
        return text  # a string option whose default reads like a number
    if argtype == "enum-name" and isinstance(value, str) and "." in value:
        return value.rsplit(".", 1)[1]  # AttnBackend.auto -> auto, as the choice is spelled
    return value


def _json_type(argtype: str, arity: str, action: str) -> str | list[str]:
    if arity == "0" or argtype == "bool":
        return "boolean"
    item = {"int": "integer", "float": "number"}.get(argtype, "string")
    if argtype in ("moe_freq_type", "la_freq_type", "no_rope_freq_type"):
        item = ["integer", "string"]  # type: ignore[assignment]
    if arity in ("0+", "1+", "3"):
        return "array"
    return item


def _group(dest: str) -> str:
    for name, pattern in GROUPS:
        if re.search(pattern, dest):
            return name
    return "other"


def _choices(text: str, argtype: str) -> list[Any] | None:
    """argparse checks a choice after the type converts the word: `type=int, choices=range(0, 3)`
    takes 2, not '2', so the choices are numbers where the type makes numbers."""
    if not text:
        return None
    convert = {"int": int, "float": float}.get(argtype, str)
    return [convert(c) for c in text.split(",")]


def _older_types(row: dict[str, str]) -> dict[str, str]:
    """The older_types column (`v1.0:float`): types an option had before the tag the row describes.
    v1.0's --warmup was a float fraction of the decay span (@v1.0:megatron/arguments.py, training.py
    get_learning_rate_scheduler); v2.0 made it an int that validate_args refuses."""
    return dict(pair.split(":", 1) for pair in row["older_types"].split())


def build(rows: list[dict[str, str]], source: str) -> dict[str, Any]:
    by_dest: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_dest.setdefault(row["dest"], []).append(row)
    properties: dict[str, Any] = {}
    for dest, options in sorted(by_dest.items()):
        # the option present at the newest tag describes the dest (its type and default)
        newest = max(options, key=lambda r: (TAGS.index(r["last_tag"]), r["action"] != "store_false"))
        kinds: list[Any] = []
        for row in options:
            older = _older_types(row).values()
            for argtype in (row["type"], *older):
                kind = _json_type(argtype, row["arity"], row["action"])
                for k in kind if isinstance(kind, list) else [kind]:
                    if k not in kinds:
                        kinds.append(k)
        if UNRECORDED in (newest["default"], newest["choices"]):
            raise SystemExit(f"{newest['option']}: describes {dest} but its default or choices are not recorded")
        default = _default(newest["default"], newest["type"], newest["arity"])
        if default is None and "null" not in kinds:
            kinds.append("null")
        node: dict[str, Any] = {
            "type": kinds[0] if len(kinds) == 1 else kinds,
            "default": default,
            "x-group": _group(dest),
        }
        choices = _choices(newest["choices"], newest["type"])
        if "array" in kinds:  # nargs: the choices are the items'
            item = {"int": "integer", "float": "number"}.get(newest["type"], "string")
            node["items"] = {"type": item, **({"enum": choices} if choices else {})}
        elif choices:
            node["enum"] = choices
        node["x-options"] = {
            row["option"]: {
                "action": row["action"],
                "arity": row["arity"],
                "argtype": row["type"] or "str",
                "first": row["first_tag"],
                "last": row["last_tag"],
                **({"absent": row["absent_in"].split()} if row["absent_in"] else {}),
                **({"older_types": _older_types(row)} if row["older_types"] else {}),
            }
            for row in sorted(options, key=lambda r: r["option"])
        }
        properties[dest] = node
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": (
            "Keyed by argparse dest. Per dest: type, default (at the newest release that has it), enum (choices), "
            "x-group (mappings/megatron.yaml extension_reasons), x-options (option string -> action, arity, argparse "
            "type, the first and last release tag that parse it and the tags between them that do not; `older_types`: tag -> the argparse type it had there). x-tags: release tags in order; x-versions: [version label, first tag, "
            "last tag], newest first."
        ),
        "title": "Megatron-LM command-line arguments",
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
        "x-generated-by": "tools/gen_megatron_schema.py",
        "x-source": source,
        "x-tags": list(TAGS),
        "x-versions": [[label, *span] for label, span in VERSIONS.items()],  # newest first
    }


def read_tsv(path: Path) -> tuple[list[dict[str, str]], str]:
    """The rows, and where they came from (the header's `# source:` line)."""
    text = path.read_text(encoding="utf-8").splitlines()
    sources = [line.split(":", 1)[1].strip() for line in text if line.startswith("# source:")]
    if len(sources) != 1:
        raise SystemExit(f"{path}: the header names no source (a '# source: ...' line)")
    lines = [line for line in text if line and not line.startswith("#")]
    rows = list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    for row in rows:
        for tag in (row["first_tag"], row["last_tag"], *row["absent_in"].split()):
            if tag not in TAGS:
                raise SystemExit(f"{path}: {row['option']}: unknown release tag {tag!r}")
    return rows, sources[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tsv", type=Path, default=DEFAULT_TSV, help="the argparse facts (see the module docstring)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed schema differs")
    args = parser.parse_args(argv)
    schema = build(*read_tsv(args.tsv))
    return write_or_check(render(schema), args.output, args.check, "gen_megatron_schema.py")


if __name__ == "__main__":
    sys.exit(main())
