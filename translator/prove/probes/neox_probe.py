"""GPT-NeoX's own code on NeoX YAML files (run by an interpreter with torch, DeepSpeed and what
NeoX's `megatron` package imports; the GPT-NeoX checkout is the job's `source`).

* Accepts: `NeoXArgs.from_ymls(files, overwrite_values={"global_num_gpus": world_size})`, the files
  merged as deepy.py merges them (validate_keys, calculate_derived, validate_types, validate_values).
* Run: the values NeoX derived (train_batch_size, micro batch, accumulation, data-parallel size as
  calculate_derived divides global_num_gpus, precision, ZeRO stage, parallel sizes).
* Learning rate: `megatron/training.py::get_learning_rate_scheduler` (NeoX's `AnnealingLR`, handed
  to DeepSpeed as its scheduler; with `onebitadam`, the DeepSpeed scheduler NeoX writes into the
  DeepSpeed config, built by DeepSpeed's engine), stepped once per optimizer step as
  DeepSpeed's engine steps it.
* Parameters: `GPT2ModelPipe` (what `get_model` builds) on torch's meta device, at model- and
  pipeline-parallel size 1 (the whole model on one rank) with NeoX's own padded vocabulary.

Stand-ins (each listed in the result with how often it ran): `NeoXArgs.enable_logging` does
nothing (it only creates log_dir and tees stdout); `importlib.metadata.version("flash-attn")`
answers 2.6.3 (flash-attn needs CUDA to install; NeoX asks whether the installed kernel supports
sliding windows); for the model build, torch's `fake` process group of one rank (no process is
started, nothing is sent), `LOCAL_RANK=0`, DeepSpeed's accelerator naming the meta device, an
empty `flash_attn` package (imported by the attention layer, called only in a forward pass), and
no check that NeoX's fused CUDA kernels are built (they run only in a forward pass).
"""

from __future__ import annotations

import contextlib
import copy
import importlib.abc
import importlib.machinery
import logging
import os
import re
import sys
import types
from typing import Any

from _probe import STUBS, CannotRun, LrCurve, Refused, Result, StubUsed, count_meta, describe, framework, main
from _probe import need_source, package_version, source_revision, steps_to_run

PROBE = {
    "framework": "GPT-NeoX",
    "checkout": "megatron/neox_arguments",  # used from a source tree (--src neox=PATH) holding this
    "imports": ["torch", "deepspeed", "yaml"],
    "install": "torch (CPU wheel), deepspeed (DS_BUILD_OPS=0; NeoX pins DeeperSpeed), and what NeoX's megatron "
    "package imports: pyyaml, 'setuptools<81', requests, 'numpy<2', regex, six, ftfy, sentencepiece, "
    "tiktoken, tokenizers, 'transformers<5' (requirements/requirements.txt of the checkout)",
    "source": "git clone https://github.com/EleutherAI/gpt-neox (at the commit your runs use)",
}
FLASH_ATTN_VERSION = "2.6.3"


class _EmptyPackage(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`flash_attn` as an empty package: any function of it raises StubUsed when called."""

    def __init__(self, root: str) -> None:
        self.root = root

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname.split(".")[0] == self.root:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = []
        STUBS.ran(f"{self.root} package")

        def anything(name: str) -> Any:
            if name.startswith("__"):
                raise AttributeError(name)

            def called(*args: Any, **kwargs: Any) -> Any:
                raise StubUsed(f"{spec.name}.{name} was called (the stand-in package has no code)")

            return called

        module.__getattr__ = anything  # type: ignore[method-assign]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


@contextlib.contextmanager
def _logged() -> Any:
    """The messages NeoX logs meanwhile (it logs each failed check, then raises one summary)."""
    said: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(re.sub(r"\x1b\[[0-9;]*m", "", record.getMessage()))

    handler = Keep(level=logging.WARNING)
    logging.getLogger().addHandler(handler)
    try:
        yield said
    finally:
        logging.getLogger().removeHandler(handler)


LOADED: dict[str, Any] = {}


def load(job: dict[str, Any]) -> dict[str, Any]:
    """Import NeoX's argument code from the checkout, with its two stand-ins."""
    src = need_source(job, PROBE["checkout"], "GPT-NeoX")
    try:
        from importlib.metadata import version

        from megatron.neox_arguments import arguments  # type: ignore[import-not-found]
    except ImportError as exc:
        raise CannotRun(f"GPT-NeoX's argument code does not import with this interpreter: {describe(exc)}") from exc
    arguments.NeoXArgs.enable_logging = STUBS.wrap(
        "NeoXArgs.enable_logging",
        "does nothing: NeoX's only creates log_dir and tees stdout into it",
        lambda self: None,
    )
    arguments.version = STUBS.wrap(
        "importlib.metadata.version('flash-attn')",
        f"answers {FLASH_ATTN_VERSION} for flash-attn (a CUDA build; NeoX "
        "asks for it to know what the installed kernel supports); other packages are looked up",
        lambda name: FLASH_ATTN_VERSION if name == "flash-attn" else version(name),
    )
    LOADED["NeoXArgs"] = arguments.NeoXArgs
    return {
        "name": "GPT-NeoX",
        "version": source_revision(src),
        "source": src,
        "deepspeed": package_version("deepspeed"),
        "torch": package_version("torch"),
    }


def probe(job: dict[str, Any], result: Result) -> None:
    world = int(job.get("world_size") or 8)
    with framework(), _logged() as said:
        try:
            args = LOADED["NeoXArgs"].from_ymls(list(job["files"]), overwrite_values={"global_num_gpus": world})
        except Exception as exc:
            fails = [line for line in said if "FAIL" in line]
            if fails:
                raise Refused(f"{type(exc).__name__}: {exc} | " + " | ".join(fails)) from exc
            raise
    _run(args, world, result)
    vocab = _vocabulary(args, result)
    _lr(args, job, result)
    if job.get("count_parameters", True):
        _parameters(args, vocab, result)


def _run(args: Any, world: int, result: Result) -> None:
    pp = args.pipe_parallel_size if args.pipe_parallel_size >= 1 else 1  # 0: no PipelineModule, one stage
    mp = args.model_parallel_size if args.model_parallel_size >= 1 else 1
    precision = {"fp16": "fp16", "bfloat16": "bf16", "fp32": "fp32"}.get(str(args.precision), str(args.precision))
    fp16 = args.fp16 if isinstance(args.fp16, dict) else {}
    if precision == "fp16" and fp16.get("type") == "bfloat16":  # what the run trains in on NeoX's DeepSpeed
        precision = "bf16"
        result.note(
            "fp16.type bfloat16 (a DeeperSpeed extension, the DeepSpeed NeoX pins): NeoX derives precision "
            "fp16; DeeperSpeed trains in bf16"
        )
    result["run"] = {
        "world_size": world,
        "data_parallel": world // pp // mp,
        "global_batch": args.train_batch_size,
        "micro_batch": args.train_micro_batch_size_per_gpu,
        "accumulation": args.gradient_accumulation_steps,
        "steps": args.train_iters,
        "seq_length": args.seq_length,
        "tokens_per_step": args.train_batch_size * args.seq_length if args.seq_length else None,
        "precision": precision,
        "zero_stage": args.zero_stage,
        "tensor_parallel": mp,
        "pipeline_parallel": pp,
        "optimizer": args.optimizer_type,
    }
    result["model"] = {
        "num_layers": args.num_layers,
        "hidden_size": args.hidden_size,
        "num_heads": args.num_attention_heads,
        "num_kv_heads": getattr(args, "num_kv_heads", None) or args.num_attention_heads,
        "ffn_hidden_size": None,
        "max_position_embeddings": args.max_position_embeddings,  # the width: from the model built
        "seq_length": args.seq_length,
        "vocab_size": None,
    }


def _vocabulary(args: Any, result: Result) -> int | None:
    """NeoX's padded vocabulary: its tokenizer's size padded by `vocab_size_with_padding` (the
    tokenizer files must be here; NeoX has no key for the size)."""
    from megatron.tokenizer import build_tokenizer  # type: ignore[import-not-found]

    try:
        with contextlib.redirect_stdout(sys.stderr):
            build_tokenizer(args)
    except Exception as exc:  # noqa: BLE001 - files absent, a hub download refused offline
        where = args.vocab_file or "(none named)"
        result.note(
            f"the vocabulary is not known: NeoX takes it from the tokenizer ({args.tokenizer_type}, vocab_file "
            f"{where}) when training starts, and building it here failed ({type(exc).__name__}); the parameters "
            "are counted without the vocabulary-sized matrices"
        )
        return None
    result["model"]["vocab_size"] = args.padded_vocab_size
    return int(args.padded_vocab_size)


def _lr(args: Any, job: dict[str, Any], result: Result) -> None:
    import torch

    total = steps_to_run(args.train_iters, job, result, "the file sets no train_iters")
    if total is None:
        result.note("no learning rate curve: the file sets no train_iters")
        return
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=float(args.lr or 0.0))
    with framework():
        if str(args.optimizer_type).lower() == "onebitadam":
            scheduler, name = _deepspeed_scheduler(args.scheduler, optimizer), f"DeepSpeed {args.scheduler['type']}"
        else:
            from megatron.training import get_learning_rate_scheduler  # type: ignore[import-not-found]

            scheduler = get_learning_rate_scheduler(optimizer=optimizer, neox_args=args)
            name = f"NeoX AnnealingLR ({args.lr_decay_style})"
            if args.scheduler:
                result.note(
                    "the DeepSpeed scheduler block is not used: NeoX hands its own AnnealingLR to DeepSpeed, "
                    "which uses a scheduler it is given over its configured one"
                )
    if scheduler is None:
        result.note("NeoX builds no learning rate scheduler for this file (no_load_optim without DeepSpeed)")
        return
    curve = LrCurve(total, job)
    with framework():
        for step in range(total):
            curve.record(step, optimizer.param_groups[0]["lr"])  # the rate optimizer step `step` uses
            scheduler.step()  # DeepSpeed's engine, after each optimizer step
    result["lr"] = curve.result(name)


def _deepspeed_scheduler(params: dict[str, Any], optimizer: Any) -> Any:
    from types import SimpleNamespace

    from deepspeed.runtime.engine import DeepSpeedEngine

    view = SimpleNamespace(scheduler_name=lambda: params.get("type"), scheduler_params=lambda: params.get("params"))
    return DeepSpeedEngine._scheduler_from_config(view, optimizer)


def _parameters(args: Any, vocab: int | None, result: Result) -> None:
    """GPT2ModelPipe on the meta device, the whole model on one rank."""
    try:
        count = _build_and_count(args, vocab)
    except StubUsed:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a model NeoX cannot build here (Mamba/RWKV kernels, TE)
        result["parameters"] = {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        return
    count["how"] = "GPT2ModelPipe on the meta device at model/pipe parallel size 1"
    result["model"]["ffn_hidden_size"] = count.pop("mlp_width")
    result["parameters"] = count


def _build_and_count(args: Any, vocab: int | None) -> dict[str, Any]:
    import deepspeed
    import torch
    import torch.distributed as dist
    from deepspeed.accelerator import get_accelerator
    from deepspeed.runtime.pipe.topology import PipeModelDataParallelTopology
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if not any(isinstance(finder, _EmptyPackage) for finder in sys.meta_path):
        sys.meta_path.insert(0, _EmptyPackage("flash_attn"))
    STUBS.add(
        "flash_attn package",
        "an empty package: NeoX's attention imports it when built, calls it only in a forward pass",
    )
    if not dist.is_initialized():
        STUBS.add("torch.distributed fake process group", "one rank, torch's `fake` backend: no process, nothing sent")
        dist.init_process_group(backend="fake", store=FakeStore(), rank=0, world_size=1)
        STUBS.ran("torch.distributed fake process group")
    deepspeed.comm.init_distributed(dist_backend="fake", auto_mpi_discovery=False, dist_init_required=False)
    STUBS.add("LOCAL_RANK", "0: DeepSpeed's PipelineModule reads it from the launcher's environment")
    if "LOCAL_RANK" not in os.environ:
        os.environ["LOCAL_RANK"] = "0"
        STUBS.ran("LOCAL_RANK")
    accelerator = get_accelerator()
    accelerator.device_name = STUBS.wrap(
        "accelerator.device_name",
        "names the meta device: PipelineModule moves itself to the accelerator once built",
        lambda *a: "meta",
    )
    from megatron import mpu  # type: ignore[import-not-found]
    from megatron.model import GPT2ModelPipe  # type: ignore[import-not-found]
    from megatron.model import fused_softmax  # type: ignore[import-not-found]

    # the fused softmax checks its CUDA kernels are built when it is made (and exits when not); they
    # run only in a forward pass and hold no parameter
    fused_softmax.load_fused_kernels = STUBS.wrap(
        "megatron.fused_kernels.load_fused_kernels",
        "does nothing: NeoX's CUDA kernels run only in a forward pass and hold no parameter",
        lambda: None,
    )

    model_args = copy.copy(args)
    for key, value in {"model_parallel_size": 1, "pipe_parallel_size": 1, "use_cpu_initialization": True}.items():
        model_args.update_value(key, value)
    if not mpu.model_parallel_is_initialized():
        mpu.initialize_model_parallel(1, topology=PipeModelDataParallelTopology(num_pp=1, num_mp=1, num_dp=1))

    built: list[Any] = []

    def build(rows: int) -> Any:
        model_args.update_value("padded_vocab_size", rows)
        with contextlib.redirect_stdout(sys.stderr):
            built[:] = [
                GPT2ModelPipe(
                    neox_args=model_args,
                    num_tokentypes=0,
                    parallel_output=True,
                    topology=mpu.get_topology(),
                    use_cache=False,
                )
            ]
        return built[0]

    mp = args.model_parallel_size if args.model_parallel_size >= 1 else 1
    with torch.no_grad():
        count = count_meta(build, vocab, placeholder=args.make_vocab_size_divisible_by * mp)
    count["mlp_width"] = _mlp_width(built[0])
    return count


def _mlp_width(model: Any) -> int | None:
    """The MLP's width as built: the input of its down projection (NeoX scales a gated MLP's width
    by 2/3 and rounds it; intermediate_size is not the width)."""
    for name, parameter in model.named_parameters():
        if name.endswith("mlp.linear2.weight") and parameter.dim() == 2:
            return int(parameter.shape[1])
    return None


if __name__ == "__main__":
    sys.exit(main("neox", load, probe))
