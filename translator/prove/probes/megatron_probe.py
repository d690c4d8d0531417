"""Megatron-LM's own code on Megatron-LM arguments (run by an interpreter with torch, numpy,
packaging, triton and einops; the Megatron-LM checkout is the job's `source`; core_v0.17.0 and
later need Python 3.12).

* The words: an argument file (`--flag value` per line, comments, backslash continuations) split
  as a shell splits it (shlex), or Megatron's CI YAML (`MODEL_ARGS:` of `--flag: value`, `true` a
  bare flag). A bash script is not run: its words are the ones neoconv's static reading of it gives
  (the job's `argv`, a stand-in listed in the result); a script whose words need the environment or
  its arguments cannot be run.
* Accepts: `megatron/training/arguments.py` `parse_args()` on `pretrain_gpt.py WORDS` and
  `validate_args(args, {"tokenizer_type": "GPT2BPETokenizer"})` (pretrain_gpt.py's defaults), with
  WORLD_SIZE and RANK as torchrun sets them.
* Run: data-parallel size, global/micro batch and microbatches per step (Megatron's
  num_microbatches calculator), train_iters (from train_samples as `update_train_iters` derives
  it), seq_length, precision, parallel sizes.
* Learning rate: `training.get_optimizer_param_scheduler` (Megatron's `OptimizerParamScheduler`,
  which counts samples), stepped as `train_step` steps it: by microbatches × micro batch ×
  data-parallel size after each iteration, the microbatches updated from the consumed samples first.
* Parameters: `gpt_builder` (what pretrain_gpt.py builds: `GPTModel`) on torch's meta device, at
  tensor/pipeline/context/expert parallel size 1 (the whole model on one rank), with the padded
  vocabulary Megatron computes.

Stand-ins (listed in the result): WORLD_SIZE and RANK (torchrun's); the GPU validate_args asks
about answers as an H100 (compute capability 9.0), with CUDA_DEVICE_MAX_CONNECTIONS=1 as Megatron's
launch scripts export it; for the model build, torch's
`fake` process group of one rank (no process, nothing sent), and what only CUDA provides turned off
as Megatron's own options turn it off: `--transformer-impl local` (Transformer Engine's layers hold
the same parameters), no RoPE fusion, no persistent layer norm, CPU initialisation without
initialising (meta tensors have no values).
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import shlex
import sys
from typing import Any

from _probe import (
    STUBS,
    CannotRun,
    LrCurve,
    Refused,
    Result,
    count_meta,
    describe,
    framework,
    main,
    need_source,
    source_revision,
)
from _probe import steps_to_run

PROBE = {
    "framework": "Megatron-LM",
    "checkout": "megatron/training/arguments.py",  # used from a source tree (--src megatron=PATH)
    "imports": ["torch", "numpy", "packaging", "triton", "einops", "yaml"],
    "install": "Python 3.12 (Megatron-LM core_v0.17.0 and later), torch (CPU wheel), numpy, packaging, triton, "
    "einops, pyyaml",
    "source": "git clone https://github.com/NVIDIA/Megatron-LM and check out the release tag your runs use "
    "(core_v0.19.0, ...)",
}
DEFAULTS = {"tokenizer_type": "GPT2BPETokenizer"}  # pretrain_gpt.py's args_defaults
LOADED: dict[str, Any] = {}


def load(job: dict[str, Any]) -> dict[str, Any]:
    src = need_source(job, PROBE["checkout"], "Megatron-LM")
    try:
        from megatron.training import arguments  # type: ignore[import-not-found]
    except ImportError as exc:
        raise CannotRun(f"Megatron-LM's argument code does not import with this interpreter: {describe(exc)}") from exc
    try:
        from megatron.core.package_info import __version__ as version  # type: ignore[import-not-found]
    except ImportError:
        version = None
    _machine(arguments)
    LOADED["arguments"] = arguments
    return {
        "name": "Megatron-LM",
        "version": version or source_revision(src),
        "source": src,
        "torch": _version("torch"),
    }


def _machine(arguments: Any) -> None:
    """validate_args asks the GPU's architecture (stream settings, which CUDA_DEVICE_MAX_CONNECTIONS
    tensor/context parallelism needs, grouped-GEMM support): a property of the machine, not of the
    file. It is answered as an H100's (compute capability 9.0), with CUDA_DEVICE_MAX_CONNECTIONS=1 as
    Megatron-LM's example launch scripts export it."""
    import torch

    arguments.get_device_arch_version = STUBS.wrap(
        "get_device_arch_version", "answers 9, an H100's architecture (no GPU is asked)", lambda: 9
    )
    torch.cuda.get_device_capability = STUBS.wrap(
        "torch.cuda.get_device_capability", "answers (9, 0), an H100's (no GPU is asked)", lambda *a, **k: (9, 0)
    )
    STUBS.add(
        "$CUDA_DEVICE_MAX_CONNECTIONS",
        "1, as Megatron-LM's launch scripts export it (validate_args requires "
        "it with tensor or context parallelism before Blackwell)",
    )
    if os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS") is None:
        os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"
        STUBS.ran("$CUDA_DEVICE_MAX_CONNECTIONS")


def _version(name: str) -> str | None:
    from _probe import package_version

    return package_version(name)


def words(path: str) -> list[str]:
    """The words Megatron's argparse gets from the file."""
    with open(path) as handle:
        text = handle.read()
    first = next((line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")), "")
    if first.startswith("-") and not first.split()[0].endswith(":"):
        return shlex.split(text.replace("\\\n", " "), comments=True)
    tree = _yaml(text)
    flags = tree.get("MODEL_ARGS", tree) if isinstance(tree, dict) else None
    if isinstance(flags, dict) and flags and all(str(k).startswith("-") for k in flags):
        out: list[str] = []
        for key, value in flags.items():
            if not str(key).startswith("-"):
                continue
            out.append(str(key))
            if value is True:
                continue
            for item in value if isinstance(value, list) else [value]:
                out.append(repr(item) if isinstance(item, float) else str(item))
        return out
    raise CannotRun(
        f"{path} is not an argument file or Megatron's CI YAML (a bash script is made into words by bash, "
        f"which this probe does not run: `neoconv megatron2megatron {os.path.basename(path)} -o run.args` "
        "writes its arguments as an argument file)",
        stage="probe",
    )


def _yaml(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


def probe(job: dict[str, Any], result: Result) -> None:
    arguments = LOADED["arguments"]
    world = str(int(job.get("world_size") or 8))
    for name, value in (("WORLD_SIZE", world), ("RANK", "0")):
        STUBS.add(
            f"${name}", f"{'the world size (--world-size)' if name == 'WORLD_SIZE' else '0'}, as torchrun sets it"
        )
        os.environ[name] = value
        STUBS.ran(f"${name}")
    STUBS.known.pop("argv", None)  # this job's stand-in only (one process probes every file of a side)
    if job.get("argv"):  # a bash script: the words neoconv's static reading of it gives (bash is not run)
        STUBS.add("argv", "the launch script's words as neoconv reads them (bash not run)")
        argv = list(job["argv"])
        STUBS.ran("argv")
    elif job.get("argv_unknown"):
        raise CannotRun(
            f"the launch script's words are not all known without running it ({job['argv_unknown']})", stage="probe"
        )
    else:
        argv = [w for path in job["files"] for w in words(path)]
    sys.argv = ["pretrain_gpt.py", *argv]
    said = io.StringIO()
    with framework(), contextlib.redirect_stdout(sys.stderr):
        try:
            with contextlib.redirect_stderr(said):
                args = arguments.parse_args(None, False)
        except SystemExit as exc:  # argparse refused a word: its message went to stderr
            raise Refused(f"argparse exit {exc.code}: {' '.join(said.getvalue().strip().splitlines()[-1:])}") from exc
        arguments.validate_args(args, dict(DEFAULTS))
    _vocabulary(args, result)
    with framework(), contextlib.redirect_stdout(sys.stderr):
        _batches(args)
    _run(args, int(world), result)
    _lr(args, job, result)
    if job.get("count_parameters", True):
        _parameters(args, result)


def _vocabulary(args: Any, result: Result) -> None:
    """The padded vocabulary: --padded-vocab-size, else --vocab-size padded as Megatron pads it, else
    the tokenizer's (its files must be here)."""
    if args.padded_vocab_size is not None:
        return
    if args.vocab_size is not None:
        from megatron.training.vocab_utils import calculate_padded_vocab_size  # type: ignore[import-not-found]

        args.padded_vocab_size = calculate_padded_vocab_size(
            args.vocab_size, args.make_vocab_size_divisible_by, args.tensor_model_parallel_size, logging_enabled=False
        )
        return
    try:
        from megatron.training.tokenizer import build_tokenizer  # type: ignore[import-not-found]

        with contextlib.redirect_stdout(sys.stderr):
            build_tokenizer(args)
    except Exception as exc:  # noqa: BLE001 - tokenizer files not here
        result.note(
            f"the vocabulary is not known: Megatron takes it from the tokenizer ({args.tokenizer_type}), which "
            f"could not be built here ({type(exc).__name__}); the parameters are counted without the "
            "vocabulary-sized matrices"
        )


def _batches(args: Any) -> None:
    from megatron.core.num_microbatches_calculator import init_num_microbatches_calculator  # type: ignore[import-not-found]
    from megatron.training.global_vars import set_args  # type: ignore[import-not-found]
    from megatron.training.training import update_train_iters  # type: ignore[import-not-found]

    if LOADED.get("args") is not args:  # a new file: Megatron's globals are set once per process
        import megatron.core.num_microbatches_calculator as calculator  # type: ignore[import-not-found]
        import megatron.training.global_vars as global_vars  # type: ignore[import-not-found]

        global_vars._GLOBAL_ARGS = None
        calculator._GLOBAL_NUM_MICROBATCHES_CALCULATOR = None
    set_args(args)
    LOADED["args"] = args
    init_num_microbatches_calculator(
        rank=args.rank,
        global_batch_size=args.global_batch_size,
        micro_batch_size=args.micro_batch_size,
        data_parallel_size=args.data_parallel_size * args.gtp_weight_remat_size,
        decrease_batch_size_if_needed=args.decrease_batch_size_if_needed,
        step_batch_size_schedule=args.step_batch_size_schedule,
        seq_length=args.seq_length,
    )
    update_train_iters(args)


def _run(args: Any, world: int, result: Result) -> None:
    from megatron.core.num_microbatches_calculator import get_num_microbatches  # type: ignore[import-not-found]

    precision = "bf16" if args.bf16 else "fp16" if args.fp16 else "fp32"
    if getattr(args, "fp8", None):
        result.note(f"fp8 ({args.fp8}) on top of {precision}")
    result["run"] = {
        "world_size": world,
        "data_parallel": args.data_parallel_size,
        "global_batch": args.global_batch_size,
        "micro_batch": args.micro_batch_size,
        "accumulation": get_num_microbatches(),
        "steps": args.train_iters,
        "seq_length": args.seq_length,
        "tokens_per_step": args.global_batch_size * args.seq_length if args.seq_length else None,
        "precision": precision,
        "zero_stage": None,
        "tensor_parallel": args.tensor_model_parallel_size,
        "pipeline_parallel": args.pipeline_model_parallel_size,
        "context_parallel": args.context_parallel_size,
        "distributed_optimizer": args.use_distributed_optimizer,
        "optimizer": args.optimizer,
    }
    result["model"] = {
        "num_layers": args.num_layers,
        "hidden_size": args.hidden_size,
        "num_heads": args.num_attention_heads,
        "num_kv_heads": args.num_query_groups if args.group_query_attention else args.num_attention_heads,
        "ffn_hidden_size": args.ffn_hidden_size,
        "vocab_size": args.padded_vocab_size,
        "max_position_embeddings": args.max_position_embeddings,
    }


def _lr(args: Any, job: dict[str, Any], result: Result) -> None:
    import torch
    from megatron.core.num_microbatches_calculator import get_num_microbatches, update_num_microbatches  # type: ignore[import-not-found]
    from megatron.training.training import get_optimizer_param_scheduler  # type: ignore[import-not-found]

    total = steps_to_run(args.train_iters, job, result, "neither --train-iters nor --train-samples is given")
    if total is None:
        result.note("no learning rate curve: neither --train-iters nor --train-samples is given")
        return
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=args.lr)
    with framework(), contextlib.redirect_stdout(sys.stderr):
        scheduler = get_optimizer_param_scheduler(optimizer)
    curve = LrCurve(total, job)
    consumed = 0
    with framework():
        for step in range(total):
            update_num_microbatches(consumed, consistency_check=False)
            curve.record(step, optimizer.param_groups[0]["lr"])  # the rate iteration `step` uses
            increment = (
                get_num_microbatches() * args.micro_batch_size * args.data_parallel_size * args.gtp_weight_remat_size
            )
            scheduler.step(increment=increment)
            consumed += increment
    result["lr"] = curve.result(f"Megatron OptimizerParamScheduler ({args.lr_decay_style})")


def _parameters(args: Any, result: Result) -> None:
    try:
        count = _build_and_count(args)
    except Exception as exc:  # noqa: BLE001 - a model this environment cannot build
        result["parameters"] = {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        return
    count["how"] = "gpt_builder (GPTModel) on the meta device at tensor/pipeline parallel size 1"
    result["parameters"] = count


def _build_and_count(args: Any) -> dict[str, Any]:
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if not dist.is_initialized():
        STUBS.add("torch.distributed fake process group", "one rank, torch's `fake` backend: no process, nothing sent")
        dist.init_process_group(backend="fake", store=FakeStore(), rank=0, world_size=1)
        STUBS.ran("torch.distributed fake process group")
    from megatron.core import parallel_state  # type: ignore[import-not-found]
    from megatron.training.arguments import core_transformer_config_from_args  # type: ignore[import-not-found]
    from megatron.training.global_vars import set_args  # type: ignore[import-not-found]

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(LOADED["arguments"].__file__))))
    from gpt_builders import gpt_builder  # type: ignore[import-not-found]

    if not parallel_state.model_parallel_is_initialized():
        parallel_state.initialize_model_parallel(1, 1, create_gloo_process_groups=False)
    whole = copy.copy(args)
    cuda_only = {
        "transformer_impl": "local",
        "apply_rope_fusion": False,
        "no_persist_layer_norm": True,
        "gradient_accumulation_fusion": False,
        "use_cpu_initialization": True,
        "perform_initialization": False,
    }
    one_rank = {
        "tensor_model_parallel_size": 1,
        "pipeline_model_parallel_size": 1,
        "context_parallel_size": 1,
        "expert_model_parallel_size": 1,
        "sequence_parallel": False,
        "world_size": 1,
        "data_parallel_size": 1,
    }
    STUBS.add(
        "CUDA-only options off",
        "transformer_impl local, no RoPE fusion, no persistent layer norm, CPU "
        "initialisation without initialising: the same parameters without CUDA kernels",
    )
    STUBS.ran("CUDA-only options off")
    for key, value in {**cuda_only, **one_rank}.items():
        setattr(whole, key, value)
    set_args(whole)

    def build(rows: int) -> Any:
        whole.padded_vocab_size = rows
        config = core_transformer_config_from_args(whole)
        with contextlib.redirect_stdout(sys.stderr):
            return gpt_builder(whole, True, True, config=config)

    try:
        return count_meta(build, args.padded_vocab_size, placeholder=args.make_vocab_size_divisible_by)
    finally:
        set_args(args)


if __name__ == "__main__":
    sys.exit(main("megatron", load, probe))
