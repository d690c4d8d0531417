"""neoconv: translate LLM training configs between GPT-NeoX, DeepSpeed, Cerebras and VeOmni.

    >>> from translator import translate
    >>> result = translate("fixtures/inputs/neox/pythia-160m.yml", src="neox", dst="cerebras", world_size=8)
    >>> result.config["model"]["hidden_size"], result.report.summary()["missing"]
"""

from __future__ import annotations

from .api import Translation, dump, load, parse_set, translate
from .errors import InputError, MappingTableError, NeoconvError, OutputError, UsageError
from .report import Entry, Report, Status

__version__ = "0.1.0"

__all__ = [
    "Entry", "InputError", "MappingTableError", "NeoconvError", "OutputError", "Report", "Status",
    "Translation", "UsageError", "__version__", "dump", "load", "parse_set", "translate",
]  # fmt: skip
