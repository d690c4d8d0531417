"""The frameworks' own config code, loaded at test time for the `oracle` tests (never vendored).

* Cerebras' `convert_legacy_params_to_trainer_params` (Model Zoo, src/cerebras/modelzoo/trainer/
  utils.py): its source comes from $NEOCONV_MODELZOO (a checkout, or a bare git mirror read at
  $NEOCONV_MODELZOO_REV, default the 2.10 release) or ../.mirror/Cerebras+modelzoo/repo; it needs
  torch and the `cerebras-pytorch` wheel installed with --no-deps (only its pure-Python
  utils/nest.py is used; the rest of cerebras.* that the module imports is stubbed, because the
  converter never calls it).
* GPT-NeoX's `NeoXArgs` (megatron/neox_arguments): from $NEOCONV_NEOX (a checkout or a bare
  mirror) or ../.mirror/EleutherAI+gpt-neox/repo; needs torch. The modules arguments.py imports
  for logging, tokenizers and hostfiles are stubbed; `expand_attention_types` is NeoX's own,
  taken from its megatron/utils.py.

Each loader returns None with the reason in `why_not` when something is missing, so the tests
skip with that reason.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import tarfile
import tempfile
import types
from collections.abc import Callable
from functools import cache
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MIRRORS = ROOT.parent / ".mirror"
MODELZOO_REV = "f1fd1e091dc67917b91ec213ecd63e48fd144477"  # Model Zoo 2.10
why_not: dict[str, str] = {}


def _source_tree(env: str, mirror: str, rev: str, paths: list[str]) -> Path | None:
    """A folder holding `paths` from a checkout ($env) or a bare mirror (extracted to a temp dir)."""
    given = os.environ.get(env)
    where = Path(given) if given else MIRRORS / mirror
    if (where / paths[0]).exists():
        return where
    if not (where / "HEAD").exists():
        why_not[env] = f"no checkout: set ${env} to one ({where} does not exist)"
        return None
    try:
        data = subprocess.run(["git", f"--git-dir={where}", "archive", rev, *paths], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        why_not[env] = f"cannot read {where} at {rev}: {exc}"
        return None
    out = Path(tempfile.mkdtemp(prefix="neoconv-oracle-"))
    with tarfile.open(fileobj=BytesIO(data)) as tar:
        tar.extractall(out, filter="data")
    return out


def _stub(name: str, *, package: bool = False, **attrs: Any) -> types.ModuleType:
    """Install (or extend) module `name` in sys.modules with `attrs`, its parents too.
    package=True: make it a package, so that relative imports below it resolve."""
    module = sys.modules.get(name) or types.ModuleType(name)
    if package:
        module.__path__ = []
    for key, value in attrs.items():
        setattr(module, key, value)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(_stub(parent, package=package), child, module)
    return module


@cache
def cerebras_converter() -> Callable[..., dict[str, Any]] | None:
    try:
        import torch  # noqa: F401
    except ImportError:
        why_not["cerebras"] = "torch is not installed (pip install torch, CPU wheel)"
        return None
    spec = importlib.util.find_spec("cerebras")
    nest_path = None
    for base in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(base) / "pytorch" / "utils" / "nest.py"
        if candidate.exists():
            nest_path = candidate
    if nest_path is None:
        why_not["cerebras"] = "cerebras-pytorch is not installed (pip install --no-deps cerebras-pytorch==2.10.0)"
        return None
    tree = _source_tree("NEOCONV_MODELZOO", "Cerebras+modelzoo/repo", os.environ.get("NEOCONV_MODELZOO_REV", MODELZOO_REV),
                        ["src/cerebras/modelzoo/trainer/utils.py"])  # fmt: skip
    if tree is None:
        why_not["cerebras"] = why_not["NEOCONV_MODELZOO"]
        return None
    if "dill" not in sys.modules and importlib.util.find_spec("dill") is None:
        _stub("dill")
    nest_spec = importlib.util.spec_from_file_location("neoconv_oracle_cstorch_nest", nest_path)
    assert nest_spec and nest_spec.loader
    nest = importlib.util.module_from_spec(nest_spec)
    nest_spec.loader.exec_module(nest)

    class LRScheduler:  # the converter only needs the class names of cstorch's schedulers
        pass

    names = ["ConstantLR", "PolynomialLR", "LinearLR", "ExponentialLR", "InverseExponentialTimeDecayLR",
             "InverseSquareRootDecayLR", "CosineDecayLR", "SequentialLR", "PiecewiseConstantLR", "MultiStepLR",
             "StepLR", "CosineAnnealingLR", "LambdaLR", "CosineAnnealingWarmRestarts", "MultiplicativeLR",
             "ChainedLR", "CyclicLR", "OneCycleLR", "ScalePerParamLR"]  # fmt: skip
    classes = {n: type(n, (LRScheduler,), {}) for n in names}
    classes["ChainedScheduler"] = type("ChainedScheduler", (classes["ChainedLR"],), {})
    saved = dict(sys.modules)
    try:
        cstorch = _stub("cerebras.pytorch")
        _stub("cerebras.pytorch.utils.nest", recurse_spec=nest.recurse_spec)
        _stub("cerebras.pytorch.optim.lr_scheduler", LRScheduler=LRScheduler)
        _stub("cerebras.pytorch.backend", get_backend_args=lambda *a, **k: {})
        cstorch.utils = sys.modules["cerebras.pytorch.utils"]
        cstorch.optim = sys.modules["cerebras.pytorch.optim"]

        def subclasses(cls: type) -> list[type]:
            out: list[type] = []
            for sub in cls.__subclasses__():
                out += [sub, *subclasses(sub)]
            return out

        _stub("cerebras.appliance.utils.classes", retrieve_all_subclasses=subclasses)
        _stub("cerebras.modelzoo.config", BaseConfig=type("BaseConfig", (), {}))
        _stub("cerebras.modelzoo.trainer.validate", validate_trainer_params=lambda *a, **k: None)
        source = (tree / "src/cerebras/modelzoo/trainer/utils.py").read_text()
        module = types.ModuleType("neoconv_oracle_modelzoo_utils")
        exec(compile(source, "modelzoo/trainer/utils.py", "exec"), module.__dict__)  # noqa: S102 - upstream code under test
    finally:
        for name in set(sys.modules) - set(saved):
            if name.startswith("cerebras"):
                del sys.modules[name]
    module.__dict__["_scheduler_classes"] = classes  # __subclasses__ holds weak references only
    return module.convert_legacy_params_to_trainer_params  # type: ignore[no-any-return]


@cache
def neox_args() -> Any:
    """GPT-NeoX's NeoXArgs class, or None."""
    try:
        import torch  # noqa: F401
    except ImportError:
        why_not["neox"] = "torch is not installed (pip install torch, CPU wheel)"
        return None
    tree = _source_tree("NEOCONV_NEOX", "EleutherAI+gpt-neox/repo", os.environ.get("NEOCONV_NEOX_REV", "HEAD"),
                        ["megatron/neox_arguments", "megatron/utils.py"])  # fmt: skip
    if tree is None:
        why_not["neox"] = why_not["NEOCONV_NEOX"]
        return None
    utils_source = (tree / "megatron/utils.py").read_text()
    found = [n for n in ast.parse(utils_source).body if isinstance(n, ast.FunctionDef) and n.name == "expand_attention_types"]
    if not found:
        why_not["neox"] = "megatron/utils.py has no expand_attention_types"
        return None
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=found, type_ignores=[]), "megatron/utils.py", "exec"), namespace)  # noqa: S102
    try:
        import pkg_resources  # noqa: F401  (arguments.py imports packaging through it)
    except ImportError:
        why_not["neox"] = "pkg_resources is missing (pip install 'setuptools<81')"
        return None
    _stub("deepspeed.launcher.runner", DLTS_HOSTFILE="/job/hostfile")
    _stub("megatron", __path__=[str(tree / "megatron")])
    _stub("megatron.logging", Tee=object)
    _stub("megatron.tokenizer", build_tokenizer=lambda args: None)
    _stub("megatron.utils", obtain_resource_pool=None, expand_attention_types=namespace["expand_attention_types"])
    from megatron.neox_arguments import NeoXArgs  # type: ignore[import-not-found]

    return NeoXArgs
