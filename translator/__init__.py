"""neoconv: translate LLM training configs between GPT-NeoX, DeepSpeed, Cerebras Model Zoo, VeOmni,
HF config.json, HF TrainingArguments and Megatron-LM, with a report of everything that did not carry
over unchanged.

    >>> from neoconv import translate
    >>> result = translate("fixtures/inputs/neox/pythia-160m.yml", src="neox", dst="cerebras", world_size=8)
    >>> result.config["model"]["rotary_dim"]
    16

The public names are imported lazily, so `neoconv --help` does not pay for the engine.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .core import __version__

_EXPORTS = {
    "Translation": "api",
    "dump": "api",
    "load": "api",
    "parse_set": "api",
    "translate": "api",
    "InputError": "core.errors",
    "MappingTableError": "core.errors",
    "NeoconvError": "core.errors",
    "OutputError": "core.errors",
    "UsageError": "core.errors",
    "Entry": "core.report",
    "Report": "core.report",
    "Status": "core.report",
}

# spelled out (not computed) so type checkers see what the package exports
__all__ = [
    "Entry",
    "InputError",
    "MappingTableError",
    "NeoconvError",
    "OutputError",
    "Report",
    "Status",
    "Translation",
    "UsageError",
    "__version__",
    "dump",
    "load",
    "parse_set",
    "translate",
]

if TYPE_CHECKING:
    from .api import Translation, dump, load, parse_set, translate
    from .core.errors import InputError, MappingTableError, NeoconvError, OutputError, UsageError
    from .core.report import Entry, Report, Status


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
