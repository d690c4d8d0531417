"""DeepSpeed JSON config (ds_config.json): one JSON object, read strictly.

DeepSpeed reads its config with hjson and refuses duplicate keys; we read strict JSON (also
refusing duplicates), so a shell template whose placeholders are unquoted words (`"train_batch_size":
GB_SIZE`) is one clear error. GPT-NeoX argument files written in JSON (NeoX keys such as
`num-layers` beside DeepSpeed keys) are refused with the command that reads them: they mean what
NeoX makes of them (its top-level weight_decay, its lr schedule), not what DeepSpeed would.
`"auto"` values are Hugging Face Trainer placeholders: no value here, reported, kept by a
DeepSpeed -> DeepSpeed translation.
"""

from __future__ import annotations

import re
from typing import Any

from ...core.errors import InputError, WrongFormat
from ...io.documents import flatten, key_line, parse_json, read_text
from ...knowledge.source import Source
from ..spec import ModelConfig, Reader

AUTO = (
    '"auto" is filled in by the Hugging Face Trainer/Accelerate from their own arguments at run time; '
    "it is no DeepSpeed value (read with the TrainingArguments file it runs with, --from hftrainer TRAIN.yaml "
    '--with this file, every "auto" is filled as transformers fills it)'
)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
# a value that is a bare upper-case word or a shell variable: GB_SIZE, ${LR}, $STEPS
_PLACEHOLDER = re.compile(r"[:\[,]\s*(\$\{?[A-Za-z_]\w*\}?|[A-Z][A-Z0-9_]*)(?=\s*(?:[,\]}]|$))")
_COMMENT = re.compile(r"^\s*(//|#|/\*)")


class DeepspeedReader(Reader):
    format = "deepspeed"

    def read(self, paths: list[str], *, layout: str | None = None, model_config: ModelConfig = None) -> Source:
        if len(paths) != 1:
            raise InputError(f"a DeepSpeed config is one file; got {len(paths)}", file=str(paths[-1]))
        name = str(paths[0])
        text = read_text(name)
        try:
            data = parse_json(text, name)
        except InputError:
            _refuse_template(text, name)
            raise
        return self.from_tree(data, name=name, text=text)

    def from_tree(
        self, tree: dict[str, Any], *, name: str = "<config>", text: str = "", model_config: ModelConfig = None
    ) -> Source:
        """NeoX argument files refused, "auto" held apart."""
        _refuse_neox_arguments(tree, text, name)
        _refuse_dotted_keys(tree, text, name)
        notes, warnings, falsy_texts = _read_as_deepspeed(tree)
        unresolved = {leaf: AUTO for leaf, value in flatten(tree).items() if value == "auto"}
        source = Source(
            "deepspeed",
            tree,
            [name],
            {name: text} if text else {},
            {k: name for k in tree},
            unresolved=unresolved,
            placeholders=frozenset(unresolved),
            notes=notes,
            meta={"falsy_texts": falsy_texts} if falsy_texts else {},
        )
        source.warnings.extend(warnings)
        return source


READER = DeepspeedReader()


# pydantic's lax bool (DeepSpeedFP16Config / DeepSpeedBF16Config from 0.17.1): these words, any case
_TRUE_WORDS = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE_WORDS = frozenset({"0", "off", "f", "false", "n", "no"})
# the fp16/bf16 blocks' switches (enabled, auto_cast, ...): DeepSpeed read them with get_scalar_param (the
# value itself, then `if enabled:`) up to 0.17.0, with pydantic (precision_config.py) from 0.17.1
_PRECISION_BLOCKS = ("fp16", "bf16", "bfloat16")
_PYDANTIC_PRECISION = "0.17.1"


def _precision_switches(tree: dict[str, Any]) -> list[str]:
    """The boolean keys of the precision blocks that the file writes as text."""
    from ...knowledge.schema import schema_index

    schema = schema_index("deepspeed")
    return [
        f"{block}.{key}"
        for block in _PRECISION_BLOCKS
        if isinstance(node := tree.get(block), dict)
        for key, value in node.items()
        if isinstance(value, str) and "boolean" in schema.types_of(f"{block}.{key}")
    ]


def _read_as_deepspeed(tree: dict[str, Any]) -> tuple[dict[str, str], list[str], dict[str, str]]:
    """Values DeepSpeed runs though they are not of the key's type, read as its code reads them:
    `zero_optimization: true` (runtime/zero/config.py get_zero_config: a bool goes to
    read_zero_config_deprecated, stage 1 for true, 0 for false) and a precision switch written as text
    ("true"/"false"). Returns the notes per leaf, the warnings for what an older release reads otherwise,
    and the texts that are false only from 0.17.1 (_at_release reads them as the settled release does)."""
    notes: dict[str, str] = {}
    warnings: list[str] = []
    falsy_texts: dict[str, str] = {}  # leaf -> the text, read as false only from 0.17.1
    zero = tree.get("zero_optimization")
    if isinstance(zero, bool):
        stage = 1 if zero else 0
        tree["zero_optimization"] = {"stage": stage}
        notes["zero_optimization.stage"] = (
            f"zero_optimization: {str(zero).lower()} is DeepSpeed's deprecated switch: read as stage {stage}, "
            "as its get_zero_config does"
        )
    for leaf in _precision_switches(tree):
        block, key = leaf.split(".")
        node = tree[block]
        value = node[key]
        if value.lower() not in _TRUE_WORDS | _FALSE_WORDS:
            continue
        read = value.lower() in _TRUE_WORDS
        node[key] = read
        notes[leaf] = (
            f"the text {value!r}: read as {str(read).lower()}, as DeepSpeed {_PYDANTIC_PRECISION} and later read "
            "it (pydantic's bool)" + ("; earlier releases take the non-empty string as true too" if read else "")
        )
        if not read:  # before pydantic: get_scalar_param hands back the string, and a non-empty string is true
            falsy_texts[leaf] = value
            warnings.append(
                f"{leaf}: the text {value!r} is read as false by DeepSpeed {_PYDANTIC_PRECISION} and later, but "
                f"as TRUE by DeepSpeed up to 0.17.0 (its get_scalar_param returns the non-empty string): "
                f"there the {block} mode is on (give --from-version to read it as one of those); write {leaf}: false"
            )
            notes[leaf] += "; DeepSpeed up to 0.17.0 reads it as TRUE (a non-empty string)"
    return notes, warnings, falsy_texts


def _at_release(source: Source) -> None:
    """Up to 0.17.0 a precision switch written as a falsy word ("false") is the string itself: true."""
    from ...knowledge.schema import older

    falsy_texts: dict[str, str] = source.meta.get("falsy_texts", {})
    if not falsy_texts or not older("deepspeed", source.version, _PYDANTIC_PRECISION):
        return
    for leaf, value in falsy_texts.items():
        block, key = leaf.split(".")
        source.tree[block][key] = True
        source.notes[leaf] = (
            f"the text {value!r}: read as TRUE, as DeepSpeed {source.version} reads it (get_scalar_param returns "
            "the non-empty string, and `if enabled:` takes it as true)"
        )
    source.warnings[:] = [w for w in source.warnings if w.split(":", 1)[0] not in falsy_texts]


def _refuse_template(text: str, name: str) -> None:
    """Unquoted placeholders (GB_SIZE, CONFIG_CL_MIN) mean a template a script fills in before use."""
    found: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if _COMMENT.match(line):
            raise InputError(
                "a comment: DeepSpeed reads its config with hjson, which allows them, but this is no JSON; "
                "remove the comments to translate it",
                file=name,
                line=number,
            )
        for word in _PLACEHOLDER.findall(_STRING.sub('""', line)):
            if word not in ("NaN", "Infinity"):
                found.setdefault(word, number)
    if found:
        words = ", ".join(list(found)[:4]) + (", ..." if len(found) > 4 else "")
        raise InputError(
            f"unquoted placeholders ({words}): this is a template that a script fills in before DeepSpeed "
            "reads it, not a DeepSpeed config; translate the filled-in file",
            file=name,
            line=min(found.values()),
        )


def _refuse_dotted_keys(data: dict[str, Any], text: str, name: str) -> None:
    """DeepSpeed reads keys as written: "optimizer.type" is no optimizer (DeepSpeed ignores it), so
    it must not be read as optimizer.type either."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if "." in key:
                    nested = "".join(f'{{"{part}": ' for part in key.split(".")) + "..." + "}" * key.count(".") + "}"
                    raise InputError(
                        f"key {key!r}{f' (in {path})' if path else ''} has a dot: DeepSpeed reads keys as written, so "
                        f"this is no DeepSpeed setting (DeepSpeed ignores it); nest it ({nested}) or remove it",
                        file=name,
                        line=_line_of(text, f'"{key}"'),
                    )
                stack.append((f"{path}.{key}" if path else key, value))
        elif isinstance(node, list):
            stack.extend((path, item) for item in node)


def _line_of(text: str, needle: str) -> int | None:
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else None


def _refuse_neox_arguments(data: dict[str, Any], text: str, name: str) -> None:
    from ...knowledge.schema import schema_index

    neox, ds = schema_index("neox"), schema_index("deepspeed")
    foreign = [k for k in data if not ds.known(k.replace("-", "_")) and neox.known(k.replace("-", "_"))]
    if foreign and (len(foreign) >= 2 or any("-" in k for k in foreign)):
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise WrongFormat(
            f"a GPT-NeoX argument file, not a DeepSpeed config (NeoX keys: {shown}): read it as NeoX "
            "(neoconv neox2<target>, convert --from neox, or list it among the NeoX inputs)",
            suggested="neox",
            file=name,
            line=key_line(text, foreign[0]),
        )


READER.at_release = _at_release
