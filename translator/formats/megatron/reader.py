"""Megatron-LM arguments: files of words (syntax.py) parsed as Megatron's argparse parser parses them
(options.py) into its namespace, keyed by dest.

Several files are one command line, in order (a repeated option: the last wins, as in argparse). The
launcher's words (torchrun's, before the training script) become `launcher.*` leaves (world size =
--nproc_per_node x --nnodes); a CI YAML file's other entries (ENV_VARS, ...) `ci.*` leaves. A value
that is a shell expression is unresolved: rules see no value, the report says so, a Megatron ->
Megatron translation writes the expression back as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.errors import InputError
from ...io.documents import read_text
from ...knowledge.source import Source
from ..spec import ModelConfig, Reader
from .options import Namespace, dest_of, not_a_choice, option_with_unknown_value, parse, table
from .syntax import syntax_of, words_of
from .words import Arg, Words

FORMAT = "megatron"
_EXPANSION = re.compile(r"\$[{(A-Za-z_0-9@*#?!$-]|`")


@dataclass
class MegatronSource(Source):
    """A Source whose leaves each know their file and line (the words of several files and arrays)."""

    origins: dict[str, tuple[str, int]] = field(default_factory=dict)

    def file_of(self, leaf: str) -> str | None:
        found = self.origins.get(leaf)
        return found[0] if found else super().file_of(leaf)

    def line_of(self, leaf: str) -> int | None:
        found = self.origins.get(leaf)
        return found[1] if found else None


class MegatronReader(Reader):
    format = FORMAT

    def read(self, paths: list[str], *, layout: str | None = None, model_config: ModelConfig = None) -> Source:
        texts: dict[str, str] = {}
        args: list[Arg] = []
        launcher: list[Arg] = []
        extra: dict[str, tuple[Any, str, int]] = {}
        syntaxes: list[str] = []
        notes: list[str] = []
        container: list[str] = []  # a CI YAML's top-level keys, MODEL_ARGS among them
        for path in paths:
            name = str(path)
            text = read_text(name)
            if not text.strip():
                raise InputError("empty file; expected Megatron-LM arguments (--flag value)", file=name)
            texts[name] = text
        read: dict[str, Words | InputError] = {}
        for name, text in texts.items():  # a script may source another file given (its values are read there)
            try:
                read[name] = words_of(text, name, {other: t for other, t in texts.items() if other != name})
            except InputError as refused:  # raised below unless another file sources it
                read[name] = refused
        included = {path for words in read.values() if isinstance(words, Words) for path in words.included}
        for name, words in read.items():
            if name in included:
                continue
            if isinstance(words, InputError):
                raise words
            syntaxes.append(words.syntax)
            if words.launcher and launcher:
                raise InputError("a second launch line: the launcher is given in one file only", file=name)
            args.extend(words.args)
            launcher.extend(words.launcher)
            notes.extend(f"{Path(name).name}: {note}" for note in words.notes)
            container = container or words.order
            for key, value in words.extra.items():
                extra[key] = (value, name, words.extra_lines.get(key, 1))
        if not args:
            raise InputError("no Megatron arguments (no --flag words)", file=str(paths[-1]))
        namespace = parse(args)
        source = _source(namespace, [str(p) for p in paths], texts)
        source.reading_notes.extend(notes)
        for word in namespace.loose:
            source.reading_notes.append(
                f"{Path(word.file).name}:{word.line}: {word.raw} ({word.why or 'a shell expression'}) "
                "stands where an option is expected: its words are not known here, not read"
            )
        _add_launcher(source, launcher)
        _add_extra(source, extra)
        source.meta["syntax"] = syntaxes
        if "bash" in syntaxes:  # a script's words as bash would pass them (a probe of Megatron's code runs no bash)
            hidden = [a for a in args if not a.resolved]
            source.meta["argv"] = [] if hidden else [a.text for a in args]
            source.meta["argv_unknown"] = "; ".join(
                dict.fromkeys(f"{a.raw}: {a.why or 'a shell expression'}" for a in hidden[:3])
            )
        if container and len(paths) == 1:  # Megatron's CI YAML: a same-format translation keeps its layout
            source.meta["ci_order"] = container
        return source

    def from_tree(
        self, tree: dict[str, Any], *, name: str = "<config>", text: str = "", model_config: ModelConfig = None
    ) -> Source:
        """A mapping of options (`--num-layers: 24`, a flag `true` when given: what the writer makes)
        or of dests (`num_layers: 24`) read as the namespace argparse would make of it."""
        values: dict[str, Any] = {}
        aliases: dict[str, str] = {}
        if not tree:
            raise InputError("no Megatron arguments (an empty command line)", file=name)
        extra: dict[str, Any] = {}
        foreign: dict[str, str] = {}  # a fork's value carried by a same-format translation, read as the file was
        if isinstance(tree.get("MODEL_ARGS"), dict):  # Megatron's CI layout: the options, and the CI's entries
            extra = {str(k): v for k, v in tree.items() if k != "MODEL_ARGS"}
            tree = tree["MODEL_ARGS"]
        for key, value in tree.items():
            if not isinstance(key, str):
                raise InputError(f"key {key!r} is not an option name", file=name)
            dest, value = _option_value(key, value, name)
            if dest in values:
                raise InputError(f"{key!r} sets {dest}, which another key of the mapping sets too", file=name, key=key)
            values[dest] = value
            if dest != key:
                aliases[dest] = key
            why = _foreign(key, dest, value)
            if why:
                foreign[dest] = why
        source = MegatronSource(FORMAT, values, [name], {name: text} if text else {}, {k: name for k in values})
        source.aliases = aliases
        source.foreign_values = foreign
        if extra:
            _add_extra(source, {key: (value, name, 1) for key, value in extra.items()})
            source.meta["ci_order"] = [str(k) for k in (*extra, "MODEL_ARGS")]
        for dest, value in values.items():  # a shell expression is no value here, as in a file
            shown = " ".join(map(str, value)) if isinstance(value, list) else value
            if isinstance(shown, str) and _EXPANSION.search(shown):
                source.unknown_values[dest] = f"{aliases.get(dest, dest)} {shown}: a shell expression, unknown here"
        return source

    @staticmethod
    def _sniff(tree: dict[str, Any]) -> float | None:
        """Megatron's CI YAML (`MODEL_ARGS:` of `--flag` keys, or `--flag` keys alone); never a plain
        YAML mapping (NeoX's keys are Megatron dests too)."""
        model_args = tree.get("MODEL_ARGS")
        flags: dict[str, Any] = model_args if isinstance(model_args, dict) else tree
        keys = [k for k in flags if isinstance(k, str)]
        if keys and all(k.startswith("--") for k in keys):
            return sum(1 for k in keys if dest_of(k)) / len(keys)
        return 0.0

    sniff = _sniff

    @staticmethod
    def _sniff_text(text: str) -> float | None:
        """An argument file or a bash script of arrays (a YAML file is scored on its parsed tree)."""
        kind = syntax_of(text)
        if kind == "yaml":
            return None
        try:
            words = words_of(text, "<sniff>")
        except InputError:
            # a shell script (#!/bin/bash) with no Megatron launch: its reader says so in shell's terms
            return (
                0.5 if kind == "bash" and re.match(r"#!\S*(ba|z|k|da)?sh\b|#!\S*env\s+(ba|z|k|da)?sh\b", text) else 0.0
            )
        flags = [a.text.partition("=")[0] for a in words.args if a.resolved and a.text.startswith("--")]
        share = sum(1 for f in flags if dest_of(f)) / len(flags) if flags else 0.0
        if kind in ("bash", "args") and any(dest_of(f) for f in flags):
            # shell whose launch line gives Megatron options (with a trainer's own options beside them,
            # `pkill ...` first and no `#!`), or a file of `--flag value` lines that gives some: never YAML,
            # however few of its options Megatron has (a fork's launcher's, carried as unknown)
            return max(share, 0.5)
        return share

    sniff_text = _sniff_text


READER = MegatronReader()


def _option_value(key: str, value: Any, name: str) -> tuple[str, Any]:
    """(dest, value) of one entry of a mapping: a flag option's true means given."""
    if not key.startswith("-"):
        return key, value
    option = table().options.get(key)
    if option is None:
        return key.lstrip("-").replace("-", "_") or key, value
    if option.arity == "0":
        if not isinstance(value, bool):
            raise InputError(f"{key} is a flag: true (given) or false, not {value!r}", file=name, key=key)
        return option.dest, option.flag_value() if value else not option.flag_value()
    return option.dest, value


def _foreign(key: str, dest: str, value: Any) -> str | None:
    """Why a mapping's value is one no release's argparse takes (`--position-embedding-type: alibi`), as
    the words of a file are checked (options.parse)."""
    options = table().options
    option = options.get(key) if key.startswith("-") else next((o for o in options.values() if o.dest == dest), None)
    if option is None or option.arity == "0":
        return None
    values = value if isinstance(value, list) else [value]
    if any(isinstance(v, str) and _EXPANSION.search(v) for v in values):
        return None  # a shell expression: unknown here, said where it is read
    return not_a_choice(option, option.name if not key.startswith("-") else key, values)


def _source(namespace: Namespace, files: list[str], texts: dict[str, str]) -> MegatronSource:
    tree = dict(namespace.values)
    source = MegatronSource(FORMAT, tree, files, texts, {d: namespace.origins[d][0] for d in tree})
    source.origins = dict(namespace.origins)
    source.aliases = {dest: written for dest, written in namespace.written.items() if written != dest}
    source.notes = dict(namespace.notes)
    # a value not known here of an option Megatron has (a fork's option is named as not a parameter, first)
    source.unknown_values = {d: why for d, why in namespace.unresolved.items() if d not in namespace.unknown}
    source.foreign_values = {d: why for d, why in namespace.foreign.items() if d not in namespace.unresolved}
    source.meta.update(
        written=dict(namespace.written),
        words=dict(namespace.words),
        values=dict(namespace.values),
        unresolved=sorted(namespace.unresolved),
    )
    return source


_WHOLE = re.compile(r"[0-9]{1,9}")  # ASCII digits only (str.isdigit takes ², int() refuses it)
_COUNTS = {
    "nproc_per_node": re.compile(r"[0-9]{1,6}|auto|cpu|gpu|xpu"),
    "nproc-per-node": re.compile(r"[0-9]{1,6}|auto|cpu|gpu|xpu"),
    "nnodes": re.compile(r"[0-9]{1,6}(:[0-9]{1,6})?"),
    "num_gpus": re.compile(r"[0-9]{1,6}"),
    "num_nodes": re.compile(r"[0-9]{1,6}"),
}
_COUNT_WHAT = {
    "nproc_per_node": "number of processes per node (N, auto, cpu or gpu)",
    "nproc-per-node": "number of processes per node (N, auto, cpu or gpu)",
    "nnodes": "number of nodes (N or MIN:MAX)",
    "num_gpus": "number of GPUs",
    "num_nodes": "number of nodes",
}


def _add_launcher(source: MegatronSource, words: list[Arg]) -> None:
    """torchrun's (or python -m torch.distributed.run's) options before the training script."""
    launcher: dict[str, Any] = {}
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not option_with_unknown_value(word) and (not word.resolved or not word.text.startswith("-")):
            continue  # `-m torch.distributed.run`'s module, or a word we cannot see
        name, eq, value = word.text.lstrip("-").partition("=")
        given: list[Arg] = []
        if eq:  # --nnodes=2, or --nnodes=$NODES: its value not known here
            given = [
                Arg(
                    value, word.raw.partition("=")[2] or value, word.resolved, word.file, word.line, word.note, word.why
                )
            ]
        elif name != "standalone" and i < len(words) and not (words[i].resolved and words[i].text.startswith("-")):
            given = [words[i]]
            i += 1
        leaf = f"launcher.{name.replace('-', '_')}"
        if not given:
            launcher[leaf] = True
        else:
            arg = given[0]
            if arg.resolved and name in _COUNTS and not _COUNTS[name].fullmatch(arg.text):
                raise InputError(
                    f"--{name} {arg.text[:20]}{'...' if len(arg.text) > 20 else ''}: not a "
                    f"{_COUNT_WHAT[name]} (the launcher refuses it); write the number",
                    file=arg.file,
                    line=arg.line,
                )
            launcher[leaf] = (
                int(arg.text) if arg.resolved and _WHOLE.fullmatch(arg.text) else arg.text if arg.resolved else arg.raw
            )
            if not arg.resolved:
                source.unknown_values[leaf] = f"--{name} {arg.raw}: " + (
                    f"not known here ({arg.why})" if arg.why else "a shell expression, unknown here"
                )
            if arg.note:
                source.notes[leaf] = arg.note
        source.origins[leaf] = (word.file, word.line)
        source.aliases[leaf] = f"launcher --{name}"
    if launcher:
        procs = launcher.get("launcher.nproc_per_node", launcher.get("launcher.num_gpus"))
        nodes = launcher.get("launcher.nnodes", launcher.get("launcher.num_nodes", 1))
        total = launcher.get("launcher.worker_num")  # MindSpore's msrun names the total
        if isinstance(total, int) and not isinstance(total, bool):
            source.notes["launcher.worker_num"] = _joined(
                source.notes.get("launcher.worker_num", ""),
                f"msrun starts {total} processes: translate with --world-size {total}",
            )
        elif isinstance(procs, int) and isinstance(nodes, int) and not isinstance(nodes, bool):
            source.notes["launcher.nproc_per_node"] = _joined(
                source.notes.get("launcher.nproc_per_node", ""),
                f"torchrun starts {procs} x {nodes} = {procs * nodes} processes: translate with --world-size {procs * nodes}",
            )
        source.tree["launcher"] = {k.split(".", 1)[1]: v for k, v in launcher.items()}
        for leaf in launcher:
            source.leaf_files.setdefault("launcher", source.origins[leaf][0])


def _add_extra(source: MegatronSource, extra: dict[str, tuple[Any, str, int]]) -> None:
    """A CI YAML file's entries besides MODEL_ARGS, kept (and reported) as `ci.<key>`."""
    if not extra:
        return
    from ...io.documents import flatten

    block = {key: value for key, (value, _, _) in extra.items()}
    source.tree["ci"] = block
    for leaf in flatten({"ci": block}):
        top = leaf.split(".")[1]
        _, file, line = extra[top]
        source.origins[leaf] = (file, line)
        source.aliases[leaf] = leaf[3:]
    source.leaf_files["ci"] = next(iter(extra.values()))[1]


def _joined(*parts: str) -> str:
    return "; ".join(p for p in parts if p)
