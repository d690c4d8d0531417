"""GPT-NeoX YAML: one or several files merged into one flat namespace, as NeoX merges them.

NeoX treats `-` and `_` in top-level keys alike and refuses a key given again ("duplicate keys with
previously loaded file"), but it checks the key as written against the keys so far, all stored with
`_` (NeoXArgs.from_ymls): a repeat written with `_` is refused, one written with `-` overwrites the
earlier value. So do we, and the report names the value that is not used. A file with no model
architecture is a shared-settings fragment (local_setup.yml): batch merges it with --with instead
of translating it alone.
"""

from __future__ import annotations

import os
from typing import Any

from ...core.errors import InputError
from ...io.documents import key_line, parse_yaml, read_text
from ...knowledge.source import Source, note_duplicates
from ...io.yamlread import Duplicate
from ..spec import ModelConfig, Reader

MODEL_KEYS = ("num_layers", "hidden_size", "num_attention_heads")
FRAGMENT = (
    "fragment: no model architecture (num_layers/hidden_size); name it with --with to merge it into every translation"
)


class NeoxReader(Reader):
    format = "neox"

    def read(self, paths: list[str], *, layout: str | None = None, model_config: ModelConfig = None) -> Source:
        tree: dict[str, Any] = {}
        leaf_files: dict[str, str] = {}
        texts: dict[str, str] = {}
        notes: dict[str, str] = {}
        spelled: dict[str, str] = {}
        warnings: list[str] = []
        basenames: dict[str, str] = {}
        repeats: list[
            tuple[dict[str, Any], list[Duplicate], str]
        ] = []  # per file: its keys, those given twice, its name
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
            duplicates: list[Duplicate] = []
            data = parse_yaml(text, name, duplicates=duplicates)
            if duplicates:  # NeoX loads each file with yaml.load: the last value wins
                top = {k.replace("-", "_"): v for k, v in data.items()}
                repeats.append(
                    (top, [d._replace(path=(d.path[0].replace("-", "_"), *d.path[1:])) for d in duplicates], name)
                )
            for key, value in data.items():
                if not isinstance(key, str) or not key.strip():
                    raise InputError(f"key {key!r} is not a setting name", file=name, line=key_line(text, str(key)))
                norm = key.replace("-", "_")
                if norm in tree and norm != key:  # NeoX's check misses a hyphen spelling: the last value wins
                    _overwrite(
                        notes,
                        warnings,
                        (spelled[norm], leaf_files[norm], texts[leaf_files[norm]]),
                        (key, name, text),
                        tree[norm],
                        value,
                    )
                elif norm in tree:
                    first = leaf_files[norm]
                    if first == name:
                        # NeoX itself fails on one order of the pair and silently keeps the last value in the other
                        other, old, new = spelled[norm], repr(tree[norm])[:40], repr(value)[:40]
                        both = f"both {new}" if old == new else f"{old} at line {key_line(text, other)}, {new} here"
                        raise InputError(
                            f"{key!r} and {other!r} are the same NeoX setting ({both}); keep one",
                            file=name,
                            line=key_line(text, key),
                        )
                    raise InputError(
                        f"{key!r} is also set in {first} (as {spelled[norm]!r}); NeoX refuses a key given in "
                        "two files (duplicate keys with previously loaded file): keep it in one file",
                        file=name,
                        line=key_line(text, key),
                    )
                tree[norm] = value
                leaf_files[norm] = name
                spelled[norm] = key
                if norm != key:
                    notes[norm] = "; ".join(x for x in (notes.get(norm), f"written as {key}") if x)
        source = Source("neox", tree, [str(p) for p in paths], texts, leaf_files, notes=notes)
        source.locate = lambda text, leaf: key_line(text, _as_spelled(leaf, spelled))
        source.warnings += warnings
        for top, duplicates, name in repeats:
            note_duplicates(source, top, duplicates, "NeoX's YAML loader", name)
        return source

    def fragment(self, source: Source) -> str | None:
        return None if any(key in source.tree for key in MODEL_KEYS) else FRAGMENT


def _as_spelled(leaf: str, spelled: dict[str, str]) -> str:
    """A leaf as the file spells its top key (`pipe-parallel-size`), for its line."""
    top, dot, rest = leaf.partition(".")
    return spelled.get(top, top) + dot + rest


def _overwrite(
    notes: dict[str, str],
    warnings: list[str],
    first: tuple[str, str, str],
    later: tuple[str, str, str],
    old: Any,
    new: Any,
) -> None:
    """Name a key NeoX reads twice, whose later hyphen spelling replaces the earlier value unchecked."""
    (key0, file0, text0), (key1, file1, text1) = first, later
    where0 = f"line {key_line(text0, key0)}" + (f" of {os.path.basename(file0)}" if file0 != file1 else "")
    where1 = f"line {key_line(text1, key1)}" + (f" of {os.path.basename(file1)}" if file0 != file1 else "")
    norm = key1.replace("-", "_")
    note = (
        f"{key0!r} ({where0}) and {key1!r} ({where1}) are the same NeoX setting; NeoX keeps the later "
        f"(its duplicate check misses a `-` spelling), as here: the first, {repr(old)[:40]}, is not used"
    )
    notes[norm] = "; ".join(x for x in (notes.get(norm), note) if x)
    if old != new:  # two values: the file says one thing and runs another
        warnings.append(note)


READER = NeoxReader()
