"""What the corpus sweep (tests/test_loss_proof.py) accepts, each with why: issue 15's "no `unknown` entry
anywhere in the corpus except the VeOmni `accelerator.offload` typo and keys that no release ever had;
0 internal errors and 0 refusals of files that their own release runs".

Every key below is absent from the framework's key history (schemas/history/<format>.json: every key
any release read, from the framework's own source), and the reason says why no release had it."""

from __future__ import annotations

from conftest import UNRUNNABLE

# source format -> unknown key (as written) -> why no release of the framework ever read it
NO_RELEASE_HAD: dict[str, dict[str, str]] = {
    "veomni": {
        "train.accelerator.offload.enable_activation": "the typo in VeOmni's own #538 configs: the field is accelerator.offload_config (PR #538, 085f3c23)",
        "model.teacher_model_path": "movqgan's example config only (since VeOmni's first commit fb1b0b2d): no argument dataclass has it",
        "model.teacher_model_kwargs.return_hidden_states": "the same movqgan example: no dataclass field",
        "model.model_kwargs.use_semantic_decoder": "the same movqgan example: a MoVQGAN config.json attribute, not an argument (model.model_config is)",
    },
    "neox": {
        "attention_type": "llemma's 34B config: a key of the llemma fork, never a NeoXArgs field on main",
        "decay_lr_to": "llemma's configs: its fork's schedule (removed before merging: gpt-neox a55d69c4)",
        "warmup_iters": "llemma's configs: its fork's schedule (NeoX main has `warmup`, a fraction)",
    },
    "deepspeed": {
        **{
            f"autotuning_config.{k}": "NeoX's autotuning example spells the section autotuning_config; DeepSpeed and "
            "NeoX read `autotuning`"
            for k in (
                "enabled",
                "arg_mappings.train_micro_batch_size_per_gpu",
                "arg_mappings.gradient_accumulation_steps ",
            )
        },
        **{
            f"bf16.{k}": "fp16 loss-scaling keys copied under bf16 in DeepSpeedExamples: DeepSpeed's bf16 section "
            "never had loss scaling"
            for k in (
                "fp16_master_weights_and_grads",
                "hysteresis",
                "initial_scale_power",
                "loss_scale",
                "loss_scale_window",
                "min_loss_scale",
            )
        },
        "cuda_visible_devices": "DeepSpeedExamples' imagenet config: an environment setting, never a DeepSpeed key",
        "zero_optimization.stage3_param_persitence_threshold": "a typo (persitence) of stage3_param_persistence_threshold",
    },
}

# corpus file -> why its own framework cannot run it (neoconv refuses it for every target)
NOT_RUNNABLE: dict[str, str] = {
    **UNRUNNABLE,
    "deepspeed/DeepSpeedExamples__83757d9c__training__data_efficiency__gpt_finetuning__finetune__ds_config_gpt2_TEMPLATE.json": "unquoted placeholder",
    "deepspeed/DeepSpeedExamples__ba7c0e55__megatron__Megatron-LM-v1.1.5-ZeRO3__curriculum_learning__ds_zero_stage_2_config_curriculum_fixed_linear.json": "unquoted placeholder",
}
# a refusal whose message says this is of a file that is no training config of any release
NOT_A_CONFIG = ("a VeOmni data manifest",)
