"""Megatron-LM formulas: optimizer, batch, parallelism, precision and run settings
(megatron/training/arguments.py validate_args, megatron/core/optimizer at d98e8a64)."""

from __future__ import annotations

from typing import Any

from ...knowledge.formula import Approx, Extension, Unexpressible, formula
from .options import since


@formula("megatron.optimizer_type")
class OptimizerType:
    """--optimizer adam is AdamW: OptimizerConfig.decoupled_weight_decay is True and has no flag (Apex/TE
    FusedAdam with adam_w_mode, torch AdamW). muon trains scalars and embeddings with Adam."""

    @staticmethod
    def read(optimizer: str | None) -> Any:
        name = optimizer or "adam"
        if name == "adam":
            return "adamw"
        if name in ("sgd", "lion"):
            return name
        if name in ("muon", "dist_muon"):
            return Approx(
                "muon", "Megatron's muon trains 1-D parameters and embeddings with --muon-scalar-optimizer (adam)"
            )
        return Extension(f"--optimizer {name} has no canonical name")

    @staticmethod
    def write(value: str, weight_decay: float | None) -> Any:
        if value in ("adamw", "adam"):
            if value == "adam" and weight_decay:
                return Approx(
                    {"optimizer": "adam"},
                    f"Megatron's adam always decouples weight decay (AdamW): "
                    f"coupled L2 weight decay {weight_decay:g} is not expressible",
                )
            return {"optimizer": "adam"}
        if value in ("sgd", "lion", "muon"):
            return {"optimizer": value}
        return Approx(
            {"optimizer": "adam"}, f"Megatron has no {value} optimizer (adam, sgd, lion, muon): written as adam"
        )


@formula("megatron.betas")
class Betas:
    @staticmethod
    def read(adam_beta1: float | None, adam_beta2: float | None) -> list[float]:
        return [0.9 if adam_beta1 is None else adam_beta1, 0.999 if adam_beta2 is None else adam_beta2]

    @staticmethod
    def write(value: list[float]) -> dict[str, Any]:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise Unexpressible(f"betas {value!r}: Megatron takes two (--adam-beta1, --adam-beta2)")
        return {"adam_beta1": value[0], "adam_beta2": value[1]}


@formula("megatron.weight_decay")
class WeightDecay:
    """--weight-decay, or a ramp from --start-weight-decay to --end-weight-decay (linear/cosine over the
    run; Megatron asserts end >= start) with --weight-decay-incr-style other than constant."""

    @staticmethod
    def read(
        weight_decay: float | None,
        start_weight_decay: float | None,
        end_weight_decay: float | None,
        weight_decay_incr_style: str | None,
    ) -> Any:
        style = weight_decay_incr_style or "constant"
        if style == "constant":
            if start_weight_decay is not None or end_weight_decay is not None:
                raise ValueError(
                    "--start/--end-weight-decay need --weight-decay-incr-style linear or cosine (Megatron asserts)"
                )
            return 0.01 if weight_decay is None else weight_decay
        if start_weight_decay is None or end_weight_decay is None:
            raise ValueError(f"--weight-decay-incr-style {style} needs --start-weight-decay and --end-weight-decay")
        return Approx(
            end_weight_decay,
            f"weight decay ramps ({style}) from {start_weight_decay:g} to "
            f"{end_weight_decay:g} over the run; read as the end value",
        )

    @staticmethod
    def write(value: float) -> dict[str, Any]:
        return {"weight_decay": value}


@formula("megatron.train_steps")
class TrainSteps:
    """--train-iters, or --train-samples // global batch (update_train_iters)."""

    @staticmethod
    def read(train_iters: int | None, train_samples: int | None, global_: int | None) -> Any:
        if train_iters is not None and train_samples is not None:
            raise ValueError("--train-iters and --train-samples: Megatron takes one")
        if train_iters is not None:
            return train_iters
        if train_samples is None or not global_:
            return None
        steps = train_samples // global_
        if steps * global_ != train_samples:
            return Approx(
                steps, f"--train-samples {train_samples} is not a whole number of global batches of {global_}"
            )
        return steps

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"train_iters": value}


@formula("megatron.eval_steps")
class EvalSteps:
    """--eval-iters: Megatron evaluates only when it is above 0 (training.py: do_valid = eval_iters > 0),
    so a negative count (a fork's -1) means no evaluation batches, as 0 does."""

    @staticmethod
    def read(eval_iters: int | None) -> int:
        if eval_iters is None:
            return 100
        return max(eval_iters, 0)

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"eval_iters": value}


@formula("megatron.activation_checkpointing")
class ActivationCheckpointing:
    """--recompute-granularity full|selective (or --recompute-activations = selective; v1-v2.6
    --checkpoint-activations and v2.6 --activations-checkpoint-method uniform|block = full). Writing: full
    recompute of every layer."""

    @staticmethod
    def read(
        recompute_granularity: str | None,
        recompute_activations: bool | None,
        checkpoint_activations: bool | None,
        activations_checkpoint_method: str | None,
        recompute_method: str | None,
        recompute_num_layers: int | None,
    ) -> Any:
        if checkpoint_activations or activations_checkpoint_method:
            return True
        granularity = recompute_granularity or ("selective" if recompute_activations else None)
        if granularity == "selective":
            return Approx(True, "selective recompute: only the attention core is recomputed")
        return granularity == "full"

    @staticmethod
    def write(value: bool) -> dict[str, Any]:
        if not value:
            return {}
        return {"recompute_granularity": "full", "recompute_method": "uniform", "recompute_num_layers": 1}


@formula("megatron.save")
class Save:
    """validate_args refuses --save without --save-interval."""

    @staticmethod
    def read(save: str | None) -> str | None:
        return save

    @staticmethod
    def write(value: str, interval: int | None) -> Any:
        if interval is None:
            return Approx({}, "Megatron refuses --save without --save-interval: give --set checkpoint.interval=N")
        return {"save": value}


@formula("megatron.wandb")
class Wandb:
    """Megatron logs to W&B when --wandb-project is given (global_vars.py), and only then."""

    @staticmethod
    def read(wandb_project: str | None) -> dict[str, Any]:
        return {"use_wandb": bool(wandb_project), "wandb_project": wandb_project}

    @staticmethod
    def write(use_wandb: bool | None, wandb_project: str | None) -> Any:
        if not use_wandb and wandb_project:  # unset means off (GPT-NeoX's None, VeOmni's false)
            return Approx(
                {},
                f"W&B logging is not on in the source: --wandb-project {wandb_project} is not written "
                "(Megatron logs whenever it is given)",
            )
        if use_wandb and not wandb_project:
            return Approx(
                {},
                "Megatron logs to W&B only with --wandb-project: give --set logging.wandb_project=NAME",
                ("logging.use_wandb",),
            )
        return {"wandb_project": wandb_project}


@formula("megatron.micro_batch")
class MicroBatch:
    """--micro-batch-size (v2.0+); v1.0's --batch-size was the per-GPU batch (no accumulation)."""

    @staticmethod
    def read(micro_batch_size: int | None, batch_size: int | None) -> int | None:
        if micro_batch_size is not None and batch_size is not None:
            raise ValueError("--micro-batch-size and v1.0's --batch-size: give one")
        return micro_batch_size if micro_batch_size is not None else batch_size

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"micro_batch_size": value}


@formula("megatron.global_batch")
class GlobalBatch:
    """--global-batch-size; absent, micro x data-parallel size (one micro-batch per step). Megatron's
    ConstantNumMicroBatchesCalculator (after validate_args derives the data-parallel size) asserts it is a
    multiple of micro x data-parallel size, or with --decrease-batch-size-if-needed (core_v0.9.0+) rounds
    it down to one and trains that batch."""

    @staticmethod
    def read(
        global_batch_size: int | None,
        micro: int | None,
        data_parallel_size: int | None,
        decrease_batch_size_if_needed: bool | None = None,
    ) -> int | None:
        if global_batch_size is None:
            return micro * data_parallel_size if micro and data_parallel_size else None
        step = micro * data_parallel_size if micro and data_parallel_size else None
        if step and global_batch_size % step:
            running = global_batch_size // step * step
            if decrease_batch_size_if_needed and running:
                return running
            raise ValueError(
                f"--global-batch-size {global_batch_size} is not a multiple of micro {micro} x "
                f"data-parallel size {data_parallel_size} (Megatron asserts it)"
            )
        if micro and not step and not decrease_batch_size_if_needed and global_batch_size % micro:
            raise ValueError(
                f"--global-batch-size {global_batch_size} is not a multiple of micro {micro}: Megatron "
                "asserts it is one of micro x data-parallel size, which fails at every world size"
            )
        return global_batch_size

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"global_batch_size": value}


@formula("megatron.grad_accum")
class GradAccum:
    """Megatron derives it: global / (micro x data-parallel size); without --global-batch-size, 1."""

    @staticmethod
    def read(global_: int | None, micro: int | None, data_parallel_size: int | None) -> int | None:
        if global_ is None:
            return 1 if micro else None
        if micro and data_parallel_size:
            return global_ // (micro * data_parallel_size)
        return None

    @staticmethod
    def write(value: int, global_: int | None, micro: int | None, data_parallel_size: int | None) -> Any:
        if global_ is None and value != 1:
            return Approx(
                {},
                f"Megatron takes accumulation as --global-batch-size = micro x {value} x data-parallel "
                "size; without the world size the global batch is unknown: give --world-size N",
            )
        if global_ is not None and data_parallel_size is None and micro:
            ranks = global_ / (micro * value)
            return Approx(
                {},
                f"Megatron derives accumulation at run time: {global_} / ({micro} x data-parallel size) "
                f"is {value} only with {ranks:g} data-parallel ranks (give --world-size to check)",
            )
        return {}


@formula("megatron.data_parallel")
class DataParallel:
    """WORLD_SIZE / (tensor x pipeline x context parallel sizes): context-parallel ranks share a sequence."""

    @staticmethod
    def read(
        world_size: int | None, tensor_size: int | None, pipeline_size: int | None, sequence_size: int | None
    ) -> Any:
        if world_size is None:
            return None
        model = max(1, tensor_size or 1) * max(1, pipeline_size or 1) * max(1, sequence_size or 1)
        if world_size % model:
            raise ValueError(
                f"world size {world_size} is not divisible by tensor x pipeline x context parallel "
                f"size {model} (Megatron asserts it)"
            )
        return world_size // model

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {}


@formula("megatron.tensor_size")
class TensorSize:
    """--tensor-model-parallel-size (v2.0+); v1.0's --model-parallel-size."""

    @staticmethod
    def read(tensor_model_parallel_size: int | None, model_parallel_size: int | None) -> int | None:
        if model_parallel_size is not None and tensor_model_parallel_size not in (None, 1):
            raise ValueError("--tensor-model-parallel-size and v1.0's --model-parallel-size: give one")
        if model_parallel_size is not None:
            return model_parallel_size
        return 1 if tensor_model_parallel_size is None else tensor_model_parallel_size

    @staticmethod
    def write(value: int) -> dict[str, Any]:
        return {"tensor_model_parallel_size": value}


@formula("megatron.zero_stage")
class ZeroStage:
    """--use-distributed-optimizer shards optimizer state (ZeRO-1); Megatron-FSDP's
    --data-parallel-sharding-strategy no_shard/optim/optim_grads/optim_grads_params is 0/1/2/3 (it needs
    --ckpt-format fsdp_dtensor); --use-torch-fsdp2 shards everything (3)."""

    STRATEGIES = {"no_shard": 0, "optim": 1, "optim_grads": 2, "optim_grads_params": 3}

    @staticmethod
    def read(
        use_distributed_optimizer: bool | None,
        use_megatron_fsdp: bool | None,
        use_custom_fsdp: bool | None,
        data_parallel_sharding_strategy: str | None,
        use_torch_fsdp2: bool | None,
        ckpt_format: str | None,
    ) -> int:
        if use_torch_fsdp2:
            return 3
        if use_megatron_fsdp or use_custom_fsdp:
            return ZeroStage.STRATEGIES.get(data_parallel_sharding_strategy or "optim_grads_params", 3)
        return 1 if use_distributed_optimizer else 0

    @staticmethod
    def write(value: int, type: str | None, version: str) -> Any:
        if type == "muon" and value:
            return ZeroStage.muon(value, version)
        if value == 1:
            return {"use_distributed_optimizer": True}
        if value in (2, 3):
            strategy = "optim_grads" if value == 2 else "optim_grads_params"
            return {
                "use_megatron_fsdp": True,
                "data_parallel_sharding_strategy": strategy,
                "ckpt_format": "fsdp_dtensor",
            }
        return {}

    @staticmethod
    def muon(value: int, version: str) -> Any:
        """Muon (core_v0.16.0+): validate_args refuses Torch-FSDP2 and Megatron-FSDP with it at every release;
        --use-distributed-optimizer shards its states layer-wise from core_v0.18.0, and is refused before."""
        if since(version, "core_v0.18"):
            if value == 1:
                return {"use_distributed_optimizer": True}
            lost = "gradients" if value == 2 else "parameters and gradients"
            return Approx(
                {"use_distributed_optimizer": True},
                f"Megatron refuses its FSDP with --optimizer muon: ZeRO-{value} is written as "
                f"--use-distributed-optimizer (muon's states sharded layer-wise, ZeRO-1); {lost} are not sharded",
            )
        return Approx(
            {},
            f"Megatron-LM {version} refuses any sharding with --optimizer muon (distributed optimizer, "
            f"FSDP): ZeRO-{value} is written as plain data parallelism",
        )


@formula("megatron.precision")
class Precision:
    """--fp16 or --bf16 (Megatron refuses both); neither = fp32."""

    @staticmethod
    def read(fp16: bool | None, bf16: bool | None) -> str:
        if fp16 and bf16:
            raise ValueError("--fp16 and --bf16: Megatron refuses both")
        return "fp16" if fp16 else "bf16" if bf16 else "fp32"

    @staticmethod
    def write(value: str) -> Any:
        if value == "fp16":
            return {"fp16": True}
        if value == "bf16":
            return {"bf16": True}
        if value == "fp32":
            return {}
        return Approx({"bf16": True}, f"Megatron has no {value}: written as --bf16")


@formula("megatron.loss_scale")
class LossScale:
    """--loss-scale S: a constant scale (fp16 or bf16); absent: fp16 scales dynamically, bf16 not at all."""

    @staticmethod
    def read(loss_scale: float | None, dtype: str | None) -> Any:
        if loss_scale is not None:
            return float(loss_scale)
        return "dynamic" if dtype == "fp16" else None

    @staticmethod
    def write(value: Any, dtype: str | None) -> Any:
        if value == "dynamic":
            if dtype != "fp16":
                return Approx(
                    {}, f"Megatron scales the loss dynamically only in fp16; in {dtype or 'fp32'} it does not scale it"
                )
            return {}
        return {"loss_scale": float(value)}


@formula("megatron.batch_ramp")
class BatchRamp:
    """--rampup-batch-size START INCR SAMPLES (v2.0-core_v0.17.0; ignored with a warning from core_v0.18.0)
    and --step-batch-size-schedule (core_v0.18.0+): batch schedules the canonical warmup ratio does not
    describe."""

    @staticmethod
    def read(rampup_batch_size: Any, step_batch_size_schedule: str | None, version: str) -> Any:
        if step_batch_size_schedule:
            return Extension(
                f"--step-batch-size-schedule {step_batch_size_schedule!r}: a step-wise batch schedule "
                "has no canonical form"
            )
        if rampup_batch_size is None:
            return None
        if since(version, "core_v0.18"):
            return Extension("--rampup-batch-size is ignored from core_v0.18.0 on (Megatron only warns)")
        return Extension(
            f"--rampup-batch-size {' '.join(map(str, rampup_batch_size))}: the global batch grows by "
            "INCR every few samples (start, increment, samples); no canonical form"
        )

    @staticmethod
    def write(value: float) -> Any:
        if value:
            return Approx({}, "Megatron's batch ramp (--rampup-batch-size START INCR SAMPLES) is not written")
        return {}
