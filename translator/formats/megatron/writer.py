"""Megatron-LM argument files: one option per line, in the table's order, spelled as the target
release parses it, with a header comment.

The document is a mapping of options as written (`--num-layers: 24`; a flag `true` when given,
`--disable-bias-linear: true` for `add_bias_linear` false), so `translate(...).config` reads as the
command line. A value no option of the target release can set is left out and reported lossy; a
boolean at the release's default needs no option. Values are shell words: quoted where a shell
would split or expand them; a value starting with `-` is written `--flag=value` (argparse takes
`-1e-05` after a flag for an option). A Megatron -> Megatron translation writes a shell expression
(`"$CHECKPOINT_PATH"`) back as it was written.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from ...core.errors import InputError
from ...core.report import Status
from ..spec import ExtraEntry, WriteContext, WriteResult, Writer
from .options import Option, table

DATA_NEEDED = (
    "pretrain_gpt.py needs training data: --data-path PREFIX of a dataset preprocessed with Megatron's "
    "tools/preprocess_data.py (or --mock-data to try the run without data)"
)
TOKENIZER_NEEDED = (
    "pretrain_gpt.py tokenizes with --tokenizer-type (default GPT2BPETokenizer, which needs --vocab-file and "
    "--merge-file): give the tokenizer the data was preprocessed with"
)
RUN = "eval \"torchrun --nproc_per_node N pretrain_gpt.py $(grep -v '^#' {file} | tr '\\n' ' ')\""


@dataclass
class MegatronWriteResult(WriteResult):
    shell: dict[str, list[str]] = field(default_factory=dict)  # option -> its value words, written as they were


class MegatronWriter(Writer):
    format = "megatron"

    def write(self, leaves: dict[str, Any], ctx: WriteContext) -> WriteResult:
        from ...knowledge.mapping import load_table

        version = ctx.version or load_table(self.format).versions[0]
        order = {key: i for i, key in enumerate(k for r in load_table(self.format).rules for k in r.keys)}
        shape = ctx.source_shape if ctx.source_format == self.format else {}
        document: dict[str, Any] = {}
        result = MegatronWriteResult(document)
        shown_at: set[str] = set()
        ci_order: list[str] = list(shape.get("ci_order") or [])  # a CI YAML source: its layout is kept
        ci: dict[str, Any] = {}
        for dest in sorted(leaves, key=lambda d: order.get(d, len(order))):
            value = leaves[dest]
            if dest.startswith("ci."):
                if ci_order:
                    ci[dest[3:]] = value
                else:
                    result.amended[dest] = (
                        Status.DROPPED,
                        "not written to an argument file (it holds Megatron's options only)",
                    )
                continue
            if value is None:
                continue
            written = _spelled(dest, value, version, shape.get("written", {}).get(dest))
            if isinstance(written, str):  # why it cannot be written
                result.amended[dest] = (Status.LOSSY, written)
                continue
            if written is None:
                continue  # a boolean at the release's default: no option
            option, shown = written
            document[option] = shown
            result.target_paths[dest] = option
            if not isinstance(value, bool):
                shown_at.add(dest)
            before = shape.get("written", {}).get(dest)
            if before and before != option and table().options.get(before) is not None:
                result.reshaped[dest] = f"written as {option}: Megatron-LM {_release(version)} does not parse {before}"
            words = shape.get("words", {}).get(dest)
            if words and dest in shape.get("unresolved", ()) and shape.get("values", {}).get(dest) == value:
                moved = _not_carried(option, words)
                if moved is None:
                    result.shell[option] = list(words)
                elif moved.startswith("placeholder"):  # one quoted word, named as the placeholder it is
                    result.amended[dest] = (Status.MISSING, moved)
                else:  # its words mean another value outside the script: not written, named
                    del document[option]
                    shown_at.discard(dest)
                    result.amended[dest] = (Status.MISSING, moved)
        result.value_paths = frozenset(shown_at)
        if ci_order:
            result.document = _ci_layout(document, ci, ci_order)
            result.target_paths = {dest: f"MODEL_ARGS.{option}" for dest, option in result.target_paths.items()}
            result.target_paths.update((f"ci.{key}", key) for key in ci)
        if ctx.source_format != self.format:
            if not {"data_path", "train_data_path", "mock_data", "data_args_path"} & set(leaves):
                result.extra_entries.append(ExtraEntry("--data-path", Status.MISSING, DATA_NEEDED))
            if "tokenizer_type" not in leaves:
                result.extra_entries.append(ExtraEntry("--tokenizer-type", Status.MISSING, TOKENIZER_NEEDED))
        result.header = self.header(result.document, ctx) + [f"# for Megatron-LM {_release(version)}"]
        return result

    def header(self, document: dict[str, Any], ctx: WriteContext) -> list[str]:
        source = f" from {ctx.sources}" if ctx.sources else ""
        if is_ci_layout(document):
            return [f"# Megatron-LM CI test config (model_config.yaml: MODEL_ARGS) written by neoconv{source}"]
        return [
            f"# Megatron-LM arguments (pretrain_gpt.py) written by neoconv{source}",
            "# one option per line; run: " + RUN.format(file=ctx.output or "FILE"),
        ]

    def serialise(self, document: dict[str, Any]) -> str:
        if is_ci_layout(document):
            from ...io.documents import dump_yaml

            return dump_yaml(document)
        return self._lines(document, {})

    def dump(self, result: WriteResult) -> str:
        shell = result.shell if isinstance(result, MegatronWriteResult) else {}
        head = self.header_text(result)
        if is_ci_layout(result.document):
            return head + self.serialise(result.document)
        return head + self._lines(result.document, shell)

    @staticmethod
    def _lines(document: dict[str, Any], shell: dict[str, list[str]]) -> str:
        lines = []
        for key, value in document.items():
            if not isinstance(key, str) or not key.strip() or any(c.isspace() for c in key):
                raise InputError(f"key {key!r} is not an option name")
            option = key if key.startswith("-") else _dest_option(key)
            if option in shell:
                lines.append(" ".join([option, *shell[option]]))
            elif value is True:
                lines.append(option)
            elif value is False or value is None:
                continue  # a flag not given
            else:
                lines.append(_words(option, value))
        return "".join(line + "\n" for line in lines)


def _unplaceable(leaf: str, layout: str | None, version: str | None = None) -> str | None:
    """An argument file holds Megatron's own options: the launcher's settings have no place (a CI
    file's entries go back into a CI file: the writer decides)."""
    if leaf.startswith("launcher."):
        return "not written to an argument file (it holds Megatron's options only)"
    return None


def is_ci_layout(document: dict[str, Any]) -> bool:
    return isinstance(document.get("MODEL_ARGS"), dict)


def _ci_layout(options: dict[str, Any], ci: dict[str, Any], order: list[str]) -> dict[str, Any]:
    """Megatron's CI YAML: the options under MODEL_ARGS, the CI's own entries around it, in the source's order."""
    from ...io.documents import unflatten

    blocks = unflatten(ci) if ci else {}
    # its training script passes a value as words: a one-item list is the same word as the item
    options = {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in options.items()}
    out: dict[str, Any] = {}
    for key in order:
        if key == "MODEL_ARGS":
            out["MODEL_ARGS"] = options
        elif key in blocks:
            out[key] = blocks.pop(key)
    out.update(blocks)
    out.setdefault("MODEL_ARGS", options)
    return out


MegatronWriter.unplaceable = staticmethod(_unplaceable)  # type: ignore[assignment]
WRITER = MegatronWriter()


_DEFAULTED = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?[-=?+]")  # ${X:-4}, ${X-4}, ${X:=4}, ${X:?..}, ${X:+..}


def _not_carried(option: str, words: list[str]) -> str | None:
    """Why a script's words for an option cannot be carried into an argument file as written; None
    when they can. A `${X:-4}` outside the script that gives X reads as its default (4), not as the
    script's value; a value with blanks the script passes as several words is a placeholder."""
    taken = table().options.get(option)
    if taken is not None and taken.arity == "1" and len(words) > 1:
        return (
            f"placeholder {' '.join(words)!r}: the script passes {len(words)} words where {option} takes one "
            "(argparse refuses the rest); written as one quoted word, to be filled in"
        )
    defaulted = next((w for w in words if _DEFAULTED.search(w)), None)
    if defaulted is not None:
        return (
            f"{option} {defaulted} is not known here and, moved out of the script that sets its variable, "
            "would read as another value: not written"
        )
    return None


def _release(version: str) -> str:
    first, last = table().versions.get(version, table().versions["current"])
    return f"{version} ({first} to {last})" if first != last else version


def _spelled(dest: str, value: Any, version: str, as_written: str | None) -> tuple[str, Any] | str | None:
    """(option, value to write) for a dest at a release; None when a boolean needs no option (its
    default); the reason when no option of the release can set it."""
    options = table().spellings(dest)
    if not options:  # an option no release parses, carried as written (same format)
        return (as_written or "--" + dest.replace("_", "-"), value)
    valid = [o for o in options if table().parses(o, version)]
    if as_written and any(o.name == as_written for o in valid):
        valid.sort(key=lambda o: o.name != as_written)  # the spelling the file used, when the release has it
    if isinstance(value, bool) and options[0].arity == "0":
        setting = [o for o in valid if o.flag_value() == value]
        if setting:
            return (setting[0].name, True)
        if valid:
            return None  # only the opposite flag exists: this value is the release's default
        return _unavailable(dest, options, version)
    takes = [o for o in valid if o.arity != "0"]
    if not takes:
        return _unavailable(dest, options, version)
    if takes[0].argtype == "int" and isinstance(value, float):  # argparse's int() refuses "10000.0"
        if not value.is_integer():
            return f"{takes[0].name} takes a whole number (argparse type int): {value:g} is not written"
        value = int(value)
    return (takes[0].name, value)


def _unavailable(dest: str, options: list[Option], version: str) -> str:
    spans = ", ".join(f"{o.name} ({o.first} to {o.last})" for o in options)
    return f"Megatron-LM {_release(version)} has no option for {dest} ({spans}): not written"


def _dest_option(key: str) -> str:
    """An option for a key that names a dest (a mapping handed to dump())."""
    options = table().spellings(key)
    return options[0].name if options else "--" + key.replace("_", "-")


def _words(option: str, value: Any) -> str:
    items = value if isinstance(value, (list, tuple)) else [value]
    words = [_word(item) for item in items]
    if len(words) == 1 and words[0].startswith("-"):
        return f"{option}={words[0]}"  # argparse would take a leading '-' for an option
    return " ".join([option, *words])


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise InputError(f"{value!r} cannot be written as a Megatron argument")
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return shlex.quote(value)
    raise InputError(f"a {type(value).__name__} cannot be written as a Megatron argument value")
