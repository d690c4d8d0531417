"""GPT-NeoX YAML: one or several files merged into one flat namespace, as NeoX merges them.

NeoX refuses a key given in two files ("duplicate keys with previously loaded file") and treats
`-` and `_` in top-level keys alike; so do we, in both directions (NeoX's own check misses an
underscore key followed by its hyphen twin, which would silently overwrite it).
"""

from __future__ import annotations

import os
from typing import Any

from ...errors import InputError
from ...io import dump_yaml, key_line, parse_yaml, read_text, unflatten
from ...schema import schema_index
from ...source import Source


def read(paths: list[str], *, layout: str | None = None) -> Source:
    tree: dict[str, Any] = {}
    leaf_files: dict[str, str] = {}
    texts: dict[str, str] = {}
    notes: dict[str, str] = {}
    spelled: dict[str, str] = {}
    basenames: dict[str, str] = {}
    for path in paths:
        name = str(path)
        base = os.path.basename(name)
        if name != "-" and base in basenames:
            raise InputError(
                f"another config file is also named {base} ({basenames[base]}); NeoX stores "
                "configs by file name and refuses this: rename one",
                file=name,
            )
        basenames[base] = name
        text = read_text(name)
        texts[name] = text
        data = parse_yaml(text, name)
        for key, value in data.items():
            if not isinstance(key, str) or not key.strip():
                raise InputError(f"key {key!r} is not a setting name", file=name, line=key_line(text, str(key)))
            norm = key.replace("-", "_")
            if norm in tree:
                first = leaf_files[norm]
                if first == name:
                    # NeoX itself fails on one order of the pair and silently keeps the last value in the other
                    other, old, new = spelled[norm], repr(tree[norm])[:40], repr(value)[:40]
                    both = f"both {new}" if old == new else f"{old} at line {key_line(text, other)}, {new} here"
                    raise InputError(
                        f"{key!r} and {other!r} are the same NeoX setting ({both}); keep one",
                        file=name, line=key_line(text, key),
                    )  # fmt: skip
                raise InputError(
                    f"{key!r} is also set in {first} (as {spelled[norm]!r}); NeoX refuses a key given in "
                    "two files (duplicate keys with previously loaded file): keep it in one file",
                    file=name, line=key_line(text, key),
                )  # fmt: skip
            tree[norm] = value
            leaf_files[norm] = name
            spelled[norm] = key
            if norm != key:
                notes[norm] = f"written as {key}"
    return Source("neox", tree, [str(p) for p in paths], texts, leaf_files, notes=notes)


def write(leaves: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    document = unflatten({key: _typed(key, value) for key, value in leaves.items()})
    meta["added"] = _loadable(document)
    return document


def _typed(key: str, value: Any) -> Any:
    """NeoX's validate_types refuses a float in an int field (rotary_emb_base: 10000.0 crashes)."""
    node = schema_index("neox").node(key)
    kinds = node.get("type") if node else None
    kinds = {kinds} if isinstance(kinds, str) else set(kinds or ())
    if isinstance(value, float) and value.is_integer() and "integer" in kinds and "number" not in kinds:
        return int(value)
    return value


def _loadable(document: dict[str, Any]) -> list[str]:
    """What NeoX needs to load a config that no canonical value gives (NeoXArgs.from_ymls,
    arguments.py); returns a line per addition for the header."""
    added: list[str] = []
    if "train_batch_size" in document and "gradient_accumulation_steps" not in document:
        # NeoX's accumulation default is 1, not "derive it": with a micro batch that would fail its
        # batch check; null lets NeoX derive it from train_batch_size / micro / data-parallel size
        derive = "train_micro_batch_size_per_gpu" in document
        document["gradient_accumulation_steps"] = None if derive else 1
        added.append("gradient_accumulation_steps: " + ("null (NeoX derives it from the global and micro batch)"
                     if derive else "1 (the global batch is the micro batch x data-parallel size)"))  # fmt: skip
    bf16 = str(document.get("precision", "")).lower() in ("bfloat16", "bf16") or (document.get("bf16") or {}).get("enabled")
    if bf16 and not isinstance(document.get("zero_optimization"), dict):
        # NeoX reads zero_optimization["stage"] for bf16 before filling its ZeRO defaults
        document["zero_optimization"] = {"stage": 0}
        added.append("zero_optimization: {stage: 0} (NeoX needs a ZeRO block to load a bf16 config)")
    return added


def dump(document: dict[str, Any], meta: dict[str, Any]) -> str:
    header = "# GPT-NeoX config written by neoconv" + (f" from {meta['from']}" if meta.get("from") else "") + "\n"
    header += "".join(f"# added for NeoX to load it: {line}\n" for line in meta.get("added") or ())
    return header + dump_yaml(document)
